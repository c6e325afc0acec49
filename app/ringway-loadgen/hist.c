/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency histogram in TSC cycles, log-linear like HdrHistogram: exact below 2^LG_HIST_SUB,
 * then 2^LG_HIST_SUB equal buckets per power of two, so any value is known to within 1/64.
 * Fixed size, no allocation: adding a value is a count of leading zeros and an increment.
 */
#include <string.h>

#include "loadgen.h"

unsigned int lg_hist_index(uint64_t v)
{
	unsigned int msb, group, sub;

	if (v < (1u << LG_HIST_SUB))
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	group = msb - LG_HIST_SUB + 1;
	sub = (unsigned int)(v >> (msb - LG_HIST_SUB)) & ((1u << LG_HIST_SUB) - 1);
	return (group << LG_HIST_SUB) | sub;
}

uint64_t lg_hist_low(unsigned int i)
{
	unsigned int group = i >> LG_HIST_SUB, sub = i & ((1u << LG_HIST_SUB) - 1), msb;

	if (group == 0)
		return sub;
	msb = group + LG_HIST_SUB - 1;
	return (1ULL << msb) | ((uint64_t)sub << (msb - LG_HIST_SUB));
}

/* Width of bucket @p i: 1 in the exact range, else 2^(msb - LG_HIST_SUB). */
static uint64_t hist_width(unsigned int i)
{
	unsigned int group = i >> LG_HIST_SUB;

	if (group == 0)
		return 1;
	return 1ULL << (group - 1);
}

void lg_hist_reset(struct lg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void lg_hist_add(struct lg_hist *h, uint64_t v)
{
	h->b[lg_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

uint64_t lg_hist_quantile(const struct lg_hist *h, double q)
{
	uint64_t rank, seen = 0, v;

	if (h->count == 0)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	/* The smallest bucket holding the ceil(q * count)-th value. */
	rank = (uint64_t)(q * (double)h->count);
	if ((double)rank < q * (double)h->count)
		rank++;
	if (rank == 0)
		rank = 1;
	for (unsigned int i = 0; i < LG_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			v = lg_hist_low(i) + hist_width(i) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}
