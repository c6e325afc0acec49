/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Warm-up routing on membership changes (issue 14). For [warmup] window_s after a change,
 * each worker holds the placement before it (dp_worker.prev_view) next to the current one; a
 * key whose owner differs between the two "moved".
 *
 * Worker lcore (called by dp_worker.c, calls down into dp_tx.h only):
 *   - a single-key read of a moved key goes to its new owner as usual; the request's bytes
 *     are kept in a warm context bound to its slot. When the new owner answers with a miss,
 *     the miss is absorbed (counted: warm_absorbed, a term of the accounting identity) and
 *     the worker sends the same request to the previous owner from a second slot that
 *     answers the same client. Its reply goes to the client whatever it says; a hit (one
 *     datagram) is also written to the new owner with `add ... noreply` (never `set`: a
 *     client's write at the new owner wins), with the remaining TTL when the reply says it
 *     (meta `t`; beyond 30 days as the absolute time memcached needs, mc_exptime_write) and
 *     [warmup] ttl_s otherwise.
 *   - a write, delete, arith or touch of a moved key goes to the new owner as usual and a
 *     `delete KEY noreply` to the previous owner, so the warm path cannot bring back a value
 *     older than that write.
 *   Packets the router builds here (gets to previous owners, adds, deletes) are counted apart
 *   (warm_requests, warm_fills, warm_deletes) and are not rx packets.
 *
 * Membership flips (issue 27): the placements the last DP_FLIP_HELD membership changes
 * replaced are held after the window too (and with warm-up off), newest first (prev_view,
 * then each view's older): every write of a key whose owner differs in one of them still
 * sends `delete KEY noreply` to that owner (counted moved_deletes; once per owner). So after
 * add N / remove N (or remove N / add N back, N running meanwhile), and after up to
 * DP_FLIP_HELD changes with one undone (weight W, add M, remove W: soak seeds 3013 and
 * 3015 found a key moved by the first change, written only after the second, read at its
 * first owner after the third, when one placement was held), the node the key returns to
 * holds no value older than a write made while the key was away. Reads do not look outside
 * the window, and only at the newest (the get path pays two loads). A held placement ends
 * when DP_FLIP_HELD newer ones are held (cut from the chain, freed after the RCU
 * synchronize of the publication), or at exit (dp_warm_free), or when memory runs short
 * (dp_warm_forget); the chain holds the endpoints it names (warm_hold), so a removed node's
 * entry is not reclaimed before then.
 *
 * Control lcore: dp_warm_rotate (from dp_publish_placement: the view being replaced becomes
 * the previous placement, also while a window is open; the window restarts), the window's
 * end (dp_warm_poll on time, dp_warm_end early: reads stop following), its state and memory.
 */

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>

#include "dp_tx.h"

/* ---- worker lcore ------------------------------------------------------------------------ */

/* The endpoint owning key @p k, @p len bytes, in view @p v, or -1. */
static int64_t view_owner_ep(const struct dp_view *v, const uint8_t *k, size_t len)
{
	int32_t idx = pl_lookup_hash(v->pl, pl_key_hash(v->pl, k, len));

	return idx < 0 ? -1 : (int64_t)v->ep[idx];
}

/* ASCII can carry the key (no space, CR, LF): the router's own packets are ASCII `noreply`
 * commands, which memcached never answers, whatever protocol the client spoke. */
static bool key_ascii_safe(const uint8_t *k, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (k[i] == ' ' || k[i] == '\r' || k[i] == '\n' || k[i] == 0)
			return false;
	return len != 0;
}

/* Send @p body (@p len bytes) in a new datagram with frame header (@p reqid, 0, 1) to
 * endpoint @p ep from source port @p sport (host order), tagged @p tag (slot @p s). */
static bool warm_send(struct dp_worker *w, uint32_t ep, bool vlan, uint16_t vlan_tci,
		      uint16_t sport, uint16_t reqid, const void *body, size_t len,
		      enum dp_tx_tag tag, uint32_t s)
{
	uint64_t mac = atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed);
	uint16_t l2;

	if (w->node_vlan_fixed) { /* the node port's own VLAN, not the client's */
		vlan = w->node_vlan_tagged;
		vlan_tci = w->node_vlan_tci;
	}
	l2 = (uint16_t)(sizeof(struct rte_ether_hdr) + (vlan ? 4 : 0));
	uint16_t hdr = (uint16_t)(l2 + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr));
	struct rte_mbuf *o;
	uint8_t *p;

	if (!(mac & DP_MAC_VALID) || len + MC_FRAME_HDR_LEN > MC_UDP_PAYLOAD_MAX)
		return false;
	o = rte_pktmbuf_alloc(w->pool);
	if (o == NULL || rte_pktmbuf_tailroom(o) < hdr + MC_FRAME_HDR_LEN + len) {
		rte_pktmbuf_free(o);
		w->ctr[DP_CTR_WARM_TX_FAILED]++;
		return false;
	}
	p = rte_pktmbuf_mtod(o, uint8_t *);
	p[hdr] = (uint8_t)(reqid >> 8);
	p[hdr + 1] = (uint8_t)reqid;
	memcpy(p + hdr + 2, "\0\0\0\x01\0\0", 6);
	memcpy(p + hdr + MC_FRAME_HDR_LEN, body, len);
	o->data_len = (uint16_t)(hdr + MC_FRAME_HDR_LEN + len);
	if (!dp_udp_build_ep(w, o, (const uint8_t *)&mac, vlan, vlan_tci, ep,
			     rte_cpu_to_be_16(sport), rte_cpu_to_be_16(w->eps[ep].port))) {
		rte_pktmbuf_free(o);
		w->ctr[DP_CTR_WARM_TX_FAILED]++;
		return false;
	}
	if (tag == DP_TX_WARM_GET)
		dp_tx_push_fwd_tag(w, o, ep, s, DP_TX_WARM_GET);
	else
		dp_tx_push(w, o, tag, ep);
	return true;
}

