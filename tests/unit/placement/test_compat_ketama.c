/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The `ketama` placement must be libmemcached's weighted ketama, exactly. This test links
 * Debian's libmemcached 1.1.4 and compares, for each fleet:
 *  - the whole continuum libmemcached builds (every point's value and server, in order) with
 *    the recipe's points after the core's stable sort;
 *  - the owner of >= 100,000 keys: memcached_generate_hash() against pl_lookup();
 *  - the key hash: memcached_generate_hash_value(MD5) against pl_key_hash().
 * No network: libmemcached computes placement locally and never connects here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmemcached/memcached.h>

#include "compat_golden.h"
#include "compat_keys.h"
#include "placement.h"
#include "placement_priv.h"

/*
 * libmemcached keeps its continuum behind an incomplete type; its layout (continuum.hpp in
 * libmemcached 1.1.4, unchanged since 0.25) is completed here so the test can read the points.
 */
struct memcached_continuum_item_st {
	uint32_t index;
	uint32_t value;
};

#define KEYS_PER_FLEET 100000

static memcached_st *lm_create(const struct pl_member *m, uint32_t n)
{
	memcached_st *memc = memcached_create(NULL);

	assert_non_null(memc);
	assert_int_equal(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
						MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA),
			 MEMCACHED_SUCCESS);
	assert_int_equal(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
			 MEMCACHED_SUCCESS);
	for (uint32_t i = 0; i < n; i++) {
		if (m[i].weight == 0)
			continue; /* drained: not in the client's server list at all */
		assert_int_equal(
			memcached_server_add_with_weight(memc, m[i].addr, m[i].port, m[i].weight),
			MEMCACHED_SUCCESS);
	}
	return memc;
}

/* Stable sort of the recipe's points by value: the order the placement core uses. */
static void stable_sort_points(struct pl_point *p, size_t n)
{
	struct pl_point *tmp = malloc(n * sizeof(*tmp));

	assert_non_null(tmp);
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t a = lo, b = mid, o = lo;

			while (a < mid && b < hi)
				tmp[o++] = p[b].value < p[a].value ? p[b++] : p[a++];
			while (a < mid)
				tmp[o++] = p[a++];
			while (b < hi)
				tmp[o++] = p[b++];
		}
		memcpy(p, tmp, n * sizeof(*p));
	}
	free(tmp);
}

/* Member index of the fleet for libmemcached's server index (drained members are skipped). */
static uint32_t member_of_server(const struct pl_member *m, uint32_t n, uint32_t server)
{
	for (uint32_t i = 0; i < n; i++) {
		if (m[i].weight == 0)
			continue;
		if (server-- == 0)
			return i;
	}
	fail_msg("server index %u out of range", server);
	return UINT32_MAX;
}

/* The recipe's sorted points equal libmemcached's continuum, point for point. */
static void check_continuum(memcached_st *memc, const struct pl_member *m, uint32_t n)
{
	struct pl_point *pts = NULL;
	size_t count = 0;
	const struct memcached_continuum_item_st *c = memc->ketama.continuum;

	assert_int_equal(pl_ketama_points(m, n, &pts, &count), 0);
	assert_int_equal(count, memc->ketama.continuum_points_counter);
	stable_sort_points(pts, count);
	for (size_t i = 0; i < count; i++) {
		uint32_t want = member_of_server(m, n, c[i].index);

		if (pts[i].value != c[i].value || pts[i].member != want)
			fail_msg("point %zu: recipe %08llx member %u, libmemcached %08x server %u "
				 "(member %u)",
				 i, (unsigned long long)pts[i].value, pts[i].member, c[i].value,
				 c[i].index, want);
	}
	free(pts);
}

/* pl_lookup() and libmemcached agree on the owner of every key. */
static void check_keys(memcached_st *memc, const struct pl_member *m, uint32_t n, uint64_t nkeys)
{
	struct pl_config cfg = {.algo = PL_ALGO_KETAMA};
	struct pl_placement *p = pl_build(&cfg, m, n);
	char key[256];
	uint64_t agree = 0;

	assert_non_null(p);
	for (uint64_t i = 0; i < nkeys; i++) {
		size_t len = compat_key(i, key);
		uint32_t server = memcached_generate_hash(memc, key, len);
		uint32_t want = member_of_server(m, n, server);
		int32_t got = pl_lookup(p, key, len);

		if (pl_key_hash(p, key, len) !=
		    memcached_generate_hash_value(key, len, MEMCACHED_HASH_MD5))
			fail_msg("key %llu: key hash differs", (unsigned long long)i);
		if (got != (int32_t)want)
			fail_msg("key %llu (%s): ringway member %d, libmemcached server %u (member "
				 "%u)",
				 (unsigned long long)i, key, got, server, want);
		agree++;
	}
	assert_int_equal(agree, nkeys);
	pl_free(p);
}

