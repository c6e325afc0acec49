/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Space-Saving sketch: add (one writer, no allocation), merge, top, guarantees. The entries
 * are parallel arrays (hash, count, error, length, key); beside them a hash index finds a
 * held key and a min-heap by count names the entry a new key replaces, so that a worker's
 * sample costs the same for K = 64 and K = 4096 (a linear scan for both was O(K) per sample:
 * ~800 instructions at K = 64, ~50,000 at 4,096, every 64th request).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "hotkey.h"

uint64_t hk_hash(const void *key, size_t len)
{
	return XXH3_64bits(key, len);
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Slots of the hash index of a K-key sketch: a power of two, at least 2K (load <= 1/2). */
static uint32_t index_slots(uint32_t k)
{
	uint32_t t = 16;

	while (t < 2 * k)
		t <<= 1;
	return t;
}

size_t hk_sketch_bytes(uint32_t k)
{
	return align8(sizeof(struct hk_sketch)) + 3 * sizeof(uint64_t) * (size_t)k + align8(k) +
	       align8((size_t)k * HK_KEY_MAX) + align8(sizeof(uint16_t) * index_slots(k)) +
	       2 * align8(sizeof(uint16_t) * (size_t)k);
}

struct hk_sketch *hk_sketch_init(void *mem, uint32_t k)
{
	struct hk_sketch *s = mem;
	uint8_t *p = mem;

	if (k == 0 || k > HK_K_MAX || mem == NULL)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->cap = k;
	p += align8(sizeof(*s));
	s->hash = (uint64_t *)(void *)p;
	s->count = s->hash + k;
	s->err = s->count + k;
	s->len = (uint8_t *)(s->err + k);
	s->key = (uint8_t(*)[HK_KEY_MAX])(void *)(s->len + align8(k));
	p = (uint8_t *)s->key + align8((size_t)k * HK_KEY_MAX);
	s->index = (uint16_t *)(void *)p;
	s->index_mask = index_slots(k) - 1;
	p += align8(sizeof(uint16_t) * index_slots(k));
	s->heap = (uint16_t *)(void *)p;
	s->heap_pos = s->heap + align8(sizeof(uint16_t) * k) / sizeof(uint16_t);
	memset(s->index, 0, sizeof(uint16_t) * index_slots(k));
	return s;
}

void hk_sketch_reset(struct hk_sketch *s)
{
	s->n = 0;
	s->total = 0;
	s->floor = 0;
	memset(s->index, 0, sizeof(uint16_t) * (s->index_mask + 1u));
}

/* Index of the held key, or -1. */
static int64_t find(const struct hk_sketch *s, uint64_t hash, const uint8_t *key, size_t len)
{
	for (uint32_t p = (uint32_t)hash & s->index_mask;; p = (p + 1) & s->index_mask) {
		uint32_t e = s->index[p];

		if (e-- == 0)
			return -1;
		if (s->hash[e] == hash && s->len[e] == len && memcmp(s->key[e], key, len) == 0)
			return e;
	}
}

/* File entry @p i (its hash set) in the index. */
static void index_insert(struct hk_sketch *s, uint32_t i)
{
	uint32_t p = (uint32_t)s->hash[i] & s->index_mask;

	while (s->index[p] != 0)
		p = (p + 1) & s->index_mask;
	s->index[p] = (uint16_t)(i + 1);
}

/* Take entry @p i (filed, its hash unchanged since) out of the index. Backward-shift deletion:
 * each later entry of the probe run moves into the hole when its home slot is not between
 * the hole and it, so that no lookup ever stops early at the hole. */
static void index_remove(struct hk_sketch *s, uint32_t i)
{
	const uint32_t mask = s->index_mask;
	uint32_t hole = (uint32_t)s->hash[i] & mask, q;

	while (s->index[hole] != i + 1)
		hole = (hole + 1) & mask;
	for (q = (hole + 1) & mask; s->index[q] != 0; q = (q + 1) & mask) {
		uint32_t home = (uint32_t)s->hash[s->index[q] - 1] & mask;

		if (((q - home) & mask) >= ((q - hole) & mask)) {
			s->index[hole] = s->index[q];
			hole = q;
		}
	}
	s->index[hole] = 0;
}

/* Put heap place @p h's entry where its count belongs below (its count grew, or it is new
 * at the root). */
static void heap_down(struct hk_sketch *s, uint32_t h)
{
	uint32_t i = s->heap[h];
	uint64_t c = s->count[i];

	for (;;) {
		uint32_t m = 2 * h + 1;

		if (m >= s->n)
			break;
		if (m + 1 < s->n && s->count[s->heap[m + 1]] < s->count[s->heap[m]])
			m++;
		if (s->count[s->heap[m]] >= c)
			break;
		s->heap[h] = s->heap[m];
		s->heap_pos[s->heap[h]] = (uint16_t)h;
		h = m;
	}
	s->heap[h] = (uint16_t)i;
	s->heap_pos[i] = (uint16_t)h;
}

/* The same upwards, for an entry added last. */
static void heap_up(struct hk_sketch *s, uint32_t h)
{
	uint32_t i = s->heap[h];
	uint64_t c = s->count[i];

	while (h > 0 && s->count[s->heap[(h - 1) / 2]] > c) {
		s->heap[h] = s->heap[(h - 1) / 2];
		s->heap_pos[s->heap[h]] = (uint16_t)h;
		h = (h - 1) / 2;
	}
	s->heap[h] = (uint16_t)i;
	s->heap_pos[i] = (uint16_t)h;
}

/* The index and the heap of entries 0..n-1 anew (after their arrays were written whole). */
static void rebuild(struct hk_sketch *s)
{
	memset(s->index, 0, sizeof(uint16_t) * (s->index_mask + 1u));
	for (uint32_t i = 0; i < s->n; i++) {
		index_insert(s, i);
		s->heap[i] = (uint16_t)i;
		s->heap_pos[i] = (uint16_t)i;
	}
	for (uint32_t h = s->n / 2; h-- > 0;)
		heap_down(s, h);
}

static void put(struct hk_sketch *s, uint32_t i, uint64_t hash, const uint8_t *key, size_t len,
		uint64_t count, uint64_t err)
{
	s->hash[i] = hash;
	s->count[i] = count;
	s->err[i] = err;
	s->len[i] = (uint8_t)len;
	memcpy(s->key[i], key, len);
}

void hk_sketch_add(struct hk_sketch *s, uint64_t hash, const uint8_t *key, size_t len, uint64_t w)
{
	int64_t i;
	uint32_t m;

	if (len > HK_KEY_MAX)
		len = HK_KEY_MAX;
	s->total += w;
	i = find(s, hash, key, len);
	if (i >= 0) {
		s->count[i] += w;
		heap_down(s, s->heap_pos[i]);
		return;
	}
	if (s->n < s->cap) {
		m = s->n++;
		put(s, m, hash, key, len, w, 0);
		index_insert(s, m);
		s->heap[m] = (uint16_t)m;
		heap_up(s, m);
		return;
	}
	m = s->heap[0]; /* an entry of smallest count */
	/* The evicted key's true count is at most its count: the bound of every absent key. */
	if (s->count[m] > s->floor)
		s->floor = s->count[m];
	index_remove(s, m);
	put(s, m, hash, key, len, s->count[m] + w, s->count[m]);
	index_insert(s, m);
	heap_down(s, 0);
}

uint64_t hk_sketch_estimate(const struct hk_sketch *s, uint64_t hash, const uint8_t *key,
			    size_t len)
{
	int64_t i;

	if (len > HK_KEY_MAX)
		len = HK_KEY_MAX;
	i = find(s, hash, key, len);
	return i >= 0 ? s->count[i] : s->floor;
}

/* A merge candidate: which sketch (0 dst, 1 src) and index, its merged count and error. */
struct cand {
	uint64_t count;
	uint64_t err;
	uint32_t from;
	uint32_t idx;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->err != y->err)
		return x->err < y->err ? -1 : 1;
	return 0;
}

