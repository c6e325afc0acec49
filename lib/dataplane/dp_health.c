/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node health on the control lcore (dp_health_poll, once per tick): each node's state machine
 * (lib/health) fed with the workers' per-node timeouts and replies and with the answers to the
 * router's probes; the per-node word workers read (dp_endpoint.health) published on a change,
 * never an epoch; the keys written or deleted for a down node drained from the workers' rings
 * into a per-node set, and deleted on the node before it serves again.
 *
 * Probes are memcached `version` datagrams from the router's address and probe_port, built
 * here and sent through worker 0's control ring (as ARP requests are); a worker accepts the
 * answer only from the node's address, port and MAC with the probe's request id
 * (dp_worker.c: handle_probe_reply) and stores that id in probe_ok. A clean-up batch is a
 * probe too: `delete KEY noreply` lines (meta `md B64 b q` for keys text cannot carry) and
 * `version` last, so its answer says every delete before it was applied.
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "dp_tx.h"

/* Stand-ins remembered per dirty key: past it, the key's copies are looked for at every
 * member (at_all). */
#define DIRTY_AT 3

/* A key remembered for a node: in a dirty set, with the stand-ins its writes went to. */
struct dirty_key {
	uint8_t len;
	uint8_t n_at;	/* at[0, n_at): endpoints that took writes of it in the outage */
	bool at_all;	/* more stand-ins than at[] holds: every member may hold a copy */
	uint8_t key[MC_KEY_MAX];
	uint32_t at[DIRTY_AT];
};

/* A set of keys: keys[0, n) (room for cap, cap <= its bound, any number), and an
 * open-addressing index of 1 + mask entries (0 = empty), a power of two at least twice cap
 * whatever cap is: a probe always ends at an empty entry (issue 27: an index sized from a
 * clamped cap had no empty entry left and the probe spun forever). Bounded by
 * dirty_keys_max. Ends in set_clear(). */
struct key_set {
	struct dirty_key *keys;
	uint32_t *index;
	uint32_t n, cap, mask;
};

/* The control lcore's health state of one endpoint. */
struct dp_ep_health {
	struct hl_node hl;
	uint64_t tmo_seen, ret_seen, lost_seen; /* the workers' sums last merged */
	uint64_t probes_sent, probes_answered;
	uint32_t probe_want; /* the outstanding probe's id | DP_PROBE_VALID, 0: none */
	uint16_t probe_seq;
	int8_t batch;	     /* what the outstanding probe is: 0 probe, 1 clean-up, 2 flush */
	bool stale;	     /* keys were lost while down: held until the operator decides */
	bool flush;	     /* operator, or a member joining: flush_all before it serves */
	bool joining;	     /* joined to be flushed first (dp_health_join_flush); ends in
			      * bring_up, or with the entry (dp_health_reset) */
	bool accept;	     /* operator: serve without cleaning what was lost */
	bool held_told;	     /* the hold was reported */
	uint64_t lost;	     /* keys that could not be remembered */
	uint32_t clean_pos;  /* keys [0, clean_pos) deleted on the node */
	uint32_t clean_next; /* ... once the outstanding batch is answered */
	/* the dirty set: keys written or deleted for this node while it was down (and keys of
	 * other nodes' outages whose copies it took while it was down itself, see copies). A
	 * key past dirty_keys_max is counted in lost and holds the node (ready()). Ends when the
	 * node serves again (bring_up: handed to the stand-ins' copy sets) or when its entry is
	 * reset. */
	struct key_set dirty;
	/* the copy set: keys of which this node, serving, may hold a failover copy older than
	 * its owner's (written while the owner was down; the owner is back and took writes
	 * since). Filled when an owner comes back (bring_up), deleted here in batches ending in
	 * `version` (sweep()), each batch resent until answered; a key past dirty_keys_max is
	 * counted in copies_lost (its copy expires within failover_ttl_s). Ends when every key
	 * was deleted, when the node stops serving (the rest moves into its dirty set: deleted
	 * before it serves again), or when its entry is reset. */
	struct key_set copies;
	uint32_t copy_pos;   /* copies [0, copy_pos) deleted */
	uint32_t copy_next;  /* ... once the outstanding batch is answered */
	uint32_t copy_want;  /* the outstanding batch's id | DP_PROBE_VALID, 0: none */
	uint64_t copy_sent_ms;
	uint64_t copies_lost; /* keys that did not fit the copy set */
};

