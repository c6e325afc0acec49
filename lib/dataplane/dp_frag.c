/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IP fragments (see dp_frag.h): reassembly on RX with rte_ip_frag, fragmenting on TX by copy.
 * The table's mbufs come from the port's pool and go back to it through the death row, which
 * is emptied before every return from here (each fragment's outcome counted as it goes there).
 */

/* rte_ip_frag_table_del_expired_entries() is still experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip_frag.h>
#include <rte_malloc.h>

#include "dp_frag.h"
#include "dp_tx.h"

struct dp_frag {
	struct rte_ip_frag_tbl *tbl;
	struct rte_mempool *big; /* datagrams over the port pool's mbufs */
	struct rte_ip_frag_death_row dr;
};

int dp_frag_create(struct dp_worker *w, uint32_t entries, uint32_t timeout_ms, int socket)
{
	static unsigned int instance; /* pool names are process-wide; control lcore only */
	uint64_t cycles = (uint64_t)timeout_ms * rte_get_tsc_hz() / 1000;
	uint32_t buckets = rte_align32pow2(entries);
	char name[RTE_MEMPOOL_NAMESIZE];
	struct dp_frag *f;

	w->frag = NULL;
	if (entries == 0)
		return 0;
	f = rte_zmalloc_socket("dp_frag", sizeof(*f), RTE_CACHE_LINE_SIZE, socket);
	if (f == NULL)
		return -ENOMEM;
	/* Four entries a bucket, a bucket per datagram: few flows ever share one. */
	f->tbl = rte_ip_frag_table_create(buckets, 4, entries, cycles, socket);
	snprintf(name, sizeof(name), "rw_frag%u_%u", instance++, w->id);
	f->big = rte_pktmbuf_pool_create(name, DP_FRAG_BIG_MBUFS, 0, 0,
					 RTE_PKTMBUF_HEADROOM + DP_FRAG_DATAGRAM_MAX + 64, socket);
	w->frag = f;
	if (f->tbl == NULL || f->big == NULL) {
		dp_frag_free(w);
		return -ENOMEM;
	}
	return 0;
}

void dp_frag_free(struct dp_worker *w)
{
	struct dp_frag *f = w->frag;

	if (f == NULL)
		return;
	if (f->tbl != NULL)
		rte_ip_frag_table_destroy(f->tbl); /* frees the mbufs it held */
	rte_ip_frag_free_death_row(&f->dr, 0);
	rte_mempool_free(f->big);
	rte_free(f);
	w->frag = NULL;
}

/* Count the @p n fragments on the death row as dropped for @p why and free them. */
static void dr_drop(struct dp_worker *w, struct dp_frag *f, enum dp_drop why)
{
	w->drop[why] += f->dr.cnt;
	w->ctr[DP_CTR_DROPPED] += f->dr.cnt;
	rte_ip_frag_free_death_row(&f->dr, 0);
}

void dp_frag_expire(struct dp_worker *w)
{
	struct dp_frag *f = w->frag;

	rte_ip_frag_table_del_expired_entries(f->tbl, &f->dr, w->now);
	w->frag_held -= f->dr.cnt;
	dr_drop(w, f, DP_DROP_IP_FRAG_TIMEOUT);
}

/* Datagram @p c (a chain of its fragments) copied into one mbuf: the port pool's when it fits,
 * else a big one; @p c is freed. NULL (dropped: ip_too_big) when neither has room. */
static struct rte_mbuf *linearize(struct dp_worker *w, struct rte_mbuf *c)
{
	uint32_t len = rte_pktmbuf_pkt_len(c);
	struct rte_mempool *mp = w->pool;
	struct rte_mbuf *n = NULL;
	uint8_t *d;

	if (len > (uint32_t)rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM)
		mp = w->frag->big;
	if (len <= (uint32_t)rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM)
		n = rte_pktmbuf_alloc(mp);
	if (n == NULL || (d = (uint8_t *)rte_pktmbuf_append(n, (uint16_t)len)) == NULL) {
		rte_pktmbuf_free(n);
		dp_count_drop(w, c, DP_DROP_IP_TOO_BIG);
		return NULL;
	}
	for (const struct rte_mbuf *s = c; s != NULL; s = s->next) {
		memcpy(d, rte_pktmbuf_mtod(s, const void *), s->data_len);
		d += s->data_len;
	}
	n->port = c->port;
	n->l2_len = c->l2_len;
	n->l3_len = c->l3_len;
	rte_pktmbuf_free(c);
	return n;
}

