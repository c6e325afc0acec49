/* SPDX-License-Identifier: BSD-3-Clause */
/* Address text <-> struct inet_addr, prefixes and endpoints (see inet.h). */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "inet.h"

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

int inet_parse(const char *text, size_t len, struct inet_addr *a)
{
	char buf[INET_TEXT_MAX];
	struct in6_addr a6;
	struct in_addr a4;

	if (len == 0 || len >= sizeof(buf) || memchr(text, '\0', len) != NULL)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	if (memchr(buf, ':', len) == NULL) {
		/* inet_pton takes only the four-part decimal form (no octal, no short forms) */
		if (inet_pton(AF_INET, buf, &a4) != 1)
			return -EINVAL;
		inet_from_v4(a, a4.s_addr);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &a6) != 1)
		return -EINVAL;
	inet_from_v6(a, a6.s6_addr);
	/* one spelling per address: an IPv4 node is written as IPv4, so tables and the state
	 * file never hold the same host twice under two names */
	if (inet_is_v4(a))
		return -EINVAL;
	return 0;
}

void inet_format(const struct inet_addr *a, char out[INET_TEXT_MAX])
{
	if (inet_is_v4(a)) {
		struct in_addr a4 = {.s_addr = inet_v4(a)};

		inet_ntop(AF_INET, &a4, out, INET_TEXT_MAX);
	} else {
		inet_ntop(AF_INET6, a->b, out, INET_TEXT_MAX);
	}
}

/* Clear the bits of @p a past @p plen (family bits); report whether any was set. */
static bool clear_host_bits(struct inet_addr *a, uint8_t plen)
{
	unsigned int first = inet_is_v4(a) ? 96u : 0u, bit = first + plen, i;
	bool had = false;

	for (i = bit; i < 128; i++) {
		uint8_t m = (uint8_t)(0x80u >> (i % 8));

		if (a->b[i / 8] & m) {
			had = true;
			a->b[i / 8] &= (uint8_t)~m;
		}
	}
	return had;
}

int inet_parse_prefix(const char *text, size_t len, struct inet_addr *a, uint8_t *plen, char *err,
		      size_t errlen)
{
	const char *slash = memchr(text, '/', len);
	int q = len > 60 ? 60 : (int)len;
	unsigned long n = 0;
	size_t i, dlen;

	if (slash == NULL || slash == text || slash + 1 == text + len)
		return fail(err, errlen, "bad prefix '%.*s': expected ADDRESS/LEN", q, text);
	dlen = (size_t)(text + len - slash - 1);
	if (dlen > 3)
		return fail(err, errlen, "bad prefix '%.*s': bad length", q, text);
	for (i = 0; i < dlen; i++) {
		if (slash[1 + i] < '0' || slash[1 + i] > '9')
			return fail(err, errlen, "bad prefix '%.*s': bad length", q, text);
		n = n * 10 + (unsigned long)(slash[1 + i] - '0');
	}
	if (inet_parse(text, (size_t)(slash - text), a) < 0)
		return fail(err, errlen, "bad prefix '%.*s': expected an IPv4 or IPv6 address", q,
			    text);
	if (n > inet_family_bits(a))
		return fail(err, errlen, "bad prefix '%.*s': length above %u", q, text,
			    inet_family_bits(a));
	*plen = (uint8_t)n;
	if (clear_host_bits(a, *plen))
		return fail(err, errlen, "prefix %.*s has host bits set", q, text);
	return 0;
}

void inet_format_prefix(const struct inet_addr *a, uint8_t plen, char out[INET_PREFIX_TEXT_MAX])
{
	char t[INET_TEXT_MAX];

	inet_format(a, t);
	snprintf(out, INET_PREFIX_TEXT_MAX, "%s/%u", t, (unsigned int)plen);
}

bool inet_prefix_has(const struct inet_addr *p, uint8_t plen, const struct inet_addr *a)
{
	unsigned int bit, full, rest;

	if (inet_is_v4(p) != inet_is_v4(a))
		return false;
	bit = (inet_is_v4(p) ? 96u : 0u) + plen;
	full = bit / 8;
	rest = bit % 8;
	if (memcmp(p->b, a->b, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((p->b[full] ^ a->b[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

static int parse_port(const char *p, size_t len, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (len == 0 || len > 5)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int inet_parse_endpoint(const char *text, size_t len, bool port_optional, struct inet_addr *a,
			uint16_t *port)
{
	const char *colon;

	if (len > 0 && text[0] == '[') {
		const char *close = memchr(text, ']', len);
		size_t alen;

		if (close == NULL)
			return -EINVAL;
		alen = (size_t)(close - text - 1);
		if (memchr(text + 1, ':', alen) == NULL || inet_parse(text + 1, alen, a) < 0)
			return -EINVAL; /* brackets hold IPv6 only */
		if (close + 1 == text + len)
			return port_optional ? 0 : -EINVAL;
		if (close[1] != ':')
			return -EINVAL;
		return parse_port(close + 2, (size_t)(text + len - close - 2), port);
	}
	colon = memchr(text, ':', len);
	if (colon == NULL)
		return port_optional ? inet_parse(text, len, a) : -EINVAL;
	if (memchr(colon + 1, ':', (size_t)(text + len - colon - 1)) != NULL) {
		/* a bare IPv6 address: no port can follow without brackets */
		if (!port_optional || inet_parse(text, len, a) < 0 || inet_is_v4(a))
			return -EINVAL;
		return 0;
	}
	if (inet_parse(text, (size_t)(colon - text), a) < 0 || !inet_is_v4(a))
		return -EINVAL;
	return parse_port(colon + 1, (size_t)(text + len - colon - 1), port);
}

void inet_format_endpoint(const struct inet_addr *a, uint16_t port,
			  char out[INET_ENDPOINT_TEXT_MAX])
{
	char t[INET_TEXT_MAX];

	inet_format(a, t);
	if (inet_is_v4(a))
		snprintf(out, INET_ENDPOINT_TEXT_MAX, "%s:%u", t, (unsigned int)port);
	else
		snprintf(out, INET_ENDPOINT_TEXT_MAX, "[%s]:%u", t, (unsigned int)port);
}
