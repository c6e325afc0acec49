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
#define DGRAM_BODY   1400 /* memcached's UDP_MAX_PAYLOAD_SIZE, after the frame header */
#define BODY_MAX     (256 * 1024)
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
	uint64_t hit_thresh; /* keys whose 53-bit hash is below it are held */
	uint32_t value_size;
	uint8_t *value;
	char value_len_text[12];
	uint8_t value_len_text_len;
	uint8_t *body; /* BODY_MAX bytes: one reply before it is cut into datagrams */
	struct mc_requests *req;
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

/* ---------------------------------------------------------------- keys and values */

/* FNV-1a 64 of the key, mixed (murmur3's finaliser): which keys miss. */
static bool key_held(const struct lg_node *nd, const uint8_t *k, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (nd->hit_thresh >= (1ULL << 53))
		return true;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (h >> 11) < nd->hit_thresh;
}

/* ---------------------------------------------------------------- reply bodies */

struct out {
	uint8_t *p;
	uint32_t len;
	bool full;
};

static void put(struct out *o, const void *s, uint32_t n)
{
	if (o->full || o->len + n > BODY_MAX) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

#define PUT_LIT(o, s) put((o), (s), sizeof(s) - 1)

/* Meta return flags for request @p r of @p p (key @p k): those memcached echoes. */
static void meta_flags(struct out *o, const uint8_t *p, const struct mc_request *r,
		       const struct mc_key *k, bool hit, uint32_t vlen)
{
	const uint8_t *a = p + r->args_off, *end = a + r->args_len;

	while (a < end) {
		const uint8_t *t = a;

		while (a < end && *a != ' ')
			a++;
		switch (*t) {
		case 'k':
			PUT_LIT(o, " k");
			put(o, p + k->off, k->len);
			break;
		case 'O':
			put(o, " ", 1);
			put(o, t, (uint32_t)(a - t));
			break;
		case 'f':
			if (hit)
				PUT_LIT(o, " f0");
			break;
		case 't':
			if (hit)
				PUT_LIT(o, " t-1");
			break;
		case 'c':
			if (hit)
				PUT_LIT(o, " c1");
			break;
		case 's':
			if (hit) {
				char b[16];
				int n = snprintf(b, sizeof(b), " s%u", vlen);

				put(o, b, (uint32_t)n);
			}
			break;
		default:
			break;
		}
		while (a < end && *a == ' ')
			a++;
	}
}

static bool meta_has(const uint8_t *p, const struct mc_request *r, char flag)
{
	const uint8_t *a = p + r->args_off;

	for (uint32_t i = 0; i < r->args_len; i++)
		if (a[i] == (uint8_t)flag && (i == 0 || a[i - 1] == ' '))
			return true;
	return false;
}

static void text_read(struct lg_node *nd, struct out *o, const uint8_t *p,
		      const struct mc_request *r, uint64_t *ctr)
{
	bool meta = r->proto == MC_PROTO_META;

	for (uint16_t i = 0; i < r->key_count; i++) {
		const struct mc_key *k = &nd->req->keys[r->key_first + i];
		bool hit = key_held(nd, p + k->off, k->len);

		ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
		if (meta) {
			if (!hit && (r->flags & MC_REQ_F_QUIET))
				continue;
			if (hit && meta_has(p, r, 'v')) {
				PUT_LIT(o, "VA ");
				put(o, nd->value_len_text, nd->value_len_text_len);
			} else {
				put(o, hit ? "HD" : "EN", 2);
			}
			meta_flags(o, p, r, k, hit, nd->value_size);
			PUT_LIT(o, "\r\n");
			if (hit && meta_has(p, r, 'v')) {
				put(o, nd->value, nd->value_size);
				PUT_LIT(o, "\r\n");
			}
			continue;
		}
		if (!hit)
			continue;
		PUT_LIT(o, "VALUE ");
		put(o, p + k->off, k->len);
		PUT_LIT(o, " 0 ");
		put(o, nd->value_len_text, nd->value_len_text_len);
		if (r->cmd == MC_CMD_GETS || r->cmd == MC_CMD_GATS)
			PUT_LIT(o, " 1");
		PUT_LIT(o, "\r\n");
		put(o, nd->value, nd->value_size);
		PUT_LIT(o, "\r\n");
	}
	if (!meta)
		PUT_LIT(o, "END\r\n");
}

static void text_other(struct out *o, const uint8_t *p, const struct mc_request *r)
{
	bool meta = r->proto == MC_PROTO_META;

	if (r->cmd == MC_CMD_MN) {
		PUT_LIT(o, "MN\r\n");
		return;
	}
	if (r->flags & MC_REQ_F_QUIET)
		return;
	switch (r->kind) {
	case MC_KIND_WRITE:
		if (meta) {
			PUT_LIT(o, "HD");
			meta_flags(o, p, r, NULL, false, 0);
			PUT_LIT(o, "\r\n");
		} else {
			PUT_LIT(o, "STORED\r\n");
		}
		break;
	case MC_KIND_DELETE:
		PUT_LIT(o, "NOT_FOUND\r\n");
		break;
	default:
		PUT_LIT(o, "ERROR\r\n");
		break;
	}
}

/* A binary response: header, extras (flags 0 on a hit), key (GETK*), value. */
static void bin_one(struct lg_node *nd, struct out *o, const uint8_t *p, const struct mc_request *r,
		    uint64_t *ctr)
{
	uint8_t h[MC_BIN_HDR_LEN];
	static const uint8_t flags0[4] = {0, 0, 0, 0};
	bool quiet = (r->flags & MC_REQ_F_QUIET) != 0;

	if (r->kind == MC_KIND_READ) {
		const struct mc_key *k = &nd->req->keys[r->key_first];
		bool hit = key_held(nd, p + k->off, k->len);
		bool with_key = (r->flags & MC_REQ_F_KEY_IN_REPLY) != 0;
		uint16_t klen = with_key ? k->len : 0;
		uint16_t klen_be = rte_cpu_to_be_16(klen);

		ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
		if (!hit) {
			if (quiet)
				return;
			mc_bin_response_write(h, r->opcode, MC_BIN_STATUS_KEY_NOT_FOUND, 9,
					      r->opaque);
			put(o, h, sizeof(h));
			PUT_LIT(o, "Not found");
			return;
		}
		mc_bin_response_write(h, r->opcode, MC_BIN_STATUS_OK, 4u + klen + nd->value_size,
				      r->opaque);
		memcpy(h + 2, &klen_be, 2);
		h[4] = 4;
		put(o, h, sizeof(h));
		put(o, flags0, 4);
		if (with_key)
			put(o, p + k->off, k->len);
		put(o, nd->value, nd->value_size);
		return;
	}
	if (quiet && r->cmd != MC_CMD_NOOP)
		return;
	mc_bin_response_write(h, r->opcode,
			      r->kind == MC_KIND_WRITE || r->cmd == MC_CMD_NOOP
				      ? MC_BIN_STATUS_OK
				      : MC_BIN_STATUS_UNKNOWN_COMMAND,
			      0, r->opaque);
	put(o, h, sizeof(h));
}

/* The whole reply to the parsed requests of datagram payload @p p. */
static void build_body(struct lg_node *nd, struct out *o, const uint8_t *p, uint64_t *ctr)
{
	for (uint16_t i = 0; i < nd->req->nreq; i++) {
		const struct mc_request *r = &nd->req->req[i];

		if (r->kind == MC_KIND_WRITE)
			ctr[LG_CTR_NODE_SETS]++;
		if (r->proto == MC_PROTO_BINARY)
			bin_one(nd, o, p, r, ctr);
		else if (r->kind == MC_KIND_READ)
			text_read(nd, o, p, r, ctr);
		else
			text_other(o, p, r);
	}
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
	const struct rte_ether_hdr *qe = (const struct rte_ether_hdr *)req_hdr;
	const struct rte_ipv4_hdr *qi = (const struct rte_ipv4_hdr *)(qe + 1);
	const struct rte_udp_hdr *qu = (const struct rte_udp_hdr *)(qi + 1);
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct mc_frame f = {reqid, seq, total, 0};
	uint16_t ulen = (uint16_t)(sizeof(*udp) + MC_FRAME_HDR_LEN + len);

	if (m == NULL)
		return NULL;
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	udp = (struct rte_udp_hdr *)(ip + 1);
	rte_ether_addr_copy(&qe->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&nd->e->src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->packet_id = rte_cpu_to_be_16(nd->ip_id++);
	ip->src_addr = qi->dst_addr;
	ip->dst_addr = qi->src_addr;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + ulen));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = qu->dst_port;
	udp->dst_port = qu->src_port;
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0;
	mc_frame_write((uint8_t *)(udp + 1), &f);
	memcpy((uint8_t *)(udp + 1) + MC_FRAME_HDR_LEN, body, len);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	m->data_len = (uint16_t)(HDR_LEN + MC_FRAME_HDR_LEN + len);
	m->pkt_len = m->data_len;
	return m;
}

