/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The health state machine as the router's control lcore drives it: how many failures in
 * which window mark a node down, when probes go out and how their interval backs off, how
 * many answers bring a node back, and that a flapping node keeps backing off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "health.h"

static struct hl_config cfg(void)
{
	struct hl_config c;

	hl_config_defaults(&c);
	c.fail_down = 3;
	c.window_ms = 1000;
	c.probe_min_ms = 100;
	c.probe_max_ms = 800;
	c.probe_timeout_ms = 50;
	c.up_successes = 2;
	c.flap_ms = 10000;
	return c;
}

static void test_config_check(void **state)
{
	struct hl_config c = cfg();

	(void)state;
	assert_int_equal(hl_config_check(&c), 0);
	c.fail_down = 0;
	assert_int_not_equal(hl_config_check(&c), 0);
	c = cfg();
	c.probe_min_ms = 900;
	assert_int_not_equal(hl_config_check(&c), 0);
	c = cfg();
	c.up_successes = 0;
	assert_int_not_equal(hl_config_check(&c), 0);
	assert_string_equal(hl_state_name(HL_PROBING), "probing");
	assert_string_equal(hl_state_name(HL_STATE_COUNT), "unknown");
}

/* fail_down failures inside the window mark the node down; fewer do not. */
static void test_threshold(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;

	(void)state;
	hl_node_init(&n, 0);
	assert_true(hl_serving(&n));
	assert_true(hl_passive(&n, &c, 10, 1, 5));
	assert_int_equal(n.state, HL_SUSPECT);
	assert_true(hl_serving(&n));
	assert_false(hl_passive(&n, &c, 20, 1, 0));
	assert_int_equal(n.state, HL_SUSPECT);
	assert_true(hl_passive(&n, &c, 30, 1, 0));
	assert_int_equal(n.state, HL_DOWN);
	assert_false(hl_serving(&n));
	assert_int_equal(n.since_ms, 30);
	assert_int_equal(n.downs, 1);
	assert_int_equal(n.failures, 3);
	/* Three at once count as three. */
	hl_node_init(&n, 0);
	assert_true(hl_passive(&n, &c, 5, 3, 0));
	assert_int_equal(n.state, HL_DOWN);
}

/* Failures spread wider than the window never add up; a quiet window makes a suspect up. */
static void test_window(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;

	(void)state;
	hl_node_init(&n, 0);
	hl_passive(&n, &c, 0, 2, 0);
	assert_int_equal(n.state, HL_SUSPECT);
	assert_false(hl_tick(&n, &c, 900));
	assert_true(hl_tick(&n, &c, 1001));
	assert_int_equal(n.state, HL_UP);
	/* 2 failures, window passes while still suspect, 1 more: a new window of 1. */
	hl_passive(&n, &c, 2000, 2, 0);
	hl_passive(&n, &c, 3500, 1, 0);
	assert_int_equal(n.state, HL_SUSPECT);
	assert_int_equal(n.fails, 1);
	/* Replies alone never make a down node up. */
	hl_passive(&n, &c, 3600, 5, 0);
	assert_int_equal(n.state, HL_DOWN);
	assert_false(hl_passive(&n, &c, 3700, 0, 100));
	assert_int_equal(n.state, HL_DOWN);
}

/* A suspect node is probed at once; a failed probe counts as a failure. */
static void test_suspect_probe(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;

	(void)state;
	hl_node_init(&n, 0);
	hl_passive(&n, &c, 0, 2, 0);
	assert_true(hl_probe_due(&n, &c, 0));
	assert_false(hl_probe_sent(&n, 0));
	assert_false(hl_probe_due(&n, &c, 1));
	assert_false(hl_tick(&n, &c, 49));
	assert_true(hl_tick(&n, &c, 50)); /* timed out: the third failure */
	assert_int_equal(n.state, HL_DOWN);
	/* An answered probe leaves a suspect node to its window. */
	hl_node_init(&n, 0);
	hl_passive(&n, &c, 0, 1, 0);
	hl_probe_sent(&n, 1);
	assert_false(hl_probe_result(&n, &c, 2, true));
	assert_int_equal(n.state, HL_SUSPECT);
	assert_true(hl_tick(&n, &c, 1002));
	assert_int_equal(n.state, HL_UP);
}

/* Down: probes at probe_min_ms, doubling on each failure up to probe_max_ms; up_successes
 * answers in a row make it ready; one failure in between starts the count again. */
