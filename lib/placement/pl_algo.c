/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithms: names, each kind's builder, and the two tables the cold paths dispatch
 * through: pl_kinds[] (a kind's operations) and pl_algos[] (an algorithm's descriptor, kind
 * and recipe).
 *
 * - Continuum algorithms (ring here; ketama and twemproxy through the point generators in
 *   compat.c) share one representation: points sorted stably by value, a sentinel point, and
 *   an index on the top bits of the hash (see index_build and pl_lookup.c).
 * - jump and modulo: one bucket per unit of weight, in member order.
 * - maglev fills a prime-sized table.
 * - rendezvous keeps one candidate entry per member with weight.
 *
 * A new algorithm over an existing kind is a name in PL_FOREACH_ALGO and one row of
 * pl_algos[] (plus its recipe for a continuum); a new kind also brings its section here
 * (plan, fill), its row of pl_kinds[], its walk start (pl_walk.c), its segments or moved
 * fraction (pl_share.c) and its case in pl_lookup.c's switch (the hot path).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "placement.h"
#include "placement_priv.h"

#define PL_INDEX_BITS_MIN 4
#define PL_INDEX_BITS_MAX 26

/* Seeds that keep the per-member hashes of maglev and rendezvous independent of the ring's. */
#define MAGLEV_SEED_OFFSET UINT64_C(0x6d61676c65762d6f)
#define MAGLEV_SEED_SKIP   UINT64_C(0x6d61676c65762d73)
#define RENDEZVOUS_SEED	   UINT64_C(0x72656e64657a766f)

/* ---------------------------------------------------------------------------------------- */
/* Names */

static const char *const hash_names[] = {
#define PL_HASH_NAME(e, s) s,
	PL_FOREACH_HASH(PL_HASH_NAME)
#undef PL_HASH_NAME
};

static const char *const param_names[] = {
#define PL_PARAM_NAME(e, s) s,
	PL_FOREACH_PARAM(PL_PARAM_NAME)
#undef PL_PARAM_NAME
};

const char *pl_algo_name(enum pl_algo a)
{
	return (unsigned)a < PL_ALGO_COUNT ? pl_algos[a].info.name : NULL;
}

