/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker loop, in the order a packet meets it:
 *   dp_worker_poll -> dp_forward_burst: look_ahead (check_served: the port's IPv4 frame
 *     pattern, else check_served6: its IPv6 one, else check_frame: Ethernet, VLAN, IPv4, UDP;
 *     a request's parse or the fast lane's match), then handle_packet where the checks sent it
 *     -> handle_ipv6 (a parallel path for IPv6 off the pattern: extension headers, ICMPv6)
 *     -> handle_request  (client -> router: mcproto, placement, slot, rewrite to the node)
 *     -> handle_reply    (node -> router: slot check, rewrite back to the client)
 *   -> dp_tx_push / dp_tx_flush (dp_tx.h: outcome counted when the NIC takes the packet).
 * What the router answers itself goes to dp_local.c, multi-gets over several nodes to
 * dp_mget.c; slots, TX and drops are the layer below (dp_tx.h). Everything here runs on the
 * worker's own lcore and touches only its own dp_worker, except the hand-off ring of another
 * worker (multi-producer enqueue) and the neighbour MAC words (relaxed atomic loads).
 */

#include <assert.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>

#ifdef __SSE4_1__
#include <smmintrin.h>
#endif

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dp_frag.h"
#include "dp_hot.h"
#include "dp_observe.h"
#include "dp_tx.h"

/*
 * Rewrite the addresses of a parsed UDP packet and its memcached request id, keeping every
 * checksum valid: incrementally (RFC 1624) in software, or left to the NIC when it offloads.
 * A UDP checksum of 0 (none) stays 0. All values as stored on the wire except reqid (host).
 * Always inlined: each packet of the forward and reply paths comes here once.
 */
static __rte_always_inline void rewrite_udp(struct dp_worker *w, struct rte_mbuf *m,
					    struct dp_pkt *pk, uint32_t sip, uint32_t dip,
					    uint16_t sport, uint16_t dport, uint16_t reqid)
{
	struct rte_ipv4_hdr *ip = pk->ip;
	struct rte_udp_hdr *udp = pk->udp;
	uint16_t old_reqid, new_reqid = rte_cpu_to_be_16(reqid);
	uint16_t old_ttl_proto, new_ttl_proto;

	memcpy(&old_reqid, pk->payload, 2);
	memcpy(pk->payload, &new_reqid, 2);
	memcpy(&old_ttl_proto, &ip->time_to_live, 2);
	ip->time_to_live = 64;
	memcpy(&new_ttl_proto, &ip->time_to_live, 2);

	if (w->tx_offload) {
		ip->src_addr = sip;
		ip->dst_addr = dip;
		udp->src_port = sport;
		udp->dst_port = dport;
		return dp_tx_cksum_offload(m, ip, udp, pk->l2_len, pk->l3_len);
	}
	/* One sum of the changes (RFC 1624: ~old + new for each field), applied to both
	 * checksums: the addresses are in the IP header and in the UDP pseudo-header. Whole
	 * 32-bit words added in 64 bits fold to the same ones' complement sum as their 16-bit
	 * halves (2^16 = 1 mod 0xffff), in fewer steps. */
	uint32_t old_ports, new_ports = (uint32_t)sport | (uint32_t)dport << 16;
	uint64_t addr = (uint64_t)(uint32_t)~ip->src_addr + sip + (uint32_t)~ip->dst_addr + dip;
	uint64_t ports;

	memcpy(&old_ports, &udp->src_port, 4);
	ip->hdr_checksum =
		dp_csum_apply64(ip->hdr_checksum, addr + (uint16_t)~old_ttl_proto + new_ttl_proto);
	if (udp->dgram_cksum != 0) {
		ports = (uint64_t)(uint32_t)~old_ports + new_ports + (uint16_t)~old_reqid +
			new_reqid;
		uint16_t c = dp_csum_apply64(udp->dgram_cksum, addr + ports);

		udp->dgram_cksum = c == 0 ? 0xffff : c;
	}
	ip->src_addr = sip;
	ip->dst_addr = dip;
	udp->src_port = sport;
	udp->dst_port = dport;
}

/*
 * rewrite_udp() for an IPv6 datagram going to IPv6 (no extension headers): the addresses
 * (16 bytes each, as stored), ports and request id; hop limit 64. The UDP checksum is never 0
 * here (handle_ipv6 drops those).
 */
static __rte_always_inline void rewrite_udp6(struct dp_worker *w, struct rte_mbuf *m,
					     struct dp_pkt *pk, const uint8_t *sip,
					     const uint8_t *dip, uint16_t sport, uint16_t dport,
					     uint16_t reqid)
{
	struct rte_ipv6_hdr *ip6 = pk->ip6;
	struct rte_udp_hdr *udp = pk->udp;
	uint16_t old_reqid, new_reqid = rte_cpu_to_be_16(reqid);
	uint32_t old_ports, new_ports = (uint32_t)sport | (uint32_t)dport << 16;
	uint64_t sum = 0;

	memcpy(&old_reqid, pk->payload, 2);
	memcpy(pk->payload, &new_reqid, 2);
	ip6->hop_limits = 64;
	if (w->tx_offload) {
		memcpy(&ip6->src_addr, sip, 16);
		memcpy(&ip6->dst_addr, dip, 16);
		udp->src_port = sport;
		udp->dst_port = dport;
		return dp_tx_cksum_offload6(m, ip6, udp, pk->l2_len);
	}
	/* The addresses as 64-bit words added with end-around carry: the same ones' complement
	 * sum as their 16-bit halves (2^64 = 1 mod 0xffff), in half the steps. */
	for (int i = 0; i < 16; i += 8) {
		uint64_t os, od, ns, nd;

		memcpy(&os, (uint8_t *)&ip6->src_addr + i, 8);
		memcpy(&od, (uint8_t *)&ip6->dst_addr + i, 8);
		memcpy(&ns, sip + i, 8);
		memcpy(&nd, dip + i, 8);
		sum = dp_csum_add64(sum, ~os);
		sum = dp_csum_add64(sum, ns);
		sum = dp_csum_add64(sum, ~od);
		sum = dp_csum_add64(sum, nd);
	}
	memcpy(&old_ports, &udp->src_port, 4);
	sum = dp_csum_add64(sum, (uint64_t)(uint32_t)~old_ports + new_ports + (uint16_t)~old_reqid +
					 new_reqid + (uint16_t)~udp->dgram_cksum);
	uint16_t c = (uint16_t)~dp_csum_fold(dp_csum_fold64(sum));

	udp->dgram_cksum = c == 0 ? 0xffff : c;
	memcpy(&ip6->src_addr, sip, 16);
	memcpy(&ip6->dst_addr, dip, 16);
	udp->src_port = sport;
	udp->dst_port = dport;
}

/*
 * Any rewrite other than IPv4 to IPv4: towards an IPv6 peer (@p to_v6: @p sip6 / @p dip6) or an
 * IPv4 one (@p sip4 / @p dip4), from a datagram of either family, except IPv6 to IPv6
 * without extension headers (rewrite_udp6(), in place, which the callers call): this gets a fresh
 * L3 header of the target's family (dp_l3_rebuild: 20 bytes more or less in front, extension
 * headers and IPv4 options left out) and checksums computed anew. false (nothing sent) when the
 * datagram would pass the MTU in the target's family (a full-size IPv4 datagram to an IPv6 peer:
 * the router does not fragment, and an IPv6 path never does) or there is no headroom. Out of line:
 * the IPv4 path never comes here.
 */
static __rte_noinline bool rewrite_mixed(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
					 bool to_v6, uint32_t sip4, uint32_t dip4,
					 const uint8_t *sip6, const uint8_t *dip6, uint16_t sport,
					 uint16_t dport, uint16_t reqid)
{
	uint16_t be_reqid = rte_cpu_to_be_16(reqid);

	if (to_v6 && pk->plen + sizeof(struct rte_udp_hdr) + sizeof(struct rte_ipv6_hdr) > w->mtu)
		return false;
	if (!dp_l3_rebuild(m, pk, to_v6))
		return false;
	memcpy(pk->payload, &be_reqid, 2);
	pk->udp->src_port = sport;
	pk->udp->dst_port = dport;
	dp_l3_finish(w, m, pk, sip4, dip4, sip6, dip6);
	return true;
}

/*
 * Two ports: give @p m (parsed as @p pk) the 802.1Q tag of the side it leaves on: @p tci
 * (network order) when @p tagged, else none, inserting or removing the tag (the Ethernet
 * addresses move by 4 bytes; pk->eth, l2_len, vlan and m->l2_len follow). false when the
 * mbuf has no headroom for a tag (nothing changed).
 */