static void test_backoff_and_return(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;
	uint64_t t = 0;
	uint32_t want[] = {200, 400, 800, 800};

	(void)state;
	hl_node_init(&n, 0);
	hl_passive(&n, &c, 0, 3, 0);
	assert_int_equal(n.state, HL_DOWN);
	assert_false(hl_probe_due(&n, &c, 99));
	assert_true(hl_probe_due(&n, &c, 100));
	for (int i = 0; i < 4; i++) {
		t = n.next_probe_ms;
		assert_true(hl_probe_due(&n, &c, t));
		assert_true(hl_probe_sent(&n, t));
		assert_int_equal(n.state, HL_PROBING);
		assert_true(hl_tick(&n, &c, t + 50)); /* no answer */
		assert_int_equal(n.state, HL_DOWN);
		assert_int_equal(n.interval_ms, want[i]);
		assert_int_equal(n.next_probe_ms, t + 50 + want[i]);
	}
	t = n.next_probe_ms;
	hl_probe_sent(&n, t);
	assert_false(hl_probe_result(&n, &c, t + 1, true));
	assert_false(hl_ready(&n, &c));
	assert_false(hl_probe_due(&n, &c, t + 50));
	assert_true(hl_probe_due(&n, &c, t + 101));
	hl_probe_sent(&n, t + 101);
	hl_probe_result(&n, &c, t + 102, true);
	assert_true(hl_ready(&n, &c));
	assert_false(hl_probe_due(&n, &c, t + 1000)); /* ready: the caller's turn */
	assert_false(hl_serving(&n));
	hl_mark_up(&n, t + 200);
	assert_int_equal(n.state, HL_UP);
	assert_int_equal(n.since_ms, t + 200);
	/* A stray result with no probe out changes nothing. */
	assert_false(hl_probe_result(&n, &c, t + 300, false));
	assert_int_equal(n.state, HL_UP);
}

/* A node that goes down again within flap_ms of coming back keeps doubling its interval; one
 * that stayed up longer starts again at probe_min_ms. */
static void test_flapping(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;
	uint64_t t = 0;
	uint32_t want[] = {100, 200, 400, 800, 800};

	(void)state;
	hl_node_init(&n, 0);
	for (int i = 0; i < 5; i++) {
		hl_passive(&n, &c, t, 3, 0);
		assert_int_equal(n.state, HL_DOWN);
		assert_int_equal(n.interval_ms, want[i]);
		for (uint32_t k = 0; k < c.up_successes; k++) {
			t = n.next_probe_ms;
			hl_probe_sent(&n, t);
			hl_probe_result(&n, &c, t, true);
		}
		assert_true(hl_ready(&n, &c));
		hl_mark_up(&n, t);
		t += 500; /* up for half a second: a flap */
	}
	assert_int_equal(n.flaps, 4);
	assert_int_equal(n.downs, 5);
	t += c.flap_ms; /* stable for long enough */
	hl_passive(&n, &c, t, 3, 0);
	assert_int_equal(n.interval_ms, c.probe_min_ms);
	assert_int_equal(n.flaps, 4);
}

/* The operator's hold: down at once, no probes, no return until let back; letting it back
 * skips the answers (ready at once) but not the caller's clean-up. */
static void test_admin(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;

	(void)state;
	hl_node_init(&n, 0);
	hl_admin_down(&n, 10);
	assert_int_equal(n.state, HL_DOWN);
	assert_false(hl_probe_due(&n, &c, 100000));
	assert_false(hl_passive(&n, &c, 20, 9, 0));
	assert_false(hl_ready(&n, &c));
	hl_admin_up(&n, &c, 30);
	assert_int_equal(n.state, HL_PROBING);
	assert_true(hl_ready(&n, &c));
	hl_mark_up(&n, 31);
	assert_true(hl_serving(&n));
	/* Letting a serving node back changes nothing. */
	hl_admin_up(&n, &c, 40);
	assert_int_equal(n.state, HL_UP);
	assert_int_equal(n.since_ms, 31);
}

/* A node that joins to be flushed first: not serving from the start (its keys go to
 * stand-ins), ready at once so the caller's flush goes out, no failure or down counted; a
 * failed flush probe puts it down and it comes back the ordinary way. */
static void test_join_unready(void **state)
{
	struct hl_config c = cfg();
	struct hl_node n;

	(void)state;
	hl_node_init(&n, 0);
	hl_join_unready(&n, &c, 5);
	assert_false(hl_serving(&n));
	assert_int_equal(n.state, HL_PROBING);
	assert_true(hl_ready(&n, &c));
	assert_int_equal(n.downs, 0);
	assert_int_equal(n.failures, 0);
	/* Passive failures of a node not serving do not count. */
	assert_false(hl_passive(&n, &c, 6, 9, 0));
	/* The flush probe times out: down, backing off, then probed back. */
	hl_probe_sent(&n, 6);
	assert_true(hl_tick(&n, &c, 6 + c.probe_timeout_ms));
	assert_int_equal(n.state, HL_DOWN);
	assert_false(hl_ready(&n, &c));
	assert_int_equal(n.interval_ms, c.probe_min_ms * 2);
	assert_false(hl_probe_due(&n, &c, 6 + c.probe_timeout_ms));
	assert_true(hl_probe_due(&n, &c, 6 + c.probe_timeout_ms + n.interval_ms));
	/* From a serving node too (a member's endpoint that joins again). */
	hl_mark_up(&n, 50);
	hl_join_unready(&n, &c, 60);
	assert_false(hl_serving(&n));
	assert_true(hl_ready(&n, &c));
	hl_mark_up(&n, 61);
	assert_true(hl_serving(&n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_check),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_suspect_probe),
		cmocka_unit_test(test_backoff_and_return),
		cmocka_unit_test(test_flapping),
		cmocka_unit_test(test_admin),
		cmocka_unit_test(test_join_unready),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