#define DP_HEALTH_EVENTS 256

struct dp_health {
	struct dp_health_event ev[DP_HEALTH_EVENTS];
	uint32_t ev_head, ev_tail;
	uint64_t ev_lost;
	uint64_t bytes; /* dirty sets' memory */
};

static uint64_t now_ms(const struct dp *dp)
{
	return rte_get_tsc_cycles() / (dp->tsc_hz / 1000 ? dp->tsc_hz / 1000 : 1);
}

static struct dp_health *health_of(struct dp *dp)
{
	if (dp->health == NULL)
		dp->health = calloc(1, sizeof(*dp->health));
	return dp->health;
}

/*
 * Publish @p e's health word @p word (DP_EP_SERVING / DP_EP_DOWN). A change starts a new
 * health generation: its TSC, before which sent requests never count against the node
 * (expire_slot), and a number no change of any endpoint had, which names the outage of an
 * owner and the life of a stand-in in the failover table (dp_failover.c). Both are stored
 * before the word (release), so a worker that sees the word sees them. The generation ends
 * with the next change; it leaves nothing behind (failover table entries of an old
 * generation no longer match and are overwritten by later keys).
 */
static void new_generation(struct dp *dp, struct dp_endpoint *e)
{
	if (++dp->health_gen_next == 0)
		dp->health_gen_next = 1; /* 0: never changed */
	atomic_store_explicit(&e->health_gen, dp->health_gen_next, memory_order_relaxed);
	atomic_store_explicit(&e->health_tsc, rte_get_tsc_cycles(), memory_order_relaxed);
}

static void publish_health(struct dp *dp, struct dp_endpoint *e, uint32_t word)
{
	if (atomic_load_explicit(&e->health, memory_order_relaxed) != word)
		new_generation(dp, e);
	atomic_store_explicit(&e->health, word, memory_order_release);
}

