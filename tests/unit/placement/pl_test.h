/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_TEST_PL_TEST_H
#define RINGWAY_TEST_PL_TEST_H

/*
 * Helpers shared by the placement core tests: fleets, keys, a deterministic generator and
 * key-by-key owner comparison between two placements.
 */

#include <errno.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "placement.h"

static inline uint64_t pt_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* node0 .. node{n-1} at 198.18.1.x:11211, weight 1 (the planner's --nodes N fleet). */
static inline struct pl_member *pt_fleet(uint32_t n)
{
	struct pl_member *m = calloc(n + 1, sizeof(*m)); /* room for one more member */

	assert_non_null(m);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "node%u", i);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.18.%u.%u", 1 + i / 250, 1 + i % 250);
		m[i].port = 11211;
		m[i].weight = 1;
	}
	return m;
}

static inline struct pl_placement *pt_build(enum pl_algo algo, const struct pl_member *m,
					    uint32_t n)
{
	struct pl_config cfg = {.algo = algo};
	struct pl_placement *p = pl_build(&cfg, m, n);

	if (p == NULL)
		fail_msg("building %s over %u members: %s", pl_algo_name(algo), n, strerror(errno));
	return p;
}

/* Key i as the planner's --generate makes it: "user:i". */
static inline size_t pt_key(uint64_t i, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "user:%llu", (unsigned long long)i);
}

/* Name of the owner of key i, or "" when nobody owns it. */
static inline const char *pt_owner_name(const struct pl_placement *p, uint64_t i)
{
	char key[32];
	size_t len = pt_key(i, key, sizeof(key));
	int32_t o = pl_lookup(p, key, len);

	return o < 0 ? "" : pl_member_at(p, (uint32_t)o)->name;
}

/*
 * Move keys 0 .. keys-1 from @p a to @p b. Every key that moves must move from or to the
 * member named @p changed (NULL: no constraint). Returns the fraction that moved.
 */
static inline double pt_moved(const struct pl_placement *a, const struct pl_placement *b,
			      uint64_t keys, const char *changed)
{
	uint64_t moved = 0;

	for (uint64_t i = 0; i < keys; i++) {
		const char *oa = pt_owner_name(a, i), *ob = pt_owner_name(b, i);

		if (strcmp(oa, ob) == 0)
			continue;
		moved++;
		if (changed != NULL && strcmp(oa, changed) != 0 && strcmp(ob, changed) != 0)
			fail_msg("key user:%llu moved %s -> %s, neither is %s",
				 (unsigned long long)i, oa, ob, changed);
	}
	return (double)moved / (double)keys;
}

#endif /* RINGWAY_TEST_PL_TEST_H */
