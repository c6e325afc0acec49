/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DP_OBSERVE_H
#define RINGWAY_DP_OBSERVE_H

/*
 * Latency recording on the workers (lib/observe histograms, one set per worker, written only
 * by it, merged by readers in dp_observe.c):
 *   - node round trip, per endpoint: from the start of the RX burst that sent a request (the
 *     slot's tsc) to the start of the RX burst that completed its reply; recorded once per
 *     slot, when its reply is complete (one-message replies, tracked multi-message replies,
 *     multi-get sub-replies). A reply handed over by another worker is completed before the
 *     owner's next burst starts, so its time is short by up to one loop iteration.
 *   - the router's own time per packet: from the start of an RX burst to the end of its TX
 *     burst, recorded once per burst with the number of requests forwarded and replies
 *     returned in it (each of them spent at most that long in the router).
 * Nanoseconds, converted from TSC cycles with one multiply and shift.
 */

#include <rte_cycles.h>

#include "dataplane_priv.h"
#include "observe.h"

/* ns = cycles * ns_mult >> DP_NS_SHIFT (exact to 1e-6; no overflow below 2^44 cycles). */
#define DP_NS_SHIFT 20

static inline uint64_t dp_tsc_to_ns(const struct dp_worker *w, uint64_t cycles)
{
	return (cycles * w->ns_mult) >> DP_NS_SHIFT;
}

/* Slot @p sl's reply is complete: its round trip into its node's histogram. */
static inline void dp_obs_reply_done(struct dp_worker *w, const struct dp_slot *sl)
{
	/* tsc is the request burst's now | 1: one tick ahead of now at most. */
	uint64_t d = w->now > sl->tsc ? w->now - sl->tsc : 0;

	obs_set_add(&w->node_rtt, sl->ep, dp_tsc_to_ns(w, d));
}

/* Forwarded + returned so far: taken before a burst, given to dp_obs_burst_done() after. */
static inline uint64_t dp_obs_sent(const struct dp_worker *w)
{
	return w->ctr[DP_CTR_FORWARDED] + w->ctr[DP_CTR_RETURNED];
}

/* The burst that started at w->now is flushed: its packets' time in the router. */
static inline void dp_obs_burst_done(struct dp_worker *w, uint64_t sent_before)
{
	uint64_t n = dp_obs_sent(w) - sent_before;

	if (n != 0)
		obs_hist_add(w->router_time, dp_tsc_to_ns(w, rte_rdtsc() - w->now), n);
}

#endif /* RINGWAY_DP_OBSERVE_H */