static void event(struct dp *dp, const struct dp_endpoint *e, enum hl_state from, enum hl_state to,
		  uint64_t at, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void event(struct dp *dp, const struct dp_endpoint *e, enum hl_state from, enum hl_state to,
		  uint64_t at, const char *fmt, ...)
{
	struct dp_health *h = health_of(dp);
	struct dp_health_event *v;
	va_list ap;

	if (h == NULL)
		return;
	if (h->ev_tail - h->ev_head == DP_HEALTH_EVENTS) {
		h->ev_head++;
		h->ev_lost++;
	}
	v = &h->ev[h->ev_tail++ % DP_HEALTH_EVENTS];
	snprintf(v->name, sizeof(v->name), "%s", e->name);
	v->from = from;
	v->to = to;
	v->at_ms = at;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

uint32_t dp_health_events(struct dp *dp, struct dp_health_event *out, uint32_t max, uint64_t *lost)
{
	struct dp_health *h = dp->health;
	uint32_t k = 0;

	if (lost != NULL)
		*lost = h != NULL ? h->ev_lost : 0;
	if (h == NULL)
		return 0;
	h->ev_lost = 0;
	while (k < max && h->ev_head != h->ev_tail)
		out[k++] = h->ev[h->ev_head++ % DP_HEALTH_EVENTS];
	return k;
}

/* ---- the dirty set of one node ---------------------------------------------------------- */

static uint32_t key_hash(const uint8_t *k, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 16777619u;
	return h;
}

/* The memory the set @p s holds. */
static uint64_t set_bytes(const struct key_set *s)
{
	return s->cap == 0 ? 0
			   : (uint64_t)s->cap * sizeof(*s->keys) +
				     ((uint64_t)s->mask + 1) * sizeof(*s->index);
}

static void set_clear(struct dp *dp, struct key_set *s)
{
	if (dp->health != NULL)
		dp->health->bytes -= set_bytes(s);
	free(s->keys);
	free(s->index);
	s->keys = NULL;
	s->index = NULL;
	s->n = s->cap = s->mask = 0;
}

/* The smallest power of two >= @p n (n <= 2^31). */
static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* Grow to hold at least one more key (up to @p max). false: full or out of memory (the set
 * is unchanged). */
static bool set_grow(struct dp *dp, struct key_set *s, uint32_t max)
{
	uint32_t cap = s->cap ? s->cap * 2 : 64, mask;
	uint64_t before = set_bytes(s);
	struct dp_health *h;
	struct dirty_key *k;
	uint32_t *x;

	if (s->n < s->cap)
		return true;
	if (s->n >= max)
		return false;
	cap = cap > max ? max : cap;
	/* At least twice the keys it may hold, a power of two: the load stays <= 1/2. */
	mask = pow2_at_least(cap * 2) - 1;
	x = calloc((size_t)mask + 1, sizeof(*x));
	if (x == NULL)
		return false;
	k = realloc(s->keys, (size_t)cap * sizeof(*k));
	if (k == NULL) {
		free(x);
		return false;
	}
	s->keys = k;
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t j = key_hash(k[i].key, k[i].len) & mask;

		while (x[j] != 0)
			j = (j + 1) & mask;
		x[j] = i + 1;
	}
	free(s->index);
	s->index = x;
	s->cap = cap;
	s->mask = mask;
	h = health_of(dp);
	if (h != NULL)
		h->bytes += set_bytes(s) - before;
	return true;
}

/* Whether a clean-up batch can carry @p key's delete (mc_delete_line). */
static bool deletable(const uint8_t *key, uint32_t len)
{
	char line[MC_DELETE_LINE_MAX];

	return mc_delete_line(key, len, line, sizeof(line)) != 0;
}

/* Record that a write of @p d went to endpoint @p at (UINT32_MAX: none). */
static void key_at(struct dirty_key *d, uint32_t at)
{
	if (at == UINT32_MAX || d->at_all)
		return;
	for (uint8_t i = 0; i < d->n_at; i++)
		if (d->at[i] == at)
			return;
	if (d->n_at < DIRTY_AT)
		d->at[d->n_at++] = at;
	else
		d->at_all = true;
}

/* Add @p key unless known, noting stand-in @p at (UINT32_MAX: none). false: not remembered
 * (full: dirty_keys_max, out of memory, or a key no text or meta delete can carry). */
static bool set_add(struct dp *dp, struct key_set *s, const uint8_t *key, uint32_t len,
		    uint32_t at)
{
	struct dirty_key *d;
	uint32_t h;

	if (s->cap != 0) {
		for (h = key_hash(key, len) & s->mask; s->index[h] != 0; h = (h + 1) & s->mask) {
			d = &s->keys[s->index[h] - 1];
			if (d->len == len && memcmp(d->key, key, len) == 0) {
				key_at(d, at); /* known */
				return true;
			}
		}
	}
	/* A key no quiet delete can carry cannot be cleaned: lost, so the node is held. */
	if (!deletable(key, len) || !set_grow(dp, s, dp->cfg.dirty_keys_max))
		return false;
	for (h = key_hash(key, len) & s->mask; s->index[h] != 0; h = (h + 1) & s->mask)
		;
	d = &s->keys[s->n];
	d->len = (uint8_t)len;
	d->n_at = 0;
	d->at_all = false;
	memcpy(d->key, key, len);
	key_at(d, at);
	s->index[h] = ++s->n;
	return true;
}

/* ---- probes ------------------------------------------------------------------------------ */

/* The body of a clean-up batch from key *pos on, ending in `version`; *pos moves past the keys
 * it holds. @return its length. */
static uint32_t clean_body(const struct key_set *s, uint32_t *pos, char *b, uint32_t room)
{
	uint32_t len = 0;

	while (*pos < s->n) {
		const struct dirty_key *d = &s->keys[*pos];
		char line[MC_DELETE_LINE_MAX];
		uint32_t k = (uint32_t)mc_delete_line(d->key, d->len, line, sizeof(line));

		if (len + k + 9 > room)
			break;
		memcpy(b + len, line, k);
		len += k;
		(*pos)++;
	}
	memcpy(b + len, "version\r\n", 9);
	return len + 9;
}

/* Send @p body (@p len bytes) to endpoint @p e from probe_port, with request id @p id.
 * @return 0, or -ENOBUFS / -EAGAIN (no MAC, no mbuf, control ring full: try next tick). */
static int send_to_node(struct dp *dp, struct dp_endpoint *e, uint16_t id, const char *body,
			uint32_t len)
{
	uint64_t mac = atomic_load_explicit(&e->mac, memory_order_relaxed);
	const struct dp_worker *w0 = dp->w[0];
	/* On the node port's VLAN when it has one (routes and VLANs), untagged otherwise. */
	bool tagged = w0->node_vlan_fixed && w0->node_vlan_tagged;
	uint32_t hdr = (uint32_t)(sizeof(struct rte_ether_hdr) + (tagged ? 4 : 0) +
				  sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr));
	struct mc_frame f = {id, 0, 1, 0};
	struct rte_mbuf *m;
	uint8_t *p, node_mac[6];

	if (!(mac & DP_MAC_VALID) || dp->cfg.pool == NULL)
		return -EAGAIN;
	m = rte_pktmbuf_alloc(dp->cfg.pool);
	if (m == NULL)
		return -ENOBUFS;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(hdr + MC_FRAME_HDR_LEN + len));
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	mc_frame_write(p + hdr, &f);
	memcpy(p + hdr + MC_FRAME_HDR_LEN, body, len);
	memcpy(node_mac, &mac, 6);
	if (!dp_udp_build_ep(dp->w[0], m, node_mac, tagged, w0->node_vlan_tci,
			     (uint32_t)(e - dp->eps), rte_cpu_to_be_16(dp->cfg.probe_port),
			     rte_cpu_to_be_16(e->port))) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (rte_ring_sp_enqueue(dp->w[0]->ctl_ring, m) != 0) {
		rte_pktmbuf_free(m);
		return -EAGAIN;
	}
	return 0;
}