struct rte_mbuf *dp_frag_in(struct dp_worker *w, struct rte_mbuf *m, uint16_t l2, uint16_t l3,
			    void *iph, void *frag6)
{
	struct dp_frag *f = w->frag;
	struct rte_mbuf *r;
	uint32_t d, n;

	m->l2_len = l2;
	m->l3_len = l3;
	/* Expired flows first, with the same clock: what the call below puts on the death row
	 * is then m's flow's alone (or m, when the table has no room). */
	dp_frag_expire(w);
	r = frag6 != NULL ? rte_ipv6_frag_reassemble_packet(f->tbl, &f->dr, m, w->now, iph, frag6)
			  : rte_ipv4_frag_reassemble_packet(f->tbl, &f->dr, m, w->now, iph);
	if (r == NULL) {
		d = f->dr.cnt;
		if (d == 0) {
			w->frag_held++;
			return NULL;
		}
		/* m and the d - 1 held fragments of its flow; m alone: no entry was free (a
		 * flow's entry holds at least one fragment, so an invalid one drops two). */
		w->frag_held -= d - 1;
		dr_drop(w, f, d == 1 ? DP_DROP_IP_FRAG_TABLE_FULL : DP_DROP_IP_FRAG_INVALID);
		return NULL;
	}
	n = r->nb_segs; /* one fragment each: check_frame() drops chained RX mbufs */
	w->frag_held -= n - 1;
	w->ctr[DP_CTR_IP_FRAG_MERGED] += n - 1;
	w->ctr[DP_CTR_IP_REASSEMBLED]++;
	r = linearize(w, r);
	if (r != NULL && frag6 == NULL) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(r, struct rte_ipv4_hdr *, l2);

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	return r;
}

/* ---- TX --------------------------------------------------------------------------------- */

/* The L2 length of frame @p d: Ethernet, with one 802.1Q tag or none. */
static uint16_t frame_l2(const uint8_t *d)
{
	return d[12] == 0x81 && d[13] == 0x00 ? 18 : 14;
}

/* The UDP checksum of the datagram in @p m made whole where it was left to the NIC. */
static void cksum_whole(struct rte_mbuf *m, uint8_t *l3, bool v6, uint32_t ihl)
{
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(l3 + ihl);

	if (!(m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM))
		return;
	udp->dgram_cksum = 0;
	if (v6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)l3;

		udp->dgram_cksum = dp_ip6_l4_cksum((const uint8_t *)&ip6->src_addr,
						   (const uint8_t *)&ip6->dst_addr, udp,
						   rte_be_to_cpu_16(udp->dgram_len), IPPROTO_UDP);
	} else {
		udp->dgram_cksum = rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)l3, udp);
	}
}

/* Most fragments the router makes of one datagram (a 64 KB datagram in 576-byte fragments is
 * 120). */
#define DP_FRAG_OUT_MAX 128

/*
 * Build the fragments of @p m (L2 @p l2 bytes, then its IPv4 or IPv6 header) into @p out:
 * each the L2 header, the IP header (IPv6: with a fragment header) and up to the MTU of
 * payload, checksums in software. @return how many, or 0 (nothing built: no mbufs, a
 * datagram the router does not fragment).
 */
