/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot keys (dp_hot.h): the workers' sampling (worker lcore), the merge of their sketches into
 * the fleet's view every hot_interval_ms (control lcore), the view's readers (any thread,
 * under a lock the control lcore's merge shares; workers never take it) and its telemetry.
 *
 * A merge round: the control lcore bumps each worker's request counter (the worker's other
 * sketch, cleared at the last round, becomes the one it fills); each worker acknowledges at
 * its next poll; the control lcore merges the sketch each acknowledging worker gave up,
 * clears it, and when all have answered (or half an interval passed: a worker that is not
 * polling) publishes the view: the K keys of largest merged count with their rates, owners
 * and the owners' request rates. A worker that missed a round is counted late and its
 * samples go into the next view.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "dp_hot.h"
#include "dp_tx.h"

/* Control-side state. */
struct dp_hot {
	uint64_t interval_tsc;
	uint64_t tick_tsc;     /* the last round's start (0: none yet) */
	uint64_t prev_tick;    /* the one before: the interval the round covers */
	bool pending;	       /* a round waits for acknowledgements */
	struct hk_sketch *acc; /* the round's merge */
	uint32_t sent[DP_WORKERS_MAX];
	bool merged[DP_WORKERS_MAX];
	uint64_t *fwd_prev; /* per endpoint: forwarded at the previous round's end */
	double *fwd_rate;   /* ... the rate over the last interval */
	struct hk_entry *top;
	pthread_mutex_t lock; /* the view below: the control lcore writes, readers copy */
	struct dp_hotkey *view;
	struct dp_hot_summary sum;
	/* Spreading: key ids (DP_HOT_IDS), what the published hot set says of each. */
	struct dp_hot_keys *keys; /* shared with the workers */
	struct dp_hot_id {
		bool named; /* in use: spread, pinned or cooling */
		bool pinned;
		uint8_t published;     /* DP_HOT_STATE_* in the published set */
		uint64_t spread_until; /* over the threshold until then */
		uint64_t cool_until;   /* cooling: until every copy written could have expired */
		uint64_t free_at;      /* a freed id is reused from then on */
		/* The replicas of the published set, and those of earlier sets that left it,
		 * each until its copies could have expired (cool_tsc after the set without it
		 * reached every worker): the set's old[]. */
		uint8_t nrep, nold;
		uint32_t rep[DP_HOT_R_MAX];
		uint32_t old[DP_HOT_OLD_MAX];
		uint64_t old_until[DP_HOT_OLD_MAX];
	} id[DP_HOT_IDS];
	uint64_t set_epoch; /* placement of the published set */
	uint64_t hold_tsc;  /* a key over the threshold spreads this long after its last view */
	uint64_t cool_tsc;  /* then writes still delete copies this long: fill TTL + margin */
	uint64_t timeout_tsc;
	uint64_t old_lost; /* former replicas dropped from a full old[] (DP_HOT_OLD_MAX) */
};

static struct dp *tel_hot_dp;

/* xorshift64: the gaps between samples, so that a periodic request pattern cannot hide a key. */
static uint32_t next_gap(struct dp_hotw *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	if (h->every == 0)
		return UINT32_MAX; /* sampling off: the branch is taken once every 2^32 requests */
	return h->every == 1 ? 1 : 1 + (uint32_t)(h->rng % (2u * h->every - 1)); /* mean every */
}

void dp_hot_sample(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r)
{
	struct dp_hotw *h = w->hot;
	const struct mc_key *key = &r->keys[0];
	const uint8_t *kp = pk->payload + key->off;
	uint8_t buf[MC_KEY_MAX];
	size_t len = key->len;

	w->hot_left = next_gap(h);
	if (h->every == 0)
		return;
	if (key->base64) {
		len = mc_key_decode(pk->payload, key, buf);
		kp = buf;
	}
	hk_sketch_add(h->sk[h->cur], hk_hash(kp, len), kp, len, 1);
	w->ctr[DP_CTR_HOT_SAMPLED]++;
}

void dp_hot_swap(struct dp_worker *w)
{
	struct dp_hotw *h = w->hot;
	/* Acquire pairs with the control lcore's release store: the sketch it handed back was
	 * cleared before the request was made. */
	uint32_t req = atomic_load_explicit(&h->req, memory_order_acquire);

	h->seen = req;
	h->cur = req & 1;
	/* Release: every sample filed in the sketch given up is visible before the answer. */
	atomic_store_explicit(&h->done, req, memory_order_release);
}

/* ---- spreading: the worker's side ---------------------------------------------------- */

void dp_hot_set_seen(struct dp_worker *w)
{
	struct dp_hotw *h = w->hot;
	uint32_t n = atomic_load_explicit(&w->dp->n_eps_hwm, memory_order_relaxed);

	h->set_seen = h->set;
	for (uint32_t e = 0; e < n; e++)
		h->base[e] = w->node_fwd[e];
	h->base_total = w->ctr[DP_CTR_FORWARDED] + w->ctr[DP_CTR_HOT_FETCHES];
}

/* The entry of key @p kp (@p len bytes, hk_hash @p hash) in @p hs, or NULL. */
static const struct dp_hotent *hot_find(const struct dp_hotset *hs, const struct dp_hot_keys *k,
					uint64_t hash, const uint8_t *kp, size_t len)
{
	uint32_t i = (uint32_t)hash & hs->idx_mask;

	for (; hs->idx[i] != 0; i = (i + 1) & hs->idx_mask) {
		const struct dp_hotent *e = &hs->ent[hs->idx[i] - 1];

		if (e->hash == hash && k->len[e->id] == len && memcmp(k->key[e->id], kp, len) == 0)
			return e;
	}
	return NULL;
}

static inline uint64_t ep_load(const struct dp_worker *w, uint32_t ep)
{
	return w->node_fwd[ep] - w->hot->base[ep];
}

/* One of @p e's replicas: the lower load of two random ones (loads: requests this worker
 * sent each endpoint since the hot set was loaded), unless it is over the bounded-load cap
 * ((1 + eps) x the average over the members): then the first in replica order under it. */
