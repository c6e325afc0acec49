/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_HEALTH_H
#define RINGWAY_HEALTH_H

/**
 * @file
 * One cache node's health as the router judges it: a state machine fed with the deltas of
 * passive signals (requests that timed out, replies that came back) and with the results of
 * active probes, each with the time it was observed (milliseconds on any monotonic clock).
 *
 *   up --failure--> suspect --fail_down failures within window_ms--> down
 *   suspect --window_ms without a failure, replies seen--> up
 *   down --probe sent (every interval, doubling up to probe_max_ms)--> probing
 *   probing --probe failed or timed out--> down (interval doubled)
 *   probing --up_successes probes answered in a row--> ready: the caller cleans the node
 *           (stale keys) and calls hl_mark_up()
 * A node that goes down again less than flap_ms after it came back flapped: its probe
 * interval keeps doubling instead of starting again at probe_min_ms.
 * An operator may hold a node down (hl_admin_down: no probes, no return) and let it back
 * (hl_admin_up: probing with the success count met, so the caller's clean-up runs at once).
 * A node that joins with something to clean first (hl_join_unready) starts the same way.
 *
 * No DPDK, no allocation, no clock of its own: the router's control lcore, tests and tools
 * use the same code. One thread per struct hl_node.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** States: enum suffix, name. Requests go to the node only when it is up or suspect. */
#define HL_FOREACH_STATE(_)                                                                  \
	_(UP, "up")	      /* serving */                                                  \
	_(SUSPECT, "suspect") /* serving; failures seen, fewer than fail_down in a window */ \
	_(DOWN, "down")	      /* not serving; waiting for the next probe */                  \
	_(PROBING, "probing") /* not serving; a probe out, or answers being counted */

enum hl_state {
#define HL_STATE_ENUM(e, s) HL_##e,
	HL_FOREACH_STATE(HL_STATE_ENUM)
#undef HL_STATE_ENUM
		HL_STATE_COUNT
};

/** Thresholds, in the units named. */
struct hl_config {
	uint32_t fail_down;	   /**< failures within window_ms that mark a node down (>= 1) */
	uint32_t window_ms;	   /**< the window failures are counted in */
	uint32_t probe_min_ms;	   /**< first probe interval once down */
	uint32_t probe_max_ms;	   /**< the interval doubles up to this */
	uint32_t probe_timeout_ms; /**< a probe not answered in this time failed */
	uint32_t up_successes;	   /**< probes answered in a row that let a node back (>= 1) */
	uint32_t flap_ms;	   /**< down again within this after coming back: flapped */
};

/** Defaults: 3 failures in 1000 ms, probes every 100 ms doubling to 5000 ms, 200 ms probe
 *  timeout, 2 answers to come back, 10 s flap window. */
void hl_config_defaults(struct hl_config *c);

/** 0, or -EINVAL (fail_down or up_successes 0, a 0 interval or window, min > max). */
int hl_config_check(const struct hl_config *c);

/** One node's health. Fields are read-only for callers. */
struct hl_node {
	enum hl_state state;
	uint64_t since_ms;	/**< when the state was entered */
	uint64_t window_ms;	/**< start of the current failure window */
	uint32_t fails;		/**< failures in it */
	uint32_t successes;	/**< probes answered in a row while probing */
	uint32_t interval_ms;	/**< the probe interval now (backoff) */
	uint64_t next_probe_ms; /**< when the next probe is due (down, probing) */
	uint64_t probe_sent_ms; /**< when the outstanding probe left */
	bool probe_out;		/**< a probe is outstanding */
	bool admin_down;	/**< held down by the operator */
	uint64_t up_ms;		/**< when the node last came back (0: never went down) */
	uint64_t failures;	/**< failures seen in total (timeouts, failed probes) */
	uint64_t downs;		/**< times marked down */
	uint64_t flaps;		/**< ... of them within flap_ms of coming back */
};

/** Name of @p s ("unknown" out of range). */
const char *hl_state_name(enum hl_state s);

/** @p n up since @p now. */
void hl_node_init(struct hl_node *n, uint64_t now);

/** Requests go to the node (up or suspect). */
static inline bool hl_serving(const struct hl_node *n)
{
	return n->state == HL_UP || n->state == HL_SUSPECT;
}

/**
 * Passive signals since the previous call at @p now: @p fails requests that failed (timed out
 * or were answered with a server error), @p oks replies that came back. Ignored while the node
 * is not serving (late replies of a node already judged).
 * @return true when the state changed.
 */
bool hl_passive(struct hl_node *n, const struct hl_config *c, uint64_t now, uint64_t fails,
		uint64_t oks);

/**
 * Time passes: a probe outstanding longer than probe_timeout_ms fails; a suspect node whose
 * window ran out without reaching fail_down is up again.
 * @return true when the state changed.
 */
bool hl_tick(struct hl_node *n, const struct hl_config *c, uint64_t now);

/** A probe should be sent at @p now: suspect (confirm at once) or down/probing with its
 *  interval passed, no probe outstanding, not held down, not ready. */
bool hl_probe_due(const struct hl_node *n, const struct hl_config *c, uint64_t now);

/** The caller sent a probe at @p now. @return true when the state changed (down -> probing). */
bool hl_probe_sent(struct hl_node *n, uint64_t now);

/** The outstanding probe's result at @p now (answered: @p ok). A result with no probe out is
 *  ignored. @return true when the state changed. */
bool hl_probe_result(struct hl_node *n, const struct hl_config *c, uint64_t now, bool ok);

/** Probing with up_successes answers in a row: the caller may clean the node and mark it up. */
bool hl_ready(const struct hl_node *n, const struct hl_config *c);

/** Back in service at @p now (after hl_ready() and the caller's clean-up). */
void hl_mark_up(struct hl_node *n, uint64_t now);

/** The operator holds the node down at @p now (from any state). */
void hl_admin_down(struct hl_node *n, uint64_t now);

/** The operator lets the node back at @p now: probing and ready (hl_ready() true), so the
 *  caller's clean-up runs before hl_mark_up(). A serving node is left as it is. */
void hl_admin_up(struct hl_node *n, const struct hl_config *c, uint64_t now);

/** A node joins at @p now but must be readied before it serves (the caller flushes it):
 *  probing and ready, from any state, as hl_admin_up() lets a held node back. It ends as any
 *  probing node does: hl_mark_up() once the caller's flush is answered, or down when a probe
 *  fails. Counts no failure and no down. */
void hl_join_unready(struct hl_node *n, const struct hl_config *c, uint64_t now);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_HEALTH_H */
