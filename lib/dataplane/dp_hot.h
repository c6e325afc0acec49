/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DP_HOT_H
#define RINGWAY_DP_HOT_H

/*
 * Hot keys on the workers (dp_hot.c): each worker files the first key of about 1 in
 * hot_sample_every keyed requests into its own Space-Saving sketch (lib/hotkey). It has two:
 * it fills one while the control lcore merges the other. The hand-over is a request counter
 * the control lcore bumps (release, after clearing the sketch it hands back) and the worker
 * acknowledges once per poll (release, after its last write to the sketch it gives up), so
 * neither ever writes what the other reads. The unsampled cost is a decrement and a branch.
 *
 * Spreading: the control lcore publishes the hot set (struct dp_hotset, immutable, by RCU like
 * the placement) and workers load it once per poll. A single ASCII `get` of a hot key goes to
 * one of its R replicas (dp_hot_route: the lower load of two random ones, under the bounded
 * load cap); its slot is marked, and the reply path hands the replica's answer to
 * dp_hot_reply(): a miss there is absorbed and the slot re-asks the owner (a fetch), whose
 * answer goes to the client and, on a hit, is copied to the replica with `add` (a fill, TTL
 * capped). A write of a hot key sends its copy (an ASCII set) or `delete KEY noreply` to
 * every other replica before the write itself leaves for the owner (and the delete
 * suppresses fills of the key for a request timeout: struct dp_hot_keys, the only state
 * workers share, written on writes of hot keys only).
 *
 * Cooling: a key that stops spreading stays in the set, its writes deleting the replicas'
 * copies and writing none (fills stop too), until every copy written while it spread could
 * have expired (fill_ttl_s + DP_HOT_EXPIRY_SLACK_S, counted from the publication after which
 * no worker writes one). Then it leaves; a key that turns hot again finds no copy on a
 * replica older than its last write (issue 27).
 */

#include <stdatomic.h>

#include <rte_branch_prediction.h>

#include "dataplane_priv.h"
#include "hotkey.h"

/* memcached counts expiry in whole seconds of a clock it reads once a second: an item set
 * with exptime N can still be read up to a second after N seconds. A cooling key stays in the
 * set this much longer than the copies' exptime (and a little more for the TX ring's queue). */
#define DP_HOT_EXPIRY_SLACK_S 2

/* Keys the hot set may name at once (spreading or cooling), and replicas per key. */
#define DP_HOT_IDS   256
#define DP_HOT_R_MAX 8

/* Per key id: its bytes (written by the control lcore only while no published hot set has
 * named the id for a request timeout: workers read them), and what writes of it started
 * (any worker: relaxed store of the TSC, then a sequentially consistent increment, before its
 * invalidations are queued; fills read both). */
struct dp_hot_keys {
	uint8_t len[DP_HOT_IDS];
	uint8_t key[DP_HOT_IDS][MC_KEY_MAX];
	_Atomic uint64_t wlast[DP_HOT_IDS];
	_Atomic uint32_t wseq[DP_HOT_IDS];
};

/* Former replicas a key's writes still delete at (struct dp_hotent.old). */
#define DP_HOT_OLD_MAX 16

/* A key of the hot set: its hash, id, whether reads spread (0: cooling, writes still
 * invalidate), its replicas' endpoints in the placement's replica order ([0]: the owner), and
 * the endpoints that were its replicas in an earlier published set and may still hold a copy
 * (a membership change moved the replica set; issue 27, soak seed 5034: a set changed and
 * changed back within fill_ttl_s read a copy two writes old from a replica that had been out
 * of it). Writes delete at those too; reads never go there. */
struct dp_hotent {
	uint64_t hash;
	uint16_t id;
	uint8_t spread;
	uint8_t nrep;
	uint8_t nold;
	uint32_t rep[DP_HOT_R_MAX];
	uint32_t old[DP_HOT_OLD_MAX];
};

/* The published hot set: immutable; ent[] then an index of idx_mask + 1 entries (entry + 1,
 * 0 empty; linear probing on the hash). */
struct dp_hotset {
	uint64_t epoch; /* placement the replicas were walked on */
	uint32_t n;
	uint32_t idx_mask;
	uint16_t *idx;
	struct dp_hotent ent[];
};

