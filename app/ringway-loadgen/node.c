/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node emulator (--nodes PREFIX): on the same port as the load generator's client side,
 * it answers every memcached UDP request sent to an address in PREFIX the way a memcached
 * node would, so that one load generator process drives a router over a kernel-free link
 * (net_memif) with the router's real placement over as many nodes as PREFIX holds.
 *
 * What it holds: every key, except a share 1 - hit_ratio chosen by the key's hash (the same
 * keys miss every time), each with a value of value_size bytes of the load generator's
 * pattern. SETs are answered STORED and change nothing. Replies are built as memcached builds
 * them (ASCII VALUE/END, meta VA/EN/HD with the k, O, f, t, s, c flags echoed, binary with
 * the opaque echoed and quiet misses silent), split into datagrams of 1,400 payload bytes
 * after the 8-byte frame header, each with the request's id and seq 0..total-1, from the
 * node's address and port, with valid IPv4 and UDP checksums.
 *
 * Queues: a reply leaves on the queue its request came in on (with net_memif, the router
 * worker that sent it), except a share `cross` that goes to the next queue (the other
 * worker's: what RSS does to replies on a real NIC), so the router's hand-off is measured.
 * A reply may wait `delay_us` (a FIFO on the TSC) before it is sent.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "loadgen.h"

#define HDR_LEN	     (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define DGRAM_BODY   LG_NODE_DGRAM_BODY
#define DELAY_SLOTS  16384u /* delayed datagrams: a power of two */
#define TXB_MAX	     1024
#define LG_MAX_QUEUE 8

struct delayed {
	struct rte_mbuf *m;
	uint64_t due;
	uint16_t q;
};

struct lg_node {
	const struct lg_env *e;
	uint32_t net, mask; /* network order */
	uint16_t port;	    /* host order */
	uint16_t nq;
	double cross, cross_acc;
	uint64_t delay_tsc;
	struct lg_node_core c; /* keys, values, reply bodies and templates (nodereply.c) */
	struct rte_mbuf *txb[LG_MAX_QUEUE][TXB_MAX];
	uint16_t ntx[LG_MAX_QUEUE];
	struct delayed *dq; /* DELAY_SLOTS entries */
	uint32_t dq_head, dq_tail;
	uint16_t ip_id;
};

bool lg_node_owns(const struct lg_node *nd, uint32_t ip)
{
	return nd != NULL && (ip & nd->mask) == nd->net;
}

/* ---------------------------------------------------------------- datagrams */

/* Offer queue @p q's buffered replies to the port once; what it does not take waits for the
 * next poll (the peer's ring is full: back-pressure, as a node's socket buffer gives). */
static void txb_flush(struct lg_node *nd, uint16_t q, uint64_t *ctr)
{
	uint16_t n = nd->ntx[q], sent;
	uint32_t len[TXB_MAX];

	/* Lengths first: the port owns (and may free) what it takes. */
	for (uint16_t i = 0; i < n; i++)
		len[i] = nd->txb[q][i]->data_len;
	sent = rte_eth_tx_burst(nd->e->o->port_id, q, nd->txb[q], n);
	ctr[LG_CTR_NODE_DATAGRAMS] += sent;
	for (uint16_t i = 0; i < sent; i++)
		ctr[LG_CTR_NODE_BYTES] += len[i];
	if (sent < n)
		memmove(nd->txb[q], nd->txb[q] + sent, sizeof(nd->txb[q][0]) * (n - sent));
	nd->ntx[q] = (uint16_t)(n - sent);
}

/* Buffer @p m for queue @p q; when the buffer stays full after a flush, @p m is dropped (the
 * node's socket buffer overflowed). */
static void send_now(struct lg_node *nd, struct rte_mbuf *m, uint16_t q, uint64_t *ctr)
{
	if (nd->ntx[q] == TXB_MAX)
		txb_flush(nd, q, ctr);
	if (nd->ntx[q] == TXB_MAX) {
		ctr[LG_CTR_NODE_TX_DROPPED]++;
		rte_pktmbuf_free(m);
		return;
	}
	nd->txb[q][nd->ntx[q]++] = m;
}

static void send_or_delay(struct lg_node *nd, struct rte_mbuf *m, uint16_t q, uint64_t now,
			  uint64_t *ctr)
{
	if (nd->delay_tsc == 0)
		return send_now(nd, m, q, ctr);
	if (nd->dq_tail - nd->dq_head == DELAY_SLOTS) {
		ctr[LG_CTR_NODE_TX_DROPPED]++;
		rte_pktmbuf_free(m);
		return;
	}
	nd->dq[nd->dq_tail++ & (DELAY_SLOTS - 1)] = (struct delayed){m, now + nd->delay_tsc, q};
}

/* Datagram @p seq of @p total: a copy of the request's headers, turned round, then the frame
 * header and @p len body bytes. */
static struct rte_mbuf *build_dgram(struct lg_node *nd, const uint8_t *req_hdr, uint16_t reqid,
				    uint16_t seq, uint16_t total, const uint8_t *body, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nd->e->pool);

	if (m == NULL)
		return NULL;
	m->data_len = (uint16_t)lg_node_dgram_ref(req_hdr, &nd->e->src_mac, nd->ip_id++, reqid,
						  seq, total, body, len,
						  rte_pktmbuf_mtod(m, uint8_t *));
	m->pkt_len = m->data_len;
	return m;
}

