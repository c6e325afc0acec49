/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus writer without printf (issue 28: /metrics at 1,000 nodes) writes the same
 * text, byte for byte, as the printf-based writer it replaced: that writer is kept below as
 * the reference (ref_*, unchanged but for its names), and both write the same random
 * families, samples and histograms: values 0, 1, powers of ten and of two around their
 * digit-count changes, UINT64_MAX; bucket counts that wrap; labels with every character
 * escaped; scales that make the bounds and _sum huge, tiny, negative, NaN and infinite; every
 * bucket selection (first past last, step 0, first past the last bucket).
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

#include "observe.h"

/* ---- The reference: the writer before this change (lib/observe/prom.c) ---------------- */

static bool ref_reserve(struct obs_text *t, size_t more)
{
	size_t cap = t->cap ? t->cap : 4096;
	char *p;

	if (t->oom)
		return false;
	if (t->len + more + 1 <= t->cap)
		return true;
	while (cap < t->len + more + 1)
		cap *= 2;
	p = realloc(t->buf, cap);
	if (p == NULL) {
		t->oom = true;
		return false;
	}
	t->buf = p;
	t->cap = cap;
	return true;
}

static void __attribute__((format(printf, 2, 3)))
ref_appendf(struct obs_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !ref_reserve(t, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

static void ref_char(struct obs_text *t, char c)
{
	if (!ref_reserve(t, 1))
		return;
	t->buf[t->len++] = c;
	t->buf[t->len] = '\0';
}

static void ref_escaped(struct obs_text *t, const char *s, bool quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			ref_appendf(t, "\\\\");
		else if (*s == '\n')
			ref_appendf(t, "\\n");
		else if (quote && *s == '"')
			ref_appendf(t, "\\\"");
		else
			ref_char(t, *s);
	}
}

static void ref_family(struct obs_text *t, const char *name, const char *help,
		       enum obs_prom_type type)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};

	ref_appendf(t, "# HELP %s ", name);
	ref_escaped(t, help, false);
	ref_appendf(t, "\n# TYPE %s %s\n", name, types[type]);
}

static void ref_labels(struct obs_text *t, const struct obs_label *labels, size_t n, const char *le)
{
	if (n == 0 && le == NULL)
		return;
	ref_char(t, '{');
	for (size_t i = 0; i < n; i++) {
		ref_appendf(t, "%s%s=\"", i ? "," : "", labels[i].name);
		ref_escaped(t, labels[i].value, true);
		ref_char(t, '"');
	}
	if (le != NULL)
		ref_appendf(t, "%sle=\"%s\"", n ? "," : "", le);
	ref_char(t, '}');
}

static void ref_sample(struct obs_text *t, const char *name, const struct obs_label *labels,
		       size_t n, uint64_t value)
{
	ref_appendf(t, "%s", name);
	ref_labels(t, labels, n, NULL);
	ref_appendf(t, " %llu\n", (unsigned long long)value);
}

static void ref_histogram(struct obs_text *t, const char *name, const struct obs_label *labels,
			  size_t n, const struct obs_hist *h, double scale, uint32_t first,
			  uint32_t last, uint32_t step)
{
	uint64_t cum = 0, total = obs_hist_count(h);
	uint32_t next = first;
	char le[32];

	if (step == 0)
		step = 1;
	for (uint32_t b = 0; b < OBS_BUCKETS - 1; b++) {
		cum += h->bucket[b];
		if (b != next || b > last)
			continue;
		next += step;
		snprintf(le, sizeof(le), "%.9g", (double)obs_bucket_upper(b) * scale);
		ref_appendf(t, "%s_bucket", name);
		ref_labels(t, labels, n, le);
		ref_appendf(t, " %llu\n", (unsigned long long)cum);
	}
	ref_appendf(t, "%s_bucket", name);
	ref_labels(t, labels, n, "+Inf");
	ref_appendf(t, " %llu\n%s_sum", (unsigned long long)total, name);
	ref_labels(t, labels, n, NULL);
	ref_appendf(t, " %.9g\n%s_count", (double)h->sum * scale, name);
	ref_labels(t, labels, n, NULL);
	ref_appendf(t, " %llu\n", (unsigned long long)total);
}

/* ---- Random inputs ----------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A value of every kind a counter or a bucket holds: 0, small, around a digit-count change
 * (10^k - 1, 10^k), around a power of two, UINT64_MAX, or anything. */
static uint64_t rand_value(void)
{
	uint64_t p10 = 1;

	switch (next_rand() % 8) {
	case 0:
		return 0;
	case 1:
		return next_rand() % 16;
	case 2:
		for (uint64_t k = next_rand() % 20; k > 0; k--)
			p10 *= 10;
		return p10 - (next_rand() % 2);
	case 3:
		return (UINT64_C(1) << (next_rand() % 64)) - (next_rand() % 2);
	case 4:
		return UINT64_MAX - (next_rand() % 2);
	default:
		return next_rand() >> (next_rand() % 64);
	}
}

/* Text with the characters the writer escapes, others, and sometimes nothing. */
static void rand_text(char *out, size_t cap)
{
	static const char pick[] = "\\\n\"ab:_.-9 {}=,\t\xc3\xa9";
	size_t len = next_rand() % 4 == 0 ? 0 : next_rand() % (cap - 1);

	for (size_t i = 0; i < len; i++)
		out[i] = pick[next_rand() % (sizeof(pick) - 1)];
	out[len] = '\0';
}

