/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The out-of-line part of the TX/slot layer (dp_tx.h): flushing the TX buffer with the
 * accounting of each packet's outcome, drops, and whole UDP datagrams the router builds
 * (multi-get sub-requests and merged replies). Calls nothing of the files above it.
 */

#include <string.h>

#include <rte_ethdev.h>

#include "dp_tx.h"

/* dp_tx.h. Hot keys' fetches, fills and deletes (dp_hot.c) and replicated writes' copies
 * (dp_repl.c) are built here. */
struct rte_mbuf *dp_tx_datagram(struct dp_worker *w, uint32_t ep, bool vlan, uint16_t tci,
				uint16_t sport, uint16_t reqid, const uint8_t *body, uint32_t len)
{
	uint64_t mac = atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed);
	uint16_t off;
	struct mc_frame f = {reqid, 0, 1, 0};
	struct rte_mbuf *o;
	uint8_t dst[6];

	if (w->node_vlan_fixed) { /* the node port's own VLAN, not the client's */
		vlan = w->node_vlan_tagged;
		tci = w->node_vlan_tci;
	}
	off = (uint16_t)(sizeof(struct rte_ether_hdr) + (vlan ? sizeof(struct rte_vlan_hdr) : 0) +
			 sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr));
	if (!(mac & DP_MAC_VALID) || MC_FRAME_HDR_LEN + len > 1472u)
		return NULL;
	o = rte_pktmbuf_alloc(w->pool);
	if (o == NULL)
		return NULL;
	if (off + MC_FRAME_HDR_LEN + len > rte_pktmbuf_tailroom(o)) {
		rte_pktmbuf_free(o);
		return NULL;
	}
	mc_frame_write(rte_pktmbuf_mtod_offset(o, uint8_t *, off), &f);
	memcpy(rte_pktmbuf_mtod_offset(o, uint8_t *, off + MC_FRAME_HDR_LEN), body, len);
	o->data_len = (uint16_t)(off + MC_FRAME_HDR_LEN + len);
	o->pkt_len = o->data_len;
	memcpy(dst, &mac, 6); /* little-endian: bytes 0..5 of the word */
	if (!dp_udp_build_ep(w, o, dst, vlan, tci, ep, sport, rte_cpu_to_be_16(w->eps[ep].port))) {
		rte_pktmbuf_free(o);
		return NULL;
	}
	return o;
}

/* dataplane_priv.h (dp_failover.c's record, kept here: a refused replica copy records its
 * keys too, and this layer calls nothing above it). */
void dp_fo_dirty(struct dp_worker *w, uint32_t ep, uint32_t at, const uint8_t *key, size_t len)
{
	uint32_t tail = atomic_load_explicit(&w->dirty_tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&w->dirty_head, memory_order_acquire);
	struct dp_dirty *d;

	if (tail - head >= DP_DIRTY_RING || len > MC_KEY_MAX) {
		w->node_lost[ep]++;
		w->ctr[DP_CTR_DIRTY_LOST]++;
		return;
	}
	d = &w->dirty[tail & (DP_DIRTY_RING - 1)];
	d->ep = ep;
	d->at = at;
	d->len = (uint8_t)len;
	memcpy(d->key, key, len);
	/* Release: the entry is complete before the control lcore can see the new tail. */
	atomic_store_explicit(&w->dirty_tail, tail + 1, memory_order_release);
	w->ctr[DP_CTR_DIRTY_KEYS]++;
}

void dp_count_drop(struct dp_worker *w, struct rte_mbuf *m, enum dp_drop why)
{
	w->drop[why]++;
	w->ctr[DP_CTR_DROPPED]++;
	rte_pktmbuf_free(m);
}

/* Backward-shift deletion (linear probing without tombstones): every later entry of the
 * probe run whose home is not in (i, j] moves into the hole, which moves on to it. */
void dp_client_remove(struct dp_worker *w, uint32_t i)
{
	uint32_t mask = w->client_mask, j = i;

	for (;;) {
		j = (j + 1) & mask;
		if (w->clients[j].n == 0)
			break;
		uint32_t k = (uint32_t)(((uint64_t)w->clients[j].ip * w->client_seed) >> 32) & mask;

		/* k cyclically in (i, j]: the entry stays reachable where it is */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		w->clients[i] = w->clients[j];
		i = j;
	}
	w->clients[i].n = 0;
}

/* Count the outcome of a packet the NIC took, other than a forwarded request or a returned
 * reply (count_range() counts those two itself). */
