/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-gets whose keys live on several nodes, on the worker that received them:
 *   dp_mget_split  one new packet per owning node (keys in request order), each from a request
 *                  slot of its own, and a context that will merge the answers;
 *   dp_mget_reply  each node datagram is parsed (mc_reply_*) and its items copied into the
 *                  merged reply, without the node's terminator; meta and binary answers are
 *                  placed by the router's tag (see "tags"), ASCII ones in key order;
 *   finish         when every node answered, failed or the timeout passed: misses for the
 *                  silent nodes (nothing for ASCII and quiet binary gets, EN for meta), one
 *                  terminator, and the datagrams numbered 0..total-1 under the client's
 *                  request id, at most min(MC_UDP_PAYLOAD_MAX, mtu - 28) UDP payload bytes
 *                  (mtu - 48 when the router has an IPv6 address)
 *                  each.
 * The merged reply is buffered in mbufs from the pool (linked by their next pointer, headers
 * written when sent) because every datagram's header must name the total. Bounded: at most
 * mget_max contexts and mget_bytes buffered bytes per worker; past either, new multi-gets are
 * refused with SERVER_ERROR, and a reply that outgrows the buffer is answered with one. A
 * node that holds mget_node_share (three quarters) of the contexts and has not answered for
 * half a request timeout gets no more sub-requests: its keys are answered as misses at once,
 * as after a timeout (a silent node, until detected, would otherwise hold every context for
 * request_ms and every client's multi-gets would be refused); a quarter stays for the others.
 * Called by the worker loop; calls the TX/slot layer (dp_tx.h) and, for refusals, dp_local.c.
 */

#include <stdatomic.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>

#include "dp_observe.h"
#include "dp_tx.h"

static inline uint16_t hdr_room(bool vlan)
{
	return (uint16_t)(sizeof(struct rte_ether_hdr) + (vlan ? sizeof(struct rte_vlan_hdr) : 0) +
			  sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr));
}

/* ---- shape ------------------------------------------------------------------------------ */

/* Binary quiet gets: GETQ, GETKQ, GATQ, GATKQ (a miss sends nothing). */
static bool bin_quiet_get(const struct mc_request *rq)
{
	return rq->proto == MC_PROTO_BINARY && rq->kind == MC_KIND_READ &&
	       (rq->flags & MC_REQ_F_QUIET) && rq->key_count == 1;
}

/* Whether a request over several nodes can be split: one ASCII get/gets/gat/gats; binary
 * quiet gets ended by one NOOP; meta mg requests ended by one mn. */
static bool splittable(const struct mc_requests *r)
{
	const struct mc_request *last = &r->req[r->nreq - 1];

	if (r->nreq == 1)
		return last->proto == MC_PROTO_ASCII &&
		       (last->cmd == MC_CMD_GET || last->cmd == MC_CMD_GETS ||
			last->cmd == MC_CMD_GAT || last->cmd == MC_CMD_GATS);
	if (last->cmd == MC_CMD_NOOP) {
		for (uint16_t i = 0; i + 1 < r->nreq; i++)
			if (!bin_quiet_get(&r->req[i]))
				return false;
		return true;
	}
	if (last->cmd == MC_CMD_MN) {
		for (uint16_t i = 0; i + 1 < r->nreq; i++)
			if (r->req[i].cmd != MC_CMD_MG || r->req[i].key_count != 1)
				return false;
		return true;
	}
	return false;
}

/* ---- chains of datagrams ---------------------------------------------------------------- */

static inline uint16_t body_off(const struct dp_mget *g)
{
	return (uint16_t)(hdr_room(g->has_vlan) + MC_FRAME_HDR_LEN);
}

static void chain_free(struct dp_chain *c)
{
	struct rte_mbuf *o = c->first;

	while (o != NULL) {
		struct rte_mbuf *n = o->next;

		o->next = NULL;
		rte_pktmbuf_free(o);
		o = n;
	}
	*c = (struct dp_chain){0};
}

/* Append @p len bytes; @return false when the pool is dry (the chain keeps what it had). */
static bool chain_append(struct dp_worker *w, const struct dp_mget *g, struct dp_chain *c,
			 const void *src, uint32_t len)
{
	const uint8_t *p = src;
	uint16_t off = body_off(g);

	while (len > 0) {
		struct rte_mbuf *o = c->last;
		uint32_t used = o != NULL ? (uint32_t)(o->data_len - off) : w->mget_body_max;
		uint32_t n;

		if (used == w->mget_body_max) {
			o = rte_pktmbuf_alloc(w->pool);
			if (unlikely(o == NULL))
				return false;
			o->data_len = off;
			if (c->last != NULL)
				c->last->next = o;
			else
				c->first = o;
			c->last = o;
			c->n++;
			used = 0;
		}
		n = RTE_MIN(w->mget_body_max - used, len);
		memcpy(rte_pktmbuf_mtod_offset(o, uint8_t *, o->data_len), p, n);
		o->data_len = (uint16_t)(o->data_len + n);
		p += n;
		len -= n;
		c->bytes += n;
	}
	return true;
}

static bool chain_str(struct dp_worker *w, const struct dp_mget *g, struct dp_chain *c,
		      const char *s)
{
	return chain_append(w, g, c, s, (uint32_t)strlen(s));
}

/* ---- the stream of items ---------------------------------------------------------------- */

/* Drop what was buffered: the reply will be an error. */
static void overflow(struct dp_worker *w, struct dp_mget *g)
{
	w->mget_bytes -= g->stream.bytes;
	chain_free(&g->stream);
	g->nfrag = 0;
	g->overflow = 1;
}

/* Append bytes of key @p key's item to the stream, within the worker's byte budget. */
static void item_bytes(struct dp_worker *w, struct dp_mget *g, uint16_t key, const void *p,
		       uint32_t len)
{
	uint32_t pos = g->stream.bytes;
	struct dp_mget_frag *f = g->nfrag ? &g->frag[g->nfrag - 1] : NULL;

	if (unlikely(g->overflow))
		return;
	if (unlikely(
		    w->mget_bytes + len > w->mget_bytes_max ||
		    (!(f && f->key == key && f->pos + f->len == pos) && g->nfrag == DP_MGET_FRAGS)))
		return overflow(w, g);
	if (unlikely(!chain_append(w, g, &g->stream, p, len))) {
		w->mget_bytes += g->stream.bytes - pos; /* overflow() takes it all back */
		return overflow(w, g);
	}
	w->mget_bytes += len;
	if (w->mget_bytes > w->mget_bytes_peak)
		w->mget_bytes_peak = w->mget_bytes;
	if (f && f->key == key && f->pos + f->len == pos)
		f->len += len;
	else
		g->frag[g->nfrag++] = (struct dp_mget_frag){pos, len, key};
}

