/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway: the memcached shard router.
 *
 *   ringway [EAL options] -- --config FILE [--check]
 *
 * Wiring only, in steps: arguments, configuration and membership (the state file when
 * present, else the config's nodes; both validated before EAL init, so --check and a bad file
 * never touch a port); EAL; the port (mbuf pool, one RX/TX queue pair per worker lcore, RSS
 * on IPv4/UDP where offered, AF_XDP steering from xdp.c); the data plane (initial placement,
 * telemetry, worker launch); the control loop on the main lcore (management socket, ARP
 * timers). The only place that prints fatal errors and exits. At exit (SIGINT/SIGTERM) it
 * prints the counters as "key value" lines.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "config.h"
#include "control.h"
#include "dataplane.h"
#include "metrics.h"
#include "notify.h"
#include "placement.h"
#include "unmap_guard.h"
#include "xdp.h"

#define RW_CONTROL_TICK_MS 10

struct args {
	const char *config;
	bool check;
};

/* What start-up decided, handed from step to step. */
struct start {
	unsigned int lcores[DP_WORKERS_MAX]; /* worker lcores EAL gave */
	uint16_t n_lcores;
	uint16_t port;
	uint16_t n_workers; /* queue pairs the port runs: at most n_lcores */
	bool offload;	    /* the port computes IPv4/UDP checksums */
	bool two_ports;	    /* [router] node_port: nodes on a port of their own */
	uint16_t node_port;
};

static struct rw_config cfg; /* ~170 KB: not on the stack */
static volatile sig_atomic_t stop_requested;
static struct dp *the_dp;
static struct rte_mempool *the_pool;
static struct rw_xdp *the_xdp;	       /* NULL unless an AF_XDP port is in use */
static struct rw_metrics *the_metrics; /* NULL unless [metrics] listen is set */
static struct ctl_engine *the_engine;
/* The gutter pool: [gutter NAME] sections, then `gutter add|remove`. Not part of the
 * membership (no epoch, no state file): a restart starts again from the config. */
static struct ctl_member gutter_nodes[RW_CFG_GUTTER_MAX];
static uint32_t n_gutter;

/* Live changes, for /ringway/control (written on the control lcore, read by telemetry). */
static struct {
	uint64_t publishes;	  /* changes published to the workers */
	uint64_t last_publish_us; /* clone per worker, swap, RCU synchronize done */
	uint64_t max_publish_us;
	uint64_t last_resolve_us;  /* waiting for the MACs of members new to the ring */
	uint64_t resolve_timeouts; /* published with a new member's MAC still unknown */
	uint64_t joins_flushed;	   /* members that joined flushed (no --keep) */
	uint64_t last_flush_us;	   /* the last change's wait for its joiners' flush */
	uint64_t flush_timeouts;   /* a change answered with a joiner's flush unanswered */
} pubstat;

static void usage(FILE *out)
{
	const char *sec, *key;

	fprintf(out,
		"usage: ringway [EAL options] -- --config FILE [--check]\n"
		"       ringway --config FILE --check     (no EAL options: check only)\n"
		"\n"
		"The memcached UDP shard router (ringway(8)). EAL options go before \"--\": lcores\n"
		"(-l 1-5: the first is the control lcore, the others workers), the port (-a PCI, or\n"
		"--vdev net_af_xdp0,iface=IF / net_af_packet0,iface=IF), --file-prefix NAME, and\n"
		"memory (hugepages by default; --no-huge -m MB without them).\n"
		"\n"
		"  --config FILE  router configuration (INI, ringway.conf(5); sample\n"
		"                 /etc/ringway/ringway.conf)\n"
		"  --check        load and validate FILE and the state file, print the membership and\n"
		"                 the whole configuration with its defaults, exit (0 valid, 1 not)\n"
		"  --help         this text\n"
		"\n"
		"sections:");
	/* Each section once, in the key table's order (a later row may add to an earlier one). */
	for (size_t i = 0; rw_config_key_at(i, &sec, &key) == 0; i++) {
		const char *s2, *k2;
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = rw_config_key_at(j, &s2, &k2) == 0 && strcmp(s2, sec) == 0;
		if (!seen)
			fprintf(out, " [%s%s]", sec, strcmp(sec, "node") == 0 ? " NAME" : "");
	}
	fprintf(out,
		"\n  ([gutter NAME]: the keys of [node NAME]; %zu keys in all, each with its range and\n"
		"  default: man ringway.conf)\n"
		"\n"
		"control: the socket of [control] socket (default %s), ringwayctl(8)\n"
		"signals: SIGINT or SIGTERM stop the workers and print the counters and the\n"
		"         accounting identity (\"identity ok ...\") on stdout\n"
		"exit: 0 stopped cleanly or --check passed, 1 configuration or start-up error,\n"
		"      2 usage error\n",
		rw_config_key_count(), CTL_DEFAULT_SOCKET);
}

/* Application arguments (after "--"); exits on error. */
static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check", no_argument, NULL, 'k'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->config = optarg;
			break;
		case 'k':
			a->check = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ringway: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if (a->config == NULL) {
		fprintf(stderr, "ringway: --config FILE is required\n");
		usage(stderr);
		exit(2);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
	if (the_dp != NULL)
		dp_stop(the_dp);
}

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ringway: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	rte_eal_cleanup();
	rw_xdp_close(the_xdp); /* a failed start leaves no steering program on the interface */
	exit(1);
}

/* The membership to start with: the state file when there is one (a change made through the
 * control socket survives a restart), else the config's nodes at epoch 1. Exits on error,
 * leaving a bad state file untouched. */
static struct ctl_state *initial_state(void)
{
	struct ctl_state *st = NULL;
	struct ctl_member *members;
	char err[512];
	int rc = ctl_state_load(cfg.control.state_file, &st, err, sizeof(err));

	if (rc == 0)
		return st;
	if (rc != -ENOENT) {
		/* err names the file already. */
		fprintf(stderr,
			"ringway: %s (left as it is; move it away to start from the "
			"config's nodes)\n",
			err);
		exit(1);
	}
	st = ctl_state_new(&cfg.placement, 1);
	members = calloc(cfg.n_nodes, sizeof(*members));
	if (st == NULL || members == NULL) {
		fprintf(stderr, "ringway: out of memory\n");
		exit(1);
	}
	for (uint32_t i = 0; i < cfg.n_nodes; i++) {
		members[i].pl = cfg.nodes[i].member;
		members[i].has_mac = cfg.nodes[i].has_mac;
		memcpy(members[i].mac, cfg.nodes[i].mac, 6);
	}
	rc = ctl_state_replace(st, members, cfg.n_nodes, err, sizeof(err));
	free(members);
	if (rc != 0) {
		fprintf(stderr, "ringway: nodes of %s: %s\n", "the configuration", err);
		exit(1);
	}
	return st;
}

/* The state file records the live route table (a `route add|remove` made it): it wins over
 * [route] as its membership wins over [node]; say so, and how the two differ. */