/* Send a probe (@p batch 0: `version`; 1: the next clean-up batch; 2: flush_all) and start its
 * clock. The id is stored before the enqueue (release), so a worker that sees the answer sees
 * the id. */
static void probe(struct dp *dp, struct dp_endpoint *e, struct dp_ep_health *s, int batch,
		  uint64_t now)
{
	char body[MC_UDP_PAYLOAD_MAX];
	uint32_t len, pos = s->clean_pos;
	uint16_t id = ++s->probe_seq;

	if (batch == 1)
		len = clean_body(&s->dirty, &pos, body, sizeof(body) - MC_FRAME_HDR_LEN);
	else if (batch == 2)
		len = (uint32_t)snprintf(body, sizeof(body), "flush_all noreply\r\nversion\r\n");
	else
		len = (uint32_t)snprintf(body, sizeof(body), "version\r\n");
	s->probe_want = id | DP_PROBE_VALID;
	atomic_store_explicit(&e->probe_id, s->probe_want, memory_order_relaxed);
	if (send_to_node(dp, e, id, body, len) != 0)
		return;
	s->batch = (int8_t)batch;
	s->clean_next = pos;
	s->probes_sent++;
	hl_probe_sent(&s->hl, now);
}

/* Keys that reached a node already serving again (a worker a burst behind the flip): deleted
 * at once, no answer asked (noreply, no version). */
