/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Membership state (members, placement config, epoch, and the route table it records), its
 * validation rules, and the state file: a versioned text format closed by an XXH64 checksum
 * line, written atomically.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "control_priv.h"

#define STATE_MAGIC   "ringway-state"
#define STATE_VERSION 1
/* A state file above this size is refused rather than read (65536 members fit easily). */
#define STATE_FILE_MAX (64u << 20)

struct ctl_state {
	struct pl_config cfg;
	uint64_t epoch;
	uint32_t n;
	uint32_t cap;
	struct ctl_member *m;
	bool has_routes;	/* the state file records `routes` (a live route change made it) */
	struct rt_table routes; /* with has_routes: the router's route table */
};

/* ---- text buffer and small helpers ---- */

static int text_reserve(struct ctl_text *t, size_t extra)
{
	size_t need, cap;
	char *p;

	if (t->oom)
		return -ENOMEM;
	need = t->len + extra + 1;
	if (need <= t->cap)
		return 0;
	cap = t->cap ? t->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(t->buf, cap);
	if (p == NULL) {
		t->oom = true;
		return -ENOMEM;
	}
	t->buf = p;
	t->cap = cap;
	return 0;
}

int ctl_text_append(struct ctl_text *t, const char *p, size_t len)
{
	if (text_reserve(t, len) < 0)
		return -ENOMEM;
	if (len > 0)
		memcpy(t->buf + t->len, p, len);
	t->len += len;
	t->buf[t->len] = '\0';
	return 0;
}

int ctl_text_appendf(struct ctl_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || text_reserve(t, (size_t)n) < 0)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
	return 0;
}

void ctl_text_reset(struct ctl_text *t)
{
	t->len = 0;
	t->oom = false;
	if (t->buf != NULL)
		t->buf[0] = '\0';
}