static void routes_from_state_file(struct rt_table *routes, const char *config)
{
	const struct rt_table *kept = ctl_state_routes(ctl_engine_state(the_engine));
	struct ctl_text diff = {0};
	int rc = ctl_routes_diff(kept, "the state file", routes, "[route]", &diff);
	const char *how = rc == 0 ? "the same routes" : rc < 0 ? "they differ" : diff.buf;

	/* stderr: --check prints an INI file on stdout. */
	fprintf(stderr,
		"ringway: routes from the state file %s (%u routes), not [route] of %s: %s\n",
		cfg.control.state_file, kept->n, config, how);
	ctl_text_release(&diff);
	*routes = *kept;
}

/* Static MACs of @p st's members, index-aligned (NULL on ENOMEM). */
static struct dp_node_mac *member_macs(const struct ctl_state *st)
{
	uint32_t n = ctl_state_count(st);
	struct dp_node_mac *macs = calloc(n ? n : 1, sizeof(*macs));

	for (uint32_t i = 0; macs != NULL && i < n; i++) {
		macs[i].has_mac = ctl_state_member(st, i)->has_mac;
		memcpy(macs[i].mac, ctl_state_member(st, i)->mac, 6);
	}
	return macs;
}

/* Publish the membership @p st (placement @p pl) to every worker: the engine's publish hook
 * and the start-up publication. */
static int publish_state(const struct ctl_state *st, const struct pl_placement *pl)
{
	struct dp_node_mac *macs = member_macs(st);
	int rc;

	if (macs == NULL)
		return -ENOMEM;
	rc = dp_publish_placement(the_dp, pl, macs, ctl_state_epoch(st));
	free(macs);
	return rc;
}

/* Members new to the ring get their neighbour entry first and the control lcore ARPs for
 * them (at most one ARP round, arp_retry_ms x arp_attempts, capped at 2 s) before the swap:
 * published at once, the first requests for their keys would be dropped (node_no_mac). */
static void resolve_new_members(const struct ctl_state *next, const struct pl_placement *pl)
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_get_tsc_cycles();
	uint64_t ms = (uint64_t)cfg.timeouts.arp_retry_ms * cfg.timeouts.arp_attempts;
	uint64_t deadline = t0 + (ms < 2000 ? ms : 2000) * hz / 1000;
	struct dp_node_mac *macs = member_macs(next);
	int unknown;

	if (macs == NULL)
		return;
	while ((unknown = dp_prepare_placement(the_dp, pl, macs)) > 0 &&
	       rte_get_tsc_cycles() < deadline && !stop_requested) {
		dp_control_poll(the_dp);
		rw_xdp_neigh_poll(the_xdp, the_dp, cfg.tables.neighbours, true);
		rte_delay_us_sleep(1000);
	}
	if (unknown > 0)
		pubstat.resolve_timeouts++;
	pubstat.last_resolve_us = (rte_get_tsc_cycles() - t0) * 1000000 / hz;
	free(macs);
}

/* A change's members that join are flushed before they serve unless added with --keep
 * (dp_publish_placement_flush): the change is answered once their flush_all is, so a client
 * that waits for `OK` finds the node serving; a flush still unanswered after twice the probe
 * timeout (capped at 2 s) is left to the health poll, the node failing over until then. */
static void wait_joiners(void)
{
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_get_tsc_cycles();
	uint64_t ms = 2ull * cfg.health.probe_timeout_ms;
	uint64_t deadline = t0 + (ms < 2000 ? ms : 2000) * hz / 1000;

	while (dp_health_joining(the_dp) > 0 && rte_get_tsc_cycles() < deadline &&
	       !stop_requested) {
		dp_control_poll(the_dp);
		rw_xdp_neigh_poll(the_xdp, the_dp, cfg.tables.neighbours, false);
		dp_health_poll(the_dp);
		rte_delay_us_sleep(200);
	}
	if (dp_health_joining(the_dp) > 0)
		pubstat.flush_timeouts++;
	pubstat.last_flush_us = (rte_get_tsc_cycles() - t0) * 1000000 / hz;
}

