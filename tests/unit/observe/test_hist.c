/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log-linear histogram: bucket bounds that tile the integers, quantiles within the stated
 * error bound (1 / (2 * OBS_SUB)) of the exact order statistics on known distributions,
 * per-worker instances merged equal to one instance, windows, saturation.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "observe.h"

#define BOUND (1.0 / (2.0 * OBS_SUB))

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

static double unit(void)
{
	return (double)(rng() >> 11) / 9007199254740992.0; /* [0, 1) */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_buckets_tile(void **state)
{
	(void)state;
	assert_int_equal(obs_bucket_lower(0), 0);
	for (uint32_t b = 0; b < OBS_BUCKETS - 1; b++) {
		uint64_t lo = obs_bucket_lower(b), hi = obs_bucket_upper(b);

		assert_true(lo < hi);
		assert_int_equal(obs_bucket(lo), b);
		assert_int_equal(obs_bucket(hi - 1), b);
		assert_int_equal(obs_bucket_lower(b + 1), hi); /* no gap, no overlap */
		if (lo >= 2 * OBS_SUB)
			assert_true((double)(hi - lo) / (double)lo <= 1.0 / OBS_SUB);
		else
			assert_int_equal(hi - lo, 1);
	}
	assert_int_equal(obs_bucket_lower(OBS_BUCKETS - 1), UINT64_C(1) << OBS_MAX_BITS);
	assert_int_equal(obs_bucket((UINT64_C(1) << OBS_MAX_BITS) - 1), OBS_BUCKETS - 2);
	assert_int_equal(obs_bucket(UINT64_C(1) << OBS_MAX_BITS), OBS_BUCKETS - 1);
	assert_int_equal(obs_bucket(UINT64_MAX), OBS_BUCKETS - 1);
}

/* Every quantile the router reports, against the exact order statistic of rank ceil(q n). */
static void check_quantiles(const struct obs_hist *h, uint64_t *v, size_t n)
{
	static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0, 0.001};

	qsort(v, n, sizeof(*v), cmp_u64);
	assert_int_equal(obs_hist_count(h), n);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		size_t rank = (size_t)ceil(qs[i] * (double)n);
		double exact = (double)v[rank - 1], est = obs_hist_quantile(h, qs[i]);

		if (exact < 2 * OBS_SUB)
			assert_true(est == exact);
		else
			assert_true(fabs(est - exact) <= BOUND * exact);
	}
}

static void run_distribution(uint64_t (*gen)(void), size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v)), sum = 0;
	struct obs_hist *h = calloc(1, sizeof(*h));

	assert_non_null(v);
	assert_non_null(h);
	for (size_t i = 0; i < n; i++) {
		v[i] = gen();
		sum += v[i];
		obs_hist_add(h, v[i], 1);
	}
	assert_int_equal(h->sum, sum);
	check_quantiles(h, v, n);
	free(v);
	free(h);
}

static uint64_t gen_uniform(void)
{
	return 1 + rng() % 2000000; /* 1 ns .. 2 ms */
}

static uint64_t gen_exponential(void)
{
	return (uint64_t)(-log(1.0 - unit()) * 50000.0); /* mean 50 us */
}

/* A node RTT-like shape: log-normal body around 30 us with a 1 % tail 20x slower. */
static uint64_t gen_lognormal_tail(void)
{
	double z = sqrt(-2.0 * log(1.0 - unit())) * cos(2.0 * M_PI * unit());
	double v = exp(log(30000.0) + 0.4 * z);

	return (uint64_t)(unit() < 0.01 ? 20.0 * v : v);
}

static uint64_t gen_small(void)
{
	return rng() % 100; /* the exact region and the first octaves */
}

static void test_quantiles_uniform(void **state)
{
	(void)state;
	run_distribution(gen_uniform, 200000);
}

static void test_quantiles_exponential(void **state)
{
	(void)state;
	run_distribution(gen_exponential, 200000);
}

static void test_quantiles_lognormal_tail(void **state)
{
	(void)state;
	run_distribution(gen_lognormal_tail, 200000);
}

static void test_quantiles_small(void **state)
{
	(void)state;
	run_distribution(gen_small, 10000);
}

/* A single value: every quantile is that value within the bound (it is the bucket's only
 * member, but the estimate is the bucket midpoint). */
