/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Key hash and lookups: the packet path. Every lookup is a direct switch on the kind (the
 * continuum first, by a plain branch), never a call through the algorithm table, so that the
 * compiler keeps the continuum's index lookup inline.
 *
 * - continuum: an index on the top bits of the hash gives the owner directly for most
 *   buckets and a short scan start for the rest (same answers as binary search);
 * - jump and modulo map a key to a bucket; every unit of weight is one bucket;
 * - maglev maps the 64-bit hash onto its prime-sized table by multiply-shift;
 * - rendezvous scores every member with weight (weighted HRW, logarithmic method).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

/* XXH3 compiled into this file (the same header version as the library: the same hashes):
 * the per-packet key hash then needs no call through the PLT into the library's dispatch,
 * and a short key's path inlines into pl_key_hash(). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "placement.h"
#include "placement_priv.h"

/*
 * Hash tags as twemproxy applies them: the first start character, then the first end
 * character after it; a tag between them that is not empty replaces the key. No start, no
 * end or an empty tag: the whole key.
 */
static void apply_hash_tag(const char tag[2], const uint8_t **key, size_t *len)
{
	const uint8_t *s, *e;

	if (tag[0] == '\0' || *len == 0)
		return;
	s = memchr(*key, (unsigned char)tag[0], *len);
	if (s == NULL)
		return;
	e = memchr(s + 1, (unsigned char)tag[1], *len - (size_t)(s + 1 - *key));
	if (e == NULL || e == s + 1)
		return;
	*key = s + 1;
	*len = (size_t)(e - (s + 1));
}

/* The hash of @p len bytes at @p k, after any hash tag. */
static inline uint64_t key_hash_plain(const struct pl_placement *p, const uint8_t *k, size_t len)
{
	switch (p->cfg.algo) {
	case PL_ALGO_KETAMA:
		return pl_ketama_key_hash(k, len);
	case PL_ALGO_TWEMPROXY:
		return pl_hash_bytes(p->cfg.key_hash, k, len);
	default:
		return XXH3_64bits(k, len);
	}
}

/* A configured hash tag, out of line: the untagged path (once per packet) then needs no
 * registers saved and ends in a tail call to the hash. */
static __attribute__((noinline)) uint64_t key_hash_tagged(const struct pl_placement *p,
							  const uint8_t *k, size_t len)
{
	apply_hash_tag(p->cfg.hash_tag, &k, &len);
	return key_hash_plain(p, k, len);
}

uint64_t pl_key_hash(const struct pl_placement *p, const void *key, size_t len)
{
	if (__builtin_expect(p->cfg.hash_tag[0] != '\0', 0))
		return key_hash_tagged(p, key, len);
	return key_hash_plain(p, key, len);
}