/* Candidates of the union: dst's keys with src's part (its count, or its floor), then src's
 * keys dst does not hold with dst's floor. @return how many. */
static uint32_t merge_candidates(const struct hk_sketch *dst, const struct hk_sketch *src,
				 struct cand *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < dst->n; i++) {
		int64_t j = find(src, dst->hash[i], dst->key[i], dst->len[i]);

		c[n++] = (struct cand){dst->count[i] + (j >= 0 ? src->count[j] : src->floor),
				       dst->err[i] + (j >= 0 ? src->err[j] : src->floor), 0, i};
	}
	for (uint32_t j = 0; j < src->n; j++)
		if (find(dst, src->hash[j], src->key[j], src->len[j]) < 0)
			c[n++] = (struct cand){src->count[j] + dst->floor, src->err[j] + dst->floor,
					       1, j};
	return n;
}

int hk_sketch_merge(struct hk_sketch *dst, const struct hk_sketch *src)
{
	struct cand *c = malloc(sizeof(*c) * ((size_t)dst->n + src->n + 1));
	void *mem = malloc(hk_sketch_bytes(dst->cap));
	struct hk_sketch *out = hk_sketch_init(mem, dst->cap);
	uint32_t n;

	if (c == NULL || out == NULL) {
		free(c);
		free(mem);
		return -ENOMEM;
	}
	n = merge_candidates(dst, src, c);
	qsort(c, n, sizeof(*c), cand_cmp);
	out->total = dst->total + src->total;
	out->floor = dst->floor + src->floor;
	for (uint32_t i = 0; i < n; i++) {
		const struct hk_sketch *f = c[i].from == 0 ? dst : src;

		if (i >= out->cap) {
			if (c[i].count > out->floor)
				out->floor = c[i].count; /* the largest dropped: sorted first */
			break;
		}
		put(out, out->n++, f->hash[c[i].idx], f->key[c[i].idx], f->len[c[i].idx],
		    c[i].count, c[i].err);
	}
	hk_sketch_copy(dst, out);
	free(c);
	free(mem);
	return 0;
}