static uint32_t choose_replica(struct dp_worker *w, const struct dp_hotent *e)
{
	struct dp_hotw *h = w->hot;
	uint32_t a, b, pick;
	uint64_t total, cap;

	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	a = (uint32_t)(h->rng % e->nrep);
	b = (uint32_t)((h->rng >> 32) % (e->nrep - 1u));
	b += b >= a;
	pick = ep_load(w, e->rep[a]) <= ep_load(w, e->rep[b]) ? e->rep[a] : e->rep[b];
	total = w->ctr[DP_CTR_FORWARDED] + w->ctr[DP_CTR_HOT_FETCHES] - h->base_total;
	cap = (total + 1) * h->load_milli / (1000u * RTE_MAX(w->cur->n, 1u)) + 1;
	if (ep_load(w, pick) <= cap)
		return pick;
	for (uint32_t i = 0; i < e->nrep; i++)
		if (ep_load(w, e->rep[i]) <= cap)
			return e->rep[i];
	return pick;
}

/* Router packets nobody answers (noreply) leave from the first listen port: an error reply
 * to one lands on the request path and is dropped there, never on a slot. */
static uint16_t noreply_port(const struct dp_worker *w)
{
	return rte_cpu_to_be_16(w->listen[0]);
}

/* Token @p i (0: the command) of text request line @p p (@p n bytes, "\r\n" included). */
static bool line_token(const uint8_t *p, uint32_t n, uint32_t i, const uint8_t **t, uint32_t *tn)
{
	uint32_t o = 0;

	for (uint32_t k = 0;; k++) {
		while (o < n && p[o] == ' ')
			o++;
		*t = p + o;
		while (o < n && p[o] != ' ' && p[o] != '\r')
			o++;
		*tn = (uint32_t)(p + o - *t);
		if (*tn == 0)
			return false;
		if (k == i)
			return true;
	}
}

/* An ASCII `set` of a spread key as the copy its other replicas get: the same flags and
 * value, noreply, with an exptime no longer than the fills' (a copy must not outlive the time
 * its key's writes keep reaching it: the key's cooling, id_state()) nor the client's own
 * (read against the router's clock: absolute times too). @return the body's length, 0 when
 * it cannot be copied (then the copies are deleted): not a set, or one whose value is
 * already expired (negative, absolute past) or whose exptime memcached refuses. */
static uint32_t set_copy(const struct dp_worker *w, const struct dp_pkt *pk,
			 const struct mc_request *rq, const struct dp_hot_keys *k, uint16_t id,
			 uint8_t *body, uint32_t cap)
{
	const uint8_t *line = pk->payload + rq->off, *flags, *exp;
	uint32_t flags_len, exp_len, ttl = w->hot->ttl_s, n;
	uint64_t left = 0, unix_now = dp_unix_at(w->dp, w->now);

	if (rq->proto != MC_PROTO_ASCII || rq->cmd != MC_CMD_SET ||
	    !line_token(line, rq->line_len, 2, &flags, &flags_len) ||
	    !line_token(line, rq->line_len, 3, &exp, &exp_len))
		return 0;
	switch (mc_exptime_read(exp, exp_len, unix_now, &left)) {
	case MC_EXPTIME_LEFT:
		ttl = left < ttl ? (uint32_t)left : ttl;
		break;
	case MC_EXPTIME_NONE:
		break; /* the cap */
	default:
		return 0;
	}
	n = (uint32_t)snprintf((char *)body, cap, "set %.*s %.*s %u %u noreply\r\n",
			       (int)k->len[id], (const char *)k->key[id], (int)flags_len,
			       (const char *)flags, mc_exptime_write(ttl, unix_now), rq->data_len);
	if (n + rq->data_len + 2 > cap)
		return 0;
	memcpy(body + n, pk->payload + rq->data_off, rq->data_len);
	memcpy(body + n + rq->data_len, "\r\n", 2);
	return n + rq->data_len + 2;
}

/* Datagram @p body (@p len bytes: a write's copy or delete of hot key @p id) to replica
 * @p ep when it serves; else, or when it cannot be built, the key recorded for it (deleted
 * there before it is read again; a refused one is recorded by dp_tx.c). */