bool lg_node_rx(struct lg_node *nd, struct rte_mbuf *m, const uint8_t *payload, uint32_t plen,
		uint16_t q, uint64_t now, uint64_t *ctr)
{
	struct out o = {nd->body, 0, false};
	uint8_t hdr[HDR_LEN];
	uint16_t total, reqid;
	uint16_t out_q = q;
	enum mc_err e;

	ctr[LG_CTR_NODE_REQUESTS]++;
	e = mc_parse_datagram_flags(payload, plen, MC_PARSE_CTL_KEYS, nd->req);
	if (e != MC_OK) {
		ctr[LG_CTR_NODE_BAD_REQUEST]++;
		return false;
	}
	/* Offsets in nd->req count from the frame header's first byte. */
	build_body(nd, &o, payload, ctr);
	if (o.full) {
		ctr[LG_CTR_NODE_BAD_REQUEST]++;
		return false;
	}
	if (o.len == 0)
		return false; /* quiet: memcached sends nothing */
	memcpy(hdr, rte_pktmbuf_mtod(m, const uint8_t *), HDR_LEN);
	reqid = nd->req->frame.request_id;
	total = (uint16_t)((o.len + DGRAM_BODY - 1) / DGRAM_BODY);
	if (nd->nq > 1 && nd->cross > 0) {
		nd->cross_acc += nd->cross;
		if (nd->cross_acc >= 1.0) {
			nd->cross_acc -= 1.0;
			out_q = (uint16_t)((q + 1) % nd->nq);
			ctr[LG_CTR_NODE_CROSS]++;
		}
	}
	for (uint16_t s = 0; s < total; s++) {
		uint32_t off = (uint32_t)s * DGRAM_BODY;
		uint32_t len = RTE_MIN((uint32_t)DGRAM_BODY, o.len - off);
		struct rte_mbuf *d = build_dgram(nd, hdr, reqid, s, total, o.p + off, len);

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
	nd->hit_thresh = o->node_hit_ratio >= 1.0
				 ? (1ULL << 53)
				 : (uint64_t)(o->node_hit_ratio * 9007199254740992.0);
	nd->value_size = o->node_value_size;
	nd->value_len_text_len = (uint8_t)snprintf(nd->value_len_text, sizeof(nd->value_len_text),
						   "%u", nd->value_size);
	nd->value = malloc(nd->value_size + 1);
	nd->body = malloc(BODY_MAX);
	nd->req = malloc(sizeof(*nd->req));
	nd->dq = calloc(DELAY_SLOTS, sizeof(*nd->dq));
	if (nd->value == NULL || nd->body == NULL || nd->req == NULL || nd->dq == NULL ||
	    nd->nq > LG_MAX_QUEUE) {
		lg_node_free(nd);
		errno = ENOMEM;
		return NULL;
	}
	/* The load generator's own value pattern: its hits check the length only. */
	for (uint32_t i = 0; i < nd->value_size; i++)
		nd->value[i] = (uint8_t)('a' + i % 26);
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
	free(nd->value);
	free(nd->body);
	free(nd->req);
	free(nd->dq);
	free(nd);
}