static bool l2_retag(struct rte_mbuf *m, struct dp_pkt *pk, bool tagged, uint16_t tci)
{
	const uint16_t vl = sizeof(struct rte_vlan_hdr);
	uint8_t *p = (uint8_t *)pk->eth;

	if (pk->vlan == tagged) {
		if (tagged)
			((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci = tci;
		return true;
	}
	if (tagged) {
		if (rte_pktmbuf_prepend(m, vl) == NULL)
			return false;
		memmove(p - vl, p, 2 * RTE_ETHER_ADDR_LEN); /* the old type stays at byte 16 */
		pk->eth = (struct rte_ether_hdr *)(p - vl);
		pk->eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci = tci;
	} else {
		memmove(p + vl, p, 2 * RTE_ETHER_ADDR_LEN); /* the inner type becomes byte 12 */
		rte_pktmbuf_adj(m, vl);
		pk->eth = (struct rte_ether_hdr *)(p + vl);
	}
	pk->vlan = tagged;
	pk->l2_len = (uint16_t)(sizeof(struct rte_ether_hdr) + (tagged ? vl : 0));
	m->l2_len = pk->l2_len;
	return true;
}

static inline bool client_allowed(const struct dp_worker *w, uint32_t src)
{
	for (uint16_t i = 0; i < w->n_allowed; i++)
		if ((src & w->allowed[i].mask) == w->allowed[i].addr)
			return true;
	return false;
}

static bool client_allowed6(const struct dp_worker *w, const void *src)
{
	uint64_t a[2];

	memcpy(a, src, 16);
	for (uint16_t i = 0; i < w->n_allowed6; i++) {
		const struct dp_prefix6 *p = &w->allowed6[i];

		if ((a[0] & p->mask[0]) == p->addr[0] && (a[1] & p->mask[1]) == p->addr[1])
			return true;
	}
	return false;
}

/* The word a client's slots are counted by (dp_client_take): its IPv4 address, or its IPv6
 * address folded (dp_fold6: two IPv6 clients with one fold share one cap). */
static inline uint32_t client_word(const struct dp_pkt *pk)
{
	return likely(!pk->v6) ? pk->ip->src_addr : dp_fold6((const uint8_t *)&pk->ip6->src_addr);
}

/*
 * The client ACL, for requests and ICMP echo alike: the IPv4 source in an allowed prefix and,
 * when allowed_client_macs is set, the Ethernet source one of them. @return DP_DROP_COUNT
 * (served) or the drop reason. It filters on addresses a sender chooses: on the segment, or
 * anywhere behind a gateway without the MAC binding, a spoofed source passes.
 */
static inline enum dp_drop client_check(const struct dp_worker *w, const struct dp_pkt *pk)
{
	uint64_t mac = 0;

	if (unlikely(pk->v6) ? !client_allowed6(w, &pk->ip6->src_addr)
			     : unlikely(!client_allowed(w, pk->ip->src_addr)))
		return DP_DROP_CLIENT_DENIED;
	if (likely(w->n_client_macs == 0))
		return DP_DROP_COUNT;
	memcpy(&mac, &pk->eth->src_addr, 6); /* as dp_create() copied the list */
	for (uint16_t i = 0; i < w->n_client_macs; i++)
		if (w->client_macs[i] == mac)
			return DP_DROP_COUNT;
	return DP_DROP_CLIENT_MAC_DENIED;
}

static enum dp_drop mc_drop_reason(enum mc_err e)
{
	switch (e) {
	case MC_E_FRAME_SHORT:
	case MC_E_FRAME_SEQ:
		return DP_DROP_MC_FRAME;
	case MC_E_FRAME_MULTI:
		return DP_DROP_MC_MULTI_DATAGRAM;
	case MC_E_KEY_TOO_LONG:
		return DP_DROP_MC_KEY_TOO_LONG;
	default:
		return DP_DROP_MC_BAD_REQUEST;
	}
}

/* Keyless commands: 1 = forwardable alongside keys (mn, noop), 2 = answered here (version),
 * 0 = refused (would reach every node or one arbitrary node). */
static int keyless_policy(uint8_t cmd)
{
	switch (cmd) {
	case MC_CMD_MN:
	case MC_CMD_NOOP:
		return 1;
	case MC_CMD_VERSION:
		return 2;
	default:
		return 0;
	}
}

/*
 * A slot whose reply may be several messages gets a parser told what to expect of @p r. A
 * lone quiet read (@p no_end, one request) is answered by one message or none (a hit, or an
 * empty message / nothing for a miss): its parser, given no expectation, says done at the end
 * of the first message.
 */
static void slot_expect(struct dp_worker *w, struct dp_slot *sl, const struct mc_requests *r,
			bool multi, bool no_end)
{
	sl->multi = multi ? DP_MULTI_TRACK : DP_MULTI_NONE;
	sl->parser = DP_NO_PARSER;
	if (!multi)
		return;
	if (w->n_parser_free == 0) {
		w->ctr[DP_CTR_MULTI_UNTRACKED]++;
		return;
	}
	w->ctr[DP_CTR_MULTI_TRACKED]++;
	sl->parser = w->parser_free[--w->n_parser_free];
	mc_reply_init(&w->parsers[sl->parser]);
	if (!(no_end && r->nreq == 1))
		mc_reply_expect(&w->parsers[sl->parser], r);
}

/*
 * Free the quiet slots whose quiet_read_ms is up, oldest first (the queue's order); with
 * @p make_room, the oldest entry goes in any case (the queue is full: its slot, if still
 * live, is freed early). Entries whose slot was freed (or reused) since are dropped.
 */
static void quiet_expire(struct dp_worker *w, bool make_room)
{
	while (w->quiet_head != w->quiet_tail) {
		const struct dp_quiet *q = &w->quiet_q[w->quiet_head & w->slot_mask];
		struct dp_slot *sl = &w->slots[q->slot];
		bool live = sl->tsc != 0 && sl->quiet && (uint32_t)sl->tsc == q->tsc_lo;

		/* tsc may be now | 1, one tick ahead of now. */
		if (live && !make_room && !(w->now > sl->tsc && w->now - sl->tsc > w->quiet_tsc))
			return;
		w->quiet_head++;
		make_room = false;
		if (live) {
			w->ctr[DP_CTR_SLOTS_QUIET_EXPIRED]++;
			dp_slot_free(w, q->slot);
		}
	}
}

/* Slot @p s serves a request whose reply has no end the router can tell: it is freed after
 * quiet_read_ms (or when its reply completes, a lone quiet read's first message). */
static void quiet_track(struct dp_worker *w, uint32_t s)
{
	if (unlikely(w->quiet_tail - w->quiet_head > w->slot_mask))
		quiet_expire(w, true);
	w->slots[s].quiet = 1;
	w->quiet_q[w->quiet_tail++ & w->slot_mask] =
		(struct dp_quiet){s, (uint32_t)w->slots[s].tsc};
}

/* Feed a datagram of a multi-message reply to its slot's parser: true once the reply is
 * complete. A reply the parser cannot follow keeps flowing until the slot times out. */
static bool reply_track(struct dp_worker *w, struct dp_slot *sl, const struct dp_pkt *pk)
{
	struct mc_reply_parser *rp;
	struct mc_reply_event ev;
	int r;

	if (sl->parser == DP_NO_PARSER)
		return false;
	rp = &w->parsers[sl->parser];
	if (mc_reply_feed_datagram(rp, pk->payload, pk->plen) != MC_OK) {
		dp_parser_release(w, sl);
		return false;
	}
	while ((r = mc_reply_next(rp, &ev)) > 0)
		;
	if (r < 0) {
		dp_parser_release(w, sl);
		return false;
	}
	return mc_reply_done(rp);
}

/*
 * Owner of every key in @p r, the parse of @p pk's payload, or a negative: -1 keys on several
 * nodes, -2 no placement / no member with weight. The first key's owner is pk's hint when @p r
 * is the look-ahead's parse.
 */
static __rte_noinline int32_t request_owner_keys(const struct dp_worker *w, const struct dp_pkt *pk,
						 const struct mc_requests *r)
{
	const uint8_t *payload = pk->payload;
	const struct pl_placement *pl = w->cur->pl;
	uint8_t buf[MC_KEY_MAX];
	int32_t owner = -2;

	for (uint16_t k = 0; k < r->nkeys; k++) {
		const struct mc_key *key = &r->keys[k];
		const uint8_t *kp = payload + key->off;
		size_t len = key->len;
		int32_t idx;

		if (k == 0 && r == pk->hint->req && pk->hint->has_owner) {
			idx = pk->hint->owner; /* the look-ahead's parse, its key looked up ahead */
		} else {
			if (key->base64) {
				len = mc_key_decode(payload, key, buf);
				kp = buf;
			}
			idx = pl_lookup_hash(pl, pl_key_hash(pl, kp, len));
		}
		if (idx < 0)
			return -2;
		if (owner >= 0 && idx != owner)
			return -1;
		owner = idx;
	}
	return owner;
}

/* request_owner_keys(), for the commonest request at once: one key, looked up ahead. */
static inline int32_t request_owner(const struct dp_worker *w, const struct dp_pkt *pk,
				    const struct mc_requests *r)
{
	if (likely(r->nkeys == 1 && r == pk->hint->req && pk->hint->has_owner))
		return pk->hint->owner < 0 ? -2 : pk->hint->owner;
	return request_owner_keys(w, pk, r);
}

/* What a parsed request datagram asks of the router. */
struct req_class {
	bool version;	  /* has `version` (answered here) */
	bool quiet;	  /* every request is a noreply/quiet write: no reply expected */
	bool no_end;	  /* a quiet read (or write) not followed by mn / NOOP: nothing says when
			     the reply is complete (a miss sends nothing or an empty message) */
	int32_t refused;  /* index of a refused keyless command, or -1 */
	bool one_message; /* mc_reply_is_one_message(): the reply needs no parser */
};

static struct req_class classify(const struct mc_requests *r)
{
	/* The common case at once: one read that expects its reply (one message when it has
	 * one key, as mc_reply_is_one_message() says of a read). */
	if (likely(r->nreq == 1 && r->req[0].kind == MC_KIND_READ &&
		   !(r->req[0].flags & MC_REQ_F_QUIET)))
		return (struct req_class){false, false, false, -1, r->req[0].key_count <= 1};

	struct req_class c = {false, true, false, -1, false};
	bool any_quiet = false;
	uint8_t last = r->nreq > 0 ? r->req[r->nreq - 1].cmd : 0;

	for (uint16_t i = 0; i < r->nreq && c.refused < 0; i++) {
		const struct mc_request *rq = &r->req[i];
		int pol;

		/* noreply / quiet writes answer only on error: no slot waits for them. */
		c.quiet &= (rq->flags & MC_REQ_F_QUIET) && rq->kind != MC_KIND_READ &&
			   rq->kind != MC_KIND_KEYLESS;
		any_quiet |= (rq->flags & MC_REQ_F_QUIET) != 0;
		if (rq->kind != MC_KIND_KEYLESS)
			continue;
		pol = keyless_policy(rq->cmd);
		if (pol == 0)
			c.refused = i;
		c.version |= pol == 2;
	}
	c.no_end = any_quiet && !c.quiet && last != MC_CMD_MN && last != MC_CMD_NOOP;
	c.one_message = mc_reply_is_one_message(r);
	return c;
}

/* Take a slot for @p r, the parsed request of @p pk (class @p c; not quiet: counted against
 * its client already), rewrite the packet towards node endpoint @p ep (MAC word @p mac) from
 * the port and request id naming the slot, and queue it. Always inlined: the forward path
 * must not pay a call because failover_request() is a second caller (measured: +35
 * instructions per forwarded request as a call, +6.5 inlined). @return the slot (free again
 * when the request is quiet), or DP_NO_SLOT when the packet was dropped. */
static __rte_always_inline uint32_t forward_request(struct dp_worker *w, struct rte_mbuf *m,
						    struct dp_pkt *pk, const struct mc_requests *r,
						    uint32_t ep, uint64_t mac, struct req_class c)
{
	uint16_t port_be, reqid;
	uint32_t s = dp_slot_take(w, pk, ep, &port_be, &reqid);
	struct dp_slot *sl = &w->slots[s];

	slot_expect(w, sl, r, !c.quiet && !c.one_message, c.no_end);
	if (unlikely(c.no_end))
		quiet_track(w, s);
	if (unlikely(w->two_ports) && w->node_vlan_fixed &&
	    unlikely(!l2_retag(m, pk, w->node_vlan_tagged, w->node_vlan_tci))) {
		/* No headroom for the tag (PMDs leave RTE_PKTMBUF_HEADROOM): never sent. */
		if (c.quiet)
			dp_slot_put(w, s); /* a quiet write holds no client count */
		else
			dp_slot_free(w, s);
		dp_count_drop(w, m, DP_DROP_FAMILY_TOO_BIG);
		return DP_NO_SLOT;
	}
	memcpy(&pk->eth->dst_addr, &mac, 6); /* little-endian: bytes 0..5 of the word */
	rte_ether_addr_copy(&w->node_src_mac, &pk->eth->src_addr);
	if (likely(!pk->v6 && !(sl->fam & DP_FAM_NODE6)))
		rewrite_udp(w, m, pk, w->node_src_ip, sl->node_ip, port_be, sl->node_port, reqid);
	else if (pk->v6 && (sl->fam & DP_FAM_NODE6) && pk->l3_len == sizeof(struct rte_ipv6_hdr))
		rewrite_udp6(w, m, pk, w->node_src_ip6, w->slot6[s].node, port_be, sl->node_port,
			     reqid);
	else if (unlikely(!rewrite_mixed(w, m, pk, sl->fam & DP_FAM_NODE6, w->node_src_ip,
					 sl->node_ip, w->node_src_ip6, w->slot6[s].node, port_be,
					 sl->node_port, reqid))) {
		if (c.quiet)
			dp_slot_put(w, s);
		else
			dp_slot_free(w, s);
		dp_count_drop(w, m, DP_DROP_FAMILY_TOO_BIG);
		return DP_NO_SLOT;
	}
	dp_tx_push_fwd(w, m, ep, c.quiet ? DP_NO_SLOT : s);
	if (c.quiet) {
		/* Its generation is spent: an error reply finds the slot free (reply_no_slot)
		 * or reused (reply_stale), never another client. */
		w->ctr[DP_CTR_QUIET]++;
		dp_slot_put(w, s);
	}
	return s;
}

/* The error a request of a down node's keys gets at once, without a slot ([failover] fast, or
 * no live stand-in): SERVER_ERROR in text, ETMPFAIL in binary (for the last request, the NOOP
 * of a quiet pipeline, so it ends the client's wait). */
static void failover_error(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
			   const struct mc_requests *r)
{
	dp_local_mc_reply(w, m, pk, r, "node down", true, MC_BIN_STATUS_TEMP_FAILURE,
			  (uint16_t)(r->nreq - 1));
}

/* Replace @p pk's payload (parsed as @p r, parsed again afterwards) with @p out (@p n bytes,
 * 0: none): the lengths and both checksums are set again here (before rewrite_udp() updates
 * them incrementally). @return false when it does not fit (the packet is unchanged) or does
 * not parse. */
static bool replace_payload(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
			    struct mc_requests *r, const uint8_t *out, size_t n)
{
	size_t head = (size_t)(pk->payload - (uint8_t *)m->buf_addr);
	uint32_t hdr = pk->l2_len + pk->l3_len + (uint32_t)sizeof(struct rte_udp_hdr);

	if (n == 0 || head + n > m->buf_len || n > UINT16_MAX - 64)
		return false;
	memcpy(pk->payload, out, n);
	pk->plen = (uint32_t)n;
	m->data_len = (uint16_t)(hdr + n);
	m->pkt_len = m->data_len;
	pk->udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(struct rte_udp_hdr) + n));
	if (pk->v6) { /* payload_len covers the extension headers too */
		pk->ip6->payload_len =
			rte_cpu_to_be_16((uint16_t)(pk->l3_len - sizeof(struct rte_ipv6_hdr) +
						    sizeof(struct rte_udp_hdr) + n));
		pk->udp->dgram_cksum = 0;
		pk->udp->dgram_cksum = dp_ip6_l4_cksum(
			(const uint8_t *)&pk->ip6->src_addr, (const uint8_t *)&pk->ip6->dst_addr,
			pk->udp, (uint32_t)(sizeof(struct rte_udp_hdr) + n), IPPROTO_UDP);
		return mc_parse_datagram_flags(pk->payload, n, MC_PARSE_CTL_KEYS, r) == MC_OK;
	}
	pk->ip->total_length =
		rte_cpu_to_be_16((uint16_t)(pk->l3_len + sizeof(struct rte_udp_hdr) + n));
	pk->ip->hdr_checksum = 0;
	pk->ip->hdr_checksum = rte_ipv4_cksum(pk->ip);
	if (pk->udp->dgram_cksum != 0) {
		pk->udp->dgram_cksum = 0;
		pk->udp->dgram_cksum = rte_ipv4_udptcp_cksum(pk->ip, pk->udp); /* 0 -> 0xffff */
	}
	(void)w;
	return mc_parse_datagram_flags(pk->payload, n, MC_PARSE_CTL_KEYS, r) == MC_OK;
}

/* Cap the expiry of the writes in @p pk (parsed as @p r, parsed again afterwards) at
 * failover_ttl_s. @return false when the result does not fit (the packet is unchanged). */
static bool failover_cap_ttl(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
			     struct mc_requests *r)
{
	uint8_t out[2048];
	size_t n = mc_cap_ttl(pk->payload, pk->plen, r, w->failover_ttl_s, dp_unix_at(w->dp, w->now),
			      out, sizeof(out));

	if (!replace_payload(w, m, pk, r, out, n))
		return false;
	w->ctr[DP_CTR_FAILOVER_TTL]++;
	return true;
}

/* The reads of @p r (keys of down endpoint @p down, going to stand-in @p target) whose copy
 * there is not known current (dp_fo_known) get a quiet delete of their key first, so the
 * stand-in answers a miss rather than a copy from before (dp_failover.c has the rule); a
 * binary request, or one the deletes make too long, gets the failover error instead.
 * @return the deletes put first (requests [0, n) of @p r now), or -1 when the request was
 * answered here. */
static int failover_unknown_first(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
				   struct mc_requests *r, uint32_t down, uint32_t target)
{
	const struct pl_placement *pl = w->cur->pl;
	bool unknown[MC_MAX_KEYS];
	uint8_t buf[MC_KEY_MAX], out[2048];
	uint16_t n = 0;
	size_t len;

