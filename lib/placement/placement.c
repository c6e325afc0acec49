/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement core: builds every algorithm's immutable object and answers lookups on it.
 *
 * - Continuum algorithms (ring here; ketama and twemproxy through the point generators in
 *   compat.c) share one representation: points sorted stably by value, a sentinel point, and
 *   an index on the top bits of the hash that gives the owner directly for most buckets and
 *   a short scan start for the rest (same answers as binary search, see continuum_lookup).
 * - jump and modulo map a key to a bucket; every unit of weight is one bucket.
 * - maglev fills a prime-sized table; lookups map the 64-bit hash onto it by multiply-shift.
 * - rendezvous scores every member with weight (weighted HRW, logarithmic method).
 *
 * Memory: one 64-byte aligned block per placement holds the struct and all its arrays, which
 * are reached through pointers into that block. pl_clone() copies the block and rebases the
 * pointers; pl_free() hands the block back to the allocator that made it.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "placement.h"
#include "placement_priv.h"

__extension__ typedef unsigned __int128 pl_u128;

/* Bounds that keep indices in 32 bits and a build's memory sane; beyond them: EINVAL. */
#define PL_POINTS_MAX	  (UINT64_C(1) << 27) /* continuum points */
#define PL_SLOTS_MAX	  (UINT64_C(1) << 26) /* jump/modulo buckets (sum of weights), maglev size */
#define PL_INDEX_BITS_MIN 4
#define PL_INDEX_BITS_MAX 26
/* Index entry: split (32 bits) | owner at or below the split (16) | owner above it (16). */
#define IDX_SLOW       0x8000u /* in the low owner: the split is the first point to scan */
#define IDX_OWNERS_MAX 0x8000u /* members that fit the 15-bit owner fields */
#define NO_MEMBER      UINT32_MAX
#define BLOCK_ALIGN    64

/* Seeds that keep the per-member hashes of maglev and rendezvous independent of the ring's. */
#define MAGLEV_SEED_OFFSET UINT64_C(0x6d61676c65762d6f)
#define MAGLEV_SEED_SKIP   UINT64_C(0x6d61676c65762d73)
#define RENDEZVOUS_SEED	   UINT64_C(0x72656e64657a766f)

/* A rendezvous candidate, packed so that a lookup reads one array front to back. */
struct rv_entry {
	uint64_t seed; /* hash of the name: the member's own hash function */
	double weight;
	uint32_t member; /* index in the member list */
	uint32_t rank;	 /* position by name: the last tie-break */
};

enum pl_kind {
	KIND_CONTINUUM,
	KIND_JUMP,
	KIND_MODULO,
	KIND_MAGLEV,
	KIND_RENDEZVOUS,
};

struct pl_placement {
	/* Read on every lookup: kept together at the start of the block. */
	enum pl_kind kind;
	uint32_t index_shift;	 /* continuum: bucket = hash >> index_shift ... */
	uint64_t index_last;	 /* ... clamped to index_last (hashes above the indexed range) */
	const uint64_t *index;	 /* continuum: index_last + 1 entries, see index_build() */
	uint32_t sub_sr, sub_sl; /* top 32 bits of a hash's offset in its bucket: see sub32() */
	struct pl_point *points; /* continuum: npoints + 1 (sentinel {UINT64_MAX, owner of 0}) */
	uint64_t npoints;
	uint32_t *slots; /* jump/modulo: bucket -> member; maglev: entry -> member */
	uint32_t nslots;
	uint32_t n;	     /* members, including drained ones */
	uint32_t weighted;   /* members with weight > 0 */
	uint32_t space_bits; /* range of key hashes: 32 (ketama, twemproxy) or 64 */
	bool equal_weights;  /* rendezvous: every weighted member has the same weight */
	uint64_t total_weight;
	struct rv_entry *rv; /* rendezvous: the members with weight, in member order */
	struct pl_member *members;
	uint32_t *by_name; /* member indices sorted by name */
	uint32_t *rank;	   /* rank[i]: position of member i in by_name */
	struct pl_config cfg;
	struct pl_allocator alloc; /* made this block; alloc.alloc NULL: posix_memalign/free */
	size_t bytes;
};

/* ---------------------------------------------------------------------------------------- */
/* Names */

static const char *const algo_names[] = {
#define PL_ALGO_NAME(e, s) s,
	PL_FOREACH_ALGO(PL_ALGO_NAME)
#undef PL_ALGO_NAME
};

static const char *const hash_names[] = {
#define PL_HASH_NAME(e, s) s,
	PL_FOREACH_HASH(PL_HASH_NAME)
#undef PL_HASH_NAME
};

const char *pl_algo_name(enum pl_algo a)
{
	return (unsigned)a < PL_ALGO_COUNT ? algo_names[a] : NULL;
}

