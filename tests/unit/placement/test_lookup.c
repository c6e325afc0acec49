/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lookups: the continuum index gives exactly the answers of plain binary search (on millions
 * of random hashes and on every edge: 0, UINT64_MAX, each point's value and its neighbours,
 * index bucket boundaries, the wrap above the last point, hashes above a 32-bit continuum);
 * `ring` points are where the documented recipe puts them; key hashes and hash tags.
 */
#include <errno.h>
#include <time.h>

#include <xxhash.h>

#include "pl_test.h"
#include "placement_priv.h"

#define RANDOM_HASHES 2000000

static void expect_same(const struct pl_placement *p, uint64_t h)
{
	int32_t a = pl_lookup_hash(p, h), b = pl_lookup_hash_bsearch(p, h);

	if (a != b)
		fail_msg("hash %#llx: index says %d, binary search %d", (unsigned long long)h, a,
			 b);
}

/* Random hashes, bucket boundaries of every index size, and the ends of the space. */
static void expect_index_equals_bsearch(const struct pl_placement *p, uint64_t seed, uint64_t mask)
{
	uint64_t s = seed;

	for (int i = 0; i < RANDOM_HASHES; i++)
		expect_same(p, pt_rand(&s) & mask);
	for (unsigned bits = 1; bits < 64; bits++) {
		for (int i = 0; i < 64; i++) {
			uint64_t k = pt_rand(&s) >> bits << bits;

			expect_same(p, k);
			expect_same(p, k - 1);
			expect_same(p, k + 1);
			expect_same(p, k & mask);
			expect_same(p, (k & mask) - 1);
		}
	}
	expect_same(p, 0);
	expect_same(p, 1);
	expect_same(p, UINT64_MAX);
	expect_same(p, UINT64_MAX - 1);
	expect_same(p, mask);
	expect_same(p, mask + 1);
	expect_same(p, mask - 1);
}

/* Every point, its neighbours and the wrap: ring points at XXH3(name, token). */
static void test_ring_points_and_edges(void **state)
{
	const uint32_t n = 1000;
	struct pl_member *m = pt_fleet(n);
	struct pl_placement *p;
	uint64_t maxv = 0, minv = UINT64_MAX;
	int32_t min_owner = -1;

	(void)state;
	m[5].weight = 3;
	m[6].weight = 0;
	p = pt_build(PL_ALGO_RING, m, n);
	assert_int_equal(pl_point_count(p), (n + 1) * PL_DEFAULT_VNODES);
	for (uint32_t i = 0; i < n; i++) {
		for (uint64_t t = 0; t < (uint64_t)m[i].weight * PL_DEFAULT_VNODES; t++) {
			uint64_t v = XXH3_64bits_withSeed(m[i].name, strlen(m[i].name), t);

			assert_int_equal(pl_lookup_hash(p, v), i);
			assert_int_equal(pl_lookup_hash_bsearch(p, v), i);
			expect_same(p, v - 1);
			expect_same(p, v + 1);
			if (v > maxv)
				maxv = v;
			if (v < minv) {
				minv = v;
				min_owner = (int32_t)i;
			}
		}
	}
	/* Above the last point the ring wraps to the first. */
	if (maxv < UINT64_MAX) {
		assert_int_equal(pl_lookup_hash(p, maxv + 1), min_owner);
		assert_int_equal(pl_lookup_hash(p, UINT64_MAX), min_owner);
	}
	assert_int_equal(pl_lookup_hash(p, 0), min_owner);
	assert_int_equal(pl_lookup_hash(p, minv), min_owner);
	expect_index_equals_bsearch(p, 11, UINT64_MAX);
	pl_free(p);
	free(m);
}

/* Small and lopsided rings: one point, two members, one heavy member among light ones. */
static void test_small_rings(void **state)
{
	struct pl_member *m = pt_fleet(3);
	struct pl_config cfg = {.vnodes = 1};
	struct pl_placement *p;

	(void)state;
	p = pl_build(&cfg, m, 1);
	assert_non_null(p);
	assert_int_equal(pl_point_count(p), 1);
	for (uint64_t s = 3, i = 0; i < 100000; i++)
		assert_int_equal(pl_lookup_hash(p, pt_rand(&s)), 0);
	expect_index_equals_bsearch(p, 5, UINT64_MAX);
	pl_free(p);
	p = pl_build(&cfg, m, 2);
	assert_non_null(p);
	expect_index_equals_bsearch(p, 6, UINT64_MAX);
	pl_free(p);
	m[1].weight = 5000;
	p = pl_build(&cfg, m, 3);
	assert_non_null(p);
	expect_index_equals_bsearch(p, 7, UINT64_MAX);
	pl_free(p);
	free(m);
}

/* Fleets beyond 32768 members have no room for owners in the index: every bucket scans. */
static void test_huge_fleet(void **state)
{
	const uint32_t n = 40000;
	struct pl_member *m = pt_fleet(n);
	struct pl_config cfg = {.vnodes = 4};
	struct pl_placement *p = pl_build(&cfg, m, n);
	uint64_t s = 31;

	(void)state;
	assert_non_null(p);
	for (int i = 0; i < 500000; i++)
		expect_same(p, pt_rand(&s));
	expect_same(p, 0);
	expect_same(p, UINT64_MAX);
	assert_int_equal(pl_member_find(p, "node39999"), 39999);
	pl_free(p);
	free(m);
}

