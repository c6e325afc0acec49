/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `twemproxy` placement must be nutcracker's `distribution: ketama`, exactly.
 * The proof against a running nutcracker is compat_nutcracker.py; this test replays what it
 * recorded (tests/data/placement/compat_twemproxy_*.tsv: keys set through nutcracker 0.5.0
 * and found on the memcached that holds them), so a change in placement cannot slip in
 * without nutcracker at hand, and checks the recipe's structure: the point string is the
 * server's name (not its address), drained members own nothing, points come in digests of 4.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compat_golden.h"
#include "compat_keys.h"
#include "placement.h"
#include "placement_priv.h"

static void check_golden(const char *file)
{
	char path[512];
	struct compat_golden_result res;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", PL_DATA_DIR, file);
	rc = compat_golden_check(path, PL_ALGO_TWEMPROXY, &res);
	if (rc != 0)
		fail_msg("%s: %s", path, strerror(-rc));
	if (res.mismatches != 0)
		fail_msg("%s: %llu of %llu keys differ from nutcracker; first: %s", file,
			 (unsigned long long)res.mismatches, (unsigned long long)res.keys,
			 res.first_mismatch);
	assert_true(res.keys >= 2000);
	assert_true(res.members >= 2);
}

/* The configurations the issue names, recorded from nutcracker. */
static void test_golden_fnv1a_64(void **state)
{
	(void)state;
	check_golden("compat_twemproxy_fnv1a_64.tsv");
}

static void test_golden_md5(void **state)
{
	(void)state;
	check_golden("compat_twemproxy_md5.tsv");
}

static void test_golden_named_servers(void **state)
{
	(void)state;
	check_golden("compat_twemproxy_named.tsv");
}

static void test_golden_port_11211(void **state)
{
	(void)state;
	check_golden("compat_twemproxy_port11211.tsv");
}

/*
 * nutcracker's hash_tag "{}": only the text between the first '{' and the next '}' is hashed,
 * when it is not empty.
 */
static void test_golden_hash_tag(void **state)
{
	(void)state;
	check_golden("compat_twemproxy_hashtag.tsv");
}

/* Every other recorded configuration (one per nutcracker hash). */
static void test_golden_all_recorded(void **state)
{
	DIR *d = opendir(PL_DATA_DIR);
	struct dirent *e;
	unsigned int files = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, "compat_twemproxy_", 17) != 0 || len < 4 ||
		    strcmp(e->d_name + len - 4, ".tsv") != 0)
			continue;
		check_golden(e->d_name);
		files++;
	}
	closedir(d);
	print_message("# %u nutcracker golden files replayed\n", files);
	/* fnv1a_64, md5, 9 other hashes, named servers, hash tag, port 11211 */
	assert_true(files >= 14);
}

static struct pl_member member(const char *name, const char *addr, uint16_t port, uint32_t w)
{
	struct pl_member m;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "%s", name);
	snprintf(m.addr, sizeof(m.addr), "%s", addr);
	m.port = port;
	m.weight = w;
	return m;
}

/* The points of a member follow its name only: moving a named server keeps its keys. */
static void test_points_follow_name(void **state)
{
	struct pl_member a[3] = {member("alpha", "10.0.0.1", 11211, 1),
				 member("bravo", "10.0.0.2", 11211, 2),
				 member("charlie", "10.0.0.3", 11211, 1)};
	struct pl_member b[3];
	struct pl_point *pa = NULL, *pb = NULL;
	size_t na = 0, nb = 0;
	uint8_t d[16];

	(void)state;
	memcpy(b, a, sizeof(a));
	snprintf(b[1].addr, sizeof(b[1].addr), "10.7.7.7");
	b[1].port = 22122;
	assert_int_equal(pl_twemproxy_points(a, 3, &pa, &na), 0);
	assert_int_equal(pl_twemproxy_points(b, 3, &pb, &nb), 0);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_true(pa[i].value == pb[i].value);
		assert_int_equal(pa[i].member, pb[i].member);
	}
	/* The first point of "bravo" is word 0 of md5("bravo-0"). */
	pl_md5("bravo-0", 7, d);
	for (size_t i = 0; i < na; i++) {
		if (pa[i].member == 1) {
			assert_int_equal(pa[i].value, (uint32_t)d[0] | (uint32_t)d[1] << 8 |
							      (uint32_t)d[2] << 16 |
							      (uint32_t)d[3] << 24);
			break;
		}
	}
	free(pa);
	free(pb);
}