static inline void count_sent(struct dp_worker *w, enum dp_tx_tag tag, uint32_t ep)
{
	switch (tag) {
	case DP_TX_FORWARDED:
	case DP_TX_RETURNED:
		break; /* never here: count_range() */
	case DP_TX_ANSWERED:
	case DP_TX_ANSWERED_NODE:
		w->ctr[DP_CTR_ANSWERED]++;
		break;
	case DP_TX_CTL:
		w->ctr[DP_CTR_CTL_TX]++;
		break;
	case DP_TX_MGET_SUB:
		w->ctr[DP_CTR_MGET_SUBREQ]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_MGET_OUT:
		w->ctr[DP_CTR_MGET_DATAGRAMS]++;
		break;
	case DP_TX_WARM_GET:
		w->ctr[DP_CTR_WARM_REQUESTS]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_WARM_FILL:
		w->ctr[DP_CTR_WARM_FILLS]++;
		break;
	case DP_TX_WARM_DELETE:
		w->ctr[DP_CTR_WARM_DELETES]++;
		break;
	case DP_TX_MOVED_DELETE:
		w->ctr[DP_CTR_MOVED_DELETES]++;
		break;
	case DP_TX_HOT_FETCH:
		w->ctr[DP_CTR_HOT_FETCHES]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_HOT_FILL:
		w->ctr[DP_CTR_HOT_FILLS]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_HOT_INVAL:
		w->ctr[DP_CTR_HOT_INVALIDATIONS]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_REPL_COPY:
		w->ctr[DP_CTR_REPL_COPIES]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_REPL_DELETE:
		w->ctr[DP_CTR_REPL_DELETES]++;
		w->node_fwd[ep]++;
		break;
	case DP_TX_FRAG_CLIENT:
	case DP_TX_FRAG_NODE:
		w->ctr[DP_CTR_IP_FRAG_SENT]++;
		break;
	}
}

/* Count the outcomes of TX entries [lo, hi), which the NIC took: forwarded requests and
 * returned replies (nearly every entry; their tags are 0 and 1, an index here) with the
 * worker-wide counts summed here and added once, the rest by count_sent(). */
static inline void count_range(struct dp_worker *w, uint16_t lo, uint16_t hi)
{
	uint64_t *node[2] = {w->node_fwd, w->node_ret}, n[2] = {0, 0};

	RTE_BUILD_BUG_ON(DP_TX_FORWARDED != 0 || DP_TX_RETURNED != 1);
	for (uint16_t i = lo; i < hi; i++) {
		uint8_t tag = w->tx_tag[i];

		if (likely(tag <= DP_TX_RETURNED)) {
			node[tag][w->tx_ep[i]]++;
			n[tag]++;
		} else {
			count_sent(w, (enum dp_tx_tag)tag, w->tx_ep[i]);
		}
	}
	w->ctr[DP_CTR_FORWARDED] += n[DP_TX_FORWARDED];
	w->ctr[DP_CTR_RETURNED] += n[DP_TX_RETURNED];
}

/* Send TX entries [lo, hi) on @p port: the queue gets one retry; what it still refuses is
 * freed here. */
static void flush_range(struct dp_worker *w, uint16_t port, uint16_t lo, uint16_t hi)
{
	uint16_t n = hi - lo, sent, i;

	if (n == 0)
		return;
	if (likely(port == w->port_id ? w->port_up : w->node_port_up)) {
		sent = rte_eth_tx_burst(port, w->queue_id, w->tx + lo, n);
		if (unlikely(sent < n))
			sent += rte_eth_tx_burst(port, w->queue_id, w->tx + lo + sent, n - sent);
	} else {
		sent = 0; /* link_gated, and the link is down: refused as by a full queue */
	}
	count_range(w, lo, lo + sent);
	for (i = lo + sent; i < hi; i++)
		dp_tx_refuse(w, w->tx[i], w->tx_tag[i], w->tx_ep[i], w->tx_slot[i]);
}

/* A copy (or delete) of a write to a replica, of a replicated pool or of a hot key, that the
 * TX queue refused: the replica misses the write, so its keys are recorded for it as for a
 * down node (dp_fo_dirty: deleted there at once while it serves, before it serves again if it
 * is down; each counted in @p missed), then freed. The datagram is the router's own
 * (dp_tx_datagram: l2_len / l3_len set), parsed again for its keys. Cold: out of line, its
 * parse on the stack. */
