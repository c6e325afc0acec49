/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_PLACEMENT_PRIV_H
#define RINGWAY_PLACEMENT_PRIV_H

/*
 * Contract between the files of the placement library:
 *
 *   pl_build.c   validation, the memory block (build, clone, free), accessors
 *   pl_algo.c    names, each kind's builder and cold operations, the algorithm table
 *   pl_lookup.c  key hash and lookups: the hot path, a direct switch on the kind, no pointers
 *   pl_walk.c    replica and bounded-load walks
 *   pl_share.c   shares of the hash space and moved fractions
 *   compat.c     libmemcached and nutcracker ketama recipes and their key hashes
 *   members.c    the nodes-file parser
 *
 * Two tables in pl_algo.c: pl_algos[] (one row per algorithm: public descriptor, kind,
 * continuum recipe) and pl_kinds[] (one row per kind: its cold operations, pointing at
 * builders in pl_algo.c, walk starts in pl_walk.c, segments and moved fractions in
 * pl_share.c). Cold paths dispatch through pl_kinds[p->kind]; the hot path does not. Walks
 * and shares also call lookup's continuum search and rendezvous scoring; pl_lookup.c calls
 * no other file but compat.c's key hashes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "placement.h"

__extension__ typedef unsigned __int128 pl_u128;

/* Bounds that keep indices in 32 bits and a build's memory sane; beyond them: EINVAL. */
#define PL_POINTS_MAX (UINT64_C(1) << 27) /* continuum points */
#define PL_SLOTS_MAX  (UINT64_C(1) << 26) /* jump/modulo buckets (sum of weights), maglev size */
/* Index entry: split (32 bits) | owner at or below the split (16) | owner above it (16). */
#define PL_IDX_SLOW	  0x8000u /* in the low owner: the split is the first point to scan */
#define PL_IDX_OWNERS_MAX 0x8000u /* members that fit the 15-bit owner fields */
#define PL_NO_MEMBER	  UINT32_MAX

/* One point on a continuum: the hash value and the member that owns the arc ending there. */
struct pl_point {
	uint64_t value;
	uint32_t member;
};

/* A rendezvous candidate, packed so that a lookup reads one array front to back. */
struct pl_rv_entry {
	uint64_t seed; /* hash of the name: the member's own hash function */
	double weight;
	uint32_t member; /* index in the member list */
	uint32_t rank;	 /* position by name: the last tie-break */
};

/*
 * Representations, each with its own lookup in pl_lookup_hash()'s switch. An algorithm is a
 * kind plus a row of the algorithm table (recipe, parameters, properties).
 */
enum pl_kind {
	PL_KIND_CONTINUUM,  /* sorted points, sentinel, index on the top bits of the hash */
	PL_KIND_JUMP,	    /* buckets (a unit of weight each), jump consistent hash */
	PL_KIND_MODULO,	    /* the same buckets, hash mod buckets */
	PL_KIND_MAGLEV,	    /* prime-sized table, multiply-shift */
	PL_KIND_RENDEZVOUS, /* weighted highest random weight over every member */
};
/* Not an enumerator, so that pl_lookup_hash()'s switch stays exhaustive without a case for it. */
#define PL_KIND_COUNT (PL_KIND_RENDEZVOUS + 1)

struct pl_placement {
	/* Read on every lookup: kept together at the start of the block. */
	enum pl_kind kind;
	uint32_t index_shift;	 /* continuum: bucket = hash >> index_shift ... */
	uint64_t index_last;	 /* ... clamped to index_last (hashes above the indexed range) */
	const uint64_t *index;	 /* continuum: index_last + 1 entries, see pl_algo.c */
	uint32_t sub_sr, sub_sl; /* top 32 bits of a hash's offset in its bucket: see pl_sub32() */
	struct pl_point *points; /* continuum: npoints + 1 (sentinel {UINT64_MAX, owner of 0}) */
	uint64_t npoints;
	uint32_t *slots; /* jump/modulo: bucket -> member; maglev: entry -> member */
	uint32_t nslots;
	uint32_t n;	     /* members, including drained ones */
	uint32_t weighted;   /* members with weight > 0 */
	uint32_t space_bits; /* range of key hashes: 32 (ketama, twemproxy) or 64 */
	bool equal_weights;  /* rendezvous: every weighted member has the same weight */
	uint64_t total_weight;
	struct pl_rv_entry *rv; /* rendezvous: the members with weight, in member order */
	struct pl_member *members;
	uint32_t *by_name; /* member indices sorted by name */
	uint32_t *rank;	   /* rank[i]: position of member i in by_name */
	struct pl_config cfg;
	struct pl_allocator alloc; /* made this block; alloc.alloc NULL: posix_memalign/free */
	size_t bytes;
};

