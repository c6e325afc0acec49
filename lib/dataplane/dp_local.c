/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the router answers itself, on the worker that received the packet: ARP for its own
 * address (and node MACs from the replies to the router's own ARP requests), ICMP echo, their
 * IPv6 counterparts (Neighbor Solicitations for address6 answered, next hops' MACs from the
 * advertisements answering the router's own solicitations, ICMPv6 echo), and the
 * memcached replies it builds (version, lone no-ops, refusals). Replies are built in the received
 * mbuf. Plus the ARP requests the control lcore sends (dp_arp_request, control lcore). Called by
 * the worker loop and the multi-gets; calls only the TX layer (dp_tx.h).
 */

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>

#include "dp_tx.h"

/* A Neighbor Advertisement with the target link-layer address option; a Neighbor Solicitation
 * with the source's: the ICMPv6 bytes. */
#define DP_NA_LEN 32
#define DP_NS_LEN 32

/* What `version` answers. */
#define DP_VERSION_TEXT "1.6.0-ringway"

/* Swap Ethernet addresses towards the sender: dst = old src, src = router. */
static void eth_back(struct dp_worker *w, struct rte_ether_hdr *eth)
{
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&w->router_mac, &eth->src_addr);
}

/* @p e takes @p word (DP_MAC_VALID | MAC) when the router's question for its next hop is
 * still outstanding; the first answer closes the window (swap to 0), so one question teaches
 * at most one MAC. Shared by ARP replies and Neighbor Advertisements. */
static bool learn_mac(struct dp_worker *w, struct dp_endpoint *e, uint64_t word)
{
	uint64_t until = atomic_load_explicit(&e->arp_until, memory_order_relaxed), old;

	if (until == 0 || w->now > until ||
	    !atomic_compare_exchange_strong_explicit(&e->arp_until, &until, 0, memory_order_relaxed,
						     memory_order_relaxed))
		return false;
	old = atomic_exchange_explicit(&e->mac, word, memory_order_relaxed);
	if ((old & DP_MAC_VALID) && old != word) {
		atomic_fetch_add_explicit(&e->mac_changes, 1, memory_order_relaxed);
		w->ctr[DP_CTR_ARP_MAC_CHANGED]++;
	}
	atomic_fetch_add_explicit(&e->arp_seen, 1, memory_order_relaxed);
	return true;
}

/*
 * Node MACs come only from answers to the router's own questions: an ARP reply (op 2),
 * on the VLAN the control lcore's request went out on (the port's, else untagged), to the router's
 * MAC and address, from the address of a node that is not static, while the control lcore's request
 * for it is outstanding (arp_until); the first such reply takes the request (swap to 0), so
 * one request teaches at most one MAC and a node's MAC moves at most once per arp_retry_ms.
 * A gratuitous ARP or an unsolicited reply claiming a node's address moves nothing. The
 * address asked for is the endpoint's next hop (nh_ip: the node, or its gateway), so one
 * gateway's reply teaches every node behind it whose window is open.
 * @return the non-static endpoints whose next hop is the sender's address (0: not a node's
 * address); *learned: how many of them took this reply.
 */
static unsigned int learn_solicited(struct dp_worker *w, const struct dp_pkt *pk,
				    const struct rte_arp_hdr *a, unsigned int *learned)
{
	const struct rte_arp_ipv4 *d = &a->arp_data;
	struct dp *dp = w->dp;
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_acquire);
	/* The VLAN the request went out on: the port's (handle_packet checked it), else none. */
	bool answer = a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY) &&
		      (w->vlan_want != DP_VLAN_ANY || !pk->vlan) &&
		      rte_is_same_ether_addr(&pk->eth->dst_addr, &w->router_mac) &&
		      rte_is_same_ether_addr(&d->arp_tha, &w->router_mac) &&
		      d->arp_tip == w->router_ip && rte_is_unicast_ether_addr(&d->arp_sha) &&
		      !rte_is_zero_ether_addr(&d->arp_sha);
	uint64_t word = DP_MAC_VALID;
	unsigned int nodes = 0;

	*learned = 0;
	if (d->arp_sip == 0)
		return 0;
	memcpy(&word, &d->arp_sha, 6);
	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &w->eps[i];

		if (atomic_load_explicit(&e->nh_ip, memory_order_relaxed) != d->arp_sip ||
		    e->mac_static)
			continue;
		nodes++;
		if (answer && learn_mac(w, e, word))
			(*learned)++;
	}
	return nodes;
}