static void check_fleet(const struct pl_member *m, uint32_t n, uint64_t nkeys)
{
	memcached_st *memc = lm_create(m, n);

	check_continuum(memc, m, n);
	if (nkeys > 0)
		check_keys(memc, m, n, nkeys);
	memcached_free(memc);
}

static struct pl_member *fleet(uint32_t n, const char *addr_fmt, uint16_t port, uint32_t weight)
{
	struct pl_member *m = calloc(n, sizeof(*m));

	assert_non_null(m);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "m%u", i);
		snprintf(m[i].addr, sizeof(m[i].addr), addr_fmt, i / 250, i % 250 + 1);
		m[i].port = port;
		m[i].weight = weight;
	}
	return m;
}

static void test_equal_weights_3(void **state)
{
	struct pl_member *m = fleet(3, "10.0.%u.%u", 11211, 1);

	(void)state;
	check_fleet(m, 3, KEYS_PER_FLEET);
	free(m);
}

static void test_equal_weights_25(void **state)
{
	struct pl_member *m = fleet(25, "10.0.%u.%u", 11211, 1);

	(void)state;
	check_fleet(m, 25, KEYS_PER_FLEET);
	free(m);
}

static void test_equal_weights_100(void **state)
{
	struct pl_member *m = fleet(100, "10.0.%u.%u", 11211, 1);

	(void)state;
	check_fleet(m, 100, KEYS_PER_FLEET);
	free(m);
}

/* Equal weights other than 1 give the same points as weight 1. */
static void test_equal_weights_7(void **state)
{
	struct pl_member *m = fleet(10, "10.0.%u.%u", 11211, 7);

	(void)state;
	check_fleet(m, 10, KEYS_PER_FLEET);
	free(m);
}

static void test_mixed_weights(void **state)
{
	struct pl_member *m = fleet(10, "192.168.%u.%u", 11211, 1);

	(void)state;
	for (uint32_t i = 0; i < 10; i++)
		m[i].weight = i + 1;
	check_fleet(m, 10, KEYS_PER_FLEET);
	free(m);
}

static void test_mixed_weights_random(void **state)
{
	struct pl_member *m = fleet(60, "172.16.%u.%u", 11211, 1);
	uint64_t s = 42;

	(void)state;
	for (uint32_t i = 0; i < 60; i++)
		m[i].weight = 1 + (uint32_t)(compat_splitmix64(&s) % 100);
	check_fleet(m, 60, KEYS_PER_FLEET);
	free(m);
}

/* "host:port-i" for ports other than 11211; one host, several ports, mixed with 11211. */
static void test_non_default_ports(void **state)
{
	struct pl_member *m = fleet(12, "10.1.%u.%u", 11211, 1);

	(void)state;
	for (uint32_t i = 0; i < 12; i++) {
		snprintf(m[i].addr, sizeof(m[i].addr), "10.1.0.%u", i % 3 + 1);
		m[i].port = (uint16_t)(i < 3 ? 11211 : 11211 + i);
		m[i].weight = 1 + i % 4;
	}
	check_fleet(m, 12, KEYS_PER_FLEET);
	free(m);
}

/* The host string is whatever the client was given: host names hash as written. */
static void test_host_names(void **state)
{
	struct pl_member *m = fleet(8, "10.2.%u.%u", 11211, 1);

	(void)state;
	for (uint32_t i = 0; i < 8; i++) {
		snprintf(m[i].addr, sizeof(m[i].addr), "cache-%02u.example.internal", i);
		m[i].port = (uint16_t)(i % 2 ? 11211 : 22122);
	}
	check_fleet(m, 8, KEYS_PER_FLEET);
	free(m);
}

/* IPv6 members: libmemcached hashes the address as it was given (no brackets, "<host>-<i>" or
 * "<host>:<port>-<i>"); our members hold IPv6 in RFC 5952 form without brackets, so a client
 * given the same text places every key as we do. */
static void test_ipv6_hosts(void **state)
{
	struct pl_member *m = fleet(12, "10.2.%u.%u", 11211, 1);

	(void)state;
	for (uint32_t i = 0; i < 12; i++) {
		snprintf(m[i].addr, sizeof(m[i].addr), "2001:2::1:%x", i + 1);
		m[i].port = (uint16_t)(i % 3 ? 11211 : 11300);
		m[i].weight = 1 + i % 3;
	}
	check_fleet(m, 12, KEYS_PER_FLEET);
	free(m);
}