static void delete_late(struct dp *dp, struct dp_endpoint *e, const struct dirty_key *d)
{
	char line[MC_DELETE_LINE_MAX];
	size_t k = mc_delete_line(d->key, d->len, line, sizeof(line));

	if (k != 0)
		send_to_node(dp, e, 0, line, (uint32_t)k);
}

/* ---- the tick ---------------------------------------------------------------------------- */

static struct dp_ep_health *state_of(struct dp *dp, struct dp_endpoint *e, uint64_t now)
{
	if (e->hs == NULL) {
		e->hs = calloc(1, sizeof(*e->hs));
		if (e->hs == NULL)
			return NULL;
		hl_node_init(&e->hs->hl, now);
		/* From the sums when its node joined (ep_commit), not from 0: the entry's former
		 * occupants' timeouts are not this node's failures. */
		e->hs->tmo_seen = e->base_tmo;
		e->hs->ret_seen = e->base_ret;
		e->hs->lost_seen = e->base_lost;
		(void)dp;
	}
	return e->hs;
}

/* A key of an outage that ended (its owner @p owner serves again and takes its writes): any
 * copy of it at endpoint @p at, written there while the owner was away, may be older than the
 * owner's from now on. A serving @p at deletes it soon (its copy set, sweep()); a down one
 * before it serves again (its dirty set). */
static void copy_stale_at(struct dp *dp, uint32_t at, uint32_t owner, const uint8_t *key,
			  uint32_t len, uint64_t now)
{
	struct dp_endpoint *e = &dp->eps[at];
	struct dp_ep_health *s;

	if (at == owner || at >= dp->cfg.neighbours || !e->used)
		return;
	s = state_of(dp, e, now);
	if (s == NULL)
		return;
	if (hl_serving(&s->hl)) {
		if (!set_add(dp, &s->copies, key, len, UINT32_MAX))
			s->copies_lost++;
	} else if (!set_add(dp, &s->dirty, key, len, UINT32_MAX)) {
		s->lost++;
	}
}

/* copy_stale_at() for every endpoint @p d names (every member, past DIRTY_AT of them). */
static void copies_stale(struct dp *dp, uint32_t owner, const struct dirty_key *d, uint64_t now)
{
	if (d->at_all) {
		uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);

		for (uint32_t i = 0; i < n; i++)
			if (dp->eps[i].in_ring || dp->eps[i].in_gutter)
				copy_stale_at(dp, i, owner, d->key, d->len, now);
		return;
	}
	for (uint8_t i = 0; i < d->n_at; i++)
		copy_stale_at(dp, d->at[i], owner, d->key, d->len, now);
}

/* Move every worker's recorded keys into their node's set. */
static void drain_dirty(struct dp *dp, uint64_t now)
{
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		struct dp_worker *w = dp->w[k];
		uint32_t head = atomic_load_explicit(&w->dirty_head, memory_order_relaxed);
		uint32_t tail = atomic_load_explicit(&w->dirty_tail, memory_order_acquire);

		for (; head != tail; head++) {
			const struct dp_dirty *r = &w->dirty[head & (DP_DIRTY_RING - 1)];
			struct dirty_key d = {.len = r->len, .n_at = 1, .at = {r->at}};
			uint32_t ep = r->ep;
			struct dp_endpoint *e = &dp->eps[ep];
			struct dp_ep_health *s;

			if (ep >= dp->cfg.neighbours || !e->used)
				continue;
			memcpy(d.key, r->key, r->len);
			s = state_of(dp, e, now);
			if (s == NULL)
				continue;
			if (hl_serving(&s->hl)) {
				/* A worker a burst behind the owner's return wrote at a stand-in:
				 * the owner forgets the key, the stand-in's copy is stale soon. */
				delete_late(dp, e, &d);
				copies_stale(dp, ep, &d, now);
			} else if (!set_add(dp, &s->dirty, d.key, d.len, r->at)) {
				s->lost++;
			}
		}
		/* Release: the entries are copied before the worker may overwrite them. */
		atomic_store_explicit(&w->dirty_head, head, memory_order_release);
	}
}