void dp_local_arp(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)((uint8_t *)pk->eth + pk->l2_len);
	struct rte_arp_ipv4 *d = &a->arp_data;
	unsigned int nodes, learned;
	uint32_t sip;

	/* No IPv4 address (IPv6-only port): nothing to answer, nothing was asked. */
	if (w->router_ip == 0 || rte_pktmbuf_data_len(m) < pk->l2_len + sizeof(*a) ||
	    a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || a->arp_hlen != 6 ||
	    a->arp_plen != 4)
		return dp_count_drop(w, m, DP_DROP_BAD_ARP);
	nodes = learn_solicited(w, pk, a, &learned);
	if (learned > 0) {
		/* An answer that taught us a MAC is absorbed: handled by the router. */
		w->ctr[DP_CTR_ARP_LEARNED]++;
		w->ctr[DP_CTR_ANSWERED]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) || d->arp_tip != w->router_ip)
		return dp_count_drop(w, m, nodes > 0 ? DP_DROP_ARP_UNSOLICITED : DP_DROP_BAD_ARP);
	/* Who asks for the router's address is answered, and taught nothing. */
	sip = d->arp_sip;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&d->arp_sha, &d->arp_tha);
	d->arp_tip = sip;
	rte_ether_addr_copy(&w->router_mac, &d->arp_sha);
	d->arp_sip = w->router_ip;
	eth_back(w, pk->eth);
	w->ctr[DP_CTR_ARP_REPLIED]++;
	dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
}

/* Finish a reply built in place: IPv4 back to the sender with @p l4_len bytes after the IP
 * header, fresh header checksum. */
static void ip_back(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t l4_len)
{
	struct rte_ipv4_hdr *ip = pk->ip;
	uint32_t len = pk->l2_len + pk->l3_len + l4_len;

	ip->dst_addr = ip->src_addr;
	ip->src_addr = w->router_ip;
	ip->time_to_live = 64;
	ip->fragment_offset = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(pk->l3_len + l4_len));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	eth_back(w, pk->eth);
}

/* Finish a reply built in place: IPv6 back to the sender (extension headers left out) with
 * @p l4_len bytes of protocol @p proto after the 40-byte header; false without headroom.
 * The upper-layer checksum is the caller's. */
static bool ip6_back(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t l4_len,
		     uint8_t proto)
{
	struct rte_ipv6_hdr *ip6;
	uint32_t len;

	if (pk->l3_len != sizeof(*ip6) && !dp_l3_rebuild(m, pk, true))
		return false;
	ip6 = pk->ip6;
	memcpy(&ip6->dst_addr, &ip6->src_addr, 16);
	memcpy(&ip6->src_addr, w->router_ip6, 16);
	ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
	ip6->proto = proto;
	ip6->hop_limits = proto == IPPROTO_ICMPV6 && l4_len == DP_NA_LEN ? 255 : 64;
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)l4_len);
	len = pk->l2_len + (uint32_t)sizeof(*ip6) + l4_len;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	eth_back(w, pk->eth);
	return true;
}

void dp_local_icmp6_echo(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	uint32_t ilen =
		sizeof(struct rte_ipv6_hdr) + rte_be_to_cpu_16(pk->ip6->payload_len) - pk->l3_len;
	uint8_t *ic;

	if (!ip6_back(w, m, pk, ilen, IPPROTO_ICMPV6))
		return dp_count_drop(w, m, DP_DROP_TRUNC_ETH);
	ic = (uint8_t *)(pk->ip6 + 1);
	ic[0] = 129; /* echo reply; identifier, sequence and data stay */
	ic[2] = ic[3] = 0;
	uint16_t c = dp_ip6_l4_cksum((const uint8_t *)&pk->ip6->src_addr,
				     (const uint8_t *)&pk->ip6->dst_addr, ic, ilen, IPPROTO_ICMPV6);

	memcpy(ic + 2, &c, 2);
	w->ctr[DP_CTR_ICMP_ECHOED]++;
	dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
}

/* ND options of a message (@p ilen bytes at @p ic, options from @p at): each a whole number of
 * 8-byte units, never 0, within the message. *lla: the data of the first option of type
 * @p want (source / target link-layer address), NULL if none. false when malformed. */
static bool nd_options(const uint8_t *ic, uint32_t ilen, uint32_t at, uint8_t want,
		       const uint8_t **lla)
{
	*lla = NULL;
	while (at < ilen) {
		uint32_t olen;

		if (at + 2 > ilen)
			return false;
		olen = (uint32_t)ic[at + 1] * 8;
		if (olen == 0 || at + olen > ilen)
			return false;
		if (ic[at] == want && olen >= 8 && *lla == NULL)
			*lla = ic + at + 2;
		at += olen;
	}
	return true;
}