static void inval_send(struct dp_worker *w, const struct dp_pkt *pk, uint32_t ep, uint16_t id,
		       const uint8_t *body, uint32_t len)
{
	struct dp_hot_keys *k = w->hot->keys;
	uint16_t tci = pk->vlan ? ((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci : 0;
	bool serving = dp_ep_serving(w, ep);
	struct rte_mbuf *o =
		serving ? dp_tx_datagram(w, ep, pk->vlan, tci, noreply_port(w), 0, body, len) : NULL;

	if (o == NULL) {
		if (serving)
			w->ctr[DP_CTR_HOT_TX_FAILED]++;
		w->ctr[DP_CTR_HOT_MISSED]++;
		dp_fo_dirty(w, ep, UINT32_MAX, k->key[id], k->len[id]);
		return;
	}
	dp_tx_push(w, o, DP_TX_HOT_INVAL, ep);
}

/* A write of hot key @p e: `delete KEY noreply` at each former replica (never a copy: it is
 * read from no more). */
static __rte_noinline void invalidate_old(struct dp_worker *w, const struct dp_pkt *pk,
					  const struct dp_hotent *e)
{
	struct dp_hot_keys *k = w->hot->keys;
	uint8_t body[32 + MC_KEY_MAX];

	memcpy(body, "delete ", 7);
	memcpy(body + 7, k->key[e->id], k->len[e->id]);
	memcpy(body + 7 + k->len[e->id], " noreply\r\n", 10);
	for (uint32_t i = 0; i < e->nold; i++)
		inval_send(w, pk, e->old[i], e->id, body, 17u + k->len[e->id]);
}

/* A write @p rq of hot key @p e (the request of @p pk) begins: while the key spreads an ASCII
 * `set` is copied to the other replicas (a fill's `add` never overwrites it, nor does it miss
 * one); any other write, and every write of a cooling key, deletes their copies and stops
 * fills of the key for a while. A cooling key gets no copies: its reads do not spread, and a
 * copy written then would outlive the cooling the copies' expiry is counted in (issue 27).
 * Its former replicas (e->old) get the delete too. */
static void invalidate(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_request *rq,
		       const struct dp_hotent *e, uint32_t owner)
{
	struct dp_hot_keys *k = w->hot->keys;
	uint8_t body[1400];
	uint32_t len = e->spread ? set_copy(w, pk, rq, k, e->id, body, sizeof(body)) : 0;

	if (len == 0) {
		atomic_store_explicit(&k->wlast[e->id], w->now, memory_order_relaxed);
		/* Sequentially consistent: a fill that reads the old count was checked before
		 * this write began, and its add was queued before these deletes. */
		atomic_fetch_add(&k->wseq[e->id], 1);
		memcpy(body, "delete ", 7);
		memcpy(body + 7, k->key[e->id], k->len[e->id]);
		memcpy(body + 7 + k->len[e->id], " noreply\r\n", 10);
		len = 17u + k->len[e->id];
	}
	/* A replica that does not serve (down, frozen, joining) gets neither the copy nor the
	 * delete: a frozen node queues them, and a socket buffer that fills keeps an early copy
	 * and drops a later delete (soak seeds 5023, 5035: a returned replica served a value two
	 * writes old). The key is recorded for it instead, as a down owner's writes are, and
	 * deleted there before it serves again; so is a copy or delete that cannot be built or
	 * that the TX queue refuses (dp_tx.c). */
	for (uint32_t i = 0; i < e->nrep; i++)
		if (e->rep[i] != owner)
			inval_send(w, pk, e->rep[i], e->id, body, len);
	if (unlikely(e->nold != 0))
		invalidate_old(w, pk, e);
}

/* The hot set's entry of key @p key of @p pk's payload, or NULL. */
static const struct dp_hotent *key_entry(const struct dp_worker *w, const struct dp_pkt *pk,
					 const struct mc_key *key)
{
	const uint8_t *kp = pk->payload + key->off;
	uint8_t buf[MC_KEY_MAX];
	size_t len = key->len;

	if (key->base64) {
		len = mc_key_decode(pk->payload, key, buf);
		kp = buf;
	}
	return hot_find(w->hot->set, w->hot->keys, hk_hash(kp, len), kp, len);
}

uint32_t dp_hot_route(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		      uint32_t owner, struct dp_hotslot *mark)
{
	const struct dp_hotset *hs = w->hot->set;
	const struct mc_request *rq = &r->req[0];
	const struct dp_hotent *e;
	uint32_t ep;

	mark->stage = DP_HOT_NONE;
	if (hs->n == 0)
		return owner;
	/* Every write of a hot key in the datagram (pipelined, quiet or not). */
	for (uint16_t i = 0; i < r->nreq; i++) {
		const struct mc_request *q = &r->req[i];

		if (q->kind == MC_KIND_READ || q->kind == MC_KIND_KEYLESS)
			continue;
		for (uint16_t k = q->key_first; k < q->key_first + q->key_count; k++)
			if ((e = key_entry(w, pk, &r->keys[k])) != NULL)
				invalidate(w, pk, q, e, owner);
	}
	/* Only a lone plain one-key get spreads: gets / gat carry a node's CAS or change its
	 * TTL, a quiet read has no end the fill could follow. */
	if (r->nreq != 1 || r->nkeys != 1 || rq->cmd != MC_CMD_GET || rq->proto != MC_PROTO_ASCII ||
	    (rq->flags & MC_REQ_F_QUIET) || hs->epoch != w->cur->epoch)
		return owner;
	e = key_entry(w, pk, &r->keys[0]);
	if (e == NULL || !e->spread || e->nrep < 2)
		return owner;
	/* Not while the owner is down: a replica's miss would be filled from the owner, which
	 * holds none of the outage's writes (they went to a stand-in), and the fetch would wait
	 * for a frozen owner to answer with the value from before (issue 27, soak seed 3001).
	 * The key fails over as any other; it spreads again once the owner serves. */
	if (!dp_ep_serving(w, owner))
		return owner;
	ep = choose_replica(w, e);
	if (ep == owner || !dp_ep_serving(w, ep))
		return owner;
	*mark = (struct dp_hotslot){ep, owner, 0, e->id, DP_HOT_READ};
	w->ctr[DP_CTR_HOT_SPREAD]++;
	return ep;
}

void dp_hot_mark(struct dp_worker *w, uint32_t s, const struct dp_hotslot *mark)
{
	w->slots[s].multi = DP_MULTI_HOT;
	w->hot->slot[s] = *mark;
}

/* The replica missed: ask the owner from the same slot (next generation). */
static bool fetch_from_owner(struct dp_worker *w, uint32_t s)
{
	struct dp_slot *sl = &w->slots[s];
	struct dp_hotslot *hs = &w->hot->slot[s];
	struct dp_hot_keys *k = w->hot->keys;
	uint8_t body[8 + MC_KEY_MAX];
	uint32_t len = 6u + k->len[hs->id];
	uint16_t reqid = dp_reqid_next(w, sl->reqid); /* recorded once sent */
	struct rte_mbuf *o;

	/* The owner went down since the read was spread: its value may be older than a
	 * stand-in's; the replica's miss is the answer. */
	if (!dp_ep_serving(w, hs->owner))
		return false;
	memcpy(body, "get ", 4);
	memcpy(body + 4, k->key[hs->id], k->len[hs->id]);
	memcpy(body + 4 + k->len[hs->id], "\r\n", 2);
	o = dp_tx_datagram(w, hs->owner, sl->has_vlan, sl->vlan_tci, sl->port_be, reqid, body, len);
	if (o == NULL) {
		w->ctr[DP_CTR_HOT_TX_FAILED]++;
		return false;
	}
	/* The key's writes so far: a fill is copied only if none begins before the answer. */
	hs->wseq = atomic_load(&k->wseq[hs->id]);
	hs->stage = DP_HOT_FETCH;
	sl->reqid = reqid;
	dp_slot_set_node(w, s, hs->owner);
	sl->total = 0;
	sl->seq_base = 0;
	sl->seq_seen = 0;
	sl->tsc = w->now | 1;
	dp_tx_push(w, o, DP_TX_HOT_FETCH, hs->owner);
	return true;
}

/* Parse "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\nEND\r\n", the whole of @p p:
 * true with the flags' text and the data. */
static bool parse_hit(const uint8_t *p, uint32_t n, const uint8_t **flags, uint32_t *flags_len,
		      const uint8_t **data, uint32_t *data_len)
{
	const uint8_t *end = p + n, *q, *eol;
	uint64_t bytes = 0;

	if (n < 6 + 5 || memcmp(p, "VALUE ", 6) != 0)
		return false;
	eol = memchr(p, '\n', n);
	if (eol == NULL || eol[-1] != '\r')
		return false;
	q = memchr(p + 6, ' ', (size_t)(eol - p - 6)); /* after the key */
	if (q == NULL)
		return false;
	*flags = ++q;
	while (q < eol && *q != ' ')
		q++;
	*flags_len = (uint32_t)(q - *flags);
	if (*flags_len == 0 || q >= eol - 1)
		return false;
	for (q++; q < eol - 1 && *q >= '0' && *q <= '9'; q++)
		bytes = bytes * 10 + (uint64_t)(*q - '0');
	*data = eol + 1;
	*data_len = (uint32_t)bytes;
	return bytes <= (uint64_t)(end - *data) && (uint64_t)(end - *data) == bytes + 7 &&
	       memcmp(*data + bytes, "\r\nEND\r\n", 7) == 0;
}

/* Key id @p id spreads in the worker's hot set of this poll. */
static bool key_spreads(const struct dp_worker *w, uint16_t id)
{
	const struct dp_hotset *hs = w->hot->set;
	const struct dp_hot_keys *k = w->hot->keys;
	const struct dp_hotent *e;

	if (hs == NULL)
		return false;
	e = hot_find(hs, k, hk_hash(k->key[id], k->len[id]), k->key[id], k->len[id]);
	return e != NULL && e->id == id && e->spread;
}

/* The owner's one-datagram answer @p pk to a fetch: on a hit, copy it to the replica with
 * `add` (never over a value a write put there), unless a write of the key began since. */
static void fill_replica(struct dp_worker *w, uint32_t s, const struct dp_pkt *pk)
{
	struct dp_hotslot *hs = &w->hot->slot[s];
	struct dp_hot_keys *k = w->hot->keys;
	const uint8_t *flags, *data;
	uint32_t flags_len, data_len, n;
	uint8_t body[1400];
	struct rte_mbuf *o;

	if (!parse_hit(pk->payload + MC_FRAME_HDR_LEN, pk->plen - MC_FRAME_HDR_LEN, &flags,
		       &flags_len, &data, &data_len))
		return;
	/* Copies are written only while the key spreads in this poll's hot set: once a set
	 * without it (or with it cooling) is published and every worker has moved on, no copy
	 * is written any more, and the cooling counts from then (set_update). */
	if (!key_spreads(w, hs->id) || atomic_load(&k->wseq[hs->id]) != hs->wseq ||
	    w->now - atomic_load_explicit(&k->wlast[hs->id], memory_order_relaxed) <
		    w->hot->fill_quiet_tsc) {
		w->ctr[DP_CTR_HOT_FILL_SKIPPED]++;
		return;
	}
	n = (uint32_t)snprintf((char *)body, sizeof(body), "add %.*s %.*s %u %u noreply\r\n",
			       (int)k->len[hs->id], (const char *)k->key[hs->id], (int)flags_len,
			       (const char *)flags,
			       mc_exptime_write(w->hot->ttl_s, dp_unix_at(w->dp, w->now)), data_len);
	if (n + data_len + 2 > sizeof(body))
		return; /* larger than a datagram: the replica keeps missing, the owner answers */
	memcpy(body + n, data, data_len);
	memcpy(body + n + data_len, "\r\n", 2);
	o = dp_tx_datagram(w, hs->replica, pk->vlan, w->slots[s].vlan_tci, noreply_port(w), 0, body,
		    n + data_len + 2);
	if (o == NULL) {
		w->ctr[DP_CTR_HOT_TX_FAILED]++;
		return;
	}
	dp_tx_push(w, o, DP_TX_HOT_FILL, hs->replica);
}

bool dp_hot_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t s)
{
	struct dp_slot *sl = &w->slots[s];
	struct dp_hotslot *hs = &w->hot->slot[s];
	uint16_t seq = (uint16_t)(pk->payload[2] << 8 | pk->payload[3]);
	uint16_t total = (uint16_t)(pk->payload[4] << 8 | pk->payload[5]);

	sl->multi = DP_MULTI_NONE; /* whatever follows passes as a one-message reply */
	if (total == 0 || seq >= total) {
		dp_count_drop(w, m, DP_DROP_REPLY_BAD_FRAME);
		return true;
	}
	if (total != 1)
		return false; /* several datagrams: a hit (a miss is one), passed as it is */
	if (hs->stage == DP_HOT_FETCH) {
		fill_replica(w, s, pk);
		return false;
	}
	if (pk->plen != MC_FRAME_HDR_LEN + 5 ||
	    memcmp(pk->payload + MC_FRAME_HDR_LEN, "END\r\n", 5) != 0)
		return false; /* a hit at the replica (or an error): the client's answer */
	w->ctr[DP_CTR_HOT_MISSES]++;
	if (!fetch_from_owner(w, s))
		return false; /* pass the miss: a miss is an answer memcached may give */
	sl->multi = DP_MULTI_HOT;
	/* The miss is absorbed, as a multi-get's node datagrams are: counted returned. */
	w->ctr[DP_CTR_RETURNED]++;
	w->node_ret[hs->replica]++;
	rte_pktmbuf_free(m);
	return true;
}

int dp_hot_worker_init(struct dp_worker *w, const struct dp_config *c, int socket)
{
	size_t bytes = hk_sketch_bytes(c->hot_sketch_keys);
	struct dp_hotw *h = rte_zmalloc_socket("dp_hotw", sizeof(*h), RTE_CACHE_LINE_SIZE, socket);

	w->hot = h;
	if (h == NULL)
		return -ENOMEM;
	for (int i = 0; i < 2; i++) {
		void *mem = rte_zmalloc_socket("dp_hotsk", bytes, RTE_CACHE_LINE_SIZE, socket);

		h->sk[i] = hk_sketch_init(mem, c->hot_sketch_keys);
		if (h->sk[i] == NULL) {
			rte_free(mem);
			return -ENOMEM;
		}
	}
	h->every = c->hot_sample_every;
	h->rng = rte_rand() | 1;
	w->hot_left = next_gap(h);
	h->slot = rte_zmalloc_socket("dp_hotslot", sizeof(*h->slot) * c->slots, RTE_CACHE_LINE_SIZE,
				     socket);
	h->base = rte_zmalloc_socket("dp_hotbase", sizeof(*h->base) * c->neighbours,
				     RTE_CACHE_LINE_SIZE, socket);
	h->keys = w->dp->hot->keys;
	h->load_milli = 1000u + 10u * c->hot_load_pct;
	h->ttl_s = c->hot_fill_ttl_s;
	h->fill_quiet_tsc = (uint64_t)c->request_timeout_ms * w->dp->tsc_hz / 1000;
	return h->slot != NULL && h->base != NULL ? 0 : -ENOMEM;
}

void dp_hot_worker_free(struct dp_worker *w)
{
	if (w->hot == NULL)
		return;
	rte_free(w->hot->sk[0]);
	rte_free(w->hot->sk[1]);
	rte_free(w->hot->slot);
	rte_free(w->hot->base);
	rte_free(w->hot);
	w->hot = NULL;
}

int dp_hot_init(struct dp *dp)
{
	const struct dp_config *c = &dp->cfg;
	struct dp_hot *h = calloc(1, sizeof(*h));

	dp->hot = h;
	if (h == NULL)
		return -ENOMEM;
	pthread_mutex_init(&h->lock, NULL);
	h->interval_tsc = (uint64_t)c->hot_interval_ms * dp->tsc_hz / 1000;
	h->acc = hk_sketch_init(malloc(hk_sketch_bytes(c->hot_sketch_keys)), c->hot_sketch_keys);
	h->top = calloc(c->hot_sketch_keys, sizeof(*h->top));
	h->view = calloc(c->hot_sketch_keys, sizeof(*h->view));
	h->fwd_prev = calloc(c->neighbours, sizeof(*h->fwd_prev));
	h->fwd_rate = calloc(c->neighbours, sizeof(*h->fwd_rate));
	for (int i = 0; i < DP_WORKERS_MAX; i++)
		h->merged[i] = true; /* the sketch to hand back is clear */
	h->sum.sample_every = c->hot_sample_every;
	h->sum.sketch_keys = c->hot_sketch_keys;
	h->keys = rte_zmalloc("dp_hotkeys", sizeof(*h->keys), RTE_CACHE_LINE_SIZE);
	h->hold_tsc = 2 * h->interval_tsc;
	h->cool_tsc = ((uint64_t)c->hot_fill_ttl_s + DP_HOT_EXPIRY_SLACK_S) * dp->tsc_hz;
	h->timeout_tsc = (uint64_t)c->request_timeout_ms * dp->tsc_hz / 1000 + dp->tsc_hz / 10;
	if (h->acc == NULL || h->top == NULL || h->view == NULL || h->fwd_prev == NULL ||
	    h->fwd_rate == NULL || h->keys == NULL)
		return -ENOMEM;
	return 0;
}

void dp_hot_free(struct dp *dp)
{
	struct dp_hot *h = dp->hot;

	if (h == NULL)
		return;
	if (tel_hot_dp == dp)
		tel_hot_dp = NULL;
	free(h->acc);
	free(h->top);
	free(h->view);
	free(h->fwd_prev);
	free(h->fwd_rate);
	rte_free(h->keys);
	rte_free(atomic_load_explicit(&dp->hotset, memory_order_relaxed));
	pthread_mutex_destroy(&h->lock);
	free(h);
	dp->hot = NULL;
}

/* ---- spreading: the control lcore's side --------------------------------------------- */

static int32_t id_find(const struct dp_hot *h, const uint8_t *key, uint32_t len)
{
	for (int32_t i = 0; i < DP_HOT_IDS; i++)
		if (h->id[i].named && h->keys->len[i] == len &&
		    memcmp(h->keys->key[i], key, len) == 0)
			return i;
	return -1;
}

/* A free id for @p key (its bytes written: no published set names it, nor did one for a
 * request timeout), or -1. */
static int32_t id_alloc(struct dp_hot *h, const uint8_t *key, uint32_t len, uint64_t now)
{
	for (int32_t i = 0; i < DP_HOT_IDS; i++) {
		struct dp_hot_id *d = &h->id[i];

		if (d->named || d->published != DP_HOT_STATE_NO || now < d->free_at)
			continue;
		memset(d, 0, sizeof(*d));
		d->named = true;
		h->keys->len[i] = (uint8_t)len;
		memcpy(h->keys->key[i], key, len);
		return i;
	}
	return -1;
}

/* What id @p i should be now. A key that stops spreading always cools first, however late
 * the control lcore looks: cool_until is set once the cooling set is published and no worker
 * holds the spreading one (set_update), so it counts from the last copy any worker could
 * have written. It ends there: the key leaves the set (writes go to the owner alone), and
 * every copy it left on a replica has expired, so a key that turns hot again finds none. */
static uint8_t id_state(const struct dp_hot *h, int32_t i, uint64_t now)
{
	const struct dp_hot_id *d = &h->id[i];

	if (!d->named)
		return DP_HOT_STATE_NO;
	if (d->pinned)
		return DP_HOT_STATE_PINNED;
	if (now < d->spread_until)
		return DP_HOT_STATE_SPREAD;
	if (d->published == DP_HOT_STATE_SPREAD || d->published == DP_HOT_STATE_PINNED)
		return DP_HOT_STATE_COOLING;
	if (d->published == DP_HOT_STATE_COOLING && now < d->cool_until)
		return DP_HOT_STATE_COOLING;
	return DP_HOT_STATE_NO;
}

static bool ep_in(const uint32_t *eps, uint32_t n, uint32_t ep)
{
	for (uint32_t i = 0; i < n; i++)
		if (eps[i] == ep)
			return true;
	return false;
}

/* Entry @p e's old[]: id @p d's former replicas whose copies may live at @p now, and the
 * replicas of its published set that this one leaves out (old_update() gives them their
 * time once it is published), neither being its replicas again. */
static void old_fill(const struct dp_hot_id *d, struct dp_hotent *e, uint64_t now)
{
	for (uint32_t i = 0; i < d->nrep && e->nold < DP_HOT_OLD_MAX; i++)
		if (!ep_in(e->rep, e->nrep, d->rep[i]))
			e->old[e->nold++] = d->rep[i];
	for (uint32_t i = 0; i < d->nold && e->nold < DP_HOT_OLD_MAX; i++)
		if (now < d->old_until[i] && !ep_in(e->rep, e->nrep, d->old[i]) &&
		    !ep_in(e->old, e->nold, d->old[i]))
			e->old[e->nold++] = d->old[i];
}

/* Id @p d's replicas are now @p e's (published, reached every worker at @p synced): the ones
 * that left become former replicas until their copies could have expired (@p cool after);
 * those back in the set, or expired, stop being. With DP_HOT_OLD_MAX taken, the one whose
 * copies expire first gives its place (h->old_lost: a flip that rare is the case not covered). */
static void old_update(struct dp_hot *h, struct dp_hot_id *d, const struct dp_hotent *e,
		       uint64_t synced)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < d->nold; i++)
		if (synced < d->old_until[i] && !ep_in(e->rep, e->nrep, d->old[i])) {
			d->old[n] = d->old[i];
			d->old_until[n++] = d->old_until[i];
		}
	d->nold = (uint8_t)n;
	for (uint32_t i = 0; i < d->nrep; i++) {
		uint32_t slot = d->nold;

		if (ep_in(e->rep, e->nrep, d->rep[i]))
			continue;
		for (uint32_t j = 0; j < d->nold; j++)
			if (d->old[j] == d->rep[i])
				slot = j; /* left again: its copies live longer */
		if (slot == d->nold && d->nold == DP_HOT_OLD_MAX) {
			slot = 0;
			for (uint32_t j = 1; j < d->nold; j++)
				if (d->old_until[j] < d->old_until[slot])
					slot = j;
			h->old_lost++;
		} else if (slot == d->nold) {
			d->nold++;
		}
		d->old[slot] = d->rep[i];
		d->old_until[slot] = synced + h->cool_tsc;
	}
	d->nrep = e->nrep;
	memcpy(d->rep, e->rep, e->nrep * sizeof(e->rep[0]));
}