static uint64_t sum_of(const struct dp *dp, uint32_t i, int what)
{
	uint64_t v = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		const struct dp_worker *w = dp->w[k];

		v += what == 0 ? w->node_tmo[i] : what == 1 ? w->node_ret[i] : w->node_lost[i];
	}
	return v;
}

/* Serving again: the word workers read, the set handed to the stand-ins that took its keys'
 * writes (their copies are older than the owner's from now on), the operator's choices spent.
 * The hand-over follows the word: until then the stand-ins' copies were the current ones. */
static void bring_up(struct dp *dp, struct dp_endpoint *e, struct dp_ep_health *s, uint64_t now)
{
	enum hl_state from = s->hl.state;
	uint32_t cleaned = s->dirty.n;

	hl_mark_up(&s->hl, now);
	publish_health(dp, e, DP_EP_SERVING);
	for (uint32_t i = 0; i < s->dirty.n; i++)
		copies_stale(dp, (uint32_t)(e - dp->eps), &s->dirty.keys[i], now);
	set_clear(dp, &s->dirty);
	s->clean_pos = s->clean_next = 0;
	s->stale = s->flush = s->accept = s->held_told = s->joining = false;
	s->lost = 0;
	event(dp, e, from, HL_UP, now, "back in service after %u stale key(s) deleted", cleaned);
}

/* Ready to serve (probes answered): clean first, unless records were lost and the operator
 * has not said what to do. */
static void ready(struct dp *dp, struct dp_endpoint *e, struct dp_ep_health *s, uint64_t now)
{
	if (s->hl.probe_out)
		return;
	if (s->stale && !s->flush && !s->accept) {
		if (!s->held_told)
			event(dp, e, s->hl.state, s->hl.state, now,
			      "held: %" PRIu64 " written key(s) not remembered (dirty_keys_max); "
			      "ringwayctl health %s up --flush | --accept-stale",
			      s->lost, e->name);
		s->held_told = true;
		return;
	}
	if (s->flush)
		return probe(dp, e, s, 2, now);
	if (s->clean_pos < s->dirty.n)
		return probe(dp, e, s, 1, now);
	bring_up(dp, e, s, now);
}

/* The answer to the outstanding probe, if a worker accepted it. */
static bool answered(struct dp *dp, struct dp_endpoint *e, struct dp_ep_health *s, uint64_t now)
{
	if (!s->hl.probe_out ||
	    atomic_load_explicit(&e->probe_ok, memory_order_relaxed) != s->probe_want)
		return false;
	s->probes_answered++;
	if (s->batch == 1)
		s->clean_pos = s->clean_next;
	if (s->batch == 2) { /* flushed: nothing it holds is older than its outage */
		s->flush = false;
		s->stale = false;
		s->clean_pos = s->dirty.n;
	}
	return hl_probe_result(&s->hl, &dp->cfg.health, now, true);
}

static void copies_clear(struct dp *dp, struct dp_ep_health *s)
{
	set_clear(dp, &s->copies);
	s->copy_pos = s->copy_next = s->copy_want = 0;
}

/* Delete the copy set on its serving node, a batch (`delete KEY noreply` lines, `version`
 * last) at a time, each sent again until its answer comes back (probe_timeout_ms), never while
 * a health probe is out (the probe's id would be overwritten: the probe channel is the
 * health's first). A node that stops serving keeps the rest in its dirty set. */
