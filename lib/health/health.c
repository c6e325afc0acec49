/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node health state machine (see health.h for the transitions). Pure functions of the
 * node, the thresholds and the time given: the same inputs always give the same states.
 */

#include <errno.h>

#include "health.h"

static const char *const state_names[] = {
#define HL_STATE_NAME(e, s) s,
	HL_FOREACH_STATE(HL_STATE_NAME)
#undef HL_STATE_NAME
};

const char *hl_state_name(enum hl_state s)
{
	return (unsigned int)s < HL_STATE_COUNT ? state_names[s] : "unknown";
}

void hl_config_defaults(struct hl_config *c)
{
	c->fail_down = 3;
	c->window_ms = 1000;
	c->probe_min_ms = 100;
	c->probe_max_ms = 5000;
	c->probe_timeout_ms = 200;
	c->up_successes = 2;
	c->flap_ms = 10000;
}

int hl_config_check(const struct hl_config *c)
{
	if (c->fail_down == 0 || c->up_successes == 0 || c->window_ms == 0 ||
	    c->probe_min_ms == 0 || c->probe_timeout_ms == 0 || c->probe_min_ms > c->probe_max_ms)
		return -EINVAL;
	return 0;
}

static void enter(struct hl_node *n, enum hl_state s, uint64_t now)
{
	n->state = s;
	n->since_ms = now;
}

void hl_node_init(struct hl_node *n, uint64_t now)
{
	*n = (struct hl_node){.state = HL_UP, .since_ms = now};
}

/* Serving -> down at @p now. The probe interval starts again at probe_min_ms, unless the node
 * came back less than flap_ms ago: then it keeps doubling (a flapping node backs off). */
static void mark_down(struct hl_node *n, const struct hl_config *c, uint64_t now)
{
	bool flapped = n->up_ms != 0 && now - n->up_ms < c->flap_ms;

	if (flapped) {
		n->flaps++;
		n->interval_ms =
			n->interval_ms * 2 > c->probe_max_ms ? c->probe_max_ms : n->interval_ms * 2;
	} else {
		n->interval_ms = c->probe_min_ms;
	}
	n->downs++;
	n->fails = 0;
	n->successes = 0;
	n->probe_out = false;
	n->next_probe_ms = now + n->interval_ms;
	enter(n, HL_DOWN, now);
}

/* One or more failures at @p now on a serving node. @return true when the state changed. */
static bool failed(struct hl_node *n, const struct hl_config *c, uint64_t now, uint64_t k)
{
	bool changed = false;

	n->failures += k;
	if (n->state == HL_UP || now - n->window_ms > c->window_ms) {
		n->window_ms = now;
		n->fails = 0;
	}
	n->fails = n->fails + k > UINT32_MAX ? UINT32_MAX : (uint32_t)(n->fails + k);
	if (n->state == HL_UP) {
		enter(n, HL_SUSPECT, now);
		changed = true;
	}
	if (n->fails >= c->fail_down) {
		mark_down(n, c, now);
		changed = true;
	}
	return changed;
}

bool hl_passive(struct hl_node *n, const struct hl_config *c, uint64_t now, uint64_t fails,
		uint64_t oks)
{
	if (!hl_serving(n) || n->admin_down)
		return false;
	if (fails > 0)
		return failed(n, c, now, fails);
	(void)oks; /* replies alone end nothing: the window does (hl_tick) */
	return false;
}

bool hl_tick(struct hl_node *n, const struct hl_config *c, uint64_t now)
{
	if (n->probe_out && now - n->probe_sent_ms >= c->probe_timeout_ms)
		return hl_probe_result(n, c, now, false);
	if (n->state == HL_SUSPECT && !n->probe_out && now - n->window_ms > c->window_ms) {
		n->fails = 0;
		enter(n, HL_UP, now);
		return true;
	}
	return false;
}

bool hl_ready(const struct hl_node *n, const struct hl_config *c)
{
	return n->state == HL_PROBING && !n->admin_down && n->successes >= c->up_successes;
}

bool hl_probe_due(const struct hl_node *n, const struct hl_config *c, uint64_t now)
{
	if (n->probe_out || n->admin_down || hl_ready(n, c))
		return false;
	if (n->state == HL_SUSPECT)
		return true;
	return (n->state == HL_DOWN || n->state == HL_PROBING) && now >= n->next_probe_ms;
}

bool hl_probe_sent(struct hl_node *n, uint64_t now)
{
	n->probe_out = true;
	n->probe_sent_ms = now;
	if (n->state != HL_DOWN)
		return false;
	n->successes = 0;
	enter(n, HL_PROBING, now);
	return true;
}

bool hl_probe_result(struct hl_node *n, const struct hl_config *c, uint64_t now, bool ok)
{
	if (!n->probe_out)
		return false;
	n->probe_out = false;
	if (n->state == HL_SUSPECT)
		return ok ? false : failed(n, c, now, 1);
	if (n->state != HL_PROBING)
		return false;
	if (ok) {
		n->successes++;
		n->next_probe_ms = now + c->probe_min_ms;
		return false;
	}
	/* Still dead: wait twice as long before the next try. */
	n->failures++;
	n->successes = 0;
	n->interval_ms =
		n->interval_ms * 2 > c->probe_max_ms ? c->probe_max_ms : n->interval_ms * 2;
	n->next_probe_ms = now + n->interval_ms;
	enter(n, HL_DOWN, now);
	return true;
}

void hl_mark_up(struct hl_node *n, uint64_t now)
{
	n->fails = 0;
	n->successes = 0;
	n->probe_out = false;
	n->up_ms = now;
	enter(n, HL_UP, now);
}

void hl_admin_down(struct hl_node *n, uint64_t now)
{
	n->admin_down = true;
	n->probe_out = false;
	n->successes = 0;
	if (n->state != HL_DOWN)
		enter(n, HL_DOWN, now);
}

void hl_admin_up(struct hl_node *n, const struct hl_config *c, uint64_t now)
{
	n->admin_down = false;
	if (hl_serving(n))
		return;
	n->probe_out = false;
	n->successes = c->up_successes;
	enter(n, HL_PROBING, now);
}

void hl_join_unready(struct hl_node *n, const struct hl_config *c, uint64_t now)
{
	n->admin_down = false;
	n->probe_out = false;
	n->fails = 0;
	n->interval_ms = c->probe_min_ms; /* a failed flush backs off from here */
	n->successes = c->up_successes;
	enter(n, HL_PROBING, now);
}