int pl_algo_parse(const char *name, enum pl_algo *out)
{
	for (unsigned i = 0; name != NULL && i < PL_ALGO_COUNT; i++) {
		if (strcmp(name, pl_algos[i].info.name) == 0) {
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

const char *pl_param_name(enum pl_param p)
{
	return (unsigned)p < PL_PARAM_COUNT ? param_names[p] : NULL;
}

const struct pl_algo_info *pl_algo_info(enum pl_algo a)
{
	return (unsigned)a < PL_ALGO_COUNT ? &pl_algos[a].info : NULL;
}

/* ---------------------------------------------------------------------------------------- */
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

/* ---------------------------------------------------------------------------------------- */
/* Continuum: recipes, sort, index */

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
static int ring_points(const struct pl_config *cfg, const struct pl_member *members, uint32_t n,
		       const uint32_t *by_name, struct pl_point **out, size_t *count)
{
	uint32_t vnodes = cfg->vnodes;
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

/* The compat.c recipes, which need neither the configuration nor the name order. */
static int ketama_points(const struct pl_config *cfg, const struct pl_member *members, uint32_t n,
			 const uint32_t *by_name, struct pl_point **out, size_t *count)
{
	(void)cfg;
	(void)by_name;
	return pl_ketama_points(members, n, out, count);
}

static int twemproxy_points(const struct pl_config *cfg, const struct pl_member *members,
			    uint32_t n, const uint32_t *by_name, struct pl_point **out,
			    size_t *count)
{
	(void)cfg;
	(void)by_name;
	return pl_twemproxy_points(members, n, out, count);
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
 *   comparing pl_sub32(h) with pl_sub32(v[j]) decides unless they are equal;
 * - more runs, or owners that do not fit in 15 bits: PL_IDX_SLOW, and the split is s(k).
 * Equal sub32 values and PL_IDX_SLOW entries take the exact path (continuum_lookup_slow in
 * pl_lookup.c).
 */
static void index_build(struct pl_placement *p, uint64_t *idx, const struct pl_point *pts, size_t m)
{
	uint64_t nb = p->index_last;
	bool compact = p->n <= PL_IDX_OWNERS_MAX;
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
			idx[k] = idx_entry((uint32_t)s, PL_IDX_SLOW, 0);
		else if (runs == 1)
			idx[k] = idx_entry(UINT32_MAX, pts[s].member, pts[s].member);
		else
			idx[k] = idx_entry(pl_sub32(p, pts[cut].value), pts[s].member,
					   pts[e].member);
	}
}

/*
 * Continuum planner: the recipe's points, checked (only members with weight own points),
 * sorted stably, and the index geometry over them.
 */
static int continuum_plan(struct pl_placement *hdr, const struct pl_member *members, uint32_t n,
			  const uint32_t *by_name, struct pl_parts *parts)
{
	struct pl_point **pts = &parts->points;
	size_t *m = &parts->npoints;
	int rc;

	rc = pl_algos[hdr->cfg.algo].points(&hdr->cfg, members, n, by_name, pts, m);
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
		*m = 0;
		return rc;
	}
	if (*m > 0)
		index_geometry(hdr, *pts, *m, &parts->index_bits);
	return 0;
}

static int continuum_fill(struct pl_placement *p, const struct pl_parts *parts)
{
	if (parts->npoints == 0)
		return 0;
	memcpy(p->points, parts->points, parts->npoints * sizeof(*p->points));
	p->points[parts->npoints].value = UINT64_MAX;
	p->points[parts->npoints].member = parts->points[0].member;
	index_build(p, (uint64_t *)p->index, p->points, parts->npoints);
	return 0;
}

static uint64_t continuum_point_count(const struct pl_placement *p)
{
	return p->npoints;
}

/* ---------------------------------------------------------------------------------------- */
/* Jump and modulo: buckets */

/*
 * jump and modulo buckets: in member order, `weight` consecutive buckets per member (weight 0:
 * none). Jump moves only keys to or from the changed buckets when buckets are added or removed
 * at the end, so its movement is minimal exactly when the LAST member is added, removed or
 * reweighted; changing any other member renumbers the buckets after it and moves keys between
 * members that did not change. modulo is the non-minimal reference.
 */
static int buckets_plan(struct pl_placement *hdr, const struct pl_member *members, uint32_t n,
			const uint32_t *by_name, struct pl_parts *parts)
{
	(void)members;
	(void)n;
	(void)by_name;
	if (hdr->total_weight > PL_SLOTS_MAX)
		return -EINVAL;
	parts->nslots = (uint32_t)hdr->total_weight;
	return 0;
}

static int buckets_fill(struct pl_placement *p, const struct pl_parts *parts)
{
	uint32_t k = 0;

	(void)parts;
	for (uint32_t i = 0; i < p->n; i++)
		for (uint32_t w = 0; w < p->members[i].weight; w++)
			p->slots[k++] = i;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Maglev */

/* The table size must be a prime no larger than PL_SLOTS_MAX, and one entry per member with
 * weight at least. */
static int maglev_plan(struct pl_placement *hdr, const struct pl_member *members, uint32_t n,
		       const uint32_t *by_name, struct pl_parts *parts)
{
	uint32_t size = hdr->cfg.maglev_size;

	(void)members;
	(void)n;
	(void)by_name;
	if (size > PL_SLOTS_MAX || !is_prime(size) || size < hdr->weighted)
		return -EINVAL;
	parts->nslots = size;
	return 0;
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

static int maglev_table(const struct pl_member *members, uint32_t n, const uint32_t *by_name,
			uint32_t size, uint32_t *table)
{
	struct maglev_turn *st;
	uint32_t wmax = 0, filled = 0;

	for (uint32_t i = 0; i < size; i++)
		table[i] = PL_NO_MEMBER;
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
				while (table[t->pos] != PL_NO_MEMBER)
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

static int maglev_fill(struct pl_placement *p, const struct pl_parts *parts)
{
	(void)parts;
	return maglev_table(p->members, p->n, p->by_name, p->nslots, p->slots);
}

static uint64_t maglev_point_count(const struct pl_placement *p)
{
	return p->nslots;
}

/* ---------------------------------------------------------------------------------------- */
/* Rendezvous */

static int rendezvous_plan(struct pl_placement *hdr, const struct pl_member *members, uint32_t n,
			   const uint32_t *by_name, struct pl_parts *parts)
{
	(void)members;
	(void)n;
	(void)by_name;
	parts->nrv = hdr->weighted;
	return 0;
}

static int rendezvous_fill(struct pl_placement *p, const struct pl_parts *parts)
{
	(void)parts;
	for (uint32_t i = 0, k = 0; i < p->n; i++) {
		const struct pl_member *m = &p->members[i];

		if (m->weight == 0)
			continue;
		p->rv[k].seed = XXH3_64bits_withSeed(m->name, strlen(m->name), RENDEZVOUS_SEED);
		p->rv[k].weight = m->weight;
		p->rv[k].member = i;
		p->rv[k].rank = p->rank[i];
		k++;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The tables: each kind's cold operations, then one row per algorithm */

/* clang-format off */
const struct pl_kind_ops pl_kinds[PL_KIND_COUNT] = {
	[PL_KIND_CONTINUUM] = {
		.plan = continuum_plan,
		.fill = continuum_fill,
		.point_count = continuum_point_count,
		.walk_start = pl_continuum_walk_start,
		.segment = pl_continuum_segment,
	},
	[PL_KIND_JUMP] = {
		.plan = buckets_plan,
		.fill = buckets_fill,
		.walk_start = pl_jump_walk_start,
		.moved = pl_jump_moved,
	},
	[PL_KIND_MODULO] = {
		.plan = buckets_plan,
		.fill = buckets_fill,
		.walk_start = pl_modulo_walk_start,
		.moved = pl_modulo_moved,
	},
	[PL_KIND_MAGLEV] = {
		.plan = maglev_plan,
		.fill = maglev_fill,
		.point_count = maglev_point_count,
		.walk_start = pl_maglev_walk_start,
		.segment = pl_maglev_segment,
	},
	[PL_KIND_RENDEZVOUS] = {
		.plan = rendezvous_plan,
		.fill = rendezvous_fill,
		.replicas = pl_rendezvous_replicas,
		.bounded = pl_rendezvous_bounded,
		.moved = pl_rendezvous_moved,
	},
};
/* clang-format on */

/* The names, once, from PL_FOREACH_ALGO: the rows below point at them. */
#define PL_ALGO_NAME_VAR(e, s) static const char algo_name_##e[] = s;
PL_FOREACH_ALGO(PL_ALGO_NAME_VAR)
#undef PL_ALGO_NAME_VAR

#define P(x) PL_PARAM_BIT(PL_PARAM_##x)
#define ROW(e, kind_, points_, params_, movement_, exact_, bits_, key_hash_) \
	[PL_ALGO_##e] = {                                                    \
		.info = {.name = algo_name_##e,                              \
			 .params = (params_),                                \
			 .movement = PL_MOVES_##movement_,                   \
			 .moved_exact = (exact_),                            \
			 .space_bits = (bits_),                              \
			 .default_key_hash = PL_HASH_##key_hash_},           \
		.kind = PL_KIND_##kind_,                                     \
		.points = (points_),                                         \
	}

/* Columns: algorithm, kind, continuum recipe, parameters read, movement class, whether
 * pl_moved_fraction() is exact for every change, key hash bits, default key hash (P(KEY_HASH)). */
/* clang-format off */
const struct pl_algo_def pl_algos[PL_ALGO_COUNT] = {
ROW(RING,       CONTINUUM,  ring_points,      P(VNODES),      MINIMAL,      true,  64, XXH3),
ROW(KETAMA,     CONTINUUM,  ketama_points,    0,              REPOINTED,    true,  32, XXH3),
ROW(TWEMPROXY,  CONTINUUM,  twemproxy_points, P(KEY_HASH),    REPOINTED,    true,  32, FNV1A_64),
ROW(JUMP,       JUMP,       NULL,             0,              MINIMAL_LAST, true,  64, XXH3),
ROW(RENDEZVOUS, RENDEZVOUS, NULL,             0,              MINIMAL,      false, 64, XXH3),
ROW(MAGLEV,     MAGLEV,     NULL,             P(MAGLEV_SIZE), NEAR_MINIMAL, true,  64, XXH3),
ROW(MODULO,     MODULO,     NULL,             0,              MOST,         true,  64, XXH3),
};
/* clang-format on */
#undef ROW
#undef P
