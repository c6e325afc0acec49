/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_OBSERVE_H
#define RINGWAY_OBSERVE_H

/**
 * @file
 * Latency observation without DPDK: a log-linear histogram of fixed buckets (one instance per
 * worker and per thing measured, plain uint64_t counters, no atomics), merged by the reader,
 * with quantiles of a stated error bound; and helpers that write the Prometheus text
 * exposition format (version 0.0.4).
 *
 * Buckets. A value v (an integer; ringway records nanoseconds) falls in bucket
 *   v                                          when v < 2 * OBS_SUB (exact, width 1)
 *   (m - OBS_SUB_BITS + 1) * OBS_SUB + s       otherwise, m = floor(log2 v), s = the
 *                                              OBS_SUB_BITS bits of v below its top bit
 * so every power-of-two octave is cut in OBS_SUB equal parts: a bucket's width is at most
 * 1/OBS_SUB of its lower bound. Values of 2^OBS_MAX_BITS and more go to a last bucket of
 * their own (obs_hist_saturated() counts them).
 *
 * Error bound. obs_hist_quantile() returns the midpoint of the bucket that holds the rank
 * ceil(q * count) value: within half a bucket width of that recorded value, so its relative
 * error is at most 1 / (2 * OBS_SUB) = 3.125 % (0 below 2 * OBS_SUB), for values under
 * 2^OBS_MAX_BITS.
 *
 * Concurrency. A histogram has one writer (its worker). Readers (another thread) copy it with
 * obs_hist_merge() while it is written: each bucket is read whole (aligned 64-bit words), so
 * a merged copy is a moment's view, as the router's other counters are.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Sub-buckets per octave, as a power of two. */
#define OBS_SUB_BITS 4
#define OBS_SUB	     (1u << OBS_SUB_BITS)
/** Values from 2^OBS_MAX_BITS on (in ns: 17.2 s) saturate into the last bucket. */
#define OBS_MAX_BITS 34
/** Buckets of a histogram: 496 below 2^OBS_MAX_BITS and one for the values above
 *  (3984 bytes with the sum). */
#define OBS_BUCKETS ((OBS_MAX_BITS - OBS_SUB_BITS + 1) * OBS_SUB + 1)

/** A histogram: counts per bucket and the sum of the values recorded (for a mean and for
 *  Prometheus' _sum). Zero-initialised is empty. */
struct obs_hist {
	uint64_t bucket[OBS_BUCKETS];
	uint64_t sum;
};

/** The bucket of value @p v. */
static inline uint32_t obs_bucket(uint64_t v)
{
	uint32_t e;

	if (v >> OBS_MAX_BITS)
		return OBS_BUCKETS - 1;
	/* e = octave - OBS_SUB_BITS, 0 below 2 * OBS_SUB (the OR): v >> e is then 16..31 with
	 * the sub-bucket in its low bits (e * OBS_SUB + v >> e = (e + 1) * OBS_SUB + sub), or
	 * v itself below 2 * OBS_SUB, as the exact buckets there are. One branch. */
	e = 63u - (uint32_t)__builtin_clzll(v | OBS_SUB) - OBS_SUB_BITS;
	return e * OBS_SUB + (uint32_t)(v >> e);
}

/** Record @p n values of @p v (n = 1: one). Writer only; no allocation, no branch but the
 *  bucket's. */
static inline void obs_hist_add(struct obs_hist *h, uint64_t v, uint64_t n)
{
	h->bucket[obs_bucket(v)] += n;
	h->sum += v * n;
}

/**
 * Histograms of @p n members (the nodes a worker talks to) laid out bucket-major: the counts
 * of bucket b for members 0..n-1 are adjacent, and the sums are one dense array. Members whose
 * values fall in the same few buckets (round trips of similar nodes) share cache lines and
 * pages, so a record touches lines that stay hot however many members there are; a
 * struct obs_hist per member would put each one on its own page. One writer; readers copy a
 * member out with obs_set_get() / obs_set_merge().
 */
struct obs_hist_set {
	uint64_t *count; /**< [OBS_BUCKETS][n] */
	uint64_t *sum;	 /**< [n] */
	uint32_t n;
};

/** Bytes of memory a set of @p n members needs (zeroed by the caller: empty). */
size_t obs_set_bytes(uint32_t n);

/** Make @p s a set of @p n members over @p mem (obs_set_bytes(n) bytes, 8-byte aligned). */
void obs_set_init(struct obs_hist_set *s, void *mem, uint32_t n);

/** Record value @p v for member @p i (< n). Writer only. */
static inline void obs_set_add(struct obs_hist_set *s, uint32_t i, uint64_t v)
{
	s->count[(size_t)obs_bucket(v) * s->n + i]++;
	s->sum[i] += v;
}

/** @p dst += member @p i of @p s. */
void obs_set_merge(struct obs_hist *dst, const struct obs_hist_set *s, uint32_t i);