/* Build the set of the named ids in @p states on view @p v (replicas walked on its
 * placement); NULL when memory runs out. */
static struct dp_hotset *set_build(struct dp *dp, struct dp_hot *h, const uint8_t *states,
				   const struct dp_view *v, uint64_t now)
{
	uint32_t n = 0, mask = 15, r = RTE_MIN(dp->cfg.hot_replicas, (uint32_t)DP_HOT_R_MAX);
	struct dp_hotset *hs;

	for (int i = 0; i < DP_HOT_IDS; i++)
		n += states[i] != DP_HOT_STATE_NO;
	while (mask + 1 < 2 * n)
		mask = mask * 2 + 1;
	hs = rte_zmalloc("dp_hotset",
			 sizeof(*hs) + n * sizeof(hs->ent[0]) + (mask + 1) * sizeof(uint16_t),
			 RTE_CACHE_LINE_SIZE);
	if (hs == NULL)
		return NULL;
	hs->epoch = v != NULL ? v->epoch : 0;
	hs->idx_mask = mask;
	hs->idx = (uint16_t *)(void *)&hs->ent[n];
	for (int i = 0; i < DP_HOT_IDS; i++) {
		struct dp_hotent *e = &hs->ent[hs->n];
		uint32_t rep[DP_HOT_R_MAX], j;
		int got = 0;

		if (states[i] == DP_HOT_STATE_NO)
			continue;
		e->hash = hk_hash(h->keys->key[i], h->keys->len[i]);
		e->id = (uint16_t)i;
		e->spread = states[i] != DP_HOT_STATE_COOLING;
		if (v != NULL)
			got = pl_replicas(v->pl,
					  pl_key_hash(v->pl, h->keys->key[i], h->keys->len[i]), rep,
					  r);
		for (int k = 0; k < got; k++)
			if (rep[k] < v->n)
				e->rep[e->nrep++] = v->ep[rep[k]];
		old_fill(&h->id[i], e, now);
		for (j = (uint32_t)e->hash & mask; hs->idx[j] != 0; j = (j + 1) & mask)
			;
		hs->idx[j] = (uint16_t)(++hs->n);
	}
	return hs;
}

