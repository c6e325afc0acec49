/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The run loop, on the main lcore: poll RX (replies, ARP), retire timed-out requests, send
 * what the TSC schedule says is due, and once a second print a progress line.
 *
 * Request ids: request number n (counting from 0 over the whole process) goes out with frame
 * request id n mod 65536 and UDP source port base + n mod sport_count. Its slot in the
 * in-flight table is slots[id]; `tail` is the oldest request number not yet retired, so the
 * ids in flight always lie in [tail, head) and a live slot is never reused. A reply is
 * matched by its request id and checked against the slot's source port.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_udp.h>

#include "loadgen.h"

#define MAX_BURST   64
#define HDR_LEN	    (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))
#define RESULT_NONE 0xff
#define IDLE_TURNS  64 /* empty turns before an --idle-us sleep */

const char *const lg_ctr_names[LG_CTR_COUNT] = {
#define LG_CTR_NAME(e, s) [LG_CTR_##e] = s,
	LG_FOREACH_CTR(LG_CTR_NAME)
#undef LG_CTR_NAME
};

enum gen_mode {
	MODE_RUN,
	MODE_PRELOAD,
};

struct lg_gen {
	struct lg_env e;
	const struct lg_opts *o;
	struct lg_slot *slots; /* LG_IDS entries */
	uint32_t head;	       /* next request number */
	uint32_t tail;	       /* oldest request number not retired */
	uint32_t inflight;
	uint32_t window;
	uint64_t timeout_tsc;
	struct lg_rng rng;
	uint16_t ip_id;
	uint8_t hdr[LG_HDR_LEN];	  /* Ethernet + IPv4 + UDP of every request */
	struct lg_tmpl tmpl[2]; /* enum lg_op: a GET's and a SET's whole frame */
	struct lg_expect expect[2]; /* enum lg_op: the reply a hit gets (GET only) */

	/* Built but not yet taken by the port (the port's ring was full). */
	struct rte_mbuf *pending[MAX_BURST];
	uint32_t pending_id[MAX_BURST];
	uint16_t npending;

	/* The current phase. */
	enum gen_mode mode;
	struct lg_phase_result *r;
	uint64_t *ctr;
	uint64_t t0;
	uint64_t issued; /* requests built in this phase (the rate schedule counts these) */
	uint64_t limit;	 /* paced trial: requests it offers in all (0: no limit) */
	double rate;	 /* requests per second, 0: unpaced */

	/* Preload: which keys are stored, where the current pass is. */
	uint64_t *stored;
	uint32_t preload_next;

	/* Progress line. */
	uint64_t next_progress;
	uint64_t last_progress;
	uint64_t last_ctr[LG_CTR_COUNT];
	struct lg_hist ival;	  /* the last second's latencies: lat less lat_mark */
	struct lg_hist lat_mark;  /* the run's histogram at the last progress line */
	uint32_t last_bucket; /* first series bucket not yet shown on a progress line */

	struct lg_node *node; /* the node emulator, with --nodes */
	uint16_t pending_q;   /* the queue the pending requests go to */
	uint16_t next_q;      /* the queue the next burst of requests goes to */

	uint32_t idle_turns; /* loop turns in a row without work */
	bool resolving;
	bool resolved;
	struct mc_reply_parser rp;
};

/* ---------------------------------------------------------------- packets */