/* Copy key @p k's item from the stream (its mbufs indexed in w->mget_index) into @p c. */
static bool copy_item(struct dp_worker *w, const struct dp_mget *g, uint16_t k, struct dp_chain *c)
{
	uint16_t off = body_off(g);

	for (uint16_t i = 0; i < g->nfrag; i++) {
		uint32_t pos = g->frag[i].pos, len = g->frag[i].len;

		if (g->frag[i].key != k)
			continue;
		while (len > 0) {
			struct rte_mbuf *o = w->mget_index[pos / w->mget_body_max];
			uint32_t at = pos % w->mget_body_max;
			uint32_t n = RTE_MIN(w->mget_body_max - at, len);

			if (!chain_append(w, g, c, rte_pktmbuf_mtod_offset(o, uint8_t *, off + at),
					  n))
				return false;
			pos += n;
			len -= n;
		}
	}
	return true;
}

/* ---- context list ----------------------------------------------------------------------- */

static void ctx_unlink(struct dp_worker *w, uint16_t gi)
{
	struct dp_mget *g = &w->mgets[gi];

	if (g->prev != DP_NO_MGET)
		w->mgets[g->prev].next = g->next;
	else
		w->mget_head = g->next;
	if (g->next != DP_NO_MGET)
		w->mgets[g->next].prev = g->prev;
	else
		w->mget_tail = g->prev;
}

/* Merging is over: the stream and the kept request go, the context leaves the live list. */
static void ctx_close(struct dp_worker *w, uint16_t gi)
{
	struct dp_mget *g = &w->mgets[gi];

	w->mget_bytes -= g->stream.bytes;
	chain_free(&g->stream);
	g->nfrag = 0;
	rte_pktmbuf_free(g->req);
	g->req = NULL;
	ctx_unlink(w, gi);
}

/* A closed context, sent or given up, back to the free stack. */
static void ctx_release(struct dp_worker *w, uint16_t gi)
{
	struct dp_mget *g = &w->mgets[gi];

	w->mget_bytes -= g->out.bytes;
	chain_free(&g->out);
	g->tsc = 0;
	w->mget_free[w->n_mget_free++] = gi;
}

/* ---- finish: items in key order, misses, terminator, send -------------------------------- */

/* Meta: the EN memcached (1.6.18, checked) sends for an mg without q whose key it lacks: the
 * O and k flags echoed in the request's order, k followed by " b" when the key is base64;
 * other flags are not echoed on a miss. */
static bool meta_miss(struct dp_worker *w, const struct dp_mget *g, const struct mc_requests *r,
		      const uint8_t *p, uint16_t k, struct dp_chain *c)
{
	const struct mc_request *rq = &r->req[k]; /* one key per mg */
	uint32_t pos = rq->args_off, end = rq->args_off + rq->args_len;
	bool ok = chain_str(w, g, c, "EN");

	while (ok && pos < end) {
		uint32_t t = pos;

		while (t < end && p[t] != ' ')
			t++;
		if (t > pos && p[pos] == 'O')
			ok = chain_str(w, g, c, " ") && chain_append(w, g, c, p + pos, t - pos);
		else if (t > pos && p[pos] == 'k')
			ok = chain_str(w, g, c, " k") &&
			     chain_append(w, g, c, p + g->key_off[k], g->key_len[k]) &&
			     (!(rq->flags & MC_REQ_F_BASE64) || chain_str(w, g, c, " b"));
		pos = t + 1;
	}
	return ok && chain_str(w, g, c, "\r\n");
}

static bool terminator(struct dp_worker *w, const struct dp_mget *g, struct dp_chain *c)
{
	uint8_t h[MC_BIN_HDR_LEN];

	switch (g->proto) {
	case MC_PROTO_ASCII:
		return chain_str(w, g, c, "END\r\n");
	case MC_PROTO_META:
		return chain_str(w, g, c, "MN\r\n");
	default:
		mc_bin_response_write(h, MC_BIN_NOOP, MC_BIN_STATUS_OK, 0, g->noop_opaque);
		return chain_append(w, g, c, h, MC_BIN_HDR_LEN);
	}
}

/* The merged reply in @p c: the items in the request's key order (meta misses rebuilt for
 * silent nodes), then the terminator. @return false when the pool ran dry. */
static bool assemble(struct dp_worker *w, const struct dp_mget *g, bool partial, struct dp_chain *c)
{
	const uint8_t *p = rte_pktmbuf_mtod_offset(g->req, const uint8_t *, g->req_off);
	struct mc_requests reparse; /* the kept request's parse, for this reply only */
	struct mc_requests *r = NULL;
	uint32_t i = 0;

	for (struct rte_mbuf *o = g->stream.first; o != NULL && i < w->mget_index_max; o = o->next)
		w->mget_index[i++] = o;
	/* Meta misses need the flags of each mg: parse the kept request again. */
	if (partial && g->proto == MC_PROTO_META &&
	    mc_parse_datagram_flags(p, g->req_len, MC_PARSE_CTL_KEYS, &reparse) == MC_OK)
		r = &reparse;
	for (uint16_t k = 0; k < g->nkeys; k++) {
		bool ok = true;

		if (g->key_done[k])
			ok = copy_item(w, g, k, c);
		else if (r != NULL && g->sub_state[g->key_sub[k]] == DP_SUB_FAILED &&
			 !(r->req[k].flags & MC_REQ_F_QUIET))
			ok = meta_miss(w, g, r, p, k, c);
		if (!ok)
			return false;
	}
	return terminator(w, g, c);
}