	for (uint16_t k = 0; k < r->nkeys; k++) {
		const struct mc_request *rq = &r->req[r->keys[k].req];

		uint64_t h;

		len = mc_key_decode(pk->payload, &r->keys[k], buf);
		h = pl_key_hash(pl, buf, len);
		/* A replica of the key holds it (dp_repl.c): no delete first. */
		unknown[k] = rq->kind == MC_KIND_READ && !dp_repl_holds(w, h, target) &&
			     !dp_fo_known(w, h, down, target);
		/* A key text cannot carry takes a meta `md ... q`, which memcached answers with NF
		 * when the key is absent: a second message in the client's reply (its slot done by
		 * the first): the error instead, as for binary. */
		if (unknown[k] && (rq->proto == MC_PROTO_BINARY || !mc_delete_is_text(buf, len))) {
			w->ctr[DP_CTR_FAILOVER_UNKNOWN]++;
			failover_error(w, m, pk, r);
			return -1;
		}
		n += unknown[k];
	}
	if (n == 0)
		return 0;
	w->ctr[DP_CTR_FAILOVER_UNKNOWN] += n;
	len = dp_fo_delete_first(pk->payload, pk->plen, r, unknown, out, sizeof(out));
	if (!replace_payload(w, m, pk, r, out, len)) {
		failover_error(w, m, pk, r);
		return -1;
	}
	return n;
}

/*
 * Request @p r (class @p c) of @p pk whose owner, endpoint @p down, is not serving: [failover]
 * fast answers the protocol's error at once; next and gutter send it to the stand-in of its
 * keys (dp_fo_target: the next live member, or a gutter node), writes with their expiry capped and
 * their keys remembered for the owner's clean-up. Keys whose stand-ins differ are split per key
 * (dp_mget_split: reads), as any request over several nodes. Off the hot path: a live owner never
 * comes here.
 */
static __rte_noinline void failover_request(struct dp_worker *w, struct rte_mbuf *m,
					    struct dp_pkt *pk, struct mc_requests *r, uint32_t down,
					    struct req_class c)
{
	const struct pl_placement *pl = w->cur->pl;
	uint8_t buf[MC_KEY_MAX];
	int32_t target = -1;
	uint16_t held = 0;
	int deletes;
	uint64_t mac;
	uint32_t ep;

	for (uint16_t k = 0; k < r->nkeys; k++) {
		size_t len = mc_key_decode(pk->payload, &r->keys[k], buf);
		uint64_t h = pl_key_hash(pl, buf, len);
		/* A replicated pool: the key's next live replica, whatever [failover] says. */
		int32_t t = unlikely(w->replicas > 1) ? dp_repl_target(w, h) : -1;

		if (t >= 0) {
			held++;
		} else if (w->failover == DP_FAILOVER_FAST) {
			w->ctr[DP_CTR_FAILOVER_FAST]++;
			return failover_error(w, m, pk, r);
		} else if ((t = dp_fo_target(w, buf, len, h)) < 0) {
			w->ctr[DP_CTR_FAILOVER_NO_TARGET]++;
			return failover_error(w, m, pk, r);
		}
		if (target >= 0 && t != target)
			return dp_mget_split(w, m, pk, r);
		target = t;
	}
	/* Reads of copies the stand-in may hold from before (dp_failover.c): deleted first. */
	deletes = failover_unknown_first(w, m, pk, r, down, (uint32_t)target);
	if (deletes < 0)
		return;
	/* Writes, and touches and reads that set an expiry (touch, gat, mg T/N, ma N/T), unless
	 * every key goes to a replica that holds it as the owner does. */
	if (held < r->nkeys && mc_sets_expiry(pk->payload, r) && !failover_cap_ttl(w, m, pk, r))
		return dp_count_drop(w, m, DP_DROP_FAILOVER_TOO_LONG);
	ep = (uint32_t)target;
	mac = atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed);
	if (unlikely(w->free_head == w->free_tail))
		return dp_count_drop(w, m, DP_DROP_NO_SLOT);
	if (!c.quiet && unlikely(!dp_client_take(w, client_word(pk), 1)))
		return dp_count_drop(w, m, DP_DROP_CLIENT_SLOTS);
	/* Everything but reads changes what the owner would answer when it is back; the
	 * stand-in's copy is current from now on in this outage. */
	for (uint16_t k = 0; k < r->nkeys; k++)
		if (r->req[r->keys[k].req].kind != MC_KIND_READ) {
			size_t len = mc_key_decode(pk->payload, &r->keys[k], buf);

			/* The owner is not changed by the deletes put first (for reads). */
			if (r->keys[k].req >= deletes)
				dp_fo_dirty(w, down, ep, buf, len);
			dp_fo_mark(w, pl_key_hash(pl, buf, len), down, ep);
		}
	if (held == r->nkeys) {
		w->ctr[DP_CTR_REPL_FAILOVER]++;
	} else {
		w->ctr[DP_CTR_FAILOVER_NEXT]++;
		w->ctr[DP_CTR_FAILOVER_GUTTER] += w->failover == DP_FAILOVER_GUTTER;
	}
	/* A previous placement is held: the moved keys' writes delete at their previous owners
	 * as on the owner's way (handle_request), or a previous owner would keep an older value
	 * than the stand-in's, and a warm-up read of the key once the owner serves would find it
	 * there (soak seed 7006: a node joining by `replace` fails over while it is flushed).
	 * Before the write: the deletes leave first. */
	if (unlikely(w->prev_cur != NULL))
		dp_warm_writes(w, pk, r, down, (uint16_t)deletes);
	/* The other replicas get the writes too; the owner's keys were recorded above. */
	if (unlikely(w->replicas > 1))
		dp_repl_write(w, pk, r, ep, down);
	(void)forward_request(w, m, pk, r, ep, mac, c);
}

/* A new request @p r of @p pk while the router drains: the protocol's own error at once
 * (SERVER_ERROR draining in text, temporary failure in binary, for the last request as
 * failover_error()), or dropped and counted (drain_answer silent). No slot is taken. */
static __rte_noinline void drain_request(struct dp_worker *w, struct rte_mbuf *m,
					 struct dp_pkt *pk, const struct mc_requests *r)
{
	if (DP_DRAIN_WORD_MODE(w->drain) - 1 == DP_DRAIN_SILENT)
		return dp_count_drop(w, m, DP_DROP_DRAINING);
	w->ctr[DP_CTR_DRAIN_ANSWERED]++;
	dp_local_mc_reply(w, m, pk, r, "draining", true, MC_BIN_STATUS_TEMP_FAILURE,
			  (uint16_t)(r->nreq - 1));
}

/* Client -> router: serve, refuse or drop; on success the packet leaves towards the node. The
 * parse is the look-ahead's (a w->ahead[] entry) or goes to w->req, the worker's scratch, and
 * from there to the callees as a parameter.
 * Never inlined, while handle_reply_owned() always is: the burst loop with the request path
 * inside costs the reply path ~28 instructions in register spills, a call costs a request
 * ~10 (callgrind). */
static __rte_noinline void handle_request(struct dp_worker *w, struct rte_mbuf *m,
					  struct dp_pkt *pk)
{
	struct mc_requests *r = &w->req;
	struct dp_hotslot hot; /* only stage is read unless dp_hot_route() filled it */
	struct req_class c;
	enum dp_drop why;
	int32_t owner;
	uint32_t ep, s;
	uint64_t mac;
	enum mc_err e;
	int warm = -1;

	why = client_check(w, pk);
	if (unlikely(why != DP_DROP_COUNT))
		return dp_count_drop(w, m, why);
	/* Parse once: the look-ahead parsed these very bytes already (dp_forward_burst). Else
	 * here, with memcached's own key rule: control characters allowed (memcaslap sends
	 * them). */
	if (likely(pk->hint->payload == pk->payload && pk->hint->plen == pk->plen)) {
		r = pk->hint->req;
		e = (enum mc_err)pk->hint->err;
	} else {
		e = mc_parse_datagram_flags(pk->payload, pk->plen, MC_PARSE_CTL_KEYS, r);
	}
	if (unlikely(e != MC_OK))
		return dp_count_drop(w, m, mc_drop_reason(e));
	/* A draining router takes no new request, version and refused commands included (a
	 * load balancer's `version` check then sees the drain too). */
	if (unlikely(DP_DRAIN_WORD_MODE(w->drain) != 0))
		return drain_request(w, m, pk, r);
	c = classify(r);
	if (unlikely(c.refused >= 0)) {
		w->ctr[DP_CTR_MC_REFUSED]++;
		return dp_local_mc_reply(w, m, pk, r, "command not allowed through the router",
					 false, MC_BIN_STATUS_NOT_SUPPORTED, (uint16_t)c.refused);
	}
	if (unlikely(r->nkeys == 0)) {
		w->ctr[DP_CTR_MC_VERSION]++;
		return dp_local_mc_reply(w, m, pk, r, NULL, false, MC_BIN_STATUS_OK, 0);
	}
	if (unlikely(c.version)) {
		w->ctr[DP_CTR_MC_REFUSED]++;
		return dp_local_mc_reply(w, m, pk, r,
					 "version cannot be pipelined with keyed commands", false,
					 MC_BIN_STATUS_NOT_SUPPORTED, 0);
	}
	if (unlikely(w->cur == NULL))
		return dp_count_drop(w, m, DP_DROP_NO_PLACEMENT);
	owner = request_owner(w, pk, r);
	dp_hot_count(w, pk, r);
	if (unlikely(owner == -2))
		return dp_count_drop(w, m, DP_DROP_NO_PLACEMENT);
	if (unlikely(owner == -1))
		return dp_mget_split(w, m, pk, r);
	ep = w->cur->ep[owner];
	hot.stage = DP_HOT_NONE;
	if (unlikely(w->hot->set != NULL))
		ep = dp_hot_route(w, pk, r, ep, &hot); /* a hot key: a replica, or invalidations */
	if (unlikely(!dp_ep_serving(w, ep)))
		return failover_request(w, m, pk, r, ep, c);
	mac = atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed);
	if (unlikely(!(mac & DP_MAC_VALID)))
		return dp_count_drop(w, m, DP_DROP_NODE_NO_MAC);
	if (unlikely(w->free_head == w->free_tail))
		return dp_count_drop(w, m, DP_DROP_NO_SLOT);
	if (!c.quiet && unlikely(!dp_client_take(w, client_word(pk), 1)))
		return dp_count_drop(w, m, DP_DROP_CLIENT_SLOTS);
	/* A previous placement is held: moved keys' writes delete at their previous owner; while
	 * its warm-up window is open a moved key's read may ask it after a miss (dp_warm.c).
	 * Outside the window a lone read does not look (one branch on the parse more, measured:
	 * 7 instructions per get while a placement is held, none otherwise). Before the
	 * rewrite: it reads the request's bytes. */
	if (unlikely(w->prev_cur != NULL) &&
	    (w->warm_reads || r->nreq != 1 || r->req[0].kind != MC_KIND_READ))
		warm = dp_warm_request(w, pk, r, ep);
	/* A replicated pool: the writes' copies leave before the owner's (dp_repl.c). */
	if (unlikely(w->replicas > 1))
		dp_repl_write(w, pk, r, ep, UINT32_MAX);
	s = forward_request(w, m, pk, r, ep, mac, c);
	if (unlikely(warm >= 0) && !c.quiet && s != DP_NO_SLOT)
		dp_warm_bind(w, (uint32_t)warm, s);
	if (unlikely(hot.stage != DP_HOT_NONE) && s != DP_NO_SLOT)
		dp_hot_mark(w, s, &hot);
}

/* The Ethernet source of a reply is the MAC the router knows for node endpoint @p ep. */
static __rte_always_inline bool reply_mac_ok(const struct dp_worker *w, uint32_t ep,
				const struct rte_ether_hdr *eth)
{
	uint64_t word = atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed);
	uint64_t src = 0;

	memcpy(&src, &eth->src_addr, 6); /* the word's layout: bytes 0..5 little-endian */
	return word == (src | DP_MAC_VALID);
}

/* The reply is tagged as the request went out: on the node port's VLAN when it is fixed
 * (checked when the reply arrived), else the client's tag, with the same VLAN id (priority
 * bits aside). */
