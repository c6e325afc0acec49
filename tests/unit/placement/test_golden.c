/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Golden owner vectors for ring, jump, rendezvous, maglev and modulo.
 *
 * These algorithms are ours, so there is no outside peer to compare with: the files under
 * tests/data/placement/golden_<algo>.tsv were generated once from this code and committed to
 * FREEZE the placement. Any change to a hash, a seed, the token scheme, the bucket order, the
 * maglev fill or the tie-breaks moves keys in every deployed fleet; this test makes such a
 * change fail loudly instead of slipping in silently. Regenerate (PL_GOLDEN_WRITE=1) only for
 * a deliberate, announced placement change.
 *
 * File format: `#` comment lines, then `key<TAB>key-hash-hex<TAB>owner-name` per key, for the
 * fleet golden_fleet() builds: 12 members, node5 drained, node2 weight 2, node9 weight 3.
 */
#include <errno.h>

#include "pl_test.h"

#define GOLDEN_KEYS 3000

static const enum pl_algo golden_algos[] = {PL_ALGO_RING, PL_ALGO_JUMP, PL_ALGO_RENDEZVOUS,
					    PL_ALGO_MAGLEV, PL_ALGO_MODULO};

static struct pl_member *golden_fleet(uint32_t *n)
{
	struct pl_member *m = pt_fleet(12);

	m[2].weight = 2;
	m[5].weight = 0;
	m[9].weight = 3;
	*n = 12;
	return m;
}

/* Key i: "user:i" for most, some with bytes >= 0x80 and some up to the 250-byte limit. */
static size_t golden_key(uint32_t i, char *buf)
{
	size_t len = pt_key(i, buf, 32);

	if (i % 10 == 7) {
		for (size_t j = 0; j < 20; j++)
			buf[len++] = (char)(0x80 + (i * 31 + j * 7) % 0x7f);
	} else if (i % 97 == 3) {
		for (; len < PL_KEY_MAX; len++)
			buf[len] = (char)('a' + (len * i) % 26);
	}
	return len;
}

static void key_text(const char *key, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c > 0x20 && c < 0x7f && c != '\\') {
			*out++ = (char)c;
		} else {
			*out++ = '\\';
			*out++ = 'x';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	*out = '\0';
}

static void golden_path(enum pl_algo a, char *buf, size_t len)
{
	snprintf(buf, len, "%s/golden_%s.tsv", PL_DATA_DIR, pl_algo_name(a));
}

static void write_golden(enum pl_algo a, const struct pl_placement *p)
{
	char path[512], key[PL_KEY_MAX + 1], text[4 * PL_KEY_MAX + 1];
	FILE *f;

	golden_path(a, path, sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"# Golden owners for algo %s: generated once by test_golden (PL_GOLDEN_WRITE=1)\n"
		"# and committed to freeze the placement; see tests/unit/placement/test_golden.c.\n"
		"# Fleet: node0..node11 at 198.18.1.x:11211, node2 weight 2, node5 drained, node9 "
		"weight 3.\n# key\tkey-hash\towner\n",
		pl_algo_name(a));
	for (uint32_t i = 0; i < GOLDEN_KEYS; i++) {
		size_t len = golden_key(i, key);

		key_text(key, len, text);
		fprintf(f, "%s\t%016llx\t%s\n", text, (unsigned long long)pl_key_hash(p, key, len),
			pl_member_at(p, (uint32_t)pl_lookup(p, key, len))->name);
	}
	assert_int_equal(fclose(f), 0);
}

static void check_golden(enum pl_algo a, const struct pl_placement *p)
{
	char path[512], line[2048], key[PL_KEY_MAX + 1], text[4 * PL_KEY_MAX + 1];
	uint32_t i = 0;
	FILE *f;

	golden_path(a, path, sizeof(path));
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		char want_key[sizeof(line)], want_owner[sizeof(line)];
		unsigned long long want_hash;
		size_t len;

		if (line[0] == '#')
			continue;
		assert_int_equal(sscanf(line, "%s\t%llx\t%s", want_key, &want_hash, want_owner), 3);
		len = golden_key(i, key);
		key_text(key, len, text);
		assert_string_equal(text, want_key);
		if (pl_key_hash(p, key, len) != want_hash ||
		    strcmp(pl_member_at(p, (uint32_t)pl_lookup(p, key, len))->name, want_owner) !=
			    0)
			fail_msg("%s key %s: expected %s (hash %016llx), placement changed", path,
				 text, want_owner, want_hash);
		i++;
	}
	fclose(f);
	assert_int_equal(i, GOLDEN_KEYS);
}

static void test_golden(void **state)
{
	const char *write = getenv("PL_GOLDEN_WRITE");
	uint32_t n;
	struct pl_member *m = golden_fleet(&n);

	(void)state;
	for (size_t a = 0; a < sizeof(golden_algos) / sizeof(golden_algos[0]); a++) {
		struct pl_placement *p = pt_build(golden_algos[a], m, n);

		if (write != NULL && strcmp(write, "1") == 0)
			write_golden(golden_algos[a], p);
		check_golden(golden_algos[a], p);
		pl_free(p);
	}
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
