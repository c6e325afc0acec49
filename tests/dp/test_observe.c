/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency on the real worker code: each completed reply's round trip lands in its node's
 * histogram (a node made to answer late shows it in its quantiles, the others do not), the
 * router's own time counts every packet forwarded or returned, a node slower than the
 * fleet's median by the configured factor is flagged at the end of a window and cleared when
 * it recovers, and the Prometheus exposition of it all carries the same numbers and passes
 * Debian's promtool.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "dataplane_priv.h"
#include "dp_test.h"
#include "observe.h"

#define PROMTOOL "/usr/bin/promtool"

/* A key owned by member @p owner. */
static void key_of(int32_t owner, int i, char *key, size_t len)
{
	for (int k = 0;; k++) {
		snprintf(key, len, "k%d_%d", i, k);
		if (t_owner(key) == owner)
			return;
	}
}

/* A get for a key of member @p owner through the router, answered by the node after
 * @p delay_us; the reply is checked to reach the client. */
static void round_trip(int32_t owner, int i, unsigned int delay_us)
{
	const char *val = "END\r\n";
	char key[32], req[64], node_ip[24];
	struct rte_mbuf *m;
	struct t_view v;
	uint16_t sport, reqid;

	key_of(owner, i, key, sizeof(key));
	snprintf(req, sizeof(req), "get %s\r\n", key);
	t_inject(0, t_request(6000, (uint16_t)i, req, strlen(req)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	sport = rte_be_to_cpu_16(v.udp->src_port);
	reqid = v.reqid;
	rte_pktmbuf_free(m);
	if (delay_us != 0)
		rte_delay_us_sleep(delay_us);
	snprintf(node_ip, sizeof(node_ip), "198.18.1.%d", owner + 1);
	t_inject(0, t_reply(node_ip, 11211, sport, reqid, 0, 1, val, strlen(val)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
}

static void slow_config(struct dp_config *c)
{
	c->slow_factor_pct = 300;
	c->slow_window_ms = 1;
	c->slow_min_replies = 5;
}

static struct dp_node_stats node_stats(int32_t owner)
{
	struct dp_node_stats n;

	assert_int_equal(dp_member_node(rig.dp, (uint32_t)owner, &n), 0);
	return n;
}

static void test_round_trips_per_node(void **state)
{
	struct obs_hist *h = malloc(2 * sizeof(*h));
	struct dp_node_stats n0, n1;
	struct dp_stats s;

	(void)state;
	assert_non_null(h);
	t_dp_start(1, 4, NULL);
	for (int i = 0; i < 20; i++) {
		round_trip(0, i, 2000); /* member 0 answers after 2 ms */
		round_trip(1, 100 + i, 0);
	}
	n0 = node_stats(0);
	n1 = node_stats(1);
	assert_int_equal(n0.rtt_replies, 20);
	assert_int_equal(n1.rtt_replies, 20);
	/* A sleep never ends early; the fast node's median is under the slow one's. */
	assert_true(n0.rtt_p50_ns >= 2000000 * (1 - 1.0 / 32));
	assert_true(n1.rtt_p50_ns < n0.rtt_p50_ns);
	assert_int_equal(node_stats(2).rtt_replies, 0);
	/* Totals: all round trips; the router's time counted once per packet sent. */
	s = t_stats();
	assert_int_equal(dp_latency_get(rig.dp, -1, &h[0], &h[1]), 0);
	assert_int_equal(obs_hist_count(&h[0]), 40);
	assert_int_equal(obs_hist_count(&h[1]), s.ctr[DP_CTR_FORWARDED] + s.ctr[DP_CTR_RETURNED]);
	assert_true(s.rtt_p99_ns >= 2000000);
	assert_true(s.router_p50_ns > 0);
	assert_int_equal(dp_latency_get(rig.dp, 1, &h[0], NULL), -EINVAL);
	/* /ringway/latency registers with the others (a help text over DPDK's limit would
	 * make every registration, and the router's start, fail). */
	assert_int_equal(dp_telemetry_register(rig.dp), 0);
	free(h);
	t_dp_stop();
}

/* @p n round trips of @p ns into member @p member's histogram on worker 0, as the reply
 * path records them: the detection's input without the timing of a loaded test machine. */
static void record(int32_t member, uint64_t ns, uint64_t n)
{
	struct dp_worker *w = dp_worker_get(rig.dp, 0);
	const struct dp_view *v = atomic_load_explicit(&w->view, memory_order_relaxed);

	for (uint64_t k = 0; k < n; k++)
		obs_set_add(&w->node_rtt, v->ep[member], ns);
}

/* 100 round trips per member 0..3: member @p slow (or none: -1) @p slow_ns, the others
 * 300 us give or take; then the window's end. */
static unsigned int window(int32_t slow, uint64_t slow_ns, struct dp_slow_event *ev)
{
	for (int32_t o = 0; o < 4; o++) {
		record(o, o == slow ? slow_ns : 280000 + 10000 * (uint64_t)o, 99);
		record(o, 5000000, 1); /* one outlier each: p99 is the 99th of 100 */
	}
	rte_delay_us_sleep(2000); /* the 1 ms window has passed */
	return dp_slow_poll(rig.dp, ev, 8);
}

static void test_slow_node_flagged_and_cleared(void **state)
{
	const struct dp_slow_event *e;
	struct dp_slow_event ev[8];
	unsigned int n;

	(void)state;
	t_dp_start(1, 4, slow_config);
	rte_delay_us_sleep(2000);
	assert_int_equal(dp_slow_poll(rig.dp, ev, 8), 0); /* no replies yet: nobody judged */
	/* Under 3x the median (295 us: the mean of 290 and 300): not slow. */
	assert_int_equal(window(3, 850000, ev), 0);
	n = window(2, 1000000, ev);
	assert_int_equal(n, 1);
	e = &ev[0];
	assert_string_equal(e->name, "n3");
	assert_true(e->slow);
	assert_int_equal(e->eligible, 4);
	assert_int_equal(e->replies, 100);
	assert_true(e->p99_ns >= 1000000 * (1 - 1.0 / 32) && e->median_ns < 320000);
	assert_int_equal(node_stats(2).slow, 1);
	assert_int_equal(node_stats(2).slow_windows, 1);
	assert_int_equal(node_stats(0).slow, 0);
	assert_int_equal(t_stats().slow_nodes, 1);
	/* Still slow: counted again, no new event. */
	assert_int_equal(window(2, 1000000, ev), 0);
	assert_int_equal(node_stats(2).slow_windows, 2);
	/* It recovers: the next window clears it; its count stays. */
	n = window(-1, 0, ev);
	assert_int_equal(n, 1);
	assert_string_equal(ev[0].name, "n3");
	assert_false(ev[0].slow);
	assert_int_equal(node_stats(2).slow, 0);
	assert_int_equal(node_stats(2).slow_windows, 2);
	assert_int_equal(t_stats().slow_nodes, 0);
	/* Fewer than 3 nodes with slow_min_replies in the window: nobody is judged. */
	record(2, 10000000, 10);
	record(1, 300000, 10);
	record(0, 300000, 4);
	rte_delay_us_sleep(2000);
	assert_int_equal(dp_slow_poll(rig.dp, ev, 8), 0);
	assert_int_equal(node_stats(2).slow, 0);
	t_dp_stop();
}

static int promtool(const char *text, size_t len)
{
	char path[] = "/tmp/ringway-dp-prom-XXXXXX", cmd[160];
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, text, len) == (ssize_t)len ? 0 : -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), PROMTOOL " check metrics < %s >/dev/null 2>&1", path);
	if (rc == 0)
		rc = system(cmd);
	unlink(path);
	return rc < 0 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

static void test_metrics_exposition(void **state)
{
	struct obs_text t = {0};
	char want[160];
	struct dp_stats s;

	(void)state;
	t_dp_start(1, 4, NULL);
	for (int i = 0; i < 5; i++)
		round_trip(1, i, 0);
	s = t_stats();
	assert_int_equal(dp_metrics_write(rig.dp, &t), 0);
	snprintf(want, sizeof(want), "\nringway_rx_total %llu\n",
		 (unsigned long long)s.ctr[DP_CTR_RX]);
	assert_non_null(strstr(t.buf, want));
	assert_non_null(strstr(t.buf, "\n# TYPE ringway_drops_total counter\n"));
	assert_non_null(strstr(t.buf, "\nringway_drops_total{reason=\"bad_port\"} 0\n"));
	assert_non_null(strstr(t.buf, "\nringway_node_forwarded_total{node=\"n2\","
				      "address=\"198.18.1.2:11211\"} 5\n"));
	assert_non_null(strstr(t.buf, "\n# TYPE ringway_node_rtt_seconds histogram\n"));
	assert_non_null(strstr(t.buf, "\nringway_node_rtt_seconds_count{node=\"n2\","
				      "address=\"198.18.1.2:11211\"} 5\n"));
	assert_non_null(strstr(t.buf, "\nringway_node_rtt_seconds_bucket{node=\"n2\","
				      "address=\"198.18.1.2:11211\",le=\"+Inf\"} 5\n"));
	snprintf(want, sizeof(want), "\nringway_router_seconds_count %llu\n",
		 (unsigned long long)(s.ctr[DP_CTR_FORWARDED] + s.ctr[DP_CTR_RETURNED]));
	assert_non_null(strstr(t.buf, want));
	assert_null(strstr(t.buf, "p99_ns")); /* quantile gauges: the histograms carry them */
	if (access(PROMTOOL, X_OK) == 0)
		assert_int_equal(promtool(t.buf, t.len), 0);
	obs_text_release(&t);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trips_per_node),
		cmocka_unit_test(test_slow_node_flagged_and_cleared),
		cmocka_unit_test(test_metrics_exposition),
	};

	t_eal_setup("dp_observe", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