void ctl_text_release(struct ctl_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

int ctl_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int ctl_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Six colon-separated pairs of hex digits; unicast, not all zero. */
int ctl_mac_parse(const char *s, size_t len, uint8_t mac[6])
{
	uint8_t any = 0;

	if (len != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		int hi = hex_digit(s[i * 3]), lo = hex_digit(s[i * 3 + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != ':'))
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
		any |= mac[i];
	}
	if (any == 0 || (mac[0] & 1))
		return -EINVAL;
	return 0;
}

void ctl_mac_format(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

/* ---- member specs ---- */

struct tok {
	const char *p;
	size_t n;
};

static bool next_tok(const char **cur, const char *end, struct tok *t)
{
	const char *p = *cur;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end) {
		*cur = p;
		return false;
	}
	t->p = p;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	t->n = (size_t)(p - t->p);
	*cur = p;
	return true;
}

static bool tok_is(const struct tok *t, const char *word)
{
	return t->n == strlen(word) && memcmp(t->p, word, t->n) == 0;
}

static int name_parse(const struct tok *t, char *out, char *err, size_t errlen);

int ctl_name_parse(const char *s, size_t len, char out[PL_NAME_MAX + 1], char *err, size_t errlen)
{
	struct tok t = {s, len};

	if (len == 0)
		return ctl_fail(err, errlen, "empty name");
	return name_parse(&t, out, err, errlen);
}

static int name_parse(const struct tok *t, char *out, char *err, size_t errlen)
{
	if (t->n > PL_NAME_MAX)
		return ctl_fail(err, errlen, "name longer than %d bytes", PL_NAME_MAX);
	for (size_t i = 0; i < t->n; i++) {
		char c = t->p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return ctl_fail(err, errlen,
					"bad name '%.*s': use letters, digits, '.', '_', '-'",
					(int)t->n, t->p);
	}
	memcpy(out, t->p, t->n);
	out[t->n] = '\0';
	return 0;
}

/* A member is a memcached node, never this host, a group or everyone (the config's rule for
 * node addresses, app/ringway/config.c): IPv4 not 0.0.0.0/8, 127/8, multicast, reserved or
 * broadcast; IPv6 not ::, ::1 or multicast. */
static int addr_usable(const struct inet_addr *a, char *err, size_t errlen)
{
	static const uint8_t loop6[16] = {[15] = 1};
	char text[INET_TEXT_MAX];

	inet_format(a, text);
	if (inet_is_v4(a)) {
		uint32_t h = ntohl(inet_v4(a));

		if ((h >> 24) == 0 || (h >> 24) == 127 || h >= 0xe0000000u)
			return ctl_fail(err, errlen,
					"address %s is no unicast node address (0.0.0.0/8, "
					"127.0.0.0/8, multicast, reserved and broadcast are "
					"refused)",
					text);
		return 0;
	}
	if (inet_is_zero(a) || memcmp(a->b, loop6, 16) == 0 || a->b[0] == 0xff)
		return ctl_fail(err, errlen,
				"address %s is no unicast node address (::, ::1 and multicast are "
				"refused)",
				text);
	return 0;
}

/* Length of the address part of ADDR:PORT or [IPV6]:PORT (before the port's ':'), or 0 when
 * @p t has no port. For error messages only. */
static size_t addr_part(const struct tok *t)
{
	const char *end = t->p + t->n, *c;

	if (t->n > 0 && t->p[0] == '[') {
		c = memchr(t->p, ']', t->n);
		return c != NULL && c + 1 < end && c[1] == ':' ? (size_t)(c + 1 - t->p) : 0;
	}
	c = memchr(t->p, ':', t->n);
	return c != NULL && memchr(c + 1, ':', (size_t)(end - c - 1)) == NULL ? (size_t)(c - t->p)
									      : 0;
}

/* ADDR[:PORT]: an IPv4 dotted quad or [IPV6] (stored without brackets); canonical form. */
static int addr_parse(const struct tok *t, struct pl_member *m, char *err, size_t errlen)
{
	struct inet_addr a;
	uint16_t port = 11211;

	if (inet_parse_endpoint(t->p, t->n, true, &a, &port) < 0) {
		size_t n = addr_part(t);

		if (n > 0 && inet_parse_endpoint(t->p, n, true, &a, &port) == 0)
			return ctl_fail(err, errlen, "bad port in '%.*s': expected 1..65535",
					(int)t->n, t->p);
		return ctl_fail(err, errlen,
				"bad address '%.*s': expected IPv4 ADDR:PORT or [IPV6]:PORT",
				(int)t->n, t->p);
	}
	if (!inet_is_v4(&a) && memchr(t->p, '[', t->n) == NULL)
		return ctl_fail(err, errlen,
				"bad address '%.*s': an IPv6 address goes in brackets "
				"([2001:db8::1]:11211)",
				(int)t->n, t->p);
	if (addr_usable(&a, err, errlen) < 0)
		return -EINVAL;
	inet_format(&a, m->addr);
	m->port = port;
	return 0;
}

static int member_option(const struct tok *key, const struct tok *val, struct ctl_member *m,
			 unsigned *seen, char *err, size_t errlen)
{
	uint64_t w;

	if (tok_is(key, "weight") && !(*seen & 1)) {
		*seen |= 1;
		if (val == NULL || ctl_parse_u64(val->p, val->n, CTL_WEIGHT_MAX, &w) < 0)
			return ctl_fail(err, errlen, "weight must be an integer 0..%d",
					CTL_WEIGHT_MAX);
		m->pl.weight = (uint32_t)w;
		return 0;
	}
	if (tok_is(key, "mac") && !(*seen & 2)) {
		*seen |= 2;
		if (val == NULL || ctl_mac_parse(val->p, val->n, m->mac) < 0)
			return ctl_fail(err, errlen,
					"bad MAC: expected a unicast xx:xx:xx:xx:xx:xx");
		m->has_mac = true;
		return 0;
	}
	if (tok_is(key, "weight") || tok_is(key, "mac"))
		return ctl_fail(err, errlen, "'%.*s' given twice", (int)key->n, key->p);
	return ctl_fail(err, errlen, "unexpected '%.*s': expected weight W, mac MAC or --keep",
			(int)key->n, key->p);
}

int ctl_member_parse(const char *text, size_t len, struct ctl_member *m, char *err, size_t errlen)
{
	const char *cur = text, *end = text + len;
	struct tok name, addr, key, val;
	unsigned seen = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	m->pl.weight = 1;
	if (!next_tok(&cur, end, &name))
		return ctl_fail(err, errlen,
				"expected NAME ADDR:PORT [weight W] [mac MAC] [--keep]");
	if ((rc = name_parse(&name, m->pl.name, err, errlen)) < 0)
		return rc;
	if (!next_tok(&cur, end, &addr))
		return ctl_fail(err, errlen, "missing ADDR:PORT after the name");
	if ((rc = addr_parse(&addr, &m->pl, err, errlen)) < 0)
		return rc;
	while (next_tok(&cur, end, &key)) {
		bool have;

		if (tok_is(&key, "--keep")) {
			if (m->keep)
				return ctl_fail(err, errlen, "'--keep' given twice");
			m->keep = true;
			continue;
		}
		have = next_tok(&cur, end, &val);
		rc = member_option(&key, have ? &val : NULL, m, &seen, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- state ---- */

struct ctl_state *ctl_state_new(const struct pl_config *cfg, uint64_t epoch)
{
	struct ctl_state *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	if (cfg != NULL)
		st->cfg = *cfg;
	st->epoch = epoch;
	return st;
}

static int state_reserve(struct ctl_state *st, uint32_t n)
{
	struct ctl_member *m;
	uint32_t cap = st->cap ? st->cap : 8;

	if (n <= st->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	m = realloc(st->m, (size_t)cap * sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	st->m = m;
	st->cap = cap;
	return 0;
}

struct ctl_state *ctl_state_copy(const struct ctl_state *st)
{
	struct ctl_state *c = ctl_state_new(&st->cfg, st->epoch);

	if (c == NULL)
		return NULL;
	if (state_reserve(c, st->n) < 0) {
		ctl_state_free(c);
		errno = ENOMEM;
		return NULL;
	}
	if (st->n > 0)
		memcpy(c->m, st->m, (size_t)st->n * sizeof(*c->m));
	c->n = st->n;
	ctl_state_set_routes(c, ctl_state_routes(st));
	return c;
}

void ctl_state_free(struct ctl_state *st)
{
	if (st == NULL)
		return;
	free(st->m);
	free(st);
}

uint64_t ctl_state_epoch(const struct ctl_state *st)
{
	return st->epoch;
}

void ctl_state_set_epoch(struct ctl_state *st, uint64_t epoch)
{
	st->epoch = epoch;
}

uint32_t ctl_state_count(const struct ctl_state *st)
{
	return st->n;
}

const struct ctl_member *ctl_state_member(const struct ctl_state *st, uint32_t idx)
{
	return idx < st->n ? &st->m[idx] : NULL;
}

const struct pl_config *ctl_state_config(const struct ctl_state *st)
{
	return &st->cfg;
}

const struct rt_table *ctl_state_routes(const struct ctl_state *st)
{
	return st->has_routes ? &st->routes : NULL;
}

void ctl_state_set_routes(struct ctl_state *st, const struct rt_table *t)
{
	st->has_routes = t != NULL;
	if (t != NULL)
		st->routes = *t;
	else
		rt_init(&st->routes);
}

static bool member_equal(const struct ctl_member *a, const struct ctl_member *b)
{
	return strcmp(a->pl.name, b->pl.name) == 0 && strcmp(a->pl.addr, b->pl.addr) == 0 &&
	       a->pl.port == b->pl.port && a->pl.weight == b->pl.weight &&
	       a->has_mac == b->has_mac && (!a->has_mac || memcmp(a->mac, b->mac, 6) == 0);
}

bool ctl_state_equal(const struct ctl_state *a, const struct ctl_state *b)
{
	if (a->epoch != b->epoch || a->n != b->n || a->cfg.algo != b->cfg.algo ||
	    a->cfg.vnodes != b->cfg.vnodes || a->cfg.maglev_size != b->cfg.maglev_size ||
	    a->cfg.key_hash != b->cfg.key_hash || memcmp(a->cfg.hash_tag, b->cfg.hash_tag, 2) != 0)
		return false;
	if (a->has_routes != b->has_routes || (a->has_routes && !rt_equal(&a->routes, &b->routes)))
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (!member_equal(&a->m[i], &b->m[i]))
			return false;
	return true;
}

int32_t ctl_state_find(const struct ctl_state *st, const char *name)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (strcmp(st->m[i].pl.name, name) == 0)
			return (int32_t)i;
	return -ENOENT;
}

static int32_t find_addr(const struct ctl_state *st, const struct pl_member *m)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (st->m[i].pl.port == m->port && strcmp(st->m[i].pl.addr, m->addr) == 0)
			return (int32_t)i;
	return -ENOENT;
}

/* Field rules every member must pass, however it arrives. */
static int member_check(const struct ctl_member *m, char *err, size_t errlen)
{
	struct tok t = {m->pl.name, strnlen(m->pl.name, sizeof(m->pl.name))};
	char name[PL_NAME_MAX + 1];

	if (t.n == 0 || t.n > PL_NAME_MAX)
		return ctl_fail(err, errlen, "empty or overlong name");
	if (name_parse(&t, name, err, errlen) < 0)
		return -EINVAL;
	if (m->pl.weight > CTL_WEIGHT_MAX)
		return ctl_fail(err, errlen, "weight of %s above %d", m->pl.name, CTL_WEIGHT_MAX);
	if (m->pl.port == 0)
		return ctl_fail(err, errlen, "port of %s is 0", m->pl.name);
	return 0;
}

int ctl_state_add(struct ctl_state *st, const struct ctl_member *m, char *err, size_t errlen)
{
	int32_t dup;

	if (member_check(m, err, errlen) < 0)
		return -EINVAL;
	if (ctl_state_find(st, m->pl.name) >= 0)
		return ctl_fail(err, errlen, "duplicate name: %s is already a member", m->pl.name);
	dup = find_addr(st, &m->pl);
	if (dup >= 0) {
		char ep[PL_ENDPOINT_MAX];

		pl_member_endpoint(&m->pl, ep);
		return ctl_fail(err, errlen, "duplicate address: %s is already member %s", ep,
				st->m[dup].pl.name);
	}
	if (st->n >= PL_MEMBERS_MAX) {
		ctl_fail(err, errlen, "too many members (limit %d)", PL_MEMBERS_MAX);
		return -E2BIG;
	}
	if (state_reserve(st, st->n + 1) < 0) {
		ctl_fail(err, errlen, "out of memory");
		return -ENOMEM;
	}
	st->m[st->n++] = *m;
	return 0;
}

int ctl_state_check(const struct ctl_state *st, char *err, size_t errlen)
{
	if (st->n == 0)
		return ctl_fail(err, errlen, "the membership is empty");
	for (uint32_t i = 0; i < st->n; i++)
		if (st->m[i].pl.weight > 0)
			return 0;
	return ctl_fail(err, errlen, "no member has a weight above 0");
}

int ctl_members_check_routes(const struct rt_table *t, const struct ctl_member *m, uint32_t n,
			     char *err, size_t errlen)
{
	for (uint32_t i = 0; i < n; i++) {
		struct inet_addr a, nh;

		if (inet_parse(m[i].pl.addr, strlen(m[i].pl.addr), &a) == 0 &&
		    rt_lookup(t, &a, &nh) < 0)
			return ctl_fail(err, errlen, "node %s: no route to %s", m[i].pl.name,
					m[i].pl.addr);
	}
	return 0;
}

int ctl_state_check_routes(const struct ctl_state *st, const struct rt_table *t, char *err,
			   size_t errlen)
{
	return ctl_members_check_routes(t, st->m, st->n, err, errlen);
}

/* Append `R1, R2` (each route of @p a that @p b does not hold), or nothing. */
static void routes_missing(const struct rt_table *a, const struct rt_table *b, struct ctl_text *out)
{
	char text[RT_TEXT_MAX];
	bool first = true;

	for (uint32_t i = 0; i < a->n; i++) {
		bool held = false;

		for (uint32_t j = 0; j < b->n && !held; j++)
			held = a->r[i].len == b->r[j].len &&
			       inet_equal(&a->r[i].addr, &b->r[j].addr) &&
			       inet_equal(&a->r[i].gw, &b->r[j].gw);
		if (held)
			continue;
		rt_format(&a->r[i], text);
		ctl_text_appendf(out, "%s%s", first ? "" : ", ", text);
		first = false;
	}
	if (first)
		ctl_text_appendf(out, "none");
}

int ctl_routes_diff(const struct rt_table *a, const char *a_name, const struct rt_table *b,
		    const char *b_name, struct ctl_text *out)
{
	if (rt_equal(a, b))
		return 0;
	ctl_text_appendf(out, "only in %s: ", a_name);
	routes_missing(a, b, out);
	ctl_text_appendf(out, "; only in %s: ", b_name);
	routes_missing(b, a, out);
	return out->oom ? -ENOMEM : 1;
}

static int cmp_name(const void *a, const void *b)
{
	const struct ctl_member *x = *(const struct ctl_member *const *)a;
	const struct ctl_member *y = *(const struct ctl_member *const *)b;

	return strcmp(x->pl.name, y->pl.name);
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ctl_member *x = *(const struct ctl_member *const *)a;
	const struct ctl_member *y = *(const struct ctl_member *const *)b;
	int c = strcmp(x->pl.addr, y->pl.addr);

	return c != 0 ? c : (int)x->pl.port - (int)y->pl.port;
}

/* Duplicate names and addresses in m[0..n), by sorting pointers: O(n log n) for big lists. */
static int check_unique(const struct ctl_member *m, uint32_t n, char *err, size_t errlen)
{
	const struct ctl_member **v = malloc((size_t)n * sizeof(*v));
	int rc = 0;

	if (v == NULL) {
		ctl_fail(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		v[i] = &m[i];
	qsort(v, n, sizeof(*v), cmp_name);
	for (uint32_t i = 1; i < n && rc == 0; i++)
		if (cmp_name(&v[i - 1], &v[i]) == 0)
			rc = ctl_fail(err, errlen, "duplicate name: %s", v[i]->pl.name);
	qsort(v, n, sizeof(*v), cmp_addr);
	for (uint32_t i = 1; i < n && rc == 0; i++) {
		char ep[PL_ENDPOINT_MAX];

		if (cmp_addr(&v[i - 1], &v[i]) != 0)
			continue;
		pl_member_endpoint(&v[i]->pl, ep);
		rc = ctl_fail(err, errlen, "duplicate address: %s (%s and %s)", ep,
			      v[i - 1]->pl.name, v[i]->pl.name);
	}
	free(v);
	return rc;
}

int ctl_state_replace(struct ctl_state *st, const struct ctl_member *m, uint32_t n, char *err,
		      size_t errlen)
{
	uint32_t i;
	int rc;

	if (n == 0)
		return ctl_fail(err, errlen, "the member list is empty");
	if (n > PL_MEMBERS_MAX)
		return ctl_fail(err, errlen, "too many members (limit %d)", PL_MEMBERS_MAX);
	for (i = 0; i < n; i++)
		if (member_check(&m[i], err, errlen) < 0)
			return -EINVAL;
	if ((rc = check_unique(m, n, err, errlen)) < 0)
		return rc;
	for (i = 0; i < n && m[i].pl.weight == 0; i++)
		;
	if (i == n)
		return ctl_fail(err, errlen, "no member has a weight above 0");
	if (state_reserve(st, n) < 0) {
		ctl_fail(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(st->m, m, (size_t)n * sizeof(*m));
	st->n = n;
	return 0;
}

/* Members with a weight above 0, not counting member @p skip (-1: none). */
static uint32_t weighted_except(const struct ctl_state *st, int32_t skip)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < st->n; i++)
		k += (int32_t)i != skip && st->m[i].pl.weight > 0;
	return k;
}

static int apply_remove(struct ctl_state *st, const char *name, char *err, size_t errlen)
{
	int32_t i = ctl_state_find(st, name);

	if (i < 0)
		return ctl_fail(err, errlen, "unknown node %s", name);
	if (st->n == 1)
		return ctl_fail(err, errlen, "cannot remove %s: it is the last member", name);
	if (weighted_except(st, i) == 0)
		return ctl_fail(err, errlen,
				"cannot remove %s: no member with a weight above 0 would be left",
				name);
	memmove(&st->m[i], &st->m[i + 1], (size_t)(st->n - (uint32_t)i - 1) * sizeof(*st->m));
	st->n--;
	return 0;
}

static int apply_weight(struct ctl_state *st, const char *name, uint32_t w, char *err,
			size_t errlen)
{
	int32_t i = ctl_state_find(st, name);

	if (i < 0)
		return ctl_fail(err, errlen, "unknown node %s", name);
	if (w == 0 && weighted_except(st, i) == 0)
		return ctl_fail(err, errlen,
				"weight 0 for %s would leave no member with a weight above 0",
				name);
	st->m[i].pl.weight = w;
	return 0;
}

int ctl_state_apply(struct ctl_state *st, const struct ctl_cmd *cmd, char *err, size_t errlen)
{
	switch (cmd->type) {
	case CTL_CMD_ADD:
		if (cmd->member.pl.weight == 0)
			return ctl_fail(err, errlen,
					"weight 0 refused for add: a new member needs weight "
					"1..%d (drain an existing one with 'weight NAME 0')",
					CTL_WEIGHT_MAX);
		return ctl_state_add(st, &cmd->member, err, errlen);
	case CTL_CMD_REMOVE:
		return apply_remove(st, cmd->name, err, errlen);
	case CTL_CMD_WEIGHT:
		return apply_weight(st, cmd->name, cmd->weight, err, errlen);
	case CTL_CMD_REPLACE:
		return ctl_state_replace(st, cmd->members, cmd->nmembers, err, errlen);
	default:
		return ctl_fail(err, errlen, "not a change command");
	}
}

struct pl_placement *ctl_state_build(const struct ctl_state *st, char *err, size_t errlen)
{
	struct pl_member *v = malloc(((size_t)st->n + 1) * sizeof(*v));
	struct pl_placement *pl;
	int saved;

	if (v == NULL) {
		ctl_fail(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < st->n; i++)
		v[i] = st->m[i].pl;
	pl = pl_build(&st->cfg, v, st->n);
	saved = errno;
	free(v);
	if (pl == NULL) {
		ctl_fail(err, errlen, "the placement refused this membership: %s", strerror(saved));
		errno = saved;
	}
	return pl;
}

/* ---- state file ---- */

static void format_member(const struct ctl_member *m, struct ctl_text *out)
{
	char mac[18], ep[PL_ENDPOINT_MAX];

	pl_member_endpoint(&m->pl, ep);
	ctl_text_appendf(out, "%s %s weight %u", m->pl.name, ep, m->pl.weight);
	if (m->has_mac) {
		ctl_mac_format(m->mac, mac);
		ctl_text_appendf(out, " mac %s", mac);
	}
}

/* `routes N` and one `route ...` line a route, in table order (what rt_parse reads back). */
static void format_routes(const struct rt_table *t, struct ctl_text *out)
{
	char text[RT_TEXT_MAX];

	ctl_text_appendf(out, "routes %u\n", t->n);
	for (uint32_t i = 0; i < t->n; i++) {
		rt_format(&t->r[i], text);
		ctl_text_appendf(out, "route %s\n", text);
	}
}

int ctl_state_format(const struct ctl_state *st, struct ctl_text *out)
{
	const char *key_hash = pl_hash_name(st->cfg.key_hash);
	const char *algo = pl_algo_name(st->cfg.algo);

	ctl_text_appendf(out, "%s %d\n", STATE_MAGIC, STATE_VERSION);
	ctl_text_appendf(out, "epoch %" PRIu64 "\n", st->epoch);
	ctl_text_appendf(out, "algo %s\nvnodes %u\nmaglev_size %u\nkey_hash %s\n",
			 algo ? algo : "?", st->cfg.vnodes, st->cfg.maglev_size,
			 key_hash ? key_hash : "?");
	if (st->cfg.hash_tag[0] != '\0')
		ctl_text_appendf(out, "hash_tag %c%c\n", st->cfg.hash_tag[0], st->cfg.hash_tag[1]);
	else
		ctl_text_appendf(out, "hash_tag none\n");
	ctl_text_appendf(out, "members %u\n", st->n);
	for (uint32_t i = 0; i < st->n; i++) {
		ctl_text_appendf(out, "member ");
		format_member(&st->m[i], out);
		ctl_text_appendf(out, "\n");
	}
	if (st->has_routes)
		format_routes(&st->routes, out);
	if (out->oom)
		return -ENOMEM;
	return ctl_text_appendf(out, "checksum %016" PRIx64 "\n",
				(uint64_t)XXH64(out->buf, out->len, 0));
}

/* A line reader over the file text; `line` counts from 1. */
struct lines {
	const char *p, *end;
	unsigned line;
};

static bool next_line(struct lines *l, struct tok *t)
{
	const char *nl;

	if (l->p >= l->end)
		return false;
	nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	if (nl == NULL)
		return false; /* a last line without its newline is truncated */
	t->p = l->p;
	t->n = (size_t)(nl - l->p);
	l->p = nl + 1;
	l->line++;
	return true;
}

/* Line `key VALUE`: *val is VALUE. */
static int keyed(struct lines *l, const char *key, struct tok *val, char *err, size_t errlen)
{
	struct tok t;
	size_t k = strlen(key);

	if (!next_line(l, &t))
		return ctl_fail(err, errlen, "line %u: truncated, expected '%s'", l->line + 1, key);
	if (t.n <= k + 1 || memcmp(t.p, key, k) != 0 || t.p[k] != ' ')
		return ctl_fail(err, errlen, "line %u: expected '%s VALUE'", l->line, key);
	val->p = t.p + k + 1;
	val->n = t.n - k - 1;
	return 0;
}

static int keyed_u64(struct lines *l, const char *key, uint64_t max, uint64_t *out, char *err,
		     size_t errlen)
{
	struct tok v = {0}; /* keyed() fills it on success; set for -O3 flow analysis */

	if (keyed(l, key, &v, err, errlen) < 0)
		return -EINVAL;
	if (ctl_parse_u64(v.p, v.n, max, out) < 0)
		return ctl_fail(err, errlen, "line %u: bad %s '%.*s'", l->line, key, (int)v.n, v.p);
	return 0;
}

static int keyed_name(struct lines *l, const char *key, char *buf, size_t size, char *err,
		      size_t errlen)
{
	struct tok v = {0}; /* keyed() fills it on success; set for -O3 flow analysis */

	if (keyed(l, key, &v, err, errlen) < 0)
		return -EINVAL;
	if (v.n >= size)
		return ctl_fail(err, errlen, "line %u: bad %s", l->line, key);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	return 0;
}

static int parse_header(struct lines *l, struct pl_config *cfg, uint64_t *epoch, char *err,
			size_t errlen)
{
	char name[32];
	struct tok v = {0}; /* keyed() fills it on success; set for -O3 flow analysis */
	uint64_t x;

	if (keyed_u64(l, STATE_MAGIC, 1000, &x, err, errlen) < 0)
		return ctl_fail(err, errlen, "line 1: not a ringway state file");
	if (x != STATE_VERSION)
		return ctl_fail(err, errlen,
				"line 1: state file version %" PRIu64
				", this build reads version %d",
				x, STATE_VERSION);
	if (keyed_u64(l, "epoch", UINT64_MAX, epoch, err, errlen) < 0)
		return -EINVAL;
	if (keyed_name(l, "algo", name, sizeof(name), err, errlen) < 0)
		return -EINVAL;
	if (pl_algo_parse(name, &cfg->algo) < 0)
		return ctl_fail(err, errlen, "line %u: unknown algorithm '%s'", l->line, name);
	if (keyed_u64(l, "vnodes", UINT32_MAX, &x, err, errlen) < 0)
		return -EINVAL;
	cfg->vnodes = (uint32_t)x;
	if (keyed_u64(l, "maglev_size", UINT32_MAX, &x, err, errlen) < 0)
		return -EINVAL;
	cfg->maglev_size = (uint32_t)x;
	if (keyed_name(l, "key_hash", name, sizeof(name), err, errlen) < 0)
		return -EINVAL;
	if (pl_hash_parse(name, &cfg->key_hash) < 0)
		return ctl_fail(err, errlen, "line %u: unknown key hash '%s'", l->line, name);
	if (keyed(l, "hash_tag", &v, err, errlen) < 0)
		return -EINVAL;
	if (v.n == 2 && v.p[0] > ' ' && v.p[1] > ' ')
		memcpy(cfg->hash_tag, v.p, 2);
	else if (!(v.n == 4 && memcmp(v.p, "none", 4) == 0))
		return ctl_fail(err, errlen, "line %u: hash_tag must be two characters or none",
				l->line);
	return 0;
}

/* The checksum line must be the last line and match the bytes before it. */
static int check_sum(const char *text, size_t len, size_t *body, char *err, size_t errlen)
{
	static const char key[] = "checksum ";
	const size_t line = sizeof(key) - 1 + 16 + 1;
	uint64_t want = 0, got;
	const char *p;

	if (len < line || text[len - 1] != '\n' || (len > line && text[len - line - 1] != '\n') ||
	    memcmp(text + len - line, key, sizeof(key) - 1) != 0)
		return ctl_fail(err, errlen, "truncated: the last line is not 'checksum <xxh64>'");
	p = text + len - line + sizeof(key) - 1;
	for (int i = 0; i < 16; i++) {
		int d = hex_digit(p[i]);

		if (d < 0 || (p[i] >= 'A' && p[i] <= 'F'))
			return ctl_fail(err, errlen, "malformed checksum line");
		want = want << 4 | (uint64_t)d;
	}
	*body = len - line;
	got = (uint64_t)XXH64(text, *body, 0);
	if (got != want)
		return ctl_fail(err, errlen,
				"checksum mismatch: the file says %016" PRIx64
				", its content hashes to %016" PRIx64 " (corrupt or edited)",
				want, got);
	return 0;
}

/* `member ...` lines, validated as a whole (duplicates by sorting: fast at 65536 members). */
static int parse_members(struct lines *l, struct ctl_state *st, uint64_t count, char *err,
			 size_t errlen)
{
	struct ctl_member *m = calloc(count + 1, sizeof(*m));
	char why[160];
	struct tok t;
	int rc = 0;

	if (m == NULL)
		return ctl_fail(err, errlen, "out of memory"), -ENOMEM;
	for (uint64_t i = 0; i < count && rc == 0; i++) {
		if (!next_line(l, &t))
			rc = ctl_fail(err, errlen,
				      "line %u: truncated: %" PRIu64 " of %" PRIu64 " members",
				      l->line + 1, i, count);
		else if (t.n < 7 || memcmp(t.p, "member ", 7) != 0)
			rc = ctl_fail(err, errlen, "line %u: expected 'member ...'", l->line);
		else if (ctl_member_parse(t.p + 7, t.n - 7, &m[i], why, sizeof(why)) < 0)
			rc = ctl_fail(err, errlen, "line %u: %s", l->line, why);
	}
	if (rc == 0 && (rc = ctl_state_replace(st, m, (uint32_t)count, why, sizeof(why))) < 0)
		ctl_fail(err, errlen, "members: %s", why);
	free(m);
	return rc;
}

/* One `route PREFIX via GW|direct` line into t->r[t->n]: no prefix twice. */
static int parse_route_line(struct lines *l, struct rt_table *t, uint64_t i, uint64_t count,
			    char *err, size_t errlen)
{
	struct rt_route *r = &t->r[t->n];
	char why[160], text[RT_TEXT_MAX];
	struct tok line;

	if (!next_line(l, &line))
		return ctl_fail(err, errlen,
				"line %u: truncated: %" PRIu64 " of %" PRIu64 " routes",
				l->line + 1, i, count);
	if (line.n < 6 || memcmp(line.p, "route ", 6) != 0)
		return ctl_fail(err, errlen, "line %u: expected 'route PREFIX via GW|direct'",
				l->line);
	if (rt_parse(line.p + 6, line.n - 6, r, why, sizeof(why)) < 0)
		return ctl_fail(err, errlen, "line %u: %s", l->line, why);
	for (uint32_t j = 0; j < t->n; j++)
		if (t->r[j].len == r->len && inet_equal(&t->r[j].addr, &r->addr)) {
			rt_format(r, text);
			return ctl_fail(err, errlen,
					"line %u: a second route for the prefix of '%s'", l->line,
					text);
		}
	t->n++;
	return 0;
}

/*
 * The optional `routes N` section after the members (a file written before routes were kept
 * has none). The table is taken as a whole, in the file's order: rt_check on the result (a
 * route by route rt_add could refuse an order a live table may have), then every member must
 * have a route in it, so a file whose routes strand a member is refused before anything of it
 * is used.
 */
static int parse_routes(struct lines *l, struct ctl_state *st, char *err, size_t errlen)
{
	struct rt_table *t = malloc(sizeof(*t));
	char why[200];
	uint64_t count;
	int rc;

	if (t == NULL)
		return ctl_fail(err, errlen, "out of memory"), -ENOMEM;
	rt_init(t);
	rc = keyed_u64(l, "routes", RT_ROUTES_MAX, &count, err, errlen);
	for (uint64_t i = 0; rc == 0 && i < count; i++)
		rc = parse_route_line(l, t, i, count, err, errlen);
	if (rc == 0 && rt_check(t, why, sizeof(why)) < 0)
		rc = ctl_fail(err, errlen, "routes: %s", why);
	if (rc == 0 && ctl_state_check_routes(st, t, why, sizeof(why)) < 0)
		rc = ctl_fail(err, errlen, "its routes leave a member without one: %s", why);
	if (rc == 0)
		ctl_state_set_routes(st, t);
	free(t);
	return rc;
}

/* True when the next line of @p l starts with @p word and a space. */
static bool next_is(const struct lines *l, const char *word)
{
	size_t k = strlen(word);

	return (size_t)(l->end - l->p) > k && memcmp(l->p, word, k) == 0 && l->p[k] == ' ';
}

int ctl_state_parse(const char *text, size_t len, struct ctl_state **out, char *err, size_t errlen)
{
	struct lines l = {text, text, 0};
	struct ctl_state *st = NULL;
	struct pl_config cfg = {0};
	uint64_t epoch, count;
	char why[200];
	size_t body = 0;
	int rc;

	*out = NULL;
	if (memchr(text, '\0', len) != NULL)
		return ctl_fail(err, errlen, "the file holds a NUL byte: not a state file");
	if ((rc = check_sum(text, len, &body, err, errlen)) < 0)
		return rc;
	l.end = text + body;
	if ((rc = parse_header(&l, &cfg, &epoch, err, errlen)) < 0)
		return rc;
	if ((rc = keyed_u64(&l, "members", PL_MEMBERS_MAX, &count, err, errlen)) < 0)
		return rc;
	st = ctl_state_new(&cfg, epoch);
	if (st == NULL)
		return -ENOMEM;
	rc = parse_members(&l, st, count, err, errlen);
	if (rc == 0 && next_is(&l, "routes"))
		rc = parse_routes(&l, st, err, errlen);
	if (rc == 0 && l.p != l.end)
		rc = ctl_fail(err, errlen, "line %u: unexpected text after the %s", l.line + 1,
			      st->has_routes ? "routes" : "members");
	if (rc == 0 && ctl_state_check(st, why, sizeof(why)) < 0)
		rc = ctl_fail(err, errlen, "%s", why);
	if (rc < 0) {
		ctl_state_free(st);
		return rc;
	}
	*out = st;
	return 0;
}

static int read_all(int fd, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank while we read */
		got += (size_t)n;
	}
	return 0;
}

int ctl_state_load(const char *path, struct ctl_state **out, char *err, size_t errlen)
{
	char why[240];
	struct stat sb;
	char *buf = NULL;
	int fd, rc;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		rc = -errno;
		ctl_fail(err, errlen, "state file %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > STATE_FILE_MAX) {
		rc = ctl_fail(err, errlen, "state file %s: not a regular file of at most %u bytes",
			      path, STATE_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (buf == NULL) {
		rc = -ENOMEM;
		ctl_fail(err, errlen, "state file %s: out of memory", path);
		goto out;
	}
	rc = read_all(fd, buf, (size_t)sb.st_size);
	if (rc < 0) {
		ctl_fail(err, errlen, "state file %s: read: %s", path, strerror(-rc));
		goto out;
	}
	rc = ctl_state_parse(buf, (size_t)sb.st_size, out, why, sizeof(why));
	if (rc < 0)
		ctl_fail(err, errlen, "state file %s: %s", path, why);
out:
	free(buf);
	close(fd);
	return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, rc = 0;

	if (slash == NULL)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (dir == NULL)
		return -ENOMEM;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

int ctl_state_save(const struct ctl_state *st, const char *path, char *err, size_t errlen)
{
	struct ctl_text text = {0};
	char *tmp = NULL;
	int fd = -1, rc;

	rc = ctl_state_format(st, &text);
	if (rc == 0 && asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		tmp = NULL;
		rc = -ENOMEM;
	}
	if (rc < 0) {
		ctl_fail(err, errlen, "state file %s: out of memory", path);
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		rc = -errno;
		ctl_fail(err, errlen, "state file %s: cannot create %s: %s", path, tmp,
			 strerror(-rc));
		goto out;
	}
	rc = write_all(fd, text.buf, text.len);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	fd = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		ctl_fail(err, errlen, "state file %s: write %s: %s", path, tmp, strerror(-rc));
		unlink(tmp);
		goto out;
	}
	rc = fsync_dir_of(path);
	if (rc < 0) {
		/* The rename happened: @p path holds @p st now, only its durability is unknown. */
		ctl_fail(err, errlen,
			 "state file %s holds the new state, but the fsync of its directory "
			 "failed (%s): a crash may bring back the previous one",
			 path, strerror(-rc));
		rc = 1;
	}
out:
	free(tmp);
	ctl_text_release(&text);
	return rc;
}
