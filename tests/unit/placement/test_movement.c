/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Movement when the fleet changes: for the minimal algorithms only the changed member's keys
 * move (ring and rendezvous for any member; jump for the last member, its documented case);
 * maglev stays within its near-minimal bound; modulo moves almost everything (the reason the
 * others exist). The exact moved fraction (arcs, tables, closed forms) agrees with sampling.
 */
#include <errno.h>
#include <math.h>

#include "pl_test.h"

#define N	100
#define KEYS	100000
#define SAMPLES 200000

enum change { ADD, REMOVE, REWEIGHT_UP, REWEIGHT_DOWN, DRAIN };

/* The fleet after @p c applied to member @p who of node0..node{N-1}; returns its size. */
static uint32_t changed_fleet(struct pl_member *m, enum change c, uint32_t who)
{
	switch (c) {
	case ADD:
		snprintf(m[N].name, sizeof(m[N].name), "node%u", N);
		snprintf(m[N].addr, sizeof(m[N].addr), "198.18.2.1");
		m[N].port = 11211;
		m[N].weight = 1;
		return N + 1;
	case REMOVE:
		m[who] = m[N - 1]; /* the list's order changes too: placement must not care */
		return N - 1;
	case REWEIGHT_UP:
		m[who].weight = 3;
		return N;
	case REWEIGHT_DOWN:
		m[who].weight = 1;
		return N;
	case DRAIN:
		m[who].weight = 0;
		return N;
	}
	return N;
}

static void check_minimal(enum pl_algo algo, enum change c, uint32_t who)
{
	struct pl_member *a = pt_fleet(N), *b = pt_fleet(N);
	struct pl_placement *pa, *pb;
	char changed[PL_NAME_MAX + 1];
	uint32_t nb;
	double moved, exact, expect;

	if (c == REWEIGHT_DOWN)
		a[who].weight = 3;
	else if (c == ADD)
		who = N;
	memcpy(b, a, N * sizeof(*a));
	nb = changed_fleet(b, c, who);
	snprintf(changed, sizeof(changed), "node%u", who);
	pa = pt_build(algo, a, N);
	pb = pt_build(algo, b, nb);
	moved = pt_moved(pa, pb, KEYS, changed);
	/* The changed member's share before or after: what had to move. */
	expect = c == ADD ? 1.0 / (N + 1) : c == REMOVE || c == DRAIN ? 1.0 / N : 2.0 / (N + 2);
	if (moved < expect * 0.5 || moved > expect * 1.6)
		fail_msg("%s change %d: %.4f moved, about %.4f expected", pl_algo_name(algo), c,
			 moved, expect);
	assert_int_equal(pl_moved_fraction(pa, pb, &exact), 0);
	assert_true(fabs(exact - moved) < 5 * sqrt(moved / KEYS) + 1e-4);
	pl_free(pa);
	pl_free(pb);
	free(a);
	free(b);
}

static void test_ring_minimal(void **state)
{
	(void)state;
	for (int c = ADD; c <= DRAIN; c++) {
		check_minimal(PL_ALGO_RING, (enum change)c, 0);
		check_minimal(PL_ALGO_RING, (enum change)c, 37);
	}
}

static void test_rendezvous_minimal(void **state)
{
	(void)state;
	for (int c = ADD; c <= DRAIN; c++) {
		check_minimal(PL_ALGO_RENDEZVOUS, (enum change)c, 0);
		check_minimal(PL_ALGO_RENDEZVOUS, (enum change)c, 61);
	}
}

/* Jump is minimal when the last member is added, removed or reweighted (see pl_algo.c). */
static void test_jump_minimal_last(void **state)
{
	(void)state;
	check_minimal(PL_ALGO_JUMP, ADD, 0);
	check_minimal(PL_ALGO_JUMP, REMOVE, N - 1);
	check_minimal(PL_ALGO_JUMP, REWEIGHT_UP, N - 1);
	check_minimal(PL_ALGO_JUMP, REWEIGHT_DOWN, N - 1);
	check_minimal(PL_ALGO_JUMP, DRAIN, N - 1);
}

/*
 * Maglev is near-minimal: its table is refilled, so a few entries change hands between
 * members that stayed. Bound asserted: at most 2x the minimal share moves, and at most 2%
 * of the keys move between two members that stayed (measured: ~1% at N = 100, M = 65537).
 */