static double rand_scale(void)
{
	static const double scales[] = {1e-9,	1e-9,	  1e-9,	     1,	    1e-3,  1e-6,
					0.25,	3.7,	  0,	     -1e-9, 1e300, 1e-300,
					5e-324, INFINITY, -INFINITY, NAN};

	return scales[next_rand() % (sizeof(scales) / sizeof(scales[0]))];
}

static void rand_hist(struct obs_hist *h)
{
	int kind = (int)(next_rand() % 4);

	memset(h, 0, sizeof(*h));
	if (kind == 0)
		return; /* empty */
	for (uint32_t b = 0; b < OBS_BUCKETS; b++) {
		if (kind == 1 && next_rand() % 16 != 0)
			continue; /* sparse */
		h->bucket[b] = kind == 3 ? rand_value() : next_rand() % 1000;
	}
	h->sum = rand_value();
}

/* Both writers write the same random exposition; the texts and their lengths are equal. */
static void test_same_as_printf(void **state)
{
	struct obs_hist *h = malloc(sizeof(*h));
	struct obs_prom_bounds *pb = malloc(sizeof(*pb));
	static const char *const names[] = {"ringway_node_rtt_seconds", "x", "a:b_c",
					    "ringway_rx_total"};
	static const char *const lnames[] = {"node", "address", "reason", "le_x"};
	char values[4][48], help[64];

	(void)state;
	assert_non_null(h);
	assert_non_null(pb);
	for (int round = 0; round < 400; round++) {
		struct obs_text a = {0}, b = {0};
		struct obs_label l[4];

		for (int k = 0; k < 20; k++) {
			const char *name = names[next_rand() % 4];
			size_t n = next_rand() % 5;
			enum obs_prom_type type = (enum obs_prom_type)(next_rand() % 3);

			for (size_t i = 0; i < n; i++) {
				rand_text(values[i], sizeof(values[i]));
				l[i] = (struct obs_label){lnames[i], values[i]};
			}
			switch (next_rand() % 4) {
			case 0:
				rand_text(help, sizeof(help));
				ref_family(&a, name, help, type);
				obs_prom_family(&b, name, help, type);
				break;
			case 1: {
				uint64_t v = rand_value();

				ref_sample(&a, name, l, n, v);
				obs_prom_sample(&b, name, l, n, v);
				break;
			}
			default: {
				double scale = rand_scale();
				/* Mostly the router's selection, sometimes any (past the end,
				 * first > last, step 0 or huge). */
				bool router = next_rand() % 2;
				uint32_t first =
					router ? 4 * OBS_SUB + 3
					       : (uint32_t)(next_rand() % (OBS_BUCKETS + 8));
				uint32_t last =
					router ? OBS_BUCKETS - 2
					       : (uint32_t)(next_rand() % (OBS_BUCKETS + 8));
				uint32_t step = router ? 4 : (uint32_t)(next_rand() % 70);

				if (!router && next_rand() % 8 == 0)
					last = UINT32_MAX;
				if (!router && next_rand() % 8 == 0)
					step = UINT32_MAX;
				rand_hist(h);
				ref_histogram(&a, name, l, n, h, scale, first, last, step);
				if (next_rand() % 2) {
					obs_prom_histogram(&b, name, l, n, h, scale, first, last,
							   step);
				} else {
					obs_prom_bounds_init(pb, scale, first, last, step);
					obs_prom_histogram_with(&b, name, l, n, h, pb);
				}
				break;
			}
			}
		}
		assert_false(a.oom);
		assert_false(b.oom);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.buf, b.buf, a.len);
		assert_int_equal(b.buf[b.len], '\0');
		obs_text_release(&a);
		obs_text_release(&b);
	}
	free(h);
	free(pb);
}

/* The corners one by one, so a failure names its case: UINT64_MAX everywhere (counts that
 * wrap in the cumulative sum), and the bounds of a whole histogram at scale 1 (integers). */
static void test_corners(void **state)
{
	struct obs_hist *h = calloc(1, sizeof(*h));
	struct obs_label l[] = {{"node", "\\\"\n"}, {"address", ""}};
	struct obs_text a = {0}, b = {0};

	(void)state;
	assert_non_null(h);
	for (uint32_t i = 0; i < OBS_BUCKETS; i++)
		h->bucket[i] = UINT64_MAX;
	h->sum = UINT64_MAX;
	ref_sample(&a, "m", l, 2, UINT64_MAX);
	obs_prom_sample(&b, "m", l, 2, UINT64_MAX);
	ref_sample(&a, "m", NULL, 0, 0);
	obs_prom_sample(&b, "m", NULL, 0, 0);
	ref_histogram(&a, "h", l, 2, h, 1, 0, OBS_BUCKETS, 1);
	obs_prom_histogram(&b, "h", l, 2, h, 1, 0, OBS_BUCKETS, 1);
	ref_histogram(&a, "h", NULL, 0, h, NAN, 0, 0, 0);
	obs_prom_histogram(&b, "h", NULL, 0, h, NAN, 0, 0, 0);
	ref_histogram(&a, "h", l, 1, h, 1e-9, OBS_BUCKETS - 1, OBS_BUCKETS, 1);
	obs_prom_histogram(&b, "h", l, 1, h, 1e-9, OBS_BUCKETS - 1, OBS_BUCKETS, 1);
	assert_non_null(
		strstr(a.buf, "m{node=\"\\\\\\\"\\n\",address=\"\"} 18446744073709551615\n"));
	assert_non_null(strstr(a.buf, "h_sum nan\n"));
	assert_int_equal(a.len, b.len);
	assert_string_equal(a.buf, b.buf);
	obs_text_release(&a);
	obs_text_release(&b);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_printf),
		cmocka_unit_test(test_corners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
