/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency, read side (any thread unless noted): the workers' histograms (dp_observe.h)
 * merged on read into quantiles for the gauges, the node fields and /ringway/latency; the
 * slow-node windows (control lcore). Called by dp_control.c; the Prometheus exposition,
 * which reads the public API, is above it in dp_metrics.c.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "dataplane_priv.h"
#include "dp_observe.h"
#include "observe.h"

/* Control-side state, per endpoint: the round trips when the entry was (re)claimed (a node
 * counts from when it joined), at the start of the current window, and the slow flags. */
struct dp_obs {
	struct obs_hist *base;
	struct obs_hist *snap;
	uint8_t *slow;
	uint64_t *slow_windows;
	uint64_t window_start;
	uint64_t window_tsc;
	_Atomic uint32_t slow_now;
};

static struct dp *tel_obs_dp;

int dp_obs_worker_init(struct dp_worker *w, const struct dp_config *c, int socket)
{
	void *mem = rte_zmalloc_socket("dp_rtt", obs_set_bytes(c->neighbours), RTE_CACHE_LINE_SIZE,
				       socket);

	w->ns_mult = (UINT64_C(1000000000) << DP_NS_SHIFT) / w->dp->tsc_hz;
	if (mem != NULL)
		obs_set_init(&w->node_rtt, mem, c->neighbours);
	w->router_time = rte_zmalloc_socket("dp_rtime", sizeof(struct obs_hist),
					    RTE_CACHE_LINE_SIZE, socket);
	return mem != NULL && w->router_time != NULL ? 0 : -ENOMEM;
}

void dp_obs_worker_free(struct dp_worker *w)
{
	rte_free(w->node_rtt.count);
	rte_free(w->router_time);
}

int dp_obs_init(struct dp *dp)
{
	uint32_t n = dp->cfg.neighbours;
	struct dp_obs *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return -ENOMEM;
	dp->obs = o;
	o->base = calloc(n, sizeof(*o->base));
	o->snap = calloc(n, sizeof(*o->snap));
	o->slow = calloc(n, 1);
	o->slow_windows = calloc(n, sizeof(*o->slow_windows));
	o->window_tsc = (uint64_t)dp->cfg.slow_window_ms * dp->tsc_hz / 1000;
	o->window_start = rte_get_tsc_cycles();
	if (o->base == NULL || o->snap == NULL || o->slow == NULL || o->slow_windows == NULL)
		return -ENOMEM;
	return 0;
}

void dp_obs_free(struct dp *dp)
{
	struct dp_obs *o = dp->obs;

	if (tel_obs_dp == dp)
		tel_obs_dp = NULL;
	if (o == NULL)
		return;
	free(o->base);
	free(o->snap);
	free(o->slow);
	free(o->slow_windows);
	free(o);
	dp->obs = NULL;
}

/* Endpoint @p ep's round trips since start, over all workers, into @p out. */
static void ep_rtt_total(const struct dp *dp, uint32_t ep, struct obs_hist *out)
{
	memset(out, 0, sizeof(*out));
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++)
		obs_set_merge(out, &dp->w[k]->node_rtt, ep);
}

void dp_obs_ep_claimed(struct dp *dp, uint32_t ep)
{
	struct dp_obs *o = dp->obs;

	ep_rtt_total(dp, ep, &o->base[ep]);
	o->snap[ep] = o->base[ep];
	o->slow[ep] = 0;
	o->slow_windows[ep] = 0;
}

/* Endpoint @p ep's round trips since its node joined. */
static void ep_rtt(const struct dp *dp, uint32_t ep, struct obs_hist *out)
{
	struct obs_hist total;

	ep_rtt_total(dp, ep, &total);
	obs_hist_sub(out, &total, &dp->obs->base[ep]);
}

int dp_node_rtt(const struct dp *dp, uint32_t node_idx, struct obs_hist *out)
{
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), k = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!dp->eps[i].used)
			continue;
		if (k++ == node_idx) {
			ep_rtt(dp, i, out);
			return 0;
		}
	}
	return -ENOENT;
}

