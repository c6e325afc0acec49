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

static const char *family_name(const struct inet_addr *a)
{
	return inet_is_v4(a) ? "IPv4" : "IPv6";
}

/* `default` is 0.0.0.0/0 (rt_parse turns it into ::/0 for an IPv6 gateway), `default6` ::/0. */
static int word_prefix(const char *w, size_t n, struct rt_route *r, char *err, size_t errlen)
{
	int q = n > 60 ? 60 : (int)n;

	r->len = 0;
	if (n == 7 && memcmp(w, "default", 7) == 0) {
		inet_from_v4(&r->addr, 0);
		return 0;
	}
	if (n == 8 && memcmp(w, "default6", 8) == 0) {
		memset(&r->addr, 0, sizeof(r->addr));
		return 0;
	}
	if (memchr(w, '/', n) == NULL)
		return fail(
			err, errlen,
			"bad prefix '%.*s': expected A.B.C.D/LEN, IPV6/LEN, default or default6", q,
			w);
	return inet_parse_prefix(w, n, &r->addr, &r->len, err, errlen);
}

int rt_parse_prefix(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen)
{
	const char *cur = text, *end = text + len, *w, *x;
	size_t n = next_word(&cur, end, &w);

	memset(r, 0, sizeof(*r));
	if (n == 0)
		return fail(err, errlen,
			    "missing prefix (A.B.C.D/LEN, IPV6/LEN, default or default6)");
	size_t m = next_word(&cur, end, &x);

	if (m != 0)
		return fail(err, errlen, "unexpected '%.*s' after the prefix",
			    (int)(m > 32 ? 32 : m), x);
	return word_prefix(w, n, r, err, errlen);
}

/* A gateway is a unicast host: IPv4 not 0/8, 127/8, multicast, reserved or broadcast; IPv6
 * not ::, ::1 or multicast. */
static bool gw_usable(const struct inet_addr *gw)
{
	static const uint8_t loop6[16] = {[15] = 1};

	if (inet_is_v4(gw)) {
		uint32_t h = ntohl(inet_v4(gw));

		return (h >> 24) != 0 && (h >> 24) != 127 && h < 0xe0000000u;
	}
	return !inet_is_zero(gw) && memcmp(gw->b, loop6, 16) != 0 && gw->b[0] != 0xff;
}

static int word_gateway(const char *w, size_t n, struct rt_route *r, bool any_default, char *err,
			size_t errlen)
{
	char text[INET_TEXT_MAX], pfx[INET_PREFIX_TEXT_MAX];
	int q = n > 60 ? 60 : (int)n;

	if (n == 0)
		return fail(err, errlen, "via: missing gateway address");
	if (inet_parse(w, n, &r->gw) < 0)
		return fail(err, errlen, "bad gateway '%.*s': expected an IPv4 or IPv6 address", q,
			    w);
	inet_format(&r->gw, text);
	if (!gw_usable(&r->gw))
		return fail(err, errlen,
			    inet_is_v4(&r->gw)
				    ? "gateway %s is no unicast host (0.0.0.0/8, 127.0.0.0/8, "
				      "multicast, reserved and broadcast are refused)"
				    : "gateway %s is no unicast host (::, ::1 and multicast are "
				      "refused)",
			    text);
	if (any_default && !inet_is_v4(&r->gw))
		memset(&r->addr, 0, sizeof(r->addr)); /* `default via IPV6`: ::/0 */
	if (inet_is_v4(&r->gw) != inet_is_v4(&r->addr)) {
		inet_format_prefix(&r->addr, r->len, pfx);
		return fail(err, errlen, "gateway %s is %s but the prefix %s is %s", text,
			    family_name(&r->gw), pfx, family_name(&r->addr));
	}
	return 0;
}

