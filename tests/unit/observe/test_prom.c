/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus text writer: exact lines for a small exposition (labels escaped, cumulative
 * buckets at exact bounds, _sum in seconds), and a representative exposition of every shape
 * the router writes accepted by Debian's `promtool check metrics` (which refuses, as checked
 * here too, what the format or its conventions forbid).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "observe.h"

static void test_names(void **state)
{
	(void)state;
	assert_true(obs_prom_name_ok("ringway_rx_total"));
	assert_true(obs_prom_name_ok("a:b_c9"));
	assert_false(obs_prom_name_ok("9a"));
	assert_false(obs_prom_name_ok("a-b"));
	assert_false(obs_prom_name_ok(""));
}

static void test_exact_text(void **state)
{
	struct obs_text t = {0};
	struct obs_hist h = {0};
	struct obs_label l[] = {{"node", "a\"b\\c\nd"}};
	const char *want = "# HELP x_total help \\\\ with\\nnewline\n"
			   "# TYPE x_total counter\n"
			   "x_total{node=\"a\\\"b\\\\c\\nd\"} 7\n"
			   "x_total 8\n"
			   "# HELP y_seconds h\n"
			   "# TYPE y_seconds histogram\n"
			   "y_seconds_bucket{node=\"n\",le=\"3e-09\"} 1\n"
			   "y_seconds_bucket{node=\"n\",le=\"5e-09\"} 2\n"
			   "y_seconds_bucket{node=\"n\",le=\"+Inf\"} 3\n"
			   "y_seconds_sum{node=\"n\"} 0.001000006\n"
			   "y_seconds_count{node=\"n\"} 3\n";
	struct obs_label n[] = {{"node", "n"}};

	(void)state;
	obs_prom_family(&t, "x_total", "help \\ with\nnewline", OBS_PROM_COUNTER);
	obs_prom_sample(&t, "x_total", l, 1, 7);
	obs_prom_sample(&t, "x_total", NULL, 0, 8);
	obs_prom_family(&t, "y_seconds", "h", OBS_PROM_HISTOGRAM);
	obs_hist_add(&h, 2, 1);
	obs_hist_add(&h, 4, 1);
	obs_hist_add(&h, 1000000, 1);
	/* Buckets 2 and 4 (exact region: upper bounds 3 and 5 ns), then +Inf. */
	obs_prom_histogram(&t, "y_seconds", n, 1, &h, 1e-9, 2, 4, 2);
	assert_false(t.oom);
	assert_string_equal(t.buf, want);
	obs_text_release(&t);
}

/* Every shape the router's /metrics has: counters with and without labels, a counter family
 * with a reason label, gauges, histograms per node and one without labels. */
static void write_sample(struct obs_text *t)
{
	struct obs_hist *h = calloc(1, sizeof(*h));
	struct obs_label node[] = {{"node", "cache\"1"}, {"address", "198.18.1.1:11211"}};
	struct obs_label why[] = {{"reason", "bad_port"}};

	assert_non_null(h);
	obs_prom_family(t, "ringway_rx_total", "packets received", OBS_PROM_COUNTER);
	obs_prom_sample(t, "ringway_rx_total", NULL, 0, 1234);
	obs_prom_family(t, "ringway_drops_total", "packets dropped, by reason", OBS_PROM_COUNTER);
	obs_prom_sample(t, "ringway_drops_total", why, 1, 5);
	obs_prom_family(t, "ringway_slots_live", "request slots in use", OBS_PROM_GAUGE);
	obs_prom_sample(t, "ringway_slots_live", NULL, 0, 3);
	for (int i = 0; i < 10000; i++)
		obs_hist_add(h, 20000 + (uint64_t)i * 7, 1);
	obs_prom_family(t, "ringway_node_rtt_seconds", "node round trip", OBS_PROM_HISTOGRAM);
	obs_prom_histogram(t, "ringway_node_rtt_seconds", node, 2, h, 1e-9, 128, 480, 4);
	obs_prom_family(t, "ringway_router_seconds", "time in the router", OBS_PROM_HISTOGRAM);
	obs_prom_histogram(t, "ringway_router_seconds", NULL, 0, h, 1e-9, 128, 480, 4);
	free(h);
}

/* promtool check metrics < text: its exit status (-1 when it cannot run). */
static int promtool(const char *text)
{
	char path[] = "/tmp/ringway-prom-XXXXXX", cmd[256];
	int fd = mkstemp(path), rc;
	size_t len = strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s check metrics < %s >/dev/null 2>&1", PROMTOOL, path);
	rc = system(cmd);
	unlink(path);
	return rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
}

static void test_promtool_accepts(void **state)
{
	struct obs_text t = {0};

	(void)state;
	if (access(PROMTOOL, X_OK) != 0)
		skip(); /* scripts/setup-deps.sh installs prometheus (promtool) */
	write_sample(&t);
	assert_false(t.oom);
	assert_int_equal(promtool(t.buf), 0);
	/* The check can fail: a counter without _total, and broken syntax. */
	assert_int_not_equal(promtool("# HELP a x\n# TYPE a counter\na 3\n"), 0);
	assert_int_not_equal(promtool("ringway_x{node=\"a} 3\n"), 0);
	obs_text_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_exact_text),
		cmocka_unit_test(test_promtool_accepts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
