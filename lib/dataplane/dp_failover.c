/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-ins for down nodes, on the worker lcore: which member serves a key while its owner is
 * down, and the record of keys written or deleted meanwhile, which the control lcore drains
 * (dp_health.c) and deletes on the owner before it is up again (the record's writer,
 * dp_fo_dirty, lives in dp_tx.c: a refused replica copy records its keys too). Called by
 * dp_worker.c and dp_mget.c; calls only the placement library.
 *
 * [failover] next: the rule, per algorithm (pl_replicas' order): ring, ketama and twemproxy walk
 * the continuum clockwise from the key's point; rendezvous takes the next-highest score; maglev the
 * next table entries after the key's; jump and modulo the buckets that follow the key's bucket,
 * cyclically. The first member in that order that is serving and whose MAC is known takes
 * the key. [failover] gutter: the gutter pool's own placement (same algorithm) orders its
 * nodes for the key, and the first serving one with a known MAC takes it. Placement never
 * changes: every other key stays where it is.
 *
 * The rule for copies written away from their owner (issue 27; docs/transitions.md "Node
 * failure and return"): a node that may hold a copy written while another node was away is
 * read for that key only once the copy is known current, else the copy is deleted there
 * before it is read; what cannot be made so is bounded by an expiry shorter than the time it
 * could be read stale. The bookkeeping:
 *  - the owner: every key written or deleted while it is down is recorded (dp_fo_dirty) and
 *    deleted on it before it serves again (dp_health.c), so the owner is never stale;
 *  - a stand-in (next member or gutter node): its copy of a down owner's key is current only
 *    if it was written there in this outage of the owner and this life of the stand-in.
 *    Every failover write marks the key in fo_seen with the pair's stamp (dp_fo_mark: the
 *    owner's and the stand-in's health generations, which change whenever either stops or
 *    starts serving). A failover read of a key whose entry does not carry the current stamp
 *    (dp_fo_known false) may meet an older copy: one written in an earlier outage (the owner
 *    came back and took writes since), one the stand-in took before it was down itself
 *    (others took the writes meanwhile), or one it kept from when it owned the key before a
 *    membership change. So the read goes out with a quiet delete of that key first
 *    (dp_fo_delete_first, text and meta; a binary one, or a multi-get split over nodes, gets
 *    the failover error instead): a miss, after which the client's own set makes the key
 *    known. Entries are never cleared: a later generation does not match an earlier one,
 *    and a key that lands on another key's entry is merely unknown again (a miss, never a
 *    stale hit; a false match needs the same 32 high hash bits and stamp: 2^-32).
 *  - the stand-ins' failover copies: each dirty record names the stand-in the write went to
 *    (dp_fo_dirty's @p at). When the owner serves again its copies are older than the
 *    owner's from then on, and a later change that reads them there (a remove or weight
 *    change that makes the stand-in the owner, hot spreading, a warm-up read) would serve
 *    them; so dp_health.c deletes each at the stand-ins that took it (batches ending in
 *    `version`, resent until answered; a stand-in down by then deletes it before it serves
 *    again). Copies past dirty_keys_max are not known: they expire after failover_ttl_s at
 *    most (mc_cap_ttl), and are never read stale through failover (above).
 */

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dataplane_priv.h"

static inline bool usable(const struct dp_worker *w, uint32_t ep)
{
	return dp_ep_serving(w, ep) &&
	       (atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed) & DP_MAC_VALID);
}

int32_t dp_fo_target(const struct dp_worker *w, const uint8_t *key, size_t len, uint64_t hash)
{
	const struct dp_view_gutter *g = &w->cur->gutter;
	uint32_t out[DP_FO_WALK];
	int n;

	if (w->failover == DP_FAILOVER_GUTTER) {
		if (g->pl == NULL)
			return -1;
		/* The pool's own hash: its placement may hash keys into another space. */
		n = pl_replicas(g->pl, pl_key_hash(g->pl, key, len), out, DP_FO_WALK);
		for (int i = 0; i < n; i++)
			if (usable(w, g->ep[out[i]]))
				return (int32_t)g->ep[out[i]];
		return -1;
	}
	n = pl_replicas(w->cur->pl, hash, out, DP_FO_WALK);
	for (int i = 1; i < n; i++)
		if (usable(w, w->cur->ep[out[i]]))
			return (int32_t)w->cur->ep[out[i]];
	return -1;
}

/* The stamp of (owner's outage, stand-in's life): both health generations, mixed so that
 * distinct pairs differ (a false match: 2^-32). */
static inline uint32_t fo_stamp(const struct dp_worker *w, uint32_t owner, uint32_t target)
{
	uint32_t a = atomic_load_explicit(&w->eps[owner].health_gen, memory_order_relaxed);
	uint32_t b = atomic_load_explicit(&w->eps[target].health_gen, memory_order_relaxed);
	uint32_t m = a * 0x9e3779b1u;

	m ^= m >> 15;
	m = (m + b) * 0x85ebca77u;
	return m ^ (m >> 13);
}

void dp_fo_mark(const struct dp_worker *w, uint64_t hash, uint32_t owner, uint32_t target)
{
	uint64_t v = (hash >> 32) << 32 | fo_stamp(w, owner, target);

	/* Relaxed: a reader a moment behind sees the key unknown, and asks for a miss. */
	atomic_store_explicit(&w->fo_seen[hash & (DP_FO_SEEN - 1)], v, memory_order_relaxed);
}

bool dp_fo_known(const struct dp_worker *w, uint64_t hash, uint32_t owner, uint32_t target)
{
	uint64_t v = atomic_load_explicit(&w->fo_seen[hash & (DP_FO_SEEN - 1)],
					  memory_order_relaxed);

	return v == ((hash >> 32) << 32 | fo_stamp(w, owner, target));
}

size_t dp_fo_delete_first(const uint8_t *p, size_t len, const struct mc_requests *r,
			  const bool *unknown, uint8_t *out, size_t cap)
{
	size_t o = MC_FRAME_HDR_LEN;

	if (len < MC_FRAME_HDR_LEN || cap < len)
		return 0;
	memcpy(out, p, MC_FRAME_HDR_LEN);
	for (uint16_t k = 0; k < r->nkeys; k++) {
		uint8_t key[MC_KEY_MAX];
		char line[MC_DELETE_LINE_MAX];
		size_t n = mc_key_decode(p, &r->keys[k], key);
		size_t l;

		if (!unknown[k])
			continue;
		l = mc_delete_line(key, n, line, sizeof(line));
		if (l == 0 || o + l + (len - MC_FRAME_HDR_LEN) > cap)
			return 0;
		memcpy(out + o, line, l);
		o += l;
	}
	memcpy(out + o, p + MC_FRAME_HDR_LEN, len - MC_FRAME_HDR_LEN);
	return o + len - MC_FRAME_HDR_LEN;
}