static void test_single_server(void **state)
{
	struct pl_member *m = fleet(1, "10.3.%u.%u", 11211, 5);

	(void)state;
	check_fleet(m, 1, 10000);
	free(m);
}

/*
 * A drained member (weight 0) is placed as if the client did not list it: the other members'
 * points and owners are exactly those of libmemcached without that server.
 */
static void test_drained_member(void **state)
{
	struct pl_member *m = fleet(9, "10.4.%u.%u", 11211, 2);

	(void)state;
	m[0].weight = 0;
	m[4].weight = 0;
	m[5].weight = 3;
	check_fleet(m, 9, KEYS_PER_FLEET);
	free(m);
}

/*
 * The points-per-server formula in single precision, over many random fleets: the continuum
 * (point counts per server, values, order) must match libmemcached for each.
 */
static void test_points_formula_random_fleets(void **state)
{
	uint64_t s = 7;

	(void)state;
	for (int f = 0; f < 300; f++) {
		uint32_t n = 2 + (uint32_t)(compat_splitmix64(&s) % 40);
		uint32_t wmax = f % 3 == 0 ? 3 : f % 3 == 1 ? 100 : 100000;
		struct pl_member *m = fleet(n, "10.5.%u.%u", 11211, 1);

		for (uint32_t i = 0; i < n; i++) {
			m[i].weight = 1 + (uint32_t)(compat_splitmix64(&s) % wmax);
			if (compat_splitmix64(&s) % 4 == 0)
				m[i].port = (uint16_t)(1024 + compat_splitmix64(&s) % 60000);
		}
		check_fleet(m, n, 0);
		free(m);
	}
}

/*
 * nutcracker with `hash: md5` and unnamed servers names them "host" (port 11211) or
 * "host:port": the `twemproxy` recipe then places keys exactly as libmemcached does.
 */
static void test_twemproxy_md5_equals_libmemcached(void **state)
{
	struct pl_member *m = fleet(20, "10.6.%u.%u", 11211, 1);
	struct pl_config cfg = {.algo = PL_ALGO_TWEMPROXY, .key_hash = PL_HASH_MD5};
	struct pl_placement *p;
	memcached_st *memc;
	char key[256];

	(void)state;
	for (uint32_t i = 0; i < 20; i++) {
		m[i].weight = 1 + i % 5;
		m[i].port = (uint16_t)(i % 4 ? 11211 : 11300 + i);
		if (m[i].port == 11211)
			snprintf(m[i].name, sizeof(m[i].name), "%s", m[i].addr);
		else
			snprintf(m[i].name, sizeof(m[i].name), "%s:%u", m[i].addr, m[i].port);
	}
	memc = lm_create(m, 20);
	p = pl_build(&cfg, m, 20);
	assert_non_null(p);
	for (uint64_t i = 0; i < KEYS_PER_FLEET; i++) {
		size_t len = compat_key(i, key);

		assert_int_equal(pl_lookup(p, key, len), memcached_generate_hash(memc, key, len));
	}
	pl_free(p);
	memcached_free(memc);
	free(m);
}

/* Whether the sorted recipe points of @p m hold equal values from different members. */
static int has_cross_member_tie(const struct pl_member *m, uint32_t n)
{
	struct pl_point *pts = NULL;
	size_t count = 0;
	int tie = 0;

	assert_int_equal(pl_ketama_points(m, n, &pts, &count), 0);
	stable_sort_points(pts, count);
	for (size_t i = 1; i < count && !tie; i++)
		tie = pts[i].value == pts[i - 1].value && pts[i].member != pts[i - 1].member;
	free(pts);
	return tie;
}

/*
 * Equal point values from different servers: libmemcached orders them by server index and its
 * lookup (a lower-bound search) takes the first. libmemcached allows at most 100 servers on a
 * ketama continuum (it asserts), where a 32-bit collision between servers has a chance of a few
 * percent; the test walks address plans until it finds one with such a tie, so the tie-break is
 * exercised against libmemcached, not assumed.
 */