static int ops_publish(void *ctx, const struct ctl_state *next, const struct pl_placement *pl)
{
	uint32_t n = ctl_state_count(next);
	struct dp_node_mac *macs;
	uint32_t joining = dp_health_joining(the_dp);
	uint64_t t0, us;
	bool *flush;
	int rc;

	(void)ctx;
	resolve_new_members(next, pl);
	macs = member_macs(next);
	flush = calloc(n ? n : 1, sizeof(*flush));
	if (macs == NULL || flush == NULL) {
		free(macs);
		free(flush);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		flush[i] = !ctl_state_member(next, i)->keep;
	t0 = rte_get_tsc_cycles();
	rc = dp_publish_placement_flush(the_dp, pl, macs, ctl_state_epoch(next), flush);
	us = (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
	free(macs);
	free(flush);
	if (rc != 0)
		return rc;
	pubstat.publishes++;
	pubstat.last_publish_us = us;
	if (us > pubstat.max_publish_us)
		pubstat.max_publish_us = us;
	if (dp_health_joining(the_dp) > joining)
		pubstat.joins_flushed += dp_health_joining(the_dp) - joining;
	wait_joiners();
	return 0;
}

/* `route add|remove`: the engine checked every member keeps a route; re-resolve next hops. */
static int ops_routes(void *ctx, const struct rt_table *next)
{
	unsigned int moved;

	(void)ctx;
	moved = dp_set_routes(the_dp, next);
	/* AF_XDP: ask the kernel for the new next hops now rather than at its next poll. */
	rw_xdp_neigh_poll(the_xdp, the_dp, cfg.tables.neighbours, true);
	printf("ringway: routes changed (%u routes): %u node(s) moved to another next hop\n",
	       next->n, moved);
	fflush(stdout);
	return 0;
}

/* /ringway/control: live changes (publish latency) and the mbuf pool's use. */
static int tel_control(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "epoch", dp_epoch(the_dp));
	rte_tel_data_add_dict_u64(d, "publishes", pubstat.publishes);
	rte_tel_data_add_dict_u64(d, "last_publish_us", pubstat.last_publish_us);
	rte_tel_data_add_dict_u64(d, "max_publish_us", pubstat.max_publish_us);
	rte_tel_data_add_dict_u64(d, "last_resolve_us", pubstat.last_resolve_us);
	rte_tel_data_add_dict_u64(d, "resolve_timeouts", pubstat.resolve_timeouts);
	rte_tel_data_add_dict_u64(d, "joins_flushed", pubstat.joins_flushed);
	rte_tel_data_add_dict_u64(d, "last_flush_us", pubstat.last_flush_us);
	rte_tel_data_add_dict_u64(d, "flush_timeouts", pubstat.flush_timeouts);
	rte_tel_data_add_dict_u64(d, "mbufs", the_pool->size);
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", rte_mempool_in_use_count(the_pool));
	return 0;
}

/* `stats` on the control socket: the totals as "key value" lines. */
static int ops_stats(void *ctx, struct ctl_text *out)
{
	struct dp_stats s;

	(void)ctx;
	dp_stats_get(the_dp, -1, &s);
	for (int c = 0; c < DP_CTR_COUNT; c++)
		ctl_text_appendf(out, "%s %" PRIu64 "\n", dp_counter_name((enum dp_counter)c),
				 s.ctr[c]);
	for (int d = 0; d < DP_DROP_COUNT; d++)
		ctl_text_appendf(out, "drop_%s %" PRIu64 "\n", dp_drop_name((enum dp_drop)d),
				 s.drop[d]);
#define RW_GAUGE_LINE(type, member, name) \
	ctl_text_appendf(out, name " %" PRIu64 "\n", (uint64_t)s.member);
	DP_FOREACH_GAUGE(RW_GAUGE_LINE)
#undef RW_GAUGE_LINE
	ctl_text_appendf(out, "identity %s\n", dp_stats_identity(&s) ? "ok" : "broken");
	return out->oom ? -ENOMEM : 0;
}

/* `hotkeys [N]`: the data plane's hot-key view; a key's share is of its owner's requests. */
static int ops_hotkeys(void *ctx, uint32_t n, struct ctl_text *head, struct ctl_text *lines)
{
	struct dp_hotkey *v = calloc(n, sizeof(*v));
	struct dp_hot_summary s;
	char key[3 * MC_KEY_MAX + 1];
	uint32_t got;

	(void)ctx;
	if (v == NULL)
		return -ENOMEM;
	got = dp_hotkeys_get(the_dp, v, n, &s);
	ctl_text_appendf(
		head,
		" intervals %" PRIu64 " interval_ms %.0f sampled %" PRIu64
		" sample_every %u sketch_keys %u bound_rate %.0f guaranteed %u late %" PRIu64
		" spreading %u cooling %u",
		s.intervals, s.interval_s * 1000, s.sampled, s.sample_every, s.sketch_keys,
		s.bound_rate, s.guaranteed, s.late, s.spreading, s.cooling);
	for (uint32_t i = 0; i < got; i++) {
		dp_hotkey_text(v[i].key, v[i].len, key, sizeof(key));
		ctl_text_appendf(lines,
				 "rank %u key %s rate %.0f rate_min %.0f owner %s owner_rate %.0f "
				 "share_pct %.1f guaranteed %d spread %s\n",
				 i + 1, key, v[i].rate, v[i].rate_min,
				 v[i].owner >= 0 ? v[i].owner_name : "-", v[i].owner_rate,
				 v[i].owner_rate > 0 ? 100.0 * v[i].rate / v[i].owner_rate : 0.0,
				 v[i].guaranteed,
				 v[i].spread == DP_HOT_STATE_SPREAD    ? "hot"
				 : v[i].spread == DP_HOT_STATE_PINNED  ? "pinned"
				 : v[i].spread == DP_HOT_STATE_COOLING ? "cooling"
								       : "no");
	}
	free(v);
	return 0;
}

/* `hot add|remove KEY`. */
static int ops_hot_pin(void *ctx, bool pin, const char *key, size_t len, char *err, size_t errlen)
{
	int rc = dp_hot_pin(the_dp, (const uint8_t *)key, (uint32_t)len, pin);

	(void)ctx;
	if (rc < 0)
		snprintf(err, errlen, "%s",
			 rc == -ENOENT	 ? "not pinned"
			 : rc == -ENOSPC ? "too many hot keys"
			 : rc == -EINVAL ? "key length"
					 : strerror(-rc));
	return rc;
}

/* `list`: each member's next hop and every numeric per-node field. */
static void ops_member_status(void *ctx, uint32_t idx, const struct ctl_member *m,
			      struct ctl_text *out)
{
	struct dp_node_stats n;
	struct dp_warm_state ws;
	char text[64];
	uint64_t v;

	(void)ctx;
	(void)m;
	if (dp_member_node(the_dp, idx, &n) != 0)
		return;
	dp_node_field(&n, DP_NODE_F_mac, text, sizeof(text), &v);
	ctl_text_appendf(out, " nexthop %s",
			 n.mac_known ? text : (n.arp_failures ? "unresolved" : "resolving"));
	dp_node_field(&n, DP_NODE_F_health, text, sizeof(text), &v);
	ctl_text_appendf(out, " health %s", text);
	dp_node_field(&n, DP_NODE_F_failover, text, sizeof(text), &v);
	ctl_text_appendf(out, " failover %s", text);
	ctl_text_appendf(out, " warmup %s",
			 dp_warm_get(the_dp, &ws) == 0 && ws.open ? "open" : "off");
	dp_node_field(&n, DP_NODE_F_via, text, sizeof(text), &v);
	ctl_text_appendf(out, " via %s", text);
	for (int f = 0; f < DP_NODE_FIELD_COUNT; f++)
		if (dp_node_field(&n, (enum dp_node_field)f, text, sizeof(text), &v) == 0)
			ctl_text_appendf(out, " %s %" PRIu64, dp_node_field_name(f), v);
}

/* `warmup [end]`: the warm-up window's state, or end it now. */
static int ops_warmup(void *ctx, bool end, struct ctl_text *out, char *err, size_t errlen)
{
	struct dp_warm_state ws;

	(void)ctx;
	if (end && dp_warm_end(the_dp) != 0) {
		snprintf(err, errlen, "no warm-up window open");
		return -ENOENT;
	}
	dp_warm_get(the_dp, &ws);
	ctl_text_appendf(out,
			 "OK warmup %s window_s %u ttl_s %u ms_left %" PRIu64 " prev_epoch %" PRIu64
			 " bytes %" PRIu64 " held %s\n",
			 ws.open ? "open" : (end ? "ended" : "off"), ws.window_s, ws.ttl_s,
			 ws.ms_left, ws.prev_epoch, ws.bytes, ws.held ? "yes" : "no");
	return 0;
}

/* A drain's state as one `OK drain STATE ...` line (docs/control.md). */
static void drain_format(const struct dp_drain_status *ds, struct ctl_text *out)
{
	ctl_text_appendf(out, "OK drain %s in_flight %u multiget_live %u",
			 dp_drain_state_name(ds->state), ds->in_flight, ds->mget_live);
	if (ds->state != DP_DRAIN_SERVING)
		ctl_text_appendf(out, " answer %s ms %" PRIu64 " in_flight_at_start %u",
				 dp_drain_answer_name(ds->answer), ds->ms, ds->in_flight_at_start);
	if (ds->state == DP_DRAIN_DRAINED)
		ctl_text_appendf(out, " drained_after_ms %" PRIu64, ds->drained_after_ms);
	ctl_text_appendf(out, "\n");
}

/* The unit's status line follows the drain: at once on a change of state, at most every
 * 500 ms while the count in flight moves (control lcore only: sd_notify is a syscall). */
static struct {
	enum dp_drain_state state;
	uint32_t in_flight;
	uint64_t tsc;
} notified;

static void notify_drain(const struct dp_drain_status *ds, bool force)
{
	uint64_t now = rte_rdtsc();

	if (!force && ds->state == notified.state &&
	    (ds->state != DP_DRAIN_DRAINING || ds->in_flight == notified.in_flight ||
	     now - notified.tsc < rte_get_tsc_hz() / 2))
		return;
	notified.state = ds->state;
	notified.in_flight = ds->in_flight;
	notified.tsc = now;
	rw_notify_drain(ds);
}

/*
 * `drain [error|silent|status]`, `undrain` (dp_drain_start has how a drain ends: undrain or
 * a restart; nothing is persisted). `undrain` of a router that serves is an ERROR, nothing
 * changed.
 */
static int ops_drain(void *ctx, enum ctl_drain op, struct ctl_text *out, char *err, size_t errlen)
{
	struct dp_drain_status ds;

	(void)ctx;
	switch (op) {
	case CTL_DRAIN_START:
		dp_drain_start(the_dp, cfg.router.drain_answer);
		break;
	case CTL_DRAIN_START_ERROR:
		dp_drain_start(the_dp, DP_DRAIN_ERROR);
		break;
	case CTL_DRAIN_START_SILENT:
		dp_drain_start(the_dp, DP_DRAIN_SILENT);
		break;
	case CTL_DRAIN_STATUS:
		break;
	case CTL_DRAIN_STOP:
		if (dp_drain_stop(the_dp) != 0) {
			snprintf(err, errlen, "not draining");
			return -ENOENT;
		}
		break;
	}
	dp_drain_get(the_dp, &ds);
	if (op != CTL_DRAIN_STATUS) {
		printf("ringway: drain: %s, %u in flight\n", dp_drain_state_name(ds.state),
		       ds.in_flight);
		fflush(stdout);
	}
	notify_drain(&ds, op != CTL_DRAIN_STATUS);
	drain_format(&ds, out);
	return 0;
}

/* `health NAME down|up [--flush|--accept-stale]`: the data plane's health of one node. */
static int ops_health(void *ctx, const char *name, enum ctl_health what, char *err, size_t errlen)
{
	static const enum dp_health_admin op[] = {
		[CTL_HEALTH_DOWN] = DP_HEALTH_DOWN,
		[CTL_HEALTH_UP] = DP_HEALTH_UP,
		[CTL_HEALTH_UP_FLUSH] = DP_HEALTH_UP_FLUSH,
		[CTL_HEALTH_UP_ACCEPT_STALE] = DP_HEALTH_UP_ACCEPT_STALE,
	};
	int rc;

	(void)ctx;
	rc = dp_health_admin(the_dp, name, op[what]);
	if (rc == -ESTALE)
		snprintf(err, errlen,
			 "%s: written keys were lost while it was down (dirty_keys_max): use "
			 "health %s up --flush or --accept-stale",
			 name, name);
	else if (rc == -ENOENT)
		snprintf(err, errlen, "%s is not in the published ring", name);
	return rc;
}

/* Publish the gutter pool, placed by the membership's placement settings. */
static int publish_gutter(void)
{
	struct pl_member pm[RW_CFG_GUTTER_MAX];
	struct dp_node_mac macs[RW_CFG_GUTTER_MAX];
	struct pl_placement *gpl = NULL;
	int rc;

	for (uint32_t i = 0; i < n_gutter; i++) {
		pm[i] = gutter_nodes[i].pl;
		macs[i].has_mac = gutter_nodes[i].has_mac;
		memcpy(macs[i].mac, gutter_nodes[i].mac, 6);
	}
	if (n_gutter != 0) {
		gpl = pl_build(ctl_state_config(ctl_engine_state(the_engine)), pm, n_gutter);
		if (gpl == NULL)
			return errno ? -errno : -EINVAL;
	}
	rc = dp_publish_gutter(the_dp, gpl, macs);
	pl_free(gpl);
	return rc;
}

/* `gutter add|remove|list`. */
static int ops_gutter(void *ctx, enum ctl_gutter op, const struct ctl_member *m,
		      struct ctl_text *out, char *err, size_t errlen)
{
	struct ctl_member keep;
	uint32_t i;
	int rc;

	(void)ctx;
	if (op == CTL_GUTTER_LIST) {
		static struct dp_node_stats nodes[1024];
		uint32_t nn = dp_nodes_get(the_dp, nodes, RTE_DIM(nodes));

		for (i = 0; i < n_gutter; i++) {
			const struct ctl_member *g = &gutter_nodes[i];
			char text[64], ep[PL_ENDPOINT_MAX];
			uint64_t v;

			pl_member_endpoint(&g->pl, ep);
			ctl_text_appendf(out, "name %s addr %s weight %u", g->pl.name, ep,
					 g->pl.weight);
			for (uint32_t k = 0; k < nn; k++) {
				if (!nodes[k].gutter || strcmp(nodes[k].name, g->pl.name) != 0)
					continue;
				dp_node_field(&nodes[k], DP_NODE_F_health, text, sizeof(text), &v);
				ctl_text_appendf(out, " health %s", text);
				dp_node_field(&nodes[k], DP_NODE_F_mac, text, sizeof(text), &v);
				ctl_text_appendf(
					out, " nexthop %s forwarded %" PRIu64 " returned %" PRIu64,
					nodes[k].mac_known ? text : "resolving", nodes[k].forwarded,
					nodes[k].returned);
				break;
			}
			ctl_text_appendf(out, "\n");
		}
		return (int)n_gutter;
	}
	for (i = 0; i < n_gutter && strcmp(gutter_nodes[i].pl.name, m->pl.name) != 0; i++)
		;
	if (op == CTL_GUTTER_ADD) {
		if (i < n_gutter)
			return snprintf(err, errlen, "gutter node %s exists", m->pl.name), -EEXIST;
		if (n_gutter == RW_CFG_GUTTER_MAX)
			return snprintf(err, errlen, "more than %u gutter nodes",
					RW_CFG_GUTTER_MAX),
			       -ENOSPC;
		gutter_nodes[n_gutter++] = *m;
	} else {
		if (i == n_gutter)
			return snprintf(err, errlen, "no gutter node %s", m->pl.name), -ENOENT;
		keep = gutter_nodes[i];
		memmove(&gutter_nodes[i], &gutter_nodes[i + 1],
			(n_gutter - i - 1) * sizeof(gutter_nodes[0]));
		n_gutter--;
	}
	rc = publish_gutter();
	if (rc == 0)
		return 0;
	/* Put the list back as the workers still have it. */
	if (op == CTL_GUTTER_ADD) {
		n_gutter--;
	} else {
		memmove(&gutter_nodes[i + 1], &gutter_nodes[i],
			(n_gutter - i) * sizeof(gutter_nodes[0]));
		gutter_nodes[i] = keep;
		n_gutter++;
	}
	snprintf(err, errlen, "publish failed: %s", strerror(-rc));
	return rc;
}

/* af_packet (qpairs=N: a PACKET_FANOUT_HASH group) and af_xdp (queue_count=N: the NIC's
 * own RSS feeds each XSK) spread flows over their queues without reporting RSS offloads;
 * on net_memif the peer picks the queue each packet arrives on. */
static bool kernel_spreads_queues(const struct rte_eth_dev_info *info)
{
	return info->driver_name != NULL && (strcmp(info->driver_name, "net_af_packet") == 0 ||
					     strcmp(info->driver_name, "net_af_xdp") == 0 ||
					     strcmp(info->driver_name, "net_memif") == 0);
}

static bool port_is_memif(uint16_t port)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, "net_memif") == 0;
}

