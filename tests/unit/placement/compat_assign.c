/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compat_assign: the ringway side of the live peer comparisons.
 *
 *   compat_assign --algo ketama|twemproxy [--hash NAME] [--hash-tag XY] < fleet.tsv
 *
 * Reads the golden-vector format on stdin: `member<TAB>NAME<TAB>ADDR<TAB>PORT<TAB>WEIGHT` lines,
 * then `key<TAB>KEY[<TAB>anything]` lines; `#` lines are comments. Prints
 * `key<TAB>KEY<TAB>MEMBER-INDEX` for every key, as pl_lookup() places it (-1: no owner).
 * KEY is escaped as compat_golden.h describes, on input and output alike.
 * Exit 0, or 2 with a message on stderr for bad input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat_golden.h"
#include "placement.h"

#define MAX_MEMBERS 1024

static int usage(void)
{
	fprintf(stderr, "usage: compat_assign --algo ketama|twemproxy [--hash NAME] "
			"[--hash-tag XY] < fleet\n");
	return 2;
}

static int parse_member(char *rest, struct pl_member *m, unsigned long line)
{
	char *save = NULL;
	char *name = strtok_r(rest, "\t\n", &save);
	char *addr = strtok_r(NULL, "\t\n", &save);
	char *port = strtok_r(NULL, "\t\n", &save);
	char *weight = strtok_r(NULL, "\t\n", &save);

	if (weight == NULL || strlen(name) > PL_NAME_MAX || strlen(addr) > PL_ADDR_MAX) {
		fprintf(stderr, "line %lu: expected member NAME ADDR PORT WEIGHT\n", line);
		return -EINVAL;
	}
	memset(m, 0, sizeof(*m));
	memcpy(m->name, name, strlen(name));
	memcpy(m->addr, addr, strlen(addr));
	m->port = (uint16_t)strtoul(port, NULL, 10);
	m->weight = (uint32_t)strtoul(weight, NULL, 10);
	return 0;
}

int main(int argc, char **argv)
{
	struct pl_config cfg = {0};
	static struct pl_member members[MAX_MEMBERS];
	struct pl_placement *p = NULL;
	uint32_t n = 0;
	unsigned long line = 0;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t got;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--algo") == 0) {
			if (pl_algo_parse(argv[++i], &cfg.algo) != 0)
				return usage();
		} else if (i + 1 < argc && strcmp(argv[i], "--hash") == 0) {
			if (pl_hash_parse(argv[++i], &cfg.key_hash) != 0)
				return usage();
		} else if (i + 1 < argc && strcmp(argv[i], "--hash-tag") == 0) {
			if (strlen(argv[++i]) != 2)
				return usage();
			memcpy(cfg.hash_tag, argv[i], 2);
		} else {
			return usage();
		}
	}
	while ((got = getline(&buf, &cap, stdin)) > 0) {
		line++;
		if (strncmp(buf, "member\t", 7) == 0) {
			if (p != NULL || n == MAX_MEMBERS) {
				fprintf(stderr, "line %lu: member after keys, or too many\n", line);
				rc = 2;
				break;
			}
			if (parse_member(buf + 7, &members[n++], line) != 0) {
				rc = 2;
				break;
			}
		} else if (strncmp(buf, "key\t", 4) == 0) {
			char *field = buf + 4, key[PL_KEY_MAX + 1];
			long len;

			field[strcspn(field, "\t\n")] = '\0';
			len = compat_unescape(field, key, sizeof(key));
			if (len < 0) {
				fprintf(stderr, "line %lu: bad key escape\n", line);
				rc = 2;
				break;
			}

			if (p == NULL && (p = pl_build(&cfg, members, n)) == NULL) {
				fprintf(stderr, "pl_build: %s\n", strerror(errno));
				rc = 2;
				break;
			}
			printf("key\t%s\t%d\n", field, (int)pl_lookup(p, key, (size_t)len));
		}
	}
	free(buf);
	pl_free(p);
	if (fflush(stdout) != 0)
		rc = 2;
	return rc;
}