static uint32_t build_fragments(struct dp_worker *w, struct rte_mbuf *m, uint16_t l2,
				struct rte_mbuf **out)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *), *l3 = d + l2;
	bool v6 = (l3[0] >> 4) == 6;
	uint32_t hlen, plen, chunk, nf;
	uint32_t id = 0;

	if (v6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)l3;

		if (ip6->proto != IPPROTO_UDP) /* extension headers: never built here */
			return 0;
		hlen = sizeof(*ip6);
		plen = rte_be_to_cpu_16(ip6->payload_len);
		chunk = (w->mtu - hlen - sizeof(struct rte_ipv6_fragment_ext)) & ~7u;
		id = rte_cpu_to_be_32(++w->frag_id6);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

		hlen = (uint32_t)(ip->version_ihl & 0x0f) * 4;
		plen = rte_be_to_cpu_16(ip->total_length) - hlen;
		chunk = (w->mtu - hlen) & ~7u;
	}
	if (l2 + hlen + plen > rte_pktmbuf_data_len(m))
		return 0;
	nf = (plen + chunk - 1) / chunk;
	if (nf > DP_FRAG_OUT_MAX || rte_pktmbuf_alloc_bulk(w->pool, out, nf) != 0)
		return 0;
	cksum_whole(m, l3, v6, hlen);
	for (uint32_t k = 0, off = 0; k < nf; k++, off += chunk) {
		uint32_t len = RTE_MIN(chunk, plen - off);
		uint32_t fh = v6 ? sizeof(struct rte_ipv6_fragment_ext) : 0;
		uint16_t more = k + 1 < nf ? 1 : 0;
		uint8_t *p =
			(uint8_t *)rte_pktmbuf_append(out[k], (uint16_t)(l2 + hlen + fh + len));

		memcpy(p, d, l2 + hlen);
		memcpy(p + l2 + hlen + fh, l3 + hlen + off, len);
		if (v6) {
			struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(p + l2);
			struct rte_ipv6_fragment_ext *x = (struct rte_ipv6_fragment_ext *)(ip6 + 1);

			ip6->proto = IPPROTO_FRAGMENT;
			ip6->payload_len = rte_cpu_to_be_16((uint16_t)(fh + len));
			x->next_header = IPPROTO_UDP;
			x->reserved = 0;
			x->frag_data = rte_cpu_to_be_16((uint16_t)(off | more));
			x->id = id;
		} else {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + l2);

			ip->total_length = rte_cpu_to_be_16((uint16_t)(hlen + len));
			ip->fragment_offset = rte_cpu_to_be_16(
				(uint16_t)(off / 8 | (more ? RTE_IPV4_HDR_MF_FLAG : 0)));
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
		out[k]->port = m->port;
	}
	return nf;
}

void dp_frag_tx(struct dp_worker *w, uint16_t from)
{
	struct rte_mbuf *tx[DP_FRAG_TX_ROOM], *out[DP_FRAG_OUT_MAX];
	uint32_t ep[DP_FRAG_TX_ROOM], slot[DP_FRAG_TX_ROOM];
	uint8_t tag[DP_FRAG_TX_ROOM];
	uint16_t n;

	if (w->ntx < from)
		from = 0; /* flushed meanwhile (more than DP_FRAG_TX_ROOM added): what is left */
	n = RTE_MIN((uint16_t)(w->ntx - from), (uint16_t)DP_FRAG_TX_ROOM);
	from = (uint16_t)(w->ntx - n);
	memcpy(tx, w->tx + from, n * sizeof(tx[0]));
	memcpy(tag, w->tx_tag + from, n * sizeof(tag[0]));
	memcpy(ep, w->tx_ep + from, n * sizeof(ep[0]));
	memcpy(slot, w->tx_slot + from, n * sizeof(slot[0]));
	w->ntx = from;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t l2 = frame_l2(rte_pktmbuf_mtod(tx[i], const uint8_t *));
		uint32_t nf;

		if (rte_pktmbuf_pkt_len(tx[i]) <= l2 + w->mtu) {
			dp_tx_push_fwd_tag(w, tx[i], ep[i], slot[i], (enum dp_tx_tag)tag[i]);
			continue;
		}
		nf = build_fragments(w, tx[i], l2, out);
		if (nf == 0) {
			/* As if the queue refused it: counted once, by its tag (a request's slot
			 * is freed now: no node is blamed for it). */
			dp_tx_refuse(w, tx[i], tag[i], ep[i], slot[i]);
			continue;
		}
		for (uint32_t k = 0; k + 1 < nf; k++)
			dp_tx_push_fwd_tag(w, out[k], ep[i], DP_NO_SLOT,
					   dp_tx_to_node(tag[i]) ? DP_TX_FRAG_NODE
								 : DP_TX_FRAG_CLIENT);
		dp_tx_push_fwd_tag(w, out[nf - 1], ep[i], slot[i], (enum dp_tx_tag)tag[i]);
		rte_pktmbuf_free(tx[i]);
	}
}
