/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Build and memory: validation, the block a placement lives in (build, clone, free) and the
 * accessors. What each algorithm builds into the block comes from its row of pl_algos[]
 * (pl_algo.c).
 *
 * Memory: one 64-byte aligned block per placement holds the struct and all its arrays, which
 * are reached through pointers into that block. pl_clone() copies the block and rebases the
 * pointers; pl_free() hands the block back to the allocator that made it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "placement_priv.h"

#define BLOCK_ALIGN 64

/* ---------------------------------------------------------------------------------------- */
/* Small helpers */

static size_t align_up(size_t v)
{
	return (v + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1);
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
/* Validation */

/* Fills in the defaults. Kind-specific limits are the planners' (e.g. maglev's size). */
static int check_config(struct pl_config *cfg)
{
	const struct pl_algo_def *d;

	if ((unsigned)cfg->algo >= PL_ALGO_COUNT || (unsigned)cfg->key_hash >= PL_HASH_COUNT)
		return -EINVAL;
	d = &pl_algos[cfg->algo];
	/* The key hash is the algorithm's own unless it reads one (twemproxy's `hash:`). */
	if (d->info.params & PL_PARAM_BIT(PL_PARAM_KEY_HASH)) {
		if (cfg->key_hash == PL_HASH_XXH3)
			cfg->key_hash = d->info.default_key_hash;
	} else if (cfg->key_hash != PL_HASH_XXH3) {
		return -EINVAL;
	}
	if ((cfg->hash_tag[0] == '\0') != (cfg->hash_tag[1] == '\0'))
		return -EINVAL;
	if (cfg->vnodes == 0)
		cfg->vnodes = PL_DEFAULT_VNODES;
	if (cfg->maglev_size == 0)
		cfg->maglev_size = PL_DEFAULT_MAGLEV_TABLE;
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
/* The block */

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
static size_t block_layout(struct pl_placement *p, char *base, const struct pl_parts *parts)
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
	PL_CARVE(rv, parts->nrv);
#undef PL_CARVE
	return off;
}

static void init_header(struct pl_placement *p, const struct pl_config *cfg,
			const struct pl_member *members, uint32_t n)
{
	const struct pl_algo_def *d = &pl_algos[cfg->algo];
	uint32_t w0 = 0;

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->kind = d->kind;
	p->n = n;
	p->space_bits = d->info.space_bits;
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
	struct pl_parts parts = {0};
	const struct pl_kind_ops *ops;
	uint32_t *by_name = NULL;
	int rc = -EINVAL;

	if (members == NULL || n == 0 || n > PL_MEMBERS_MAX || check_config(&c) != 0)
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
	ops = &pl_kinds[hdr.kind];
	rc = ops->plan(&hdr, members, n, by_name, &parts);
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
	rc = ops->fill(p, &parts);
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
	const struct pl_kind_ops *ops = &pl_kinds[p->kind];

	return ops->point_count != NULL ? ops->point_count(p) : 0;
}