int hk_sketch_copy(struct hk_sketch *dst, const struct hk_sketch *src)
{
	if (dst->cap < src->n)
		return -EINVAL;
	dst->n = src->n;
	dst->total = src->total;
	dst->floor = src->floor;
	memcpy(dst->hash, src->hash, src->n * sizeof(uint64_t));
	memcpy(dst->count, src->count, src->n * sizeof(uint64_t));
	memcpy(dst->err, src->err, src->n * sizeof(uint64_t));
	memcpy(dst->len, src->len, src->n);
	memcpy(dst->key, src->key, (size_t)src->n * HK_KEY_MAX);
	rebuild(dst);
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct hk_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->err != y->err)
		return x->err < y->err ? -1 : 1;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

uint32_t hk_sketch_top(const struct hk_sketch *s, struct hk_entry *out, uint32_t n)
{
	struct hk_entry *all = malloc(sizeof(*all) * (s->n + 1u));
	uint32_t k = 0;

	if (all == NULL)
		return 0;
	for (uint32_t i = 0; i < s->n; i++)
		all[i] =
			(struct hk_entry){s->hash[i], s->count[i], s->err[i], s->len[i], s->key[i]};
	qsort(all, s->n, sizeof(*all), entry_cmp);
	for (; k < n && k < s->n; k++)
		out[k] = all[k];
	free(all);
	return k;
}

uint32_t hk_sketch_guaranteed(const struct hk_sketch *s, uint32_t n)
{
	struct hk_entry *top = malloc(sizeof(*top) * (n + 1u));
	uint64_t low = UINT64_MAX; /* smallest lower bound among the first j */
	uint32_t got, best = 0;

	if (top == NULL)
		return 0;
	got = hk_sketch_top(s, top, n + 1);
	for (uint32_t j = 1; j <= n && j <= got; j++) {
		/* The (j+1)-th count bounds every key ranked lower, held or not; past the held
		 * keys, the floor does. */
		uint64_t next = j < got ? top[j].count : s->floor;

		if (next < s->floor)
			next = s->floor;
		if (top[j - 1].count - top[j - 1].err < low)
			low = top[j - 1].count - top[j - 1].err;
		if (low >= next)
			best = j;
	}
	free(top);
	return best;
}
