/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_ROUTE_H
#define RINGWAY_ROUTE_H

/**
 * @file
 * The router's static routes: which next hop a node's IPv4 address is reached through. Each
 * route is a prefix and either a gateway (`198.18.2.0/24 via 198.18.0.254`, `default via
 * 198.18.0.254`) or `direct` (the prefix is on the router's own segment). A lookup takes the
 * longest prefix that holds the address; with no match the address is on the segment when
 * the table has no `direct` route (a table of gateways only, or an empty one: every other
 * address is a neighbour, as before routes existed), and unreachable otherwise.
 * Gateways are always neighbours (never looked up again), and when the table has `direct`
 * routes each gateway must lie in one of them.
 *
 * Addresses are IPv4 in network byte order. Plain C, no allocation: a table is a value that
 * may be copied (the control plane keeps one, the data plane's control lcore its own copy).
 * Errors: 0 or a negative errno, with a reason in @p err where a function takes one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most routes in a table. */
#define RT_ROUTES_MAX 256
/** Longest text rt_format() writes, with the NUL. */
#define RT_TEXT_MAX 48

/** One route: addr/len -> gw (0: direct, the prefix is on the router's segment). */
struct rt_route {
	uint32_t addr; /**< prefix, no host bits set */
	uint32_t mask;
	uint32_t gw; /**< next hop, or 0 for direct */
	uint8_t len; /**< prefix length 0..32 */
};

/** Routes in the order added (a replaced route keeps its place). Zero-initialise or rt_init. */
struct rt_table {
	struct rt_route r[RT_ROUTES_MAX];
	uint32_t n;
};

void rt_init(struct rt_table *t);

/**
 * Parse `PREFIX via GW` or `PREFIX direct`, where PREFIX is `A.B.C.D/LEN` (no host bits) or
 * `default` (0.0.0.0/0); GW a unicast IPv4 address (not 0.0.0.0/8, 127/8, multicast,
 * reserved or broadcast). Leading, trailing and repeated blanks are allowed.
 * @return 0, or -EINVAL with the reason.
 */
int rt_parse(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen);

/** Parse a PREFIX alone (`A.B.C.D/LEN` or `default`) into @p r's addr, mask and len.
 *  @return 0 or -EINVAL with the reason. */
int rt_parse_prefix(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen);

/**
 * Add @p r, or replace the next hop of the route with the same prefix. Refuses a full table
 * and a table whose gateways would not all be neighbours (rt_check).
 * @return 1 added, 2 replaced, or -ENOSPC / -EINVAL with the reason; @p t unchanged then.
 */
int rt_add(struct rt_table *t, const struct rt_route *r, char *err, size_t errlen);

/** Remove the route of prefix @p r (addr and len). @return 0, -ENOENT (no such route), or
 *  -EINVAL (the gateways left would not all be neighbours: the last `direct` route holding
 *  a gateway); @p t unchanged on error. */
int rt_remove(struct rt_table *t, const struct rt_route *r, char *err, size_t errlen);

/** Every gateway is a neighbour: in a `direct` route when the table has any. */
int rt_check(const struct rt_table *t, char *err, size_t errlen);

/**
 * The next hop of @p ip: the gateway of the longest prefix holding it, or @p ip itself when
 * that route is direct or (no match) the table has no direct route. Ties between equal
 * prefixes cannot happen (one route per prefix).
 * @return 0 and *nh; -ENOENT when the address has no route.
 */
int rt_lookup(const struct rt_table *t, uint32_t ip, uint32_t *nh);

/** `198.18.2.0/24 via 198.18.0.254`, `198.18.0.0/24 direct`, `default via ...`. */
void rt_format(const struct rt_route *r, char out[RT_TEXT_MAX]);

/** True when both tables hold the same routes (in any order). */
bool rt_equal(const struct rt_table *a, const struct rt_table *b);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_ROUTE_H */