/* Publish the hot set the ids call for now if it differs from the published one (or the
 * placement changed): release store, wait until no worker reads the old one, free it. */
static int set_update(struct dp *dp, struct dp_hot *h, uint64_t now)
{
	const struct dp_view *v = atomic_load_explicit(&dp->w[0]->view, memory_order_relaxed);
	struct dp_hotset *old, *hs;
	uint8_t states[DP_HOT_IDS];
	uint64_t synced;
	bool changed = v != NULL && v->epoch != h->set_epoch;
	uint32_t spreading = 0, cooling = 0;

	for (int i = 0; i < DP_HOT_IDS; i++) {
		states[i] = id_state(h, i, now);
		changed |= states[i] != h->id[i].published;
		spreading += states[i] == DP_HOT_STATE_SPREAD || states[i] == DP_HOT_STATE_PINNED;
		cooling += states[i] == DP_HOT_STATE_COOLING;
	}
	if (!changed)
		return 0;
	hs = spreading + cooling == 0 ? NULL : set_build(dp, h, states, v, now);
	if (hs == NULL && spreading + cooling != 0)
		return -ENOMEM;
	old = atomic_load_explicit(&dp->hotset, memory_order_relaxed);
	/* Release: the set's contents (and key bytes of new ids) before its pointer. */
	atomic_store_explicit(&dp->hotset, hs, memory_order_release);
	rte_rcu_qsbr_synchronize(dp->rcu, RTE_QSBR_THRID_INVALID);
	rte_free(old);
	/* From here no worker writes a copy of a key that stopped spreading: its cooling (the
	 * copies' exptime and memcached's clock slack) counts from now. */
	synced = rte_rdtsc();
	for (int i = 0; i < DP_HOT_IDS; i++) {
		bool was_spread = h->id[i].published == DP_HOT_STATE_SPREAD ||
				  h->id[i].published == DP_HOT_STATE_PINNED;

		if (h->id[i].named && states[i] == DP_HOT_STATE_NO) {
			h->id[i].named = false; /* slots may name it for a request timeout */
			h->id[i].free_at = now + h->timeout_tsc;
		}
		if (states[i] != DP_HOT_STATE_NO)
			for (uint32_t k = 0; k < hs->n; k++)
				if (hs->ent[k].id == i)
					old_update(h, &h->id[i], &hs->ent[k], synced);
		if (was_spread && states[i] == DP_HOT_STATE_COOLING)
			h->id[i].cool_until = synced + h->cool_tsc;
		h->id[i].published = states[i];
	}
	h->set_epoch = v != NULL ? v->epoch : 0;
	pthread_mutex_lock(&h->lock);
	h->sum.spreading = spreading;
	h->sum.cooling = cooling;
	h->sum.publishes++;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* Keys of the new view over the threshold (a share of their owner's rate) spread. */
static void mark_hot(struct dp *dp, struct dp_hot *h, uint32_t n, uint64_t now)
{
	double thr = dp->cfg.hot_threshold_pct / 100.0;

	for (uint32_t i = 0; i < n && thr > 0; i++) {
		struct dp_hotkey *k = &h->view[i];
		int32_t id;

		/* At least 4 samples: fewer say little of a rate. */
		if (k->count < 4 || k->owner < 0 || k->rate_min < thr * k->owner_rate)
			continue;
		id = id_find(h, k->key, k->len);
		if (id < 0)
			id = id_alloc(h, k->key, k->len, now);
		if (id >= 0)
			h->id[id].spread_until = now + h->hold_tsc;
	}
}

int dp_hot_pin(struct dp *dp, const uint8_t *key, uint32_t len, bool pin)
{
	struct dp_hot *h = dp->hot;
	uint64_t now = rte_rdtsc();
	int32_t id;

	if (len == 0 || len > MC_KEY_MAX)
		return -EINVAL;
	id = id_find(h, key, len);
	if (!pin && (id < 0 || !h->id[id].pinned))
		return -ENOENT;
	if (id < 0)
		id = id_alloc(h, key, len, now);
	if (id < 0)
		return -ENOSPC;
	h->id[id].pinned = pin;
	if (!pin && h->id[id].spread_until < now)
		h->id[id].spread_until = now; /* cools down from now */
	return set_update(dp, h, now);
}

/* Start a round: each worker whose last sketch was merged gets the cleared one back. */
static void round_start(struct dp *dp, struct dp_hot *h, uint64_t now)
{
	for (uint16_t i = 0; i < dp->cfg.n_workers; i++) {
		if (!h->merged[i])
			continue; /* still owes the last round: asked again only once it answers */
		h->merged[i] = false;
		/* Release: the clearing of the sketch handed back happens before the request. */
		atomic_store_explicit(&dp->w[i]->hot->req, ++h->sent[i], memory_order_release);
	}
	h->prev_tick = h->tick_tsc;
	h->tick_tsc = now;
	h->pending = true;
}

/* Merge the sketches of the workers that answered; true when none is missing. */
static bool round_collect(struct dp *dp, struct dp_hot *h)
{
	bool all = true;

	for (uint16_t i = 0; i < dp->cfg.n_workers; i++) {
		struct dp_hotw *hw = dp->w[i]->hot;
		struct hk_sketch *old;

		if (h->merged[i])
			continue;
		/* Acquire pairs with the worker's release in dp_hot_swap(). */
		if (atomic_load_explicit(&hw->done, memory_order_acquire) != h->sent[i]) {
			all = false;
			continue;
		}
		old = hw->sk[(h->sent[i] + 1) & 1];
		hk_sketch_merge(h->acc, old); /* -ENOMEM: this worker's samples are lost */
		hk_sketch_reset(old);
		h->merged[i] = true;
	}
	return all;
}

/* Requests/s forwarded to each endpoint over the round's interval. */
static void node_rates(struct dp *dp, struct dp_hot *h, double secs)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);

	for (uint32_t e = 0; e < n; e++) {
		uint64_t f = 0;

		for (uint16_t i = 0; i < dp->cfg.n_workers; i++)
			f += dp->w[i]->node_fwd[e];
		h->fwd_rate[e] = f >= h->fwd_prev[e] ? (double)(f - h->fwd_prev[e]) / secs : 0;
		h->fwd_prev[e] = f;
	}
}