static void test_maglev_near_minimal(void **state)
{
	const enum change changes[] = {ADD, REMOVE, DRAIN, REWEIGHT_UP};

	(void)state;
	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		struct pl_member *a = pt_fleet(N), *b = pt_fleet(N);
		uint32_t who = changes[i] == ADD ? N : 17;
		uint32_t nb = changed_fleet(b, changes[i], 17);
		struct pl_placement *pa = pt_build(PL_ALGO_MAGLEV, a, N);
		struct pl_placement *pb = pt_build(PL_ALGO_MAGLEV, b, nb);
		char changed[PL_NAME_MAX + 1];
		uint64_t moved = 0, between = 0;
		double minimal = changes[i] == ADD	     ? 1.0 / (N + 1)
				 : changes[i] == REWEIGHT_UP ? 2.0 / (N + 2)
							     : 1.0 / N;

		snprintf(changed, sizeof(changed), "node%u", who);
		for (uint64_t k = 0; k < KEYS; k++) {
			const char *oa = pt_owner_name(pa, k), *ob = pt_owner_name(pb, k);

			if (strcmp(oa, ob) == 0)
				continue;
			moved++;
			between += strcmp(oa, changed) != 0 && strcmp(ob, changed) != 0;
		}
		printf("# maglev change %d: %.4f moved (minimal %.4f), %.4f between survivors\n",
		       changes[i], (double)moved / KEYS, minimal, (double)between / KEYS);
		assert_true((double)moved / KEYS <= 2 * minimal);
		assert_true((double)between / KEYS <= 0.02);
		pl_free(pa);
		pl_free(pb);
		free(a);
		free(b);
	}
}

/* 10 -> 11 members: modulo moves 10/11 of the keys, ring about 1/11 (the planner's example). */
static void test_modulo_reference(void **state)
{
	struct pl_member *a = pt_fleet(10), *b = pt_fleet(11);
	struct pl_placement *ma = pt_build(PL_ALGO_MODULO, a, 10);
	struct pl_placement *mb = pt_build(PL_ALGO_MODULO, b, 11);
	double moved = pt_moved(ma, mb, KEYS, NULL), exact;

	(void)state;
	assert_true(moved > 0.90 && moved < 0.915);
	assert_int_equal(pl_moved_fraction(ma, mb, &exact), 0);
	assert_true(fabs(exact - 10.0 / 11.0) < 1e-9);
	pl_free(ma);
	pl_free(mb);
	free(a);
	free(b);
}

/* Sampled over uniform hashes of the algorithm's key space: the exact fraction's definition. */
static double sampled_moved(const struct pl_placement *a, const struct pl_placement *b,
			    uint64_t mask)
{
	uint64_t s = 1234, moved = 0;

	for (int i = 0; i < SAMPLES; i++) {
		uint64_t h = pt_rand(&s) & mask;
		int32_t oa = pl_lookup_hash(a, h), ob = pl_lookup_hash(b, h);
		const char *na = oa < 0 ? "" : pl_member_at(a, (uint32_t)oa)->name;
		const char *nb = ob < 0 ? "" : pl_member_at(b, (uint32_t)ob)->name;

		moved += strcmp(na, nb) != 0;
	}
	return (double)moved / SAMPLES;
}

static void check_exact_vs_sampled(enum pl_algo algo, const struct pl_member *a, uint32_t na,
				   const struct pl_member *b, uint32_t nb)
{
	uint64_t mask =
		algo == PL_ALGO_KETAMA || algo == PL_ALGO_TWEMPROXY ? UINT32_MAX : UINT64_MAX;
	struct pl_placement *pa = pt_build(algo, a, na), *pb = pt_build(algo, b, nb);
	double exact, back, sampled = sampled_moved(pa, pb, mask);
	double tol = 5 * sqrt(sampled * (1 - sampled) / SAMPLES) + 2e-4;

	assert_int_equal(pl_moved_fraction(pa, pb, &exact), 0);
	assert_int_equal(pl_moved_fraction(pb, pa, &back), 0);
	if (fabs(exact - sampled) > tol || fabs(exact - back) > 1e-12)
		fail_msg("%s: exact %.6f (back %.6f), sampled %.6f", pl_algo_name(algo), exact,
			 back, sampled);
	assert_int_equal(pl_moved_fraction(pa, pa, &exact), 0);
	assert_true(exact == 0.0);
	pl_free(pa);
	pl_free(pb);
}