static __rte_noinline void copy_refused(struct dp_worker *w, struct rte_mbuf *m, uint32_t ep,
					enum dp_counter missed)
{
	uint32_t off = (uint32_t)(m->l2_len + m->l3_len + sizeof(struct rte_udp_hdr));
	const uint8_t *p = rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	struct mc_requests r;
	uint8_t key[MC_KEY_MAX];

	if (rte_pktmbuf_data_len(m) > off &&
	    mc_parse_datagram_flags(p, rte_pktmbuf_data_len(m) - off, MC_PARSE_CTL_KEYS, &r) ==
		    MC_OK)
		for (uint16_t k = 0; k < r.nkeys; k++)
			if (r.req[r.keys[k].req].kind != MC_KIND_READ) {
				w->ctr[missed]++;
				dp_fo_dirty(w, ep, UINT32_MAX, key, mc_key_decode(p, &r.keys[k], key));
			}
	rte_pktmbuf_free(m);
}

/* What a TX queue refused (or the router could not send), by its tag: freed, counted once. */
void dp_tx_refuse(struct dp_worker *w, struct rte_mbuf *m, uint8_t tag, uint32_t ep,
		  uint32_t slot)
{
	switch (tag) {
	case DP_TX_CTL:
		rte_pktmbuf_free(m);
		break;
	case DP_TX_MGET_SUB: /* built here, not received: no drop in the identity */
	case DP_TX_MGET_OUT:
		w->ctr[DP_CTR_MGET_TX_FAILED]++;
		rte_pktmbuf_free(m);
		break;
	case DP_TX_WARM_GET: /* built here: no drop; its slot is free now */
		dp_slot_free(w, slot);
		/* fall through */
	case DP_TX_WARM_FILL:
	case DP_TX_WARM_DELETE:
	case DP_TX_MOVED_DELETE:
		w->ctr[DP_CTR_WARM_TX_FAILED]++;
		rte_pktmbuf_free(m);
		break;
	case DP_TX_FRAG_CLIENT: /* built here: its datagram's last fragment is counted */
	case DP_TX_FRAG_NODE:
		w->ctr[DP_CTR_IP_FRAG_TX_FAILED]++;
		rte_pktmbuf_free(m);
		break;
	case DP_TX_HOT_FETCH: /* its slot times out: the client gets no answer */
	case DP_TX_HOT_FILL:
		w->ctr[DP_CTR_HOT_TX_FAILED]++;
		rte_pktmbuf_free(m);
		break;
	case DP_TX_HOT_INVAL: /* a replica's copy or delete of a write: its key recorded */
		w->ctr[DP_CTR_HOT_TX_FAILED]++;
		copy_refused(w, m, ep, DP_CTR_HOT_MISSED);
		break;
	case DP_TX_REPL_COPY:
	case DP_TX_REPL_DELETE:
		w->ctr[DP_CTR_REPL_TX_FAILED]++;
		copy_refused(w, m, ep, DP_CTR_REPL_MISSED);
		break;
	case DP_TX_FORWARDED:
		/* No reply can come: the slot is free now, not at its timeout. */
		if (slot != DP_NO_SLOT) {
			w->ctr[DP_CTR_SLOTS_TX_FREED]++;
			dp_slot_free(w, slot);
		}
		dp_count_drop(w, m, DP_DROP_TX_FULL);
		break;
	default:
		dp_count_drop(w, m, DP_DROP_TX_FULL);
	}
}

/* Two ports: of the @p n buffered entries, those for the node port first (a stable partition, so
 * each port's packets keep their order), returns how many. */
static uint16_t partition_node_first(struct dp_worker *w, uint16_t n)
{
	struct rte_mbuf *tx[DP_TX_CAP];
	uint8_t tag[DP_TX_CAP];
	uint32_t ep[DP_TX_CAP], slot[DP_TX_CAP];
	uint16_t k = 0, c = 0;

	for (uint16_t i = 0; i < n; i++) {
		if (!dp_tx_to_node(w->tx_tag[i])) {
			tx[c] = w->tx[i];
			tag[c] = w->tx_tag[i];
			ep[c] = w->tx_ep[i];
			slot[c++] = w->tx_slot[i];
			continue;
		}
		w->tx[k] = w->tx[i];
		w->tx_tag[k] = w->tx_tag[i];
		w->tx_ep[k] = w->tx_ep[i];
		w->tx_slot[k++] = w->tx_slot[i];
	}
	memcpy(w->tx + k, tx, c * sizeof(tx[0]));
	memcpy(w->tx_tag + k, tag, c * sizeof(tag[0]));
	memcpy(w->tx_ep + k, ep, c * sizeof(ep[0]));
	memcpy(w->tx_slot + k, slot, c * sizeof(slot[0]));
	return k;
}

