/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_ROUTE_H
#define RINGWAY_ROUTE_H

/**
 * @file
 * The router's static routes: which next hop a node's address is reached through. Each route
 * is a prefix and either a gateway (`198.18.2.0/24 via 198.18.0.254`, `default via
 * 198.18.0.254`, `2001:2:2::/64 via 2001:2::fe`) or `direct` (the prefix is on the router's
 * own segment). IPv4 and IPv6 routes share a table but never mix: a route holds addresses of
 * one family (its gateway too), an address is matched only by routes of its family, and every
 * rule below applies per family. A lookup takes the longest prefix of the address's family
 * that holds it; with no match the address is on the segment when the table has no `direct`
 * route of that family (a family with gateways only, or none: every other address is a
 * neighbour, as before routes existed), and unreachable otherwise. Gateways are always
 * neighbours (never looked up again), and when the table has `direct` routes of a gateway's
 * family the gateway must lie in one of them.
 *
 * Addresses are struct inet_addr (lib/inet: IPv4 held mapped). Plain C, no allocation: a table
 * is a value that may be copied (the control plane keeps one, the data plane's control lcore
 * its own copy). Errors: 0 or a negative errno, with a reason in @p err where a function
 * takes one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most routes in a table. */
#define RT_ROUTES_MAX 256
/** Longest text rt_format() writes, with the NUL. */
#define RT_TEXT_MAX (INET_PREFIX_TEXT_MAX + 5 + INET_TEXT_MAX)

/** One route: addr/len -> gw (all zero: direct, the prefix is on the router's segment). */
struct rt_route {
	struct inet_addr addr; /**< prefix, no host bits set; its family is the route's */
	struct inet_addr gw;   /**< next hop of the same family, or all zero for direct */
	uint8_t len;	       /**< prefix length in family bits: 0..32 or 0..128 */
};

/** Routes in the order added (a replaced route keeps its place). Zero-initialise or rt_init. */
struct rt_table {
	struct rt_route r[RT_ROUTES_MAX];
	uint32_t n;
};

void rt_init(struct rt_table *t);

/**
 * Parse `PREFIX via GW` or `PREFIX direct`, where PREFIX is `A.B.C.D/LEN` or `IPV6/LEN` (no
 * host bits), `default` (0.0.0.0/0, or ::/0 when GW is IPv6) or `default6` (::/0); GW a
 * unicast address of the prefix's family: IPv4 not in 0.0.0.0/8, 127/8, multicast, reserved
 * or broadcast; IPv6 not ::, ::1 or multicast (ff00::/8). Leading, trailing and repeated
 * blanks are allowed.
 * @return 0, or -EINVAL with the reason.
 */
int rt_parse(const char *text, size_t len, struct rt_route *r, char *err, size_t errlen);

/** Parse a PREFIX alone (`A.B.C.D/LEN`, `IPV6/LEN`, `default` = 0.0.0.0/0 or `default6` =
 *  ::/0) into @p r's addr and len (gw zeroed). @return 0 or -EINVAL with the reason. */
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

/** Every gateway is of its route's family and a neighbour: in a `direct` route of its family
 *  when the table has any. */
int rt_check(const struct rt_table *t, char *err, size_t errlen);

/**
 * The next hop of @p ip: the gateway of the longest prefix of its family holding it, or @p ip
 * itself when that route is direct or (no match) the table has no direct route of its family.
 * Ties between equal prefixes cannot happen (one route per prefix). The next hop is always of
 * @p ip's family.
 * @return 0 and *nh; -ENOENT when the address has no route.
 */
int rt_lookup(const struct rt_table *t, const struct inet_addr *ip, struct inet_addr *nh);

/** `198.18.2.0/24 via 198.18.0.254`, `198.18.0.0/24 direct`, `default via ...`,
 *  `2001:2:2::/64 via 2001:2::fe`, `default6 via 2001:2::fe` (what rt_parse reads back). */
void rt_format(const struct rt_route *r, char out[RT_TEXT_MAX]);

/** True when both tables hold the same routes (in any order). */
bool rt_equal(const struct rt_table *a, const struct rt_table *b);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_ROUTE_H */