/* 32-bit continua (ketama, twemproxy): points and key hashes below 2^32, lookups above it. */
static void test_32bit_continuum(void **state)
{
	const enum pl_algo algos[] = {PL_ALGO_KETAMA, PL_ALGO_TWEMPROXY};
	struct pl_member *m = pt_fleet(300);

	(void)state;
	m[10].weight = 4;
	m[11].weight = 0;
	for (size_t a = 0; a < 2; a++) {
		struct pl_placement *p = pt_build(algos[a], m, 300);
		struct pl_point *pts;
		size_t count;

		assert_int_equal(algos[a] == PL_ALGO_KETAMA
					 ? pl_ketama_points(m, 300, &pts, &count)
					 : pl_twemproxy_points(m, 300, &pts, &count),
				 0);
		assert_int_equal(pl_point_count(p), count);
		for (size_t i = 0; i < count; i++) {
			assert_true(pts[i].value <= UINT32_MAX);
			expect_same(p, pts[i].value);
			expect_same(p, pts[i].value + 1);
			expect_same(p, pts[i].value - 1);
		}
		free(pts);
		expect_index_equals_bsearch(p, 21 + a, UINT32_MAX);
		expect_index_equals_bsearch(p, 23 + a, UINT64_MAX);
		pl_free(p);
	}
	free(m);
}

static void test_key_hash_and_tags(void **state)
{
	struct pl_member *m = pt_fleet(20);
	struct pl_config cfg = {.hash_tag = {'{', '}'}};
	const enum pl_algo algos[] = {PL_ALGO_RING,	PL_ALGO_JUMP,	PL_ALGO_RENDEZVOUS,
				      PL_ALGO_MAGLEV,	PL_ALGO_MODULO, PL_ALGO_KETAMA,
				      PL_ALGO_TWEMPROXY};
	struct pl_placement *p;

	(void)state;
	p = pt_build(PL_ALGO_RING, m, 20);
	assert_true(pl_key_hash(p, "user:1", 6) == XXH3_64bits("user:1", 6));
	assert_true(pl_key_hash(p, "{a}b", 4) == XXH3_64bits("{a}b", 4)); /* tags off */
	assert_int_equal(pl_lookup(p, "user:1", 6), pl_lookup_hash(p, XXH3_64bits("user:1", 6)));
	pl_free(p);

	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
		cfg.algo = algos[a];
		p = pl_build(&cfg, m, 20);
		assert_non_null(p);
#define H(s) pl_key_hash(p, s, strlen(s))
		/* The tag alone is hashed: every key with tag "user1" shares one owner. */
		assert_true(H("{user1}:cart") == H("user1"));
		assert_true(H("x{user1}") == H("user1"));
		assert_true(H("a{user1}b{c}") == H("user1")); /* the first tag counts */
		assert_true(H("{{user1}") == H("{user1"));    /* first start, first end after it */
		assert_true(H("}{user1}") == H("user1"));
		/* No tag: the whole key. */
		assert_true(H("{}user1") != H("user1"));
		assert_true(H("{}") != H(""));
		assert_true(H("{user1") != H("user1"));
		assert_true(H("user1}") != H("user1"));
		assert_true(pl_key_hash(p, NULL, 0) == H(""));
#undef H
		char key[64];
		int32_t owner = pl_lookup(p, "u42", 3);

		for (int i = 0; i < 1000; i++) {
			int len = snprintf(key, sizeof(key), "{u42}:item:%d", i);

			assert_int_equal(pl_lookup(p, key, (size_t)len), owner);
		}
		pl_free(p);
	}
	free(m);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * A rough timing of index against binary search, printed as a TAP comment and never
 * asserted (timings on a shared machine are not a test); tests/bench/placement is the
 * benchmark. The sum keeps the compiler from dropping the lookups.
 */
static void test_report_timing(void **state)
{
	const uint32_t n = 1000, lookups = 4000000;
	struct pl_member *m = pt_fleet(n);
	struct pl_placement *p = pt_build(PL_ALGO_RING, m, n);
	uint64_t *h = malloc(lookups * sizeof(*h)), s = 99, sum_i = 0, sum_b = 0;
	double t0, t1, t2;

	(void)state;
	assert_non_null(h);
	for (uint32_t i = 0; i < lookups; i++)
		h[i] = pt_rand(&s);
	t0 = now_ns();
	for (uint32_t i = 0; i < lookups; i++)
		sum_i += (uint64_t)pl_lookup_hash(p, h[i]);
	t1 = now_ns();
	for (uint32_t i = 0; i < lookups; i++)
		sum_b += (uint64_t)pl_lookup_hash_bsearch(p, h[i]);
	t2 = now_ns();
	assert_true(sum_i == sum_b);
	printf("# ring %u nodes x %u vnodes: index %.1f ns, binary search %.1f ns per lookup\n", n,
	       PL_DEFAULT_VNODES, (t1 - t0) / lookups, (t2 - t1) / lookups);
	free(h);
	pl_free(p);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_points_and_edges),
		cmocka_unit_test(test_small_rings),
		cmocka_unit_test(test_huge_fleet),
		cmocka_unit_test(test_32bit_continuum),
		cmocka_unit_test(test_key_hash_and_tags),
		cmocka_unit_test(test_report_timing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