/* A spread read's state, per slot (dp_hotw.slot), valid while the slot is DP_MULTI_HOT. */
struct dp_hotslot {
	uint32_t replica; /* endpoint first asked */
	uint32_t owner;	  /* endpoint of the owner */
	uint32_t wseq;	  /* the key's write count when the owner was asked */
	uint16_t id;
	uint8_t stage; /* DP_HOT_READ: waiting for the replica; DP_HOT_FETCH: for the owner */
};

enum { DP_HOT_NONE = 0, DP_HOT_READ, DP_HOT_FETCH };

/* A worker's hot-key state (allocated on its socket; written by it except req). */
struct dp_hotw {
	struct hk_sketch *sk[2]; /* sk[cur] is filled; the other is the control lcore's */
	uint32_t cur;
	uint32_t seen; /* the last request acted on */
	uint32_t every;
	uint64_t rng;
	_Atomic uint32_t req;  /* control lcore: swap requests (release) */
	_Atomic uint32_t done; /* worker: requests acted on (release) */
	/* Spreading */
	const struct dp_hotset *set; /* loaded once per poll */
	const struct dp_hotset *set_seen;
	struct dp_hot_keys *keys;
	struct dp_hotslot *slot; /* per request slot */
	uint64_t *base;		 /* per endpoint: node_fwd when set_seen was loaded */
	uint64_t base_total;	 /* forwarded then */
	uint64_t fill_quiet_tsc; /* no fill this long after a write of the key began */
	uint32_t load_milli;	 /* 1000 x (1 + eps) */
	uint32_t ttl_s;		 /* exptime of the fills */
};

/* The sampled path: file @p r's first key (the parse of @p pk) and draw the next gap. */
void dp_hot_sample(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r);
/* Act on the control lcore's swap request: fill the other sketch from now on. */
void dp_hot_swap(struct dp_worker *w);

/* A keyed request was parsed: sample it if its turn has come. */
static inline void dp_hot_count(struct dp_worker *w, const struct dp_pkt *pk,
				const struct mc_requests *r)
{
	if (unlikely(--w->hot_left == 0))
		dp_hot_sample(w, pk, r);
}

/* A new hot set was loaded: loads count from now. */
void dp_hot_set_seen(struct dp_worker *w);

/* Once per poll: a swap request pending? (Relaxed: dp_hot_swap() loads it again with
 * acquire before touching the sketch.) The hot set for this poll (acquire: pairs with the
 * control lcore's release store; the worker reports quiescence after the poll). */
static inline void dp_hot_poll_worker(struct dp_worker *w)
{
	struct dp_hotw *h = w->hot;

	if (unlikely(atomic_load_explicit(&h->req, memory_order_relaxed) != h->seen))
		dp_hot_swap(w);
	h->set = atomic_load_explicit(&w->dp->hotset, memory_order_acquire);
	if (unlikely(h->set != h->set_seen))
		dp_hot_set_seen(w);
}

/*
 * Where the keyed requests @p r (the parse of @p pk, all of one owner, endpoint @p owner)
 * go: the owner, or for a lone ASCII `get` of a spread key one of its replicas (then *mark
 * says how to mark the slot). Each write of a hot or cooling key among them (quiet or not)
 * queues the copies or deletes of its other replicas first. Only with a hot set loaded.
 */
uint32_t dp_hot_route(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		      uint32_t owner, struct dp_hotslot *mark);
/* Slot @p s carries the spread read @p mark (DP_MULTI_HOT). */
void dp_hot_mark(struct dp_worker *w, uint32_t s, const struct dp_hotslot *mark);
/* A reply datagram for DP_MULTI_HOT slot @p s (checked: live, source, generation, VLAN):
 * true when it was consumed here (a replica's miss, turned into the owner's fetch; a bad
 * frame, dropped); false: pass it to the client as a one-message reply (the slot is
 * DP_MULTI_NONE again; an owner's hit was copied to the replica first). */
bool dp_hot_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t s);

/* Set-up (control lcore, at creation) and teardown. */
int dp_hot_worker_init(struct dp_worker *w, const struct dp_config *c, int socket);
void dp_hot_worker_free(struct dp_worker *w);
int dp_hot_init(struct dp *dp);
void dp_hot_free(struct dp *dp);
/* Every hot_interval_ms: merge the sketches the workers handed back into the view. */
void dp_hot_control_poll(struct dp *dp, uint64_t now);
/* /ringway/hotkeys telemetry. */
int dp_hot_telemetry_register(struct dp *dp);

#endif /* RINGWAY_DP_HOT_H */