/* One view entry from merged entry @p t. */
static void view_entry(struct dp *dp, struct dp_hot *h, const struct hk_entry *t, double scale,
		       const struct dp_view *v, struct dp_hotkey *o)
{
	memset(o, 0, sizeof(*o));
	o->len = t->len;
	memcpy(o->key, t->key, t->len);
	o->count = t->count;
	o->err = t->err;
	o->rate = (double)t->count * scale;
	o->rate_min = (double)(t->count - t->err) * scale;
	o->owner = v != NULL ? pl_lookup(v->pl, t->key, t->len) : -1;
	if (o->owner >= 0 && (uint32_t)o->owner < v->n) {
		uint32_t ep = v->ep[o->owner];

		o->owner_rate = h->fwd_rate[ep];
		snprintf(o->owner_name, sizeof(o->owner_name), "%s", dp->eps[ep].name);
	} else {
		o->owner = -1;
	}
}

static void round_publish(struct dp *dp, struct dp_hot *h)
{
	/* The control lcore is the only writer of the view pointers: a relaxed load. */
	const struct dp_view *v = atomic_load_explicit(&dp->w[0]->view, memory_order_relaxed);
	double secs = (double)(h->tick_tsc - h->prev_tick) / (double)dp->tsc_hz;
	double scale = secs > 0 ? h->sum.sample_every / secs : 0;
	uint32_t n = hk_sketch_top(h->acc, h->top, h->acc->cap);
	uint32_t g = hk_sketch_guaranteed(h->acc, n);

	node_rates(dp, h, secs);
	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < n; i++) {
		int32_t id;

		view_entry(dp, h, &h->top[i], scale, v, &h->view[i]);
		h->view[i].guaranteed = i < g;
		id = id_find(h, h->view[i].key, h->view[i].len);
		h->view[i].spread = id >= 0 ? h->id[id].published : DP_HOT_STATE_NO;
	}
	h->sum.intervals++;
	h->sum.interval_s = secs;
	h->sum.sampled = h->acc->total;
	h->sum.bound_rate = (double)h->acc->total / h->acc->cap * scale;
	h->sum.keys = n;
	h->sum.guaranteed = g;
	pthread_mutex_unlock(&h->lock);
	hk_sketch_reset(h->acc);
	h->pending = false;
	mark_hot(dp, h, n, h->tick_tsc);
	set_update(dp, h, h->tick_tsc); /* -ENOMEM: the previous set stays */
}