static inline bool reply_vlan_ok(const struct dp_worker *w, const struct dp_slot *sl,
				 const struct dp_pkt *pk)
{
	bool same =
		pk->vlan == (bool)sl->has_vlan &&
		(!pk->vlan || ((((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci ^ sl->vlan_tci) &
			       rte_cpu_to_be_16(0x0fff)) == 0);

	return likely(same) || w->node_vlan_fixed;
}

/* Mark datagram @p seq of a one-message reply as passed: DP_DROP_COUNT (none), or the drop it
 * deserves (a seq that passed already; one too far past the first missing one to track). */
static inline enum dp_drop reply_seq_mark(struct dp_slot *sl, uint16_t seq)
{
	uint32_t d = (uint32_t)seq - sl->seq_base;
	uint32_t n;

	/* The commonest: the first missing one, nothing past it passed yet (a one-datagram
	 * reply): it alone moves the base, as the general steps below would. */
	if (likely(d == 0 && sl->seq_seen == 0)) {
		sl->seq_base = (uint16_t)(sl->seq_base + 1);
		return DP_DROP_COUNT;
	}
	if (unlikely(seq < sl->seq_base))
		return DP_DROP_REPLY_DUPLICATE;
	if (unlikely(d >= DP_SEQ_WINDOW))
		return DP_DROP_REPLY_SEQ_AHEAD;
	if (unlikely(sl->seq_seen & (UINT64_C(1) << d)))
		return DP_DROP_REPLY_DUPLICATE;
	sl->seq_seen |= UINT64_C(1) << d;
	if (d != 0)
		return DP_DROP_COUNT;
	/* The first missing one arrived: move past every datagram passed in a row. */
	n = ~sl->seq_seen == 0 ? DP_SEQ_WINDOW : (uint32_t)__builtin_ctzll(~sl->seq_seen);
	sl->seq_seen = n == DP_SEQ_WINDOW ? 0 : sl->seq_seen >> n;
	sl->seq_base = (uint16_t)(sl->seq_base + n);
	return DP_DROP_COUNT;
}

/* The reply comes from the node its slot asked: address (IPv6: all 16 bytes) and port. */
static inline bool reply_src_ok(const struct dp_worker *w, const struct dp_pkt *pk,
				const struct dp_slot *sl, uint32_t s)
{
	if (unlikely(pk->udp->src_port != sl->node_port))
		return false;
	if (likely(!pk->v6))
		return pk->ip->src_addr == sl->node_ip && !(sl->fam & DP_FAM_NODE6);
	return (sl->fam & DP_FAM_NODE6) && memcmp(&pk->ip6->src_addr, w->slot6[s].node, 16) == 0;
}

/* The member endpoint datagram @p pk comes from (address, port; IPv6 in full), or -1. */
static inline int64_t find_src(const struct dp_worker *w, const struct dp_pkt *pk)
{
	if (w->cur == NULL)
		return -1;
	if (likely(!pk->v6))
		return dp_view_find_src(w->cur, pk->ip->src_addr,
					rte_be_to_cpu_16(pk->udp->src_port));
	return dp_view_find_src6(w->cur, w->eps, (const uint8_t *)&pk->ip6->src_addr,
				 rte_be_to_cpu_16(pk->udp->src_port));
}

/*
 * The reply lane (issue 30): the commonest reply, one datagram (seq 0 of 1) that answers a
 * one-message slot (single reads and writes, of the fast lane or the general path) taken
 * untagged, one family both ways (IPv4, or IPv6 without extension headers), from the slot's
 * node address, port and MAC, its generation, no warm-up read in flight. Each condition is one
 * the general steps of handle_reply_owned() test on their way to the same end (the same bytes
 * out, the same counters and slot state), so a reply that meets them all is returned at once;
 * any other goes the general way, which judges it and counts its drop. The slot's has_vlan,
 * multi, quiet and fam bytes are read as one word (untagged, DP_MULTI_NONE, not quiet, IPv4
 * both sides or IPv6 both sides), total and seq_base together (0: no datagram yet).
 */
static_assert(offsetof(struct dp_slot, multi) == offsetof(struct dp_slot, has_vlan) + 1 &&
		      offsetof(struct dp_slot, quiet) == offsetof(struct dp_slot, has_vlan) + 2 &&
		      offsetof(struct dp_slot, fam) == offsetof(struct dp_slot, has_vlan) + 3,
	      "reply_lane_ok() reads has_vlan, multi, quiet and fam as one word");
static_assert(DP_MULTI_NONE == 0, "reply_lane_ok(): a one-message slot's multi byte is 0");

static __rte_always_inline bool reply_lane_ok(const struct dp_worker *w, const struct dp_pkt *pk,
					      const struct dp_slot *sl, uint32_t s, uint16_t reqid)
{
	static const uint8_t want6[4] = {0, DP_MULTI_NONE, 0, DP_FAM_CLIENT6 | DP_FAM_NODE6};
	uint32_t seq_total, flags, flags6;

	memcpy(&seq_total, pk->payload + 2, 4);
	memcpy(&flags, &sl->has_vlan, 4);
	if (unlikely(pk->v6)) {
		memcpy(&flags6, want6, 4);
		return !(w->fast_off | pk->vlan) && seq_total == RTE_BE32(1) &&
		       reqid == sl->reqid && flags == flags6 && (sl->total | sl->seq_base) == 0 &&
		       sl->seq_seen == 0 && pk->udp->src_port == sl->node_port &&
		       pk->l3_len == sizeof(struct rte_ipv6_hdr) &&
		       memcmp(&pk->ip6->src_addr, w->slot6[s].node, 16) == 0 &&
		       reply_mac_ok(w, sl->ep, pk->eth) && w->now >= w->warm_gate;
	}
	return !(w->fast_off | pk->vlan) && seq_total == RTE_BE32(1) &&
	       reqid == sl->reqid && (flags | sl->total | sl->seq_base) == 0 &&
	       sl->seq_seen == 0 && pk->udp->src_port == sl->node_port &&
	       pk->ip->src_addr == sl->node_ip && reply_mac_ok(w, sl->ep, pk->eth) &&
	       w->now >= w->warm_gate;
}

/* A reply reply_lane_ok() passed: what the general steps do for it, without their tests. */
static __rte_always_inline void reply_lane(struct dp_worker *w, struct rte_mbuf *m,
					   struct dp_pkt *pk, struct dp_slot *sl, uint32_t s)
{
	memcpy(&pk->eth->dst_addr, sl->client_mac, 6);
	rte_ether_addr_copy(&w->client_src_mac, &pk->eth->src_addr);
	if (likely(!pk->v6))
		rewrite_udp(w, m, pk, w->client_src_ip, sl->client_ip, sl->listen_port,
			    sl->client_port, sl->client_reqid);
	else
		rewrite_udp6(w, m, pk, w->client_src_ip6, w->slot6[s].client, sl->listen_port,
			     sl->client_port, sl->client_reqid);
	dp_tx_push(w, m, DP_TX_RETURNED, sl->ep);
	sl->seq_base = 1;
	sl->total = 1;
	w->ctr[DP_CTR_SLOTS_COMPLETED]++;
	w->ctr[DP_CTR_REPLY_LANE]++;
	dp_obs_reply_done(w, sl);
	dp_slot_free(w, s);
}

/* Node -> router, on the worker owning the slot the destination port names. Always inlined
 * (see handle_request()); take_over() is its other caller. */
static __rte_always_inline void handle_reply_owned(struct dp_worker *w, struct rte_mbuf *m,
						   struct dp_pkt *pk, uint32_t k)
{
	uint16_t reqid, seq, total;
	uint32_t s;
	struct dp_slot *sl;

	if (unlikely(pk->plen < MC_FRAME_HDR_LEN))
		return dp_count_drop(w, m, DP_DROP_REPLY_BAD_FRAME);
	reqid = (uint16_t)(pk->payload[0] << 8 | pk->payload[1]);
	seq = (uint16_t)(pk->payload[2] << 8 | pk->payload[3]);
	total = (uint16_t)(pk->payload[4] << 8 | pk->payload[5]);
	s = ((k & w->port_mask) << w->slot_lo_bits) | (reqid & w->lo_mask);
	if (unlikely(s > w->slot_mask || w->slots[s].tsc == 0))
		return dp_count_drop(w, m, DP_DROP_REPLY_NO_SLOT);
	sl = &w->slots[s];
	if (likely(reply_lane_ok(w, pk, sl, s, reqid)))
		return reply_lane(w, m, pk, sl, s);
	if (unlikely(!reply_src_ok(w, pk, sl, s)))
		return dp_count_drop(w, m, DP_DROP_REPLY_WRONG_SOURCE);
	if (unlikely(!reply_mac_ok(w, sl->ep, pk->eth)))
		return dp_count_drop(w, m, DP_DROP_REPLY_WRONG_MAC);
	/* The slot's low bits agree (they chose it): the generation is the rest. */
	if (unlikely(reqid != sl->reqid))
		return dp_count_drop(w, m, DP_DROP_REPLY_STALE);
	if (unlikely(sl->multi == DP_MULTI_HOT)) {
		if (unlikely(!reply_vlan_ok(w, sl, pk)))
			return dp_count_drop(w, m, DP_DROP_VLAN_MISMATCH);
		if (dp_hot_reply(w, m, pk, s))
			return; /* a replica's miss: the owner is asked */
	}
	/* One message: its datagrams seq 0..total-1, each passed once. Several (sl->multi): the
	 * parser judges their order; an empty message (total 0) passes as memcached sent it. */
	if (unlikely(sl->multi == DP_MULTI_NONE &&
		     (total == 0 || seq >= total || (sl->total != 0 && total != sl->total))))
		return dp_count_drop(w, m, DP_DROP_REPLY_BAD_FRAME);
	if (unlikely(!reply_vlan_ok(w, sl, pk)))
		return dp_count_drop(w, m, DP_DROP_VLAN_MISMATCH);
	if (sl->multi == DP_MULTI_MGET)
		return dp_mget_reply(w, m, pk, s);
	/* A warm-up read's reply (only while one may be in flight): a new owner's miss goes no
	 * further, the previous owner is asked (dp_warm.c). */
	if (unlikely(w->now < w->warm_gate) && dp_warm_reply(w, m, pk, s))
		return;
	if (sl->multi == DP_MULTI_NONE) {
		enum dp_drop why = reply_seq_mark(sl, seq);

		if (unlikely(why != DP_DROP_COUNT))
			return dp_count_drop(w, m, why);
	}
	bool done = sl->multi ? reply_track(w, sl, pk) : sl->seq_base == total;

	/* The node port's VLAN is fixed and unlike the client's tagging: give the client's. */
	if (unlikely(pk->vlan != (bool)sl->has_vlan) &&
	    !l2_retag(m, pk, sl->has_vlan, sl->vlan_tci))
		return dp_count_drop(w, m, DP_DROP_TRUNC_ETH);
	memcpy(&pk->eth->dst_addr, sl->client_mac, 6);
	rte_ether_addr_copy(&w->client_src_mac, &pk->eth->src_addr);
	if (pk->vlan)
		((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci = sl->vlan_tci;
	if (likely(!pk->v6 && !(sl->fam & DP_FAM_CLIENT6)))
		rewrite_udp(w, m, pk, w->client_src_ip, sl->client_ip, sl->listen_port,
			    sl->client_port, sl->client_reqid);
	else if (pk->v6 && (sl->fam & DP_FAM_CLIENT6) && pk->l3_len == sizeof(struct rte_ipv6_hdr))
		rewrite_udp6(w, m, pk, w->client_src_ip6, w->slot6[s].client, sl->listen_port,
			     sl->client_port, sl->client_reqid);
	else if (unlikely(!rewrite_mixed(w, m, pk, sl->fam & DP_FAM_CLIENT6, w->client_src_ip,
					 sl->client_ip, w->client_src_ip6, w->slot6[s].client,
					 sl->listen_port, sl->client_port, sl->client_reqid)))
		/* the slot waits for the rest */
		return dp_count_drop(w, m, DP_DROP_FAMILY_TOO_BIG);
	dp_tx_push(w, m, DP_TX_RETURNED, sl->ep);
	sl->total = total;
	if (done) {
		w->ctr[DP_CTR_SLOTS_COMPLETED]++;
		dp_obs_reply_done(w, sl);
		dp_slot_free(w, s);
	}
}

/* Node -> router on any worker: hand the packet to the slot's owner when it is another, once
 * it is known to come from a member node (address, port and MAC), so strangers flooding the
 * reply range cannot fill the owner's hand-off ring; the owner checks the rest. */
static __rte_noinline void handle_reply_other(struct dp_worker *w, struct rte_mbuf *m,
					      struct dp_pkt *pk, uint32_t owner)
{
	int64_t ep;

	if (unlikely(owner >= w->n_workers))
		return dp_count_drop(w, m, DP_DROP_REPLY_NO_SLOT);
	ep = find_src(w, pk);
	if (unlikely(ep < 0))
		return dp_count_drop(w, m, DP_DROP_REPLY_UNKNOWN_SOURCE);
	if (unlikely(!reply_mac_ok(w, (uint32_t)ep, pk->eth)))
		return dp_count_drop(w, m, DP_DROP_REPLY_WRONG_MAC);
	m->l2_len = pk->l2_len;
	m->l3_len = pk->l3_len;
	if (rte_ring_mp_enqueue(w->dp->handoff_rings[owner], m) != 0)
		return dp_count_drop(w, m, DP_DROP_HANDOFF_FULL);
	w->ctr[DP_CTR_HANDED_OVER]++;
}

/* Node -> router: the slot's owner returns it, another worker hands it over. Always inlined
 * into handle_packet() (a call with its register saves cost an IPv4 reply 14 instructions);
 * handle_ipv6() calls handle_reply6() (inlined there, it cost an IPv6 reply ~30 in spills). */
static __rte_always_inline void handle_reply(struct dp_worker *w, struct rte_mbuf *m,
					     struct dp_pkt *pk, uint32_t k)
{
	uint32_t owner = k >> w->port_shift;

	if (likely(owner == w->id))
		return handle_reply_owned(w, m, pk, k);
	handle_reply_other(w, m, pk, owner);
}

static __rte_noinline void handle_reply6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
					 uint32_t k)
{
	handle_reply(w, m, pk, k);
}

/* Node -> router's probe port: the answer to the control lcore's probe of that node (any
 * worker). Accepted only from a member's address, port and MAC, with the outstanding probe's
 * request id and a VERSION line; then its id is stored for the control lcore and the datagram
 * is consumed here (counted as probe_replies): it never reaches a client. In a replicated
 * pool, any other answer from a member there answers a write's copy (dp_repl.c): consumed
 * the same way. */
static void handle_probe_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	int64_t ep = find_src(w, pk);
	uint32_t want;

	if (ep < 0 || !reply_mac_ok(w, (uint32_t)ep, pk->eth))
		return dp_count_drop(w, m, DP_DROP_PROBE_FOREIGN);
	if (w->replicas > 1 && (pk->plen < MC_FRAME_HDR_LEN + 8 ||
				memcmp(pk->payload + MC_FRAME_HDR_LEN, "VERSION ", 8) != 0)) {
		/* A replica's answer to a copy (dp_repl.c: copies leave from the probe port; a
		 * probe's answer is a VERSION line): consumed, in the probes' accounting term. */
		w->ctr[DP_CTR_REPL_ANSWERS]++;
		w->ctr[DP_CTR_PROBE_REPLIES]++;
		rte_pktmbuf_free(m);
		return;
	}
	want = atomic_load_explicit(&w->eps[ep].probe_id, memory_order_relaxed);
	/* A clean-up batch's meta delete of an absent key (a key text cannot carry, `md ... q`)
	 * is answered NF before the batch's VERSION: consumed, the batch not answered yet. */
	if ((want & DP_PROBE_VALID) && pk->plen == MC_FRAME_HDR_LEN + 4 &&
	    (uint32_t)(pk->payload[0] << 8 | pk->payload[1]) == (want & 0xffff) &&
	    memcmp(pk->payload + MC_FRAME_HDR_LEN, "NF\r\n", 4) == 0) {
		w->ctr[DP_CTR_PROBE_REPLIES]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!(want & DP_PROBE_VALID) || pk->plen < MC_FRAME_HDR_LEN + 8 ||
	    (uint32_t)(pk->payload[0] << 8 | pk->payload[1]) != (want & 0xffff) ||
	    memcmp(pk->payload + MC_FRAME_HDR_LEN, "VERSION ", 8) != 0)
		return dp_count_drop(w, m, DP_DROP_PROBE_STALE);
	atomic_store_explicit(&w->eps[ep].probe_ok, want, memory_order_relaxed);
	w->ctr[DP_CTR_PROBE_REPLIES]++;
	rte_pktmbuf_free(m);
}

/* take_over() of a reply larger than the MTU: fragmented again for its client. */
static __rte_noinline void take_over_big(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	uint16_t from;

	if (w->ntx > DP_TX_CAP - DP_FRAG_TX_ROOM)
		dp_tx_flush(w);
	from = w->ntx;
	handle_reply_owned(w, m, pk,
			   (uint32_t)(rte_be_to_cpu_16(pk->udp->dst_port) - w->reply_base));
	dp_frag_tx(w, from);
}

/* Rebuild the parse of a packet another worker validated (l2_len / l3_len set by it). */
static void take_over(struct dp_worker *w, struct rte_mbuf *m)
{
	struct dp_pkt pk;
	uint16_t etype;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	pk.eth = (struct rte_ether_hdr *)p;
	pk.l2_len = m->l2_len;
	pk.l3_len = m->l3_len;
	pk.vlan = pk.l2_len != sizeof(struct rte_ether_hdr);
	/* The (inner) EtherType ends the L2 header: IPv4 or IPv6, as the first worker saw. Both
	 * header pointers name the same bytes here; pk.v6 says which one is read. */
	memcpy(&etype, p + pk.l2_len - 2, 2);
	pk.v6 = etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	pk.ip = (struct rte_ipv4_hdr *)(p + pk.l2_len);
	pk.ip6 = (struct rte_ipv6_hdr *)(p + pk.l2_len);
	pk.udp = (struct rte_udp_hdr *)(p + pk.l2_len + pk.l3_len);
	pk.payload = (uint8_t *)(pk.udp + 1);
	pk.plen = rte_be_to_cpu_16(pk.udp->dgram_len) - (uint32_t)sizeof(struct rte_udp_hdr);
	pk.hint = &dp_no_hint; /* a reply */
	w->ctr[DP_CTR_TAKEN_OVER]++;
	if (unlikely(rte_pktmbuf_data_len(m) > pk.l2_len + w->mtu))
		return take_over_big(w, m, &pk);
	handle_reply_owned(w, m, &pk,
			   (uint32_t)(rte_be_to_cpu_16(pk.udp->dst_port) - w->reply_base));
}

static inline bool is_listen_port(const struct dp_worker *w, uint16_t port)
{
	for (uint16_t i = 0; i < w->n_listen; i++)
		if (w->listen[i] == port)
			return true;
	return false;
}

/* The header's one's complement sum is 0xffff (rte_raw_cksum(ip, ihl) == 0xffff): for the
 * common 20-byte header as two 64-bit words and a 32-bit one, whose folded sum is the same
 * value. */
static inline bool ipv4_hdr_sum_ok(const struct rte_ipv4_hdr *ip, uint32_t ihl)
{
	const uint8_t *b = (const uint8_t *)ip;
	uint64_t v0, v1;
	uint32_t v2;

	if (ihl != sizeof(*ip))
		return rte_raw_cksum(ip, ihl) == 0xffff;
	memcpy(&v0, b, 8);
	memcpy(&v1, b + 8, 8);
	memcpy(&v2, b + 16, 4);
	return dp_csum_verifies(dp_csum_add64(dp_csum_add64(v0, v1), v2));
}

/* The port's verdict on @p m's L4 checksum: 1 good (or none to check), 0 bad, -1 none given
 * (check it in software). */
static inline int rx_l4_verdict(const struct rte_mbuf *m)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	/* No verdict (memif, net_ring, af_packet): one compare, not the switch's three. */
	if (likely(f == RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN))
		return -1;
	switch (f) {
	case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
	case RTE_MBUF_F_RX_L4_CKSUM_NONE:
		return 1;
	case RTE_MBUF_F_RX_L4_CKSUM_BAD:
		return 0;
	default:
		return -1;
	}
}

/* The UDP checksum of @p m (field not 0: 0 is "none", as IPv4 allows) is right: the port's
 * verdict when it gives one (_NONE: the data was verified, the field may be partial), else
 * computed here over the @p ulen bytes of the datagram. */
static inline bool udp_cksum_ok(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
				const struct rte_udp_hdr *udp, uint32_t ulen)
{
	int verdict = rx_l4_verdict(m);

	if (verdict >= 0)
		return verdict;
	return dp_csum_verifies(dp_csum_sum64(
		udp, ulen,
		dp_ip4_phdr_sum(ip->src_addr, ip->dst_addr, IPPROTO_UDP, udp->dgram_len)));
}

/* Where a frame goes after the look-ahead's checks (struct dp_ahead.verdict). */
enum dp_verdict {
	DP_V_DROP,    /* counted as dropped: dp_ahead.why */
	DP_V_REQUEST, /* IPv4 UDP to a listen port: handle_request */
	DP_V_REPLY,   /* IPv4 UDP to reply port index dp_ahead.k: handle_reply */
	DP_V_PROBE,   /* IPv4 UDP to the probe port */
	DP_V_ICMP,    /* ICMP to the router's address */
	DP_V_ARP,
	DP_V_IPV6, /* handle_ipv6 judges the rest */
	DP_V_FRAG, /* IPv4 fragment, or over the MTU (dp_ahead.k: its total length): handle_frag4 */
	DP_V_FAST, /* a request of the fast lane's shape (dp_fast.h): fast_request */
	DP_V_REQUEST6, /* IPv6 UDP to a listen port, checked as ipv6_serve would: handle_request */
	DP_V_FAST6, /* ... of the fast lane's shape: fast_request6 */
};

static inline enum dp_verdict verdict_drop(struct dp_ahead *a, enum dp_drop why)
{
	a->why = (uint16_t)why;
	return DP_V_DROP;
}

/* After the IPv4 header (pk->ip, of pk->l3_len bytes, total length @p tot: checked, to the
 * router, not a fragment, UDP): UDP checks, then the port decides. */
static __rte_always_inline enum dp_verdict check_udp4(struct dp_worker *w, struct rte_mbuf *m,
						      struct dp_ahead *a, uint32_t tot)
{
	struct dp_pkt *pk = &a->pk;
	struct rte_ipv4_hdr *ip = pk->ip;
	uint32_t ihl = pk->l3_len, ulen, k;
	uint16_t dport;

	if (unlikely(tot < ihl + sizeof(struct rte_udp_hdr)))
		return verdict_drop(a, DP_DROP_TRUNC_UDP);
	pk->udp = (struct rte_udp_hdr *)((uint8_t *)ip + ihl);
	ulen = rte_be_to_cpu_16(pk->udp->dgram_len);
	if (unlikely(ulen != tot - ihl))
		return verdict_drop(a, DP_DROP_BAD_UDP_LEN);
	/* Checked before anything is rewritten: a bad datagram is never re-signed by TX. */
	if (pk->udp->dgram_cksum != 0 && unlikely(!udp_cksum_ok(m, ip, pk->udp, ulen)))
		return verdict_drop(a, DP_DROP_BAD_UDP_CKSUM);
	pk->payload = (uint8_t *)(pk->udp + 1);
	pk->plen = ulen - (uint32_t)sizeof(struct rte_udp_hdr);
	dport = rte_be_to_cpu_16(pk->udp->dst_port);
	k = (uint32_t)(uint16_t)(dport - w->reply_base);
	/* Two ports: replies only from the node port, requests only from the client port (the
	 * other port's reply_count / n_listen is 0, dp_rx_side). */
	if (dport >= w->reply_base && k < w->reply_count) {
		a->k = k;
		return DP_V_REPLY;
	}
	if (likely(is_listen_port(w, dport)))
		return DP_V_REQUEST;
	if (dport == w->probe_port)
		return DP_V_PROBE;
	return verdict_drop(a, DP_DROP_BAD_PORT);
}

/* The drop of an IPv4 frame whose total length @p tot does not fit the frame's @p len bytes:
 * ip_too_big when the frame is longer than the MTU already (a datagram the port's kernel
 * socket reassembled, cut short at the socket's frame size), else bad_ip. */
static __rte_noinline enum dp_drop ipv4_len_drop(const struct dp_worker *w, const struct dp_pkt *pk,
						 uint32_t tot, uint32_t len)
{
	return tot >= sizeof(struct rte_ipv4_hdr) && len > pk->l2_len + w->mtu ? DP_DROP_IP_TOO_BIG
									       : DP_DROP_BAD_IP;
}

/* After the IPv4 header's own checks (pk->ip, pk->l3_len, total length @p tot): to the
 * router, then ICMP or UDP. */
static __rte_always_inline enum dp_verdict check_ipv4_tail(struct dp_worker *w, struct rte_mbuf *m,
							   struct dp_ahead *a, uint32_t tot)
{
	struct rte_ipv4_hdr *ip = a->pk.ip;

	if (unlikely(ip->dst_addr != w->router_ip))
		return verdict_drop(a, DP_DROP_NOT_OUR_IP);
	if (ip->next_proto_id == IPPROTO_ICMP)
		return DP_V_ICMP;
	if (unlikely(ip->next_proto_id != IPPROTO_UDP))
		return verdict_drop(a, DP_DROP_NOT_UDP);
	return check_udp4(w, m, a, tot);
}

/* After Ethernet: IPv4 checks (lengths before reads, never trusting a length field), then
 * ICMP or UDP by port. */
static __rte_always_inline enum dp_verdict check_ipv4(struct dp_worker *w, struct rte_mbuf *m,
						      struct dp_ahead *a)
{
	struct dp_pkt *pk = &a->pk;
	struct rte_ipv4_hdr *ip;
	uint32_t ihl, tot, len = a->len;

	if (unlikely(len < pk->l2_len + sizeof(struct rte_ipv4_hdr)))
		return verdict_drop(a, DP_DROP_TRUNC_IP);
	ip = pk->ip = (struct rte_ipv4_hdr *)((uint8_t *)pk->eth + pk->l2_len);
	ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	/* Version 4 without options (nearly every packet) passes both checks below at once. */
	if (unlikely(ip->version_ihl != 0x45)) {
		if (unlikely((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip)))
			return verdict_drop(a, DP_DROP_BAD_IP);
		if (unlikely(len < pk->l2_len + ihl))
			return verdict_drop(a, DP_DROP_TRUNC_IP);
	}
	tot = rte_be_to_cpu_16(ip->total_length);
	if (unlikely(tot < ihl || pk->l2_len + tot > len))
		return verdict_drop(a, ipv4_len_drop(w, pk, tot, len));
	if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	    unlikely(!ipv4_hdr_sum_ok(ip, ihl)))
		return verdict_drop(a, DP_DROP_BAD_IP);
	pk->l3_len = (uint16_t)ihl;
	/* A fragment, or a datagram over the MTU (af_packet's socket reassembles fragments):
	 * one branch on the flags/offset word and the length loaded, the rest out of line. */
	if (unlikely((ip->fragment_offset &
		      rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) |
		     (tot > w->mtu))) {
		a->k = tot;
		return DP_V_FRAG;
	}
	return check_ipv4_tail(w, m, a, tot);
}