/* The next reply's queue: the request's, or for a share `cross` the next one. */
static uint16_t reply_queue(struct lg_node *nd, uint16_t q, uint64_t *ctr)
{
	if (nd->nq > 1 && nd->cross > 0) {
		nd->cross_acc += nd->cross;
		if (nd->cross_acc >= 1.0) {
			nd->cross_acc -= 1.0;
			ctr[LG_CTR_NODE_CROSS]++;
			return (uint16_t)((q + 1) % nd->nq);
		}
	}
	return q;
}

/* The common request (one single-key read): its reply from the shape's template. False when
 * it takes the general path. */
static bool rx_fast(struct lg_node *nd, struct rte_mbuf *m, const uint8_t *payload, uint32_t plen,
		    uint16_t q, uint64_t now, uint64_t *ctr)
{
	const struct lg_reply_tmpl *t;
	const struct mc_key *k;
	struct rte_mbuf *d;
	bool hit;

	if (nd->c.req->nreq != 1 || nd->c.req->req[0].key_count != 1 ||
	    nd->c.req->req[0].kind != MC_KIND_READ)
		return false;
	k = &nd->c.req->keys[nd->c.req->req[0].key_first];
	hit = lg_node_key_held(&nd->c, payload + k->off, k->len);
	t = lg_node_tmpl(&nd->c, payload, hit);
	if (t == NULL)
		return false;
	ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
	d = rte_pktmbuf_alloc(nd->e->pool);
	if (d == NULL) {
		ctr[LG_CTR_ALLOC_FAILED]++;
		return true;
	}
	d->data_len = (uint16_t)lg_node_tmpl_write(&nd->c, t, rte_pktmbuf_mtod(m, const uint8_t *),
						   payload, &nd->e->src_mac, nd->ip_id++,
						   rte_pktmbuf_mtod(d, uint8_t *));
	lg_node_pat_learn(&nd->c, payload, plen, hit, t); /* the next such request: rx_learnt() */
	d->pkt_len = d->data_len;
	send_or_delay(nd, d, reply_queue(nd, q, ctr), now, ctr);
	return true;
}

/* A learnt request (lg_node_fast(): no parse): its reply written over the request in @p m,
 * which is sent. False when it takes the parser's path (@p m untouched). */
static bool rx_learnt(struct lg_node *nd, struct rte_mbuf *m, const uint8_t *payload,
		      uint32_t plen, uint16_t q, uint64_t now, uint64_t *ctr)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len;
	bool hit;

	/* In place only in a buffer of our own: direct, not shared, one segment. */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 || m->nb_segs != 1)
		return false;
	len = lg_node_fast(&nd->c, f, payload, plen, &nd->e->src_mac, nd->ip_id,
			   (uint32_t)(m->buf_len - m->data_off), f, &hit);
	if (len == 0)
		return false;
	nd->ip_id++;
	ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	m->ol_flags = 0; /* the RX flags describe the request */
	send_or_delay(nd, m, reply_queue(nd, q, ctr), now, ctr);
	return true;
}