int rt_parse(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen)
{
	const char *cur = text, *end = text + len, *w;
	size_t n = next_word(&cur, end, &w);
	bool any_default = n == 7 && memcmp(w, "default", 7) == 0;
	int rc;

	memset(r, 0, sizeof(*r));
	if (n == 0)
		return fail(err, errlen, "expected PREFIX via GW or PREFIX direct");
	rc = word_prefix(w, n, r, err, errlen);
	if (rc < 0)
		return rc;
	n = next_word(&cur, end, &w);
	if (n == 6 && memcmp(w, "direct", 6) == 0) {
		memset(&r->gw, 0, sizeof(r->gw));
	} else if (n == 3 && memcmp(w, "via", 3) == 0) {
		n = next_word(&cur, end, &w);
		rc = word_gateway(w, n, r, any_default, err, errlen);
		if (rc < 0)
			return rc;
	} else {
		return fail(err, errlen, "expected 'via GW' or 'direct' after the prefix");
	}
	n = next_word(&cur, end, &w);
	if (n != 0)
		return fail(err, errlen, "unexpected '%.*s' after the route",
			    (int)(n > 32 ? 32 : n), w);
	return 0;
}

static bool is_direct(const struct rt_route *r)
{
	return inet_is_zero(&r->gw);
}

/* Whether the table has a direct route of @p a's family. */
static bool has_direct(const struct rt_table *t, const struct inet_addr *a)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (is_direct(&t->r[i]) && inet_is_v4(&t->r[i].addr) == inet_is_v4(a))
			return true;
	return false;
}

static bool route_has(const struct rt_route *r, const struct inet_addr *a)
{
	return inet_prefix_has(&r->addr, r->len, a);
}

static int check_one(const struct rt_table *t, const struct rt_route *r, char *err, size_t errlen)
{
	char text[RT_TEXT_MAX], gw[INET_TEXT_MAX];
	bool near = false;

	if (is_direct(r))
		return 0;
	rt_format(r, text);
	inet_format(&r->gw, gw);
	if (inet_is_v4(&r->gw) != inet_is_v4(&r->addr))
		return fail(err, errlen, "route %s: gateway %s is not of the prefix's family", text,
			    gw);
	if (!has_direct(t, &r->gw))
		return 0;
	for (uint32_t k = 0; k < t->n && !near; k++)
		near = is_direct(&t->r[k]) && route_has(&t->r[k], &r->gw);
	if (!near)
		return fail(err, errlen,
			    "route %s: gateway %s is in no direct route (a gateway must be "
			    "on the router's segment)",
			    text, gw);
	return 0;
}

int rt_check(const struct rt_table *t, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < t->n; i++) {
		int rc = check_one(t, &t->r[i], err, errlen);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static int32_t find(const struct rt_table *t, const struct rt_route *r)
{
	for (uint32_t i = 0; i < t->n; i++)
		if (inet_equal(&t->r[i].addr, &r->addr) && t->r[i].len == r->len)
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

int rt_lookup(const struct rt_table *t, const struct inet_addr *ip, struct inet_addr *nh)
{
	int32_t best = -1;

	for (uint32_t i = 0; i < t->n; i++)
		if (route_has(&t->r[i], ip) && (best < 0 || t->r[i].len > t->r[best].len))
			best = (int32_t)i;
	if (best >= 0) {
		*nh = is_direct(&t->r[best]) ? *ip : t->r[best].gw;
		return 0;
	}
	if (has_direct(t, ip))
		return -ENOENT;
	*nh = *ip;
	return 0;
}

void rt_format(const struct rt_route *r, char out[RT_TEXT_MAX])
{
	char a[INET_PREFIX_TEXT_MAX], g[INET_TEXT_MAX] = "";

	if (r->len == 0)
		snprintf(a, sizeof(a), "%s", inet_is_v4(&r->addr) ? "default" : "default6");
	else
		inet_format_prefix(&r->addr, r->len, a);
	if (!is_direct(r))
		inet_format(&r->gw, g);
	snprintf(out, RT_TEXT_MAX, "%s %s%s", a, is_direct(r) ? "direct" : "via ", g);
}

bool rt_equal(const struct rt_table *a, const struct rt_table *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		int32_t k = find(b, &a->r[i]);

		if (k < 0 || !inet_equal(&b->r[k].gw, &a->r[i].gw))
			return false;
	}
	return true;
}