static void test_tie_break(void **state)
{
	const uint32_t n = 100;
	struct pl_member *m = fleet(n, "10.%u.%u.7", 11211, 1);
	struct pl_config cfg = {.algo = PL_ALGO_KETAMA};
	const struct memcached_continuum_item_st *c;
	struct pl_placement *p;
	memcached_st *memc;
	uint32_t plan, ties = 0;

	(void)state;
	for (plan = 0; plan < 5000; plan++) {
		for (uint32_t i = 0; i < n; i++)
			snprintf(m[i].addr, sizeof(m[i].addr), "10.%u.%u.%u", plan / 250,
				 plan % 250, i + 1);
		if (has_cross_member_tie(m, n))
			break;
	}
	assert_true(plan < 5000);
	memc = lm_create(m, n);
	check_continuum(memc, m, n);
	p = pl_build(&cfg, m, n);
	assert_non_null(p);
	c = memc->ketama.continuum;
	for (uint32_t i = 1; i < memc->ketama.continuum_points_counter; i++) {
		uint32_t first = i - 1;

		if (c[i].value != c[i - 1].value || c[i].index == c[i - 1].index)
			continue;
		while (first > 0 && c[first - 1].value == c[i].value)
			first--;
		assert_true(c[first].index < c[i].index);
		assert_int_equal(pl_lookup_hash(p, c[i].value), (int32_t)c[first].index);
		ties++;
	}
	print_message("# address plan %u: %u cross-server ties in %u points\n", plan, ties,
		      memc->ketama.continuum_points_counter);
	assert_true(ties >= 1);
	pl_free(p);
	memcached_free(memc);
	free(m);
}

/*
 * libmemcached's points per server depend on every server's share of the total weight and on
 * the server count, so adding one server changes the other servers' point counts and keys
 * move between servers that did not change (docs/scaling.md quotes this). Measured with
 * libmemcached itself: equal weights 24 -> 25 (float rounding gives 156 points, not 160, at
 * 25 servers) and weights 1..10 plus one server of weight 1.
 */
static void measure_add(const struct pl_member *m, uint32_t n, const char *label)
{
	memcached_st *before = lm_create(m, n - 1), *after = lm_create(m, n);
	uint64_t moved = 0, between = 0;
	const uint64_t nkeys = 200000;
	char key[64];

	for (uint64_t i = 0; i < nkeys; i++) {
		int len = snprintf(key, sizeof(key), "user:%llu", (unsigned long long)i);
		uint32_t a = memcached_generate_hash(before, key, (size_t)len);
		uint32_t b = memcached_generate_hash(after, key, (size_t)len);

		moved += a != b;
		between += a != b && b != n - 1;
	}
	print_message("# libmemcached %s: %.2f%% of keys moved, %.2f%% between unchanged "
		      "servers\n",
		      label, 100.0 * (double)moved / (double)nkeys,
		      100.0 * (double)between / (double)nkeys);
	assert_true(between > 0);
	memcached_free(before);
	memcached_free(after);
}

static void test_weighted_formula_moves_survivors(void **state)
{
	struct pl_member *m = fleet(25, "198.18.%u.%u", 11211, 1);

	(void)state;
	measure_add(m, 25, "24 -> 25 equal weights");
	free(m);
	m = fleet(11, "198.18.%u.%u", 11211, 1);
	for (uint32_t i = 0; i < 10; i++)
		m[i].weight = i + 1;
	measure_add(m, 11, "weights 1..10 + one of weight 1");
	free(m);
}

/* ---- Golden vectors recorded from libmemcached by compat_gen_ketama (see compat_golden.h) */

static void check_golden(const char *file)
{
	char path[512];
	struct compat_golden_result res;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", PL_DATA_DIR, file);
	rc = compat_golden_check(path, PL_ALGO_KETAMA, &res);
	if (rc != 0)
		fail_msg("%s: %s", path, strerror(-rc));
	if (res.mismatches != 0)
		fail_msg("%s: %llu of %llu keys differ; first: %s", file,
			 (unsigned long long)res.mismatches, (unsigned long long)res.keys,
			 res.first_mismatch);
	assert_true(res.keys >= 1000);
}

static void test_golden_ketama(void **state)
{
	(void)state;
	check_golden("compat_ketama_equal.tsv");
	check_golden("compat_ketama_weighted.tsv");
	check_golden("compat_ketama_ports.tsv");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_weights_3),
		cmocka_unit_test(test_equal_weights_25),
		cmocka_unit_test(test_equal_weights_100),
		cmocka_unit_test(test_equal_weights_7),
		cmocka_unit_test(test_mixed_weights),
		cmocka_unit_test(test_mixed_weights_random),
		cmocka_unit_test(test_non_default_ports),
		cmocka_unit_test(test_host_names),
		cmocka_unit_test(test_ipv6_hosts),
		cmocka_unit_test(test_single_server),
		cmocka_unit_test(test_drained_member),
		cmocka_unit_test(test_points_formula_random_fleets),
		cmocka_unit_test(test_twemproxy_md5_equals_libmemcached),
		cmocka_unit_test(test_tie_break),
		cmocka_unit_test(test_weighted_formula_moves_survivors),
		cmocka_unit_test(test_golden_ketama),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
