/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Walks from a key: replica sets are distinct members with weight, owner first, in the
 * algorithm's preference order (for ring and rendezvous: exactly the failover order, the
 * owner after the earlier replicas are removed); the bounded-load walk never places a key on
 * a member at or above ceil((1 + eps) * average) and picks the first one below it in replica
 * order.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>

#include "pl_test.h"

static const enum pl_algo all_algos[] = {PL_ALGO_RING,	    PL_ALGO_KETAMA, PL_ALGO_TWEMPROXY,
					 PL_ALGO_JUMP,	    PL_ALGO_MAGLEV, PL_ALGO_MODULO,
					 PL_ALGO_RENDEZVOUS};
#define N_ALGOS (sizeof(all_algos) / sizeof(all_algos[0]))
#define N	20

static struct pl_member *walk_fleet(void)
{
	struct pl_member *m = pt_fleet(N);

	m[3].weight = 0;
	m[7].weight = 3;
	return m;
}

static void test_replicas_distinct(void **state)
{
	struct pl_member *m = walk_fleet();
	uint32_t out[N + 5];

	(void)state;
	for (size_t a = 0; a < N_ALGOS; a++) {
		struct pl_placement *p = pt_build(all_algos[a], m, N);
		uint64_t s = 5;

		for (int i = 0; i < 5000; i++) {
			uint64_t h = pl_key_hash(p, &s, sizeof(s));
			int want = i % 2 ? 5 : N + 5;
			int got = pl_replicas(p, h, out, (uint32_t)want);
			bool seen[N] = {false};

			pt_rand(&s);
			assert_int_equal(got, want == 5 ? 5 : N - 1);
			assert_int_equal(out[0], pl_lookup_hash(p, h));
			for (int k = 0; k < got; k++) {
				assert_true(out[k] < N);
				assert_int_not_equal(out[k], 3); /* drained */
				assert_false(seen[out[k]]);
				seen[out[k]] = true;
			}
		}
		assert_int_equal(pl_replicas(p, 1, out, 0), 0);
		pl_free(p);
	}
	free(m);
}

/* Removing the owner hands its keys to replica 1, removing that one to replica 2, ... */
static void test_replicas_are_failover_order(void **state)
{
	const enum pl_algo algos[] = {PL_ALGO_RING, PL_ALGO_RENDEZVOUS};

	(void)state;
	for (size_t a = 0; a < 2; a++) {
		struct pl_member *m = walk_fleet();
		struct pl_placement *p = pt_build(algos[a], m, N);

		for (uint64_t key = 0; key < 300; key++) {
			struct pl_member *left = walk_fleet();
			uint64_t h = pl_key_hash(p, &key, sizeof(key));
			uint32_t out[4];

			assert_int_equal(pl_replicas(p, h, out, 4), 4);
			for (int k = 1; k < 4; k++) {
				struct pl_placement *q;

				left[out[k - 1]].weight = 0; /* drain the previous replica */
				q = pt_build(algos[a], left, N);
				assert_int_equal(pl_lookup_hash(q, h), out[k]);
				pl_free(q);
			}
			free(left);
		}
		pl_free(p);
		free(m);
	}
}

static void test_bounded_cap_holds(void **state)
{
	struct pl_member *m = walk_fleet();
	const double eps = 0.25;

	(void)state;
	for (size_t a = 0; a < N_ALGOS; a++) {
		struct pl_placement *p = pt_build(all_algos[a], m, N);
		uint64_t loads[N] = {0}, placed = 0, away = 0;

		for (uint64_t key = 0; key < 50000; key++) {
			uint64_t h = pl_key_hash(p, &key, sizeof(key));
			int32_t o = pl_lookup_bounded(p, h, loads, eps);
			double cap = ceil((1 + eps) * (double)(placed + 1) / (N - 1));
			uint32_t order[N];
			int cnt = pl_replicas(p, h, order, N);

			assert_true(o >= 0 && o < N && o != 3);
			assert_true((double)loads[o] < cap);
			/* The first member in replica order that is below the cap. */
			for (int k = 0; k < cnt; k++) {
				if ((double)loads[order[k]] < cap) {
					assert_int_equal(o, order[k]);
					break;
				}
			}
			away += o != pl_lookup_hash(p, h);
			loads[o]++;
			placed++;
		}
		for (int i = 0; i < N; i++)
			assert_true((double)loads[i] <= ceil((1 + eps) * (double)placed / (N - 1)));
		/* The heavy member (weight 3) pushes keys away: the walk did real work. */
		assert_true(away > 0);
		pl_free(p);
	}
	free(m);
}

static void test_bounded_no_load(void **state)
{
	struct pl_member *m = walk_fleet();
	uint64_t loads[N] = {0};

	(void)state;
	for (size_t a = 0; a < N_ALGOS; a++) {
		struct pl_placement *p = pt_build(all_algos[a], m, N);

		for (uint64_t s = 9, i = 0; i < 2000; i++) {
			uint64_t h = pt_rand(&s);

			assert_int_equal(pl_lookup_bounded(p, h, loads, 0), pl_lookup_hash(p, h));
		}
		assert_int_equal(pl_lookup_bounded(p, 1, loads, -0.1), -EINVAL);
		assert_int_equal(pl_lookup_bounded(p, 1, loads, NAN), -EINVAL);
		assert_int_equal(pl_lookup_bounded(p, 1, NULL, 0.1), -EINVAL);
		pl_free(p);
	}
	free(m);
}

/* Equal weights take rendezvous's fast path in lookups; the walks use the general scoring. */
static void test_rendezvous_equal_weights(void **state)
{
	struct pl_member *m = pt_fleet(50);
	struct pl_placement *p = pt_build(PL_ALGO_RENDEZVOUS, m, 50);
	uint64_t loads[50] = {0}, s = 3;
	uint32_t out[1];

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t h = pt_rand(&s);
		int32_t o = pl_lookup_hash(p, h);

		assert_int_equal(pl_replicas(p, h, out, 1), 1);
		assert_int_equal(out[0], o);
		if (i % 16 == 0)
			assert_int_equal(pl_lookup_bounded(p, h, loads, 0.5), o);
	}
	pl_free(p);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replicas_distinct),
		cmocka_unit_test(test_replicas_are_failover_order),
		cmocka_unit_test(test_bounded_cap_holds),
		cmocka_unit_test(test_bounded_no_load),
		cmocka_unit_test(test_rendezvous_equal_weights),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