bool lg_node_rx(struct lg_node *nd, struct rte_mbuf *m, const uint8_t *payload, uint32_t plen,
		uint16_t q, uint64_t now, uint64_t *ctr)
{
	uint8_t hdr[HDR_LEN];
	uint16_t total, reqid, out_q;
	uint32_t len;
	enum mc_err e;

	ctr[LG_CTR_NODE_REQUESTS]++;
	if (nd->c.npat != 0 && rx_learnt(nd, m, payload, plen, q, now, ctr))
		return true; /* @p m is the reply now */
	e = mc_parse_datagram_flags(payload, plen, MC_PARSE_CTL_KEYS, nd->c.req);
	if (e != MC_OK) {
		ctr[LG_CTR_NODE_BAD_REQUEST]++;
		return false;
	}
	if (rx_fast(nd, m, payload, plen, q, now, ctr))
		return false;
	/* Offsets in nd->c.req count from the frame header's first byte. */
	if (!lg_node_body(&nd->c, payload, ctr, &len)) {
		ctr[LG_CTR_NODE_BAD_REQUEST]++;
		return false;
	}
	if (len == 0)
		return false; /* quiet: memcached sends nothing */
	memcpy(hdr, rte_pktmbuf_mtod(m, const uint8_t *), HDR_LEN);
	reqid = nd->c.req->frame.request_id;
	total = (uint16_t)((len + DGRAM_BODY - 1) / DGRAM_BODY);
	out_q = reply_queue(nd, q, ctr);
	for (uint16_t s = 0; s < total; s++) {
		uint32_t off = (uint32_t)s * DGRAM_BODY;
		uint32_t dlen = RTE_MIN((uint32_t)DGRAM_BODY, len - off);
		struct rte_mbuf *d = build_dgram(nd, hdr, reqid, s, total, nd->c.body + off, dlen);

		if (d == NULL) {
			ctr[LG_CTR_ALLOC_FAILED]++;
			break;
		}
		send_or_delay(nd, d, out_q, now, ctr);
	}
	return false; /* the request's mbuf is the caller's to free */
}

uint32_t lg_node_poll(struct lg_node *nd, uint64_t now, uint64_t *ctr)
{
	uint32_t n = 0;

	while (nd->dq_head != nd->dq_tail) {
		struct delayed *d = &nd->dq[nd->dq_head & (DELAY_SLOTS - 1)];

		if (d->due > now)
			break;
		send_now(nd, d->m, d->q, ctr);
		nd->dq_head++;
		n++;
	}
	for (uint16_t q = 0; q < nd->nq; q++)
		if (nd->ntx[q] > 0) {
			uint16_t before = nd->ntx[q];

			txb_flush(nd, q, ctr);
			n += (uint32_t)(before - nd->ntx[q]);
		}
	return n;
}

uint32_t lg_node_pending(const struct lg_node *nd)
{
	uint32_t n = nd->dq_tail - nd->dq_head;

	for (uint16_t q = 0; q < nd->nq; q++)
		n += nd->ntx[q];
	return n;
}

struct lg_node *lg_node_create(const struct lg_env *env)
{
	const struct lg_opts *o = env->o;
	struct lg_node *nd = calloc(1, sizeof(*nd));

	if (nd == NULL)
		return NULL;
	nd->e = env;
	nd->net = o->node_net;
	nd->mask = o->node_mask;
	nd->port = o->node_port;
	nd->nq = o->queues;
	nd->cross = o->node_cross;
	nd->delay_tsc = (uint64_t)o->node_delay_us * env->hz / 1000000;
	nd->c.hit_thresh = o->node_hit_ratio >= 1.0
				 ? (1ULL << 53)
				 : (uint64_t)(o->node_hit_ratio * 9007199254740992.0);
	nd->c.value_size = o->node_value_size;
	nd->c.value_len_text_len = (uint8_t)snprintf(nd->c.value_len_text, sizeof(nd->c.value_len_text),
						   "%u", nd->c.value_size);
	nd->c.value = malloc(nd->c.value_size + 1);
	nd->c.body = malloc(LG_NODE_BODY_MAX);
	nd->c.req = malloc(sizeof(*nd->c.req));
	nd->dq = calloc(DELAY_SLOTS, sizeof(*nd->dq));
	if (nd->c.value == NULL || nd->c.body == NULL || nd->c.req == NULL || nd->dq == NULL ||
	    nd->nq > LG_MAX_QUEUE) {
		lg_node_free(nd);
		errno = ENOMEM;
		return NULL;
	}
	/* The load generator's own value pattern: its hits check the length only. */
	for (uint32_t i = 0; i < nd->c.value_size; i++)
		nd->c.value[i] = (uint8_t)('a' + i % 26);
	return nd;
}

void lg_node_free(struct lg_node *nd)
{
	if (nd == NULL)
		return;
	while (nd->dq != NULL && nd->dq_head != nd->dq_tail)
		rte_pktmbuf_free(nd->dq[nd->dq_head++ & (DELAY_SLOTS - 1)].m);
	for (uint16_t q = 0; q < LG_MAX_QUEUE; q++)
		if (nd->ntx[q] > 0)
			rte_pktmbuf_free_bulk(nd->txb[q], nd->ntx[q]);
	free(nd->c.value);
	free(nd->c.body);
	free(nd->c.req);
	free(nd->dq);
	free(nd);
}