/* Configure and start the port with @p nq queue pairs; sets *offload when the port computes
 * IPv4/UDP checksums. Returns the number of queue pairs used (1 when RSS is not offered). */
static uint16_t port_setup(uint16_t port, uint16_t nq, struct rte_mempool *pool, bool *offload)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nrx = (uint16_t)cfg.tables.rx_desc, ntx = (uint16_t)cfg.tables.tx_desc;
	uint64_t csum = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	int rc, socket = rte_eth_dev_socket_id(port);

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		fatal("port %u: cannot read device info: %s", port, rte_strerror(-rc));
	if (nq > info.max_rx_queues)
		nq = info.max_rx_queues;
	if (nq > info.max_tx_queues)
		nq = info.max_tx_queues;
	if (nq > 1) {
		/* IPv6 clients and nodes are spread the same way (address6). */
		uint64_t hf = (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_IPV6 |
			       RTE_ETH_RSS_NONFRAG_IPV6_UDP) &
			      info.flow_type_rss_offloads;

		if (hf == 0 && !kernel_spreads_queues(&info)) {
			nq = 1; /* without RSS only queue 0 would see packets */
		} else if (hf != 0) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		}
	}
	*offload = (info.tx_offload_capa & csum) == csum;
	if (*offload)
		conf.txmode.offloads |= csum;
	/* Received checksums checked by the port where it can (the workers read its verdict in
	 * the mbuf's flags and compute the rest themselves). */
	conf.rxmode.offloads |= info.rx_offload_capa &
				(RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_UDP_CKSUM);
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc != 0)
		fatal("port %u: configure %u queues: %s", port, nq, rte_strerror(-rc));
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	if (rc != 0)
		fatal("port %u: descriptors: %s", port, rte_strerror(-rc));
	for (uint16_t q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nrx, (unsigned int)socket, NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, ntx, (unsigned int)socket, NULL);
		if (rc != 0)
			fatal("port %u: queue %u setup: %s", port, q, rte_strerror(-rc));
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0)
		fatal("port %u: start: %s", port, rte_strerror(-rc));
	return nq;
}