/* Extension headers walked at most (hop-by-hop, destination options, routing). */
#define DP_IP6_EXT_MAX 8

/*
 * After the IPv6 header: walk the extension headers the router may meet as a destination
 * (hop-by-hop, destination options, routing with no segments left), each within the payload
 * and the frame. @return the upper-layer protocol, its offset from the IPv6 header in *off;
 * or -1 with the drop reason in *why (a fragment header: ip_fragment; cut short:
 * truncated_ip; a routing header still routing, too many headers: bad_ip).
 */
static int ipv6_walk(const struct rte_ipv6_hdr *ip6, uint32_t end, uint32_t *off, enum dp_drop *why)
{
	const uint8_t *b = (const uint8_t *)ip6;
	uint32_t o = sizeof(*ip6);
	uint8_t nh = ip6->proto;

	for (int i = 0; i < DP_IP6_EXT_MAX; i++) {
		uint32_t hlen;

		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_DSTOPTS:
		case IPPROTO_ROUTING:
			break;
		case IPPROTO_FRAGMENT:
			*why = DP_DROP_IP_FRAGMENT;
			return -1;
		default:
			*off = o;
			return nh;
		}
		if (o + 8 > end) {
			*why = DP_DROP_TRUNC_IP;
			return -1;
		}
		hlen = ((uint32_t)b[o + 1] + 1) * 8;
		if (o + hlen > end) {
			*why = DP_DROP_TRUNC_IP;
			return -1;
		}
		if (nh == IPPROTO_ROUTING && b[o + 3] != 0) {
			*why = DP_DROP_BAD_IP; /* segments left: we are not its destination */
			return -1;
		}
		nh = b[o];
		o += hlen;
	}
	*why = DP_DROP_BAD_IP;
	return -1;
}