/*
 * A Neighbor Advertisement teaches a MAC as an ARP reply does (learn_solicited): solicited, to
 * the router's MAC and address6, on the VLAN its NS went out on, with a unicast target
 * link-layer address, for the next hop of non-static IPv6 endpoints whose NS window is open;
 * the first such answer takes the window. @return the endpoints that learned it.
 */
static unsigned int learn_na(struct dp_worker *w, const struct dp_pkt *pk, const uint8_t *ic,
			     const uint8_t *tlla)
{
	struct dp *dp = w->dp;
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_acquire);
	bool answer = (ic[4] & 0x40) && tlla != NULL &&
		      (w->vlan_want != DP_VLAN_ANY || !pk->vlan) &&
		      rte_is_same_ether_addr(&pk->eth->dst_addr, &w->router_mac) &&
		      memcmp(&pk->ip6->dst_addr, w->router_ip6, 16) == 0 &&
		      rte_is_unicast_ether_addr((const struct rte_ether_addr *)tlla) &&
		      !rte_is_zero_ether_addr((const struct rte_ether_addr *)tlla);
	uint64_t word = DP_MAC_VALID;
	unsigned int learned = 0;

	if (!answer)
		return 0;
	memcpy(&word, tlla, 6);
	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &w->eps[i];

		/* The fold first (atomic): dp_set_routes changes nh_ip6 only with no window
		 * open, so a torn compare can count, never learn. */
		if (!e->v6 || e->mac_static ||
		    atomic_load_explicit(&e->nh_ip, memory_order_relaxed) != dp_fold6(ic + 8) ||
		    memcmp(e->nh_ip6, ic + 8, 16) != 0)
			continue;
		if (learn_mac(w, e, word))
			learned++;
	}
	return learned;
}

void dp_local_nd(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	uint8_t *ic = (uint8_t *)pk->ip6 + pk->l3_len;
	uint32_t ilen =
		sizeof(struct rte_ipv6_hdr) + rte_be_to_cpu_16(pk->ip6->payload_len) - pk->l3_len;
	static const uint8_t unspec[16];
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	const uint8_t *lla;
	bool dad;
	uint16_t c;

	/* RFC 4861 7.1.1 / 7.1.2: hop limit 255 (never forwarded), code 0, 24 bytes. */
	if (pk->ip6->hop_limits != 255 || ic[1] != 0 || ilen < 24 ||
	    !nd_options(ic, ilen, 24, ic[0] == 136 ? 2 : 1, &lla))
		return dp_count_drop(w, m, DP_DROP_BAD_ND);
	if (ic[0] == 136) {
		if (learn_na(w, pk, ic, lla) == 0)
			return dp_count_drop(w, m, DP_DROP_ND_UNSOLICITED);
		/* An answer that taught us a MAC is absorbed: handled by the router. */
		w->ctr[DP_CTR_ND_LEARNED]++;
		w->ctr[DP_CTR_ANSWERED]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* A Neighbor Solicitation for address6. Who asks is answered, and taught nothing. One
	 * from :: is duplicate address detection: valid only to the solicited-node group and
	 * without a source link-layer address (RFC 4861 7.1.1); the router defends its address
	 * (7.2.4) with an advertisement to all nodes, ff02::1, solicited flag clear. */
	dad = memcmp(&pk->ip6->src_addr, unspec, 16) == 0;
	if (memcmp(ic + 8, w->router_ip6, 16) != 0 ||
	    (dad && (pk->ip6->dst_addr[0] != 0xff || lla != NULL)))
		return dp_count_drop(w, m, DP_DROP_BAD_ND);
	if (!ip6_back(w, m, pk, DP_NA_LEN, IPPROTO_ICMPV6))
		return dp_count_drop(w, m, DP_DROP_TRUNC_ETH);
	if (dad) {
		memcpy(&pk->ip6->dst_addr, all_nodes, 16);
		memcpy(&pk->eth->dst_addr, all_nodes_mac, 6);
	}
	ic = (uint8_t *)(pk->ip6 + 1);
	memset(ic, 0, DP_NA_LEN);
	ic[0] = 136;
	ic[4] = dad ? 0x20 : 0x60; /* override; solicited unless it defends against DAD */
	memcpy(ic + 8, w->router_ip6, 16);
	ic[24] = 2; /* target link-layer address, one unit */
	ic[25] = 1;
	memcpy(ic + 26, &w->router_mac, 6);
	c = dp_ip6_l4_cksum((const uint8_t *)&pk->ip6->src_addr,
			    (const uint8_t *)&pk->ip6->dst_addr, ic, DP_NA_LEN, IPPROTO_ICMPV6);
	memcpy(ic + 2, &c, 2);
	w->ctr[DP_CTR_ND_REPLIED]++;
	dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
}

void dp_local_icmp(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk)
{
	uint32_t tot = rte_be_to_cpu_16(pk->ip->total_length);
	uint32_t ilen = tot - pk->l3_len;
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)((uint8_t *)pk->ip + pk->l3_len);
	uint16_t old, new;

	if (ilen < sizeof(*ic) || ic->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || ic->icmp_code != 0 ||
	    rte_raw_cksum(ic, ilen) != 0xffff)
		return dp_count_drop(w, m, DP_DROP_BAD_ICMP);
	memcpy(&old, ic, 2);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	memcpy(&new, ic, 2);
	ic->icmp_cksum = dp_csum_replace2(ic->icmp_cksum, old, new);
	ip_back(w, m, pk, ilen);
	w->ctr[DP_CTR_ICMP_ECHOED]++;
	dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
}

