/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hit ratio over time: GET results and losses counted per fixed interval (100 ms by
 * default) of the request's send time, so a change in the fleet (a node added, warm-up on or
 * off) shows as the buckets it touched. One table allocated before the run; adding is an
 * index and an increment. No EAL: the unit test builds this file.
 */
#include <errno.h>
#include <stdlib.h>

#include "loadgen.h"

int lg_series_init(struct lg_series *s, uint64_t interval_tsc, uint32_t n)
{
	s->interval_tsc = interval_tsc;
	s->n = n;
	s->used = 0;
	s->b = calloc(n, sizeof(*s->b));
	if (interval_tsc == 0 || s->b == NULL) {
		free(s->b);
		s->b = NULL;
		return interval_tsc == 0 ? -EINVAL : -ENOMEM;
	}
	return 0;
}

void lg_series_free(struct lg_series *s)
{
	free(s->b);
	s->b = NULL;
	s->n = 0;
}

uint32_t lg_series_index(const struct lg_series *s, uint64_t t)
{
	uint64_t i = t / s->interval_tsc;

	return i >= s->n ? s->n - 1 : (uint32_t)i;
}

void lg_series_add(struct lg_series *s, uint64_t t, enum lg_series_what what)
{
	uint32_t i;

	if (s->b == NULL)
		return;
	i = lg_series_index(s, t);
	s->b[i].n[what]++;
	if (i + 1 > s->used)
		s->used = i + 1;
}

double lg_series_ratio(const struct lg_series *s, uint32_t i)
{
	const struct lg_series_bucket *b = &s->b[i];
	uint64_t gets = (uint64_t)b->n[LG_SER_HIT] + b->n[LG_SER_MISS];

	return gets ? (double)b->n[LG_SER_HIT] / (double)gets : -1.0;
}

double lg_series_min(const struct lg_series *s, uint32_t from, uint32_t to, uint32_t *at)
{
	double min = -1.0;

	for (uint32_t i = from; i < to && i < s->used; i++) {
		double r = lg_series_ratio(s, i);

		if (r >= 0 && (min < 0 || r < min)) {
			min = r;
			if (at != NULL)
				*at = i;
		}
	}
	return min;
}