/* The reply outgrew the buffer (or the pool ran dry): one datagram with an error instead. */
static void overflow_reply(struct dp_worker *w, const struct dp_mget *g, struct dp_chain *c)
{
	static const char why[] = "multi-get reply larger than the router's buffer";
	uint8_t h[MC_BIN_HDR_LEN];

	w->ctr[DP_CTR_MGET_OVERFLOW]++;
	chain_free(c);
	if (g->proto == MC_PROTO_BINARY) {
		mc_bin_response_write(h, MC_BIN_NOOP, MC_BIN_STATUS_NO_MEMORY, sizeof(why) - 1,
				      g->noop_opaque);
		if (chain_append(w, g, c, h, MC_BIN_HDR_LEN) &&
		    chain_append(w, g, c, why, sizeof(why) - 1))
			return;
	} else if (chain_str(w, g, c, "SERVER_ERROR ") && chain_str(w, g, c, why) &&
		   chain_str(w, g, c, "\r\n")) {
		return;
	}
	chain_free(c); /* not even that: the client times out */
}

/* Every node answered, failed or timed out: assemble the merged reply and queue it on the
 * send list (dp_mget_send() paces it out as the TX queue has room). Its datagrams count in
 * the worker's buffered bytes until they leave. */
static void finish(struct dp_worker *w, uint16_t gi)
{
	struct dp_mget *g = &w->mgets[gi];
	struct dp_chain c = {0};
	bool partial = false;

	for (uint16_t j = 0; j < g->nsub; j++)
		partial |= g->sub_state[j] == DP_SUB_FAILED;
	if (!g->overflow && assemble(w, g, partial, &c) && c.n <= DP_REPLY_DATAGRAMS_MAX) {
		w->ctr[DP_CTR_MGET_MERGED]++;
		w->ctr[DP_CTR_MGET_PARTIAL] += partial;
	} else {
		overflow_reply(w, g, &c);
	}
	ctx_close(w, gi);
	g->out = c;
	g->out_seq = 0;
	g->out_total = (uint16_t)c.n;
	w->mget_bytes += c.bytes;
	if (w->mget_bytes > w->mget_bytes_peak)
		w->mget_bytes_peak = w->mget_bytes;
	if (c.n == 0) /* not even an error fitted: the client times out */
		return ctx_release(w, gi);
	g->send_next = DP_NO_MGET;
	if (w->send_tail != DP_NO_MGET)
		w->mgets[w->send_tail].send_next = gi;
	else
		w->send_head = gi;
	w->send_tail = gi;
}

/* Up to @p max of @p g's next datagrams, unlinked from its chain, headers written, into
 * @p pkts. @return how many. */
static uint16_t out_take(struct dp_worker *w, struct dp_mget *g, struct rte_mbuf **pkts,
			 uint16_t max)
{
	uint16_t n = 0, off = hdr_room(g->has_vlan);

	while (n < max && g->out.first != NULL) {
		struct rte_mbuf *o = g->out.first;
		struct mc_frame f = {g->client_reqid, (uint16_t)(g->out_seq + n), g->out_total, 0};

		g->out.first = o->next;
		o->next = NULL;
		mc_frame_write(rte_pktmbuf_mtod_offset(o, uint8_t *, off), &f);
		if (g->client_v6) /* the headroom of a pool mbuf holds the 20 bytes more */
			(void)dp_udp_build6(w, o, false, g->client_mac, g->has_vlan, g->vlan_tci,
					    g->client_ip6, g->listen_port, g->client_port);
		else
			dp_udp_build(w, o, false, g->client_mac, g->has_vlan, g->vlan_tci,
				     g->client_ip, g->listen_port, g->client_port);
		pkts[n++] = o;
	}
	return n;
}

/* The datagrams @p pkts[sent..n) the TX queue did not take go back in front of @p g's chain
 * (their headers are written again when next offered); the sent ones leave the accounts. */
static void out_settle(struct dp_worker *w, struct dp_mget *g, struct rte_mbuf **pkts,
		       uint16_t sent, uint16_t n)
{
	/* An IPv6 client's headers took 20 bytes of headroom more than body_off counts. */
	uint16_t body = (uint16_t)(body_off(g) + (g->client_v6 ? 20 : 0));

	for (uint16_t i = n; i > sent; i--) /* back to the IPv4 layout: rebuilt when offered */
		if (g->client_v6)
			rte_pktmbuf_adj(pkts[i - 1], 20);
	for (uint16_t i = 0; i < sent; i++) {
		g->out.bytes -= (uint32_t)(pkts[i]->data_len - body);
		w->mget_bytes -= (uint32_t)(pkts[i]->data_len - body);
	}
	g->out.n -= sent;
	g->out_seq = (uint16_t)(g->out_seq + sent);
	for (uint16_t i = n; i > sent; i--) {
		pkts[i - 1]->next = g->out.first;
		g->out.first = pkts[i - 1];
	}
	if (g->out.first == NULL)
		g->out.last = NULL;
}

void dp_mget_send(struct dp_worker *w)
{
	struct rte_mbuf *pkts[DP_BURST_MAX];
	uint32_t budget = w->mget_send_burst;

	while (budget > 0 && w->send_head != DP_NO_MGET) {
		uint16_t gi = w->send_head;
		struct dp_mget *g = &w->mgets[gi];
		uint16_t n =
			out_take(w, g, pkts, (uint16_t)RTE_MIN(budget, (uint32_t)DP_BURST_MAX));
		uint16_t sent = dp_tx_offer(w, pkts, n);

		budget -= sent;
		out_settle(w, g, pkts, sent, n);
		if (sent < n) { /* the queue is full: the rest waits for the next poll */
			w->ctr[DP_CTR_MGET_TX_WAITS]++;
			return;
		}
		if (g->out.first != NULL)
			continue;
		w->send_head = g->send_next;
		if (w->send_head == DP_NO_MGET)
			w->send_tail = DP_NO_MGET;
		ctx_release(w, gi);
	}
}

/* ---- sub-requests ----------------------------------------------------------------------- */

static uint16_t sub_of_slot(const struct dp_mget *g, uint32_t s)
{
	uint16_t j = 0;

	while (j < g->nsub && g->sub_slot[j] != s)
		j++;
	return j;
}

/* Sub-request @p j ended (done or failed): free its slot; the last one finishes the reply. */
static void sub_end(struct dp_worker *w, uint16_t gi, uint16_t j, uint8_t state)
{
	struct dp_mget *g = &w->mgets[gi];

	g->sub_state[j] = state;
	dp_slot_free(w, g->sub_slot[j]);
	w->node_mget_out[g->sub_ep[j]]--;
	if (state == DP_SUB_FAILED)
		w->node_mget_partial[g->sub_ep[j]]++;
	if (--g->pending == 0)
		finish(w, gi);
}

