/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-ins for down nodes, on the worker lcore: which member serves a key while its owner is
 * down, and the record of keys written or deleted meanwhile, which the control lcore drains
 * (dp_health.c) and deletes on the owner before it is up again. Called by dp_worker.c and
 * dp_mget.c; calls only the placement library.
 *
 * [failover] next: the rule, per algorithm (pl_replicas' order): ring, ketama and twemproxy walk
 * the continuum clockwise from the key's point; rendezvous takes the next-highest score; maglev the
 * next table entries after the key's; jump and modulo the buckets that follow the key's bucket,
 * cyclically. The first member in that order that is serving and whose MAC is known takes
 * the key. [failover] gutter: the gutter pool's own placement (same algorithm) orders its
 * nodes for the key, and the first serving one with a known MAC takes it. Placement never
 * changes: every other key stays where it is.
 */

#include <stdatomic.h>
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

void dp_fo_dirty(struct dp_worker *w, uint32_t ep, const uint8_t *key, size_t len)
{
	uint32_t tail = atomic_load_explicit(&w->dirty_tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&w->dirty_head, memory_order_acquire);
	struct dp_dirty *d;

	if (tail - head >= DP_DIRTY_RING || len > MC_KEY_MAX) {
		w->node_lost[ep]++;
		w->ctr[DP_CTR_DIRTY_LOST]++;
		return;
	}
	d = &w->dirty[tail & (DP_DIRTY_RING - 1)];
	d->ep = ep;
	d->len = (uint8_t)len;
	memcpy(d->key, key, len);
	/* Release: the entry is complete before the control lcore can see the new tail. */
	atomic_store_explicit(&w->dirty_tail, tail + 1, memory_order_release);
	w->ctr[DP_CTR_DIRTY_KEYS]++;
}
