/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus text exposition format (0.0.4) into a growing buffer: family lines, samples
 * with escaped label values, histograms as cumulative _bucket / _sum / _count.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe.h"

static bool text_reserve(struct obs_text *t, size_t more)
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

void obs_text_appendf(struct obs_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !text_reserve(t, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

void obs_text_release(struct obs_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/*
 * The exposition's lines are written with memcpy and a decimal formatter of our own, not
 * vsnprintf: at 1,000 nodes a scrape is ~120,000 lines, and a printf call per field cost
 * over a second. Floats (the bounds and _sum) are still %.9g from snprintf, so the text is
 * the same byte for byte; the bounds once per obs_prom_bounds, not once per line.
 */

/* Room for @p more bytes (and the NUL) at the end of @p t, or NULL (oom set). */
static char *text_room(struct obs_text *t, size_t more)
{
	return text_reserve(t, more) ? t->buf + t->len : NULL;
}

/* The text now ends at @p end (inside the room text_room() gave). */
static void text_end(struct obs_text *t, char *end)
{
	t->len = (size_t)(end - t->buf);
	t->buf[t->len] = '\0';
}

static void append_mem(struct obs_text *t, const char *s, size_t n)
{
	char *p = text_room(t, n);

	if (p == NULL)
		return;
	memcpy(p, s, n);
	text_end(t, p + n);
}

static void append_str(struct obs_text *t, const char *s)
{
	append_mem(t, s, strlen(s));
}

/* Longest decimal uint64_t (18446744073709551615). */
#define U64_DIGITS 20

/* @p v in decimal at @p p (U64_DIGITS bytes of room): the end. As "%llu" writes it. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[U64_DIGITS];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/* " value\n": a sample's end. */
static void append_value(struct obs_text *t, uint64_t v)
{
	char *p = text_room(t, U64_DIGITS + 2);

	if (p == NULL)
		return;
	*p++ = ' ';
	p = put_u64(p, v);
	*p++ = '\n';
	text_end(t, p);
}

/* Escape backslash and newline (and, in label values, the double quote): at most two bytes
 * per byte of @p s. */
static void append_escaped(struct obs_text *t, const char *s, bool quote)
{
	size_t len = strlen(s);
	char *p = text_room(t, 2 * len);

	if (p == NULL)
		return;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\') {
			*p++ = '\\';
			*p++ = '\\';
		} else if (c == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else if (quote && c == '"') {
			*p++ = '\\';
			*p++ = '"';
		} else {
			*p++ = c;
		}
	}
	text_end(t, p);
}

bool obs_prom_name_ok(const char *name)
{
	if (name == NULL || *name == '\0' || (*name >= '0' && *name <= '9'))
		return false;
	for (const char *p = name; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == ':'))
			return false;
	return true;
}

void obs_prom_family(struct obs_text *t, const char *name, const char *help,
		     enum obs_prom_type type)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};

	append_mem(t, "# HELP ", 7);
	append_str(t, name);
	append_mem(t, " ", 1);
	append_escaped(t, help, false);
	append_mem(t, "\n# TYPE ", 8);
	append_str(t, name);
	append_mem(t, " ", 1);
	append_str(t, types[type]);
	append_mem(t, "\n", 1);
}

/* a="x",b="y": the labels without braces. */
static void append_label_list(struct obs_text *t, const struct obs_label *labels, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			append_mem(t, ",", 1);
		append_str(t, labels[i].name);
		append_mem(t, "=\"", 2);
		append_escaped(t, labels[i].value, true);
		append_mem(t, "\"", 1);
	}
}

void obs_prom_sample(struct obs_text *t, const char *name, const struct obs_label *labels, size_t n,
		     uint64_t value)
{
	append_str(t, name);
	if (n > 0) {
		append_mem(t, "{", 1);
		append_label_list(t, labels, n);
		append_mem(t, "}", 1);
	}
	append_value(t, value);
}

void obs_prom_bounds_init(struct obs_prom_bounds *pb, double scale, uint32_t first, uint32_t last,
			  uint32_t step)
{
	uint32_t k = 0;

	if (step == 0)
		step = 1;
	pb->scale = scale;
	/* Buckets first, first + step, ... while <= last, below the saturated one. */
	for (uint64_t b = first; b <= last && b < OBS_BUCKETS - 1; b += step) {
		/* Integer values below upper(b): every real value below it once truncated. */
		int len = snprintf(pb->le[k], OBS_PROM_LE_MAX, "le=\"%.9g\"} ",
				   (double)obs_bucket_upper((uint32_t)b) * scale);

		pb->bucket[k] = (uint16_t)b;
		pb->len[k++] = (uint8_t)len; /* %.9g of a double: at most 16 bytes */
	}
	pb->bucket[k] = OBS_BUCKETS - 1;
	pb->len[k] = (uint8_t)snprintf(pb->le[k], OBS_PROM_LE_MAX, "le=\"+Inf\"} ");
	pb->n = k + 1;
}

void obs_prom_histogram_with(struct obs_text *t, const char *name, const struct obs_label *labels,
			     size_t n, const struct obs_hist *h, const struct obs_prom_bounds *pb)
{
	size_t pre_off, pre_len, lab_off, lab_len;
	uint64_t cum = 0;
	uint32_t b = 0;
	char sum[40];

	/* name_bucket{labels, (and a comma when there are labels): written once for the first
	 * line, copied from there for the others. */
	pre_off = t->len;
	append_str(t, name);
	append_mem(t, "_bucket{", 8);
	lab_off = t->len;
	append_label_list(t, labels, n);
	lab_len = t->len - lab_off;
	if (n > 0)
		append_mem(t, ",", 1);
	pre_len = t->len - pre_off;
	for (uint32_t i = 0; i < pb->n; i++) {
		char *p = text_room(t, pre_len + pb->len[i] + U64_DIGITS + 1);

		if (p == NULL)
			return;
		/* Cumulative: buckets 0..bucket[i]; the last entry (+Inf) takes them all. */
		for (; b <= pb->bucket[i]; b++)
			cum += h->bucket[b];
		if (i > 0) {
			memcpy(p, t->buf + pre_off, pre_len);
			p += pre_len;
		}
		memcpy(p, pb->le[i], pb->len[i]);
		p = put_u64(p + pb->len[i], cum);
		*p++ = '\n';
		text_end(t, p);
	}
	/* The +Inf entry's bucket is the last: cum is now the count. The labels of _sum and
	 * _count are copied from the first line. */
	snprintf(sum, sizeof(sum), " %.9g\n", (double)h->sum * pb->scale);
	for (int k = 0; k < 2; k++) {
		append_str(t, name);
		append_str(t, k ? "_count" : "_sum");
		if (n > 0) {
			char *p = text_room(t, lab_len + 2);

			if (p == NULL)
				return;
			*p++ = '{';
			memcpy(p, t->buf + lab_off, lab_len);
			p += lab_len;
			*p++ = '}';
			text_end(t, p);
		}
		if (k)
			append_value(t, cum);
		else
			append_str(t, sum);
	}
}

void obs_prom_histogram(struct obs_text *t, const char *name, const struct obs_label *labels,
			size_t n, const struct obs_hist *h, double scale, uint32_t first,
			uint32_t last, uint32_t step)
{
	struct obs_prom_bounds *pb = malloc(sizeof(*pb));

	if (pb == NULL) {
		t->oom = true;
		return;
	}
	obs_prom_bounds_init(pb, scale, first, last, step);
	obs_prom_histogram_with(t, name, labels, n, h, pb);
	free(pb);
}