/* ---------------------------------------------------------------------------------------- */
/* Arithmetic shared by lookups, walks and shares */

/* Murmur3's 64-bit finaliser: a bijection with full avalanche. */
static inline uint64_t pl_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* Maglev entry of a hash: multiply-shift maps [0, 2^64) onto [0, size) in equal-ish ranges. */
static inline uint32_t pl_fastrange(uint64_t h, uint32_t size)
{
	return (uint32_t)(((pl_u128)h * size) >> 64);
}

/*
 * Jump consistent hash (Lamping & Veach, 2014): bucket in [0, buckets) for key. Growing the
 * bucket count from b to b+1 moves exactly the keys that land in the new bucket b.
 */
static inline uint32_t pl_jump_bucket(uint64_t key, uint32_t buckets)
{
	int64_t b = -1, j = 0;

	while (j < (int64_t)buckets) {
		b = j;
		key = key * UINT64_C(2862933555777941757) + 1;
		j = (int64_t)((double)(b + 1) *
			      ((double)(INT64_C(1) << 31) / (double)((key >> 33) + 1)));
	}
	return (uint32_t)b;
}

/* The top 32 bits of v's offset within its index bucket (all of them when it is shorter). */
static inline uint32_t pl_sub32(const struct pl_placement *p, uint64_t v)
{
	return (uint32_t)((v >> p->sub_sr) << p->sub_sl);
}

/* pl_lookup.c: first point >= h by binary search; npoints when every point is below h. */
size_t pl_continuum_lower_bound(const struct pl_placement *p, uint64_t h);

/*
 * pl_lookup.c: best rendezvous candidate strictly after @p prev in rendezvous order (prev
 * NULL: no bound), skipping members at or above cap when @p loads is set; NULL when none.
 */
const struct pl_rv_entry *pl_rv_best(const struct pl_placement *p, uint64_t h,
				     const struct pl_rv_entry *prev, const uint64_t *loads,
				     double cap);

/* ---------------------------------------------------------------------------------------- */
/* The algorithm table */

/* What a kind's planner tells the block layout; points are sorted, without the sentinel. */
struct pl_parts {
	struct pl_point *points; /* malloc'd; freed by pl_build */
	size_t npoints;
	uint32_t index_bits;
	uint32_t nslots;
	uint32_t nrv;
};

/*
 * The owner function of a placement as segments of the key-hash space [0, 2^space_bits), in
 * increasing order: a kind's segment() gives segment i's last value and owner (PL_NO_MEMBER
 * when nobody owns it), false past the last one. Segments may be empty (equal point values).
 */
struct pl_seg_iter {
	const struct pl_placement *p;
	uint64_t i;    /* next segment */
	uint64_t last; /* largest hash value: 2^space_bits - 1 */
};

/*
 * A kind's cold operations. The hot path (pl_key_hash, pl_lookup_hash, pl_prefetch_hash)
 * never goes through them. NULL entries take the generic way noted.
 */
struct pl_kind_ops {
	/* Build: size the arrays into *parts (hdr has the header fields); 0 or -errno. */
	int (*plan)(struct pl_placement *hdr, const struct pl_member *members, uint32_t n,
		    const uint32_t *by_name, struct pl_parts *parts);
	/* Build: fill the arrays of the laid-out block from parts; 0 or -errno. */
	int (*fill)(struct pl_placement *p, const struct pl_parts *parts);
	/* pl_point_count(); NULL: 0. */
	uint64_t (*point_count)(const struct pl_placement *p);
	/* Walks: position of h in the cyclic sequence of owners (points or slots) the replica
	 * and bounded-load walks follow; NULL: the kind has its own replicas and bounded. */
	uint64_t (*walk_start)(const struct pl_placement *p, uint64_t h);
	int (*replicas)(const struct pl_placement *p, uint64_t h, uint32_t *out, uint32_t r);
	/* bounded: the first member in the kind's order below cap, -ENOENT when none is */
	int32_t (*bounded)(const struct pl_placement *p, uint64_t h, const uint64_t *loads,
			   double cap);
	/* Shares and moved fractions: the owner function as segments; NULL: shares by weight. */
	bool (*segment)(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner);
	/* Moved fraction between two placements of this kind and hashing; NULL: merge the
	 * segments. 0 or -errno (-ENOTSUP when it has no exact answer for the change). */
	int (*moved)(const struct pl_placement *from, const struct pl_placement *to,
		     double *fraction);
};

