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
 */

#include <stdatomic.h>

#include <rte_branch_prediction.h>

#include "dataplane_priv.h"
#include "hotkey.h"

/* A worker's hot-key state (allocated on its socket; written by it except req). */
struct dp_hotw {
	struct hk_sketch *sk[2]; /* sk[cur] is filled; the other is the control lcore's */
	uint32_t cur;
	uint32_t seen; /* the last request acted on */
	uint32_t every;
	uint64_t rng;
	_Atomic uint32_t req;  /* control lcore: swap requests (release) */
	_Atomic uint32_t done; /* worker: requests acted on (release) */
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

/* Once per poll: a swap request pending? (Relaxed: dp_hot_swap() loads it again with
 * acquire before touching the sketch.) */
static inline void dp_hot_poll_worker(struct dp_worker *w)
{
	struct dp_hotw *h = w->hot;

	if (unlikely(atomic_load_explicit(&h->req, memory_order_relaxed) != h->seen))
		dp_hot_swap(w);
}

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
