/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nodes-file parser: one member a line, `name address[:port] [weight]`.
 *
 * Accepted:
 *   name     1..PL_NAME_MAX bytes of [A-Za-z0-9._-]
 *   address  an IPv4 dotted quad (four decimal octets 0..255, no leading zeros), a host
 *            name (labels of [A-Za-z0-9-], not starting or ending with '-', dot separated),
 *            at most PL_ADDR_MAX bytes, or an IPv6 address in brackets ([2001:db8::1]; no
 *            zone, no IPv4-mapped form), stored without the brackets in RFC 5952 form
 *   port     decimal 1..65535 after a single ':' (after the ']' for IPv6; default 11211)
 *   weight   decimal 0..PL_WEIGHT_MAX (default 1; 0 = drained)
 * Fields are separated by spaces or tabs; `#` starts a comment that runs to the end of the
 * line; blank lines are ignored; "\r\n" line ends are accepted. Input bytes are untrusted:
 * every error message shows the offending field with non-printable bytes as '?'.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet.h"
#include "placement.h"

/* Largest weight a nodes file may give: keeps `ring` (weight x vnodes tokens) buildable. */
#define PL_DEFAULT_PORT 11211u
/* Longest field text an error message quotes. */
#define QUOTE_MAX 40

/* One whitespace-separated field of a line. */
struct field {
	const char *p;
	size_t len;
};

/* Parser state: the growing member array and a name -> index hash set for duplicates. */
struct parser {
	struct pl_member *m;
	uint32_t *lines; /* line of each member, for duplicate messages */
	uint32_t n, cap;
	uint32_t *slots; /* open addressing: member index + 1, 0 = empty */
	uint32_t nslots; /* power of two, > 2 * cap */
	char *err;
	size_t errlen;
};

static bool is_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Copy a field into @p out for an error message: at most QUOTE_MAX bytes, printable only. */
static void quote(const struct field *f, char out[QUOTE_MAX + 4])
{
	size_t i, n = f->len < QUOTE_MAX ? f->len : QUOTE_MAX;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)f->p[i];
		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (f->len > QUOTE_MAX) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

