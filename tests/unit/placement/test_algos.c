/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm descriptors (pl_algo_info): what the planner and the tools read about an
 * algorithm without building it must be what the built placements do: its name, the
 * configuration fields it reads, its default key hash, the range of its key hashes, how a
 * membership change moves keys, and whether pl_moved_fraction() answers every change.
 */
#include <errno.h>

#include "pl_test.h"

#define N	 50
#define KEYS	 20000
#define MIDDLE	 17 /* a member that is neither the first nor the last */
#define GEN_SIZE 1009

/* node0 .. node{N-1} with weights 1, 2, 3, 1, 2, 3, ... (weights that differ matter). */
static struct pl_member *uneven_fleet(void)
{
	struct pl_member *m = pt_fleet(N);

	for (uint32_t i = 0; i < N; i++)
		m[i].weight = 1 + i % 3;
	return m;
}

static struct pl_placement *build_cfg(const struct pl_config *cfg, const struct pl_member *m,
				      uint32_t n)
{
	struct pl_placement *p = pl_build(cfg, m, n);

	if (p == NULL)
		fail_msg("building %s: %s", pl_algo_name(cfg->algo), strerror(errno));
	return p;
}

/* Keys whose owner differs between a and b, owners matched by name. */
static uint64_t owners_differ(const struct pl_placement *a, const struct pl_placement *b)
{
	uint64_t differ = 0;

	for (uint64_t i = 0; i < KEYS; i++)
		differ += strcmp(pt_owner_name(a, i), pt_owner_name(b, i)) != 0;
	return differ;
}

static void test_names(void **state)
{
	enum pl_algo back;

	(void)state;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++) {
		const struct pl_algo_info *info = pl_algo_info((enum pl_algo)a);

		assert_non_null(info);
		assert_string_equal(info->name, pl_algo_name((enum pl_algo)a));
		assert_int_equal(pl_algo_parse(info->name, &back), 0);
		assert_int_equal(back, a);
		assert_true(info->space_bits == 32 || info->space_bits == 64);
	}
	assert_null(pl_algo_info(PL_ALGO_COUNT));
	assert_null(pl_algo_info((enum pl_algo) - 1));
	for (unsigned p = 0; p < PL_PARAM_COUNT; p++) {
		assert_non_null(pl_param_name((enum pl_param)p));
		for (unsigned q = 0; q < p; q++)
			assert_string_not_equal(pl_param_name((enum pl_param)p),
						pl_param_name((enum pl_param)q));
	}
	assert_null(pl_param_name(PL_PARAM_COUNT));
	assert_string_equal(pl_param_name(PL_PARAM_VNODES), "vnodes");
}

/* A configuration that differs from the default in parameter p only. */
static void set_param(struct pl_config *cfg, enum pl_param p)
{
	switch (p) {
	case PL_PARAM_VNODES:
		cfg->vnodes = 37;
		break;
	case PL_PARAM_MAGLEV_SIZE:
		cfg->maglev_size = GEN_SIZE;
		break;
	case PL_PARAM_KEY_HASH:
		cfg->key_hash = PL_HASH_MD5;
		break;
	default:
		fail_msg("parameter %u has no test value", p);
	}
}

/* An algorithm changes its answers with the parameters it reads, and only with those; a key
 * hash it does not read is refused. */
static void test_params(void **state)
{
	struct pl_member *m = pt_fleet(20);

	(void)state;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++) {
		const struct pl_algo_info *info = pl_algo_info((enum pl_algo)a);
		struct pl_config base = {.algo = (enum pl_algo)a};
		struct pl_placement *p0 = build_cfg(&base, m, 20), *p1;

		if (info->params & PL_PARAM_BIT(PL_PARAM_KEY_HASH))
			assert_int_equal(pl_config_of(p0)->key_hash, info->default_key_hash);
		else
			assert_int_equal(pl_config_of(p0)->key_hash, PL_HASH_XXH3);
		for (unsigned q = 0; q < PL_PARAM_COUNT; q++) {
			struct pl_config cfg = base;
			bool reads = info->params & PL_PARAM_BIT(q);

			set_param(&cfg, (enum pl_param)q);
			p1 = pl_build(&cfg, m, 20);
			if (!reads && q == PL_PARAM_KEY_HASH) {
				assert_null(p1);
				assert_int_equal(errno, EINVAL);
				continue;
			}
			assert_non_null(p1);
			if (reads != (owners_differ(p0, p1) > 0))
				fail_msg("%s: %s %s", info->name, pl_param_name((enum pl_param)q),
					 reads ? "read but changes nothing" : "changes answers");
			pl_free(p1);
		}
		pl_free(p0);
	}
	free(m);
}

