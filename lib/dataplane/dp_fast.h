/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast lane (issue 30): the commonest request, a single-key read from an allowed client
 * over IPv4 (or IPv6 to an IPv6 node: fast_request6, below), handled in the fewest stages that
 * keep every check the general path makes.
 *
 *   look-ahead: the port's header pattern, lengths and checksum verdicts (check_served, as
 *     for every frame), then fast_hint(): mc_match_single_get() (frame header, `get <key>`,
 *     one `mg <key> [flags]` line without q or b, one binary GET / GETK) instead of the full
 *     parse into a struct mc_requests; the key hashed and its ring index entry prefetched;
 *     verdict DP_V_FAST. The owner is looked up DP_LOOKUP_AHEAD packets ahead as for any
 *     request (owner_hint).
 *   the packet's turn: fast_request(): fast_eligible() (the one predicate), then slot,
 *     rewrite, TX. Anything fast_eligible() refuses goes to fast_fallback(): the full parse
 *     of the same bytes into the record, and handle_request(), today's general path, which
 *     then decides (and counts) as it always did. The look-ahead's hash and owner stay: the
 *     matcher guarantees the full parse finds the same one plain key.
 *
 * A part of dp_worker.c (included there after handle_request()): it uses that file's static
 * helpers (client_allowed, rewrite_udp, handle_request) and is inlined into its burst loop.
 *
 * For the changes that come: a key -> pool choice goes in fast_hint() before the hash (the
 * pool's placement hashes and looks up the key) and, where it needs more than one pool's
 * state at the packet's turn, a condition in fast_eligible(); a draining router's refusal is a
 * condition there (DP_DRAIN_WORD_MODE, loaded once per burst).
 * Replicated writes do not concern the lane: it carries reads only.
 */
#ifndef RINGWAY_DP_FAST_H
#define RINGWAY_DP_FAST_H

/* The look-ahead of an IPv4 request datagram (@p a, checked by check_served or check_frame):
 * the fast lane's match when there is a placement, else the general parse (key_hint). */
static __rte_always_inline void fast_hint(struct dp_worker *w, struct dp_ahead *a)
{
	struct dp_hint *h = &a->hint;
	const uint8_t *pay = a->pk.payload;
	uint16_t off, len;

	/* w->fast_off: a client MAC list, a re-tag towards the nodes, or the lane off. */
	if (likely(w->cur != NULL) && likely(!(a->pk.vlan | w->fast_off)) &&
	    mc_match_single_get(pay, a->pk.plen, &off, &len)) {
		/* h->payload stays NULL: the record holds no parse until fast_fallback(). */
		h->hash = pl_key_hash(w->cur->pl, pay + off, len);
		h->has_owner = true;
		pl_prefetch_hash(w->cur->pl, h->hash);
		a->verdict = DP_V_FAST;
		return;
	}
	key_hint(w, a, pay, a->pk.plen);
}

/* A DP_V_FAST request the lane does not take: the general path, on the full parse of the
 * same bytes (the look-ahead's owner kept: same key). Out of line: the rare case. */
static __rte_noinline void fast_fallback(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a)
{
	struct dp_hint *h = &a->hint;

	h->payload = a->pk.payload;
	h->plen = a->pk.plen;
	h->err = mc_parse_datagram_flags(a->pk.payload, a->pk.plen, MC_PARSE_CTL_KEYS, h->req);
	w->ctr[DP_CTR_FAST_FALLBACK]++;
	handle_request(w, m, &a->pk);
}

/*
 * The one eligibility predicate: true when the general path, given this request (one plain
 * read, not quiet, untagged, of family @p v6) would forward it to endpoint *@p ep with MAC
 * word *@p mac through exactly the steps fast_request() (fast_request6()) takes, with nothing
 * else to do on the way (the lane on for this worker, fast_hint() saw to that: no client MAC
 * list, no re-tag towards the nodes): the client allowed by prefix, not the hot-key sampler's
 * turn and no hot set loaded, no warm-up window for reads, the owner an endpoint of the
 * client's family that serves and has a MAC, a free slot. Everything else (hot key, warm-up,
 * a down node or one of the other family, a refused client, no placement member) is the
 * general path's to decide and count.
 */
static __rte_always_inline bool fast_eligible(const struct dp_worker *w, const struct dp_ahead *a,
					      uint32_t *ep, uint64_t *mac, bool v6)
{
	int32_t owner = a->hint.owner;

	/* A draining router takes no new request: the general path answers (drain_request). */
	if (unlikely(owner < 0 || w->hot_left == 1 || w->hot->set != NULL ||
		     (w->prev_cur != NULL && w->warm_reads) || DP_DRAIN_WORD_MODE(w->drain) != 0))
		return false;
	if (unlikely(v6 ? !client_allowed6(w, &a->pk.ip6->src_addr)
			: !client_allowed(w, a->pk.ip->src_addr)))
		return false;
	*ep = w->cur->ep[owner];
	/* The node of the client's family: the other one's rewrite is the general path's. */
	if (unlikely(!dp_ep_serving(w, *ep) || w->eps[*ep].v6 != v6))
		return false;
	*mac = atomic_load_explicit(&w->eps[*ep].mac, memory_order_relaxed);
	return likely(*mac & DP_MAC_VALID) && likely(w->free_head != w->free_tail);
}

/* A DP_V_FAST request: forwarded at once when fast_eligible(), else the general path. What it
 * does and counts is forward_request()'s for a one-message read (the slot expects one message,
 * no parser; the sampler's gap counts down as dp_hot_count() would). Out of line, as
 * handle_request() is (the reply path inside the burst loop must not pay its spills). */
static __rte_noinline void fast_request(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a)
{
	struct dp_pkt *pk = &a->pk;
	struct dp_slot *sl;
	uint16_t port_be, reqid;
	uint32_t ep, s;
	uint64_t mac;

	if (unlikely(!fast_eligible(w, a, &ep, &mac, false)) ||
	    unlikely(!dp_client_take(w, pk->ip->src_addr, 1)))
		return fast_fallback(w, m, a); /* nothing changed yet */
	w->hot_left--; /* not 1 (fast_eligible): no sample due */
	s = dp_slot_take_as(w, pk, ep, pk->ip->src_addr, &port_be, &reqid);
	sl = &w->slots[s];
	sl->multi = DP_MULTI_NONE;
	sl->parser = DP_NO_PARSER;
	memcpy(&pk->eth->dst_addr, &mac, 6); /* little-endian: bytes 0..5 of the word */
	rte_ether_addr_copy(&w->node_src_mac, &pk->eth->src_addr);
	rewrite_udp(w, m, pk, w->node_src_ip, sl->node_ip, port_be, sl->node_port, reqid);
	dp_tx_push_fwd(w, m, ep, s);
	w->ctr[DP_CTR_FAST]++;
}

/*
 * The IPv6 lane: the same request over IPv6 from a client to an IPv6 node. check_served6()
 * has made ipv6_serve()'s tests of a frame that matches the IPv6 pattern (DP_V_REQUEST6, pk
 * whole); fast_hint6() matches its payload as fast_hint() does (DP_V_FAST6), else parses it
 * for handle_request() (DP_V_REQUEST6 stays). At its turn fast_request6() meets
 * fast_eligible() (the IPv6 client ACL, an IPv6 owner) exactly as an IPv4 one.
 */
static __rte_always_inline void fast_hint6(struct dp_worker *w, struct dp_ahead *a)
{
	struct dp_hint *h = &a->hint;
	const uint8_t *pay = a->pk.payload;
	uint16_t off, len;

	if (likely(w->cur != NULL) && likely(!w->fast_off) &&
	    mc_match_single_get(pay, a->pk.plen, &off, &len)) {
		h->hash = pl_key_hash(w->cur->pl, pay + off, len);
		h->has_owner = true;
		pl_prefetch_hash(w->cur->pl, h->hash);
		a->verdict = DP_V_FAST6;
		return;
	}
	key_hint(w, a, pay, a->pk.plen);
}

/* A DP_V_FAST6 request: as fast_request(), over IPv6; what fast_eligible() refuses goes to
 * handle_request() (as from ipv6_serve()). */
static __rte_noinline void fast_request6(struct dp_worker *w, struct rte_mbuf *m,
					 struct dp_ahead *a)
{
	struct dp_pkt *pk = &a->pk;
	struct dp_slot *sl;
	uint16_t port_be, reqid;
	uint32_t ep, s;
	uint64_t mac;

	uint32_t client;

	if (unlikely(!fast_eligible(w, a, &ep, &mac, true)))
		return fast_fallback(w, m, a);
	client = dp_fold6((const uint8_t *)&pk->ip6->src_addr);
	if (unlikely(!dp_client_take(w, client, 1)))
		return fast_fallback(w, m, a);
	w->hot_left--;
	s = dp_slot_take_as(w, pk, ep, client, &port_be, &reqid);
	sl = &w->slots[s];
	sl->multi = DP_MULTI_NONE;
	sl->parser = DP_NO_PARSER;
	memcpy(&pk->eth->dst_addr, &mac, 6);
	rte_ether_addr_copy(&w->node_src_mac, &pk->eth->src_addr);
	rewrite_udp6(w, m, pk, w->node_src_ip6, w->slot6[s].node, port_be, sl->node_port, reqid);
	dp_tx_push_fwd(w, m, ep, s);
	w->ctr[DP_CTR_FAST]++;
}

#endif /* RINGWAY_DP_FAST_H */
