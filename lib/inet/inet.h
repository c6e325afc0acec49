/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_INET_H
#define RINGWAY_INET_H

/**
 * @file
 * One address type for IPv4 and IPv6, so tables that hold either (routes, members, allowed
 * clients, neighbours) need one code path: an IPv4 address is held as its IPv4-mapped IPv6
 * form ::ffff:a.b.c.d (RFC 4291 2.5.5.2), and an IPv6 address never takes that form (it is
 * refused at parse). Prefix lengths count bits of the address's own family (0..32 for IPv4,
 * 0..128 for IPv6); a prefix holds only addresses of its family.
 *
 * Plain C, no allocation, DPDK-free. Text is untrusted: parsers take a length, need no NUL
 * and return 0 or -EINVAL.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest text inet_format() writes, with the NUL (INET6_ADDRSTRLEN). */
#define INET_TEXT_MAX 46
/** Longest text inet_format_prefix() writes, with the NUL. */
#define INET_PREFIX_TEXT_MAX (INET_TEXT_MAX + 4)

/** An IPv4 (mapped) or IPv6 address, bytes in network order. */
struct inet_addr {
	uint8_t b[16];
};

/** True for an IPv4 address (::ffff:0:0/96). */
static inline bool inet_is_v4(const struct inet_addr *a)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	return memcmp(a->b, mapped, sizeof(mapped)) == 0;
}

/** The IPv4 address of @p a (network order); only meaningful when inet_is_v4(). */
static inline uint32_t inet_v4(const struct inet_addr *a)
{
	uint32_t v;

	memcpy(&v, a->b + 12, 4);
	return v;
}

/** @p a = the IPv4 address @p be (network order). */
static inline void inet_from_v4(struct inet_addr *a, uint32_t be)
{
	memset(a->b, 0, 10);
	a->b[10] = a->b[11] = 0xff;
	memcpy(a->b + 12, &be, 4);
}

/** @p a = the IPv6 address @p b16 (16 bytes, network order). */
static inline void inet_from_v6(struct inet_addr *a, const uint8_t b16[16])
{
	memcpy(a->b, b16, 16);
}

/** True when @p a is all zero (unset: :: is never a usable address here). */
static inline bool inet_is_zero(const struct inet_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->b, zero, 16) == 0;
}

static inline bool inet_equal(const struct inet_addr *a, const struct inet_addr *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}

/** Bits in an address of @p a's family: 32 or 128. */
static inline unsigned int inet_family_bits(const struct inet_addr *a)
{
	return inet_is_v4(a) ? 32u : 128u;
}

/**
 * Parse an IPv4 dotted quad or an IPv6 address (RFC 4291 text, no zone, no brackets).
 * An IPv6 text that names an IPv4-mapped address (::ffff:a.b.c.d) is refused: IPv4 is
 * written as IPv4. @return 0 or -EINVAL.
 */
int inet_parse(const char *text, size_t len, struct inet_addr *a);

/** Dotted quad for IPv4, RFC 5952 text for IPv6. */
void inet_format(const struct inet_addr *a, char out[INET_TEXT_MAX]);

/**
 * Parse `ADDR/LEN` (LEN in the address's family bits; no host bits set).
 * @return 0, or -EINVAL with a reason in @p err (which may be NULL).
 */
int inet_parse_prefix(const char *text, size_t len, struct inet_addr *a, uint8_t *plen, char *err,
		      size_t errlen);

/** `ADDR/LEN`. */
void inet_format_prefix(const struct inet_addr *a, uint8_t plen, char out[INET_PREFIX_TEXT_MAX]);

/** True when @p a is in the prefix @p p / @p plen (same family; plen in family bits). */
bool inet_prefix_has(const struct inet_addr *p, uint8_t plen, const struct inet_addr *a);

/**
 * Parse an endpoint: `A.B.C.D:PORT` or `[IPV6]:PORT`, or with @p port_optional the address
 * alone (`A.B.C.D`, `[IPV6]` or a bare IPV6), *port left unchanged then.
 * @return 0 or -EINVAL.
 */
int inet_parse_endpoint(const char *text, size_t len, bool port_optional, struct inet_addr *a,
			uint16_t *port);

/** Longest text inet_format_endpoint() writes, with the NUL. */
#define INET_ENDPOINT_TEXT_MAX (INET_TEXT_MAX + 8)

/** `A.B.C.D:PORT` or `[IPV6]:PORT`. */
void inet_format_endpoint(const struct inet_addr *a, uint16_t port,
			  char out[INET_ENDPOINT_TEXT_MAX]);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_INET_H */