static void test_space_bits(void **state)
{
	struct pl_member *m = pt_fleet(10);

	(void)state;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++) {
		const struct pl_algo_info *info = pl_algo_info((enum pl_algo)a);
		struct pl_placement *p = pt_build((enum pl_algo)a, m, 10);
		uint64_t high = 0;

		for (uint64_t i = 0; i < 1000; i++) {
			char key[32];
			uint64_t h = pl_key_hash(p, key, pt_key(i, key, sizeof(key)));

			if (info->space_bits < 64)
				assert_true(h >> info->space_bits == 0);
			high |= h >> 32;
		}
		if (info->space_bits == 64)
			assert_true(high != 0); /* really 64 bits, not 32 widened */
		pl_free(p);
	}
	free(m);
}

/* Keys that move between two members that are in both fleets (the change touched neither). */
static double moved_between_unchanged(const struct pl_placement *a, const struct pl_placement *b,
				      const char *removed)
{
	uint64_t moved = 0;

	for (uint64_t i = 0; i < KEYS; i++) {
		const char *x = pt_owner_name(a, i), *y = pt_owner_name(b, i);

		moved += strcmp(x, y) != 0 && strcmp(x, removed) != 0;
	}
	return (double)moved / KEYS;
}

static double remove_member(enum pl_algo algo, const struct pl_member *m, uint32_t who)
{
	struct pl_member *less = calloc(N, sizeof(*less));
	struct pl_placement *a, *b;
	double moved;

	assert_non_null(less);
	memcpy(less, m, who * sizeof(*m));
	memcpy(less + who, m + who + 1, (N - who - 1) * sizeof(*m));
	a = pt_build(algo, m, N);
	b = pt_build(algo, less, N - 1);
	moved = moved_between_unchanged(a, b, m[who].name);
	pl_free(a);
	pl_free(b);
	free(less);
	return moved;
}

/* The movement class says what removing a member does to the keys of the others. */
static void test_movement(void **state)
{
	struct pl_member *m = uneven_fleet();

	(void)state;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++) {
		const struct pl_algo_info *info = pl_algo_info((enum pl_algo)a);
		double middle = remove_member((enum pl_algo)a, m, MIDDLE);
		double last = remove_member((enum pl_algo)a, m, N - 1);
		bool ok = false;

		switch (info->movement) {
		case PL_MOVES_MINIMAL:
			ok = middle == 0 && last == 0;
			break;
		case PL_MOVES_MINIMAL_LAST:
			ok = middle > 0 && last == 0;
			break;
		case PL_MOVES_NEAR_MINIMAL:
			ok = middle > 0 && middle < 0.05 && last < 0.05;
			break;
		case PL_MOVES_REPOINTED: /* some changes keep every point count (rounding) */
			ok = middle + last > 0 && middle < 0.5 && last < 0.5;
			break;
		case PL_MOVES_MOST:
			ok = middle > 0.5 && last > 0.5;
			break;
		}
		if (!ok)
			fail_msg("%s: movement class %d, moved between unchanged members %.4f "
				 "(middle removed), %.4f (last removed)",
				 info->name, info->movement, middle, last);
	}
	free(m);
}

/* moved_exact: pl_moved_fraction() answers a change of two members' weights at once. */
static void test_moved_exact(void **state)
{
	struct pl_member *m = uneven_fleet(), *w = uneven_fleet();

	(void)state;
	w[3].weight += 1;
	w[MIDDLE].weight += 2;
	for (unsigned a = 0; a < PL_ALGO_COUNT; a++) {
		const struct pl_algo_info *info = pl_algo_info((enum pl_algo)a);
		struct pl_placement *p0 = pt_build((enum pl_algo)a, m, N);
		struct pl_placement *p1 = pt_build((enum pl_algo)a, w, N);
		double f = -1;
		int rc = pl_moved_fraction(p0, p1, &f);

		if (info->moved_exact) {
			assert_int_equal(rc, 0);
			assert_true(f > 0 && f <= 1);
		} else {
			assert_int_equal(rc, -ENOTSUP);
		}
		pl_free(p0);
		pl_free(p1);
	}
	free(m);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	    cmocka_unit_test(test_params),
		cmocka_unit_test(test_space_bits),  cmocka_unit_test(test_movement),
		cmocka_unit_test(test_moved_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