void dp_hot_control_poll(struct dp *dp, uint64_t now)
{
	struct dp_hot *h = dp->hot;

	/* Keys cooling down leave, a new placement gets its replicas walked: republished only
	 * when something changed. */
	if (atomic_load_explicit(&dp->hotset, memory_order_relaxed) != NULL)
		set_update(dp, h, now);
	if (h->tick_tsc == 0) {
		h->tick_tsc = now; /* the first interval starts */
		node_rates(dp, h, 1);
		return;
	}
	if (h->pending) {
		bool all = round_collect(dp, h);

		if (!all && now - h->tick_tsc < h->interval_tsc / 2)
			return;
		for (uint16_t i = 0; i < dp->cfg.n_workers; i++)
			h->sum.late += !h->merged[i];
		round_publish(dp, h);
	}
	if (now - h->tick_tsc >= h->interval_tsc)
		round_start(dp, h, now);
}

uint32_t dp_hotkeys_get(struct dp *dp, struct dp_hotkey *out, uint32_t n,
			struct dp_hot_summary *sum)
{
	struct dp_hot *h = dp->hot;
	uint32_t k;

	pthread_mutex_lock(&h->lock);
	k = RTE_MIN(n, h->sum.keys);
	if (k != 0)
		memcpy(out, h->view, sizeof(*out) * k);
	if (sum != NULL)
		*sum = h->sum;
	pthread_mutex_unlock(&h->lock);
	return k;
}

