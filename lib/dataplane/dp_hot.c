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
	return 0;
}

void dp_hot_worker_free(struct dp_worker *w)
{
	if (w->hot == NULL)
		return;
	rte_free(w->hot->sk[0]);
	rte_free(w->hot->sk[1]);
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
	if (h->acc == NULL || h->top == NULL || h->view == NULL || h->fwd_prev == NULL ||
	    h->fwd_rate == NULL)
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
	pthread_mutex_destroy(&h->lock);
	free(h);
	dp->hot = NULL;
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
		view_entry(dp, h, &h->top[i], scale, v, &h->view[i]);
		h->view[i].guaranteed = i < g;
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
}

void dp_hot_control_poll(struct dp *dp, uint64_t now)
{
	struct dp_hot *h = dp->hot;

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
