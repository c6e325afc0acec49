/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Space-Saving sketch: its stated bounds (true <= count <= true + err, err <= N / K,
 * every key above N / K held, absent keys below the floor) checked against exact counts of
 * zipf streams (skews 0.99 and 1.2), the guaranteed top list, and merged per-worker sketches
 * (bounds with the fleet's N, keys above 2 N / K held, the top 10 found); and the index and
 * heap that make an add O(log K) under streams of constant eviction.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hotkey.h"

#define KEYS	20000
#define SAMPLES 300000
#define K	64
#define WORKERS 4

static uint64_t rng_state;

/* xorshift64*: a fixed sequence, so a failure reproduces. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1du;
}

static double cdf[KEYS];

static void zipf_init(double skew)
{
	double sum = 0;

	for (int i = 0; i < KEYS; i++)
		cdf[i] = sum += 1.0 / pow(i + 1, skew);
	for (int i = 0; i < KEYS; i++)
		cdf[i] /= sum;
}

static int zipf_draw(void)
{
	double u = (double)(rng() >> 11) / 9007199254740992.0;
	int lo = 0, hi = KEYS - 1;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Key of rank r: a scrambled name, so rank order is not key order. */
static size_t key_name(int r, char *buf)
{
	return (size_t)sprintf(buf, "user:%08x:%d", (unsigned)(r * 2654435761u), r);
}

static int key_rank(const uint8_t *key, uint32_t len)
{
	char buf[64];
	const char *colon;

	assert_true(len < sizeof(buf));
	memcpy(buf, key, len);
	buf[len] = '\0'; /* the sketch's key bytes are not NUL-terminated */
	colon = strrchr(buf, ':');
	assert_non_null(colon);
	return atoi(colon + 1);
}

static struct hk_sketch *new_sketch(uint32_t k)
{
	struct hk_sketch *s = hk_sketch_init(aligned_alloc(8, (hk_sketch_bytes(k) + 7) & ~7ul), k);

	assert_non_null(s);
	return s;
}

static void add_rank(struct hk_sketch *s, int r)
{
	char buf[64];
	size_t len = key_name(r, buf);

	hk_sketch_add(s, hk_hash(buf, len), (const uint8_t *)buf, len, 1);
}

/* The bounds of a sketch (or a merge of sketches) over a stream of exact counts @p truth:
 * @p hold_above: every key with a larger true count must be held. */
static void check_bounds(const struct hk_sketch *s, const uint64_t *truth, uint64_t n,
			 uint64_t hold_above)
{
	bool *held = calloc(KEYS, sizeof(bool));
	char buf[64];

	assert_int_equal(s->total, n);
	assert_true(s->floor <= n / K);
	for (uint32_t i = 0; i < s->n; i++) {
		int r = key_rank(s->key[i], s->len[i]);

		held[r] = true;
		assert_true(truth[r] <= s->count[i]);
		assert_true(s->count[i] <= truth[r] + s->err[i]);
		assert_true(s->err[i] <= n / K);
	}
	for (int r = 0; r < KEYS; r++) {
		size_t len = key_name(r, buf);
		uint64_t est = hk_sketch_estimate(s, hk_hash(buf, len), (uint8_t *)buf, len);

		assert_true(est >= truth[r]); /* an upper bound, held or not */
		if (truth[r] > hold_above)
			assert_true(held[r]);
		if (!held[r])
			assert_true(truth[r] <= s->floor);
	}
	free(held);
}

/* The first @p g of the sketch's top list are the true top g (as a set; ties aside). */
static void check_guaranteed(const struct hk_sketch *s, const uint64_t *truth, uint32_t g)
{
	struct hk_entry top[K];
	uint32_t n = hk_sketch_top(s, top, g);

	assert_int_equal(n, g);
	for (uint32_t i = 0; i < g; i++) {
		uint64_t t = truth[key_rank(top[i].key, top[i].len)];
		uint32_t above = 0;

		for (int r = 0; r < KEYS; r++)
			above += truth[r] > t;
		assert_true(above < g); /* within the true top g */
	}
}

/* True top 10 among the sketch's first 10. */
static uint32_t recall10(const struct hk_sketch *s)
{
	struct hk_entry top[10];
	uint32_t n = hk_sketch_top(s, top, 10), hit = 0;

	for (uint32_t i = 0; i < n; i++)
		hit += key_rank(top[i].key, top[i].len) < 10; /* zipf: ranks 0..9 are the top */
	return hit;
}

static void zipf_single(double skew, uint64_t seed, uint32_t want_recall)
{
	uint64_t *truth = calloc(KEYS, sizeof(uint64_t));
	struct hk_sketch *s = new_sketch(K);
	uint32_t g;

	rng_state = seed;
	zipf_init(skew);
	for (int i = 0; i < SAMPLES; i++) {
		int r = zipf_draw();

		truth[r]++;
		add_rank(s, r);
	}
	check_bounds(s, truth, SAMPLES, SAMPLES / K);
	g = hk_sketch_guaranteed(s, 10);
	print_message("# skew %.2f: floor %lu (N/K %d), guaranteed top %u of 10, recall %u/10\n",
		      skew, (unsigned long)s->floor, SAMPLES / K, g, recall10(s));
	assert_true(g >= 1); /* the head of a zipf stream stands out */
	check_guaranteed(s, truth, g);
	assert_true(recall10(s) >= want_recall);
	free(truth);
	free(s);
}

static void test_zipf_099(void **state)
{
	(void)state;
	zipf_single(0.99, 0x9e3779b97f4a7c15u, 9);
}

static void test_zipf_12(void **state)
{
	(void)state;
	zipf_single(1.2, 0x1234567887654321u, 10);
}

/* Per-worker sketches over a random split of one stream, merged: the bounds with the whole
 * stream's N (keys above 2 N / K held), and merge order does not matter for the top. */
static void zipf_merged(double skew, uint64_t seed)
{
	uint64_t *truth = calloc(KEYS, sizeof(uint64_t));
	struct hk_sketch *w[WORKERS], *m = new_sketch(K), *m2 = new_sketch(K);

	rng_state = seed;
	zipf_init(skew);
	for (int i = 0; i < WORKERS; i++)
		w[i] = new_sketch(K);
	for (int i = 0; i < SAMPLES; i++) {
		int r = zipf_draw();

		truth[r]++;
		add_rank(w[rng() % WORKERS], r);
	}
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(hk_sketch_merge(m, w[i]), 0);
	for (int i = WORKERS - 1; i >= 0; i--)
		assert_int_equal(hk_sketch_merge(m2, w[i]), 0);
	check_bounds(m, truth, SAMPLES, 2 * SAMPLES / K);
	check_bounds(m2, truth, SAMPLES, 2 * SAMPLES / K);
	print_message("# merged skew %.2f: floor %lu, guaranteed %u, recall %u/10\n", skew,
		      (unsigned long)m->floor, hk_sketch_guaranteed(m, 10), recall10(m));
	assert_true(recall10(m) >= (skew > 1 ? 10 : 9));
	assert_int_equal(recall10(m), recall10(m2));
	check_guaranteed(m, truth, hk_sketch_guaranteed(m, 10));
	for (int i = 0; i < WORKERS; i++)
		free(w[i]);
	free(m);
	free(m2);
	free(truth);
}

static void test_merge_099(void **state)
{
	(void)state;
	zipf_merged(0.99, 0xdeadbeefcafef00du);
}

static void test_merge_12(void **state)
{
	(void)state;
	zipf_merged(1.2, 0x0123456789abcdefu);
}

static void add_str(struct hk_sketch *s, const char *k, uint64_t w)
{
	hk_sketch_add(s, hk_hash(k, strlen(k)), (const uint8_t *)k, strlen(k), w);
}

static uint64_t est_str(const struct hk_sketch *s, const char *k)
{
	return hk_sketch_estimate(s, hk_hash(k, strlen(k)), (const uint8_t *)k, strlen(k));
}

/* Space-Saving by hand with K = 2: a a b c -> c replaces b (count 2, error 1). */
static void test_by_hand(void **state)
{
	struct hk_sketch *s = new_sketch(2), *t = new_sketch(2);
	struct hk_entry top[2];

	(void)state;
	add_str(s, "a", 1);
	add_str(s, "a", 1);
	add_str(s, "b", 1);
	add_str(s, "c", 1);
	assert_int_equal(hk_sketch_top(s, top, 2), 2);
	assert_int_equal(top[0].count, 2);
	assert_memory_equal(top[0].key, "a", 1);
	assert_int_equal(top[0].err, 0);
	assert_int_equal(top[1].count, 2);
	assert_memory_equal(top[1].key, "c", 1);
	assert_int_equal(top[1].err, 1);
	assert_int_equal(s->floor, 1);
	assert_int_equal(est_str(s, "b"), 1);		 /* absent: the floor */
	assert_int_equal(hk_sketch_guaranteed(s, 1), 1); /* a: 2 - 0 >= c's 2 */
	/* Merge with {b: 3}: b = 3 + s's floor 1, a = 2 + t's floor 0 (t not full). */
	add_str(t, "b", 3);
	assert_int_equal(hk_sketch_merge(s, t), 0);
	assert_int_equal(s->total, 7);
	assert_int_equal(est_str(s, "b"), 4);
	assert_int_equal(hk_sketch_top(s, top, 2), 2);
	assert_memory_equal(top[0].key, "b", 1);
	assert_int_equal(top[0].err, 1);
	assert_int_equal(s->floor, 2); /* c (2) was dropped: it ties a, a has less error */
	hk_sketch_reset(s);
	assert_int_equal(s->n, 0);
	assert_int_equal(est_str(s, "a"), 0);
	free(s);
	free(t);
}

/* Keys are told apart by their bytes, not only by the hash; long keys are cut at HK_KEY_MAX. */
static void test_collisions_and_length(void **state)
{
	struct hk_sketch *s = new_sketch(4);
	uint8_t long_key[300];

	(void)state;
	hk_sketch_add(s, 42, (const uint8_t *)"x", 1, 1);
	hk_sketch_add(s, 42, (const uint8_t *)"y", 1, 5);
	assert_int_equal(s->n, 2);
	assert_int_equal(hk_sketch_estimate(s, 42, (const uint8_t *)"x", 1), 1);
	assert_int_equal(hk_sketch_estimate(s, 42, (const uint8_t *)"y", 1), 5);
	memset(long_key, 'k', sizeof(long_key));
	hk_sketch_add(s, 7, long_key, sizeof(long_key), 1);
	assert_int_equal(s->len[2], HK_KEY_MAX);
	assert_null(hk_sketch_init(long_key, 0));
	assert_null(hk_sketch_init(long_key, HK_K_MAX + 1));
	free(s);
}

/* What the add path's index and heap must keep true after any stream: every held key is
 * found (its estimate is its own count) and held once, the counts sum to N (an eviction
 * hands the evicted count on), and once full no held count is below the floor (the key
 * replaced was one of smallest count). */
static void check_structure(const struct hk_sketch *s)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		assert_int_equal(hk_sketch_estimate(s, s->hash[i], s->key[i], s->len[i]),
				 s->count[i]);
		for (uint32_t j = 0; j < i; j++)
			assert_false(s->hash[j] == s->hash[i] && s->len[j] == s->len[i] &&
				     memcmp(s->key[j], s->key[i], s->len[i]) == 0);
		sum += s->count[i];
		if (s->n == s->cap)
			assert_true(s->count[i] >= s->floor);
	}
	assert_int_equal(sum, s->total);
}