static void test_exact_moved_fraction(void **state)
{
	const enum pl_algo algos[] = {PL_ALGO_RING,	 PL_ALGO_KETAMA, PL_ALGO_TWEMPROXY,
				      PL_ALGO_JUMP,	 PL_ALGO_MAGLEV, PL_ALGO_MODULO,
				      PL_ALGO_RENDEZVOUS};
	struct pl_member *a = pt_fleet(40), *b = pt_fleet(41);

	(void)state;
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
		enum pl_algo al = algos[i];

		check_exact_vs_sampled(al, a, 40, b, 41); /* add: b has node40 */
		check_exact_vs_sampled(al, a, 40, b, 39); /* remove the last */
		b[5].weight = 4;			  /* reweight */
		check_exact_vs_sampled(al, a, 40, b, 40);
		b[5].weight = 1;
		if (al != PL_ALGO_RENDEZVOUS) {			  /* several changes at once */
			check_exact_vs_sampled(al, a, 10, b, 40); /* ten to forty */
			b[3].weight = 0;
			b[9].weight = 2;
			check_exact_vs_sampled(al, a, 40, b, 40);
			b[3].weight = 1;
			b[9].weight = 1;
		}
	}
	free(a);
	free(b);
}

/* Maglev tables of different sizes: the moved fraction overlaps their entries' hash ranges. */
static void test_maglev_table_sizes(void **state)
{
	struct pl_member *m = pt_fleet(30);
	struct pl_config c1 = {.algo = PL_ALGO_MAGLEV}, c2 = {.algo = PL_ALGO_MAGLEV};
	struct pl_placement *a, *b;
	double exact, sampled;

	(void)state;
	c2.maglev_size = 251;
	a = pl_build(&c1, m, 30);
	b = pl_build(&c2, m, 29);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(pl_point_count(b), 251);
	sampled = sampled_moved(a, b, UINT64_MAX);
	assert_int_equal(pl_moved_fraction(a, b, &exact), 0);
	assert_true(fabs(exact - sampled) < 5 * sqrt(sampled / SAMPLES) + 2e-4);
	pl_free(a);
	pl_free(b);
	free(m);
}

/* For a minimal algorithm the moved fraction on adding a member is exactly its new share. */
static void test_moved_equals_new_share(void **state)
{
	struct pl_member *m = pt_fleet(N);
	struct pl_placement *a = pt_build(PL_ALGO_RING, m, N - 1),
			    *b = pt_build(PL_ALGO_RING, m, N);
	double shares[N], moved;

	(void)state;
	assert_int_equal(pl_shares(b, shares), 0);
	assert_int_equal(pl_moved_fraction(a, b, &moved), 0);
	assert_true(fabs(moved - shares[N - 1]) < 1e-12);
	pl_free(a);
	pl_free(b);
	free(m);
}

static void test_moved_fraction_errors(void **state)
{
	struct pl_member *m = pt_fleet(10), *m2 = pt_fleet(10);
	struct pl_placement *r = pt_build(PL_ALGO_RING, m, 10), *j = pt_build(PL_ALGO_JUMP, m, 10);
	struct pl_placement *v1 = pt_build(PL_ALGO_RENDEZVOUS, m, 10), *v2;
	struct pl_config tagged = {.hash_tag = {'{', '}'}};
	struct pl_placement *rt = pl_build(&tagged, m, 10);
	double f;

	(void)state;
	assert_int_equal(pl_moved_fraction(r, j, &f), -EINVAL);	 /* different algorithms */
	assert_int_equal(pl_moved_fraction(r, rt, &f), -EINVAL); /* different key hashing */
	assert_int_equal(pl_moved_fraction(r, r, NULL), -EINVAL);
	m2[1].weight = 2;
	m2[2].weight = 3;
	v2 = pt_build(PL_ALGO_RENDEZVOUS, m2, 10);
	assert_int_equal(pl_moved_fraction(v1, v2, &f), -ENOTSUP); /* two weights changed */
	pl_free(r);
	pl_free(j);
	pl_free(v1);
	pl_free(v2);
	pl_free(rt);
	free(m);
	free(m2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_minimal),
		cmocka_unit_test(test_rendezvous_minimal),
		cmocka_unit_test(test_jump_minimal_last),
		cmocka_unit_test(test_maglev_near_minimal),
		cmocka_unit_test(test_modulo_reference),
		cmocka_unit_test(test_exact_moved_fraction),
		cmocka_unit_test(test_maglev_table_sizes),
		cmocka_unit_test(test_moved_equals_new_share),
		cmocka_unit_test(test_moved_fraction_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