int dp_latency_get(const struct dp *dp, int worker, struct obs_hist *rtt, struct obs_hist *router)
{
	uint32_t n;

	if (dp == NULL || worker >= (int)dp->cfg.n_workers)
		return -EINVAL;
	n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed);
	if (rtt != NULL)
		memset(rtt, 0, sizeof(*rtt));
	if (router != NULL)
		memset(router, 0, sizeof(*router));
	for (uint16_t k = 0; k < dp->cfg.n_workers; k++) {
		if (worker >= 0 && worker != k)
			continue;
		for (uint32_t i = 0; rtt != NULL && i < n; i++)
			obs_set_merge(rtt, &dp->w[k]->node_rtt, i);
		if (router != NULL)
			obs_hist_merge(router, dp->w[k]->router_time);
	}
	return 0;
}

static uint64_t q_ns(const struct obs_hist *h, double q)
{
	return (uint64_t)(obs_hist_quantile(h, q) + 0.5);
}

void dp_obs_stats(const struct dp *dp, int worker, struct dp_stats *out)
{
	struct obs_hist *h = malloc(2 * sizeof(*h));

	if (h == NULL)
		return;
	dp_latency_get(dp, worker, &h[0], &h[1]);
	out->rtt_p50_ns = q_ns(&h[0], 0.5);
	out->rtt_p90_ns = q_ns(&h[0], 0.9);
	out->rtt_p99_ns = q_ns(&h[0], 0.99);
	out->rtt_p999_ns = q_ns(&h[0], 0.999);
	out->router_p50_ns = q_ns(&h[1], 0.5);
	out->router_p90_ns = q_ns(&h[1], 0.9);
	out->router_p99_ns = q_ns(&h[1], 0.99);
	out->router_p999_ns = q_ns(&h[1], 0.999);
	out->slow_nodes = atomic_load_explicit(&dp->obs->slow_now, memory_order_relaxed);
	free(h);
}

void dp_obs_node_fill(const struct dp *dp, uint32_t ep, struct dp_node_stats *o)
{
	struct obs_hist h;

	ep_rtt(dp, ep, &h);
	o->rtt_replies = obs_hist_count(&h);
	o->rtt_p50_ns = q_ns(&h, 0.5);
	o->rtt_p99_ns = q_ns(&h, 0.99);
	o->slow = dp->obs->slow[ep];
	o->slow_windows = dp->obs->slow_windows[ep];
}

/* ---- slow nodes (control lcore) --------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of @p n values (sorted in place); n > 0. */
static uint64_t median(uint64_t *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The window's p99 of every in-ring node with enough replies (UINT64_MAX: not eligible),
 * and the new window started. @return the eligible count. */
static uint32_t window_p99(struct dp *dp, uint64_t *p99, uint64_t *replies, uint32_t n)
{
	struct dp_obs *o = dp->obs;
	struct obs_hist now, win;
	uint32_t eligible = 0;

	for (uint32_t i = 0; i < n; i++) {
		p99[i] = UINT64_MAX;
		replies[i] = 0;
		if (!dp->eps[i].used)
			continue;
		ep_rtt_total(dp, i, &now);
		obs_hist_sub(&win, &now, &o->snap[i]);
		o->snap[i] = now;
		replies[i] = obs_hist_count(&win);
		if (!dp->eps[i].in_ring || replies[i] < dp->cfg.slow_min_replies)
			continue;
		p99[i] = q_ns(&win, 0.99);
		eligible++;
	}
	return eligible;
}

unsigned int dp_slow_poll(struct dp *dp, struct dp_slow_event *ev, unsigned int max)
{
	struct dp_obs *o = dp->obs;
	uint32_t n = atomic_load_explicit(&dp->n_eps_hwm, memory_order_relaxed), eligible, k = 0;
	uint64_t now = rte_get_tsc_cycles(), med = 0, *p99, *replies, *sorted;
	unsigned int nev = 0, slow_now = 0;

	if (now - o->window_start < o->window_tsc || n == 0)
		return 0;
	o->window_start = now;
	p99 = calloc(3 * (size_t)n, sizeof(*p99));
	if (p99 == NULL)
		return 0;
	replies = p99 + n;
	sorted = p99 + 2 * n;
	eligible = window_p99(dp, p99, replies, n);
	for (uint32_t i = 0; i < n; i++)
		if (p99[i] != UINT64_MAX)
			sorted[k++] = p99[i];
	if (eligible >= 3)
		med = median(sorted, eligible);
	for (uint32_t i = 0; i < n; i++) {
		bool slow = dp->cfg.slow_factor_pct != 0 && eligible >= 3 && p99[i] != UINT64_MAX &&
			    (double)p99[i] > (double)med * dp->cfg.slow_factor_pct / 100.0;

		slow_now += slow;
		o->slow_windows[i] += slow;
		if (slow == (bool)o->slow[i])
			continue;
		o->slow[i] = slow;
		if (nev < max) {
			snprintf(ev[nev].name, sizeof(ev[nev].name), "%s", dp->eps[i].name);
			ev[nev].slow = slow;
			ev[nev].p99_ns = p99[i] == UINT64_MAX ? 0 : p99[i];
			ev[nev].median_ns = med;
			ev[nev].replies = replies[i];
			ev[nev].eligible = eligible;
			nev++;
		}
	}
	atomic_store_explicit(&o->slow_now, slow_now, memory_order_relaxed);
	free(p99);
	return nev;
}

/* ---- telemetry ------------------------------------------------------------------------- */

/* Quantiles /ringway/latency reports: key suffix, q. */
#define DP_FOREACH_QUANTILE(_) _("p50", 0.5) _("p90", 0.9) _("p99", 0.99) _("p999", 0.999)

static void tel_add_hist(struct rte_tel_data *d, const char *prefix, const struct obs_hist *h)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	uint64_t n = obs_hist_count(h);

#define DP_TEL_Q(sfx, q)                                    \
	snprintf(key, sizeof(key), "%s" sfx "_ns", prefix); \
	rte_tel_data_add_dict_u64(d, key, q_ns(h, q));
	DP_FOREACH_QUANTILE(DP_TEL_Q)
#undef DP_TEL_Q
	snprintf(key, sizeof(key), "%scount", prefix);
	rte_tel_data_add_dict_u64(d, key, n);
	snprintf(key, sizeof(key), "%smean_ns", prefix);
	rte_tel_data_add_dict_u64(d, key, n ? h->sum / n : 0);
}