int pl_algo_parse(const char *name, enum pl_algo *out)
{
	for (unsigned i = 0; name != NULL && i < PL_ALGO_COUNT; i++) {
		if (strcmp(name, algo_names[i]) == 0) {
			*out = (enum pl_algo)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pl_hash_name(enum pl_hash h)
{
	return (unsigned)h < PL_HASH_COUNT ? hash_names[h] : NULL;
}

int pl_hash_parse(const char *name, enum pl_hash *out)
{
	for (unsigned i = 0; name != NULL && i < PL_HASH_COUNT; i++) {
		if (strcmp(name, hash_names[i]) == 0) {
			*out = (enum pl_hash)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Small helpers */

static bool is_prime(uint64_t v)
{
	if (v < 2)
		return false;
	for (uint64_t d = 2; d * d <= v; d++)
		if (v % d == 0)
			return false;
	return true;
}

static size_t align_up(size_t v)
{
	return (v + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1);
}

/* Murmur3's 64-bit finaliser: a bijection with full avalanche. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

/* Maglev entry of a hash: multiply-shift maps [0, 2^64) onto [0, size) in equal-ish ranges. */
static inline uint32_t fastrange(uint64_t h, uint32_t size)
{
	return (uint32_t)(((pl_u128)h * size) >> 64);
}

/* First hash value that falls in maglev entry i: ceil(i * 2^64 / size). */
static pl_u128 maglev_entry_start(uint64_t i, uint32_t size)
{
	return (((pl_u128)i << 64) + size - 1) / size;
}

/*
 * Jump consistent hash (Lamping & Veach, 2014): bucket in [0, buckets) for key. Growing the
 * bucket count from b to b+1 moves exactly the keys that land in the new bucket b.
 */
static inline uint32_t jump_bucket(uint64_t key, uint32_t buckets)
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

static int member_ptr_cmp(const void *a, const void *b)
{
	const struct pl_member *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* by_name[r]: index of the member with the r-th smallest name. */
static int sort_by_name(const struct pl_member *members, uint32_t n, uint32_t *by_name)
{
	const struct pl_member **ptr = malloc(n * sizeof(*ptr));

	if (ptr == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ptr[i] = &members[i];
	qsort(ptr, n, sizeof(*ptr), member_ptr_cmp);
	for (uint32_t i = 0; i < n; i++)
		by_name[i] = (uint32_t)(ptr[i] - members);
	free(ptr);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Build: validation */

static int check_config(struct pl_config *cfg, const struct pl_member *members, uint32_t n)
{
	if ((unsigned)cfg->algo >= PL_ALGO_COUNT || (unsigned)cfg->key_hash >= PL_HASH_COUNT)
		return -EINVAL;
	/* The key hash is the algorithm's own except for twemproxy, where `hash:` picks it. */
	if (cfg->algo == PL_ALGO_TWEMPROXY) {
		if (cfg->key_hash == PL_HASH_XXH3)
			cfg->key_hash = PL_HASH_FNV1A_64;
	} else if (cfg->key_hash != PL_HASH_XXH3) {
		return -EINVAL;
	}
	if ((cfg->hash_tag[0] == '\0') != (cfg->hash_tag[1] == '\0'))
		return -EINVAL;
	if (cfg->vnodes == 0)
		cfg->vnodes = PL_DEFAULT_VNODES;
	if (cfg->maglev_size == 0)
		cfg->maglev_size = PL_DEFAULT_MAGLEV_TABLE;
	if (cfg->algo == PL_ALGO_MAGLEV) {
		uint32_t weighted = 0;

		for (uint32_t i = 0; i < n; i++)
			weighted += members[i].weight > 0;
		if (cfg->maglev_size > PL_SLOTS_MAX || !is_prime(cfg->maglev_size) ||
		    cfg->maglev_size < weighted)
			return -EINVAL;
	}
	return 0;
}

static int check_members(const struct pl_member *members, uint32_t n, const uint32_t *by_name)
{
	for (uint32_t i = 0; i < n; i++) {
		if (members[i].name[0] == '\0' ||
		    memchr(members[i].name, '\0', sizeof(members[i].name)) == NULL ||
		    memchr(members[i].addr, '\0', sizeof(members[i].addr)) == NULL)
			return -EINVAL;
	}
	for (uint32_t i = 1; by_name != NULL && i < n; i++)
		if (strcmp(members[by_name[i - 1]].name, members[by_name[i]].name) == 0)
			return -EINVAL;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Build: continuum */

/*
 * Stable sort of uniformly spread points: one counting pass on the top 16 bits of the range
 * in use, then insertion sort inside each bucket (about m / 65536 points each). Returns
 * -EAGAIN, leaving *pts as it was, when a bucket is crowded (points not spread), so that the
 * caller falls back to the radix sort.
 */
#define BUCKET_SORT_MIN	    4096
#define BUCKET_SORT_CROWDED 128
static int bucket_sort_points(struct pl_point **pts, size_t m)
{
	const size_t nb = 65536;
	struct pl_point *src = *pts, *dst;
	uint64_t maxv = 0;
	uint32_t shift, *start;
	int rc = -EAGAIN;

	for (size_t i = 0; i < m; i++)
		maxv = src[i].value > maxv ? src[i].value : maxv;
	shift = maxv <= UINT32_MAX ? 16 : 48;
	start = calloc(nb + 1, sizeof(*start));
	dst = malloc(m * sizeof(*dst));
	if (start == NULL || dst == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m; i++)
		start[(src[i].value >> shift) + 1]++;
	for (size_t b = 0; b < nb; b++) {
		if (start[b + 1] > BUCKET_SORT_CROWDED)
			goto out;
		start[b + 1] += start[b];
	}
	for (size_t i = 0; i < m; i++)
		dst[start[src[i].value >> shift]++] = src[i];
	/* start[b] is now the end of bucket b: insertion sort each (stable: strict >). */
	for (size_t b = 0, lo = 0; b < nb; lo = start[b], b++) {
		for (size_t i = lo + 1; i < start[b]; i++) {
			struct pl_point x = dst[i];
			size_t j = i;

			for (; j > lo && dst[j - 1].value > x.value; j--)
				dst[j] = dst[j - 1];
			dst[j] = x;
		}
	}
	*pts = dst;
	dst = src;
	rc = 0;
out:
	free(dst);
	free(start);
	return rc;
}

/*
 * Stable LSD radix sort of points by value, 8 bits a pass, skipping passes in which every
 * point has the same digit (the top half of 32-bit recipe points). *pts may be replaced.
 */
static int sort_points(struct pl_point **pts, size_t m)
{
	static const unsigned passes = 8;
	size_t hist[8][256];
	struct pl_point *src = *pts, *dst;

	if (m < 2)
		return 0;
	if (m >= BUCKET_SORT_MIN) {
		int rc = bucket_sort_points(pts, m);

		if (rc != -EAGAIN)
			return rc;
	}
	dst = malloc(m * sizeof(*dst));
	if (dst == NULL)
		return -ENOMEM;
	memset(hist, 0, sizeof(hist));
	for (size_t i = 0; i < m; i++)
		for (unsigned d = 0; d < passes; d++)
			hist[d][(src[i].value >> (8 * d)) & 0xff]++;
	for (unsigned d = 0; d < passes; d++) {
		size_t sum = 0;

		if (hist[d][(src[0].value >> (8 * d)) & 0xff] == m)
			continue;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = hist[d][b];

			hist[d][b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < m; i++)
			dst[hist[d][(src[i].value >> (8 * d)) & 0xff]++] = src[i];
		struct pl_point *t = src;
		src = dst;
		dst = t;
	}
	free(dst);
	*pts = src;
	return 0;
}

/*
 * `ring` points: for every member with weight w (in name order, so that equal values, which
 * 64 bits make all but impossible, break ties by name and not by position in the list),
 * tokens 0 .. w * vnodes - 1 at XXH3_64bits_withSeed(name, strlen(name), token). A member's
 * points depend on its name and weight only, and a heavier weight keeps the lighter one's
 * points: adding, removing or reweighting one member moves only keys to or from it.
 */
static int ring_points(const struct pl_member *members, uint32_t n, const uint32_t *by_name,
		       uint32_t vnodes, struct pl_point **out, size_t *count)
{
	uint64_t total = 0;
	struct pl_point *pts;
	size_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (members[i].weight > PL_POINTS_MAX / vnodes)
			return -EINVAL;
		total += (uint64_t)members[i].weight * vnodes;
		if (total > PL_POINTS_MAX)
			return -EINVAL;
	}
	pts = malloc((total ? total : 1) * sizeof(*pts));
	if (pts == NULL)
		return -ENOMEM;
	for (uint32_t r = 0; r < n; r++) {
		const struct pl_member *m = &members[by_name[r]];
		uint64_t tokens = (uint64_t)m->weight * vnodes;
		size_t len = strlen(m->name);

		for (uint64_t t = 0; t < tokens; t++) {
			pts[k].value = XXH3_64bits_withSeed(m->name, len, t);
			pts[k].member = by_name[r];
			k++;
		}
	}
	*out = pts;
	*count = k;
	return 0;
}

static int continuum_points(const struct pl_config *cfg, const struct pl_member *members,
			    uint32_t n, const uint32_t *by_name, struct pl_point **pts, size_t *m)
{
	int rc;

	*pts = NULL;
	*m = 0;
	switch (cfg->algo) {
	case PL_ALGO_KETAMA:
		rc = pl_ketama_points(members, n, pts, m);
		break;
	case PL_ALGO_TWEMPROXY:
		rc = pl_twemproxy_points(members, n, pts, m);
		break;
	default:
		rc = ring_points(members, n, by_name, cfg->vnodes, pts, m);
		break;
	}
	if (rc == 0 && *m > PL_POINTS_MAX)
		rc = -EINVAL;
	for (size_t i = 0; rc == 0 && i < *m; i++)
		if ((*pts)[i].member >= n || members[(*pts)[i].member].weight == 0)
			rc = -EINVAL; /* a recipe emitted a point for no or a drained member */
	if (rc == 0)
		rc = sort_points(pts, *m);
	if (rc != 0) {
		free(*pts);
		*pts = NULL;
	}
	return rc;
}

/*
 * Index geometry over the range the point values actually use (2^32 for the recipes, 2^64
 * for ring): 2^bits buckets, 2 to 4 per point, so that most buckets hold at most one point.
 * The lookup compares the top 32 bits of a hash's offset in its bucket (sub32) with a split.
 */
static void index_geometry(struct pl_placement *p, const struct pl_point *pts, size_t m,
			   uint32_t *bits)
{
	uint32_t space = pts[m - 1].value <= UINT32_MAX ? 32 : 64;
	uint32_t b = 1;

	while (b < PL_INDEX_BITS_MAX && ((uint64_t)1 << b) < 2 * (uint64_t)m)
		b++;
	if (b < PL_INDEX_BITS_MIN)
		b = PL_INDEX_BITS_MIN;
	*bits = b;
	p->index_shift = space - b;
	p->index_last = (uint64_t)1 << b;
	p->sub_sr = p->index_shift >= 32 ? p->index_shift - 32 : 0;
	p->sub_sl = p->index_shift >= 32 ? 0 : 32 - p->index_shift;
}

/* The top 32 bits of v's offset within its bucket (all of them when the offset is shorter). */
static inline uint32_t sub32(const struct pl_placement *p, uint64_t v)
{
	return (uint32_t)((v >> p->sub_sr) << p->sub_sl);
}

static inline uint64_t idx_entry(uint32_t split, uint32_t lo, uint32_t hi)
{
	return (uint64_t)split << 32 | (uint64_t)lo << 16 | hi;
}

/*
 * Index over the sorted points (sentinel at pts[m]). Bucket k holds the hashes h with
 * h >> shift == k; entry nb stands for every hash above the indexed range. The lookup rule
 * gives such an h the first point >= h, which lies between s(k), the first point >= the
 * bucket's start, and s(k + 1) inclusive; their owners, in order, form runs:
 * - one run: the owner; split UINT32_MAX (every sub32 below it gives lo = hi);
 * - two runs, the first ending at point j: hashes <= v[j] go to lo, above it to hi, and
 *   comparing sub32(h) with sub32(v[j]) decides unless they are equal;
 * - more runs, or owners that do not fit in 15 bits: IDX_SLOW, and the split is s(k).
 * Equal sub32 values and IDX_SLOW entries take the exact path (continuum_lookup_slow).
 */
static void index_build(struct pl_placement *p, uint64_t *idx, const struct pl_point *pts, size_t m)
{
	uint64_t nb = p->index_last;
	bool compact = p->n <= IDX_OWNERS_MAX;
	size_t i = 0;

	for (uint64_t k = 0; k < nb; k++) {
		uint64_t lo = k << p->index_shift;

		while (i < m && pts[i].value < lo)
			i++;
		idx[k] = i;
	}
	idx[nb] = m;
	for (uint64_t k = 0; k <= nb; k++) {
		size_t s = idx[k], e = k < nb ? idx[k + 1] : s, cut = 0, runs = 1;

		for (size_t j = s + 1; j <= e; j++) {
			if (pts[j].member != pts[j - 1].member) {
				runs++;
				cut = j - 1;
			}
		}
		if (!compact || runs > 2)
			idx[k] = idx_entry((uint32_t)s, IDX_SLOW, 0);
		else if (runs == 1)
			idx[k] = idx_entry(UINT32_MAX, pts[s].member, pts[s].member);
		else
			idx[k] = idx_entry(sub32(p, pts[cut].value), pts[s].member, pts[e].member);
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Build: jump, modulo, maglev */

static int bucket_count(const struct pl_member *members, uint32_t n, uint32_t *out)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += members[i].weight;
	if (total > PL_SLOTS_MAX)
		return -EINVAL;
	*out = (uint32_t)total;
	return 0;
}

/*
 * jump and modulo buckets: in member order, `weight` consecutive buckets per member (weight 0:
 * none). Jump moves only keys to or from the changed buckets when buckets are added or removed
 * at the end, so its movement is minimal exactly when the LAST member is added, removed or
 * reweighted; changing any other member renumbers the buckets after it and moves keys between
 * members that did not change. modulo is the non-minimal reference.
 */
static void buckets_fill(const struct pl_member *members, uint32_t n, uint32_t *slots)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++)
		for (uint32_t w = 0; w < members[i].weight; w++)
			slots[k++] = i;
}

/*
 * Maglev table (Eisenbud et al., NSDI 2016): each member walks its own permutation of the
 * table (offset and skip from two hashes of its name; the size is prime, so every skip
 * visits every entry) and claims the next free entry on its turn. Weights by proportional
 * turns: every round a member earns its weight in credit and takes one turn per max-weight
 * of credit, so the heaviest members claim one entry a round and the others proportionally.
 * Members take turns in name order, so the table does not depend on the list's order.
 */
struct maglev_turn {
	uint64_t pos, skip, credit; /* next entry to try, permutation step, turns earned */
};

static int maglev_fill(const struct pl_member *members, uint32_t n, const uint32_t *by_name,
		       uint32_t size, uint32_t *table)
{
	struct maglev_turn *st;
	uint32_t wmax = 0, filled = 0;

	for (uint32_t i = 0; i < size; i++)
		table[i] = NO_MEMBER;
	for (uint32_t i = 0; i < n; i++)
		wmax = members[i].weight > wmax ? members[i].weight : wmax;
	if (wmax == 0)
		return 0;
	st = calloc(n, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(members[i].name);

		st[i].pos = XXH3_64bits_withSeed(members[i].name, len, MAGLEV_SEED_OFFSET) % size;
		st[i].skip =
			XXH3_64bits_withSeed(members[i].name, len, MAGLEV_SEED_SKIP) % (size - 1) +
			1;
	}
	while (filled < size) {
		for (uint32_t r = 0; r < n && filled < size; r++) {
			uint32_t i = by_name[r];
			struct maglev_turn *t = &st[i];

			t->credit += members[i].weight;
			while (t->credit >= wmax && filled < size) {
				while (table[t->pos] != NO_MEMBER)
					t->pos = (t->pos + t->skip) % size;
				table[t->pos] = i;
				filled++;
				t->credit -= wmax;
			}
		}
	}
	free(st);
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Build: the block */

struct parts {
	struct pl_point *points; /* sorted, without sentinel; malloc'd */
	size_t npoints;
	uint32_t nslots;
	uint32_t index_bits;
};

static void *block_alloc(const struct pl_allocator *a, size_t size)
{
	void *ptr = NULL;

	if (a != NULL && a->alloc != NULL)
		return a->alloc(size, BLOCK_ALIGN, a->ctx);
	if (posix_memalign(&ptr, BLOCK_ALIGN, size) != 0)
		return NULL;
	return ptr;
}

/* Lay the arrays out after the struct; with base == NULL only computes the size. */
static size_t block_layout(struct pl_placement *p, char *base, const struct parts *parts)
{
	size_t off = align_up(sizeof(*p));
	uint64_t nb = parts->npoints ? (uint64_t)1 << parts->index_bits : 0;

#define PL_CARVE(field, count)                                            \
	do {                                                              \
		size_t bytes_ = (size_t)(count) * sizeof(*p->field);      \
		if (base != NULL)                                         \
			p->field = (count) ? (void *)(base + off) : NULL; \
		off += align_up(bytes_);                                  \
	} while (0)
	PL_CARVE(members, p->n);
	PL_CARVE(by_name, p->n);
	PL_CARVE(rank, p->n);
	PL_CARVE(points, parts->npoints ? parts->npoints + 1 : 0);
	PL_CARVE(index, parts->npoints ? nb + 1 : 0);
	PL_CARVE(slots, parts->nslots);
	PL_CARVE(rv, p->kind == KIND_RENDEZVOUS ? p->weighted : 0);
#undef PL_CARVE
	return off;
}

static int build_parts(struct pl_placement *hdr, const struct pl_config *cfg,
		       const struct pl_member *members, uint32_t n, const uint32_t *by_name,
		       struct parts *parts)
{
	int rc = 0;

	memset(parts, 0, sizeof(*parts));
	switch (hdr->kind) {
	case KIND_CONTINUUM:
		rc = continuum_points(cfg, members, n, by_name, &parts->points, &parts->npoints);
		if (rc == 0 && parts->npoints > 0)
			index_geometry(hdr, parts->points, parts->npoints, &parts->index_bits);
		break;
	case KIND_JUMP:
	case KIND_MODULO:
		rc = bucket_count(members, n, &parts->nslots);
		break;
	case KIND_MAGLEV:
		parts->nslots = cfg->maglev_size;
		break;
	case KIND_RENDEZVOUS:
		break;
	}
	return rc;
}

static int fill_block(struct pl_placement *p, const struct parts *parts)
{
	int rc = 0;

	switch (p->kind) {
	case KIND_CONTINUUM:
		if (parts->npoints == 0)
			break;
		memcpy(p->points, parts->points, parts->npoints * sizeof(*p->points));
		p->points[parts->npoints].value = UINT64_MAX;
		p->points[parts->npoints].member = parts->points[0].member;
		index_build(p, (uint64_t *)p->index, p->points, parts->npoints);
		break;
	case KIND_JUMP:
	case KIND_MODULO:
		buckets_fill(p->members, p->n, p->slots);
		break;
	case KIND_MAGLEV:
		rc = maglev_fill(p->members, p->n, p->by_name, p->nslots, p->slots);
		break;
	case KIND_RENDEZVOUS:
		for (uint32_t i = 0, k = 0; i < p->n; i++) {
			const struct pl_member *m = &p->members[i];

			if (m->weight == 0)
				continue;
			p->rv[k].seed =
				XXH3_64bits_withSeed(m->name, strlen(m->name), RENDEZVOUS_SEED);
			p->rv[k].weight = m->weight;
			p->rv[k].member = i;
			p->rv[k].rank = p->rank[i];
			k++;
		}
		break;
	}
	return rc;
}

static enum pl_kind kind_of(enum pl_algo a)
{
	switch (a) {
	case PL_ALGO_JUMP:
		return KIND_JUMP;
	case PL_ALGO_MODULO:
		return KIND_MODULO;
	case PL_ALGO_MAGLEV:
		return KIND_MAGLEV;
	case PL_ALGO_RENDEZVOUS:
		return KIND_RENDEZVOUS;
	default:
		return KIND_CONTINUUM;
	}
}

static void init_header(struct pl_placement *p, const struct pl_config *cfg,
			const struct pl_member *members, uint32_t n)
{
	uint32_t w0 = 0;

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->kind = kind_of(cfg->algo);
	p->n = n;
	p->space_bits = cfg->algo == PL_ALGO_KETAMA || cfg->algo == PL_ALGO_TWEMPROXY ? 32 : 64;
	p->equal_weights = true;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = members[i].weight;

		if (w == 0)
			continue;
		if (w0 != 0 && w != w0)
			p->equal_weights = false;
		w0 = w;
		p->weighted++;
		p->total_weight += w;
	}
}

struct pl_placement *pl_build(const struct pl_config *cfg, const struct pl_member *members,
			      uint32_t n)
{
	struct pl_config c = cfg != NULL ? *cfg : (struct pl_config){0};
	struct pl_placement hdr, *p = NULL;
	struct parts parts = {0};
	uint32_t *by_name = NULL;
	int rc = -EINVAL;

	if (members == NULL || n == 0 || n > PL_MEMBERS_MAX || check_config(&c, members, n) != 0)
		goto out;
	rc = -ENOMEM;
	by_name = malloc(n * sizeof(*by_name));
	if (by_name == NULL)
		goto out;
	rc = check_members(members, n, NULL);
	if (rc == 0)
		rc = sort_by_name(members, n, by_name);
	if (rc == 0)
		rc = check_members(members, n, by_name);
	if (rc != 0)
		goto out;
	init_header(&hdr, &c, members, n);
	rc = build_parts(&hdr, &c, members, n, by_name, &parts);
	if (rc != 0)
		goto out;
	hdr.npoints = parts.npoints;
	hdr.nslots = parts.nslots;
	hdr.bytes = block_layout(&hdr, NULL, &parts);
	rc = -ENOMEM;
	p = block_alloc(NULL, hdr.bytes);
	if (p == NULL)
		goto out;
	*p = hdr;
	block_layout(p, (char *)p, &parts);
	memcpy(p->members, members, n * sizeof(*members));
	memcpy(p->by_name, by_name, n * sizeof(*by_name));
	for (uint32_t r = 0; r < n; r++)
		p->rank[by_name[r]] = r;
	rc = fill_block(p, &parts);
out:
	free(parts.points);
	free(by_name);
	if (rc != 0) {
		free(p);
		errno = -rc;
		return NULL;
	}
	return p;
}

struct pl_placement *pl_clone(const struct pl_placement *p, const struct pl_allocator *a)
{
	struct pl_placement *c;

	if (p == NULL) {
		errno = EINVAL;
		return NULL;
	}
	c = block_alloc(a, p->bytes);
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(c, p, p->bytes);
#define PL_REBASE(field)                                                                          \
	do {                                                                                      \
		if (p->field != NULL)                                                             \
			c->field =                                                                \
				(void *)((char *)c + ((const char *)p->field - (const char *)p)); \
	} while (0)
	PL_REBASE(members);
	PL_REBASE(by_name);
	PL_REBASE(rank);
	PL_REBASE(points);
	PL_REBASE(index);
	PL_REBASE(slots);
	PL_REBASE(rv);
#undef PL_REBASE
	if (a != NULL && a->alloc != NULL)
		c->alloc = *a;
	else
		memset(&c->alloc, 0, sizeof(c->alloc));
	return c;
}

void pl_free(struct pl_placement *p)
{
	struct pl_allocator a;

	if (p == NULL)
		return;
	a = p->alloc;
	if (a.alloc != NULL) {
		if (a.free != NULL)
			a.free(p, a.ctx);
		return;
	}
	free(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Accessors */

const struct pl_config *pl_config_of(const struct pl_placement *p)
{
	return &p->cfg;
}

uint32_t pl_member_count(const struct pl_placement *p)
{
	return p->n;
}

const struct pl_member *pl_member_at(const struct pl_placement *p, uint32_t idx)
{
	return idx < p->n ? &p->members[idx] : NULL;
}

int32_t pl_member_find(const struct pl_placement *p, const char *name)
{
	uint32_t lo = 0, hi = p->n;

	if (name == NULL)
		return -ENOENT;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->members[p->by_name[mid]].name, name);

		if (c == 0)
			return (int32_t)p->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

size_t pl_memory(const struct pl_placement *p)
{
	return p->bytes;
}

uint64_t pl_point_count(const struct pl_placement *p)
{
	switch (p->kind) {
	case KIND_CONTINUUM:
		return p->npoints;
	case KIND_MAGLEV:
		return p->nslots;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Key hash and lookups */

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

uint64_t pl_key_hash(const struct pl_placement *p, const void *key, size_t len)
{
	const uint8_t *k = key;

	apply_hash_tag(p->cfg.hash_tag, &k, &len);
	switch (p->cfg.algo) {
	case PL_ALGO_KETAMA:
		return pl_ketama_key_hash(k, len);
	case PL_ALGO_TWEMPROXY:
		return pl_hash_bytes(p->cfg.key_hash, k, len);
	default:
		return XXH3_64bits(k, len);
	}
}

/* First point >= h by binary search; npoints (the sentinel) when every point is below h. */
static size_t continuum_lower_bound(const struct pl_placement *p, uint64_t h)
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

	if (!(e & IDX_SLOW << 16))
		return (int32_t)p->points[continuum_lower_bound(p, h)].member;
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
	sub = sub32(p, h);
	if (__builtin_expect(!(e & IDX_SLOW << 16) && sub != split, 1))
		return (int32_t)(sub < split ? (e >> 16) & 0xffff : e & 0xffff);
	return continuum_lookup_slow(p, h, e);
}

/* Rendezvous: does candidate a (mixed hash xa, score sa) beat b? Score, hash, then name. */
static inline bool rv_beats(const struct rv_entry *a, uint64_t xa, double sa,
			    const struct rv_entry *b, uint64_t xb, double sb)
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
static inline double rv_score(const struct pl_placement *p, const struct rv_entry *e, uint64_t x)
{
	double u;

	if (p->equal_weights)
		return 0.0;
	u = ((double)(x >> 11) + 0.5) * 0x1.0p-53;
	return e->weight / -log(u);
}

/* Best candidate strictly after @p prev in rendezvous order (prev NULL: no bound), skipping
 * members at or above cap when @p loads is set; NULL when there is none. */
static const struct rv_entry *rv_best(const struct pl_placement *p, uint64_t h,
				      const struct rv_entry *prev, const uint64_t *loads,
				      double cap)
{
	const struct rv_entry *best = NULL;
	uint64_t xbest = 0, xprev = 0;
	double sbest = 0, sprev = 0;

	if (prev != NULL) {
		xprev = mix64(h ^ prev->seed);
		sprev = rv_score(p, prev, xprev);
	}
	for (uint32_t k = 0; k < p->weighted; k++) {
		const struct rv_entry *e = &p->rv[k];
		uint64_t x = mix64(h ^ e->seed);
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

/* rv_best(p, h, NULL, NULL, 0) when all weights are equal: the highest mixed hash wins. */
static int32_t rv_lookup_equal(const struct pl_placement *p, uint64_t h)
{
	const struct rv_entry *best = &p->rv[0];
	uint64_t xbest = mix64(h ^ best->seed);

	for (uint32_t k = 1; k < p->weighted; k++) {
		const struct rv_entry *e = &p->rv[k];
		uint64_t x = mix64(h ^ e->seed);

		if (x > xbest || (x == xbest && e->rank < best->rank)) {
			best = e;
			xbest = x;
		}
	}
	return (int32_t)best->member;
}

int32_t pl_lookup_hash(const struct pl_placement *p, uint64_t hash)
{
	const struct rv_entry *best;

	/* The continuum first, by a plain branch: it is the packet path's algorithm. */
	if (__builtin_expect(p->kind == KIND_CONTINUUM && p->npoints != 0, 1))
		return continuum_lookup(p, hash);
	switch (p->kind) {
	case KIND_CONTINUUM:
		return -ENOENT;
	case KIND_JUMP:
		if (p->nslots == 0)
			return -ENOENT;
		return (int32_t)p->slots[jump_bucket(hash, p->nslots)];
	case KIND_MODULO:
		if (p->nslots == 0)
			return -ENOENT;
		return (int32_t)p->slots[hash % p->nslots];
	case KIND_MAGLEV:
		if (p->weighted == 0)
			return -ENOENT;
		return (int32_t)p->slots[fastrange(hash, p->nslots)];
	case KIND_RENDEZVOUS:
		if (p->equal_weights && p->weighted > 0)
			return rv_lookup_equal(p, hash);
		best = rv_best(p, hash, NULL, NULL, 0);
		return best == NULL ? -ENOENT : (int32_t)best->member;
	}
	return -EINVAL;
}

void pl_prefetch_hash(const struct pl_placement *p, uint64_t hash)
{
	uint64_t k;

	if (p->kind == KIND_CONTINUUM && p->npoints != 0) {
		k = hash >> p->index_shift;
		__builtin_prefetch(&p->index[k > p->index_last ? p->index_last : k]);
	} else if (p->kind == KIND_MODULO && p->nslots != 0) {
		__builtin_prefetch(&p->slots[hash % p->nslots]);
	} else if (p->kind == KIND_MAGLEV && p->weighted != 0) {
		__builtin_prefetch(&p->slots[fastrange(hash, p->nslots)]);
	}
}

int32_t pl_lookup(const struct pl_placement *p, const void *key, size_t len)
{
	return pl_lookup_hash(p, pl_key_hash(p, key, len));
}

int32_t pl_lookup_hash_bsearch(const struct pl_placement *p, uint64_t hash)
{
	if (p->kind != KIND_CONTINUUM)
		return -ENOTSUP;
	if (p->npoints == 0)
		return -ENOENT;
	return (int32_t)p->points[continuum_lower_bound(p, hash)].member;
}

/* ---------------------------------------------------------------------------------------- */
/* Walks: replicas and bounded load */

/*
 * Preference order for every kind but rendezvous is a walk over a cyclic sequence of owners:
 * the continuum's points clockwise from the key's point; jump's and modulo's buckets from the
 * key's bucket upwards; maglev's table entries from the key's entry upwards.
 */
static uint64_t seq_len(const struct pl_placement *p)
{
	if (p->kind == KIND_CONTINUUM)
		return p->npoints;
	return p->weighted ? p->nslots : 0;
}

static uint64_t seq_start(const struct pl_placement *p, uint64_t h)
{
	size_t i;

	switch (p->kind) {
	case KIND_CONTINUUM:
		i = continuum_lower_bound(p, h);
		return i == p->npoints ? 0 : i;
	case KIND_JUMP:
		return jump_bucket(h, p->nslots);
	case KIND_MODULO:
		return h % p->nslots;
	default:
		return fastrange(h, p->nslots);
	}
}

static inline uint32_t seq_owner(const struct pl_placement *p, uint64_t i)
{
	return p->kind == KIND_CONTINUUM ? p->points[i].member : p->slots[i];
}

static int rv_replicas(const struct pl_placement *p, uint64_t h, uint32_t *out, uint32_t r)
{
	const struct rv_entry *prev = NULL;
	uint32_t k = 0;

	while (k < r) {
		prev = rv_best(p, h, prev, NULL, 0);
		if (prev == NULL)
			break;
		out[k++] = prev->member;
	}
	return (int)k;
}

int pl_replicas(const struct pl_placement *p, uint64_t hash, uint32_t *out, uint32_t r)
{
	uint64_t seen[PL_MEMBERS_MAX / 64];
	uint64_t len = seq_len(p), start;
	uint32_t want = r < p->weighted ? r : p->weighted, k = 0;
	bool bitmap = want > 16;

	if (out == NULL && r > 0)
		return -EINVAL;
	if (p->kind == KIND_RENDEZVOUS)
		return rv_replicas(p, hash, out, want);
	if (want == 0 || len == 0)
		return 0;
	if (bitmap)
		memset(seen, 0, ((p->n + 63) / 64) * sizeof(seen[0]));
	start = seq_start(p, hash);
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
	uint64_t len = seq_len(p), start;
	double sum = 1.0, cap;

	if (!(eps >= 0) || loads == NULL)
		return -EINVAL;
	if (p->weighted == 0)
		return -ENOENT;
	for (uint32_t i = 0; i < p->n; i++)
		sum += (double)loads[i];
	cap = ceil((1.0 + eps) * sum / p->weighted);
	if (p->kind == KIND_RENDEZVOUS) {
		const struct rv_entry *best = rv_best(p, hash, NULL, loads, cap);

		return best == NULL ? pl_lookup_hash(p, hash) : (int32_t)best->member;
	}
	if (len == 0)
		return -ENOENT;
	start = seq_start(p, hash);
	for (uint64_t s = 0; s < len; s++) {
		uint64_t i = start + s < len ? start + s : start + s - len;
		uint32_t o = seq_owner(p, i);

		if ((double)loads[o] < cap)
			return (int32_t)o;
	}
	/* Unreachable: some weighted member is below the average, hence below the cap. */
	return pl_lookup_hash(p, hash);
}

/* ---------------------------------------------------------------------------------------- */
/* Shares and moved fractions */

/*
 * The owner function of a continuum or maglev placement as segments of the key-hash space
 * [0, 2^space_bits), in increasing order: next() gives each segment's last value and owner.
 * Segments may be empty (equal point values); the walk below skips them.
 */
struct seg_iter {
	const struct pl_placement *p;
	uint64_t i;    /* next segment */
	uint64_t last; /* largest hash value: 2^space_bits - 1 */
};

static uint64_t space_max(const struct pl_placement *p)
{
	return p->space_bits == 64 ? UINT64_MAX : (UINT64_C(1) << p->space_bits) - 1;
}

static bool seg_next(struct seg_iter *it, uint64_t *end, uint32_t *owner)
{
	const struct pl_placement *p = it->p;

	if (p->kind == KIND_MAGLEV) {
		if (p->weighted == 0 || it->i >= p->nslots) {
			*end = it->last;
			*owner = NO_MEMBER;
			return it->i++ == 0;
		}
		*end = (uint64_t)(maglev_entry_start(it->i + 1, p->nslots) - 1);
		*owner = p->slots[it->i];
		it->i++;
		return true;
	}
	if (p->npoints == 0) {
		*end = it->last;
		*owner = NO_MEMBER;
		return it->i++ == 0;
	}
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

int pl_shares(const struct pl_placement *p, double *shares)
{
	struct seg_iter it = {.p = p, .last = space_max(p)};
	double space = ldexp(1.0, (int)p->space_bits);
	uint64_t end, pos = 0;
	uint32_t owner;

	if (shares == NULL)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n; i++)
		shares[i] = 0;
	if (p->kind != KIND_CONTINUUM && p->kind != KIND_MAGLEV) {
		for (uint32_t i = 0; i < p->n && p->total_weight; i++)
			shares[i] = (double)p->members[i].weight / (double)p->total_weight;
		return 0;
	}
	/* pos is the first value not yet assigned; done once a segment ends at the top. */
	while (seg_next(&it, &end, &owner)) {
		if (end < pos)
			continue;
		if (owner != NO_MEMBER)
			shares[owner] += ((double)(end - pos) + 1.0) / space;
		if (end == it.last)
			break;
		pos = end + 1;
	}
	return 0;
}

/* map[i]: index in @p to of @p from's member i, NO_MEMBER when absent or drained there. */
static uint32_t *name_map(const struct pl_placement *from, const struct pl_placement *to)
{
	uint32_t *map = malloc(from->n * sizeof(*map));

	if (map == NULL)
		return NULL;
	for (uint32_t i = 0; i < from->n; i++) {
		int32_t j = pl_member_find(to, from->members[i].name);

		map[i] = j >= 0 && to->members[j].weight > 0 ? (uint32_t)j : NO_MEMBER;
	}
	return map;
}

/* Merge the two segment lists; count the values whose owners differ (by name). */
static double moved_segments(const struct pl_placement *a, const struct pl_placement *b,
			     const uint32_t *map)
{
	struct seg_iter ia = {.p = a, .last = space_max(a)}, ib = {.p = b, .last = space_max(b)};
	uint64_t ea = 0, eb = 0, pos = 0;
	uint32_t oa = NO_MEMBER, ob = NO_MEMBER;
	pl_u128 moved = 0;
	bool more = seg_next(&ia, &ea, &oa) && seg_next(&ib, &eb, &ob);

	while (more) {
		uint64_t e = ea < eb ? ea : eb;
		bool same = oa == NO_MEMBER ? ob == NO_MEMBER : ob != NO_MEMBER && map[oa] == ob;

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
		double held = o == NO_MEMBER ? 0 : small->members[o].weight;

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

		if (o != NO_MEMBER)
			same += (double)count_congruent(first[o], first[o] + b->members[o].weight,
							s % g, g);
	}
	free(first);
	return 1.0 - same / lcm;
}

/* Rendezvous: exact when at most one member's weight differs (adding and removing included):
 * only that member's scores change, so exactly the difference of its shares moves. */
static int moved_rendezvous(const struct pl_placement *a, const struct pl_placement *b,
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

int pl_moved_fraction(const struct pl_placement *from, const struct pl_placement *to,
		      double *fraction)
{
	const struct pl_placement *small = from, *large = to;
	uint32_t *map;
	int rc = 0;

	if (from == NULL || to == NULL || fraction == NULL || !same_hashing(from, to))
		return -EINVAL;
	if (from->kind == KIND_RENDEZVOUS)
		return moved_rendezvous(from, to, fraction);
	if ((from->kind == KIND_JUMP || from->kind == KIND_MODULO) &&
	    (from->nslots == 0 || to->nslots == 0)) {
		*fraction = from->nslots == to->nslots ? 0 : 1;
		return 0;
	}
	if (from->kind == KIND_JUMP && from->nslots > to->nslots) {
		small = to;
		large = from;
	}
	map = name_map(large, small);
	if (map == NULL)
		return -ENOMEM;
	switch (from->kind) {
	case KIND_JUMP:
		*fraction = moved_jump(small, large, map);
		break;
	case KIND_MODULO:
		*fraction = moved_modulo(large, small, map);
		rc = *fraction < 0 ? -ENOMEM : 0;
		break;
	default:
		*fraction = moved_segments(large, small, map);
		break;
	}
	free(map);
	if (rc == 0)
		*fraction = *fraction < 0 ? 0 : *fraction > 1 ? 1 : *fraction;
	return rc;
}