/* First point >= h by binary search; npoints (the sentinel) when every point is below h. */
size_t pl_continuum_lower_bound(const struct pl_placement *p, uint64_t h)
{
	size_t lo = 0, hi = p->npoints;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->points[mid].value < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The continuum rule through the index: one load for most hashes, else a short forward scan
 * from the bucket's first point (it ends at the sentinel at the latest, whose value is
 * UINT64_MAX and whose owner is point 0's: the wrap).
 */
static __attribute__((noinline)) int32_t continuum_lookup_slow(const struct pl_placement *p,
							       uint64_t h, uint64_t e)
{
	const struct pl_point *pt;

	if (!(e & PL_IDX_SLOW << 16))
		return (int32_t)p->points[pl_continuum_lower_bound(p, h)].member;
	pt = &p->points[e >> 32];
	while (pt->value < h)
		pt++;
	return (int32_t)pt->member;
}

static inline int32_t continuum_lookup(const struct pl_placement *p, uint64_t h)
{
	uint64_t k = h >> p->index_shift, e;
	uint32_t split, sub;

	if (k > p->index_last)
		k = p->index_last;
	e = p->index[k];
	split = (uint32_t)(e >> 32);
	sub = pl_sub32(p, h);
	if (__builtin_expect(!(e & PL_IDX_SLOW << 16) && sub != split, 1))
		return (int32_t)(sub < split ? (e >> 16) & 0xffff : e & 0xffff);
	return continuum_lookup_slow(p, h, e);
}

/* Rendezvous: does candidate a (mixed hash xa, score sa) beat b? Score, hash, then name. */
static inline bool rv_beats(const struct pl_rv_entry *a, uint64_t xa, double sa,
			    const struct pl_rv_entry *b, uint64_t xb, double sb)
{
	if (sa != sb)
		return sa > sb;
	if (xa != xb)
		return xa > xb;
	return a->rank < b->rank;
}

/*
 * Weighted rendezvous score, logarithmic method (Schindelhauer & Schomaker): with u uniform in
 * (0, 1), w / -ln(u) makes member i win with probability w_i / sum(w). When all weights are
 * equal the score grows with x, so comparing x alone gives the same order (see rv_beats).
 */
static inline double rv_score(const struct pl_placement *p, const struct pl_rv_entry *e, uint64_t x)
{
	double u;

	if (p->equal_weights)
		return 0.0;
	u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
	return e->weight / -log(u);
}

/* See placement_priv.h. */
const struct pl_rv_entry *pl_rv_best(const struct pl_placement *p, uint64_t h,
				     const struct pl_rv_entry *prev, const uint64_t *loads,
				     double cap)
{
	const struct pl_rv_entry *best = NULL;
	uint64_t xbest = 0, xprev = 0;
	double sbest = 0, sprev = 0;

	if (prev != NULL) {
		xprev = pl_mix64(h ^ prev->seed);
		sprev = rv_score(p, prev, xprev);
	}
	for (uint32_t k = 0; k < p->weighted; k++) {
		const struct pl_rv_entry *e = &p->rv[k];
		uint64_t x = pl_mix64(h ^ e->seed);
		double s = rv_score(p, e, x);

		if (loads != NULL && (double)loads[e->member] >= cap)
			continue;
		if (prev != NULL && !rv_beats(prev, xprev, sprev, e, x, s))
			continue;
		if (best == NULL || rv_beats(e, x, s, best, xbest, sbest)) {
			best = e;
			xbest = x;
			sbest = s;
		}
	}
	return best;
}

/* pl_rv_best(p, h, NULL, NULL, 0) when all weights are equal: the highest mixed hash wins. */
static int32_t rv_lookup_equal(const struct pl_placement *p, uint64_t h)
{
	const struct pl_rv_entry *best = &p->rv[0];
	uint64_t xbest = pl_mix64(h ^ best->seed);

	for (uint32_t k = 1; k < p->weighted; k++) {
		const struct pl_rv_entry *e = &p->rv[k];
		uint64_t x = pl_mix64(h ^ e->seed);

		if (x > xbest || (x == xbest && e->rank < best->rank)) {
			best = e;
			xbest = x;
		}
	}
	return (int32_t)best->member;
}

int32_t pl_lookup_hash(const struct pl_placement *p, uint64_t hash)
{
	const struct pl_rv_entry *best;

	/* The continuum first, by a plain branch: it is the packet path's algorithm. */
	if (__builtin_expect(p->kind == PL_KIND_CONTINUUM && p->npoints != 0, 1))
		return continuum_lookup(p, hash);
	switch (p->kind) {
	case PL_KIND_CONTINUUM:
		return -ENOENT;
	case PL_KIND_JUMP:
		if (p->nslots == 0)
			return -ENOENT;
		return (int32_t)p->slots[pl_jump_bucket(hash, p->nslots)];
	case PL_KIND_MODULO:
		if (p->nslots == 0)
			return -ENOENT;
		return (int32_t)p->slots[hash % p->nslots];
	case PL_KIND_MAGLEV:
		if (p->weighted == 0)
			return -ENOENT;
		return (int32_t)p->slots[pl_fastrange(hash, p->nslots)];
	case PL_KIND_RENDEZVOUS:
		if (p->equal_weights && p->weighted > 0)
			return rv_lookup_equal(p, hash);
		best = pl_rv_best(p, hash, NULL, NULL, 0);
		return best == NULL ? -ENOENT : (int32_t)best->member;
	}
	return -EINVAL;
}

void pl_prefetch_hash(const struct pl_placement *p, uint64_t hash)
{
	uint64_t k;

	if (p->kind == PL_KIND_CONTINUUM && p->npoints != 0) {
		k = hash >> p->index_shift;
		__builtin_prefetch(&p->index[k > p->index_last ? p->index_last : k]);
	} else if (p->kind == PL_KIND_MODULO && p->nslots != 0) {
		__builtin_prefetch(&p->slots[hash % p->nslots]);
	} else if (p->kind == PL_KIND_MAGLEV && p->weighted != 0) {
		__builtin_prefetch(&p->slots[pl_fastrange(hash, p->nslots)]);
	}
}

int32_t pl_lookup(const struct pl_placement *p, const void *key, size_t len)
{
	return pl_lookup_hash(p, pl_key_hash(p, key, len));
}

int32_t pl_lookup_hash_bsearch(const struct pl_placement *p, uint64_t hash)
{
	if (p->kind != PL_KIND_CONTINUUM)
		return -ENOTSUP;
	if (p->npoints == 0)
		return -ENOENT;
	return (int32_t)p->points[pl_continuum_lower_bound(p, hash)].member;
}