void dp_mget_slot_expired(struct dp_worker *w, uint32_t s)
{
	uint16_t gi = w->slots[s].mget;
	uint16_t j = sub_of_slot(&w->mgets[gi], s);

	w->ctr[DP_CTR_MGET_NODE_TIMEOUTS]++;
	sub_end(w, gi, j, DP_SUB_FAILED);
}

void dp_mget_expire(struct dp_worker *w)
{
	while (w->mget_head != DP_NO_MGET) {
		uint16_t gi = w->mget_head;
		struct dp_mget *g = &w->mgets[gi];

		/* tsc may be now | 1, one tick ahead of now. */
		if (w->now <= g->tsc || w->now - g->tsc <= w->timeout_tsc)
			return;
		for (uint16_t j = 0, left = g->pending; left > 0; j++) {
			if (g->sub_state[j] != DP_SUB_PENDING)
				continue;
			left--;
			w->ctr[DP_CTR_SLOTS_EXPIRED]++;
			w->ctr[DP_CTR_MGET_NODE_TIMEOUTS]++;
			sub_end(w, gi, j, DP_SUB_FAILED); /* the last one finishes g */
		}
	}
}

/* What to do with a reply item: 1 keep it, 0 skip it (the node's terminator), -1 the node's
 * answer is not a multi-get reply (error, garbage): its keys become misses. */
static int item_kept(const struct dp_mget *g, const struct mc_reply_event *ev)
{
	switch (g->proto) {
	case MC_PROTO_ASCII:
		return ev->type == MC_REPLY_VALUE ? 1 : ev->type == MC_REPLY_END ? 0 : -1;
	case MC_PROTO_META:
		return ev->type == MC_REPLY_META_MN ? 0 : ev->type == MC_REPLY_BINARY ? -1 : 1;
	default:
		if (ev->type != MC_REPLY_BINARY)
			return -1;
		return ev->opcode == MC_BIN_NOOP ? 0 : 1;
	}
}

/* ASCII: the key of sub-request @p j an item answers. The node answers its keys in order and
 * echoes each hit's key as sent (a miss sends nothing), so the first of its keys from the
 * cursor on whose bytes the VALUE line echoes. DP_NO_KEY: an item for none of them. */
static uint16_t match_key(const struct dp_mget *g, uint16_t j, const struct mc_reply_event *ev)
{
	const uint8_t *p = rte_pktmbuf_mtod_offset(g->req, const uint8_t *, g->req_off);

	for (uint16_t k = g->sub_cursor[j]; k < g->nkeys && ev->key != NULL; k++)
		if (g->key_sub[k] == j && ev->key_len == g->key_len[k] &&
		    memcmp(ev->key, p + g->key_off[k], ev->key_len) == 0)
			return k;
	return DP_NO_KEY;
}

/* Meta and binary: the key an answer of sub-request @p j is for, read from the router's tag
 * it echoes (meta: where its `O` value lies in the head, *at). DP_NO_KEY: no tag, or one that
 * names no key of this sub-request still unanswered (a node that echoes garbage, or twice). */
static uint16_t tag_key(const struct dp_mget *g, uint16_t j, const struct mc_reply_event *ev,
			uint32_t *at)
{
	uint32_t k = 0;

	if (g->proto == MC_PROTO_BINARY) {
		k = ev->opaque;
	} else {
		const uint8_t *o = ev->mopaque;

		if (o == NULL || ev->opaque_len == 0 || ev->opaque_len > 3 || o < ev->head + 2 ||
		    o + ev->opaque_len > ev->head + ev->head_len || o[-1] != 'O' || o[-2] != ' ')
			return DP_NO_KEY;
		for (uint8_t i = 0; i < ev->opaque_len; i++) {
			if (o[i] < '0' || o[i] > '9')
				return DP_NO_KEY;
			k = k * 10 + (uint32_t)(o[i] - '0');
		}
		*at = (uint32_t)(o - ev->head);
	}
	if (k >= g->nkeys || g->key_sub[k] != j || g->key_done[k])
		return DP_NO_KEY;
	return (uint16_t)k;
}

/* Key @p k's answer head into the stream with the client's own opaque where the router's tag
 * was: binary, the header's opaque; meta, the `O` value at @p at, or no `O` token at all when
 * the client sent none (the router appended it). Rebuilt in one piece so the stream takes it
 * with one copy. @return false when the head is too long to rebuild (a node's garbage). */
static bool tagged_head(struct dp_worker *w, struct dp_mget *g, uint16_t k,
			const struct mc_reply_event *ev, uint32_t at)
{
	const uint8_t *opq =
		rte_pktmbuf_mtod_offset(g->req, const uint8_t *, g->req_off + g->key_opq_off[k]);
	uint8_t h[MC_REPLY_LINE_MAX + MC_OPAQUE_MAX];
	uint32_t n, tail;

	if (ev->head_len > MC_REPLY_LINE_MAX)
		return false;
	if (g->proto == MC_PROTO_BINARY) {
		memcpy(h, ev->head, ev->head_len);
		memcpy(h + MC_BIN_OPAQUE_OFF, opq, 4);
		item_bytes(w, g, k, h, ev->head_len);
		return true;
	}
	tail = at + ev->opaque_len;
	if (g->key_opq_len[k] != DP_NO_OPAQUE) {
		memcpy(h, ev->head, at);
		memcpy(h + at, opq, g->key_opq_len[k]);
		n = at + g->key_opq_len[k];
	} else {
		n = at - 2; /* without " O" */
		memcpy(h, ev->head, n);
	}
	memcpy(h + n, ev->head + tail, ev->head_len - tail);
	item_bytes(w, g, k, h, n + ev->head_len - tail);
	return true;
}

/* Copy one parser event of sub-request @p j into the stream. @return 0, or -1 when the node
 * failed. */
