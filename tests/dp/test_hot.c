/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hot keys on the real worker code: sampled requests land in the worker's sketch, the control
 * lcore's round hands the sketch over and merges it into the view (keys, counts, rates, owners,
 * the owners' request rates), the sampling rate follows hot_sample_every (0: none), and a
 * worker that does not poll is counted late and its samples reach the next view.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dataplane_priv.h"
#include "dp_test.h"

static uint32_t every = 1;
static uint32_t keys = 64;

static void hot_config(struct dp_config *c)
{
	c->hot_sample_every = every;
	c->hot_sketch_keys = keys;
	c->hot_interval_ms = 10;
}

/* Send `get KEY` from the client and drop what the router forwards. */
static void get(const char *key, uint16_t id)
{
	char req[300];
	struct rte_mbuf *m;
	int n = snprintf(req, sizeof(req), "get %s\r\n", key);

	t_inject(0, t_request(7000, id, req, (size_t)n));
	t_poll(0);
	while ((m = t_sent(0)) != NULL)
		rte_pktmbuf_free(m);
}

/* One merge round: wait out the interval, let the control lcore ask, the worker answer
 * (when @p worker_polls), the control lcore merge. */
static void round_trip(bool worker_polls)
{
	rte_delay_us_sleep(11000);
	dp_control_poll(rig.dp); /* the round starts: the worker is asked for its sketch */
	if (worker_polls)
		t_poll(0); /* ... and hands it over */
	else
		rte_delay_us_sleep(6000); /* half an interval: the round closes without it */
	dp_control_poll(rig.dp);
}

static const struct dp_hotkey *find(const struct dp_hotkey *v, uint32_t n, const char *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].len == strlen(key) && memcmp(v[i].key, key, v[i].len) == 0)
			return &v[i];
	return NULL;
}

/* Every request sampled, K above the distinct keys: the counts are exact, the hottest first,
 * with its owner and rates. */
static void test_view_exact(void **state)
{
	struct dp_hotkey v[64];
	struct dp_hot_summary s;
	const struct dp_hotkey *hot, *warm;
	char key[32];
	uint32_t n;
	uint16_t id = 0;

	(void)state;
	every = 1;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp); /* the first interval starts */
	for (int i = 0; i < 60; i++) {
		get("hot", id++);
		if (i % 2 == 0)
			get("warm", id++);
		if (i % 3 == 0) {
			snprintf(key, sizeof(key), "cold%d", i);
			get(key, id++);
		}
	}
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SAMPLED], 60 + 30 + 20);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 64, &s), 0); /* no view yet */
	round_trip(true);
	n = dp_hotkeys_get(rig.dp, v, 64, &s);
	assert_int_equal(n, 22);
	assert_int_equal(s.intervals, 1);
	assert_int_equal(s.sampled, 110);
	assert_int_equal(s.sketch_keys, 64);
	assert_int_equal(s.late, 0);
	assert_true(s.interval_s > 0.009 && s.interval_s < 1.0);
	hot = find(v, n, "hot");
	warm = find(v, n, "warm");
	assert_ptr_equal(hot, &v[0]);
	assert_ptr_equal(warm, &v[1]);
	assert_int_equal(hot->count, 60);
	assert_int_equal(hot->err, 0);
	assert_int_equal(warm->count, 30);
	assert_true(fabs(hot->rate - 60 / s.interval_s) < 1e-6 * hot->rate);
	assert_int_equal(hot->owner, t_owner("hot"));
	snprintf(key, sizeof(key), "n%d", t_owner("hot") + 1);
	assert_string_equal(hot->owner_name, key);
	/* Its owner got at least the hot key's 60 requests in the interval. */
	assert_true(hot->owner_rate * s.interval_s >= 60 - 1e-6);
	assert_true(hot->guaranteed && warm->guaranteed);
	/* The next round has nothing new: an empty view. */
	round_trip(true);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 64, &s), 0);
	assert_int_equal(s.intervals, 2);
	t_dp_stop();
}

/* A small sketch: the hottest keys survive, every estimate within the stated bound. */
static void test_view_bounded(void **state)
{
	struct dp_hotkey v[8];
	struct dp_hot_summary s;
	char key[32];
	uint32_t n;
	uint64_t a = 0, b = 0;

	(void)state;
	every = 1;
	keys = 8;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp);
	for (int i = 0; i < 400; i++) {
		if (i % 3 == 0)
			snprintf(key, sizeof(key), "alpha"), a++;
		else if (i % 6 == 1)
			snprintf(key, sizeof(key), "beta"), b++;
		else
			snprintf(key, sizeof(key), "c%d", i);
		get(key, (uint16_t)i);
	}
	round_trip(true);
	n = dp_hotkeys_get(rig.dp, v, 8, &s);
	assert_int_equal(n, 8);
	assert_int_equal(s.sampled, 400);
	assert_memory_equal(v[0].key, "alpha", 5);
	assert_memory_equal(v[1].key, "beta", 4);
	/* count >= true >= count - err, err <= N / K = 50 */
	assert_true(v[0].count >= a && v[0].count - v[0].err <= a && v[0].err <= 50);
	assert_true(v[1].count >= b && v[1].count - v[1].err <= b && v[1].err <= 50);
	assert_true(fabs(s.bound_rate - 50 / s.interval_s) < 1e-6 * s.bound_rate);
	t_dp_stop();
}

/* 1 in 16 on average; 0: nothing sampled. */
static void test_sampling_rate(void **state)
{
	uint64_t sampled;

	(void)state;
	every = 16;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	for (int i = 0; i < 3200; i++)
		get(i & 1 ? "a" : "b", (uint16_t)i);
	sampled = t_stats().ctr[DP_CTR_HOT_SAMPLED];
	print_message("# 1 in 16 of 3200: %lu sampled\n", (unsigned long)sampled);
	assert_true(sampled >= 140 && sampled <= 260);
	t_dp_stop();
	every = 0;
	t_dp_start(1, 4, hot_config);
	for (int i = 0; i < 1000; i++)
		get("a", (uint16_t)i);
	assert_int_equal(t_stats().ctr[DP_CTR_HOT_SAMPLED], 0);
	t_dp_stop();
}

/* A worker that does not poll misses the round (late); its samples reach the next view. */
static void test_late_worker(void **state)
{
	struct dp_hotkey v[4];
	struct dp_hot_summary s;

	(void)state;
	every = 1;
	keys = 64;
	t_dp_start(1, 4, hot_config);
	dp_control_poll(rig.dp);
	for (int i = 0; i < 10; i++)
		get("late", (uint16_t)i);
	round_trip(false);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 4, &s), 0);
	assert_int_equal(s.late, 1);
	assert_int_equal(s.intervals, 1);
	round_trip(true);
	assert_int_equal(dp_hotkeys_get(rig.dp, v, 4, &s), 1);
	assert_int_equal(v[0].count, 10);
	assert_int_equal(s.late, 1);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_exact),
		cmocka_unit_test(test_view_bounded),
		cmocka_unit_test(test_sampling_rate),
		cmocka_unit_test(test_late_worker),
	};
	int rc;

	t_eal_setup("dp_hot", "0", 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	return t_eal_teardown(rc);
}
