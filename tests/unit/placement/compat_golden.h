/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_TEST_COMPAT_GOLDEN_H
#define RINGWAY_TEST_COMPAT_GOLDEN_H

/*
 * Golden owner vectors recorded from the real peers (libmemcached by compat_gen_ketama,
 * nutcracker by compat_nutcracker.py --record), one file per fleet, tab separated:
 *   # comment
 *   hash    NAME                          (twemproxy files: nutcracker's `hash:`)
 *   hash_tag XY                           (optional: nutcracker's `hash_tag:`)
 *   member  NAME  ADDR  PORT  WEIGHT      (in the peer's server order)
 *   key     KEY   OWNER                   (OWNER: index of the member the peer chose)
 * KEY is the memcached key with '%' and every byte outside 0x21..0x7e written as %XX, so
 * the files stay text while keys may hold bytes >= 0x80.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"

#define COMPAT_GOLDEN_MAX_MEMBERS 64

/* Escape @p len bytes of @p key into @p out (at least 3 * len + 1 bytes). */
static inline void compat_escape(const char *key, size_t len, char *out)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c > 0x20 && c < 0x7f && c != '%') {
			*out++ = (char)c;
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	*out = '\0';
}

static inline int compat_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Undo compat_escape; returns the key length, or -1 on a malformed escape. */
static inline long compat_unescape(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in != '\0'; in++) {
		int hi, lo;

		if (n == cap)
			return -1;
		if (*in != '%') {
			out[n++] = *in;
			continue;
		}
		hi = compat_hexval(in[1]);
		lo = hi < 0 ? -1 : compat_hexval(in[2]);
		if (lo < 0)
			return -1;
		out[n++] = (char)(hi << 4 | lo);
		in += 2;
	}
	return (long)n;
}

struct compat_golden_result {
	uint64_t keys;
	uint64_t mismatches;
	uint32_t members;
	char first_mismatch[300];
};

/*
 * Place every key of golden file @p path with @p algo (the file's `hash` line sets the key
 * hash) and count the keys whose owner differs from the recorded one.
 * Returns 0, or a negative errno when the file cannot be read or is malformed.
 */
static inline int compat_golden_check(const char *path, enum pl_algo algo,
				      struct compat_golden_result *res)
{
	struct pl_member m[COMPAT_GOLDEN_MAX_MEMBERS];
	struct pl_config cfg = {.algo = algo};
	struct pl_placement *p = NULL;
	char line[1024], key[PL_KEY_MAX + 1];
	FILE *f = fopen(path, "r");
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (f == NULL)
		return -errno;
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *save = NULL, *kind = strtok_r(line, "\t\n", &save);
		char *a = strtok_r(NULL, "\t\n", &save);
		char *b = strtok_r(NULL, "\t\n", &save);
		char *c = strtok_r(NULL, "\t\n", &save);
		char *d = strtok_r(NULL, "\t\n", &save);

		if (kind == NULL || kind[0] == '#')
			continue;
		if (strcmp(kind, "hash") == 0 && a != NULL && p == NULL) {
			rc = pl_hash_parse(a, &cfg.key_hash);
		} else if (strcmp(kind, "hash_tag") == 0 && a != NULL && strlen(a) == 2 &&
			   p == NULL) {
			memcpy(cfg.hash_tag, a, 2);
		} else if (strcmp(kind, "member") == 0 && d != NULL && p == NULL &&
			   res->members < COMPAT_GOLDEN_MAX_MEMBERS && strlen(a) <= PL_NAME_MAX &&
			   strlen(b) <= PL_ADDR_MAX) {
			struct pl_member *x = &m[res->members++];

			memset(x, 0, sizeof(*x));
			memcpy(x->name, a, strlen(a));
			memcpy(x->addr, b, strlen(b));
			x->port = (uint16_t)strtoul(c, NULL, 10);
			x->weight = (uint32_t)strtoul(d, NULL, 10);
		} else if (strcmp(kind, "key") == 0 && b != NULL) {
			long len = compat_unescape(a, key, sizeof(key));
			int32_t got;

			if (len < 0) {
				rc = -EINVAL;
				break;
			}
			if (p == NULL && (p = pl_build(&cfg, m, res->members)) == NULL) {
				rc = -errno;
				break;
			}
			got = pl_lookup(p, key, (size_t)len);
			if (got != atoi(b) && res->mismatches++ == 0)
				snprintf(res->first_mismatch, sizeof(res->first_mismatch),
					 "key %s: ringway %d, peer %s", a, (int)got, b);
			res->keys++;
		} else {
			rc = -EINVAL;
		}
	}
	fclose(f);
	pl_free(p);
	return rc;
}

#endif /* RINGWAY_TEST_COMPAT_GOLDEN_H */
