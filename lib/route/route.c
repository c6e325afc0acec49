/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Static routes: parse, add / replace / remove with the gateway rule, longest-prefix lookup.
 * Tables are small (RT_ROUTES_MAX) and looked up off the data path only (at publication and
 * on a route change), so a linear scan is the whole index.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

void rt_init(struct rt_table *t)
{
	memset(t, 0, sizeof(*t));
}

static uint32_t len_mask(uint8_t len)
{
	return len == 0 ? 0 : htonl(~UINT32_C(0) << (32 - len));
}

/* The next blank-separated word of [*cur, end): its start and length (0 at the end). */
static size_t next_word(const char **cur, const char *end, const char **w)
{
	const char *p = *cur;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*w = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	*cur = p;
	return (size_t)(p - *w);
}

static int word_prefix(const char *w, size_t n, struct rt_route *r, char *err, size_t errlen)
{
	char buf[INET_ADDRSTRLEN + 4];
	const char *slash = memchr(w, '/', n);
	unsigned long len;
	struct in_addr a;
	char *end;

	if (n == 7 && memcmp(w, "default", 7) == 0) {
		r->addr = r->mask = 0;
		r->len = 0;
		return 0;
	}
	if (slash == NULL || n >= sizeof(buf) || slash == w || slash + 1 == w + n)
		return fail(err, errlen, "bad prefix '%.*s': expected A.B.C.D/LEN or default",
			    (int)(n > 40 ? 40 : n), w);
	memcpy(buf, w, n);
	buf[n] = '\0';
	buf[slash - w] = '\0';
	len = strtoul(buf + (slash - w) + 1, &end, 10);
	if (*end != '\0' || len > 32 || inet_pton(AF_INET, buf, &a) != 1)
		return fail(err, errlen, "bad prefix '%.*s': expected A.B.C.D/LEN (LEN 0..32)",
			    (int)n, w);
	r->len = (uint8_t)len;
	r->mask = len_mask(r->len);
	if ((a.s_addr & ~r->mask) != 0)
		return fail(err, errlen, "prefix %.*s has host bits set", (int)n, w);
	r->addr = a.s_addr;
	return 0;
}

int rt_parse_prefix(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen)
{
	const char *cur = text, *end = text + len, *w, *x;
	size_t n = next_word(&cur, end, &w);

	if (n == 0)
		return fail(err, errlen, "missing prefix (A.B.C.D/LEN or default)");
	size_t m = next_word(&cur, end, &x);

	if (m != 0)
		return fail(err, errlen, "unexpected '%.*s' after the prefix",
			    (int)(m > 32 ? 32 : m), x);
	return word_prefix(w, n, r, err, errlen);
}

/* A gateway is a unicast host: not 0/8, 127/8, multicast, reserved or broadcast. */
static bool gw_usable(uint32_t gw)
{
	uint32_t h = ntohl(gw);

	return (h >> 24) != 0 && (h >> 24) != 127 && h < 0xe0000000u;
}

int rt_parse(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen)
{
	const char *cur = text, *end = text + len, *w;
	char buf[INET_ADDRSTRLEN];
	struct in_addr a;
	size_t n = next_word(&cur, end, &w);
	int rc;

	memset(r, 0, sizeof(*r));
	if (n == 0)
		return fail(err, errlen, "expected PREFIX via GW or PREFIX direct");
	rc = word_prefix(w, n, r, err, errlen);
	if (rc < 0)
		return rc;
	n = next_word(&cur, end, &w);
	if (n == 6 && memcmp(w, "direct", 6) == 0) {
		r->gw = 0;
	} else if (n == 3 && memcmp(w, "via", 3) == 0) {
		n = next_word(&cur, end, &w);
		if (n == 0 || n >= sizeof(buf))
			return fail(err, errlen, "via: missing or bad gateway address");
		memcpy(buf, w, n);
		buf[n] = '\0';
		if (inet_pton(AF_INET, buf, &a) != 1)
			return fail(err, errlen, "bad gateway '%s': expected an IPv4 address", buf);
		if (!gw_usable(a.s_addr))
			return fail(err, errlen,
				    "gateway %s is no unicast host (0.0.0.0/8, 127.0.0.0/8, "
				    "multicast, reserved and broadcast are refused)",
				    buf);
		r->gw = a.s_addr;
	} else {
		return fail(err, errlen, "expected 'via GW' or 'direct' after the prefix");
	}
	n = next_word(&cur, end, &w);
	if (n != 0)
		return fail(err, errlen, "unexpected '%.*s' after the route",
			    (int)(n > 32 ? 32 : n), w);
	return 0;
}

