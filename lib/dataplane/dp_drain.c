/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drain, the control lcore's side: the word workers load once per burst (struct dp.drain), and
 * the state an operator and a load balancer read (`drain status`, /metrics drain_state, the
 * unit's status line).
 *
 * How a drain ends: dp_drain_stop() (`undrain`), or the process ending. The state lives here
 * only, never in the state file: a restarted router serves again (a drain takes a router out
 * for maintenance; starting it again is putting it back). A drain leaves nothing behind to
 * clean: a refused request never took a slot, and the requests in flight end as they would
 * have (their reply, or their timeout).
 *
 * When it is drained: every worker tells itself, at the end of a poll, that it holds no
 * request slot and no multi-get under a word of the current drain (struct dp_worker
 * drain_ack). A worker that loaded that word refuses every later request, and a slot is taken
 * only for a request (a warm-up re-ask takes one while freeing its request's in the same
 * reply), so once a worker is empty under the drain it stays empty until `undrain`. No slot
 * count of another lcore's table is trusted for the verdict; the counts shown beside it are a
 * moment's view.
 */

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include <rte_cycles.h>

#include "dataplane.h"
#include "dataplane_priv.h"

static const char *const answer_names[] = {
#define DP_DRAIN_ANSWER_NAME(e, s) s,
	DP_FOREACH_DRAIN_ANSWER(DP_DRAIN_ANSWER_NAME)
#undef DP_DRAIN_ANSWER_NAME
};

static const char *const state_names[] = {
	[DP_DRAIN_SERVING] = "serving",
	[DP_DRAIN_DRAINING] = "draining",
	[DP_DRAIN_DRAINED] = "drained",
};

const char *dp_drain_answer_name(enum dp_drain_answer a)
{
	return (unsigned int)a < DP_DRAIN_ANSWER_COUNT ? answer_names[a] : "unknown";
}

int dp_drain_answer_parse(const char *name, enum dp_drain_answer *out)
{
	for (int a = 0; a < DP_DRAIN_ANSWER_COUNT; a++)
		if (strcmp(name, answer_names[a]) == 0) {
			*out = (enum dp_drain_answer)a;
			return 0;
		}
	return -EINVAL;
}

const char *dp_drain_state_name(enum dp_drain_state s)
{
	return (unsigned int)s <= DP_DRAIN_DRAINED ? state_names[s] : "unknown";
}

/* Slots in use now over every worker, and multi-gets in *mget: a moment's view (plain reads
 * of counters the workers move). */
static uint32_t slots_in_use(const struct dp *dp, uint32_t *mget)
{
	uint32_t n = 0, g = 0;

	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		const struct dp_worker *w = dp->w[k];

		n += w->slot_mask + 1 - (w->free_tail - w->free_head);
		g += w->mgets != NULL ? dp->cfg.mget_max - w->n_mget_free : 0;
	}
	if (mget != NULL)
		*mget = g;
	return n;
}

int dp_drain_start(struct dp *dp, enum dp_drain_answer answer)
{
	uint32_t word = atomic_load_explicit(&dp->drain, memory_order_relaxed);

	if ((unsigned int)answer >= DP_DRAIN_ANSWER_COUNT)
		return -EINVAL;
	if (DP_DRAIN_WORD_MODE(word) == 0) {
		/* A new drain: a sequence number no worker has acknowledged yet (30 bits,
		 * never 0, so a worker's 0 "not empty" never matches). */
		dp->drain_seq = (dp->drain_seq + 1) & 0x3fffffffu;
		if (dp->drain_seq == 0)
			dp->drain_seq = 1;
		dp->drain_tsc = rte_rdtsc() | 1;
		dp->drained_tsc = 0;
		dp->drain_at_start = slots_in_use(dp, NULL);
		atomic_store_explicit(&dp->drain_state, DP_DRAIN_DRAINING, memory_order_relaxed);
	}
	/* While draining only the answer changes: the sequence number, and with it every
	 * worker's acknowledgement, stays. */
	atomic_store_explicit(&dp->drain, DP_DRAIN_WORD(dp->drain_seq, (uint32_t)answer + 1),
			      memory_order_relaxed);
	return 0;
}

int dp_drain_stop(struct dp *dp)
{
	if (DP_DRAIN_WORD_MODE(atomic_load_explicit(&dp->drain, memory_order_relaxed)) == 0)
		return -ENOENT;
	atomic_store_explicit(&dp->drain, DP_DRAIN_WORD(dp->drain_seq, 0), memory_order_relaxed);
	atomic_store_explicit(&dp->drain_state, DP_DRAIN_SERVING, memory_order_relaxed);
	dp->drain_tsc = 0;
	dp->drained_tsc = 0;
	return 0;
}

void dp_drain_poll(struct dp *dp)
{
	if (atomic_load_explicit(&dp->drain_state, memory_order_relaxed) != DP_DRAIN_DRAINING)
		return;
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		if (atomic_load_explicit(&dp->w[k]->drain_ack, memory_order_relaxed) >> 2 !=
		    dp->drain_seq)
			return;
	dp->drained_tsc = rte_rdtsc();
	atomic_store_explicit(&dp->drain_state, DP_DRAIN_DRAINED, memory_order_relaxed);
}

int dp_drain_get(struct dp *dp, struct dp_drain_status *out)
{
	uint32_t word;

	dp_drain_poll(dp);
	word = atomic_load_explicit(&dp->drain, memory_order_relaxed);
	memset(out, 0, sizeof(*out));
	out->state = (enum dp_drain_state)atomic_load_explicit(&dp->drain_state,
								memory_order_relaxed);
	out->answer = DP_DRAIN_WORD_MODE(word) != 0
			      ? (enum dp_drain_answer)(DP_DRAIN_WORD_MODE(word) - 1)
			      : DP_DRAIN_ERROR;
	out->in_flight = slots_in_use(dp, &out->mget_live);
	if (out->state == DP_DRAIN_SERVING)
		return 0;
	out->in_flight_at_start = dp->drain_at_start;
	out->ms = (rte_rdtsc() - dp->drain_tsc) * 1000 / dp->tsc_hz;
	if (out->state == DP_DRAIN_DRAINED)
		out->drained_after_ms = (dp->drained_tsc - dp->drain_tsc) * 1000 / dp->tsc_hz;
	return 0;
}
