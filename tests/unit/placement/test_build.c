/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building placements: what is refused (EINVAL) and why, the defaults a built placement
 * reports, member access, names of algorithms and hashes, drained fleets, and clones made
 * with the caller's allocator that answer exactly like the original.
 */
#include <errno.h>

#include "pl_test.h"

static const enum pl_algo core_algos[] = {PL_ALGO_RING, PL_ALGO_JUMP, PL_ALGO_RENDEZVOUS,
					  PL_ALGO_MAGLEV, PL_ALGO_MODULO};
#define N_CORE (sizeof(core_algos) / sizeof(core_algos[0]))

static void expect_einval(const struct pl_config *cfg, const struct pl_member *m, uint32_t n)
{
	errno = 0;
	assert_null(pl_build(cfg, m, n));
	assert_int_equal(errno, EINVAL);
}

static void test_refuses_bad_input(void **state)
{
	struct pl_member *m = pt_fleet(4);
	struct pl_config cfg = {0};

	(void)state;
	expect_einval(&cfg, m, 0);
	expect_einval(&cfg, NULL, 4);
	expect_einval(&cfg, m, PL_MEMBERS_MAX + 1);
	for (size_t a = 0; a < N_CORE; a++) {
		cfg.algo = core_algos[a];
		strcpy(m[2].name, "node1"); /* duplicate */
		expect_einval(&cfg, m, 4);
		m[2].name[0] = '\0'; /* empty */
		expect_einval(&cfg, m, 4);
		memset(m[2].name, 'x', sizeof(m[2].name)); /* not terminated */
		expect_einval(&cfg, m, 4);
		strcpy(m[2].name, "node2");
	}
	cfg = (struct pl_config){.algo = PL_ALGO_COUNT};
	expect_einval(&cfg, m, 4);
	cfg = (struct pl_config){.algo = PL_ALGO_RING, .key_hash = PL_HASH_MD5};
	expect_einval(&cfg, m, 4); /* only twemproxy takes a key hash */
	cfg = (struct pl_config){.algo = PL_ALGO_TWEMPROXY, .key_hash = PL_HASH_COUNT};
	expect_einval(&cfg, m, 4);
	cfg = (struct pl_config){.hash_tag = {'{', '\0'}};
	expect_einval(&cfg, m, 4);
	cfg = (struct pl_config){.algo = PL_ALGO_MAGLEV, .maglev_size = 65536}; /* not prime */
	expect_einval(&cfg, m, 4);
	cfg.maglev_size = 1;
	expect_einval(&cfg, m, 4);
	cfg.maglev_size = 3; /* fewer entries than members with weight */
	expect_einval(&cfg, m, 4);
	cfg.maglev_size = 5;
	struct pl_placement *p = pl_build(&cfg, m, 4);
	assert_non_null(p);
	assert_int_equal(pl_point_count(p), 5);
	pl_free(p);
	cfg = (struct pl_config){.algo = PL_ALGO_RING, .vnodes = 1u << 20};
	m[0].weight = 1000; /* 2^30 points: over the limit */
	expect_einval(&cfg, m, 4);
	free(m);
}

static void test_defaults_and_members(void **state)
{
	struct pl_member *m = pt_fleet(10);
	struct pl_config cfg = {.algo = PL_ALGO_TWEMPROXY};
	struct pl_placement *p;

	(void)state;
	m[3].weight = 3;
	p = pt_build(PL_ALGO_RING, m, 10);
	assert_int_equal(pl_config_of(p)->algo, PL_ALGO_RING);
	assert_int_equal(pl_config_of(p)->vnodes, PL_DEFAULT_VNODES);
	assert_int_equal(pl_config_of(p)->maglev_size, PL_DEFAULT_MAGLEV_TABLE);
	assert_int_equal(pl_member_count(p), 10);
	assert_int_equal(pl_point_count(p), 12 * PL_DEFAULT_VNODES);
	assert_true(pl_memory(p) >= 12 * PL_DEFAULT_VNODES * 12);
	assert_string_equal(pl_member_at(p, 7)->name, "node7");
	assert_int_equal(pl_member_at(p, 3)->weight, 3);
	assert_null(pl_member_at(p, 10));
	assert_int_equal(pl_member_find(p, "node9"), 9);
	assert_int_equal(pl_member_find(p, "node10"), -ENOENT);
	assert_int_equal(pl_member_find(p, ""), -ENOENT);
	pl_free(p);

	p = pl_build(&cfg, m, 10); /* twemproxy's default hash is fnv1a_64 */
	assert_non_null(p);
	assert_int_equal(pl_config_of(p)->key_hash, PL_HASH_FNV1A_64);
	pl_free(p);

	p = pt_build(PL_ALGO_JUMP, m, 10);
	assert_int_equal(pl_point_count(p), 0);
	assert_int_equal(pl_lookup_hash_bsearch(p, 1), -ENOTSUP);
	pl_free(p);
	pl_free(NULL);
	free(m);
}