void dp_tx_flush(struct dp_worker *w)
{
	uint16_t n = w->ntx, k;

	if (n == 0)
		return;
	w->ntx = 0;
	if (likely(!w->two_ports))
		return flush_range(w, w->port_id, 0, n);
	k = partition_node_first(w, n);
	flush_range(w, w->node_port_id, 0, k);
	flush_range(w, w->port_id, k, n);
}

uint16_t dp_tx_offer(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent;

	dp_tx_flush(w);
	sent = n != 0 && likely(w->port_up) ? rte_eth_tx_burst(w->port_id, w->queue_id, pkts, n)
					    : 0;
	w->ctr[DP_CTR_MGET_DATAGRAMS] += sent;
	return sent;
}

void dp_udp_build(struct dp_worker *w, struct rte_mbuf *m, bool to_node, const uint8_t dst_mac[6],
		  bool vlan, uint16_t vlan_tci, uint32_t dip, uint16_t sport, uint16_t dport)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	uint16_t l2 = sizeof(*eth) + (vlan ? sizeof(struct rte_vlan_hdr) : 0);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)((uint8_t *)eth + l2);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t ulen = (uint16_t)(rte_pktmbuf_data_len(m) - l2 - sizeof(*ip));

	memcpy(&eth->dst_addr, dst_mac, 6);
	rte_ether_addr_copy(to_node ? &w->node_src_mac : &w->client_src_mac, &eth->src_addr);
	if (vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = vlan_tci;
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	} else {
		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	}
	ip->version_ihl = 0x45;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + ulen));
	ip->packet_id = 0;
	ip->fragment_offset = 0;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = to_node ? w->node_src_ip : w->client_src_ip;
	ip->dst_addr = dip;
	udp->src_port = sport;
	udp->dst_port = dport;
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	ip->hdr_checksum = 0;
	udp->dgram_cksum = 0;
	m->nb_segs = 1;
	m->next = NULL;
	m->pkt_len = rte_pktmbuf_data_len(m);
	m->l2_len = l2;
	m->l3_len = sizeof(*ip);
	if (w->tx_offload)
		return dp_tx_cksum_offload(m, ip, udp, l2, sizeof(*ip));
	/* The sums in 64-bit words (dp_csum_sum): rte_ipv4_udptcp_cksum() sums 16 bits at a time,
	 * about 3 instructions a byte, most of a multi-get's merged reply (issue 30: 4,460 of a
	 * 10-key multi-get's 37,832). Values as DPDK's: UDP's 0 is sent as 0xffff. */
	ip->hdr_checksum = (uint16_t)~dp_csum_sum(ip, sizeof(*ip), 0);
	uint16_t c = (uint16_t)~dp_csum_sum(
		udp, ulen, dp_ip4_phdr_sum(ip->src_addr, ip->dst_addr, IPPROTO_UDP, udp->dgram_len));

	udp->dgram_cksum = c == 0 ? 0xffff : c;
}

bool dp_l3_rebuild(struct rte_mbuf *m, struct dp_pkt *pk, bool v6)
{
	uint16_t want = v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
	uint8_t *old = (uint8_t *)pk->eth, *p;
	uint16_t etype = rte_cpu_to_be_16(v6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);

	if (want > pk->l3_len) {
		if (rte_pktmbuf_prepend(m, (uint16_t)(want - pk->l3_len)) == NULL)
			return false;
		p = old - (want - pk->l3_len);
		memmove(p, old, pk->l2_len);
	} else {
		p = old + (pk->l3_len - want);
		memmove(p, old, pk->l2_len);
		rte_pktmbuf_adj(m, (uint16_t)(pk->l3_len - want));
	}
	memcpy(p + pk->l2_len - 2, &etype, 2); /* the (inner) EtherType ends the L2 header */
	pk->eth = (struct rte_ether_hdr *)p;
	pk->v6 = v6;
	pk->l3_len = want;
	m->l3_len = want;
	if (v6) {
		pk->ip = NULL;
		pk->ip6 = (struct rte_ipv6_hdr *)(p + pk->l2_len);
		pk->ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
		pk->ip6->proto = IPPROTO_UDP;
	} else {
		pk->ip6 = NULL;
		pk->ip = (struct rte_ipv4_hdr *)(p + pk->l2_len);
		pk->ip->version_ihl = 0x45;
		pk->ip->type_of_service = 0;
		pk->ip->packet_id = 0;
		pk->ip->fragment_offset = 0;
		pk->ip->next_proto_id = IPPROTO_UDP;
	}
	return true;
}

