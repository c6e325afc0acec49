/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_HOTKEY_H
#define RINGWAY_HOTKEY_H

/**
 * @file
 * Hot-key detection without DPDK: a Space-Saving top-K sketch (Metwally, Agrawal and El Abbadi,
 * ICDT 2005) over key bytes, mergeable, so that each worker keeps its own (one writer, no
 * atomics) and the control lcore merges them.
 *
 * A sketch holds at most K keys, each with a count and an error. A key already held gets +w;
 * a new key takes a free entry (count w, error 0) or replaces the entry of smallest count m
 * (count m + w, error m). Over a stream of N (weighted) updates, for every key x held:
 *   true(x) <= count(x) <= true(x) + err(x),  err(x) <= floor <= N / K
 * and every key not held has true(x) <= floor (hk_sketch_floor: the largest count ever
 * evicted), so every key with true(x) > N / K is held.
 *
 * Merge (hk_sketch_merge): a key's merged count is the sum of its counts in both sketches,
 * taking the other sketch's floor where it is absent (an upper bound of its count there), and
 * likewise its error; the K largest are kept and the floor becomes the larger of the sum of
 * floors and the largest count dropped. So after merging sketches of N_1 .. N_j updates,
 * count(x) - true(x) <= err(x) <= (N_1 + ... + N_j) / K still holds, and every key with
 * true(x) > 2 (N_1 + ... + N_j) / K is held.
 *
 * Guaranteed top items (hk_sketch_guaranteed): the first j keys by count are exactly the true
 * top j when each of their lower bounds count - err is at least the (j+1)-th count (an upper
 * bound of every key ranked lower, held or not).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest key a sketch stores (memcached's limit). */
#define HK_KEY_MAX 250
/** Most keys a sketch may hold. */
#define HK_K_MAX 4096

/** A sketch: header, then its arrays in the same allocation (hk_sketch_bytes()). */
struct hk_sketch {
	uint32_t cap;	/**< K */
	uint32_t n;	/**< keys held */
	uint64_t total; /**< N: the sum of the weights added (merged: of both) */
	uint64_t floor; /**< upper bound of the count of any key not held */
	uint64_t *hash;
	uint64_t *count;
	uint64_t *err;
	uint8_t *len;
	uint8_t (*key)[HK_KEY_MAX];
	/* What makes an add O(1) expected (find) and O(log K) (the minimum), whatever K: a
	 * hash index of the held keys (open addressing, linear probing: entry index + 1, 0
	 * empty; index_mask + 1 slots, at least 2K) and a binary min-heap of entry indices by
	 * count (heap_pos: each entry's place in it). */
	uint16_t *index;
	uint16_t *heap;
	uint16_t *heap_pos;
	uint32_t index_mask;
};

/** One held key as hk_sketch_top() reports it. */
struct hk_entry {
	uint64_t hash;
	uint64_t count;
	uint64_t err;
	uint32_t len;
	const uint8_t *key; /**< points into the sketch */
};

/** The hash a sketch files @p key under (XXH3 64-bit). */
uint64_t hk_hash(const void *key, size_t len);

/** Bytes of a sketch of @p k keys (header and arrays, 8-byte aligned). */
size_t hk_sketch_bytes(uint32_t k);
/** Lay an empty sketch of @p k keys (1..HK_K_MAX) out in @p mem (hk_sketch_bytes(k) bytes,
 *  8-byte aligned). @return the sketch (at @p mem), or NULL for a bad @p k. */
struct hk_sketch *hk_sketch_init(void *mem, uint32_t k);
/** Forget every key (the arrays are kept). */
void hk_sketch_reset(struct hk_sketch *s);

/**
 * Add weight @p w of key @p key (@p len bytes, at most HK_KEY_MAX; longer keys are filed
 * under their first HK_KEY_MAX bytes) whose hk_hash() is @p hash. No allocation; O(log K)
 * (the heap), the key found in O(1) expected (the hash index).
 */
void hk_sketch_add(struct hk_sketch *s, uint64_t hash, const uint8_t *key, size_t len, uint64_t w);

/** Estimated count of @p key (its count if held, else the floor): an upper bound. */
uint64_t hk_sketch_estimate(const struct hk_sketch *s, uint64_t hash, const uint8_t *key,
			    size_t len);

/**
 * Merge @p src into @p dst (see the file comment); @p dst keeps its K. Off the fast path:
 * allocates scratch. @return 0 or -ENOMEM (then @p dst is unchanged).
 */
int hk_sketch_merge(struct hk_sketch *dst, const struct hk_sketch *src);

/** Copy @p src into @p dst (same K or larger). @return 0 or -EINVAL. */
int hk_sketch_copy(struct hk_sketch *dst, const struct hk_sketch *src);

/** The @p n (at most) keys of largest count, largest first (ties: smaller error first), into
 *  @p out. @return how many were written. */
uint32_t hk_sketch_top(const struct hk_sketch *s, struct hk_entry *out, uint32_t n);

/** How many of the first @p n keys of hk_sketch_top() are guaranteed to be the true top ones:
 *  the largest j <= n such that every one of the first j has count - err at least the
 *  (j+1)-th count (or the floor past the held keys; keys that tie may swap). 0 when memory
 *  runs out. */
uint32_t hk_sketch_guaranteed(const struct hk_sketch *s, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_HOTKEY_H */