/* `delete KEY noreply` to the previous owner @p prev of a key written through the router
 * (tagged @p tag: in the window, or after it). */
static void warm_delete(struct dp_worker *w, const struct dp_pkt *pk, uint32_t prev,
			const uint8_t *k, size_t len, enum dp_tx_tag tag)
{
	char buf[MC_KEY_MAX + 32];
	size_t n;

	if (!key_ascii_safe(k, len)) {
		w->ctr[DP_CTR_WARM_UNSAFE_KEYS]++;
		return;
	}
	memcpy(buf, "delete ", 7);
	memcpy(buf + 7, k, len);
	memcpy(buf + 7 + len, " noreply\r\n", 10);
	n = 7 + len + 10;
	warm_send(w, prev, pk->vlan,
		  pk->vlan ? ((const struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci : 0,
		  w->probe_port, 0, buf, n, tag, DP_NO_SLOT);
}

/* A single-key read the warm path follows: one keyed request, a get/gets/mg or binary
 * GET/GETK/GETQ/GETKQ, perhaps followed by mn / NOOP. */
static bool warm_read_shape(const struct mc_requests *r)
{
	const struct mc_request *q = &r->req[r->keys[0].req];

	if (r->nkeys != 1 || q->kind != MC_KIND_READ || r->nreq > 2)
		return false;
	if (r->nreq == 2 && r->req[1].cmd != MC_CMD_MN && r->req[1].cmd != MC_CMD_NOOP)
		return false;
	return q->cmd == MC_CMD_GET || q->cmd == MC_CMD_GETS || q->cmd == MC_CMD_MG;
}

/* A write of key @p k (@p len bytes) going to @p ep: `delete KEY noreply` at each other owner
 * it has in the held placements (@p pv newest, owner there @p prev), once per owner. */
static void held_deletes(struct dp_worker *w, const struct dp_pkt *pk, const struct dp_view *pv,
			 uint32_t ep, int64_t prev, const uint8_t *k, size_t len)
{
	uint32_t done[DP_FLIP_HELD];
	uint32_t n = 0;

	for (int d = 0; pv != NULL && d < DP_FLIP_HELD; d++) {
		bool seen = prev < 0 || (uint32_t)prev == ep;

		for (uint32_t i = 0; !seen && i < n; i++)
			seen = done[i] == (uint32_t)prev;
		if (!seen) {
			warm_delete(w, pk, (uint32_t)prev, k, len,
				    w->warm_reads && d == 0 ? DP_TX_WARM_DELETE
							    : DP_TX_MOVED_DELETE);
			done[n++] = (uint32_t)prev;
		} else if (d == 0) {
			w->ctr[DP_CTR_WARM_UNMOVED] += w->warm_reads;
		}
		pv = atomic_load_explicit(&pv->older, memory_order_acquire);
		if (pv != NULL)
			prev = view_owner_ep(pv, k, len);
	}
}

int dp_warm_request(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		    uint32_t ep)
{
	const struct dp_view *pv = w->prev_cur;
	uint8_t buf[MC_KEY_MAX];
	int ctx = -1;

	for (uint16_t k = 0; k < r->nkeys; k++) {
		size_t len = mc_key_decode(pk->payload, &r->keys[k], buf);
		int64_t prev = view_owner_ep(pv, buf, len);
		uint8_t kind = r->req[r->keys[k].req].kind;

		if (kind != MC_KIND_READ) {
			held_deletes(w, pk, pv, ep, prev, buf, len);
			continue;
		}
		if (prev < 0 || (uint32_t)prev == ep) {
			w->ctr[DP_CTR_WARM_UNMOVED] += w->warm_reads;
			continue;
		}
		if (!w->warm_reads)
			continue; /* the window is closed: reads stay with the new owner */
		w->ctr[DP_CTR_WARM_MOVED_READS]++;
		if (!warm_read_shape(r) || pk->plen - MC_FRAME_HDR_LEN > DP_WARM_REQ_MAX) {
			w->ctr[DP_CTR_WARM_NOT_FOLLOWED]++;
			continue;
		}
		struct dp_warm_ctx *c = &w->warm[w->warm_next];

		ctx = (int)w->warm_next;
		w->warm_next = (w->warm_next + 1) & (DP_WARM_CTX - 1);
		c->slot = DP_NO_SLOT; /* bound by dp_warm_bind() */
		c->new_ep = ep;
		c->prev_ep = (uint32_t)prev;
		c->stage = 1;
		c->proto = r->req[0].proto;
		c->key_len = (uint8_t)len;
		memcpy(c->key, buf, len);
		c->req_len = (uint16_t)(pk->plen - MC_FRAME_HDR_LEN);
		memcpy(c->req, pk->payload + MC_FRAME_HDR_LEN, c->req_len);
	}
	return ctx;
}

void dp_warm_writes(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		    uint32_t owner, uint16_t first)
{
	const struct dp_view *pv = w->prev_cur;
	uint8_t buf[MC_KEY_MAX];

	for (uint16_t k = 0; k < r->nkeys; k++)
		if (r->keys[k].req >= first && r->req[r->keys[k].req].kind != MC_KIND_READ) {
			size_t len = mc_key_decode(pk->payload, &r->keys[k], buf);

			held_deletes(w, pk, pv, owner, view_owner_ep(pv, buf, len), buf, len);
		}
}

void dp_warm_bind(struct dp_worker *w, uint32_t ctx, uint32_t s)
{
	struct dp_warm_ctx *c = &w->warm[ctx];

	c->slot = s;
	c->tsc = w->slots[s].tsc;
	c->reqid = w->slots[s].reqid;
	w->warm_of_slot[s] = (uint16_t)ctx;
	w->warm_gate = w->now + 2 * w->timeout_tsc;
}

/* The live warm context of slot @p s, or NULL (none, or one outlived by the slot's use). */
static struct dp_warm_ctx *ctx_of(struct dp_worker *w, uint32_t s)
{
	uint16_t i = w->warm_of_slot[s];
	struct dp_warm_ctx *c;

	if (i == DP_NO_WARM)
		return NULL;
	c = &w->warm[i];
	if (c->slot != s || c->tsc != w->slots[s].tsc || c->reqid != w->slots[s].reqid) {
		w->warm_of_slot[s] = DP_NO_WARM;
		return NULL;
	}
	return c;
}

static void ctx_release(struct dp_worker *w, struct dp_warm_ctx *c, uint32_t s)
{
	c->slot = DP_NO_SLOT;
	w->warm_of_slot[s] = DP_NO_WARM;
}

/* What the first datagram of a reply says about the one read: 1 hit (with *ev its item
 * header), 0 miss, -1 neither or unreadable. */
static int reply_verdict(const struct dp_pkt *pk, struct mc_reply_parser *rp,
			 struct mc_reply_event *ev)
{
	mc_reply_init(rp);
	if (mc_reply_feed_datagram(rp, pk->payload, pk->plen) != MC_OK)
		return -1;
	if (mc_reply_next(rp, ev) != MC_EV_ITEM)
		return -1;
	if (ev->result == MC_RES_HIT)
		return 1;
	return ev->result == MC_RES_MISS || ev->result == MC_RES_END ? 0 : -1;
}

/* A decimal number at @p p (up to @p end): its value, *ok false when there is none. */
static uint64_t parse_u64(const uint8_t *p, const uint8_t *end, bool *ok)
{
	uint64_t v = 0;
	const uint8_t *s = p;

	while (p < end && *p >= '0' && *p <= '9' && p - s < 19)
		v = v * 10 + (uint64_t)(*p++ - '0');
	*ok = p != s;
	return v;
}

/* The client flags of a hit (and its remaining TTL in *ttl when the reply gives one, else
 * left as it is): ASCII "VALUE key flags bytes", meta "VA size ... f<flags> t<ttl>", binary
 * extras. false: the reply does not say the flags (meta without `f`): no fill. */
static bool hit_meta(const struct mc_reply_event *ev, uint32_t *flags, int64_t *ttl)
{
	const uint8_t *p = ev->head, *end = ev->head + ev->head_len;
	bool ok = false, have_flags = false;
	int field = 0;

	if (ev->proto == MC_PROTO_BINARY) {
		if (ev->head_len < 24 + 4 || ev->head[4] < 4)
			return false;
		*flags = (uint32_t)p[24] << 24 | (uint32_t)p[25] << 16 | (uint32_t)p[26] << 8 |
			 p[27];
		return true;
	}
	while (p < end && *p != '\r') {
		while (p < end && *p == ' ')
			p++;
		const uint8_t *t = p;

		while (p < end && *p != ' ' && *p != '\r')
			p++;
		if (ev->proto == MC_PROTO_ASCII && field == 2) {
			*flags = (uint32_t)parse_u64(t, p, &ok);
			have_flags = ok;
		} else if (ev->proto == MC_PROTO_META && field >= 2 && t < p) {
			if (*t == 'f') {
				*flags = (uint32_t)parse_u64(t + 1, p, &ok);
				have_flags = ok;
			} else if (*t == 't' && p - t >= 2) {
				if (t[1] == '-')
					*ttl = -1; /* no expiry */
				else if ((*ttl = (int64_t)parse_u64(t + 1, p, &ok)), !ok)
					*ttl = 0;
			}
		}
		field++;
	}
	return have_flags;
}

/* The hit of @p ev (whole in this datagram: @p rp has its value next) to the new owner as
 * `add KEY FLAGS TTL BYTES noreply`. */
static void warm_fill(struct dp_worker *w, struct dp_warm_ctx *c, const struct dp_slot *sl,
		      struct mc_reply_parser *rp, const struct mc_reply_event *head)
{
	uint8_t buf[MC_UDP_PAYLOAD_MAX];
	struct mc_reply_event ev;
	uint32_t flags = 0;
	int64_t ttl = (int64_t)w->warm_ttl_s;
	size_t n, got = 0;

	if (!key_ascii_safe(c->key, c->key_len)) {
		w->ctr[DP_CTR_WARM_UNSAFE_KEYS]++;
		return;
	}
	if (!hit_meta(head, &flags, &ttl) || ttl == 0) {
		w->ctr[DP_CTR_WARM_NOT_FILLED]++;
		return;
	}
	memcpy(buf, "add ", 4);
	memcpy(buf + 4, c->key, c->key_len);
	n = 4 + c->key_len;
	/* The remaining TTL in memcached's terms: above 30 days an absolute time (issue 27: a
	 * relative 40 days is read as a Unix time in 1970, the copy stored expired). */
	n += (size_t)snprintf((char *)buf + n, sizeof(buf) - n, " %u %u %u noreply\r\n", flags,
			      ttl < 0 ? 0u : mc_exptime_write((uint64_t)ttl, dp_unix_at(w->dp, w->now)),
			      head->value_len);
	if (n + head->value_len + 2 > sizeof(buf) - MC_FRAME_HDR_LEN - 64) {
		w->ctr[DP_CTR_WARM_NOT_FILLED]++;
		return;
	}
	while (got < head->value_len && mc_reply_next(rp, &ev) == MC_EV_DATA) {
		memcpy(buf + n + got, ev.data, ev.data_len);
		got += ev.data_len;
	}
	if (got != head->value_len) {
		w->ctr[DP_CTR_WARM_NOT_FILLED]++; /* the value spans datagrams */
		return;
	}
	n += got;
	memcpy(buf + n, "\r\n", 2);
	n += 2;
	if (warm_send(w, c->new_ep, sl->has_vlan, sl->vlan_tci, w->probe_port, 0, buf, n,
		      DP_TX_WARM_FILL, DP_NO_SLOT))
		return;
	w->ctr[DP_CTR_WARM_NOT_FILLED]++;
}

/* The new owner missed: the same request to the previous owner from a second slot that
 * answers the same client (it takes over the first slot's client count and reply parser).
 * @return false when it cannot (the miss then goes to the client). */
static bool ask_previous(struct dp_worker *w, struct dp_warm_ctx *c, uint32_t s1)
{
	struct dp_slot *a = &w->slots[s1], *b;
	uint32_t s2;
	uint16_t port_be, reqid;

	if (w->free_head == w->free_tail || !dp_ep_serving(w, c->prev_ep) ||
	    !(atomic_load_explicit(&w->eps[c->prev_ep].mac, memory_order_relaxed) & DP_MAC_VALID))
		return false;
	s2 = w->free_fifo[w->free_head++ & w->slot_mask];
	b = &w->slots[s2];
	port_be = b->port_be;
	reqid = dp_slot_next_reqid(w, b);
	*b = *a; /* but what names b on the wire */
	b->port_be = port_be;
	b->reqid = reqid;
	b->tsc = w->now | 1;
	w->slot6[s2] = w->slot6[s1]; /* the client's address goes with *a */
	dp_slot_set_node(w, s2, c->prev_ep);
	b->total = 0;
	b->seq_base = 0;
	b->seq_seen = 0;
	/* The reply parser (multi-message reads: GETQ + NOOP, mg + mn) moves to s2 as it was
	 * set up for the request: the intercepted miss was never fed to it. */
	a->parser = DP_NO_PARSER;
	dp_slot_put(w, s1); /* its client count passes to s2 */
	c->slot = s2;
	c->tsc = b->tsc;
	c->reqid = b->reqid;
	c->stage = 2;
	w->warm_of_slot[s2] = (uint16_t)(c - w->warm);
	if (!warm_send(w, c->prev_ep, b->has_vlan, b->vlan_tci, rte_be_to_cpu_16(port_be), reqid,
		       c->req, c->req_len, DP_TX_WARM_GET, s2)) {
		ctx_release(w, c, s2);
		dp_slot_free(w, s2);
		return true; /* the client's miss is gone: it retries on its timeout */
	}
	return true;
}

/* The read is a binary quiet one with a request after it (GETQ/GETKQ + NOOP): memcached answers
 * its miss with an empty message (seq 0, total 0) and then the NOOP's response. */
static bool binary_quiet_then_end(const struct dp_warm_ctx *c)
{
	const uint8_t *q = c->req;

	return c->proto == MC_PROTO_BINARY && c->req_len >= 24 &&
	       24 + ((uint32_t)q[8] << 24 | (uint32_t)q[9] << 16 | (uint32_t)q[10] << 8 | q[11]) <
		       c->req_len;
}

bool dp_warm_reply(struct dp_worker *w, struct rte_mbuf *m, const struct dp_pkt *pk, uint32_t s)
{
	struct dp_warm_ctx *c = ctx_of(w, s);
	struct mc_reply_parser rp;
	struct mc_reply_event ev;
	int v;

	if (c == NULL)
		return false;
	if (c->stage == 1 && pk->plen == MC_FRAME_HDR_LEN && binary_quiet_then_end(c)) {
		/* The new owner's empty message: the first half of its miss, absorbed; the
		 * NOOP's response that follows decides (the context stays bound). */
		w->ctr[DP_CTR_WARM_ABSORBED]++;
		rte_pktmbuf_free(m);
		return true;
	}
	v = reply_verdict(pk, &rp, &ev);
	if (c->stage == 1) {
		ctx_release(w, c, s);
		if (v != 0 || !ask_previous(w, c, s))
			return false;
		w->ctr[DP_CTR_WARM_ABSORBED]++;
		rte_pktmbuf_free(m);
		return true;
	}
	ctx_release(w, c, s);
	if (v == 1) {
		w->ctr[DP_CTR_WARM_HITS]++;
		if (pk->payload[4] == 0 && pk->payload[5] == 1)
			warm_fill(w, c, &w->slots[s], &rp, &ev);
		else
			w->ctr[DP_CTR_WARM_NOT_FILLED]++;
	} else {
		w->ctr[DP_CTR_WARM_MISSES]++;
	}
	return false;
}

/* ---- control lcore ----------------------------------------------------------------------- */

int dp_warm_init(struct dp_worker *w, const struct dp_config *c, int socket)
{
	w->warm_ttl_s = c->warm_ttl_s;
	w->warm = rte_zmalloc_socket("dp_warm", DP_WARM_CTX * sizeof(*w->warm), RTE_CACHE_LINE_SIZE,
				     socket);
	w->warm_of_slot = rte_malloc_socket("dp_warm_slots", c->slots * sizeof(uint16_t),
					    RTE_CACHE_LINE_SIZE, socket);
	if (w->warm == NULL || w->warm_of_slot == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < DP_WARM_CTX; i++)
		w->warm[i].slot = DP_NO_SLOT;
	memset(w->warm_of_slot, 0xff, c->slots * sizeof(uint16_t));
	return 0;
}

void dp_view_free(struct dp_view *v)
{
	if (v == NULL)
		return;
	pl_free(v->pl);
	pl_free(v->gutter.pl);
	rte_free(v->gutter.ep);
	rte_free(v);
}

/* Free the held chain from @p p on. Control lcore, after the RCU synchronize. */
static void chain_free(struct dp_view *p)
{
	while (p != NULL) {
		struct dp_view *o = atomic_load_explicit(&p->older, memory_order_relaxed);

		dp_view_free(p);
		p = o;
	}
}

void dp_warm_free(struct dp_worker *w)
{
	chain_free(atomic_load_explicit(&w->prev_view, memory_order_relaxed));
	rte_free(w->warm);
	rte_free(w->warm_of_slot);
}

/* Endpoints a previous placement names keep their entry (never reclaimed for a new node)
 * while it is held: recomputed from the workers' previous views. */
static void holds_update(struct dp *dp)
{
	const struct dp_view *p = atomic_load_explicit(&dp->w[0]->prev_view, memory_order_relaxed);

	for (uint32_t i = 0; i < dp->cfg.neighbours; i++)
		dp->eps[i].warm_hold = false;
	for (; p != NULL; p = atomic_load_explicit(&p->older, memory_order_relaxed))
		for (uint32_t i = 0; i < p->n; i++)
			dp->eps[p->ep[i]].warm_hold = true;
}

/* Whether views @p a and @p b place every key alike: the same members (name, address, port,
 * weight) in the same order at the same endpoints (the placement settings never change live). */
static bool same_members(const struct dp_view *a, const struct dp_view *b)
{
	if (a->n != b->n || memcmp(a->ep, b->ep, a->n * sizeof(a->ep[0])) != 0)
		return false;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct pl_member *x = pl_member_at(a->pl, i), *y = pl_member_at(b->pl, i);

		if (x->port != y->port || x->weight != y->weight || strcmp(x->name, y->name) != 0 ||
		    strcmp(x->addr, y->addr) != 0)
			return false;
	}
	return true;
}

void dp_warm_rotate(struct dp *dp, struct dp_view **old)
{
	uint16_t nw = dp->cfg.n_workers;

	bool kept = false, window = dp->cfg.warm_window_s != 0;

	if (old[0] == NULL)
		return;
	/* A publication that moves no key (a route change, the same membership again) keeps the
	 * placement held: holding the one it replaced would forget the last real change, and a
	 * key that change moved would get no delete at its previous owner (found by the
	 * consistency checker: warm-up add, route change, the add again). */
	if (same_members(old[0], atomic_load_explicit(&dp->w[0]->view, memory_order_relaxed)))
		return;
	for (uint16_t k = 0; k < nw; k++) {
		struct dp_view *held =
			atomic_load_explicit(&dp->w[k]->prev_view, memory_order_relaxed);

		/* Also while a window is open: the view replaced now becomes the previous one
		 * (not the window's oldest), so a second change within the window still deletes
		 * at the owners of the placement between the two (found by the consistency
		 * checker: add N, remove N within the window, writes, then N added again read
		 * N's values from before the remove). */
		/* The chain: the view replaced now, then the ones held before it, cut after
		 * DP_FLIP_HELD; the one cut off (no worker can reach it once the new head is
		 * published) is freed with the replaced views, after the publication's RCU
		 * synchronize. Release: a worker loads the head with acquire once per burst,
		 * each older link with acquire too. */
		struct dp_view *cut = NULL, *p = held;
		size_t bytes = old[k]->bytes;

		for (int d = 1; p != NULL; d++) {
			struct dp_view *o = atomic_load_explicit(&p->older, memory_order_relaxed);

			if (d == DP_FLIP_HELD - 1 && o != NULL) {
				atomic_store_explicit(&p->older, NULL, memory_order_release);
				cut = o; /* the chain was at most DP_FLIP_HELD: o is its last */
			}
			bytes += p->bytes;
			p = d == DP_FLIP_HELD - 1 ? NULL : o;
		}
		atomic_store_explicit(&old[k]->older, held, memory_order_release);
		atomic_store_explicit(&dp->w[k]->prev_view, old[k], memory_order_release);
		dp->warm_bytes[k] = bytes;
		old[k] = cut;
		kept = true;
	}
	/* Called before dp->epoch moves on: the epoch of the placement being replaced. */
	if (kept)
		dp->warm_prev_epoch = atomic_load_explicit(&dp->epoch, memory_order_relaxed);
	if (window) {
		dp->warm_until = rte_rdtsc() + (uint64_t)dp->cfg.warm_window_s * dp->tsc_hz;
		atomic_store_explicit(&dp->warm_reads, true, memory_order_relaxed);
	}
	holds_update(dp);
}

int dp_warm_end(struct dp *dp)
{
	bool open = dp->warm_until != 0;

	/* Reads stop following; the previous placement stays for writes (the header's
	 * comment): a read already bound to a context ends as it began, its endpoints held. */
	dp->warm_until = 0;
	atomic_store_explicit(&dp->warm_reads, false, memory_order_relaxed);
	return open ? 0 : -ENOENT;
}

void dp_warm_forget(struct dp *dp)
{
	struct dp_view *gone[DP_WORKERS_MAX] = {0};
	uint16_t nw = dp->cfg.n_workers;

	dp_warm_end(dp);
	for (uint16_t k = 0; k < nw; k++)
		gone[k] =
			atomic_exchange_explicit(&dp->w[k]->prev_view, NULL, memory_order_acq_rel);
	dp->warm_prev_epoch = 0;
	/* After this no worker holds a pointer to a previous view. */
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
	for (uint16_t k = 0; k < nw; k++) {
		chain_free(gone[k]);
		dp->warm_bytes[k] = 0;
	}
	holds_update(dp);
}

void dp_warm_poll(struct dp *dp)
{
	if (dp->warm_until != 0 && rte_rdtsc() >= dp->warm_until)
		dp_warm_end(dp);
}

int dp_warm_get(const struct dp *dp, struct dp_warm_state *out)
{
	uint64_t now = rte_rdtsc();

	memset(out, 0, sizeof(*out));
	out->window_s = dp->cfg.warm_window_s;
	out->ttl_s = dp->cfg.warm_ttl_s;
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		const struct dp_view *p =
			atomic_load_explicit(&dp->w[k]->prev_view, memory_order_acquire);

		/* Read on the control lcore, the only one that frees previous views. */
		if (p != NULL) {
			out->held = true;
			out->bytes += dp->warm_bytes[k];
		}
	}
	out->open = out->held && dp->warm_until != 0;
	if (out->held)
		out->prev_epoch = dp->warm_prev_epoch;
	if (out->open) {
		out->ms_left =
			dp->warm_until > now ? (dp->warm_until - now) * 1000 / dp->tsc_hz : 0;
	}
	return 0;
}