void dp_l3_finish(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t sip4,
		  uint32_t dip4, const uint8_t *sip6, const uint8_t *dip6)
{
	uint16_t ulen = rte_be_to_cpu_16(pk->udp->dgram_len);

	pk->udp->dgram_cksum = 0;
	if (pk->v6) {
		struct rte_ipv6_hdr *ip6 = pk->ip6;

		ip6->payload_len = pk->udp->dgram_len;
		ip6->hop_limits = 64;
		memcpy(&ip6->src_addr, sip6, 16);
		memcpy(&ip6->dst_addr, dip6, 16);
		if (w->tx_offload)
			return dp_tx_cksum_offload6(m, ip6, pk->udp, pk->l2_len);
		pk->udp->dgram_cksum = dp_ip6_l4_cksum(sip6, dip6, pk->udp, ulen, IPPROTO_UDP);
		return;
	}
	pk->ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(struct rte_ipv4_hdr) + ulen));
	pk->ip->time_to_live = 64;
	pk->ip->src_addr = sip4;
	pk->ip->dst_addr = dip4;
	pk->ip->hdr_checksum = 0;
	if (w->tx_offload)
		return dp_tx_cksum_offload(m, pk->ip, pk->udp, pk->l2_len, pk->l3_len);
	pk->ip->hdr_checksum = rte_ipv4_cksum(pk->ip);
	pk->udp->dgram_cksum = rte_ipv4_udptcp_cksum(pk->ip, pk->udp); /* 0 -> 0xffff */
}

bool dp_udp_build6(struct dp_worker *w, struct rte_mbuf *m, bool to_node, const uint8_t dst_mac[6],
		   bool vlan, uint16_t vlan_tci, const uint8_t *dip6, uint16_t sport,
		   uint16_t dport)
{
	uint16_t l2 = sizeof(struct rte_ether_hdr) + (vlan ? sizeof(struct rte_vlan_hdr) : 0);
	const uint8_t *sip6 = to_node ? w->node_src_ip6 : w->client_src_ip6;
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip6;
	struct rte_udp_hdr *udp;
	uint16_t ulen;

	ulen = (uint16_t)(rte_pktmbuf_data_len(m) - l2 - sizeof(struct rte_ipv4_hdr));
	eth = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(struct rte_ipv6_hdr) -
								     sizeof(struct rte_ipv4_hdr));
	if (eth == NULL)
		return false;
	ip6 = (struct rte_ipv6_hdr *)((uint8_t *)eth + l2);
	udp = (struct rte_udp_hdr *)(ip6 + 1);
	memcpy(&eth->dst_addr, dst_mac, 6);
	rte_ether_addr_copy(to_node ? &w->node_src_mac : &w->client_src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	if (vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = vlan_tci;
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	}
	ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
	ip6->payload_len = rte_cpu_to_be_16(ulen);
	ip6->proto = IPPROTO_UDP;
	ip6->hop_limits = 64;
	memcpy(&ip6->src_addr, sip6, 16);
	memcpy(&ip6->dst_addr, dip6, 16);
	udp->src_port = sport;
	udp->dst_port = dport;
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0;
	m->nb_segs = 1;
	m->next = NULL;
	m->pkt_len = rte_pktmbuf_data_len(m);
	m->l2_len = l2;
	m->l3_len = sizeof(*ip6);
	if (w->tx_offload)
		dp_tx_cksum_offload6(m, ip6, udp, l2);
	else
		udp->dgram_cksum = dp_ip6_l4_cksum(sip6, dip6, udp, ulen, IPPROTO_UDP);
	return true;
}

bool dp_udp_build_ep(struct dp_worker *w, struct rte_mbuf *m, const uint8_t dst_mac[6], bool vlan,
		     uint16_t vlan_tci, uint32_t ep, uint16_t sport, uint16_t dport)
{
	const struct dp_endpoint *e = &w->eps[ep];

	if (!e->v6) {
		dp_udp_build(w, m, true, dst_mac, vlan, vlan_tci,
			     atomic_load_explicit(&e->ip, memory_order_relaxed), sport, dport);
		return true;
	}
	return dp_udp_build6(w, m, true, dst_mac, vlan, vlan_tci, e->ip6, sport, dport);
}