static int absorb(struct dp_worker *w, struct dp_mget *g, uint16_t j, int ev_kind,
		  const struct mc_reply_event *ev)
{
	bool text = g->proto != MC_PROTO_BINARY;
	uint16_t k = g->sub_key[j];
	uint32_t at = 0;
	int keep;

	if (ev_kind == MC_EV_DATA) {
		if (k == DP_NO_KEY)
			return 0;
		item_bytes(w, g, k, ev->data, ev->data_len);
		if (ev->last) {
			if (text)
				item_bytes(w, g, k, "\r\n", 2);
			g->key_done[k] = 1;
			g->sub_key[j] = DP_NO_KEY;
		}
		return 0;
	}
	g->sub_key[j] = DP_NO_KEY;
	keep = item_kept(g, ev);
	if (keep <= 0)
		return keep;
	if (g->proto == MC_PROTO_ASCII) {
		k = match_key(g, j, ev);
		if (k == DP_NO_KEY)
			return -1;
		g->sub_cursor[j] = (uint16_t)(k + 1);
		item_bytes(w, g, k, ev->head, ev->head_len);
	} else {
		k = tag_key(g, j, ev, &at);
		if (k == DP_NO_KEY || !tagged_head(w, g, k, ev, at))
			return -1;
	}
	if (ev->value_len != 0) {
		g->sub_key[j] = k;
		return 0;
	}
	if (text && (ev->type == MC_REPLY_VALUE || ev->type == MC_REPLY_META_VA))
		item_bytes(w, g, k, "\r\n", 2); /* the empty value's own line end */
	g->key_done[k] = 1;
	return 0;
}

void dp_mget_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t s)
{
	struct dp_slot *sl = &w->slots[s];
	uint16_t gi = sl->mget;
	struct dp_mget *g = &w->mgets[gi];
	uint16_t j = sub_of_slot(g, s);
	struct mc_reply_parser *rp = &w->parsers[sl->parser];
	struct mc_reply_event ev;
	int r = 0;

	/* Its content is returned to the client, inside the merged reply. */
	w->ctr[DP_CTR_RETURNED]++;
	w->node_ret[sl->ep]++;
	w->node_mget_seen[sl->ep] = w->now; /* the node answers */
	if (mc_reply_feed_datagram(rp, pk->payload, pk->plen) != MC_OK)
		r = -1;
	while (r >= 0 && (r = mc_reply_next(rp, &ev)) > 0)
		if (absorb(w, g, j, r, &ev) < 0)
			r = -1;
	rte_pktmbuf_free(m); /* the events pointed into it */
	if (r < 0) {
		w->ctr[DP_CTR_MGET_NODE_ERRORS]++;
		return sub_end(w, gi, j, DP_SUB_FAILED);
	}
	if (mc_reply_done(rp)) {
		w->ctr[DP_CTR_SLOTS_COMPLETED]++;
		dp_obs_reply_done(w, sl);
		sub_end(w, gi, j, DP_SUB_DONE);
	}
}

/* ---- split ------------------------------------------------------------------------------ */

/*
 * ---- tags ----
 * A meta or binary sub-request carries the router's own tag on each key's request: the key's
 * index in the client's request, as the decimal value of meta `O` (in place of the client's
 * last `O` token, whose value the context keeps, or appended) or as the binary header's
 * opaque. memcached echoes it on every answer it sends, so tag_key() places each answer
 * whatever the node leaves out (quiet misses) and however it echoes the key (plain or
 * base64); tagged_head() puts the client's own opaque back. ASCII gets have no quiet form and
 * echo keys as sent: they are matched in order (match_key()).
 */

#define PUT(src, len)                          \
	do {                                   \
		memcpy(out + n, (src), (len)); \
		n += (uint32_t)(len);          \
	} while (0)

/* The router's tag for key index @p k (below MC_MAX_KEYS) in decimal. @return its length. */
static uint32_t tag_text(uint16_t k, uint8_t out[3])
{
	if (k < 10) {
		out[0] = (uint8_t)('0' + k);
		return 1;
	}
	if (k < 100) {
		out[0] = (uint8_t)('0' + k / 10);
		out[1] = (uint8_t)('0' + k % 10);
		return 2;
	}
	out[0] = (uint8_t)('0' + k / 100);
	out[1] = (uint8_t)('0' + k / 10 % 10);
	out[2] = (uint8_t)('0' + k % 10);
	return 3;
}

/* Request @p rq (one key, index @p k) as it goes to the node, with the router's tag, into
 * @p out. @return its length (tagged_len()). */
static uint32_t tagged_request(const struct mc_request *rq, const uint8_t *p, uint16_t k,
			       uint8_t *out)
{
	uint32_t end = rq->off + rq->len, eol = end, n = 0;
	uint8_t tag[3];
	uint32_t tl = tag_text(k, tag);

	if (rq->proto == MC_PROTO_BINARY) {
		uint8_t be[4] = {0, 0, (uint8_t)(k >> 8), (uint8_t)k};

		PUT(p + rq->off, MC_BIN_OPAQUE_OFF);
		PUT(be, 4);
		PUT(p + rq->off + MC_BIN_OPAQUE_OFF + 4, rq->len - MC_BIN_OPAQUE_OFF - 4);
		return n;
	}
	if (rq->flags & MC_REQ_F_OPAQUE) { /* the value of the last O token becomes the tag */
		PUT(p + rq->off, rq->opaque_off - rq->off);
		PUT(tag, tl);
		PUT(p + rq->opaque_off + rq->opaque_len, end - rq->opaque_off - rq->opaque_len);
		return n;
	}
	if (eol > rq->off && p[eol - 1] == '\n')
		eol--;
	if (eol > rq->off && p[eol - 1] == '\r')
		eol--;
	PUT(p + rq->off, eol - rq->off);
	PUT(" O", 2);
	PUT(tag, tl);
	PUT(p + eol, end - eol);
	return n;
}

/* Bytes key @p k adds to its sub-request (ASCII: the key and a space at most). */
static uint32_t key_part_len(const struct mc_requests *r, uint16_t k)
{
	const struct mc_request *rq = &r->req[r->keys[k].req];
	uint8_t tag[3];

	if (r->nreq == 1)
		return r->keys[k].len + 1u;
	if (rq->proto == MC_PROTO_BINARY)
		return rq->len;
	if (rq->flags & MC_REQ_F_OPAQUE)
		return rq->len - rq->opaque_len + tag_text(k, tag);
	return rq->len + 2 + tag_text(k, tag);
}