static void test_quantile_single_and_empty(void **state)
{
	struct obs_hist h = {0};

	(void)state;
	assert_true(obs_hist_quantile(&h, 0.5) == 0.0);
	obs_hist_add(&h, 123456, 1);
	assert_true(fabs(obs_hist_quantile(&h, 0.99) - 123456.0) <= BOUND * 123456.0);
	assert_true(obs_hist_quantile(&h, 0.0) == 0.0);
	assert_true(obs_hist_quantile(&h, 1.5) == 0.0);
}

/* Four workers' instances merged equal one instance that saw every value. */
static void test_merge(void **state)
{
	struct obs_hist *w = calloc(4, sizeof(*w)), *one = calloc(1, sizeof(*one)),
			*all = calloc(1, sizeof(*all));

	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint64_t v = gen_lognormal_tail();

		obs_hist_add(&w[rng() % 4], v, 1);
		obs_hist_add(one, v, 1);
	}
	for (int k = 0; k < 4; k++)
		obs_hist_merge(all, &w[k]);
	assert_memory_equal(all, one, sizeof(*one));
	assert_true(obs_hist_quantile(all, 0.99) == obs_hist_quantile(one, 0.99));
	free(w);
	free(one);
	free(all);
}

/* A window: the later copy minus the earlier one holds exactly the values in between. */
static void test_window(void **state)
{
	struct obs_hist *h = calloc(1, sizeof(*h)), *snap = calloc(1, sizeof(*snap)),
			*win = calloc(1, sizeof(*win));

	(void)state;
	for (int i = 0; i < 1000; i++)
		obs_hist_add(h, 1000, 1); /* before the window: 1 us */
	*snap = *h;
	for (int i = 0; i < 1000; i++)
		obs_hist_add(h, 1000000, 1); /* in the window: 1 ms */
	obs_hist_sub(win, h, snap);
	assert_int_equal(obs_hist_count(win), 1000);
	assert_int_equal(win->sum, 1000u * 1000000u);
	assert_true(fabs(obs_hist_quantile(win, 0.5) - 1e6) <= BOUND * 1e6);
	/* Not an earlier copy: shrunk buckets count 0, never wrap. */
	obs_hist_sub(win, snap, h);
	assert_int_equal(obs_hist_count(win), 0);
	free(h);
	free(snap);
	free(win);
}

/* A bucket-major set of members: each member read back equals a histogram of its own. */
static void test_set(void **state)
{
	const uint32_t n = 37;
	struct obs_hist *own = calloc(n, sizeof(*own)), *got = calloc(1, sizeof(*got));
	void *mem = calloc(1, obs_set_bytes(n));
	struct obs_hist_set set;

	(void)state;
	assert_non_null(own);
	assert_non_null(got);
	assert_non_null(mem);
	obs_set_init(&set, mem, n);
	for (int k = 0; k < 200000; k++) {
		uint32_t i = (uint32_t)(rng() % n);
		uint64_t v = i == 0 ? (UINT64_C(1) << 40) : gen_lognormal_tail() * (i + 1);

		obs_set_add(&set, i, v);
		obs_hist_add(&own[i], v, 1);
	}
	for (uint32_t i = 0; i < n; i++) {
		memset(got, 0, sizeof(*got));
		obs_set_merge(got, &set, i);
		assert_memory_equal(got, &own[i], sizeof(*got));
	}
	free(own);
	free(got);
	free(mem);
}

static void test_weighted_and_saturated(void **state)
{
	struct obs_hist h = {0};

	(void)state;
	obs_hist_add(&h, 5000, 31); /* one burst of 31 packets */
	assert_int_equal(obs_hist_count(&h), 31);
	assert_int_equal(h.sum, 31 * 5000);
	assert_int_equal(obs_hist_count_le(&h, obs_bucket_lower(obs_bucket(5000)) - 1), 0);
	assert_int_equal(obs_hist_count_le(&h, obs_bucket_upper(obs_bucket(5000)) - 1), 31);
	obs_hist_add(&h, UINT64_C(1) << 40, 1);
	assert_int_equal(obs_hist_saturated(&h), 1);
	assert_true(obs_hist_quantile(&h, 1.0) == (double)(UINT64_C(1) << OBS_MAX_BITS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_tile),
		cmocka_unit_test(test_quantiles_uniform),
		cmocka_unit_test(test_quantiles_exponential),
		cmocka_unit_test(test_quantiles_lognormal_tail),
		cmocka_unit_test(test_quantiles_small),
		cmocka_unit_test(test_quantile_single_and_empty),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_weighted_and_saturated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