/* The IPv6 UDP checksum of @p m is right (0 was refused before): the port's verdict when it
 * gives one, else computed over the @p ulen bytes of the datagram. */
static inline bool udp6_cksum_ok(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6,
				 const struct rte_udp_hdr *udp, uint32_t ulen)
{
	int verdict = rx_l4_verdict(m);

	if (verdict >= 0)
		return verdict;
	return dp_csum_verifies(
		dp_csum_sum64(udp, ulen,
			      dp_ip6_phdr_sum((const uint8_t *)&ip6->src_addr,
					      (const uint8_t *)&ip6->dst_addr, ulen, IPPROTO_UDP)));
}

/* ICMPv6 at offset pk->l3_len, @p ilen bytes: checksum (over the pseudo-header), then echo
 * (to whom requests are served) or neighbour discovery (anyone on the link). */
static void handle_icmp6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t ilen)
{
	const uint8_t *ic = (const uint8_t *)pk->ip6 + pk->l3_len;
	enum dp_drop why;

	if (ilen < 4 || dp_csum_sum(ic, ilen,
				    dp_ip6_phdr_sum((const uint8_t *)&pk->ip6->src_addr,
						    (const uint8_t *)&pk->ip6->dst_addr, ilen,
						    IPPROTO_ICMPV6)) != 0xffff)
		return dp_count_drop(w, m, DP_DROP_BAD_ICMP);
	if (ic[0] == 135 || ic[0] == 136) /* Neighbor Solicitation / Advertisement */
		return dp_local_nd(w, m, pk);
	if (ic[0] != 128 || pk->ip6->dst_addr[0] == 0xff) /* echo request, to our address */
		return dp_count_drop(w, m, DP_DROP_BAD_ICMP);
	why = client_check(w, pk);
	if (unlikely(why != DP_DROP_COUNT))
		return dp_count_drop(w, m, why);
	dp_local_icmp6_echo(w, m, pk);
}

/* The router's solicited-node multicast address ff02::1:ffXX:XXXX (Neighbor Solicitations
 * for its address go there). */
static inline bool is_our_sn_addr(const struct dp_worker *w, const uint8_t *a)
{
	static const uint8_t pfx[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};

	return memcmp(a, pfx, 13) == 0 && memcmp(a + 13, w->router_ip6 + 13, 3) == 0;
}

/* After Ethernet: IPv6 as check_ipv4 does IPv4, a parallel path: the router's address6 (or,
 * for neighbour discovery, its solicited-node group), extension headers walked, ICMPv6 or
 * UDP; the UDP checksum is mandatory. */
static void handle_frag6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t len);
static void handle_big6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t len);

/* @p big: a datagram over the MTU, its TX watched by handle_big6() (a constant: the wrappers
 * below each inline their own copy). */
static __rte_always_inline void ipv6_serve(struct dp_worker *w, struct rte_mbuf *m,
					   struct dp_pkt *pk, uint32_t len, bool big)
{
	struct rte_ipv6_hdr *ip6;
	uint32_t end, off, ulen, k;
	enum dp_drop why = DP_DROP_BAD_IP;
	uint16_t dport;
	int proto;

	if (unlikely(!w->has_ip6))
		return dp_count_drop(w, m, DP_DROP_NOT_IPV4);
	if (unlikely(len < pk->l2_len + sizeof(struct rte_ipv6_hdr)))
		return dp_count_drop(w, m, DP_DROP_TRUNC_IP);
	ip6 = pk->ip6 = (struct rte_ipv6_hdr *)((uint8_t *)pk->eth + pk->l2_len);
	pk->ip = NULL;
	pk->v6 = true;
	end = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
	/* payload_len 0 is a jumbogram's: none here. */
	if (unlikely((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6 || end == sizeof(*ip6)))
		return dp_count_drop(w, m, DP_DROP_BAD_IP);
	if (unlikely(pk->l2_len + end > len)) /* cut short by the port when over the MTU */
		return dp_count_drop(
			w, m, len > pk->l2_len + w->mtu ? DP_DROP_IP_TOO_BIG : DP_DROP_BAD_IP);
	/* Over the MTU (af_packet's socket reassembles): fragmented again on the way out. */
	if (!big && unlikely(end > w->mtu))
		return handle_big6(w, m, pk, len);
	if (likely(ip6->proto == IPPROTO_UDP)) { /* no extension header: as the walk says */
		proto = IPPROTO_UDP;
		off = sizeof(*ip6);
	} else {
		/* A fragment header first: to the reassembly (one further in: the walk's
		 * ip_fragment). */
		if (!big && ip6->proto == IPPROTO_FRAGMENT)
			return handle_frag6(w, m, pk, len);
		proto = ipv6_walk(ip6, end, &off, &why);
		if (unlikely(proto < 0))
			return dp_count_drop(w, m, why);
		/* The mbuf's l3_len (9 bits) carries it to another worker. */
		if (unlikely(off > 511))
			return dp_count_drop(w, m, DP_DROP_BAD_IP);
	}
	pk->l3_len = (uint16_t)off;
	if (memcmp(&ip6->dst_addr, w->router_ip6, 16) != 0) {
		/* Only a Neighbor Solicitation may come to the solicited-node group. */
		if (proto != IPPROTO_ICMPV6 || !is_our_sn_addr(w, (const uint8_t *)&ip6->dst_addr))
			return dp_count_drop(w, m, DP_DROP_NOT_OUR_IP);
	}
	if (proto == IPPROTO_ICMPV6)
		return handle_icmp6(w, m, pk, end - off);
	if (unlikely(proto != IPPROTO_UDP))
		return dp_count_drop(w, m, DP_DROP_NOT_UDP);
	if (unlikely(end - off < sizeof(struct rte_udp_hdr)))
		return dp_count_drop(w, m, DP_DROP_TRUNC_UDP);
	pk->udp = (struct rte_udp_hdr *)((uint8_t *)ip6 + off);
	ulen = rte_be_to_cpu_16(pk->udp->dgram_len);
	if (unlikely(ulen != end - off))
		return dp_count_drop(w, m, DP_DROP_BAD_UDP_LEN);
	if (unlikely(pk->udp->dgram_cksum == 0))
		return dp_count_drop(w, m, DP_DROP_UDP_ZERO_CKSUM);
	if (unlikely(!udp6_cksum_ok(m, ip6, pk->udp, ulen)))
		return dp_count_drop(w, m, DP_DROP_BAD_UDP_CKSUM);
	pk->payload = (uint8_t *)(pk->udp + 1);
	pk->plen = ulen - (uint32_t)sizeof(struct rte_udp_hdr);
	dport = rte_be_to_cpu_16(pk->udp->dst_port);
	k = (uint32_t)(uint16_t)(dport - w->reply_base);
	if (dport >= w->reply_base && k < w->reply_count)
		return handle_reply6(w, m, pk, k);
	if (is_listen_port(w, dport))
		return handle_request(w, m, pk);
	if (dport == w->probe_port)
		return handle_probe_reply(w, m, pk);
	dp_count_drop(w, m, DP_DROP_BAD_PORT);
}

/* IPv6 datagram @p m over the MTU: ipv6_serve(), and what it queues fragmented for TX. */
static __rte_noinline void handle_big6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
				       uint32_t len)
{
	uint16_t from;

	if (w->ntx > DP_TX_CAP - DP_FRAG_TX_ROOM)
		dp_tx_flush(w);
	from = w->ntx;
	ipv6_serve(w, m, pk, len, true);
	dp_frag_tx(w, from);
}

/* An IPv6 fragment (its fragment header right after the IPv6 header; one further in is
 * ip_fragment, from the walk) of a UDP datagram to the router: to the reassembly; the whole
 * datagram, once there, is served from its IPv6 header on. */
static __rte_noinline void handle_frag6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
					uint32_t len)
{
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)((uint8_t *)pk->eth + pk->l2_len);
	struct rte_ipv6_fragment_ext *fh = (struct rte_ipv6_fragment_ext *)(ip6 + 1);
	uint32_t end = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
	const uint16_t l3 = sizeof(*ip6) + sizeof(*fh);

	if (unlikely((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6 || pk->l2_len + end > len))
		return dp_count_drop(w, m, DP_DROP_BAD_IP);
	if (unlikely(end < l3))
		return dp_count_drop(w, m, DP_DROP_TRUNC_IP);
	if (memcmp(&ip6->dst_addr, w->router_ip6, 16) != 0)
		return dp_count_drop(w, m, DP_DROP_NOT_OUR_IP);
	if (w->frag == NULL || fh->next_header != IPPROTO_UDP)
		return dp_count_drop(w, m, DP_DROP_IP_FRAGMENT);
	if (end == l3)
		return dp_count_drop(w, m, DP_DROP_IP_FRAG_INVALID);
	if (rte_pktmbuf_pkt_len(m) > pk->l2_len + end) /* Ethernet padding */
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - pk->l2_len - end));
	m = dp_frag_in(w, m, pk->l2_len, l3, ip6, fh);
	if (m == NULL)
		return; /* held, or dropped and counted */
	const struct dp_hint *h = pk->hint;

	pk->eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	pk->hint = &dp_no_hint; /* the look-ahead saw a fragment; pk is a ring entry's: restored */
	handle_big6(w, m, pk, rte_pktmbuf_data_len(m));
	pk->hint = h;
}

/* IPv6 after Ethernet (ipv6_serve). */
static __rte_noinline void handle_ipv6(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
				       uint32_t len)
{
	ipv6_serve(w, m, pk, len, false);
}

/* rte_is_same_ether_addr() as one 32-bit and one 16-bit compare (DPDK's: three 16-bit). */
static inline bool ether_eq(const struct rte_ether_addr *a, const struct rte_ether_addr *b)
{
	uint32_t a0, b0;
	uint16_t a1, b1;

	memcpy(&a0, a, 4);
	memcpy(&b0, b, 4);
	memcpy(&a1, (const uint8_t *)a + 4, 2);
	memcpy(&b1, (const uint8_t *)b + 4, 2);
	return ((a0 ^ b0) | (uint32_t)(a1 ^ b1)) == 0;
}

/* Ethernet (and VLAN) checks, then IPv4's: where frame @p m goes, with a->pk as far as the
 * checks went (a->len set by the caller). */
static __rte_always_inline enum dp_verdict check_frame(struct dp_worker *w, struct rte_mbuf *m,
						       struct dp_ahead *a)
{
	struct dp_pkt *pk = &a->pk;
	uint32_t len = a->len;
	uint16_t etype, vid = 0;

	if (unlikely(m->nb_segs != 1))
		return verdict_drop(a, DP_DROP_MULTI_SEGMENT);
	if (unlikely(len < sizeof(struct rte_ether_hdr)))
		return verdict_drop(a, DP_DROP_TRUNC_ETH);
	pk->eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	pk->l2_len = sizeof(struct rte_ether_hdr);
	pk->vlan = false;
	pk->v6 = false;
	etype = pk->eth->ether_type;
	if (etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
		if (unlikely(len < sizeof(struct rte_ether_hdr) + sizeof(struct rte_vlan_hdr)))
			return verdict_drop(a, DP_DROP_TRUNC_ETH);
		etype = ((struct rte_vlan_hdr *)(pk->eth + 1))->eth_proto;
		vid = rte_be_to_cpu_16(((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci) & 0xfff;
		pk->l2_len += sizeof(struct rte_vlan_hdr);
		pk->vlan = true;
	}
	/* A frame for another host is not_for_us whatever its VLAN (a bridge's flooding, a
	 * switch's multicast): wrong_vlan speaks only of frames meant for the router. */
	if (unlikely(!ether_eq(&pk->eth->dst_addr, &w->router_mac)) &&
	    !(etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP) &&
	      rte_is_broadcast_ether_addr(&pk->eth->dst_addr)) &&
	    !(etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) && w->has_ip6 &&
	      rte_is_same_ether_addr(&pk->eth->dst_addr, &w->sn_mac)))
		return verdict_drop(a, DP_DROP_NOT_FOR_US);
	/* A port on one VLAN serves nothing from another (nor untagged frames, unless 0). */
	if (unlikely(w->vlan_want != DP_VLAN_ANY) && vid != w->vlan_want)
		return verdict_drop(a, DP_DROP_WRONG_VLAN);
	/* A group address is never a sender's: an answer to it would go to the whole segment. */
	if (unlikely(rte_is_multicast_ether_addr(&pk->eth->src_addr)))
		return verdict_drop(a, DP_DROP_SRC_MAC_GROUP);
	if (likely(etype == w->ipv4_etype)) /* IPv4's; none without an IPv4 address */
		return check_ipv4(w, m, a);
	if (etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return DP_V_ARP;
	if (etype == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6))
		return DP_V_IPV6;
	return verdict_drop(a, DP_DROP_NOT_IPV4);
}

#ifdef __SSE4_1__
/* The bits of frame bytes [@p off, @p off + 16) that differ from part @p i of pattern @p t
 * where it cares. */
static inline __m128i tmpl_diff(const uint8_t *d, const struct dp_hdr_tmpl *t, int i, int off)
{
	__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(d + off));

	return _mm_and_si128(_mm_xor_si128(x, _mm_load_si128((const __m128i *)t->want[i])),
			     _mm_load_si128((const __m128i *)t->mask[i]));
}
#endif

/*
 * A frame the IPv4 pattern refused (@p d its bytes): when it matches the IPv6 pattern
 * (w->hdr6), ipv6_serve()'s tests of what the pattern leaves open, in its order, up to its
 * dispatch, and its verdicts: a reply (DP_V_REPLY, as IPv4's), a request to a listen port
 * (DP_V_REQUEST6, pk whole as ipv6_serve() leaves it for handle_request()). Whatever fails a
 * test, or is for the probe port or another port, gets DP_V_IPV6 (handle_ipv6 judges and
 * counts it, as it did before this look-ahead); a frame the pattern refuses, check_frame().
 * Out of line (check_other() calls it for IPv6 frames only): inlined, it cost every IPv4
 * reply 4.4 instructions of register pressure.
 */