static bool has_direct(const struct rt_table *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->r[i].gw == 0)
			return true;
	return false;
}

int rt_check(const struct rt_table *t, char *err, size_t errlen)
{
	char text[RT_TEXT_MAX], gw[INET_ADDRSTRLEN];

	if (!has_direct(t))
		return 0;
	for (uint32_t i = 0; i < t->n; i++) {
		bool near = false;

		if (t->r[i].gw == 0)
			continue;
		for (uint32_t k = 0; k < t->n && !near; k++)
			near = t->r[k].gw == 0 && (t->r[i].gw & t->r[k].mask) == t->r[k].addr;
		if (!near) {
			rt_format(&t->r[i], text);
			inet_ntop(AF_INET, &t->r[i].gw, gw, sizeof(gw));
			return fail(err, errlen,
				    "route %s: gateway %s is in no direct route (a gateway must be "
				    "on the router's segment)",
				    text, gw);
		}
	}
	return 0;
}

static int32_t find(const struct rt_table *t, const struct rt_route *r)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (t->r[i].addr == r->addr && t->r[i].len == r->len)
			return (int32_t)i;
	return -ENOENT;
}

int rt_add(struct rt_table *t, const struct rt_route *r, char *err, size_t errlen)
{
	int32_t i = find(t, r);
	struct rt_route old;
	int rc;

	if (i < 0 && t->n >= RT_ROUTES_MAX) {
		fail(err, errlen, "route table full (%d routes)", RT_ROUTES_MAX);
		return -ENOSPC;
	}
	if (i >= 0) {
		old = t->r[i];
		t->r[i] = *r;
	} else {
		t->r[t->n++] = *r;
	}
	rc = rt_check(t, err, errlen);
	if (rc == 0)
		return i >= 0 ? 2 : 1;
	if (i >= 0)
		t->r[i] = old;
	else
		t->n--;
	return rc;
}

int rt_remove(struct rt_table *t, const struct rt_route *r, char *err, size_t errlen)
{
	int32_t i = find(t, r);
	struct rt_table next;
	char text[RT_TEXT_MAX];
	int rc;

	if (i < 0) {
		rt_format(r, text);
		fail(err, errlen, "no route for %.*s", (int)(strchr(text, ' ') - text), text);
		return -ENOENT;
	}
	next = *t;
	memmove(&next.r[i], &next.r[i + 1], (next.n - (uint32_t)i - 1) * sizeof(next.r[0]));
	next.n--;
	rc = rt_check(&next, err, errlen);
	if (rc == 0)
		*t = next;
	return rc;
}

int rt_lookup(const struct rt_table *t, uint32_t ip, uint32_t *nh)
{
	int32_t best = -1;

	for (uint32_t i = 0; i < t->n; i++)
		if ((ip & t->r[i].mask) == t->r[i].addr &&
		    (best < 0 || t->r[i].len > t->r[best].len))
			best = (int32_t)i;
	if (best >= 0) {
		*nh = t->r[best].gw != 0 ? t->r[best].gw : ip;
		return 0;
	}
	if (has_direct(t))
		return -ENOENT;
	*nh = ip;
	return 0;
}

void rt_format(const struct rt_route *r, char out[RT_TEXT_MAX])
{
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &r->addr, a, sizeof(a));
	inet_ntop(AF_INET, &r->gw, g, sizeof(g));
	if (r->len == 0)
		snprintf(out, RT_TEXT_MAX, "default %s%s", r->gw ? "via " : "direct",
			 r->gw ? g : "");
	else
		snprintf(out, RT_TEXT_MAX, "%s/%u %s%s", a, r->len, r->gw ? "via " : "direct",
			 r->gw ? g : "");
}

bool rt_equal(const struct rt_table *a, const struct rt_table *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		int32_t k = find(b, &a->r[i]);

		if (k < 0 || b->r[k].gw != a->r[i].gw)
			return false;
	}
	return true;
}