size_t dp_hotkey_text(const uint8_t *key, uint32_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (uint32_t i = 0; i < len && o + 4 <= cap; i++) {
		uint8_t c = key[i];

		if (c > 0x20 && c < 0x7f && c != '%' && c != '"' && c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '%';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	if (cap > 0)
		out[o < cap ? o : cap - 1] = '\0';
	return o;
}

#define TEL_HOT_DEFAULT 10
#define TEL_HOT_MAX	40

static int tel_hotkeys(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct dp_hotkey *v = calloc(TEL_HOT_MAX, sizeof(*v));
	struct dp_hot_summary s;
	uint32_t want = TEL_HOT_DEFAULT, n;
	char name[32], text[3 * MC_KEY_MAX + 1];

	(void)cmd;
	if (v == NULL || tel_hot_dp == NULL) {
		free(v);
		return -EINVAL;
	}
	if (params != NULL && *params != '\0')
		want = RTE_MIN((uint32_t)strtoul(params, NULL, 10), (uint32_t)TEL_HOT_MAX);
	n = dp_hotkeys_get(tel_hot_dp, v, want, &s);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "intervals", s.intervals);
	rte_tel_data_add_dict_u64(d, "interval_ms", (uint64_t)(s.interval_s * 1000 + 0.5));
	rte_tel_data_add_dict_u64(d, "sampled", s.sampled);
	rte_tel_data_add_dict_u64(d, "sample_every", s.sample_every);
	rte_tel_data_add_dict_u64(d, "sketch_keys", s.sketch_keys);
	rte_tel_data_add_dict_u64(d, "bound_rate", (uint64_t)(s.bound_rate + 0.5));
	rte_tel_data_add_dict_u64(d, "guaranteed", s.guaranteed);
	rte_tel_data_add_dict_u64(d, "keys", n);
	for (uint32_t i = 0; i < n; i++) {
		dp_hotkey_text(v[i].key, v[i].len, text, sizeof(text));
		snprintf(name, sizeof(name), "key%u", i);
		rte_tel_data_add_dict_string(d, name, text);
		snprintf(name, sizeof(name), "key%u_rate", i);
		rte_tel_data_add_dict_u64(d, name, (uint64_t)(v[i].rate + 0.5));
		snprintf(name, sizeof(name), "key%u_rate_min", i);
		rte_tel_data_add_dict_u64(d, name, (uint64_t)(v[i].rate_min + 0.5));
		snprintf(name, sizeof(name), "key%u_owner", i);
		rte_tel_data_add_dict_string(d, name, v[i].owner_name);
	}
	free(v);
	return 0;
}

int dp_hot_telemetry_register(struct dp *dp)
{
	static bool registered;
	int rc;

	tel_hot_dp = dp;
	if (registered)
		return 0;
	rc = rte_telemetry_register_cmd(
		"/ringway/hotkeys", tel_hotkeys,
		"Hot keys, hottest first (param N: 10, at most 40): sampled, bound_rate, key<i>, "
		"key<i>_rate, _rate_min, _owner");
	registered = rc == 0;
	return rc;
}