/* Append a binary response (header and @p body) for request @p rq to @p out. */
static size_t bin_response(uint8_t *out, size_t room, const struct mc_request *rq, uint16_t status,
			   const char *body)
{
	size_t blen = body ? strlen(body) : 0;

	if (room < MC_BIN_HDR_LEN + blen)
		return 0;
	mc_bin_response_write(out, rq->opcode, status, (uint32_t)blen, rq->opaque);
	memcpy(out + MC_BIN_HDR_LEN, body, blen);
	return MC_BIN_HDR_LEN + blen;
}

/* The router's own answer to each request of a keyless datagram (version, mn, noop). */
static size_t local_answers(const struct mc_requests *r, uint8_t *out, size_t room)
{
	size_t used = 0;

	for (uint16_t i = 0; i < r->nreq; i++) {
		const struct mc_request *rq = &r->req[i];
		size_t n;

		if (rq->proto == MC_PROTO_BINARY)
			n = bin_response(out + used, room - used, rq, MC_BIN_STATUS_OK,
					 rq->cmd == MC_CMD_VERSION ? DP_VERSION_TEXT : NULL);
		else {
			int k = snprintf((char *)out + used, room - used, "%s\r\n",
					 rq->cmd == MC_CMD_VERSION ? "VERSION " DP_VERSION_TEXT
								   : "MN");

			n = k > 0 && (size_t)k < room - used ? (size_t)k : 0;
		}
		if (n == 0)
			break;
		used += n;
	}
	return used;
}

void dp_local_mc_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
		       const struct mc_requests *r, const char *why, bool server_error,
		       uint16_t status, uint16_t req_idx)
{
	uint8_t *body = pk->payload + MC_FRAME_HDR_LEN;
	size_t head = (size_t)(body - (uint8_t *)m->buf_addr);
	size_t room = m->buf_len > head ? m->buf_len - head : 0;
	size_t blen = 0;
	uint32_t ulen;

	if (room > MC_UDP_PAYLOAD_MAX - MC_FRAME_HDR_LEN)
		room = MC_UDP_PAYLOAD_MAX - MC_FRAME_HDR_LEN;
	if (why == NULL)
		blen = local_answers(r, body, room);
	else if (r->req[req_idx].proto == MC_PROTO_BINARY)
		blen = bin_response(body, room, &r->req[req_idx], status, why);
	else {
		int k = snprintf((char *)body, room, "%s %s\r\n",
				 server_error ? "SERVER_ERROR" : "CLIENT_ERROR", why);

		blen = k > 0 && (size_t)k < room ? (size_t)k : 0;
	}
	/* Frame header: the client's request id stays, one datagram. */
	pk->payload[2] = 0;
	pk->payload[3] = 0;
	pk->payload[4] = 0;
	pk->payload[5] = 1;
	pk->payload[6] = 0;
	pk->payload[7] = 0;
	ulen = (uint32_t)(sizeof(struct rte_udp_hdr) + MC_FRAME_HDR_LEN + blen);
	uint16_t p = pk->udp->src_port;
	pk->udp->src_port = pk->udp->dst_port;
	pk->udp->dst_port = p;
	pk->udp->dgram_len = rte_cpu_to_be_16((uint16_t)ulen);
	if (pk->v6) {
		if (!ip6_back(w, m, pk, ulen, IPPROTO_UDP))
			return dp_count_drop(w, m, DP_DROP_TRUNC_ETH);
		if (w->tx_offload) {
			pk->udp->dgram_cksum = 0;
			dp_tx_cksum_offload6(m, pk->ip6, pk->udp, pk->l2_len);
		} else {
			pk->udp->dgram_cksum = 0;
			pk->udp->dgram_cksum = dp_ip6_l4_cksum((const uint8_t *)&pk->ip6->src_addr,
							       (const uint8_t *)&pk->ip6->dst_addr,
							       pk->udp, ulen, IPPROTO_UDP);
		}
		return dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
	}
	ip_back(w, m, pk, ulen);
	pk->udp->dgram_cksum = 0;
	if (w->tx_offload)
		dp_tx_cksum_offload(m, pk->ip, pk->udp, pk->l2_len, pk->l3_len);
	else
		pk->udp->dgram_cksum = rte_ipv4_udptcp_cksum(pk->ip, pk->udp);
	dp_tx_push(w, m, (enum dp_tx_tag)w->answer_tag, 0);
}