static void test_names(void **state)
{
	enum pl_algo a;
	enum pl_hash h;

	(void)state;
	for (int i = 0; i < PL_ALGO_COUNT; i++) {
		assert_int_equal(pl_algo_parse(pl_algo_name((enum pl_algo)i), &a), 0);
		assert_int_equal(a, i);
	}
	for (int i = 0; i < PL_HASH_COUNT; i++) {
		assert_int_equal(pl_hash_parse(pl_hash_name((enum pl_hash)i), &h), 0);
		assert_int_equal(h, i);
	}
	assert_int_equal(pl_algo_parse("ring", &a), 0);
	assert_int_equal(a, PL_ALGO_RING);
	assert_int_equal(pl_algo_parse("Ring", &a), -EINVAL);
	assert_int_equal(pl_algo_parse("", &a), -EINVAL);
	assert_int_equal(pl_hash_parse("fnv1a_64", &h), 0);
	assert_int_equal(h, PL_HASH_FNV1A_64);
	assert_int_equal(pl_hash_parse("sha1", &h), -EINVAL);
	assert_null(pl_algo_name(PL_ALGO_COUNT));
	assert_null(pl_hash_name(PL_HASH_COUNT));
	assert_string_equal(pl_algo_name(PL_ALGO_MAGLEV), "maglev");
}

/* Drained members keep their index and own nothing; a fleet of drained members owns nothing. */
static void test_drained(void **state)
{
	struct pl_member *m = pt_fleet(5);
	uint32_t out[5];
	uint64_t loads[5] = {0};
	double shares[5];

	(void)state;
	for (size_t a = 0; a < N_CORE; a++) {
		struct pl_placement *p;

		m[1].weight = 0;
		p = pt_build(core_algos[a], m, 5);
		for (uint64_t i = 0; i < 20000; i++)
			assert_int_not_equal(pl_lookup_hash(p, i * UINT64_C(0x9e3779b97f4a7c15)),
					     1);
		assert_int_equal(pl_replicas(p, 42, out, 5), 4);
		for (int i = 0; i < 4; i++)
			assert_int_not_equal(out[i], 1);
		assert_int_equal(pl_shares(p, shares), 0);
		assert_true(shares[1] == 0.0);
		pl_free(p);

		for (int i = 0; i < 5; i++)
			m[i].weight = 0;
		p = pt_build(core_algos[a], m, 5);
		assert_int_equal(pl_lookup(p, "k", 1), -ENOENT);
		assert_int_equal(pl_replicas(p, 7, out, 3), 0);
		assert_int_equal(pl_lookup_bounded(p, 7, loads, 0.25), -ENOENT);
		assert_int_equal(pl_shares(p, shares), 0);
		for (int i = 0; i < 5; i++)
			assert_true(shares[i] == 0.0);
		pl_free(p);
		for (int i = 0; i < 5; i++)
			m[i].weight = 1;
	}
	free(m);
}

/* A counting allocator: proves every byte of a clone comes from it and goes back to it. */
struct counting {
	int allocs, frees;
	size_t bytes;
};

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
	struct counting *c = ctx;
	void *p = NULL;

	assert_true(align == 64);
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	c->allocs++;
	c->bytes += size;
	memset(p, 0xa5, size); /* a clone must not rely on zeroed memory */
	return p;
}

static void counting_free(void *ptr, void *ctx)
{
	struct counting *c = ctx;

	c->frees++;
	free(ptr);
}

static void test_clone(void **state)
{
	struct pl_member *m = pt_fleet(50);
	struct counting cnt = {0};
	struct pl_allocator a = {counting_alloc, counting_free, &cnt};
	uint64_t s = 1;

	(void)state;
	m[7].weight = 4;
	m[9].weight = 0;
	for (size_t k = 0; k < N_CORE; k++) {
		struct pl_placement *p = pt_build(core_algos[k], m, 50);
		struct pl_placement *c = pl_clone(p, &a), *d;
		uint32_t ro[4], rc[4];

		assert_non_null(c);
		assert_int_equal(cnt.allocs, (int)k + 1);
		assert_int_equal(pl_memory(c), pl_memory(p));
		d = pl_clone(c, NULL); /* clone of a clone, malloc'd */
		assert_non_null(d);
		pl_free(p); /* the clones must not point into the original */
		p = pt_build(core_algos[k], m, 50);
		for (int i = 0; i < 200000; i++) {
			uint64_t h = pt_rand(&s);
			int32_t o = pl_lookup_hash(p, h);

			assert_int_equal(pl_lookup_hash(c, h), o);
			assert_int_equal(pl_lookup_hash(d, h), o);
			if (i % 64 == 0) {
				assert_int_equal(pl_replicas(p, h, ro, 4), 4);
				assert_int_equal(pl_replicas(c, h, rc, 4), 4);
				assert_memory_equal(ro, rc, sizeof(ro));
			}
		}
		assert_string_equal(pl_member_at(c, 7)->name, "node7");
		assert_int_equal(pl_member_find(c, "node42"), 42);
		assert_int_equal(pl_config_of(c)->algo, core_algos[k]);
		pl_free(c);
		assert_int_equal(cnt.frees, (int)k + 1);
		pl_free(d);
		pl_free(p);
	}
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_bad_input),
		cmocka_unit_test(test_defaults_and_members),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_drained),
		cmocka_unit_test(test_clone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