/** Lowest value of bucket @p b, and the first value past it (b < OBS_BUCKETS; the last,
 *  saturated bucket: 2^OBS_MAX_BITS and UINT64_MAX). */
uint64_t obs_bucket_lower(uint32_t b);
uint64_t obs_bucket_upper(uint32_t b);

/** Values recorded. */
uint64_t obs_hist_count(const struct obs_hist *h);

/** Values recorded at or above 2^OBS_MAX_BITS (their quantiles are not bounded). */
uint64_t obs_hist_saturated(const struct obs_hist *h);

/** @p dst += @p src, bucket by bucket (merging per-worker instances). */
void obs_hist_merge(struct obs_hist *dst, const struct obs_hist *src);

/** @p dst = @p a - @p b, where @p b is an earlier copy of the same growing histogram (a
 *  window's values); a bucket that shrank (not an earlier copy) counts 0. */
void obs_hist_sub(struct obs_hist *dst, const struct obs_hist *a, const struct obs_hist *b);

/**
 * The @p q quantile (0 < q <= 1) of the values in @p h: the midpoint of the bucket holding
 * the value of rank ceil(q * count) (see the error bound above). @return 0 when @p h is
 * empty or q is out of range.
 */
double obs_hist_quantile(const struct obs_hist *h, double q);

/** Values recorded at or below @p v (for v a bucket's upper bound - 1, exact). */
uint64_t obs_hist_count_le(const struct obs_hist *h, uint64_t v);

/* ---- Prometheus text exposition -------------------------------------------------------- */

/** A growing text buffer. Zero-initialised is empty; oom is set (and text dropped) when it
 *  cannot grow. */
struct obs_text {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

/** Append printf-style text. */
void obs_text_appendf(struct obs_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Free the buffer and make @p t empty. */
void obs_text_release(struct obs_text *t);

/** Metric types of the exposition. */
enum obs_prom_type {
	OBS_PROM_COUNTER,
	OBS_PROM_GAUGE,
	OBS_PROM_HISTOGRAM,
};

/** A label: name (a valid label name, [a-zA-Z_][a-zA-Z0-9_]*) and value (any text; escaped
 *  by the writer). */
struct obs_label {
	const char *name;
	const char *value;
};

/** True when @p name is a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool obs_prom_name_ok(const char *name);

/** "# HELP name help" and "# TYPE name type" lines: once per metric family, before its
 *  samples. @p help is escaped (backslash, newline). */
void obs_prom_family(struct obs_text *t, const char *name, const char *help,
		     enum obs_prom_type type);

/** One sample "name{labels} value" with @p n labels (0: no braces). */
void obs_prom_sample(struct obs_text *t, const char *name, const struct obs_label *labels, size_t n,
		     uint64_t value);

/**
 * One histogram's samples (the family line written before): name_bucket{labels,le="..."}
 * cumulative counts at the upper bounds of buckets @p first, first + step, ... up to @p last
 * (bounds where the histogram is exact), then le="+Inf", name_sum and name_count. Values
 * are multiplied by @p scale (1e-9: ns recorded, seconds exposed).
 */
void obs_prom_histogram(struct obs_text *t, const char *name, const struct obs_label *labels,
			size_t n, const struct obs_hist *h, double scale, uint32_t first,
			uint32_t last, uint32_t step);

/** Bytes of one formatted bound, `le="<%.9g of the bound>"} ` (at most 23) and its NUL. */
#define OBS_PROM_LE_MAX 32

/**
 * The buckets a histogram exposes and their `le` labels, formatted once (by
 * obs_prom_bounds_init()) for every histogram written with the same scale and selection: a
 * router with 1,000 nodes writes 1,000 histograms of the same ~108 bounds per scrape, and
 * formatting a double is most of a line's cost. The last entry is +Inf (bucket
 * OBS_BUCKETS - 1). Read only once made, so it may be shared by threads.
 */
struct obs_prom_bounds {
	double scale;			       /**< values times scale: the exposed unit */
	uint32_t n;			       /**< entries, +Inf included (>= 1) */
	uint16_t bucket[OBS_BUCKETS];	       /**< the entries' buckets, ascending */
	uint8_t len[OBS_BUCKETS];	       /**< strlen(le[i]) */
	char le[OBS_BUCKETS][OBS_PROM_LE_MAX]; /**< `le="..."} `: the line up to its value */
};

/** Make @p pb the bounds obs_prom_histogram() writes for @p scale, @p first, @p last and
 *  @p step (step 0: 1). */
void obs_prom_bounds_init(struct obs_prom_bounds *pb, double scale, uint32_t first, uint32_t last,
			  uint32_t step);

/** obs_prom_histogram() with bounds made by obs_prom_bounds_init(): the same text, byte for
 *  byte, with no number formatted but the _sum. */
void obs_prom_histogram_with(struct obs_text *t, const char *name, const struct obs_label *labels,
			     size_t n, const struct obs_hist *h, const struct obs_prom_bounds *pb);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_OBSERVE_H */
