/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The text half of a /metrics scrape at N nodes (default 1,000), without the data plane:
 * what lib/dataplane/dp_metrics.c writes per node (9 samples with the node's name and address
 * as labels, one round-trip histogram of the router's 108 bounds + Inf), through lib/observe's
 * writer. For instruction counts under callgrind (`valgrind --tool=callgrind
 * build/tests/bench/scale/bench_prom 1000`), which a busy machine cannot skew; it prints the
 * bytes written, and writes the text to FILE when given (`bench_prom N FILE`).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe.h"

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
	struct obs_hist *h = calloc(1, sizeof(*h));
	struct obs_text t = {0};
	char name[32], addr[40];
#ifdef OBS_PROM_LE_MAX
	struct obs_prom_bounds *pb = malloc(sizeof(*pb));

	if (pb == NULL)
		return 1;
	obs_prom_bounds_init(pb, 1e-9, 4 * OBS_SUB + 3, OBS_BUCKETS - 2, 4);
#endif
	if (h == NULL)
		return 1;
	for (uint64_t v = 20000; v < 400000; v += 37)
		obs_hist_add(h, v, 1);
	for (int m = 0; m < 9; m++) {
		obs_prom_family(&t, "ringway_node_forwarded_total", "Requests sent to the node.",
				OBS_PROM_COUNTER);
		for (unsigned i = 0; i < n; i++) {
			snprintf(name, sizeof(name), "n%u", i);
			snprintf(addr, sizeof(addr), "198.18.%u.%u:11211", 1 + i / 250,
				 1 + i % 250);
			struct obs_label l[] = {{"node", name}, {"address", addr}};

			obs_prom_sample(&t, "ringway_node_forwarded_total", l, 2, i * 1000003ull);
		}
	}
	obs_prom_family(&t, "ringway_node_rtt_seconds", "Node round trips.", OBS_PROM_HISTOGRAM);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		snprintf(addr, sizeof(addr), "198.18.%u.%u:11211", 1 + i / 250, 1 + i % 250);
		struct obs_label l[] = {{"node", name}, {"address", addr}};

#ifdef OBS_PROM_LE_MAX
		obs_prom_histogram_with(&t, "ringway_node_rtt_seconds", l, 2, h, pb);
#else
		obs_prom_histogram(&t, "ringway_node_rtt_seconds", l, 2, h, 1e-9, 4 * OBS_SUB + 3,
				   OBS_BUCKETS - 2, 4);
#endif
	}
	printf("%u nodes: %zu bytes%s\n", n, t.len, t.oom ? " (out of memory)" : "");
	if (argc > 2) { /* the text itself, to compare two writers' */
		FILE *f = fopen(argv[2], "w");

		if (f == NULL || fwrite(t.buf, 1, t.len, f) != t.len || fclose(f) != 0)
			return 1;
	}
	obs_text_release(&t);
	free(h);
	return 0;
}