static void sweep(struct dp *dp, struct dp_endpoint *e, struct dp_ep_health *s, uint64_t now)
{
	char body[MC_UDP_PAYLOAD_MAX];
	uint32_t len, pos;
	uint16_t id;

	if (s->copies.n == 0)
		return;
	if (!hl_serving(&s->hl)) {
		for (uint32_t i = s->copy_pos; i < s->copies.n; i++)
			if (!set_add(dp, &s->dirty, s->copies.keys[i].key, s->copies.keys[i].len,
				     UINT32_MAX))
				s->lost++;
		return copies_clear(dp, s);
	}
	if (s->copy_want != 0) {
		if (atomic_load_explicit(&e->probe_ok, memory_order_relaxed) == s->copy_want) {
			s->copy_pos = s->copy_next;
			s->copy_want = 0;
		} else if (now - s->copy_sent_ms < dp->cfg.health.probe_timeout_ms) {
			return;
		} else {
			s->copy_want = 0; /* lost, or its id overwritten by a probe: sent again */
		}
	}
	if (s->copy_pos >= s->copies.n)
		return copies_clear(dp, s);
	if (s->hl.probe_out)
		return;
	pos = s->copy_pos;
	len = clean_body(&s->copies, &pos, body, sizeof(body) - MC_FRAME_HDR_LEN);
	id = ++s->probe_seq;
	atomic_store_explicit(&e->probe_id, id | DP_PROBE_VALID, memory_order_relaxed);
	if (send_to_node(dp, e, id, body, len) != 0)
		return;
	s->copy_want = id | DP_PROBE_VALID;
	s->copy_next = pos;
	s->copy_sent_ms = now;
	s->probes_sent++;
}

static void judge(struct dp *dp, uint32_t i, uint64_t now)
{
	struct dp_endpoint *e = &dp->eps[i];
	struct dp_ep_health *s = state_of(dp, e, now);
	const struct hl_config *c = &dp->cfg.health;
	uint64_t tmo = sum_of(dp, i, 0), ret = sum_of(dp, i, 1), lost = sum_of(dp, i, 2);
	enum hl_state from;

	if (s == NULL)
		return;
	from = s->hl.state;
	hl_passive(&s->hl, c, now, tmo - s->tmo_seen, ret - s->ret_seen);
	if (lost != s->lost_seen) {
		s->lost += lost - s->lost_seen;
		s->stale = true;
	}
	s->stale |= s->lost != 0;
	s->tmo_seen = tmo;
	s->ret_seen = ret;
	s->lost_seen = lost;
	answered(dp, e, s, now);
	hl_tick(&s->hl, c, now);
	if (hl_ready(&s->hl, c))
		ready(dp, e, s, now);
	else if (hl_probe_due(&s->hl, c, now))
		probe(dp, e, s, 0, now);
	if (s->hl.state != from &&
	    !hl_serving(&s->hl) != !hl_serving(&(struct hl_node){.state = from}))
		publish_health(dp, e, hl_serving(&s->hl) ? DP_EP_SERVING : DP_EP_DOWN);
	if (s->hl.state != from && s->hl.state != HL_UP)
		event(dp, e, from, s->hl.state, now, "%" PRIu64 " failure(s), probe every %u ms",
		      s->hl.failures, s->hl.interval_ms);
	sweep(dp, e, s, now);
}

void dp_health_poll(struct dp *dp)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	uint64_t now = now_ms(dp);

	drain_dirty(dp, now);
	for (uint32_t i = 0; i < n; i++)
		if (dp->eps[i].used && (dp->eps[i].in_ring || dp->eps[i].in_gutter))
			judge(dp, i, now);
}

int dp_health_admin(struct dp *dp, const char *name, enum dp_health_admin op)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	uint64_t now = now_ms(dp);

	for (uint32_t i = 0; i < n; i++) {
		struct dp_endpoint *e = &dp->eps[i];
		struct dp_ep_health *s;
		enum hl_state from;

		if (!e->used || !(e->in_ring || e->in_gutter) || strcmp(e->name, name) != 0)
			continue;
		s = state_of(dp, e, now);
		if (s == NULL)
			return -ENOMEM;
		from = s->hl.state;
		if (op == DP_HEALTH_DOWN) {
			hl_admin_down(&s->hl, now);
			publish_health(dp, e, DP_EP_DOWN);
			event(dp, e, from, HL_DOWN, now, "held down by the operator");
			return 0;
		}
		if (op == DP_HEALTH_UP && s->stale && !hl_serving(&s->hl))
			return -ESTALE;
		s->flush |= op == DP_HEALTH_UP_FLUSH;
		s->accept |= op == DP_HEALTH_UP_ACCEPT_STALE;
		s->held_told = false;
		hl_admin_up(&s->hl, &dp->cfg.health, now);
		if (!hl_serving(&s->hl))
			event(dp, e, from, s->hl.state, now, "let back by the operator%s",
			      s->flush	  ? " (flush_all)"
			      : s->accept ? " (accepting stale keys)"
					  : "");
		return 0;
	}
	return -ENOENT;
}