__attribute__((format(printf, 3, 4))) static int fail(struct parser *ps, uint32_t line,
						      const char *fmt, ...)
{
	va_list ap;
	int off;

	if (ps->errlen == 0)
		return -EINVAL;
	off = snprintf(ps->err, ps->errlen, "line %u: ", line);
	if (off >= 0 && (size_t)off < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + off, ps->errlen - (size_t)off, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Parse a decimal number of 1..10 digits no larger than @p max. */
static bool parse_uint(const char *p, size_t len, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > 10)
		return false;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* An IPv4 dotted quad: exactly four decimal octets 0..255, no empty parts, no leading zeros. */
static bool is_ipv4(const char *p, size_t len)
{
	size_t i = 0, parts = 0;

	while (i <= len) {
		size_t start = i;
		uint32_t octet;

		while (i < len && p[i] != '.')
			i++;
		/* no leading zeros: inet_aton would read them as octal, inet_pton refuses them */
		if (i - start > 3 || (i - start > 1 && p[start] == '0') ||
		    !parse_uint(p + start, i - start, 255, &octet))
			return false;
		parts++;
		i++; /* skip the dot (or step past the end) */
	}
	return parts == 4;
}

/* A host name: dot-separated labels of [A-Za-z0-9-], none empty or edged with '-'. */
static bool is_hostname(const char *p, size_t len)
{
	size_t i = 0;

	while (i <= len) {
		size_t start = i;

		while (i < len && p[i] != '.') {
			unsigned char c = (unsigned char)p[i];
			if (!is_name_char(c) || c == '_')
				return false;
			i++;
		}
		if (i == start || p[start] == '-' || p[i - 1] == '-')
			return false;
		i++;
	}
	return true;
}

static bool all_digits_and_dots(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((p[i] < '0' || p[i] > '9') && p[i] != '.')
			return false;
	return true;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Index of the member named @p name, or -1. */
static int64_t find_name(const struct parser *ps, const char *name)
{
	uint32_t mask = ps->nslots - 1, i;

	if (ps->nslots == 0)
		return -1;
	for (i = name_hash(name) & mask; ps->slots[i] != 0; i = (i + 1) & mask)
		if (strcmp(ps->m[ps->slots[i] - 1].name, name) == 0)
			return (int64_t)ps->slots[i] - 1;
	return -1;
}

static void insert_name(struct parser *ps, uint32_t idx)
{
	uint32_t mask = ps->nslots - 1, i;

	for (i = name_hash(ps->m[idx].name) & mask; ps->slots[i] != 0; i = (i + 1) & mask)
		;
	ps->slots[i] = idx + 1;
}

/* Make room for one more member; rebuilds the name set when the array grows. */
static int grow(struct parser *ps)
{
	uint32_t cap, i;
	void *m, *lines, *slots;

	if (ps->n < ps->cap)
		return 0;
	cap = ps->cap ? ps->cap * 2 : 16;
	m = realloc(ps->m, (size_t)cap * sizeof(*ps->m));
	if (m == NULL)
		return -ENOMEM;
	ps->m = m;
	lines = realloc(ps->lines, (size_t)cap * sizeof(*ps->lines));
	if (lines == NULL)
		return -ENOMEM;
	ps->lines = lines;
	slots = calloc((size_t)cap * 4, sizeof(*ps->slots));
	if (slots == NULL)
		return -ENOMEM;
	free(ps->slots);
	ps->slots = slots;
	ps->nslots = cap * 4;
	ps->cap = cap;
	for (i = 0; i < ps->n; i++)
		insert_name(ps, i);
	return 0;
}

static int parse_name(struct parser *ps, uint32_t line, const struct field *f, struct pl_member *m)
{
	char q[QUOTE_MAX + 4];
	size_t i;

	quote(f, q);
	if (f->len > PL_NAME_MAX)
		return fail(ps, line, "bad name '%s': expected at most %d bytes", q, PL_NAME_MAX);
	for (i = 0; i < f->len; i++)
		if (!is_name_char((unsigned char)f->p[i]))
			return fail(ps, line,
				    "bad name '%s': expected letters, digits, '.', '_' or '-'", q);
	memcpy(m->name, f->p, f->len);
	m->name[f->len] = '\0';
	return 0;
}

static int parse_port(struct parser *ps, uint32_t line, const char *p, size_t len,
		      struct pl_member *m)
{
	struct field pf = {p, len};
	char q[QUOTE_MAX + 4];
	uint32_t port;

	quote(&pf, q);
	if (!parse_uint(p, len, 65535, &port) || port == 0)
		return fail(ps, line, "bad port '%s': expected a number 1..65535", q);
	m->port = (uint16_t)port;
	return 0;
}

/* A bare IPv6 address (or one followed by what looks like a port: 2001:db8::1:11211 is an
 * address too), which needs brackets here. */
static bool is_ipv6(const char *p, size_t len)
{
	struct inet_addr a;

	const char *last = p + len;

	if (inet_parse(p, len, &a) == 0)
		return !inet_is_v4(&a);
	while (last > p && last[-1] != ':')
		last--;
	return last > p && inet_parse(p, (size_t)(last - 1 - p), &a) == 0 && !inet_is_v4(&a);
}

/* [IPV6][:port]: stored without brackets, in RFC 5952 form (one spelling per address). */
static int parse_address6(struct parser *ps, uint32_t line, const struct field *f,
			  struct pl_member *m)
{
	const char *close = memchr(f->p, ']', f->len);
	struct field a = {f->p, close ? (size_t)(close + 1 - f->p) : f->len};
	struct inet_addr ip;
	char q[QUOTE_MAX + 4];

	quote(&a, q);
	if (close == NULL)
		return fail(ps, line, "bad address '%s': expected ']' after an IPv6 address", q);
	if (memchr(f->p + 1, ':', a.len - 2) == NULL || inet_parse(f->p + 1, a.len - 2, &ip) < 0)
		return fail(ps, line,
			    "bad address '%s': expected an IPv6 address in brackets "
			    "([2001:db8::1], no zone; IPv4 is written a.b.c.d)",
			    q);
	if (a.len < f->len && close[1] != ':') {
		quote(f, q);
		return fail(ps, line, "bad address '%s': expected ':PORT' after ']'", q);
	}
	inet_format(&ip, m->addr);
	m->port = PL_DEFAULT_PORT;
	if (a.len < f->len)
		return parse_port(ps, line, close + 2, f->len - a.len - 1, m);
	return 0;
}

/* address[:port]: the port follows the only ':'; IPv6 in brackets. */
static int parse_address(struct parser *ps, uint32_t line, const struct field *f,
			 struct pl_member *m)
{
	const char *colon = memchr(f->p, ':', f->len);
	size_t alen = colon ? (size_t)(colon - f->p) : f->len;
	struct field a = {f->p, alen};
	char q[QUOTE_MAX + 4];
	uint32_t port = PL_DEFAULT_PORT;

	if (f->len > 0 && f->p[0] == '[')
		return parse_address6(ps, line, f, m);
	if (colon != NULL && memchr(colon + 1, ':', f->len - alen - 1) != NULL &&
	    is_ipv6(f->p, f->len)) {
		quote(f, q);
		return fail(ps, line,
			    "bad address '%s': an IPv6 address goes in brackets "
			    "([2001:db8::1]:11211)",
			    q);
	}
	quote(&a, q);
	if (alen == 0)
		return fail(ps, line,
			    "bad address: expected an IPv4 address or host name before ':'");
	if (alen > PL_ADDR_MAX)
		return fail(ps, line, "bad address '%s': expected at most %d bytes", q,
			    PL_ADDR_MAX);
	if (all_digits_and_dots(a.p, alen) ? !is_ipv4(a.p, alen) : !is_hostname(a.p, alen))
		return fail(ps, line,
			    "bad address '%s': expected an IPv4 address (a.b.c.d, each 0..255) "
			    "or a host name",
			    q);
	if (colon != NULL) {
		struct field pf = {colon + 1, f->len - alen - 1};

		quote(&pf, q);
		if (!parse_uint(pf.p, pf.len, 65535, &port) || port == 0)
			return fail(ps, line, "bad port '%s': expected a number 1..65535", q);
	}
	memcpy(m->addr, a.p, alen);
	m->addr[alen] = '\0';
	m->port = (uint16_t)port;
	return 0;
}

static int parse_weight(struct parser *ps, uint32_t line, const struct field *f,
			struct pl_member *m)
{
	char q[QUOTE_MAX + 4];

	quote(f, q);
	if (!parse_uint(f->p, f->len, PL_WEIGHT_MAX, &m->weight))
		return fail(ps, line, "bad weight '%s': expected a whole number 0..%u", q,
			    PL_WEIGHT_MAX);
	return 0;
}

/* Split one line (comment already cut) into at most 4 fields; returns the field count. */
static unsigned split(const char *p, size_t len, struct field f[4])
{
	unsigned nf = 0;
	size_t i = 0;

	while (i < len && nf < 4) {
		while (i < len && is_blank((unsigned char)p[i]))
			i++;
		if (i == len)
			break;
		f[nf].p = p + i;
		while (i < len && !is_blank((unsigned char)p[i]))
			i++;
		f[nf].len = (size_t)(p + i - f[nf].p);
		nf++;
	}
	return nf;
}

static int parse_line(struct parser *ps, uint32_t line, const char *p, size_t len)
{
	const char *hash = memchr(p, '#', len);
	struct field f[4];
	struct pl_member m;
	unsigned nf;
	int64_t dup;
	int rc;

	if (hash != NULL)
		len = (size_t)(hash - p);
	nf = split(p, len, f);
	if (nf == 0)
		return 0;
	if (nf == 4)
		return fail(ps, line, "too many fields: expected 'name address[:port] [weight]'");
	memset(&m, 0, sizeof(m));
	m.weight = 1;
	rc = parse_name(ps, line, &f[0], &m);
	if (rc == 0 && nf < 2)
		return fail(ps, line, "expected an address after the name '%s'", m.name);
	if (rc == 0)
		rc = parse_address(ps, line, &f[1], &m);
	if (rc == 0 && nf == 3)
		rc = parse_weight(ps, line, &f[2], &m);
	if (rc != 0)
		return rc;
	dup = find_name(ps, m.name);
	if (dup >= 0)
		return fail(ps, line,
			    "duplicate name '%s' (first on line %u): expected unique names", m.name,
			    ps->lines[dup]);
	if (ps->n >= PL_MEMBERS_MAX)
		return fail(ps, line, "too many members: expected at most %d", PL_MEMBERS_MAX);
	rc = grow(ps);
	if (rc != 0) {
		if (ps->errlen > 0)
			snprintf(ps->err, ps->errlen, "line %u: out of memory", line);
		return rc;
	}
	ps->m[ps->n] = m;
	ps->lines[ps->n] = line;
	insert_name(ps, ps->n);
	ps->n++;
	return 0;
}

void pl_member_endpoint(const struct pl_member *m, char out[PL_ENDPOINT_MAX])
{
	if (strchr(m->addr, ':') != NULL)
		snprintf(out, PL_ENDPOINT_MAX, "[%s]:%u", m->addr, (unsigned int)m->port);
	else
		snprintf(out, PL_ENDPOINT_MAX, "%s:%u", m->addr, (unsigned int)m->port);
}

int pl_members_parse(const char *text, size_t len, struct pl_member **out, uint32_t *n, char *err,
		     size_t errlen)
{
	struct parser ps = {.err = err, .errlen = errlen};
	uint32_t line = 0;
	size_t pos = 0;
	int rc = 0;

	if (errlen > 0)
		err[0] = '\0';
	if (out == NULL || n == NULL || (text == NULL && len > 0))
		return -EINVAL;
	*out = NULL;
	*n = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;

		line++;
		rc = parse_line(&ps, line, text + pos, end - pos);
		if (rc != 0)
			goto out;
		pos = end + 1;
	}
	if (ps.n == 0) {
		rc = fail(&ps, line ? line : 1,
			  "no members: expected at least one line "
			  "'name address[:port] [weight]'");
		goto out;
	}
	*out = ps.m;
	*n = ps.n;
	ps.m = NULL;
out:
	free(ps.m);
	free(ps.lines);
	free(ps.slots);
	return rc;
}