/* The IPv4 address the control engine knows the router by: 0 when the router reaches no IPv4
 * node (IPv6-only: no `address`; two ports: no `node_address`), so that a live add of an IPv4
 * node is refused with the key to set. */
static uint32_t router_ipv4_for_engine(void)
{
	if (!cfg.router.has_node_port || cfg.router.node_address == 0)
		return cfg.router.has_node_port ? 0 : cfg.router.address;
	return cfg.router.address != 0 ? cfg.router.address : cfg.router.node_address;
}

/* The data plane's configuration from the file's and what EAL and the port decided. */
static void dp_config_from(struct dp_config *d, uint16_t nw, const unsigned int *lcores,
			   struct rte_mempool *pool, bool offload)
{
	dp_config_defaults(d);
	d->port_id = (uint16_t)cfg.router.port;
	d->n_workers = nw;
	for (uint16_t i = 0; i < nw; i++)
		d->worker_socket[i] = rte_lcore_to_socket_id(lcores[i]);
	d->router_ip = cfg.router.address;
	memcpy(d->router_mac, cfg.router.mac, 6);
	d->n_listen = (uint16_t)cfg.router.n_listen_ports;
	memcpy(d->listen_ports, cfg.router.listen_ports, sizeof(uint16_t) * d->n_listen);
	d->reply_port_base = (uint16_t)cfg.router.reply_port_base;
	d->reply_port_count = cfg.router.reply_port_count;
	memcpy(d->router_ip6, cfg.router.address6, 16);
	d->n_allowed = 0;
	d->n_allowed6 = 0;
	for (uint32_t i = 0; i < cfg.router.n_allowed_clients; i++) {
		const struct rw_cfg_prefix *p = &cfg.router.allowed_clients[i];
		struct dp_prefix6 *q;
		uint8_t mask[16] = {0};

		if (!p->v6) {
			d->allowed[d->n_allowed].addr = p->addr;
			d->allowed[d->n_allowed++].mask = p->mask;
			continue;
		}
		for (uint32_t b = 0; b < p->len; b++)
			mask[b / 8] |= (uint8_t)(0x80u >> (b % 8));
		q = &d->allowed6[d->n_allowed6++];
		memcpy(q->addr, p->addr6, 16);
		memcpy(q->mask, mask, 16);
	}
	d->n_client_macs = (uint16_t)cfg.router.n_allowed_client_macs;
	memcpy(d->client_macs, cfg.router.allowed_client_macs, 6u * d->n_client_macs);
	d->slots = cfg.tables.request_slots;
	d->request_timeout_ms = cfg.timeouts.request_ms;
	d->quiet_read_ms = cfg.timeouts.quiet_read_ms;
	d->client_slots_max = cfg.tables.client_slots_max;
	d->burst = cfg.tables.burst;
	d->handoff_ring = cfg.tables.handoff_ring;
	d->neighbours = cfg.tables.neighbours;
	d->mtu = cfg.router.mtu;
	d->frag_entries = cfg.tables.fragments;
	d->frag_timeout_ms = cfg.timeouts.fragment_ms;
	d->vlan_fixed = cfg.router.has_vlan;
	d->vlan_id = (uint16_t)cfg.router.vlan;
	d->two_ports = cfg.router.has_node_port;
	d->node_port_id = (uint16_t)cfg.router.node_port;
	d->node_router_ip = cfg.router.node_address;
	memcpy(d->node_router_ip6, cfg.router.node_address6, 16);
	memcpy(d->node_router_mac, cfg.router.node_mac, 6);
	d->node_vlan_fixed = cfg.router.has_node_vlan;
	d->node_vlan_id = (uint16_t)cfg.router.node_vlan;
	d->mget_max = cfg.tables.multiget_inflight;
	d->mget_bytes = cfg.tables.multiget_buffer_kb * 1024u;
	d->mget_send_burst = cfg.tables.multiget_send_burst;
	d->health.fail_down = cfg.health.fail_down;
	d->health.window_ms = cfg.health.window_ms;
	d->health.probe_min_ms = cfg.health.probe_min_ms;
	d->health.probe_max_ms = cfg.health.probe_max_ms;
	d->health.probe_timeout_ms = cfg.health.probe_timeout_ms;
	d->health.up_successes = cfg.health.up_successes;
	d->health.flap_ms = cfg.health.flap_ms;
	d->dirty_keys_max = cfg.health.dirty_keys_max;
	d->probe_port = (uint16_t)cfg.health.probe_port;
	d->failover = cfg.failover.mode;
	d->failover_ttl_s = cfg.failover.ttl_s;
	d->replicas = cfg.placement.replicas;
	d->warm_window_s = cfg.warmup.window_s;
	d->warm_ttl_s = cfg.warmup.ttl_s;
	d->arp_retry_ms = cfg.timeouts.arp_retry_ms;
	d->arp_attempts = cfg.timeouts.arp_attempts;
	d->arp_lifetime_s = cfg.timeouts.arp_lifetime_s;
	d->idle = cfg.router.idle;
	d->backoff_us = cfg.router.backoff_us;
	d->backoff_after = cfg.router.backoff_after;
	d->tx_cksum_offload = offload;
	/* net_memif's bursts read rings it maps on connect and unmaps on disconnect
	 * (docs/performance.md, "Router deaths"): workers touch a memif port only while its
	 * link is up, and an unmap waits for their polls (unmap_guard.h, set once they run). */
	d->link_gated = port_is_memif((uint16_t)cfg.router.port) ||
			(cfg.router.has_node_port && port_is_memif((uint16_t)cfg.router.node_port));
	/* The kernel owns ARP and ND on the node-facing interface it shares. */
	d->no_arp_requests = rw_xdp_kernel_neigh(the_xdp);
	d->pool = pool;
	d->slow_factor_pct = cfg.health.slow_factor_pct;
	d->slow_window_ms = cfg.health.slow_window_ms;
	d->slow_min_replies = cfg.health.slow_min_replies;
	d->hot_sample_every = cfg.hotkeys.sample_every;
	d->hot_sketch_keys = cfg.hotkeys.sketch_keys;
	d->hot_interval_ms = cfg.hotkeys.interval_ms;
	d->hot_threshold_pct = cfg.hotkeys.threshold_pct;
	d->hot_replicas = cfg.hotkeys.replicas;
	d->hot_load_pct = cfg.hotkeys.load_pct;
	d->hot_fill_ttl_s = cfg.hotkeys.fill_ttl_s;
}