struct rte_mbuf *dp_arp_request(const struct dp *dp, uint32_t target_ip)
{
	/* No IPv4 address on the node side (IPv6-only): the router never ARPs (from 0.0.0.0). */
	struct rte_mbuf *m = dp->cfg.pool && dp->cfg.node_router_ip != 0
				     ? rte_pktmbuf_alloc(dp->cfg.pool)
				     : NULL;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;
	bool tag = dp->cfg.node_vlan_fixed && dp->cfg.node_vlan_id != 0;
	const uint32_t len =
		RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN + (tag ? sizeof(struct rte_vlan_hdr) : 0);

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, len);
	if (eth == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(eth, 0, len);
	memset(&eth->dst_addr, 0xff, sizeof(eth->dst_addr));
	memcpy(&eth->src_addr, dp->cfg.node_router_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a = (struct rte_arp_hdr *)(eth + 1);
	if (tag) { /* on the port's VLAN */
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(dp->cfg.node_vlan_id);
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
		a = (struct rte_arp_hdr *)(vh + 1);
	}
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	memcpy(&a->arp_data.arp_sha, dp->cfg.node_router_mac, 6);
	a->arp_data.arp_sip = dp->cfg.node_router_ip;
	a->arp_data.arp_tip = target_ip;
	return m;
}

struct rte_mbuf *dp_ns_request(const struct dp *dp, const uint8_t target[16])
{
	struct rte_mbuf *m = dp->cfg.pool ? rte_pktmbuf_alloc(dp->cfg.pool) : NULL;
	bool tag = dp->cfg.node_vlan_fixed && dp->cfg.node_vlan_id != 0;
	uint32_t l2 = sizeof(struct rte_ether_hdr) + (tag ? sizeof(struct rte_vlan_hdr) : 0);
	const uint32_t len = l2 + sizeof(struct rte_ipv6_hdr) + DP_NS_LEN;
	static const uint8_t sn[13] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff};
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip6;
	uint8_t *ic;
	uint16_t c;

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)len);
	if (eth == NULL || !dp_ip6_set(dp->cfg.node_router_ip6)) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(eth, 0, len);
	dp_sn_mac(target, &eth->dst_addr);
	memcpy(&eth->src_addr, dp->cfg.node_router_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	if (tag) { /* on the port's VLAN */
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(dp->cfg.node_vlan_id);
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	}
	ip6 = (struct rte_ipv6_hdr *)((uint8_t *)eth + l2);
	ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
	ip6->payload_len = rte_cpu_to_be_16(DP_NS_LEN);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = 255;
	memcpy(&ip6->src_addr, dp->cfg.node_router_ip6, 16);
	memcpy(&ip6->dst_addr, sn, 13); /* the target's solicited-node group */
	memcpy((uint8_t *)&ip6->dst_addr + 13, target + 13, 3);
	ic = (uint8_t *)(ip6 + 1);
	ic[0] = 135;
	memcpy(ic + 8, target, 16);
	ic[24] = 1; /* source link-layer address, one unit */
	ic[25] = 1;
	memcpy(ic + 26, dp->cfg.node_router_mac, 6);
	c = dp_ip6_l4_cksum((const uint8_t *)&ip6->src_addr, (const uint8_t *)&ip6->dst_addr, ic,
			    DP_NS_LEN, IPPROTO_ICMPV6);
	memcpy(ic + 2, &c, 2);
	return m;
}