/* Bytes of a sub-request besides its keys' parts: ASCII "<cmd> [exptime] " and the line end;
 * meta and binary: the terminator request. */
static uint32_t sub_fixed_len(const struct mc_requests *r)
{
	const struct mc_request *rq = &r->req[0];

	if (r->nreq == 1)
		return r->keys[rq->key_first].off - rq->off + 2;
	return r->req[r->nreq - 1].len;
}

/* Body of sub-request @p j into @p out: the keys (ASCII) or tagged requests (binary, meta) of
 * that node, in request order, then the terminator request. @return its length (at most what
 * plan_subs() allowed for it). */
static uint32_t sub_body(const struct mc_requests *r, const uint8_t *p, const uint8_t *key_sub,
			 uint16_t j, uint8_t *out)
{
	const struct mc_request *rq = &r->req[0];
	uint32_t n = 0;

	if (r->nreq == 1) { /* ASCII: "<cmd> [exptime] " then the keys */
		PUT(p + rq->off, r->keys[rq->key_first].off - rq->off);
		for (uint16_t k = 0, first = 1; k < r->nkeys; k++) {
			if (key_sub[k] != j)
				continue;
			if (!first)
				PUT(" ", 1);
			PUT(p + r->keys[k].off, r->keys[k].len);
			first = 0;
		}
		PUT("\r\n", 2);
		return n;
	}
	for (uint16_t i = 0; i + 1 < r->nreq; i++) {
		uint16_t k = r->req[i].key_first;

		if (key_sub[k] == j)
			n += tagged_request(&r->req[i], p, k, out + n);
	}
	rq = &r->req[r->nreq - 1];
	PUT(p + rq->off, rq->len);
	return n;
}
#undef PUT

static void refuse(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
		   const struct mc_requests *r, const char *why)
{
	w->ctr[DP_CTR_MGET_REFUSED]++;
	/* Binary: the answer carries the NOOP's opcode and opaque, so it ends the client's wait. */
	dp_local_mc_reply(w, m, pk, r, why, true, MC_BIN_STATUS_TEMP_FAILURE,
			  (uint16_t)(r->nreq - 1));
}

/* Owner of every key of @p r (parsed from @p p) as a sub-request index; the node endpoints and
 * MAC words per sub. A node's keys go in one sub-request while it fits a datagram
 * (mget_body_max: the path's MTU and a pool mbuf), in as many as they need past that (the
 * tags make a sub-request longer than the client's part of it), each keeping request order.
 * A key whose owner is down goes to its stand-in (dp_fo_target), as a single-node request's.
 * @return the number of sub-requests, or -1 (no placement), -2 (a node's MAC unknown), -3 (a
 * key's request alone does not fit), -4 (a key's owner is down and [failover] gives it no
 * stand-in: fast, or none live, or its copy there not known current). */
static int plan_subs(struct dp_worker *w, const struct mc_requests *r, const uint8_t *p,
		     uint8_t *key_sub, uint32_t *ep, uint64_t *mac)
{
	const struct pl_placement *pl = w->cur->pl;
	uint32_t owner[MC_MAX_KEYS]; /* endpoint of each sub-request */
	uint32_t used[MC_MAX_KEYS], fixed = sub_fixed_len(r), e;
	uint8_t buf[MC_KEY_MAX];
	int n = 0;

	for (uint16_t k = 0; k < r->nkeys; k++) {
		const struct mc_key *key = &r->keys[k];
		const uint8_t *kp = p + key->off;
		size_t len = key->len;
		uint32_t part = key_part_len(r, k);
		int32_t idx;
		int j = n - 1;

		if (key->base64) {
			len = mc_key_decode(p, key, buf);
			kp = buf;
		}
		uint64_t h = pl_key_hash(pl, kp, len);

		idx = pl_lookup_hash(pl, h);
		if (idx < 0)
			return -1;
		e = w->cur->ep[idx];
		if (unlikely(!dp_ep_serving(w, e)) &&
		    (idx = unlikely(w->replicas > 1) ? dp_repl_target(w, h) : -1) >= 0) {
			e = (uint32_t)idx; /* a replica of the key: it holds it (dp_repl.c) */
		} else if (unlikely(!dp_ep_serving(w, e))) {
			if (w->failover == DP_FAILOVER_FAST ||
			    (idx = dp_fo_target(w, kp, len, h)) < 0)
				return -4;
			/* Its copy there may be older (dp_failover.c): the failover error. */
			if (!dp_fo_known(w, h, e, (uint32_t)idx)) {
				w->ctr[DP_CTR_FAILOVER_UNKNOWN]++;
				return -4;
			}
			e = (uint32_t)idx; /* the stand-in's endpoint */
		}
		if (fixed + part > w->mget_body_max)
			return -3;
		while (j >= 0 && owner[j] != e) /* the node's newest sub-request */
			j--;
		if (j < 0 || used[j] + part > w->mget_body_max) {
			j = n++;
			owner[j] = e;
			used[j] = fixed;
			ep[j] = e;
			mac[j] = atomic_load_explicit(&w->eps[ep[j]].mac, memory_order_relaxed);
			if (!(mac[j] & DP_MAC_VALID))
				return -2;
		}
		used[j] += part;
		key_sub[k] = (uint8_t)j;
	}
	return n;
}