/* /ringway/latency[,W]: router_* (time in the router per packet) and rtt_* (all nodes' round
 * trips) over all workers or worker W; without W also node<i>_name and node<i>_* per node
 * (as many as one reply holds). Quantiles in ns, within 3.125 %. */
static int tel_latency(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t n, shown = 0;
	struct obs_hist *h;
	char key[RTE_TEL_MAX_STRING_LEN];
	int worker = -1;

	(void)cmd;
	if (tel_obs_dp == NULL)
		return -ENODEV;
	if (params != NULL && *params != '\0') {
		char *end;
		long v = strtol(params, &end, 10);

		if (*end != '\0' || v < 0 || v >= tel_obs_dp->cfg.n_workers)
			return -EINVAL;
		worker = (int)v;
	}
	h = malloc(2 * sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	dp_latency_get(tel_obs_dp, worker, &h[0], &h[1]);
	rte_tel_data_start_dict(d);
	tel_add_hist(d, "router_", &h[1]);
	tel_add_hist(d, "rtt_", &h[0]);
	n = atomic_load_explicit(&tel_obs_dp->n_eps_hwm, memory_order_relaxed);
	for (uint32_t i = 0; worker < 0 && i < n; i++) {
		if (!tel_obs_dp->eps[i].used)
			continue;
		if (12 + (shown + 1) * 7 > RTE_TEL_MAX_DICT_ENTRIES)
			break;
		snprintf(key, sizeof(key), "node%u_name", shown);
		rte_tel_data_add_dict_string(d, key, tel_obs_dp->eps[i].name);
		ep_rtt(tel_obs_dp, i, &h[0]);
		snprintf(key, sizeof(key), "node%u_", shown++);
		tel_add_hist(d, key, &h[0]);
	}
	free(h);
	return 0;
}

int dp_obs_telemetry_register(struct dp *dp)
{
	static bool registered;
	int rc;

	tel_obs_dp = dp;
	if (registered)
		return 0;
	rc = rte_telemetry_register_cmd(
		"/ringway/latency", tel_latency,
		"Latency quantiles in ns (3.125 %), of worker W (param W): router_p50_ns, "
		"rtt_p99_ns, node<i>_p999_ns, ...");
	registered = rc == 0;
	return rc;
}
