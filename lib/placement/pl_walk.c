/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Walks: replica sets and bounded-load owners.
 *
 * The preference order of every kind but rendezvous is a walk over a cyclic sequence of
 * owners: the continuum's points clockwise from the key's point; jump's and modulo's buckets
 * from the key's bucket upwards; maglev's table entries from the key's entry upwards. A kind
 * says where its walk starts (walk_start); rendezvous walks in score order instead.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "placement.h"
#include "placement_priv.h"

/* The sequence: the points of a continuum, else the slots (none when nobody has weight). */
static uint64_t seq_len(const struct pl_placement *p)
{
	if (p->points != NULL)
		return p->npoints;
	return p->weighted ? p->nslots : 0;
}

static inline uint32_t seq_owner(const struct pl_placement *p, uint64_t i)
{
	return p->points != NULL ? p->points[i].member : p->slots[i];
}

uint64_t pl_continuum_walk_start(const struct pl_placement *p, uint64_t h)
{
	size_t i = pl_continuum_lower_bound(p, h);

	return i == p->npoints ? 0 : i;
}

uint64_t pl_jump_walk_start(const struct pl_placement *p, uint64_t h)
{
	return pl_jump_bucket(h, p->nslots);
}

uint64_t pl_modulo_walk_start(const struct pl_placement *p, uint64_t h)
{
	return h % p->nslots;
}

uint64_t pl_maglev_walk_start(const struct pl_placement *p, uint64_t h)
{
	return pl_fastrange(h, p->nslots);
}

int pl_rendezvous_replicas(const struct pl_placement *p, uint64_t h, uint32_t *out, uint32_t r)
{
	const struct pl_rv_entry *prev = NULL;
	uint32_t k = 0;

	while (k < r) {
		prev = pl_rv_best(p, h, prev, NULL, 0);
		if (prev == NULL)
			break;
		out[k++] = prev->member;
	}
	return (int)k;
}

int32_t pl_rendezvous_bounded(const struct pl_placement *p, uint64_t h, const uint64_t *loads,
			      double cap)
{
	const struct pl_rv_entry *best = pl_rv_best(p, h, NULL, loads, cap);

	return best == NULL ? -ENOENT : (int32_t)best->member;
}

int pl_replicas(const struct pl_placement *p, uint64_t hash, uint32_t *out, uint32_t r)
{
	const struct pl_kind_ops *ops = &pl_kinds[p->kind];
	uint64_t seen[PL_MEMBERS_MAX / 64];
	uint64_t len = seq_len(p), start;
	uint32_t want = r < p->weighted ? r : p->weighted, k = 0;
	bool bitmap = want > 16;

	if (out == NULL && r > 0)
		return -EINVAL;
	if (ops->replicas != NULL)
		return ops->replicas(p, hash, out, want);
	if (want == 0 || len == 0)
		return 0;
	if (bitmap)
		memset(seen, 0, ((p->n + 63) / 64) * sizeof(seen[0]));
	start = ops->walk_start(p, hash);
	for (uint64_t s = 0; s < len && k < want; s++) {
		uint64_t i = start + s < len ? start + s : start + s - len;
		uint32_t o = seq_owner(p, i);
		bool dup = false;

		if (bitmap) {
			dup = seen[o / 64] >> (o % 64) & 1;
			seen[o / 64] |= UINT64_C(1) << (o % 64);
		} else {
			for (uint32_t j = 0; j < k && !dup; j++)
				dup = out[j] == o;
		}
		if (!dup)
			out[k++] = o;
	}
	return (int)k;
}

int32_t pl_lookup_bounded(const struct pl_placement *p, uint64_t hash, const uint64_t *loads,
			  double eps)
{
	const struct pl_kind_ops *ops = &pl_kinds[p->kind];
	uint64_t len = seq_len(p), start;
	double sum = 1.0, cap;
	int32_t o;

	if (!(eps >= 0) || loads == NULL)
		return -EINVAL;
	if (p->weighted == 0)
		return -ENOENT;
	for (uint32_t i = 0; i < p->n; i++)
		sum += (double)loads[i];
	cap = ceil((1.0 + eps) * sum / p->weighted);
	if (ops->bounded != NULL) {
		o = ops->bounded(p, hash, loads, cap);
		return o >= 0 ? o : pl_lookup_hash(p, hash);
	}
	if (len == 0)
		return -ENOENT;
	start = ops->walk_start(p, hash);
	for (uint64_t s = 0; s < len; s++) {
		uint64_t i = start + s < len ? start + s : start + s - len;

		o = (int32_t)seq_owner(p, i);
		if ((double)loads[o] < cap)
			return o;
	}
	/* Unreachable: some weighted member is below the average, hence below the cap. */
	return pl_lookup_hash(p, hash);
}