/* Build and queue sub-request @p j of @p r (the parse of @p pk) in @p o (fresh from the pool). */
static void send_sub(struct dp_worker *w, struct dp_mget *g, uint16_t gi, uint16_t j,
		     struct rte_mbuf *o, const struct dp_pkt *pk, const struct mc_requests *r,
		     uint64_t mac)
{
	/* The node side's tag: the port's VLAN when fixed, else the client's. */
	bool tagged = w->node_vlan_fixed ? w->node_vlan_tagged : pk->vlan;
	uint16_t off = hdr_room(tagged), port_be, reqid;
	uint8_t *body = rte_pktmbuf_mtod_offset(o, uint8_t *, off);
	uint32_t s = dp_slot_take(w, pk, g->sub_ep[j], &port_be, &reqid);
	struct dp_slot *sl = &w->slots[s];
	struct mc_frame f = {reqid, 0, 1, 0};
	uint32_t n = sub_body(r, pk->payload, g->key_sub, j, body + MC_FRAME_HDR_LEN);
	uint8_t node_mac[6];

	sl->multi = DP_MULTI_MGET;
	sl->mget = gi;
	sl->parser = w->parser_free[--w->n_parser_free];
	mc_reply_init(&w->parsers[sl->parser]);
	mc_reply_expect(&w->parsers[sl->parser], r); /* as the whole request's */
	g->sub_slot[j] = s;
	g->sub_state[j] = DP_SUB_PENDING;
	if (w->node_mget_out[g->sub_ep[j]]++ == 0)
		w->node_mget_seen[g->sub_ep[j]] = w->now;
	g->sub_cursor[j] = 0;
	g->sub_key[j] = DP_NO_KEY;
	mc_frame_write(body, &f);
	o->data_len = (uint16_t)(off + MC_FRAME_HDR_LEN + n);
	memcpy(node_mac, &mac, 6); /* little-endian: bytes 0..5 of the word */
	/* The 20 bytes an IPv6 node's header takes more come from the headroom (a fresh mbuf has
	 * RTE_PKTMBUF_HEADROOM): never short. */
	(void)dp_udp_build_ep(w, o, node_mac, tagged,
			      w->node_vlan_fixed ? w->node_vlan_tci : sl->vlan_tci, g->sub_ep[j],
			      port_be, sl->node_port);
	dp_tx_push(w, o, DP_TX_MGET_SUB, g->sub_ep[j]);
}