/* The request templates for the current peer MAC (tmpl.c); 0 or -ENOMEM. */
static int build_template(struct lg_gen *g)
{
	lg_frame_hdr_init(g->hdr, &g->e.src_mac, &g->e.dst_mac, g->o);
	for (int op = LG_OP_GET; op <= LG_OP_SET; op++) {
		lg_tmpl_free(&g->tmpl[op]);
		if (lg_tmpl_init(&g->tmpl[op], g->e.req, (enum lg_op)op, g->hdr) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Request number @p n as a frame into @p m: its kind's template, the request's fields. */
static void build_request(struct lg_gen *g, struct rte_mbuf *m, uint32_t n, enum lg_op op,
			  uint32_t key)
{
	uint16_t sport = (uint16_t)(g->o->sport_base + n % g->o->sport_count);

	m->data_len = (uint16_t)lg_tmpl_write(&g->tmpl[op], key, n, sport, g->ip_id++,
					      rte_pktmbuf_mtod(m, uint8_t *));
	m->pkt_len = m->data_len;

	struct lg_slot *s = &g->slots[(uint16_t)n];
	s->live = 1;
	s->op = (uint8_t)op;
	s->key = key;
	s->sport = sport;
	s->total = 0;
	s->got = 0;
	s->seen = 0;
	s->result = RESULT_NONE;
	s->tsc = 0; /* set by tx_flush() when the port takes it */
}

static void send_arp(struct lg_gen *g, uint32_t target_ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(g->e.pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;

	if (m == NULL) {
		g->ctr[LG_CTR_ALLOC_FAILED]++;
		return;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eth + 1);
	memset(&eth->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	rte_ether_addr_copy(&g->e.src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&g->e.src_mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = g->o->src_ip;
	memset(&a->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	a->arp_data.arp_tip = target_ip;
	m->data_len = (uint16_t)(sizeof(*eth) + sizeof(*a));
	m->pkt_len = m->data_len;
	if (rte_eth_tx_burst(g->o->port_id, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
}

/* ARP: answer requests for our address (the peer needs our MAC to reply); while resolving,
 * learn the next hop's MAC from anything it says. Returns true when @p m was reused. */
static bool rx_arp(struct lg_gen *g, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);
	struct rte_arp_ipv4 *d = &a->arp_data;

	if (m->data_len < sizeof(*eth) + sizeof(*a) ||
	    a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4) {
		g->ctr[LG_CTR_RX_OTHER]++;
		return false;
	}
	if (g->resolving && d->arp_sip == g->o->gw_ip) {
		rte_ether_addr_copy(&d->arp_sha, &g->e.dst_mac);
		g->resolved = true;
	}
	if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    (d->arp_tip != g->o->src_ip && !lg_node_owns(g->node, d->arp_tip)))
		return false;
	/* Turn the request into the reply, in place (for us or an emulated node). */
	uint32_t tip = d->arp_tip;

	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	rte_ether_addr_copy(&d->arp_sha, &d->arp_tha);
	d->arp_tip = d->arp_sip;
	rte_ether_addr_copy(&g->e.src_mac, &d->arp_sha);
	d->arp_sip = tip;
	rte_ether_addr_copy(&eth->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(&g->e.src_mac, &eth->src_addr);
	m->data_len = (uint16_t)(sizeof(*eth) + sizeof(*a));
	m->pkt_len = m->data_len;
	if (rte_eth_tx_burst(g->o->port_id, 0, &m, 1) != 1)
		rte_pktmbuf_free(m);
	else
		g->ctr[LG_CTR_ARP_REPLIES_SENT]++;
	return true;
}

/* ---------------------------------------------------------------- replies */

static void retire(struct lg_gen *g, struct lg_slot *s)
{
	s->live = 0;
	g->inflight--;
}

/* The timed run's series: @p what in the bucket of @p s's send time. */
static void series_add(struct lg_gen *g, const struct lg_slot *s, enum lg_series_what what)
{
	if (g->r->series.b != NULL && s->tsc >= g->t0)
		lg_series_add(&g->r->series, s->tsc - g->t0, what);
}

/* The reply to @p s is whole: count its latency and what it said. */
static void complete(struct lg_gen *g, struct lg_slot *s, uint64_t now)
{
	uint64_t lat = now - s->tsc;
	uint64_t *c = g->ctr;

	lg_hist_add(&g->r->lat, lat); /* the progress line's second: by difference */
	c[LG_CTR_REPLIES]++;
	if (s->op == LG_OP_GET) {
		if (s->result == MC_RES_HIT) {
			c[LG_CTR_HITS]++;
			series_add(g, s, LG_SER_HIT);
		} else if (s->result == MC_RES_MISS || s->result == MC_RES_END) {
			c[LG_CTR_MISSES]++; /* ASCII: a bare END */
			series_add(g, s, LG_SER_MISS);
		} else {
			c[LG_CTR_ERRORS]++;
		}
	} else {
		if (s->result == MC_RES_OK) {
			c[LG_CTR_STORED]++;
			if (g->mode == MODE_PRELOAD)
				g->stored[s->key / 64] |= 1ULL << (s->key % 64);
		} else if (s->result == MC_RES_FAIL) {
			c[LG_CTR_NOT_STORED]++;
		} else {
			c[LG_CTR_ERRORS]++;
		}
	}
	retire(g, s);
}

/* Datagram 0 of a reply: what it says (hit, miss, stored, error), with mcproto. A one-datagram
 * reply is also checked for being a whole reply to the request sent. */
static void classify(struct lg_gen *g, struct lg_slot *s, const uint8_t *p, uint32_t len,
		     bool whole)
{
	struct mc_reply_event ev;
	bool first = true, one_hit = false, more = false;
	int rc;

	/* The common reply, a whole hit like the last one the parser saw: no parse. */
	if (whole && len >= MC_FRAME_HDR_LEN &&
	    lg_expect_match(&g->expect[s->op], p + MC_FRAME_HDR_LEN, len - MC_FRAME_HDR_LEN)) {
		s->result = MC_RES_HIT;
		return;
	}
	mc_reply_init(&g->rp);
	if (whole)
		mc_reply_expect(&g->rp, g->e.req->tmpl[s->op]);
	if (mc_reply_feed_datagram(&g->rp, p, len) != MC_OK)
		goto bad;
	while ((rc = mc_reply_next(&g->rp, &ev)) != MC_EV_MORE) {
		if (rc < 0)
			goto bad;
		if (rc == MC_EV_ITEM && !first && ev.result != MC_RES_END)
			more = true; /* another item than ASCII's END */
		if (rc != MC_EV_ITEM || !first)
			continue;
		first = false;
		s->result = ev.result;
		one_hit = ev.result == MC_RES_HIT && ev.value_len == g->o->value_size;
		if (ev.result == MC_RES_HIT && ev.value_len != g->o->value_size)
			g->ctr[LG_CTR_VALUE_SIZE_MISMATCH]++;
	}
	if (!first && (!whole || mc_reply_done(&g->rp))) {
		/* A whole reply of one hit of the right size to a single-key GET: the template
		 * the next ones are compared with. */
		if (whole && one_hit && !more && s->op == LG_OP_GET && g->e.req->multiget == 1 &&
		    !g->expect[LG_OP_GET].valid)
			lg_expect_learn(&g->expect[LG_OP_GET], g->o->proto, p + MC_FRAME_HDR_LEN,
					len - MC_FRAME_HDR_LEN, g->e.keys->key_len);
		return;
	}
bad:
	s->result = MC_RES_ERROR;
	g->ctr[LG_CTR_RX_BAD_REPLY]++;
}

static void rx_reply(struct lg_gen *g, const uint8_t *p, uint32_t len, uint16_t dport, uint64_t now)
{
	struct mc_frame f;
	struct lg_slot *s;

	if (mc_frame_parse(p, len, &f) != MC_OK) {
		g->ctr[LG_CTR_RX_BAD_REPLY]++;
		return;
	}
	s = &g->slots[f.request_id];
	if (!s->live || s->sport != dport) {
		g->ctr[LG_CTR_RX_LATE]++;
		return;
	}
	if (f.total == 0 || f.seq >= f.total || (s->total != 0 && s->total != f.total)) {
		g->ctr[LG_CTR_RX_BAD_REPLY]++;
		return;
	}
	if (f.seq < 64) {
		if (s->seen & (1ULL << f.seq)) {
			g->ctr[LG_CTR_RX_DUPLICATE]++;
			return;
		}
		s->seen |= 1ULL << f.seq;
	}
	g->ctr[LG_CTR_RX_DATAGRAMS]++;
	s->total = f.total;
	if (f.seq == 0)
		classify(g, s, p, len, f.total == 1);
	if (++s->got == s->total)
		complete(g, s, now);
}

/* One received frame (queue @p q); returns true when it was reused (ARP reply). */
static bool rx_one(struct lg_gen *g, struct rte_mbuf *m, uint16_t q, uint64_t now)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp;
	uint32_t len = m->data_len, ihl, tot, ulen;
	uint16_t dport;

	if (len < sizeof(*eth)) {
		g->ctr[LG_CTR_RX_OTHER]++;
		return false;
	}
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return rx_arp(g, m);
	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    !rte_is_same_ether_addr(&eth->dst_addr, &g->e.src_mac) ||
	    len < sizeof(*eth) + sizeof(*ip)) {
		g->ctr[LG_CTR_RX_OTHER]++;
		return false;
	}
	len -= (uint32_t)sizeof(*eth);
	ihl = (uint32_t)(ip->version_ihl & 0x0f) * 4;
	tot = rte_be_to_cpu_16(ip->total_length);
	if (g->node != NULL && lg_node_owns(g->node, ip->dst_addr) && ihl == sizeof(*ip) &&
	    tot <= len && tot >= ihl + sizeof(*udp) && ip->next_proto_id == IPPROTO_UDP) {
		udp = (struct rte_udp_hdr *)(ip + 1);
		ulen = rte_be_to_cpu_16(udp->dgram_len);
		if (udp->dst_port == rte_cpu_to_be_16(g->o->node_port) && ulen >= sizeof(*udp) &&
		    ulen <= tot - ihl)
			return lg_node_rx(g->node, m, (const uint8_t *)(udp + 1),
					  ulen - (uint32_t)sizeof(*udp), q, now, g->ctr);
	}
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) || tot > len ||
	    tot < ihl + sizeof(*udp) || ip->dst_addr != g->o->src_ip ||
	    ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0) {
		g->ctr[LG_CTR_RX_OTHER]++;
		return false;
	}
	udp = (struct rte_udp_hdr *)((uint8_t *)ip + ihl);
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	dport = rte_be_to_cpu_16(udp->dst_port);
	if (ulen < sizeof(*udp) || ulen > tot - ihl || ip->src_addr != g->o->dst_ip ||
	    udp->src_port != rte_cpu_to_be_16(g->o->dst_port) ||
	    (uint16_t)(dport - g->o->sport_base) >= g->o->sport_count) {
		g->ctr[LG_CTR_RX_STRAY]++;
		return false;
	}
	rx_reply(g, (const uint8_t *)(udp + 1), ulen - (uint32_t)sizeof(*udp), dport, now);
	return false;
}

static uint16_t rx_poll_queue(struct lg_gen *g, uint16_t q)
{
	struct rte_mbuf *pkts[MAX_BURST], *done[MAX_BURST];
	uint16_t n = rte_eth_rx_burst(g->o->port_id, q, pkts, MAX_BURST), ndone = 0;
	uint64_t now;

	if (n == 0)
		return 0;
	now = rte_rdtsc();
	g->ctr[LG_CTR_RX_PACKETS] += n;
	for (uint16_t i = 0; i < n; i++) {
		g->ctr[LG_CTR_RX_BYTES] += pkts[i]->data_len;
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (!rx_one(g, pkts[i], q, now))
			done[ndone++] = pkts[i];
	}
	rte_pktmbuf_free_bulk(done, ndone); /* one mempool put for the burst */
	return n;
}

/* Every RX queue, then the node emulator's replies out (those due after their delay). */
static uint32_t rx_poll(struct lg_gen *g)
{
	uint32_t n = 0;

	for (uint16_t q = 0; q < g->o->queues; q++)
		n += rx_poll_queue(g, q);
	if (g->node != NULL)
		n += lg_node_poll(g->node, rte_rdtsc(), g->ctr);
	return n;
}

/* Requests older than the timeout are lost; advance tail over retired ones. */
static void expire(struct lg_gen *g, uint64_t now, bool all)
{
	while (g->tail != g->head) {
		struct lg_slot *s = &g->slots[(uint16_t)g->tail];

		if (s->live) {
			if (!all && now - s->tsc < g->timeout_tsc)
				break;
			/* Still pending (never sent) requests are not lost: the caller frees them.
			 */
			g->ctr[LG_CTR_LOST]++;
			series_add(g, s, LG_SER_LOST);
			retire(g, s);
		}
		g->tail++;
	}
}

/* ---------------------------------------------------------------- sending */

/* Hand the pending requests to the port; their send time is now. */
static void tx_flush(struct lg_gen *g)
{
	uint64_t now = rte_rdtsc();
	uint16_t sent, len[MAX_BURST];

	/* Lengths first: the port owns (and may free) what it takes. */
	for (uint16_t i = 0; i < g->npending; i++) {
		g->slots[(uint16_t)g->pending_id[i]].tsc = now;
		len[i] = g->pending[i]->data_len;
	}
	sent = rte_eth_tx_burst(g->o->port_id, g->pending_q, g->pending, g->npending);
	for (uint16_t i = 0; i < sent; i++) {
		struct lg_slot *s = &g->slots[(uint16_t)g->pending_id[i]];

		g->ctr[LG_CTR_SENT]++;
		g->ctr[s->op == LG_OP_GET ? LG_CTR_SENT_GET : LG_CTR_SENT_SET]++;
		g->ctr[LG_CTR_TX_BYTES] += len[i];
	}
	if (sent < g->npending) {
		g->ctr[LG_CTR_TX_RETRIES]++;
		memmove(g->pending, g->pending + sent,
			sizeof(g->pending[0]) * (g->npending - sent));
		memmove(g->pending_id, g->pending_id + sent,
			sizeof(g->pending_id[0]) * (g->npending - sent));
	}
	g->npending = (uint16_t)(g->npending - sent);
}

/* Drop requests built but never taken by the port (end of a phase): they were not sent. */
static void tx_discard(struct lg_gen *g)
{
	for (uint16_t i = 0; i < g->npending; i++) {
		retire(g, &g->slots[(uint16_t)g->pending_id[i]]);
		rte_pktmbuf_free(g->pending[i]);
	}
	g->npending = 0;
}

/* The next key the current pass of the preload has to SET; false when the pass is done. */
static bool preload_key(struct lg_gen *g, uint32_t *key)
{
	while (g->preload_next < g->e.keys->n) {
		uint32_t k = g->preload_next++;

		if (!(g->stored[k / 64] & (1ULL << (k % 64)))) {
			*key = k;
			return true;
		}
	}
	return false;
}

/* How many requests the schedule, the window and the id space allow now. */
static uint32_t tx_due(struct lg_gen *g, uint64_t now)
{
	uint32_t due = g->o->burst, room;

	if (g->rate > 0) {
		uint64_t target = (uint64_t)((double)(now - g->t0) * g->rate / (double)g->e.hz) + 1;

		if (g->limit != 0 && target > g->limit)
			target = g->limit;
		if (target <= g->issued)
			return 0;
		if (target - g->issued < due)
			due = (uint32_t)(target - g->issued);
	}
	room = g->window - g->inflight;
	if (LG_IDS - (g->head - g->tail) < room)
		room = LG_IDS - (g->head - g->tail);
	if (room < due) {
		g->ctr[LG_CTR_WINDOW_FULL]++;
		due = room;
	}
	return due;
}

/* Returns the number of requests built (0 when nothing was due or only a retry was made). */
static uint32_t tx_step(struct lg_gen *g, uint64_t now)
{
	struct rte_mbuf *m[MAX_BURST];
	uint32_t due, n = 0;

	if (g->npending > 0) {
		tx_flush(g);
		return 1;
	}
	due = tx_due(g, now);
	if (due == 0)
		return 0;
	if (rte_pktmbuf_alloc_bulk(g->e.pool, m, due) != 0) {
		g->ctr[LG_CTR_ALLOC_FAILED]++;
		return 0;
	}
	for (; n < due; n++) {
		enum lg_op op = LG_OP_SET;
		uint32_t key;

		if (g->mode == MODE_PRELOAD) {
			if (!preload_key(g, &key))
				break;
		} else {
			if (g->o->get_ratio >= 1.0 || lg_rand01(&g->rng) < g->o->get_ratio)
				op = LG_OP_GET;
			key = lg_keys_pick(g->e.keys, &g->rng);
		}
		build_request(g, m[n], g->head, op, key);
		g->pending[n] = m[n];
		g->pending_id[n] = g->head;
		g->head++;
		g->inflight++;
	}
	if (n < due)
		rte_pktmbuf_free_bulk(m + n, due - n);
	g->issued += n;
	g->npending = (uint16_t)n;
	/* Bursts go to the queues in turn (net_memif has no RSS: the sender picks the queue). */
	g->pending_q = g->next_q;
	g->next_q = (uint16_t)((g->next_q + 1) % g->o->queues);
	if (n > 0)
		tx_flush(g);
	return n;
}

/* ---------------------------------------------------------------- progress */

static double cyc_us(const struct lg_gen *g, uint64_t c)
{
	return (double)c * 1e6 / (double)g->e.hz;
}

/* The latencies recorded since @p mark into @p iv: @p now less @p mark, bucket by bucket;
 * min and max are the bounds of the lowest and highest bucket used (within the histogram's
 * own 1/64), the exact ones of a second not being kept. */
static void hist_since(struct lg_hist *iv, const struct lg_hist *now, const struct lg_hist *mark)
{
	lg_hist_reset(iv);
	iv->count = now->count - mark->count;
	iv->sum = now->sum - mark->sum;
	iv->min = UINT64_MAX;
	for (unsigned int i = 0; i < LG_HIST_BUCKETS; i++) {
		iv->b[i] = now->b[i] - mark->b[i];
		if (iv->b[i] == 0)
			continue;
		if (iv->min == UINT64_MAX)
			iv->min = lg_hist_low(i);
		iv->max = i + 1 < LG_HIST_BUCKETS ? lg_hist_low(i + 1) - 1 : UINT64_MAX;
	}
	if (iv->count == 0)
		lg_hist_reset(iv);
}

static void progress(struct lg_gen *g, uint64_t now)
{
	const uint64_t *c = g->ctr;
	double dt = (double)(now - g->last_progress) / (double)g->e.hz;
	uint64_t gets = c[LG_CTR_HITS] + c[LG_CTR_MISSES];
	uint64_t hits1 = c[LG_CTR_HITS] - g->last_ctr[LG_CTR_HITS];
	uint64_t gets1 = gets - g->last_ctr[LG_CTR_HITS] - g->last_ctr[LG_CTR_MISSES];
	char ival[64] = "";

	/* The timed run: the last second's hit ratio and its lowest series bucket among those
	 * whose sending time is over (their replies are in, bar the lost ones). */
	if (g->r != NULL && g->r->series.b != NULL && now > g->t0) {
		const struct lg_series *sr = &g->r->series;
		uint32_t cur = lg_series_index(sr, now - g->t0);
		double min = lg_series_min(sr, g->last_bucket, cur, NULL);

		snprintf(ival, sizeof(ival), " (1s %.1f%%, %ums min %.1f%%)",
			 gets1 ? 100.0 * (double)hits1 / (double)gets1 : 0.0, g->o->series_ms,
			 min < 0 ? 0.0 : 100.0 * min);
		g->last_bucket = cur;
	}
	if (!g->o->quiet && g->r != NULL)
		hist_since(&g->ival, &g->r->lat, &g->lat_mark);
	if (!g->o->quiet)
		fprintf(stderr,
			"loadgen %s %5.1fs: sent %" PRIu64 " (%.0f/s) replies %" PRIu64
			" (%.0f/s) lost %" PRIu64 " hit %.1f%%%s in-flight %u"
			" | p50 %.1fus p99 %.1fus p99.9 %.1fus\n",
			g->mode == MODE_PRELOAD ? "preload" : "run",
			(double)(now - g->t0) / (double)g->e.hz, c[LG_CTR_SENT],
			(double)(c[LG_CTR_SENT] - g->last_ctr[LG_CTR_SENT]) / dt, c[LG_CTR_REPLIES],
			(double)(c[LG_CTR_REPLIES] - g->last_ctr[LG_CTR_REPLIES]) / dt,
			c[LG_CTR_LOST], gets ? 100.0 * (double)c[LG_CTR_HITS] / (double)gets : 0.0,
			ival, g->inflight, cyc_us(g, lg_hist_quantile(&g->ival, 0.5)),
			cyc_us(g, lg_hist_quantile(&g->ival, 0.99)),
			cyc_us(g, lg_hist_quantile(&g->ival, 0.999)));
	memcpy(g->last_ctr, c, sizeof(g->last_ctr));
	if (!g->o->quiet && g->r != NULL)
		g->lat_mark = g->r->lat;
	g->last_progress = now;
	g->next_progress = now + g->e.hz;
}

/* ---------------------------------------------------------------- phases */

static void phase_begin(struct lg_gen *g, enum gen_mode mode, struct lg_phase_result *r)
{
	memset(r->ctr, 0, sizeof(r->ctr));
	lg_hist_reset(&r->lat);
	lg_hist_reset(&g->ival);
	lg_hist_reset(&g->lat_mark);
	g->mode = mode;
	g->r = r;
	g->ctr = r->ctr;
	g->t0 = rte_rdtsc();
	g->issued = 0;
	g->last_bucket = 0;
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		r->start_unix = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	}
	g->last_progress = g->t0;
	g->next_progress = g->t0 + g->e.hz;
	memset(g->last_ctr, 0, sizeof(g->last_ctr));
}

/* Wait for the replies still in flight (up to the timeout), then count the rest as lost. */
static void phase_drain(struct lg_gen *g)
{
	uint64_t end;

	tx_discard(g);
	end = rte_rdtsc() + g->timeout_tsc;
	while (g->inflight > 0 || (g->node != NULL && lg_node_pending(g->node) > 0)) {
		/* also after SIGINT: bounded by the timeout */
		uint64_t now = rte_rdtsc();

		if (now >= end)
			break;
		rx_poll(g);
		expire(g, now, false);
	}
	expire(g, rte_rdtsc(), true);
}

/* One turn of the loop: replies in, timeouts, requests out, progress; with --idle-us, a
 * short sleep after a run of turns that found nothing to do. */
static void step(struct lg_gen *g, uint64_t now)
{
	uint32_t work = rx_poll(g);

	expire(g, now, false);
	work += tx_step(g, now);
	if (now >= g->next_progress)
		progress(g, now);
	if (work != 0 || g->o->idle_us == 0) {
		g->idle_turns = 0;
	} else if (++g->idle_turns >= IDLE_TURNS) {
		rte_delay_us_sleep(g->o->idle_us);
		g->idle_turns = 0;
	}
}

/* The timed run, with its hit ratio over time: buckets for the run, its catch-up (as long
 * again at most) and the drain; later results count in the last bucket. */
void lg_gen_run(struct lg_gen *g, struct lg_phase_result *r)
{
	uint64_t ival = (uint64_t)g->o->series_ms * g->e.hz / 1000;
	double span_ms = 2 * g->o->duration_s * 1000 + g->o->timeout_ms;
	uint32_t n = (uint32_t)(span_ms / g->o->series_ms) + 2;

	if (lg_series_init(&r->series, ival, n) != 0)
		fprintf(stderr, "loadgen: no memory for the hit ratio series (%u buckets)\n", n);
	lg_gen_trial(g, g->o->rate, g->o->duration_s, r);
}

void lg_gen_trial(struct lg_gen *g, double rate, double seconds, struct lg_phase_result *r)
{
	uint64_t end, now;

	phase_begin(g, MODE_RUN, r);
	g->rate = rate;
	g->window = g->o->window;
	end = g->t0 + (uint64_t)(seconds * (double)g->e.hz);
	/* Paced: exactly rate x seconds requests are offered (RFC 2544 offers a fixed count); a
	 * generator descheduled near the end catches up, for at most as long again. */
	g->limit = rate > 0 ? (uint64_t)(rate * seconds) : 0;
	while (!*g->e.stop && (now = rte_rdtsc()) < end)
		step(g, now);
	while (!*g->e.stop && g->limit != 0 && g->issued < g->limit &&
	       (now = rte_rdtsc()) < end + (end - g->t0))
		step(g, now);
	g->limit = 0;
	r->elapsed_s = (double)(rte_rdtsc() - g->t0) / (double)g->e.hz;
	phase_drain(g);
	progress(g, rte_rdtsc());
}

void lg_gen_preload(struct lg_gen *g, unsigned int passes, struct lg_phase_result *r)
{
	phase_begin(g, MODE_PRELOAD, r);
	/* Unpaced, the preload keeps a modest window so the target does not drop most of it. */
	g->rate = g->o->rate;
	g->window = g->rate > 0 ? g->o->window : RTE_MIN(g->o->window, 256u);
	for (unsigned int pass = 0; pass < passes && !*g->e.stop; pass++) {
		g->preload_next = 0;
		if (lg_gen_preload_missing(g) == 0)
			break;
		while (!*g->e.stop && (g->preload_next < g->e.keys->n || g->npending > 0))
			step(g, rte_rdtsc());
		phase_drain(g);
	}
	r->elapsed_s = (double)(rte_rdtsc() - g->t0) / (double)g->e.hz;
	progress(g, rte_rdtsc());
}

void lg_gen_settle(struct lg_gen *g, uint32_t ms)
{
	struct lg_phase_result *scratch = calloc(1, sizeof(*scratch));
	uint64_t end = rte_rdtsc() + (uint64_t)ms * g->e.hz / 1000;

	if (scratch == NULL)
		return;
	phase_begin(g, MODE_RUN, scratch);
	while (!*g->e.stop && rte_rdtsc() < end)
		rx_poll(g);
	free(scratch);
	g->r = NULL;
	g->ctr = NULL;
}

uint32_t lg_gen_preload_missing(const struct lg_gen *g)
{
	uint32_t missing = 0;

	for (uint32_t k = 0; k < g->e.keys->n; k++)
		if (!(g->stored[k / 64] & (1ULL << (k % 64))))
			missing++;
	return missing;
}

int lg_gen_resolve(struct lg_gen *g, struct lg_env *env, uint32_t timeout_ms)
{
	struct lg_phase_result *scratch = calloc(1, sizeof(*scratch));
	uint64_t start = rte_rdtsc(), next = start, end = start + timeout_ms * g->e.hz / 1000;

	if (scratch == NULL)
		return -ENOMEM;
	phase_begin(g, MODE_RUN, scratch);
	g->resolving = true;
	while (!g->resolved && !*g->e.stop) {
		uint64_t now = rte_rdtsc();

		if (now >= end)
			break;
		if (now >= next) {
			send_arp(g, g->o->gw_ip);
			next = now + g->e.hz / 5;
		}
		rx_poll(g);
	}
	g->resolving = false;
	free(scratch);
	g->r = NULL;
	g->ctr = NULL;
	if (!g->resolved)
		return -ETIMEDOUT;
	env->dst_mac = g->e.dst_mac;
	return build_template(g);
}

struct lg_gen *lg_gen_create(const struct lg_env *env)
{
	struct lg_gen *g = calloc(1, sizeof(*g));

	if (g == NULL)
		return NULL;
	g->e = *env;
	g->o = env->o;
	g->slots = calloc(LG_IDS, sizeof(*g->slots));
	g->stored = calloc((env->keys->n + 63) / 64, sizeof(uint64_t));
	if (g->slots == NULL || g->stored == NULL) {
		lg_gen_free(g);
		errno = ENOMEM;
		return NULL;
	}
	g->timeout_tsc = (uint64_t)g->o->timeout_ms * env->hz / 1000;
	g->rng.s = g->o->seed ? g->o->seed : 0x9e3779b97f4a7c15ULL;
	g->window = g->o->window;
	if (build_template(g) != 0) {
		lg_gen_free(g);
		errno = ENOMEM;
		return NULL;
	}
	if (g->o->nodes) {
		g->node = lg_node_create(&g->e);
		if (g->node == NULL) {
			lg_gen_free(g);
			errno = ENOMEM;
			return NULL;
		}
	}
	return g;
}

void lg_gen_free(struct lg_gen *g)
{
	if (g == NULL)
		return;
	lg_node_free(g->node);
	lg_tmpl_free(&g->tmpl[LG_OP_GET]);
	lg_tmpl_free(&g->tmpl[LG_OP_SET]);
	free(g->slots);
	free(g->stored);
	free(g);
}