int dp_health_join_flush(struct dp *dp, struct dp_endpoint *e)
{
	uint64_t now = now_ms(dp);
	struct dp_ep_health *s = state_of(dp, e, now);
	enum hl_state from;

	if (s == NULL)
		return -ENOMEM;
	from = s->hl.state;
	hl_join_unready(&s->hl, &dp->cfg.health, now);
	s->flush = s->joining = true;
	s->held_told = false;
	publish_health(dp, e, DP_EP_DOWN);
	event(dp, e, from, s->hl.state, now, "joins: flush_all before it serves");
	return 0;
}

uint32_t dp_health_joining(const struct dp *dp)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += dp->eps[i].used && dp->eps[i].hs != NULL && dp->eps[i].hs->joining;
	return k;
}

void dp_health_fill(const struct dp *dp, uint32_t i, struct dp_node_stats *o)
{
	const struct dp_endpoint *e = &dp->eps[i];
	const struct dp_ep_health *s = e->hs;
	uint64_t now = now_ms(dp);

	o->failover_mode = dp->cfg.failover;
	o->timeouts = sum_of(dp, i, 0);
	if (s == NULL) {
		o->health = HL_UP;
		return;
	}
	o->health = s->hl.state;
	o->held = s->hl.admin_down;
	o->stale = s->stale && !hl_serving(&s->hl);
	o->health_for_ms = now > s->hl.since_ms ? now - s->hl.since_ms : 0;
	o->failures = s->hl.failures;
	o->downs = s->hl.downs;
	o->flaps = s->hl.flaps;
	o->probes_sent = s->probes_sent;
	o->probes_answered = s->probes_answered;
	o->dirty_keys = s->dirty.n;
	o->stale_copies = s->copies.n - s->copy_pos;
	o->stale_copies_lost = s->copies_lost;
	o->dirty_lost = s->lost;
}

uint64_t dp_health_bytes(const struct dp *dp)
{
	return dp->health != NULL ? dp->health->bytes : 0;
}

void dp_health_reset(struct dp *dp, struct dp_endpoint *e)
{
	if (e->hs != NULL) {
		set_clear(dp, &e->hs->dirty);
		set_clear(dp, &e->hs->copies);
		free(e->hs);
		e->hs = NULL;
	}
	/* A new generation: nothing sent to the slot's previous node counts against a new one,
	 * and no failover copy of it is taken as current. */
	new_generation(dp, e);
	atomic_store_explicit(&e->health, DP_EP_SERVING, memory_order_release);
	atomic_store_explicit(&e->probe_id, 0, memory_order_relaxed);
	atomic_store_explicit(&e->probe_ok, 0, memory_order_relaxed);
}

void dp_health_free(struct dp *dp)
{
	for (uint32_t i = 0; dp->eps != NULL && i < dp->cfg.neighbours; i++)
		if (dp->eps[i].hs != NULL)
			dp_health_reset(dp, &dp->eps[i]);
	free(dp->health);
	dp->health = NULL;
	rte_free(dp->fo_seen);
	dp->fo_seen = NULL;
}

int dp_health_init(struct dp *dp)
{
	dp->fo_seen = rte_zmalloc("dp_fo_seen", sizeof(*dp->fo_seen) * DP_FO_SEEN,
				  RTE_CACHE_LINE_SIZE);
	return dp->fo_seen != NULL ? 0 : -ENOMEM;
}
