/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shares of the key-hash space and moved fractions, exactly: from the owner function as
 * segments (continuum arcs, maglev entries), or from the kind's closed form (jump, modulo,
 * rendezvous; shares by weight).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "placement_priv.h"

static uint64_t space_max(const struct pl_placement *p)
{
	return p->space_bits == 64 ? UINT64_MAX : (UINT64_C(1) << p->space_bits) - 1;
}

/* First hash value that falls in maglev entry i: ceil(i * 2^64 / size). */
static pl_u128 maglev_entry_start(uint64_t i, uint32_t size)
{
	return (((pl_u128)i << 64) + size - 1) / size;
}

/* The whole space as one unowned segment, for a placement where nobody has weight. */
static bool seg_unowned(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner)
{
	*end = it->last;
	*owner = PL_NO_MEMBER;
	return it->i++ == 0;
}

bool pl_maglev_segment(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner)
{
	const struct pl_placement *p = it->p;

	if (p->weighted == 0 || it->i >= p->nslots)
		return seg_unowned(it, end, owner);
	*end = (uint64_t)(maglev_entry_start(it->i + 1, p->nslots) - 1);
	*owner = p->slots[it->i];
	it->i++;
	return true;
}

bool pl_continuum_segment(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner)
{
	const struct pl_placement *p = it->p;

	if (p->npoints == 0)
		return seg_unowned(it, end, owner);
	if (it->i > p->npoints)
		return false;
	if (it->i < p->npoints) {
		/* Points above the key space (cannot happen for real recipes) end at its top. */
		uint64_t v = p->points[it->i].value;

		*end = v < it->last ? v : it->last;
		*owner = p->points[it->i].member;
	} else {
		*end = it->last; /* the wrap: above the last point, owned by point 0's member */
		*owner = p->points[0].member;
	}
	it->i++;
	return true;
}

static bool seg_next(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner)
{
	return pl_kinds[it->p->kind].segment(it, end, owner);
}

int pl_shares(const struct pl_placement *p, double *shares)
{
	struct pl_seg_iter it = {.p = p, .last = space_max(p)};
	double space = ldexp(1.0, (int)p->space_bits);
	uint64_t end, pos = 0;
	uint32_t owner;

	if (shares == NULL)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n; i++)
		shares[i] = 0;
	if (pl_kinds[p->kind].segment == NULL) {
		for (uint32_t i = 0; i < p->n && p->total_weight; i++)
			shares[i] = (double)p->members[i].weight / (double)p->total_weight;
		return 0;
	}
	/* pos is the first value not yet assigned; done once a segment ends at the top. */
	while (seg_next(&it, &end, &owner)) {
		if (end < pos)
			continue;
		if (owner != PL_NO_MEMBER)
			shares[owner] += ((double)(end - pos) + 1.0) / space;
		if (end == it.last)
			break;
		pos = end + 1;
	}
	return 0;
}

/* map[i]: index in @p to of @p from's member i, PL_NO_MEMBER when absent or drained there. */
static uint32_t *name_map(const struct pl_placement *from, const struct pl_placement *to)
{
	uint32_t *map = malloc(from->n * sizeof(*map));

	if (map == NULL)
		return NULL;
	for (uint32_t i = 0; i < from->n; i++) {
		int32_t j = pl_member_find(to, from->members[i].name);

		map[i] = j >= 0 && to->members[j].weight > 0 ? (uint32_t)j : PL_NO_MEMBER;
	}
	return map;
}

/* Merge the two segment lists; count the values whose owners differ (by name). */
static double moved_segments(const struct pl_placement *a, const struct pl_placement *b,
			     const uint32_t *map)
{
	struct pl_seg_iter ia = {.p = a, .last = space_max(a)}, ib = {.p = b, .last = space_max(b)};
	uint64_t ea = 0, eb = 0, pos = 0;
	uint32_t oa = PL_NO_MEMBER, ob = PL_NO_MEMBER;
	pl_u128 moved = 0;
	bool more = seg_next(&ia, &ea, &oa) && seg_next(&ib, &eb, &ob);

	while (more) {
		uint64_t e = ea < eb ? ea : eb;
		bool same = oa == PL_NO_MEMBER ? ob == PL_NO_MEMBER
					       : ob != PL_NO_MEMBER && map[oa] == ob;

		if (e >= pos) {
			if (!same)
				moved += (pl_u128)(e - pos) + 1;
			if (e == ia.last)
				break;
			pos = e + 1;
		}
		if (ea == e)
			more = seg_next(&ia, &ea, &oa);
		if (more && eb == e)
			more = seg_next(&ib, &eb, &ob);
	}
	return ldexp((double)moved, -(int)a->space_bits);
}

/*
 * Jump, closed form. With n <= n' buckets, under jump's model (bucket j+1 is taken over
 * with probability 1/(j+1), independently), a key's bucket b under n is uniform and, with
 * probability n/n', unchanged under n'; otherwise its new bucket c is any of n .. n'-1 with
 * probability 1/n' each, independent of b. Owners are compared by name.
 */