/*
 * Continuum recipe: fill *out (malloc'd, caller frees) with every point of the members with
 * weight > 0, in emission order; *count is the number of points. 0 or -errno.
 */
typedef int (*pl_points_fn)(const struct pl_config *cfg, const struct pl_member *members,
			    uint32_t n, const uint32_t *by_name, struct pl_point **out,
			    size_t *count);

/* One row per algorithm, indexed by enum pl_algo (pl_algo.c). */
struct pl_algo_def {
	struct pl_algo_info info; /* public descriptor (name from PL_FOREACH_ALGO) */
	enum pl_kind kind;	  /* representation: hot lookup case and cold operations */
	pl_points_fn points;	  /* continuum only: the recipe */
};

/* pl_algo.c: the algorithms, and each kind's cold operations (indexed by enum pl_kind). */
extern const struct pl_algo_def pl_algos[PL_ALGO_COUNT];
extern const struct pl_kind_ops pl_kinds[PL_KIND_COUNT];

/* pl_walk.c: where each kind's walk starts; rendezvous's own walks. */
uint64_t pl_continuum_walk_start(const struct pl_placement *p, uint64_t h);
uint64_t pl_jump_walk_start(const struct pl_placement *p, uint64_t h);
uint64_t pl_modulo_walk_start(const struct pl_placement *p, uint64_t h);
uint64_t pl_maglev_walk_start(const struct pl_placement *p, uint64_t h);
int pl_rendezvous_replicas(const struct pl_placement *p, uint64_t h, uint32_t *out, uint32_t r);
int32_t pl_rendezvous_bounded(const struct pl_placement *p, uint64_t h, const uint64_t *loads,
			      double cap);

/* pl_share.c: segments and moved fractions. */
bool pl_continuum_segment(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner);
bool pl_maglev_segment(struct pl_seg_iter *it, uint64_t *end, uint32_t *owner);
int pl_jump_moved(const struct pl_placement *from, const struct pl_placement *to, double *fraction);
int pl_modulo_moved(const struct pl_placement *from, const struct pl_placement *to,
		    double *fraction);
int pl_rendezvous_moved(const struct pl_placement *from, const struct pl_placement *to,
			double *fraction);

/* ---------------------------------------------------------------------------------------- */
/* Compatibility recipes (compat.c) */

/*
 * Continuum lookup rule, shared by every continuum algorithm: the owner of hash h is the
 * member of the first point (in array order) whose value is >= h, wrapping to point 0 when
 * h is above the last point. The core sorts the recipe's points with a *stable* sort by
 * value, so among equal values the recipe's emission order decides. A recipe whose real
 * lookup picks a different point among equal values must emit (or keep) the one the real
 * library would pick first, so that the rule above gives the library's answer.
 *
 * Recipe point generators: fill *out (malloc'd, caller frees) with every point of the
 * members with weight > 0, in emission order; *count is the number of points.
 * Return 0 or a negative errno (-ENOMEM, -EINVAL).
 */
int pl_ketama_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
		     size_t *count);
int pl_twemproxy_points(const struct pl_member *members, uint32_t n, struct pl_point **out,
			size_t *count);

/*
 * Key hash of a recipe, as the real library computes it, widened to uint64_t
 * (32-bit hashes in the low bits). PL_HASH_XXH3 gives XXH3_64bits.
 * For PL_ALGO_KETAMA the key hash is libmemcached's ketama MD5 (first 4 digest bytes,
 * little-endian); use pl_ketama_key_hash for that.
 */
uint64_t pl_hash_bytes(enum pl_hash h, const void *key, size_t len);
uint64_t pl_ketama_key_hash(const void *key, size_t len);

/* MD5 of a buffer (RFC 1321), for the ketama recipes. */
void pl_md5(const void *data, size_t len, uint8_t digest[16]);

#endif /* RINGWAY_PLACEMENT_PRIV_H */