/* Weight shares: 1:2:1 of 3 servers -> floor(pct * 40 * 3) digests of 4 points each. */
static void test_point_counts(void **state)
{
	struct pl_member m[4] = {member("a", "h", 1, 1), member("b", "h", 2, 2),
				 member("c", "h", 3, 1), member("d", "h", 4, 0)};
	struct pl_point *p = NULL;
	size_t n = 0, per[4] = {0};

	(void)state;
	assert_int_equal(pl_twemproxy_points(m, 4, &p, &n), 0);
	for (size_t i = 0; i < n; i++)
		per[p[i].member]++;
	/* pct = 0.25, 0.5, 0.25 of 3 live servers: 30, 60, 30 digests; the drained one none. */
	assert_int_equal(per[0], 120);
	assert_int_equal(per[1], 240);
	assert_int_equal(per[2], 120);
	assert_int_equal(per[3], 0);
	assert_int_equal(n, 480);
	free(p);
}

/* No member with weight: no points, and the placement owns nothing. */
static void test_all_drained(void **state)
{
	struct pl_member m[2] = {member("a", "h", 1, 0), member("b", "h", 2, 0)};
	struct pl_config cfg = {.algo = PL_ALGO_TWEMPROXY};
	struct pl_point *p = NULL;
	struct pl_placement *pl;
	size_t n = 7;

	(void)state;
	assert_int_equal(pl_twemproxy_points(m, 2, &p, &n), 0);
	assert_int_equal(n, 0);
	assert_null(p);
	pl = pl_build(&cfg, m, 2);
	assert_non_null(pl);
	assert_int_equal(pl_lookup(pl, "k", 1), -ENOENT);
	pl_free(pl);
}

/* The key hash is the configured one (default fnv1a_64), widened from 32 bits. */
static void test_key_hash_choice(void **state)
{
	struct pl_member m[2] = {member("a", "h", 1, 1), member("b", "h", 2, 1)};
	struct pl_config cfg = {.algo = PL_ALGO_TWEMPROXY};
	struct pl_placement *pl;
	char key[256];

	(void)state;
	pl = pl_build(&cfg, m, 2);
	assert_non_null(pl);
	for (uint64_t i = 0; i < 1000; i++) {
		size_t len = compat_key(i, key);

		assert_true(pl_key_hash(pl, key, len) == pl_hash_bytes(PL_HASH_FNV1A_64, key, len));
	}
	pl_free(pl);
	for (int h = PL_HASH_MD5; h < PL_HASH_COUNT; h++) {
		cfg.key_hash = (enum pl_hash)h;
		pl = pl_build(&cfg, m, 2);
		assert_non_null(pl);
		for (uint64_t i = 0; i < 200; i++) {
			size_t len = compat_key(i, key);

			assert_true(pl_key_hash(pl, key, len) ==
				    pl_hash_bytes((enum pl_hash)h, key, len));
		}
		pl_free(pl);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_fnv1a_64),
		cmocka_unit_test(test_golden_md5),
		cmocka_unit_test(test_golden_named_servers),
		cmocka_unit_test(test_golden_port_11211),
		cmocka_unit_test(test_golden_hash_tag),
		cmocka_unit_test(test_golden_all_recorded),
		cmocka_unit_test(test_points_follow_name),
		cmocka_unit_test(test_point_counts),
		cmocka_unit_test(test_all_drained),
		cmocka_unit_test(test_key_hash_choice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
