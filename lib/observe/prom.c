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

static void append_char(struct obs_text *t, char c)
{
	if (!text_reserve(t, 1))
		return;
	t->buf[t->len++] = c;
	t->buf[t->len] = '\0';
}

/* Escape backslash and newline (and, in label values, the double quote). */
static void append_escaped(struct obs_text *t, const char *s, bool quote)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			obs_text_appendf(t, "\\\\");
		else if (*s == '\n')
			obs_text_appendf(t, "\\n");
		else if (quote && *s == '"')
			obs_text_appendf(t, "\\\"");
		else
			append_char(t, *s);
	}
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

	obs_text_appendf(t, "# HELP %s ", name);
	append_escaped(t, help, false);
	obs_text_appendf(t, "\n# TYPE %s %s\n", name, types[type]);
}

/* {a="x",b="y" then the extra label (le) if any, then the closing brace. */
static void append_labels(struct obs_text *t, const struct obs_label *labels, size_t n,
			  const char *le)
{
	if (n == 0 && le == NULL)
		return;
	append_char(t, '{');
	for (size_t i = 0; i < n; i++) {
		obs_text_appendf(t, "%s%s=\"", i ? "," : "", labels[i].name);
		append_escaped(t, labels[i].value, true);
		append_char(t, '"');
	}
	if (le != NULL)
		obs_text_appendf(t, "%sle=\"%s\"", n ? "," : "", le);
	append_char(t, '}');
}

void obs_prom_sample(struct obs_text *t, const char *name, const struct obs_label *labels, size_t n,
		     uint64_t value)
{
	obs_text_appendf(t, "%s", name);
	append_labels(t, labels, n, NULL);
	obs_text_appendf(t, " %llu\n", (unsigned long long)value);
}

void obs_prom_histogram(struct obs_text *t, const char *name, const struct obs_label *labels,
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
		/* Integer values below upper(b): every real value below it once truncated. */
		snprintf(le, sizeof(le), "%.9g", (double)obs_bucket_upper(b) * scale);
		obs_text_appendf(t, "%s_bucket", name);
		append_labels(t, labels, n, le);
		obs_text_appendf(t, " %llu\n", (unsigned long long)cum);
	}
	obs_text_appendf(t, "%s_bucket", name);
	append_labels(t, labels, n, "+Inf");
	obs_text_appendf(t, " %llu\n%s_sum", (unsigned long long)total, name);
	append_labels(t, labels, n, NULL);
	obs_text_appendf(t, " %.9g\n%s_count", (double)h->sum * scale, name);
	append_labels(t, labels, n, NULL);
	obs_text_appendf(t, " %llu\n", (unsigned long long)total);
}
