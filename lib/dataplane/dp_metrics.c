/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Prometheus text exposition (/metrics): counters, drops, gauges, per-node fields and the
 * latency histograms, read through the data plane's public API (dp_stats_get, dp_nodes_get,
 * dp_node_rtt, dp_latency_get; the sizes from the config) on whatever thread serves the
 * endpoint. Above dp_control.c: nothing in the data plane calls it.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane_priv.h"
#include "observe.h"

/* Prometheus buckets: upper bounds 2^k x {1.25, 1.5, 1.75, 2} ns from 160 ns to 2^34 ns
 * (17 s): every fourth bucket, where the histogram is exact. */
#define DP_PROM_FIRST (4 * OBS_SUB + 3)
#define DP_PROM_LAST  (OBS_BUCKETS - 2)
#define DP_PROM_STEP  4

/* ---- Prometheus ------------------------------------------------------------------------ */

/* Per-node numeric fields exposed, with their type and help (the other fields are text or
 * quantiles the histogram carries). */
static const struct {
	enum dp_node_field f;
	const char *metric;
	enum obs_prom_type type;
	const char *help;
} node_metrics[] = {
	{DP_NODE_F_forwarded, "ringway_node_forwarded_total", OBS_PROM_COUNTER,
	 "Requests sent to the node since it joined."},
	{DP_NODE_F_returned, "ringway_node_returned_total", OBS_PROM_COUNTER,
	 "Reply datagrams of the node sent back to clients since it joined."},
	{DP_NODE_F_mget_partial, "ringway_node_multiget_partial_total", OBS_PROM_COUNTER,
	 "Multi-get sub-replies of the node missing (timeout or error)."},
	{DP_NODE_F_arp_sent, "ringway_node_arp_sent_total", OBS_PROM_COUNTER,
	 "ARP requests sent for the node."},
	{DP_NODE_F_arp_failures, "ringway_node_arp_failures_total", OBS_PROM_COUNTER,
	 "ARP resolution rounds for the node without an answer."},
	{DP_NODE_F_slow_windows, "ringway_node_slow_windows_total", OBS_PROM_COUNTER,
	 "Windows in which the node's round-trip p99 was above the slow factor times the fleet "
	 "median."},
	{DP_NODE_F_mac_known, "ringway_node_mac_known", OBS_PROM_GAUGE,
	 "1 when the node's next-hop MAC is resolved."},
	{DP_NODE_F_in_ring, "ringway_node_in_ring", OBS_PROM_GAUGE,
	 "1 when the node is a member of the current placement."},
	{DP_NODE_F_slow, "ringway_node_slow", OBS_PROM_GAUGE,
	 "1 when the node was flagged slow in the last window."},
};

/* The gauges whose name ends in _ns are quantiles: the histograms carry them. */
static bool gauge_is_quantile(const char *name)
{
	size_t len = strlen(name);

	return len > 3 && strcmp(name + len - 3, "_ns") == 0;
}

static void prom_totals(struct obs_text *t, const struct dp_stats *s, uint16_t workers)
{
	static const char *const gauge_names[] = {
#define DP_PROM_GNAME(type, member, name) name,
		DP_FOREACH_GAUGE(DP_PROM_GNAME)
#undef DP_PROM_GNAME
	};
	uint64_t g[] = {
#define DP_PROM_GVAL(type, member, name) (uint64_t) s->member,
		DP_FOREACH_GAUGE(DP_PROM_GVAL)
#undef DP_PROM_GVAL
	};
	char name[96], help[160];

	for (int c = 0; c < DP_CTR_COUNT; c++) {
		snprintf(name, sizeof(name), "ringway_%s_total", dp_counter_name(c));
		snprintf(help, sizeof(help), "Data plane counter %s, summed over the workers.",
			 dp_counter_name(c));
		obs_prom_family(t, name, help, OBS_PROM_COUNTER);
		obs_prom_sample(t, name, NULL, 0, s->ctr[c]);
	}
	obs_prom_family(t, "ringway_drops_total", "Packets dropped, by reason.", OBS_PROM_COUNTER);
	for (int d = 0; d < DP_DROP_COUNT; d++) {
		struct obs_label l = {"reason", dp_drop_name(d)};

		obs_prom_sample(t, "ringway_drops_total", &l, 1, s->drop[d]);
	}
	for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
		if (gauge_is_quantile(gauge_names[k]))
			continue;
		snprintf(name, sizeof(name), "ringway_%s", gauge_names[k]);
		snprintf(help, sizeof(help), "Data plane gauge %s.", gauge_names[k]);
		obs_prom_family(t, name, help, OBS_PROM_GAUGE);
		obs_prom_sample(t, name, NULL, 0, g[k]);
	}
	obs_prom_family(t, "ringway_workers", "Worker lcores.", OBS_PROM_GAUGE);
	obs_prom_sample(t, "ringway_workers", NULL, 0, workers);
	obs_prom_family(t, "ringway_identity_ok",
			"1 when rx = forwarded + returned + answered + dropped.", OBS_PROM_GAUGE);
	obs_prom_sample(t, "ringway_identity_ok", NULL, 0, dp_stats_identity(s));
}

