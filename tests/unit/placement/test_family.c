/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement does not change with the address family: member names are what the algorithms
 * hash, so moving a fleet from IPv4 to IPv6 addresses (same names, weights and ports) moves no
 * key and changes no replica order. The one exception is `ketama`, whose libmemcached recipe
 * hashes "<host>-<i>" (or "<host>:<port>-<i>"): there every point moves with the address, as
 * it does in libmemcached itself (test_compat_ketama.c checks it bit-exact over IPv6 hosts).
 */

#include "pl_test.h"

#define FAMILY_MEMBERS	20
#define FAMILY_KEYS	20000
#define FAMILY_REPLICAS 3

/* The same fleet twice: n0..n19 with weights 1..3, ports 11211 or 11300, at 198.18.1.x or at
 * 2001:2::1:x (RFC 5952 text, as the nodes file and the state file store it). */
static void fleets(struct pl_member v4[FAMILY_MEMBERS], struct pl_member v6[FAMILY_MEMBERS])
{
	char text[512];
	struct pl_member *m;
	uint32_t n, len = 0;
	char err[128];

	for (uint32_t i = 0; i < FAMILY_MEMBERS; i++) {
		memset(&v4[i], 0, sizeof(v4[i]));
		snprintf(v4[i].name, sizeof(v4[i].name), "n%u", i);
		snprintf(v4[i].addr, sizeof(v4[i].addr), "198.18.1.%u", i + 1);
		v4[i].port = (uint16_t)(i % 4 ? 11211 : 11300);
		v4[i].weight = 1 + i % 3;
		v6[i] = v4[i];
		snprintf(v6[i].addr, sizeof(v6[i].addr), "2001:2::1:%x", i + 1);
	}
	/* The IPv6 fleet is what a nodes file gives: the parser's text is the test's. */
	for (uint32_t i = 0; i < 3; i++)
		len += (uint32_t)snprintf(text + len, sizeof(text) - len,
					  "n%u [2001:0002::1:%x]:%u %u\n", i, i + 1, v6[i].port,
					  v6[i].weight);
	assert_int_equal(pl_members_parse(text, len, &m, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < n; i++)
		assert_memory_equal(&m[i], &v6[i], sizeof(m[i]));
	free(m);
}

/* Keys (and replica sets) of @p algo whose member names differ between the two fleets. */
static uint64_t differing(enum pl_algo algo, const struct pl_member *v4, const struct pl_member *v6)
{
	struct pl_placement *a = pt_build(algo, v4, FAMILY_MEMBERS);
	struct pl_placement *b = pt_build(algo, v6, FAMILY_MEMBERS);
	uint32_t ra[FAMILY_REPLICAS], rb[FAMILY_REPLICAS];
	uint64_t moved = 0;
	char key[32];

	for (uint64_t i = 0; i < FAMILY_KEYS; i++) {
		size_t len = pt_key(i, key, sizeof(key));
		uint64_t ha = pl_key_hash(a, key, len), hb = pl_key_hash(b, key, len);
		int na = pl_replicas(a, ha, ra, FAMILY_REPLICAS);
		int nb = pl_replicas(b, hb, rb, FAMILY_REPLICAS);
		bool same = ha == hb && na == nb && na == FAMILY_REPLICAS &&
			    strcmp(pt_owner_name(a, i), pt_owner_name(b, i)) == 0;

		for (int r = 0; same && r < na; r++)
			same = strcmp(pl_member_at(a, ra[r])->name, pl_member_at(b, rb[r])->name) ==
			       0;
		moved += !same;
	}
	pl_free(a);
	pl_free(b);
	return moved;
}

static void test_family_moves_no_key(void **state)
{
	struct pl_member v4[FAMILY_MEMBERS], v6[FAMILY_MEMBERS];

	(void)state;
	fleets(v4, v6);
	for (int algo = 0; algo < PL_ALGO_COUNT; algo++) {
		uint64_t moved = differing((enum pl_algo)algo, v4, v6);

		if (algo == PL_ALGO_KETAMA) {
			/* libmemcached's recipe: the address is in every point's hash */
			if (moved < FAMILY_KEYS / 2)
				fail_msg("ketama: only %llu of %d keys moved with the addresses",
					 (unsigned long long)moved, FAMILY_KEYS);
			print_message("# ketama: %llu of %d keys change owner or replica order "
				      "from IPv4 to IPv6 addresses\n",
				      (unsigned long long)moved, FAMILY_KEYS);
			continue;
		}
		if (moved != 0)
			fail_msg("%s: %llu of %d keys (owner or replica order) changed with the "
				 "address family",
				 pl_algo_name((enum pl_algo)algo), (unsigned long long)moved,
				 FAMILY_KEYS);
	}
}

/* Under twemproxy the members' names are nutcracker's server names: an address change moves
 * nothing there either, whatever the key hash. */
static void test_twemproxy_hashes(void **state)
{
	struct pl_member v4[FAMILY_MEMBERS], v6[FAMILY_MEMBERS];
	static const enum pl_hash hashes[] = {PL_HASH_MD5, PL_HASH_FNV1A_64, PL_HASH_CRC32,
					      PL_HASH_MURMUR};

	(void)state;
	fleets(v4, v6);
	for (size_t h = 0; h < sizeof(hashes) / sizeof(hashes[0]); h++) {
		struct pl_config cfg = {.algo = PL_ALGO_TWEMPROXY, .key_hash = hashes[h]};
		struct pl_placement *a = pl_build(&cfg, v4, FAMILY_MEMBERS);
		struct pl_placement *b = pl_build(&cfg, v6, FAMILY_MEMBERS);

		assert_non_null(a);
		assert_non_null(b);
		assert_true(pt_moved(a, b, FAMILY_KEYS, NULL) == 0.0);
		pl_free(a);
		pl_free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_moves_no_key),
		cmocka_unit_test(test_twemproxy_hashes),
	};

	return cmocka_run_group_tests_name("family", tests, NULL, NULL);
}