static double moved_jump(const struct pl_placement *small, const struct pl_placement *large,
			 const uint32_t *map_l2s)
{
	double n = small->nslots, nl = large->nslots, same = 0, moved_new = 0;

	for (uint32_t a = 0; a < small->nslots; a++)
		same += map_l2s[large->slots[a]] == small->slots[a];
	for (uint32_t c = small->nslots; c < large->nslots; c++) {
		uint32_t o = map_l2s[large->slots[c]];
		double held = o == PL_NO_MEMBER ? 0 : small->members[o].weight;

		moved_new += 1.0 - held / n;
	}
	return ((n - same) + moved_new) / nl;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Values in [lo, hi) congruent to r modulo g. */
static uint64_t count_congruent(uint64_t lo, uint64_t hi, uint64_t r, uint64_t g)
{
	uint64_t first = lo + (r + g - lo % g) % g;

	return first >= hi ? 0 : (hi - 1 - first) / g + 1;
}

/*
 * Modulo, closed form. With B and B' buckets, (h mod B, h mod B') runs through every pair
 * (a, c) with a == c (mod gcd) equally often over each lcm(B, B') consecutive hashes (CRT),
 * so the moved share is 1 - (pairs with the same owner) / lcm. Exact up to the partial
 * period at the top of the 2^64 space (at most lcm / 2^64).
 */
static double moved_modulo(const struct pl_placement *a, const struct pl_placement *b,
			   const uint32_t *map)
{
	uint64_t g = gcd64(a->nslots, b->nslots);
	double lcm = (double)a->nslots / (double)g * (double)b->nslots, same = 0;
	uint64_t *first = malloc(b->n * sizeof(*first));

	if (first == NULL)
		return -1;
	for (uint32_t i = 0, k = 0; i < b->n; i++) {
		first[i] = k;
		k += b->members[i].weight;
	}
	for (uint32_t s = 0; s < a->nslots; s++) {
		uint32_t o = map[a->slots[s]];

		if (o != PL_NO_MEMBER)
			same += (double)count_congruent(first[o], first[o] + b->members[o].weight,
							s % g, g);
	}
	free(first);
	return 1.0 - same / lcm;
}

/* Rendezvous: exact when at most one member's weight differs (adding and removing included):
 * only that member's scores change, so exactly the difference of its shares moves. */
int pl_rendezvous_moved(const struct pl_placement *a, const struct pl_placement *b,
			double *fraction)
{
	int32_t changed = -1;
	double sa = 0, sb = 0;

	for (uint32_t i = 0; i < a->n; i++) {
		int32_t j = pl_member_find(b, a->members[i].name);
		uint32_t wb = j >= 0 ? b->members[j].weight : 0;

		if (wb != a->members[i].weight) {
			if (changed >= 0)
				return -ENOTSUP;
			changed = (int32_t)i;
			sa = a->total_weight ? (double)a->members[i].weight / a->total_weight : 0;
			sb = b->total_weight ? (double)wb / b->total_weight : 0;
		}
	}
	for (uint32_t j = 0; j < b->n; j++) {
		if (b->members[j].weight == 0 || pl_member_find(a, b->members[j].name) >= 0)
			continue;
		if (changed >= 0)
			return -ENOTSUP;
		changed = (int32_t)j;
		sb = (double)b->members[j].weight / b->total_weight;
	}
	if (a->weighted == 0 || b->weighted == 0)
		*fraction = a->weighted == b->weighted ? 0 : 1;
	else
		*fraction = fabs(sb - sa);
	return 0;
}

static bool same_hashing(const struct pl_placement *a, const struct pl_placement *b)
{
	return a->cfg.algo == b->cfg.algo && a->cfg.key_hash == b->cfg.key_hash &&
	       memcmp(a->cfg.hash_tag, b->cfg.hash_tag, sizeof(a->cfg.hash_tag)) == 0;
}

/* Jump and modulo without buckets on one side (nobody has weight): true, and the answer. */
static bool moved_unweighted(const struct pl_placement *from, const struct pl_placement *to,
			     double *fraction)
{
	if (from->nslots != 0 && to->nslots != 0)
		return false;
	*fraction = from->nslots == to->nslots ? 0 : 1;
	return true;
}

int pl_jump_moved(const struct pl_placement *from, const struct pl_placement *to, double *fraction)
{
	const struct pl_placement *small = from, *large = to;
	uint32_t *map;

	if (moved_unweighted(from, to, fraction))
		return 0;
	if (from->nslots > to->nslots) {
		small = to;
		large = from;
	}
	map = name_map(large, small);
	if (map == NULL)
		return -ENOMEM;
	*fraction = moved_jump(small, large, map);
	free(map);
	return 0;
}

int pl_modulo_moved(const struct pl_placement *from, const struct pl_placement *to,
		    double *fraction)
{
	uint32_t *map;

	if (moved_unweighted(from, to, fraction))
		return 0;
	map = name_map(to, from);
	if (map == NULL)
		return -ENOMEM;
	*fraction = moved_modulo(to, from, map);
	free(map);
	return *fraction < 0 ? -ENOMEM : 0;
}

static int moved_by_segments(const struct pl_placement *from, const struct pl_placement *to,
			     double *fraction)
{
	uint32_t *map = name_map(to, from);

	if (map == NULL)
		return -ENOMEM;
	*fraction = moved_segments(to, from, map);
	free(map);
	return 0;
}

int pl_moved_fraction(const struct pl_placement *from, const struct pl_placement *to,
		      double *fraction)
{
	int (*moved)(const struct pl_placement *, const struct pl_placement *, double *);
	int rc;

	if (from == NULL || to == NULL || fraction == NULL || !same_hashing(from, to))
		return -EINVAL;
	moved = pl_kinds[from->kind].moved;
	rc = moved != NULL ? moved(from, to, fraction) : moved_by_segments(from, to, fraction);
	if (rc == 0)
		*fraction = *fraction < 0 ? 0 : *fraction > 1 ? 1 : *fraction;
	return rc;
}