static __rte_noinline enum dp_verdict check_served6(struct dp_worker *w, struct rte_mbuf *m,
						    struct dp_ahead *a, uint8_t *d)
{
	const struct dp_hdr_tmpl *t = &w->hdr6;
	struct dp_pkt *pk = &a->pk;
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(d + sizeof(struct rte_ether_hdr));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);
	uint32_t plen6, ulen, k;
	uint16_t dport;
	__m128i x;

	/* min_len .. the MTU's frame: with payload_len within the frame, within the MTU too. */
	if (a->len - t->min_len > t->len_span || m->nb_segs != 1)
		return check_frame(w, m, a);
	x = _mm_or_si128(_mm_or_si128(tmpl_diff(d, t, 0, 0), tmpl_diff(d, t, 1, 16)),
			 tmpl_diff(d, t, 2, 38));
	if (!_mm_testz_si128(x, x))
		return check_frame(w, m, a);
	pk->eth = (struct rte_ether_hdr *)d;
	pk->l2_len = sizeof(struct rte_ether_hdr);
	pk->vlan = false;
	pk->v6 = false; /* as check_frame() leaves a DP_V_IPV6 frame */
	plen6 = rte_be_to_cpu_16(ip6->payload_len);
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	/* ipv6_serve(): payload_len 0 (a jumbogram) or shorter than a UDP header, cut short,
	 * over the MTU, the UDP length, checksum 0 or wrong: all its to judge. A UDP length
	 * below the header's passes none of them (the frame's bytes past payload_len are
	 * padding, never a datagram). */
	if (unlikely(ulen < sizeof(*udp) || ulen != plen6 ||
		     sizeof(struct rte_ether_hdr) + sizeof(*ip6) + plen6 > a->len ||
		     udp->dgram_cksum == 0) ||
	    unlikely(!udp6_cksum_ok(m, ip6, udp, ulen)))
		return DP_V_IPV6;
	dport = rte_be_to_cpu_16(udp->dst_port);
	k = (uint32_t)(uint16_t)(dport - w->reply_base);
	if (dport >= w->reply_base && k < w->reply_count)
		a->k = k;
	else if (!is_listen_port(w, dport))
		return DP_V_IPV6; /* the probe port's, or a bad port's drop */
	pk->ip6 = ip6;
	pk->ip = NULL;
	pk->v6 = true;
	pk->l3_len = sizeof(*ip6);
	pk->udp = udp;
	pk->payload = (uint8_t *)(udp + 1);
	pk->plen = ulen - (uint32_t)sizeof(*udp);
	return dport >= w->reply_base && k < w->reply_count ? DP_V_REPLY : DP_V_REQUEST6;
}

/* A frame the IPv4 pattern refused: an untagged IPv6 one to the IPv6 pattern (check_served6,
 * out of line), any other to check_frame() here (a VLAN port's frames, ARP, fragments: they
 * pay no call for IPv6's sake). */
static __rte_always_inline enum dp_verdict check_other(struct dp_worker *w, struct rte_mbuf *m,
						       struct dp_ahead *a, uint8_t *d)
{
	uint16_t etype;

	memcpy(&etype, d + 12, 2); /* inside the mbuf's data room whatever the frame's length */
	if (etype == RTE_BE16(RTE_ETHER_TYPE_IPV6))
		return check_served6(w, m, a, d); /* it tests the length */
	return check_frame(w, m, a);
}

/*
 * check_frame() at once for a frame that matches the port's pattern (struct dp_hdr_tmpl:
 * untagged, to the router's MAC and IPv4 address from a unicast source, IPv4 without options,
 * not a fragment, UDP), the one every request and reply is: three 16-byte compares instead
 * of a dozen field checks, then the lengths and checksums. Any other frame takes
 * check_frame(), which judges it field by field; for a matching frame both give the same
 * verdict (the pattern's facts are the checks check_frame() would pass).
 */
static __rte_always_inline enum dp_verdict check_served(struct dp_worker *w, struct rte_mbuf *m,
							struct dp_ahead *a)
{
#ifdef __SSE4_1__
	const struct dp_hdr_tmpl *t = &w->hdr;
	struct dp_pkt *pk = &a->pk;
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv4_hdr *ip;
	__m128i x;
	uint32_t tot;

	/* min_len .. the MTU's frame (len_span): longer ones are fragmented again (check_frame). */
	if (unlikely(a->len - t->min_len > t->len_span || m->nb_segs != 1))
		return check_other(w, m, a, d);
	x = _mm_or_si128(_mm_or_si128(tmpl_diff(d, t, 0, 0), tmpl_diff(d, t, 1, 16)),
			 tmpl_diff(d, t, 2, 26));
	if (unlikely(!_mm_testz_si128(x, x)))
		return check_other(w, m, a, d);
	pk->eth = (struct rte_ether_hdr *)d;
	pk->l2_len = sizeof(struct rte_ether_hdr);
	pk->vlan = false;
	pk->v6 = false;
	ip = pk->ip = (struct rte_ipv4_hdr *)(d + sizeof(struct rte_ether_hdr));
	/* check_ipv4()'s checks of what the pattern leaves open, in its order. */
	tot = rte_be_to_cpu_16(ip->total_length);
	if (unlikely(tot < sizeof(*ip) || sizeof(struct rte_ether_hdr) + tot > a->len))
		return verdict_drop(a, DP_DROP_BAD_IP);
	if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) != RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
	    unlikely(!ipv4_hdr_sum_ok(ip, sizeof(*ip))))
		return verdict_drop(a, DP_DROP_BAD_IP);
	pk->l3_len = sizeof(*ip);
	return check_udp4(w, m, a, tot);
#else
	return check_frame(w, m, a);
#endif
}

static void handle_frag4(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a);
static void fast_request(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a);
static void fast_request6(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a);

/* Frame @p m where the look-ahead's checks (@p a) send it. Always inlined: the burst loop is
 * its one caller, and the reply path must not pay a call (see handle_request()). */
static __rte_always_inline void handle_packet(struct dp_worker *w, struct rte_mbuf *m,
					      struct dp_ahead *a)
{
	struct dp_pkt *pk = &a->pk;
	enum dp_drop why;

	switch ((enum dp_verdict)a->verdict) {
	case DP_V_REPLY:
		return handle_reply(w, m, pk, a->k);
	case DP_V_FAST:
		return fast_request(w, m, a);
	case DP_V_FAST6:
		return fast_request6(w, m, a);
	case DP_V_REQUEST6:
		return handle_request(w, m, pk);
	case DP_V_REQUEST:
		return handle_request(w, m, pk);
	case DP_V_DROP:
		break;
	case DP_V_PROBE:
		return handle_probe_reply(w, m, pk);
	case DP_V_ICMP:
		why = client_check(w, pk); /* echo only to whom requests are served */
		if (unlikely(why != DP_DROP_COUNT))
			return dp_count_drop(w, m, why);
		return dp_local_icmp(w, m, pk);
	case DP_V_ARP:
		return dp_local_arp(w, m, pk);
	case DP_V_IPV6:
		return handle_ipv6(w, m, pk, a->len);
	case DP_V_FRAG:
		return handle_frag4(w, m, a);
	}
	dp_count_drop(w, m, (enum dp_drop)a->why);
}

/* Where a request's payload starts if IPv6 frame @p d (@p len bytes, @p l2 of Ethernet and
 * VLAN) is a UDP datagram right after the IPv6 header (extension headers get no look-ahead)
 * to a port that is not a reply port: only lengths are checked (handle_ipv6 judges the
 * packet). */
static __rte_noinline const uint8_t *peek_payload6(const struct dp_worker *w, const uint8_t *d,
						   uint32_t len, uint32_t l2, uint32_t *plen)
{
	const uint32_t l3 = sizeof(struct rte_ipv6_hdr);
	const struct rte_udp_hdr *udp;
	uint32_t ulen;

	if (len < l2 + l3 + sizeof(*udp) || (d[l2] & 0xf0) != 0x60 || d[l2 + 6] != IPPROTO_UDP)
		return NULL;
	udp = (const struct rte_udp_hdr *)(d + l2 + l3);
	if ((uint16_t)(rte_be_to_cpu_16(udp->dst_port) - w->reply_base) < w->reply_count)
		return NULL;
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < sizeof(*udp) || ulen > len - l2 - l3)
		return NULL;
	*plen = ulen - (uint32_t)sizeof(*udp);
	return (const uint8_t *)(udp + 1);
}

/* How far ahead of the packet being handled the loop parses a request and prefetches its
 * first key's ring index entry (packet lines: twice as far ahead), and looks the owner up and
 * prefetches its endpoint entry. */
#define DP_HINT_AHEAD	8
#define DP_LOOKUP_AHEAD 4

static_assert(DP_AHEAD_RING > DP_HINT_AHEAD && (DP_AHEAD_RING & (DP_AHEAD_RING - 1)) == 0,
	      "the look-ahead ring holds every packet from the current one to DP_HINT_AHEAD");

/* No look-ahead for a packet (its payload never matches). */
const struct dp_hint dp_no_hint = {.payload = NULL};

/* A packet's first two lines: headers, frame header and (for a request) its key. */
static inline void prefetch_pkt(struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

	rte_prefetch0(d);
	rte_prefetch0(d + RTE_CACHE_LINE_SIZE);
}

/* The look-ahead of request datagram @p a (see dp_forward_burst): its parse, and its first
 * key's hash with the ring index entry on the way in (with a placement). */
static inline void key_hint(const struct dp_worker *w, struct dp_ahead *a, const uint8_t *pay,
			    uint32_t plen)
{
	struct dp_hint *h = &a->hint;
	const struct mc_requests *r = h->req;
	const struct mc_key *k0;

	h->payload = pay;
	h->plen = plen;
	h->err = mc_parse_datagram_flags(pay, plen, MC_PARSE_CTL_KEYS, h->req);
	if (h->err != MC_OK || r->nkeys == 0 || w->cur == NULL)
		return;
	k0 = &r->keys[0];
	if (k0->base64)
		return; /* hashed decoded, by request_owner() */
	h->hash = pl_key_hash(w->cur->pl, pay + k0->off, k0->len);
	h->has_owner = true;
	pl_prefetch_hash(w->cur->pl, h->hash);
}

/* The fast lane (fast_hint, fast_request): dp_fast.h, a part of this file. */
#include "dp_fast.h"

/* The look-ahead of one frame: its checks (check_frame), and for a request its parse. */
static __rte_always_inline void look_ahead(struct dp_worker *w, struct rte_mbuf *m,
					   struct dp_ahead *a)
{
	const uint8_t *pay;
	uint32_t plen = 0;

	a->len = rte_pktmbuf_data_len(m);
	a->hint.payload = NULL;
	a->hint.has_owner = false;
	a->verdict = (uint16_t)check_served(w, m, a);
	if (likely(a->verdict == DP_V_REQUEST))
		return fast_hint(w, a);
	if (a->verdict == DP_V_REQUEST6)
		return fast_hint6(w, a);
	if (a->verdict == DP_V_IPV6 &&
	    (pay = peek_payload6(w, (const uint8_t *)a->pk.eth, a->len, a->pk.l2_len, &plen)))
		key_hint(w, a, pay, plen);
}

/* The owner of a parsed request's first key (its index entry is on its way since
 * DP_HINT_AHEAD - DP_LOOKUP_AHEAD packets), and its endpoint entry on the way in. */
static inline void owner_hint(const struct dp_worker *w, struct dp_hint *h)
{
	if (!h->has_owner)
		return;
	h->owner = pl_lookup_hash(w->cur->pl, h->hash);
	if (h->owner >= 0)
		rte_prefetch0(&w->eps[w->cur->ep[h->owner]]);
}

/* Handle whole datagram @p m (checked as far as @p a says) that may be larger than the MTU:
 * what its handling queues for TX is fragmented where it must be (dp_frag_tx), the buffer
 * flushed first if it could fill meanwhile. A request gets its look-ahead here. */
static __rte_noinline void handle_whole(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a)
{
	uint16_t from;

	a->hint.payload = NULL;
	a->hint.has_owner = false;
	if (a->verdict == DP_V_REQUEST) {
		key_hint(w, a, a->pk.payload, a->pk.plen);
		owner_hint(w, &a->hint);
	}
	if (w->ntx > DP_TX_CAP - DP_FRAG_TX_ROOM)
		dp_tx_flush(w);
	from = w->ntx;
	handle_packet(w, m, a);
	dp_frag_tx(w, from);
}

/*
 * An IPv4 fragment or a datagram over the MTU (check_ipv4: its header checked, a->k its total
 * length). A fragment of a UDP datagram to the router goes to the reassembly, which holds it
 * or gives the whole datagram back, checked then from its Ethernet header on as any frame;
 * a whole datagram takes the rest of the checks. Either way no slot is taken before the
 * datagram is whole and checked.
 */
