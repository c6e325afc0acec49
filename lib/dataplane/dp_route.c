/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Next hops (control lcore): each node endpoint's next hop is resolved here, when a
 * publication claims the endpoint and again when the routes change, never per packet. The
 * endpoint then holds the next hop's address (what ARP asks for) and its MAC (what the
 * workers write into requests); every endpoint behind one gateway shares that gateway's MAC.
 * Called by dp_control.c (claims) and the router (dp_set_routes); calls lib/route.
 */

#include <stdatomic.h>
#include <string.h>

#include "dataplane_priv.h"

uint32_t dp_route_nexthop(const struct dp *dp, uint32_t ip)
{
	struct inet_addr a, nh;

	inet_from_v4(&a, ip);
	return rt_lookup(&dp->routes, &a, &nh) == 0 ? inet_v4(&nh) : 0;
}

void dp_route_nexthop6(const struct dp *dp, const uint8_t ip6[16], uint8_t nh6[16])
{
	struct inet_addr a, nh;

	inet_from_v6(&a, ip6);
	if (rt_lookup(&dp->routes, &a, &nh) == 0)
		memcpy(nh6, nh.b, 16);
	else
		memset(nh6, 0, 16);
}

/* Endpoint @p e's next hop under dp->routes moved: store it (the caller closed its window).
 * @return true when it changed. IPv6: nh_ip6 bytes, then nh_ip their fold (workers compare the
 * fold first; no window is open while the bytes change, so no NA is learned from a torn
 * read). */
static bool nexthop_update(struct dp *dp, struct dp_endpoint *e)
{
	uint8_t nh6[16];
	uint32_t nh;

	if (!e->v6) {
		nh = dp_route_nexthop(dp, atomic_load_explicit(&e->ip, memory_order_relaxed));
		if (nh == atomic_load_explicit(&e->nh_ip, memory_order_relaxed))
			return false;
		atomic_store_explicit(&e->arp_until, 0, memory_order_relaxed);
		atomic_store_explicit(&e->nh_ip, nh, memory_order_relaxed);
		return true;
	}
	dp_route_nexthop6(dp, e->ip6, nh6);
	if (memcmp(nh6, e->nh_ip6, 16) == 0)
		return false;
	atomic_store_explicit(&e->arp_until, 0, memory_order_relaxed);
	memcpy(e->nh_ip6, nh6, 16);
	atomic_store_explicit(&e->nh_ip, dp_ip6_set(nh6) ? dp_fold6(nh6) : 0, memory_order_relaxed);
	return true;
}

/* Another in-use endpoint (not @p i, not one whose next hop just moved: its MAC is the old
 * next hop's) with next hop @p nh and a learned (not static) MAC, or -1. */
static int64_t sibling(const struct dp *dp, uint32_t i)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);

	for (uint32_t k = 0; k < n; k++) {
		const struct dp_endpoint *o = &dp->eps[k];

		if (k == i || !o->used || o->mac_static || o->nh_moved ||
		    !dp_same_nh(o, &dp->eps[i]) ||
		    !(atomic_load_explicit(&o->mac, memory_order_relaxed) & DP_MAC_VALID))
			continue;
		return k;
	}
	return -1;
}

/* Endpoint @p i takes the MAC and ARP timing of endpoint @p k (same next hop), or starts
 * unresolved (k < 0): the next dp_control_poll asks at once. */
static void take_mac(struct dp *dp, uint32_t i, int64_t k)
{
	struct dp_endpoint *e = &dp->eps[i];

	e->tries = 0;
	e->resolving = false;
	e->next_tsc = 0;
	e->seen_snapshot = atomic_load_explicit(&e->arp_seen, memory_order_relaxed);
	if (k < 0) {
		e->learned_tsc = 0;
		atomic_store_explicit(&e->mac, 0, memory_order_relaxed);
		return;
	}
	e->learned_tsc = dp->eps[k].learned_tsc;
	e->next_tsc = dp->eps[k].next_tsc;
	atomic_store_explicit(&e->mac, atomic_load_explicit(&dp->eps[k].mac, memory_order_relaxed),
			      memory_order_relaxed);
}

void dp_route_share_mac(struct dp *dp, uint32_t i)
{
	struct dp_endpoint *e = &dp->eps[i];
	uint32_t nh = atomic_load_explicit(&e->nh_ip, memory_order_relaxed);
	int64_t k;

	if (e->mac_static || nh == 0)
		return;
	k = sibling(dp, i);
	if (k >= 0)
		take_mac(dp, i, k);
}

unsigned int dp_set_routes(struct dp *dp, const struct rt_table *t)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	unsigned int moved = 0;

	dp->routes = *t;
	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &dp->eps[i];

		/* The old next hop's ARP / ND window is closed first: nothing it answers is
		 * learned now. */
		if (!e->used || !nexthop_update(dp, e))
			continue;
		e->nh_moved = true;
		moved++;
	}
	if (moved == 0)
		return 0;
	/* A worker that matched a reply against the old next hop (and took its window before
	 * it closed) has finished storing that MAC once every worker passed a quiescent point;
	 * the MAC is replaced after that, so the old next hop's never outlives the change. */
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
	for (uint32_t i = 0; i < n; i++)
		if (dp->eps[i].nh_moved && !dp->eps[i].mac_static)
			take_mac(dp, i, sibling(dp, i));
	for (uint32_t i = 0; i < n; i++)
		dp->eps[i].nh_moved = false;
	return moved;
}