/* Split argv at "--": EAL's part stays in argv[0..return), ours is parsed into @p a. */
static int split_args(int argc, char **argv, struct args *a)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = argv[0];
			parse_args(argc - i, argv + i, a);
			return i;
		}
	}
	/* No "--": everything is ours (e.g. `ringway --config F --check`). */
	parse_args(argc, argv, a);
	return 1;
}

/* --check: the membership it would start with, then the whole configuration, defaults
 * filled in, as an INI file that loads back (the summary is a comment line). */
static int check_only(const char *path, const struct ctl_engine *engine)
{
	const struct pl_placement *pl = ctl_engine_placement(engine);

	printf("# ringway: %s: OK (%u nodes, epoch %" PRIu64 ", algorithm %s, %" PRIu64
	       " points)\n",
	       path, pl_member_count(pl), ctl_state_epoch(ctl_engine_state(engine)),
	       pl_algo_name(pl_config_of(pl)->algo), pl_point_count(pl));
	if (rw_config_dump(&cfg, stdout) != 0 || fflush(stdout) != 0) {
		fprintf(stderr, "ringway: cannot write the configuration: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* AF_XDP steering, EAL, signals, log level, the worker lcores. */
static void start_eal(int eal_argc, char **argv, struct start *st)
{
	char err[512];
	unsigned int lc;
	int rc = rw_xdp_prepare(eal_argc, argv, &cfg, &the_xdp, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "ringway: %s\n", err);
		exit(1);
	}
	for (unsigned int i = 0; i < rw_xdp_ports(the_xdp); i++)
		if (rw_xdp_stale_removed(the_xdp, i) != 0)
			printf("ringway: %s: removed XDP program id %u that an earlier ringway "
			       "left attached (killed or crashed)\n",
			       rw_xdp_port_ifname(the_xdp, i), rw_xdp_stale_removed(the_xdp, i));
	if (rte_eal_init(eal_argc, argv) < 0) {
		fprintf(stderr, "ringway: EAL initialisation failed: %s\n",
			rte_strerror(rte_errno));
		rw_xdp_close(the_xdp);
		exit(1);
	}
	/* From here a stop request ends the start-up through the normal exit path, which closes
	 * the port and removes an AF_XDP steering program (default action: it stays). */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rte_log_set_global_level(cfg.log.level);
	RTE_LCORE_FOREACH_WORKER (lc) {
		if (st->n_lcores < DP_WORKERS_MAX)
			st->lcores[st->n_lcores++] = lc;
	}
	if (st->n_lcores == 0)
		fatal("need at least two lcores (-l 0,1): the main lcore is the control lcore, "
		      "the others are workers");
}

/* Two ports: the node port with as many queue pairs (RSS) as the client port, its MAC. */
static void start_node_port(struct start *st)
{
	struct rte_ether_addr mac;
	bool offload = false;
	uint16_t nq;

	st->node_port = (uint16_t)cfg.router.node_port;
	if (!rte_eth_dev_is_valid_port(st->node_port))
		fatal("node_port %u does not exist (%u ports probed)", st->node_port,
		      rte_eth_dev_count_avail());
	nq = port_setup(st->node_port, st->n_workers, the_pool, &offload);
	if (nq != st->n_workers)
		fatal("node_port %u runs %u queue pairs, port %u runs %u: each worker needs one on "
		      "both",
		      st->node_port, nq, st->port, st->n_workers);
	st->offload = st->offload && offload; /* one setting for both sides */
	st->two_ports = true;
	if (rte_eth_macaddr_get(st->node_port, &mac) != 0)
		fatal("node_port %u: cannot read its MAC", st->node_port);
	memcpy(cfg.router.node_mac, &mac, 6);
	printf("ringway: nodes on port %u (%u queue pairs), clients on port %u\n", st->node_port,
	       nq, st->port);
}

/* The mbuf pool and the port, started; the AF_XDP program checked; the router's MAC. */
static void start_port(struct start *st)
{
	struct rte_ether_addr mac;
	char err[512];
	int rc;

	st->port = (uint16_t)cfg.router.port;
	if (!rte_eth_dev_is_valid_port(st->port))
		fatal("port %u does not exist (%u ports probed; give a device with -a or --vdev)",
		      st->port, rte_eth_dev_count_avail());
	the_pool =
		rte_pktmbuf_pool_create("ringway_mbufs", cfg.tables.mbufs, cfg.tables.mbuf_cache, 0,
					(uint16_t)(RTE_PKTMBUF_HEADROOM + cfg.tables.mbuf_bytes),
					rte_eth_dev_socket_id(st->port));
	if (the_pool == NULL)
		fatal("cannot create the mbuf pool (%u mbufs): %s", cfg.tables.mbufs,
		      rte_strerror(rte_errno));
	rc = rw_xdp_bind(the_xdp, &cfg, err, sizeof(err));
	if (rc != 0)
		fatal("%s", err);
	st->n_workers = port_setup(st->port, st->n_lcores, the_pool, &st->offload);
	if (!cfg.router.has_mac) {
		if (rte_eth_macaddr_get(st->port, &mac) != 0)
			fatal("port %u: cannot read its MAC", st->port);
		memcpy(cfg.router.mac, &mac, 6);
	} else {
		rte_eth_promiscuous_enable(st->port); /* the configured MAC may not be the port's */
	}
	if (cfg.router.has_node_port)
		start_node_port(st);
	rc = rw_xdp_started(the_xdp, err, sizeof(err));
	if (rc != 0)
		fatal("AF_XDP port on %s: %s", rw_xdp_ifname(the_xdp), err);
	if (rw_xdp_kernel_neigh(the_xdp))
		printf("ringway: AF_XDP: node MACs from the kernel's neighbour table of %s\n",
		       rw_xdp_neigh_ifname(the_xdp));
}

/* The port node replies arrive on, when rte_flow rules steer them (else UINT16_MAX). */
static uint16_t steered_port = UINT16_MAX;

/* Reply steering on the port nodes reply on, decided once at start by the control lcore
 * (dp_reply_steer_install) and logged once: rte_flow rules, or the hand-off between workers
 * where the port refuses them or reply_steering is off. The gauge reply_steering_rules says
 * which. The port is never restarted while ringway runs; shut_down() flushes the rules before
 * it stops the port. */
static void steer_replies(const struct start *st, struct dp_config *d)
{
	uint16_t port = st->two_ports ? st->node_port : st->port;
	struct dp_reply_steer rs;

	if (st->n_workers < 2)
		return;
	if (cfg.router.reply_steering == RW_STEER_OFF) {
		printf("ringway: reply steering on port %u: handoff (reply_steering = off)\n", port);
		return;
	}
	dp_reply_steer_install(port, d, &rs);
	if (rs.rules != 0) {
		printf("ringway: reply steering on port %u: rte_flow, %u rules (%s)\n", port,
		       rs.rules, rs.masked ? "a block of ports by mask" : "one per reply port");
		steered_port = port;
	} else {
		printf("ringway: reply steering on port %u: handoff (the port refuses rte_flow "
		       "rules: %s)\n",
		       port, rs.why);
	}
	d->reply_steer_rules = rs.rules;
}

/* The data plane with the engine's membership published, telemetry, workers launched. */
static void start_dataplane(const struct start *st, const struct ctl_engine *engine)
{
	struct dp_config dcfg;
	int rc;

	dp_config_from(&dcfg, st->n_workers, st->lcores, the_pool, st->offload);
	if (dp_generation_bits(dcfg.slots, dcfg.reply_port_count, st->n_workers) < DP_GEN_BITS_MIN)
		fatal("request_slots %u in [tables] over reply_port_count %u in [router] shared by "
		      "%u workers leave %u generation bits in a request id, at least %u are "
		      "needed: "
		      "lower request_slots or raise reply_port_count",
		      dcfg.slots, dcfg.reply_port_count, st->n_workers,
		      dp_generation_bits(dcfg.slots, dcfg.reply_port_count, st->n_workers),
		      DP_GEN_BITS_MIN);
	steer_replies(st, &dcfg);
	the_dp = dp_create(&dcfg);
	if (the_dp == NULL)
		fatal("cannot create the data plane: %s", strerror(errno));
	dp_set_routes(the_dp, ctl_engine_routes(engine)); /* before any node is resolved */
	rc = publish_state(ctl_engine_state(engine), ctl_engine_placement(engine));
	if (rc != 0)
		fatal("cannot publish the initial placement: %s", strerror(-rc));
	for (uint32_t i = 0; i < cfg.n_gutter; i++) {
		gutter_nodes[i].pl = cfg.gutter[i].member;
		gutter_nodes[i].has_mac = cfg.gutter[i].has_mac;
		memcpy(gutter_nodes[i].mac, cfg.gutter[i].mac, 6);
	}
	n_gutter = cfg.n_gutter;
	rc = n_gutter != 0 ? publish_gutter() : 0;
	if (rc != 0)
		fatal("cannot publish the gutter pool: %s", strerror(-rc));
	rc = dp_telemetry_register(the_dp);
	if (rc == 0)
		rc = rte_telemetry_register_cmd("/ringway/control", tel_control,
						"Live membership changes (publish latency) and "
						"mbuf pool use. No parameters");
	if (rc != 0)
		fatal("cannot register telemetry: %s", strerror(-rc));
	if (cfg.metrics.port != 0) {
		char err[512];

		the_metrics = rw_metrics_start(the_dp, cfg.metrics.address,
					       (uint16_t)cfg.metrics.port, err, sizeof(err));
		if (the_metrics == NULL)
			fatal("[metrics] listen: %s", err);
	}
	for (uint16_t i = 0; i < st->n_workers; i++) {
		rc = rte_eal_remote_launch(dp_worker_run, dp_worker_get(the_dp, i), st->lcores[i]);
		if (rc != 0)
			fatal("cannot launch worker %u on lcore %u: %s", i, st->lcores[i],
			      strerror(-rc));
	}
	/* net_memif unmaps a departed peer's rings under the polling workers (unmap_guard.h). */
	if (dcfg.link_gated) {
		rw_unmap_guard_set(the_dp);
		printf("ringway: net_memif: workers poll while the link is up, an unmap waits for "
		       "their polls\n");
	}
}

/* Log the nodes whose MAC moved (an accepted ARP reply, or the kernel's table), at most once a
 * second and 16 lines a time: a node flapping between two MACs, or one whose MAC an attacker
 * keeps racing for, cannot flood the log (each line says how many changes it stands for). */
static void log_mac_changes(uint64_t *next_tsc)
{
	struct dp_mac_change ch[16];
	uint64_t now = rte_rdtsc();
	uint32_t n;
	char ip[INET6_ADDRSTRLEN];

	if (now < *next_tsc)
		return;
	*next_tsc = now + rte_get_tsc_hz();
	n = dp_mac_changes(the_dp, ch, RTE_DIM(ch));
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *o = ch[i].old_mac, *m = ch[i].new_mac;

		if (ch[i].v6)
			inet_ntop(AF_INET6, ch[i].ip6, ip, sizeof(ip));
		else
			inet_ntop(AF_INET, &ch[i].ip, ip, sizeof(ip));
		printf("ringway: node %s %s: MAC changed from %02x:%02x:%02x:%02x:%02x:%02x to "
		       "%02x:%02x:%02x:%02x:%02x:%02x (%u change(s) since the last report)\n",
		       ch[i].name, ip, o[0], o[1], o[2], o[3], o[4], o[5], m[0], m[1], m[2], m[3],
		       m[4], m[5], ch[i].changes);
	}
	if (n > 0)
		fflush(stdout);
}

/* Slow-node flags that changed at the end of a window: one log line each. */
static void log_slow_nodes(void)
{
	struct dp_slow_event ev[16];
	unsigned int n = dp_slow_poll(the_dp, ev, RTE_DIM(ev));

	for (unsigned int i = 0; i < n; i++)
		printf("ringway: node %s %s: round-trip p99 %.1f us in the last %u ms, %.1fx the "
		       "median of %u nodes (%.1f us; slow above %.2fx), %" PRIu64 " replies\n",
		       ev[i].name, ev[i].slow ? "slow" : "no longer slow", ev[i].p99_ns / 1e3,
		       cfg.health.slow_window_ms,
		       ev[i].median_ns ? (double)ev[i].p99_ns / (double)ev[i].median_ns : 0.0,
		       ev[i].eligible, ev[i].median_ns / 1e3, cfg.health.slow_factor_pct / 100.0,
		       ev[i].replies);
	if (n != 0)
		fflush(stdout);
}

/* One line per node health change, at most 32 a second (the rest are counted in a line of
 * their own): a flapping node cannot flood the log. */
static void log_health(uint64_t *next_tsc, uint32_t *budget)
{
	struct dp_health_event ev[8];
	uint64_t now = rte_rdtsc(), lost = 0, skipped = 0;
	uint32_t n;

	if (now >= *next_tsc) {
		*next_tsc = now + rte_get_tsc_hz();
		*budget = 32;
	}
	while ((n = dp_health_events(the_dp, ev, RTE_DIM(ev), &lost)) > 0) {
		skipped += lost;
		for (uint32_t i = 0; i < n; i++) {
			if (*budget == 0) {
				skipped++;
				continue;
			}
			(*budget)--;
			printf("ringway: node %s %s -> %s: %s\n", ev[i].name,
			       hl_state_name(ev[i].from), hl_state_name(ev[i].to), ev[i].why);
		}
	}
	if (skipped > 0)
		printf("ringway: %" PRIu64 " node health change(s) not logged (rate limit)\n",
		       skipped);
	fflush(stdout);
}

/* The management socket, then the control lcore's loop until SIGINT/SIGTERM. */
static void control_loop(const struct start *st, struct ctl_engine *engine)
{
	struct ctl_server_config scfg = {
		.unix_path = cfg.control.socket,
		.tcp = cfg.control.tcp_port != 0,
		.tcp_port = (uint16_t)cfg.control.tcp_port,
		.tcp_token_file = cfg.control.tcp_token_file,
	};
	char err[512];
	uint64_t mac_log_tsc = 0, health_log_tsc = 0;
	uint32_t health_log_budget = 0;
	struct ctl_server *srv = ctl_server_open(engine, &scfg, err, sizeof(err));

	if (srv == NULL)
		fatal("control socket %s: %s", cfg.control.socket, err);
	printf("ringway: serving on port %u%s%s with %u worker(s) (%u lcores asked), checksums "
	       "%s, %u nodes, epoch %" PRIu64 ", control socket %s\n",
	       st->port, the_xdp ? ", AF_XDP on " : "", rw_xdp_ifname(the_xdp), st->n_workers,
	       st->n_lcores, st->offload ? "offloaded" : "in software",
	       ctl_state_count(ctl_engine_state(engine)), dp_epoch(the_dp), cfg.control.socket);
	if (the_metrics != NULL) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &cfg.metrics.address, a, sizeof(a));
		printf("ringway: metrics at http://%s:%u/metrics\n", a, cfg.metrics.port);
	}
	fflush(stdout);
	rw_notify_ready();
	while (!stop_requested) {
		struct dp_drain_status ds;

		dp_control_poll(the_dp);
		dp_drain_get(the_dp, &ds);
		notify_drain(&ds, false);
		log_slow_nodes();
		rw_xdp_neigh_poll(the_xdp, the_dp, cfg.tables.neighbours, false);
		log_mac_changes(&mac_log_tsc);
		dp_health_poll(the_dp);
		log_health(&health_log_tsc, &health_log_budget);
		/* A signal interrupts the wait (-EINTR): the loop condition sees it. A change
		 * command blocks here until every worker runs the new epoch. */
		ctl_server_poll(srv, RW_CONTROL_TICK_MS);
		rw_metrics_fleet(the_metrics, ctl_engine_fleet_managed(the_engine),
				 ctl_engine_fleet_refused(the_engine));
	}
	rw_notify_stopping();
	ctl_server_close(srv);
}