static __rte_noinline void handle_frag4(struct dp_worker *w, struct rte_mbuf *m, struct dp_ahead *a)
{
	struct rte_ipv4_hdr *ip = a->pk.ip;

	if (ip->fragment_offset &
	    rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) {
		if (unlikely(ip->dst_addr != w->router_ip))
			return dp_count_drop(w, m, DP_DROP_NOT_OUR_IP);
		if (w->frag == NULL || ip->next_proto_id != IPPROTO_UDP)
			return dp_count_drop(w, m, DP_DROP_IP_FRAGMENT);
		if (a->k == a->pk.l3_len) /* no payload */
			return dp_count_drop(w, m, DP_DROP_IP_FRAG_INVALID);
		if (rte_pktmbuf_pkt_len(m) > a->pk.l2_len + a->k) /* Ethernet padding */
			rte_pktmbuf_trim(m,
					 (uint16_t)(rte_pktmbuf_pkt_len(m) - a->pk.l2_len - a->k));
		m = dp_frag_in(w, m, a->pk.l2_len, a->pk.l3_len, ip, NULL);
		if (m == NULL)
			return; /* held, or dropped and counted */
		a->len = rte_pktmbuf_data_len(m);
		a->verdict = (uint16_t)check_frame(w, m, a);
		if (a->verdict != DP_V_FRAG)
			return handle_whole(w, m, a);
	}
	a->verdict = (uint16_t)check_ipv4_tail(w, m, a, a->k);
	handle_whole(w, m, a);
}

/*
 * A software pipeline over the burst (DPDK l3fwd's pattern for its lookups): packet lines
 * 2 * DP_HINT_AHEAD ahead; the packet DP_HINT_AHEAD ahead checked (Ethernet, IPv4, UDP: once,
 * where it goes recorded in its dp_ahead) and, a request, parsed, its first key hashed and
 * its ring index entry prefetched; the owner of the one DP_LOOKUP_AHEAD ahead looked up; then
 * the packet itself handled, so that the index misses of a large ring (whose replica does not
 * fit the caches) overlap with the work on earlier packets instead of stalling each request.
 * Parse once: the request path takes the look-ahead's parse for the very payload it was made
 * of. Every check the look-ahead makes depends only on the frame and the configuration, so
 * making it a few packets early changes nothing.
 */
uint16_t dp_forward_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t sent = dp_obs_sent(w);
	const uint32_t ring = DP_AHEAD_RING - 1;

	w->now = rte_rdtsc();
	/* Acquire pairs with the control lcore's release store in dp_publish_placement(): the
	 * replica's contents are visible before its pointer. Loaded once per burst; the worker
	 * reports quiescence only after the burst, so the replica outlives every use. */
	w->cur = atomic_load_explicit(&w->view, memory_order_acquire);
	/* The same for the warm-up window's previous placement (dp_warm_rotate / dp_warm_end). */
	w->prev_cur = atomic_load_explicit(&w->prev_view, memory_order_acquire);
	w->warm_reads = atomic_load_explicit(&w->dp->warm_reads, memory_order_relaxed);
	/* Drain (dp_drain.c): relaxed, as warm_reads; what it orders is only which burst refuses
	 * first. */
	w->drain = atomic_load_explicit(&w->dp->drain, memory_order_relaxed);
	if (unlikely(w->cur != NULL && w->cur->epoch != w->epoch_seen)) {
		w->epoch_seen = w->cur->epoch;
		w->ctr[DP_CTR_PUBLISH_SEEN]++;
	}
	w->ctr[DP_CTR_RX] += n;
	for (uint32_t i = 0; i < n && i < DP_HINT_AHEAD; i++)
		prefetch_pkt(pkts[i]);
	/* Step t: packet t looked ahead at, the owner of packet t - DP_HINT_AHEAD +
	 * DP_LOOKUP_AHEAD looked up, packet t - DP_HINT_AHEAD handled. The first DP_HINT_AHEAD
	 * steps handle nothing: a loop of their own, so that the other steps test only the
	 * burst's end. */
	uint32_t t = 0;

	for (; t < DP_HINT_AHEAD; t++) {
		uint32_t l = t - (DP_HINT_AHEAD - DP_LOOKUP_AHEAD);

		if (t + DP_HINT_AHEAD < n)
			prefetch_pkt(pkts[t + DP_HINT_AHEAD]);
		if (t < n)
			look_ahead(w, pkts[t], &w->ahead_pkt[t & ring]);
		if (t >= DP_HINT_AHEAD - DP_LOOKUP_AHEAD && l < n)
			owner_hint(w, &w->ahead_pkt[l & ring].hint);
	}
	for (; t < (uint32_t)n + DP_HINT_AHEAD; t++) {
		uint32_t l = t - (DP_HINT_AHEAD - DP_LOOKUP_AHEAD), i = t - DP_HINT_AHEAD;

		if (t + DP_HINT_AHEAD < n)
			prefetch_pkt(pkts[t + DP_HINT_AHEAD]);
		if (t < n)
			look_ahead(w, pkts[t], &w->ahead_pkt[t & ring]);
		if (l < n)
			owner_hint(w, &w->ahead_pkt[l & ring].hint);
		handle_packet(w, pkts[i], &w->ahead_pkt[i & ring]);
	}
	dp_tx_flush(w);
	dp_obs_burst_done(w, sent);
	return n;
}

/* Slots expire_slots() looks at per poll. */
#define DP_SWEEP_PER_POLL 16

/* Slot @p s timed out: counted, and freed (a multi-get's: its merge told). */
static __rte_noinline void expire_slot(struct dp_worker *w, uint32_t s)
{
	struct dp_slot *sl = &w->slots[s];

	w->ctr[sl->quiet ? DP_CTR_SLOTS_QUIET_EXPIRED : DP_CTR_SLOTS_EXPIRED]++;
	/* No answer at all: a failure in the node's health (dp_health.c), unless it was sent
	 * before the node's last health change: a request sent before a node was down (or
	 * before it came back) says nothing about it after (issue 27: a short outage flapped). */
	if (!sl->quiet && (sl->total == 0 || sl->multi == DP_MULTI_MGET)) {
		if (sl->tsc >= atomic_load_explicit(&w->eps[sl->ep].health_tsc,
						    memory_order_relaxed))
			w->node_tmo[sl->ep]++;
		else
			w->ctr[DP_CTR_TMO_BEFORE_CHANGE]++;
	}
	if (sl->multi == DP_MULTI_MGET)
		dp_mget_slot_expired(w, s);
	else
		dp_slot_free(w, s);
}

/* Free slots whose reply did not fully pass within the timeout; a few per poll (the quiet
 * slots' shorter one is kept by quiet_expire(), on time). The scan keeps its cursor and the
 * clock in registers: it runs every poll, busy or idle. */
static void expire_slots(struct dp_worker *w)
{
	const uint32_t from = w->sweep, mask = w->slot_mask;
	const int64_t now = (int64_t)w->now, timeout = (int64_t)w->timeout_tsc;

	w->sweep = from + DP_SWEEP_PER_POLL;
	for (uint32_t i = 0; i < DP_SWEEP_PER_POLL; i++) {
		uint32_t s = (from + i) & mask;
		int64_t tsc = (int64_t)w->slots[s].tsc;

		/* Free (0) never expires; tsc may be now | 1, one tick ahead of now: the signed
		 * difference is then negative. */
		if (unlikely(tsc != 0 && now - tsc > timeout))
			expire_slot(w, s);
	}
}

/* dp_config.link_gated: whether each port's link is up, for this poll. Up is the last thing a
 * net_memif connect stores, after the queue memory is mapped (x86 keeps its stores, and these
 * loads before the burst's, in order); down the first a disconnect stores, and the unmap after
 * it waits for this poll's end (app/ringway/unmap_guard.h). */
static __rte_noinline void read_links(struct dp_worker *w)
{
	struct rte_eth_link link;

	w->port_up = rte_eth_link_get_nowait(w->port_id, &link) == 0 &&
		     link.link_status == RTE_ETH_LINK_UP;
	if (w->two_ports)
		w->node_port_up = rte_eth_link_get_nowait(w->node_port_id, &link) == 0 &&
				  link.link_status == RTE_ETH_LINK_UP;
}

/* Draining: tell the control lcore whether this worker is empty (no slot, no multi-get) under
 * the drain word it loaded this poll (dp_drain.c has why that is enough). */
static __rte_noinline void drain_ack(struct dp_worker *w)
{
	bool empty = w->free_tail - w->free_head == w->slot_mask + 1 &&
		     (w->mgets == NULL || w->n_mget_free == w->dp->cfg.mget_max);

	atomic_store_explicit(&w->drain_ack, empty ? w->drain : 0, memory_order_relaxed);
}

unsigned int dp_worker_poll(struct dp_worker *w)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	/* Rings store void *; dequeue into void * slots, not through a cast of pkts (a
	 * type-punned write the compiler may assume does not touch pkts). */
	void *objs[DP_BURST_MAX];
	unsigned int nh = 0;
	uint16_t nr;

	w->ctr[DP_CTR_POLLS]++;
	if (unlikely(w->link_gated))
		read_links(w);
	dp_hot_poll_worker(w);
	if (w->ctl_ring != NULL) {
		unsigned int nc = rte_ring_sc_dequeue_burst(w->ctl_ring, objs, w->burst, NULL);

		for (unsigned int i = 0; i < nc; i++)
			dp_tx_push(w, objs[i], DP_TX_CTL, 0);
	}
	nh = rte_ring_sc_dequeue_burst(w->handoff, objs, w->burst, NULL);
	for (unsigned int i = 0; i < nh; i++)
		take_over(w, objs[i]);
	nr = likely(w->port_up) ? rte_eth_rx_burst(w->port_id, w->queue_id, pkts, w->burst) : 0;
	dp_forward_burst(w, pkts, nr); /* also flushes what the rings added */
	if (unlikely(w->two_ports)) {
		uint16_t nn;

		dp_rx_side(w, true);
		nn = likely(w->node_port_up)
			     ? rte_eth_rx_burst(w->node_port_id, w->queue_id, pkts, w->burst)
			     : 0;
		dp_forward_burst(w, pkts, nn);
		dp_rx_side(w, false);
		nr = (uint16_t)(nr + nn);
	}
	expire_slots(w);
	if (unlikely(w->frag_held != 0))
		dp_frag_expire(w);
	if (w->quiet_head != w->quiet_tail)
		quiet_expire(w, false);
	if (w->mget_head != DP_NO_MGET)
		dp_mget_expire(w);
	if (w->send_head != DP_NO_MGET)
		dp_mget_send(w); /* merged replies, a burst at a time as the TX queue has room */
	if (unlikely(DP_DRAIN_WORD_MODE(w->drain) != 0))
		drain_ack(w);
	if (nr + nh == 0)
		w->ctr[DP_CTR_IDLE_POLLS]++;
	return nr + nh;
}

/* Sleep @p us microseconds off line for RCU, so a publication never waits for a sleeper.
 * @return the TSC cycles it took. */
static uint64_t idle_sleep(struct dp_worker *w, uint32_t us)
{
	uint64_t t0 = rte_rdtsc();

	rte_rcu_qsbr_thread_offline(w->dp->rcu, w->id);
	rte_delay_us_sleep(us);
	rte_rcu_qsbr_thread_online(w->dp->rcu, w->id);
	return rte_rdtsc() - t0;
}

/* idle = adaptive: what the loop knows of its own traffic and wake-ups. */
struct idle_adapt {
	uint64_t last_busy; /* w->now of the last poll that found work */
	uint64_t wake_tsc;  /* moving average (1/8) of a sleep's overshoot, TSC cycles */
	uint64_t us_tsc;    /* TSC cycles per microsecond */
};

/*
 * One empty poll in idle = adaptive. Spin for twice the measured wake-up overshoot after the
 * last packet: spinning as long as a wake-up costs stays within 2x of the best choice made
 * knowing when the next packet comes (spin-then-block), so traffic that is recent (a reply
 * due from a node) is caught spinning. Past that, sleep an eighth of the time idle so far
 * (1 us to backoff_us): a sleep delays the next packet by at most that share of the quiet
 * gap before it, plus the overshoot, which every sleep measures. The spin window is capped
 * at 2 x backoff_us, so a descheduled sleep (a busy host) cannot turn the mode into polling.
 */
static void idle_adaptive(struct dp_worker *w, struct idle_adapt *a)
{
	uint64_t idle = w->now - a->last_busy, cap = (uint64_t)w->backoff_us * a->us_tsc;
	uint64_t us, took, want;

	if (idle < 2 * RTE_MIN(a->wake_tsc, cap))
		return;
	us = RTE_MIN(idle / 8 / a->us_tsc, (uint64_t)w->backoff_us);
	us = us != 0 ? us : 1;
	took = idle_sleep(w, (uint32_t)us);
	want = us * a->us_tsc;
	a->wake_tsc = a->wake_tsc - a->wake_tsc / 8 + (took > want ? took - want : 0) / 8;
}

int dp_worker_run(void *arg)
{
	struct dp_worker *w = arg;
	struct dp *dp = w->dp;
	uint64_t empty = 0;
	struct idle_adapt ad = {.us_tsc = RTE_MAX(rte_get_tsc_hz() / 1000000, (uint64_t)1)};

	ad.wake_tsc = 10 * ad.us_tsc; /* a first guess; the sleeps correct it */
	/* Sleeps end within 1 ns of their deadline instead of the default 50 us slack: the
	 * adaptive mode's short sleeps are meant as asked. */
	if (w->idle == DP_IDLE_ADAPTIVE)
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	rte_rcu_qsbr_thread_register(dp->rcu, w->id);
	rte_rcu_qsbr_thread_online(dp->rcu, w->id);
	while (!atomic_load_explicit(&dp->stop, memory_order_relaxed)) {
		unsigned int n = dp_worker_poll(w);

		/* Nothing of the previous view is used past this point. */
		rte_rcu_qsbr_quiescent(dp->rcu, w->id);
		if (n != 0) {
			empty = 0;
			ad.last_busy = w->now;
			continue;
		}
		if (w->idle == DP_IDLE_BACKOFF && ++empty >= w->backoff_after)
			idle_sleep(w, w->backoff_us);
		else if (w->idle == DP_IDLE_ADAPTIVE)
			idle_adaptive(w, &ad);
	}
	rte_rcu_qsbr_thread_offline(dp->rcu, w->id);
	rte_rcu_qsbr_thread_unregister(dp->rcu, w->id);
	return 0;
}