/* The context for split request @p r: the client's addressing, kept request, live list. */
static uint16_t ctx_open(struct dp_worker *w, struct rte_mbuf *m, const struct dp_pkt *pk,
			 const struct mc_requests *r, uint16_t nsub)
{
	uint16_t gi = w->mget_free[--w->n_mget_free];
	struct dp_mget *g = &w->mgets[gi];

	g->tsc = w->now | 1;
	g->client_v6 = pk->v6;
	if (pk->v6) {
		memcpy(g->client_ip6, &pk->ip6->src_addr, 16);
		g->client_ip = dp_fold6(g->client_ip6); /* as its slots count it */
	} else {
		g->client_ip = pk->ip->src_addr;
	}
	g->client_port = pk->udp->src_port;
	g->client_reqid = r->frame.request_id;
	g->listen_port = pk->udp->dst_port;
	g->has_vlan = pk->vlan;
	g->vlan_tci = pk->vlan ? ((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci : 0;
	memcpy(g->client_mac, &pk->eth->src_addr, 6);
	g->proto = r->req[r->nreq - 1].cmd == MC_CMD_NOOP ? MC_PROTO_BINARY
		   : r->nreq == 1			  ? MC_PROTO_ASCII
							  : MC_PROTO_META;
	g->noop_opaque = r->req[r->nreq - 1].opaque;
	g->overflow = 0;
	g->nsub = nsub;
	g->pending = nsub;
	g->nkeys = r->nkeys;
	g->nfrag = 0;
	g->stream = (struct dp_chain){0};
	g->req = m;
	g->req_off = (uint16_t)(pk->payload - rte_pktmbuf_mtod(m, uint8_t *));
	g->req_len = (uint16_t)pk->plen;
	g->next = DP_NO_MGET;
	g->prev = w->mget_tail;
	if (w->mget_tail != DP_NO_MGET)
		w->mgets[w->mget_tail].next = gi;
	else
		w->mget_head = gi;
	w->mget_tail = gi;
	return gi;
}

/* The word the client's slots are counted by (its IPv4, or its IPv6 folded). */
static inline uint32_t g_client_word(const struct dp_pkt *pk)
{
	return pk->v6 ? dp_fold6((const uint8_t *)&pk->ip6->src_addr) : pk->ip->src_addr;
}

/* Which of the @p n planned sub-requests (to endpoints @p ep) go out: not those to a node
 * already holding its share of the worker's sub-requests in flight (counting the ones of
 * this request before it) that has not answered for half a request timeout.
 * @return how many are sent. */
static uint32_t subs_within_share(const struct dp_worker *w, const uint32_t *ep, int n, bool *skip)
{
	uint32_t sent = 0;

	for (int j = 0; j < n; j++) {
		uint32_t out = w->node_mget_out[ep[j]];

		for (int i = 0; i < j; i++)
			out += ep[i] == ep[j] && !skip[i];
		skip[j] = out >= w->mget_node_share &&
			  w->now - w->node_mget_seen[ep[j]] > w->timeout_tsc / 2;
		sent += !skip[j];
	}
	return sent;
}

/* Sub-request @p j is not sent (subs_within_share): its keys are misses from the start. */
static void sub_skipped(struct dp_worker *w, struct dp_mget *g, uint16_t j)
{
	g->sub_slot[j] = DP_NO_SLOT;
	g->sub_state[j] = DP_SUB_FAILED;
	g->sub_cursor[j] = 0;
	g->sub_key[j] = DP_NO_KEY;
	w->node_mget_partial[g->sub_ep[j]]++;
	w->ctr[DP_CTR_MGET_NODE_SHARE]++;
}

void dp_mget_split(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
		   const struct mc_requests *r)
{
	struct rte_mbuf *subs[MC_MAX_KEYS];
	uint8_t key_sub[MC_MAX_KEYS];
	uint32_t ep[MC_MAX_KEYS];
	uint64_t mac[MC_MAX_KEYS];
	bool skip[MC_MAX_KEYS];
	uint32_t nsend;
	uint16_t gi;
	struct dp_mget *g;
	int n;

	if (!splittable(r)) {
		w->ctr[DP_CTR_MC_SPLIT_REFUSED]++;
		return dp_local_mc_reply(w, m, pk, r, "multi-key request spans several nodes", true,
					 MC_BIN_STATUS_INTERNAL_ERROR, 0);
	}
	n = plan_subs(w, r, pk->payload, key_sub, ep, mac);
	if (unlikely(n == -1))
		return dp_count_drop(w, m, DP_DROP_NO_PLACEMENT);
	if (unlikely(n == -2))
		return dp_count_drop(w, m, DP_DROP_NODE_NO_MAC);
	if (unlikely(n == -3))
		return refuse(w, m, pk, r, "multi-get too large to split");
	if (unlikely(n == -4)) {
		w->ctr[w->failover == DP_FAILOVER_FAST ? DP_CTR_FAILOVER_FAST
						       : DP_CTR_FAILOVER_NO_TARGET]++;
		return dp_local_mc_reply(w, m, pk, r, "node down", true, MC_BIN_STATUS_TEMP_FAILURE,
					 (uint16_t)(r->nreq - 1));
	}
	nsend = subs_within_share(w, ep, n, skip);
	if (w->n_mget_free == 0 || w->mget_bytes >= w->mget_bytes_max || nsend == 0 ||
	    w->free_tail - w->free_head < nsend || w->n_parser_free < nsend)
		return refuse(w, m, pk, r, "too many multi-gets in flight at the router");
	if (rte_pktmbuf_alloc_bulk(w->pool, subs, nsend) != 0)
		return refuse(w, m, pk, r, "router out of packet buffers");
	if (unlikely(!dp_client_take(w, g_client_word(pk), nsend))) {
		rte_pktmbuf_free_bulk(subs, nsend);
		return dp_count_drop(w, m, DP_DROP_CLIENT_SLOTS);
	}
	gi = ctx_open(w, m, pk, r, (uint16_t)n);
	g = &w->mgets[gi];
	g->pending = (uint16_t)nsend;
	memcpy(g->key_sub, key_sub, r->nkeys);
	memcpy(g->sub_ep, ep, sizeof(uint32_t) * (uint32_t)n);
	for (uint16_t k = 0; k < r->nkeys; k++) {
		const struct mc_request *rq = &r->req[r->keys[k].req];

		g->key_off[k] = (uint16_t)r->keys[k].off;
		g->key_len[k] = (uint8_t)r->keys[k].len;
		g->key_done[k] = 0;
		g->key_opq_off[k] =
			(uint16_t)(rq->proto == MC_PROTO_BINARY ? rq->off + MC_BIN_OPAQUE_OFF
								: rq->opaque_off);
		g->key_opq_len[k] = rq->proto == MC_PROTO_BINARY  ? 4
				    : rq->flags & MC_REQ_F_OPAQUE ? rq->opaque_len
								  : DP_NO_OPAQUE;
	}
	for (int j = 0, k = 0; j < n; j++) {
		if (skip[j])
			sub_skipped(w, g, (uint16_t)j);
		else
			send_sub(w, g, gi, (uint16_t)j, subs[k++], pk, r, mac[j]);
	}
	/* The client's request counts once, as forwarded; its mbuf stays with the context. */
	w->ctr[DP_CTR_FORWARDED]++;
	w->ctr[DP_CTR_MGET_SPLIT]++;
}

/* ---- set-up ----------------------------------------------------------------------------- */

int dp_mget_init(struct dp_worker *w, const struct dp_config *c, int socket)
{
	uint32_t mtu = c->mtu != 0 ? c->mtu : 1500;
	/* with an IPv6 address, a merged reply may go to an IPv6 client: its header is 20
	 * bytes longer, and the datagrams are cut to fit either family */
	uint32_t ip_udp = dp_ip6_set(c->router_ip6) ? 48 : 28;
	uint32_t udp_max = RTE_MIN((uint32_t)MC_UDP_PAYLOAD_MAX, mtu - ip_udp);

	w->mget_head = w->mget_tail = DP_NO_MGET;
	w->send_head = w->send_tail = DP_NO_MGET;
	w->mget_send_burst = c->mget_send_burst;
	w->pool = c->pool;
	w->mget_bytes_max = c->mget_bytes;
	w->mget_body_max = udp_max - MC_FRAME_HDR_LEN;
	if (c->pool != NULL) {
		uint32_t room = rte_pktmbuf_data_room_size(c->pool) - RTE_PKTMBUF_HEADROOM;
		uint32_t fit = room - hdr_room(true) - MC_FRAME_HDR_LEN;

		w->mget_body_max = RTE_MIN(w->mget_body_max, fit);
	}
	w->node_mget_partial = rte_zmalloc_socket("dp_nmget", sizeof(uint64_t) * c->neighbours,
						  RTE_CACHE_LINE_SIZE, socket);
	w->node_mget_out = rte_zmalloc_socket("dp_nmout", sizeof(uint16_t) * c->neighbours,
					      RTE_CACHE_LINE_SIZE, socket);
	w->node_mget_seen = rte_zmalloc_socket("dp_nmseen", sizeof(uint64_t) * c->neighbours,
					       RTE_CACHE_LINE_SIZE, socket);
	if (w->node_mget_partial == NULL || w->node_mget_out == NULL || w->node_mget_seen == NULL)
		return -ENOMEM;
	w->mget_node_share = RTE_MAX(1u, c->mget_max - c->mget_max / 4);
	/* Without a pool, nothing can be built: no multi-get is split. */
	if (c->mget_max == 0 || c->pool == NULL)
		return 0;
	w->mgets = rte_zmalloc_socket("dp_mgets", sizeof(*w->mgets) * c->mget_max,
				      RTE_CACHE_LINE_SIZE, socket);
	w->mget_free = rte_malloc_socket("dp_mfree", sizeof(uint16_t) * c->mget_max, 0, socket);
	w->mget_index_max = c->mget_bytes / w->mget_body_max + 2;
	w->mget_index = rte_malloc_socket("dp_mindex", sizeof(*w->mget_index) * w->mget_index_max,
					  0, socket);
	if (w->mgets == NULL || w->mget_free == NULL || w->mget_index == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->mget_max; i++)
		w->mget_free[i] = (uint16_t)(c->mget_max - 1 - i);
	w->n_mget_free = c->mget_max;
	return 0;
}

void dp_mget_free(struct dp_worker *w)
{
	while (w->mgets != NULL && w->mget_head != DP_NO_MGET) {
		uint16_t gi = w->mget_head;

		ctx_close(w, gi);
		ctx_release(w, gi);
	}
	while (w->mgets != NULL && w->send_head != DP_NO_MGET) {
		uint16_t gi = w->send_head;

		w->send_head = w->mgets[gi].send_next;
		ctx_release(w, gi);
	}
	rte_free(w->mgets);
	rte_free(w->mget_free);
	rte_free(w->mget_index);
	rte_free(w->node_mget_partial);
	rte_free(w->node_mget_out);
	rte_free(w->node_mget_seen);
}