/* Workers stopped, counters printed, everything closed in reverse order of start. */
static void shut_down(const struct start *st, struct ctl_engine *engine)
{
	dp_stop(the_dp);
	rte_eal_mp_wait_lcore();
	rw_metrics_stop(the_metrics); /* before the dp it reads is freed */
	printf("ringway: stopping\n");
	dp_stats_print(the_dp, stdout);
	ctl_engine_free(engine);
	if (steered_port != UINT16_MAX)
		dp_reply_steer_remove(steered_port);
	rte_eth_dev_stop(st->port);
	rte_eth_dev_close(st->port);
	if (st->two_ports) {
		rte_eth_dev_stop(st->node_port);
		rte_eth_dev_close(st->node_port);
	}
	rw_xdp_close(the_xdp); /* after the PMD detached: removes our program if still there */
	rw_unmap_guard_clear(); /* the ports closed: nothing unmaps under a worker any more */
	dp_free(the_dp);
	rte_mempool_free(the_pool);
	rte_eal_cleanup();
}

int main(int argc, char **argv)
{
	struct ctl_ops ops = {
		.publish = ops_publish,
		.stats = ops_stats,
		.member_status = ops_member_status,
		.health = ops_health,
		.warmup = ops_warmup,
		.routes = ops_routes,
		.hotkeys = ops_hotkeys,
		.hot_pin = ops_hot_pin,
		.gutter = ops_gutter,
		.drain = ops_drain,
	};
	struct rt_table routes;
	struct start st = {0};
	struct args a = {0};
	struct ctl_engine *engine;
	int eal_argc = split_args(argc, argv, &a);
	char err[512];
	int rc = rw_config_load(a.config, &cfg, err, sizeof(err));

	if (rc != 0) {
		fprintf(stderr, "ringway: %s\n", err);
		return 1;
	}
	engine = ctl_engine_new(initial_state(), cfg.control.state_file, &ops);
	if (engine == NULL) {
		fprintf(stderr, "ringway: %s: cannot build the placement of the membership: %s\n",
			a.config, strerror(errno));
		return 1;
	}
	the_engine = engine;
	/* As the config refuses a node there, and a node of a family the router reaches no node
	 * in: IPv4 only with an IPv4 address facing the nodes (two ports: node_address). */
	if (router_ipv4_for_engine() != 0) {
		uint32_t v4 = router_ipv4_for_engine();

		inet_ntop(AF_INET, &v4, err, sizeof(err));
		ctl_engine_set_router_address(engine, err);
	}
	if (memcmp(cfg.router.address6, (uint8_t[16]){0}, 16) != 0) {
		inet_ntop(AF_INET6, cfg.router.address6, err, sizeof(err));
		ctl_engine_set_router_address(engine, err);
	}
	/* The config's nodes have routes (its loader checked); a state file's may not. A state
	 * file that records routes (its loader checked them) wins over [route]. */
	rw_config_routes(&cfg, &routes);
	if (ctl_state_routes(ctl_engine_state(engine)) != NULL)
		routes_from_state_file(&routes, a.config);
	if (ctl_engine_set_routes(engine, &routes, err, sizeof(err)) != 0) {
		fprintf(stderr, "ringway: %s: %s in [route] of %s\n", cfg.control.state_file, err,
			a.config);
		ctl_engine_free(engine);
		return 1;
	}
	if (a.check) {
		rc = check_only(a.config, engine);
		ctl_engine_free(engine);
		return rc;
	}
	start_eal(eal_argc, argv, &st);
	start_port(&st);
	start_dataplane(&st, engine);
	control_loop(&st, engine);
	shut_down(&st, engine);
	return 0;
}
