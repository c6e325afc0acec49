/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log-linear histogram's read side: bucket bounds, counts, merge, windows and quantiles.
 * The write side (obs_bucket, obs_hist_add) is inline in observe.h for the workers.
 */

#include <math.h>

#include "observe.h"

uint64_t obs_bucket_lower(uint32_t b)
{
	uint32_t g = b / OBS_SUB, s = b % OBS_SUB;

	if (b < 2 * OBS_SUB)
		return b;
	if (b >= OBS_BUCKETS - 1)
		return UINT64_C(1) << OBS_MAX_BITS;
	return (uint64_t)(OBS_SUB + s) << (g - 1);
}

uint64_t obs_bucket_upper(uint32_t b)
{
	if (b < 2 * OBS_SUB)
		return (uint64_t)b + 1;
	if (b >= OBS_BUCKETS - 1)
		return UINT64_MAX;
	return obs_bucket_lower(b) + (UINT64_C(1) << (b / OBS_SUB - 1));
}

uint64_t obs_hist_count(const struct obs_hist *h)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < OBS_BUCKETS; b++)
		n += h->bucket[b];
	return n;
}

uint64_t obs_hist_saturated(const struct obs_hist *h)
{
	return h->bucket[OBS_BUCKETS - 1];
}

void obs_hist_merge(struct obs_hist *dst, const struct obs_hist *src)
{
	for (uint32_t b = 0; b < OBS_BUCKETS; b++)
		dst->bucket[b] += src->bucket[b];
	dst->sum += src->sum;
}

void obs_hist_sub(struct obs_hist *dst, const struct obs_hist *a, const struct obs_hist *b)
{
	for (uint32_t i = 0; i < OBS_BUCKETS; i++)
		dst->bucket[i] = a->bucket[i] >= b->bucket[i] ? a->bucket[i] - b->bucket[i] : 0;
	dst->sum = a->sum >= b->sum ? a->sum - b->sum : 0;
}

double obs_hist_quantile(const struct obs_hist *h, double q)
{
	uint64_t n = obs_hist_count(h), rank, seen = 0;

	if (n == 0 || !(q > 0.0 && q <= 1.0))
		return 0.0;
	rank = (uint64_t)ceil(q * (double)n);
	if (rank == 0)
		rank = 1;
	for (uint32_t b = 0; b < OBS_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= rank) {
			uint64_t lo = obs_bucket_lower(b), hi = obs_bucket_upper(b);

			if (b == OBS_BUCKETS - 1)
				return (double)lo; /* saturated: a lower bound only */
			/* Integers lo..hi-1: their midpoint. */
			return (double)lo + (double)(hi - 1 - lo) / 2.0;
		}
	}
	return (double)obs_bucket_lower(OBS_BUCKETS - 1);
}

uint64_t obs_hist_count_le(const struct obs_hist *h, uint64_t v)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < OBS_BUCKETS && obs_bucket_lower(b) <= v; b++)
		n += h->bucket[b];
	return n;
}

size_t obs_set_bytes(uint32_t n)
{
	return ((size_t)OBS_BUCKETS + 1) * n * sizeof(uint64_t);
}

void obs_set_init(struct obs_hist_set *s, void *mem, uint32_t n)
{
	s->count = mem;
	s->sum = s->count + (size_t)OBS_BUCKETS * n;
	s->n = n;
}

void obs_set_merge(struct obs_hist *dst, const struct obs_hist_set *s, uint32_t i)
{
	for (uint32_t b = 0; b < OBS_BUCKETS; b++)
		dst->bucket[b] += s->count[(size_t)b * s->n + i];
	dst->sum += s->sum[i];
}
