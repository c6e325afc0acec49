/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Balance and shares: ring with 160 vnodes spreads 1M keys over 100 members within 1.25x of
 * the mean; every algorithm's exact shares sum to 1, follow the weights, and agree with the
 * keys actually counted.
 */
#include <math.h>

#include "pl_test.h"

static const enum pl_algo all_algos[] = {PL_ALGO_RING,	    PL_ALGO_KETAMA, PL_ALGO_TWEMPROXY,
					 PL_ALGO_JUMP,	    PL_ALGO_MAGLEV, PL_ALGO_MODULO,
					 PL_ALGO_RENDEZVOUS};
#define N_ALGOS (sizeof(all_algos) / sizeof(all_algos[0]))

static void test_ring_balance(void **state)
{
	const uint32_t n = 100, keys = 1000000;
	struct pl_member *m = pt_fleet(n);
	struct pl_placement *p = pt_build(PL_ALGO_RING, m, n);
	uint64_t counts[100] = {0}, max = 0;
	char key[32];

	(void)state;
	for (uint32_t i = 0; i < keys; i++) {
		size_t len = pt_key(i, key, sizeof(key));
		int32_t o = pl_lookup(p, key, len);

		assert_true(o >= 0 && o < (int32_t)n);
		counts[o]++;
	}
	for (uint32_t i = 0; i < n; i++)
		max = counts[i] > max ? counts[i] : max;
	printf("# ring 100 x 160 vnodes, 1M keys: max/mean %.3f\n", (double)max * n / keys);
	assert_true((double)max * n / keys <= 1.25);
	pl_free(p);
	free(m);
}

/* Shares sum to 1, a drained member has none, and the keys counted follow the shares. */
static void test_shares(void **state)
{
	const uint32_t n = 30, samples = 600000;
	struct pl_member *m = pt_fleet(n);
	double shares[30], counted[30];

	(void)state;
	m[4].weight = 3;
	m[8].weight = 0;
	m[20].weight = 2;
	for (size_t a = 0; a < N_ALGOS; a++) {
		struct pl_placement *p = pt_build(all_algos[a], m, n);
		uint64_t mask = all_algos[a] == PL_ALGO_KETAMA || all_algos[a] == PL_ALGO_TWEMPROXY
					? UINT32_MAX
					: UINT64_MAX;
		uint64_t s = 77;
		double sum = 0;

		assert_int_equal(pl_shares(p, shares), 0);
		memset(counted, 0, sizeof(counted));
		for (uint32_t i = 0; i < samples; i++)
			counted[pl_lookup_hash(p, pt_rand(&s) & mask)] += 1.0 / samples;
		for (uint32_t i = 0; i < n; i++) {
			double tol = 5 * sqrt(shares[i] / samples) + 1e-4;

			sum += shares[i];
			if (fabs(shares[i] - counted[i]) > tol)
				fail_msg("%s member %u: share %.5f, counted %.5f",
					 pl_algo_name(all_algos[a]), i, shares[i], counted[i]);
		}
		assert_true(fabs(sum - 1.0) < 1e-9);
		assert_true(shares[8] == 0.0);
		/* Weight formulas are exact; the table and the arcs follow the weights closely. */
		if (all_algos[a] == PL_ALGO_JUMP || all_algos[a] == PL_ALGO_MODULO ||
		    all_algos[a] == PL_ALGO_RENDEZVOUS)
			assert_true(fabs(shares[4] - 3.0 / 32.0) < 1e-12);
		if (all_algos[a] == PL_ALGO_MAGLEV)
			assert_true(fabs(shares[4] - 3.0 / 32.0) < 0.002);
		pl_free(p);
	}
	free(m);
}

/* ring: a member of weight w gets w times the tokens, and about w times the keys. */
static void test_ring_weights(void **state)
{
	const uint32_t n = 50;
	struct pl_member *m = pt_fleet(n);
	struct pl_placement *p;
	double shares[50];

	(void)state;
	m[0].weight = 4;
	p = pt_build(PL_ALGO_RING, m, n);
	assert_int_equal(pl_point_count(p), (n + 3) * PL_DEFAULT_VNODES);
	assert_int_equal(pl_shares(p, shares), 0);
	assert_true(shares[0] > 3.0 / 53 && shares[0] < 5.0 / 53);
	pl_free(p);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_balance),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_ring_weights),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