/* Streams that evict all the time, from K = 1 to HK_K_MAX, with real hashes and with hashes
 * that all fall on a few index slots (long probe runs, wrapping the index's end, so each
 * eviction's deletion shifts entries back): the structure holds after every step checked,
 * and an evicted key's estimate is the floor. */
static void test_index_and_heap(void **state)
{
	static const uint32_t ks[] = {1, 3, 8, 64, HK_K_MAX};

	(void)state;
	rng_state = 0x9e3779b97f4a7c15u;
	for (size_t t = 0; t < sizeof(ks) / sizeof(ks[0]); t++) {
		for (int clustered = 0; clustered < 2; clustered++) {
			uint32_t k = ks[t], space = 3 * k + 2;
			uint32_t steps = k == HK_K_MAX ? 60000 : 20000;
			struct hk_sketch *s = new_sketch(k);

			for (uint32_t i = 0; i < steps; i++) {
				char buf[32];
				uint32_t r = (uint32_t)(rng() % space);
				size_t len = (size_t)sprintf(buf, "key:%u", r);
				uint64_t hash = hk_hash(buf, len);

				if (clustered) /* home slot 0..3 of the last few, whatever K */
					hash = (hash << 32) | (UINT32_MAX - (uint32_t)(r % 4));
				hk_sketch_add(s, hash, (const uint8_t *)buf, len, 1 + rng() % 3);
				if (k < 64 || i % 4999 == 0)
					check_structure(s);
			}
			check_structure(s);
			assert_int_equal(s->n, k);
			free(s);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_hand),	       cmocka_unit_test(test_collisions_and_length),
		cmocka_unit_test(test_zipf_099),       cmocka_unit_test(test_zipf_12),
		cmocka_unit_test(test_merge_099),      cmocka_unit_test(test_merge_12),
		cmocka_unit_test(test_index_and_heap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