/* The node's address as text, the label of every series of the node (formatted once per node
 * and scrape, not once per series). */
#define DP_PROM_ADDR 40

static void prom_nodes(struct obs_text *t, const struct dp_node_stats *nodes, uint32_t nn,
		       const struct dp *dp, const struct obs_prom_bounds *pb,
		       char (*addr)[DP_PROM_ADDR], struct obs_hist *h)
{
	for (uint32_t i = 0; i < nn; i++) {
		uint64_t v;

		dp_node_field(&nodes[i], DP_NODE_F_address, addr[i], DP_PROM_ADDR, &v);
	}
	for (size_t m = 0; m < sizeof(node_metrics) / sizeof(node_metrics[0]); m++) {
		obs_prom_family(t, node_metrics[m].metric, node_metrics[m].help,
				node_metrics[m].type);
		for (uint32_t i = 0; i < nn; i++) {
			struct obs_label l[] = {{"node", nodes[i].name}, {"address", addr[i]}};
			uint64_t v = 0;

			dp_node_field(&nodes[i], node_metrics[m].f, NULL, 0, &v);
			obs_prom_sample(t, node_metrics[m].metric, l, 2, v);
		}
	}
	obs_prom_family(t, "ringway_node_rtt_seconds",
			"Node round trips: from the RX burst that sent a request to the one that "
			"completed its reply.",
			OBS_PROM_HISTOGRAM);
	for (uint32_t i = 0; i < nn; i++) {
		struct obs_label l[] = {{"node", nodes[i].name}, {"address", addr[i]}};

		if (dp_node_rtt(dp, i, h) != 0)
			memset(h, 0, sizeof(*h));
		obs_prom_histogram_with(t, "ringway_node_rtt_seconds", l, 2, h, pb);
	}
}

int dp_metrics_write(const struct dp *dp, struct obs_text *out)
{
	struct dp_node_stats *nodes = calloc(dp->cfg.neighbours, sizeof(*nodes));
	char(*addr)[DP_PROM_ADDR] = calloc(dp->cfg.neighbours, sizeof(*addr));
	struct obs_hist *hist = malloc(sizeof(*hist));
	/* Every histogram here has the same bounds: formatted once per scrape. */
	struct obs_prom_bounds *pb = malloc(sizeof(*pb));
	struct dp_stats s;
	uint32_t nn;
	int rc = -ENOMEM;

	if (nodes == NULL || addr == NULL || hist == NULL || pb == NULL)
		goto out;
	obs_prom_bounds_init(pb, 1e-9, DP_PROM_FIRST, DP_PROM_LAST, DP_PROM_STEP);
	dp_stats_get(dp, -1, &s);
	prom_totals(out, &s, dp->cfg.n_workers);
	nn = dp_nodes_get(dp, nodes, dp->cfg.neighbours);
	prom_nodes(out, nodes, nn, dp, pb, addr, hist);
	dp_latency_get(dp, -1, NULL, hist);
	obs_prom_family(
		out, "ringway_router_seconds",
		"Time in the router per request forwarded or reply returned: from the start "
		"of its RX burst to the end of the TX burst.",
		OBS_PROM_HISTOGRAM);
	obs_prom_histogram_with(out, "ringway_router_seconds", NULL, 0, hist, pb);
	rc = out->oom ? -ENOMEM : 0;
out:
	free(nodes);
	free(addr);
	free(hist);
	free(pb);
	return rc;
}
