/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway-loadgen [EAL options] -- --dst IP[:PORT] --src IP[:PORTBASE] (--dst-mac MAC | --arp)
 *                 [options]
 *
 * Options are parsed before EAL starts, so a bad option costs nothing and exits 2. Then: EAL,
 * one port with one queue pair, the next hop's MAC (ARP or given), optionally a preload of
 * every key, the timed run, and a JSON report on stdout (or --json FILE).
 *
 * Exit status: 0 run completed with at least one reply; 1 set-up failed (EAL, port, memory,
 * ARP unanswered); 2 bad options; 3 the run completed but no reply arrived at all.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "loadgen.h"

#define PROG	      "ringway-loadgen"
#define EXIT_SETUP    1
#define EXIT_USAGE    2
#define EXIT_NO_REPLY 3

static volatile int stop;
/* --json FILE, created before the run: removed again if set-up fails, so no empty report is
 * left where a script expects one. */
static const char *json_created;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [EAL options] -- --dst IP[:PORT] --src IP[:PORTBASE]\n"
		"                       (--dst-mac MAC | --arp) [options]\n"
		"\n"
		"Sends memcached UDP requests (8-byte frame header, one request per datagram) "
		"from\n"
		"one DPDK port at a paced rate, matches replies by request id, and reports sent,\n"
		"replies, losses, hit ratio and latency percentiles (JSON on stdout, progress on\n"
		"stderr every second).\n"
		"\n"
		"Addresses:\n"
		"  --dst IP[:PORT]        the router or memcached node (port 11211 by default)\n"
		"  --src IP[:PORTBASE]    our address (answered for ARP by us: use one the kernel\n"
		"                         does not own) and first UDP source port (default 20000)\n"
		"  --src-ports N          source ports used, PORTBASE..PORTBASE+N-1, in turn, so "
		"RSS\n"
		"                         spreads the flows (default 64)\n"
		"  --dst-mac MAC          next hop's MAC, or:\n"
		"  --arp                  resolve the next hop's MAC by ARP (3 s, else exit 1)\n"
		"  --gateway IP           next hop to ARP for when --dst is not on the link\n"
		"  --port-id N            DPDK port (default 0); one RX/TX queue pair is used\n"
		"\n"
		"Load:\n"
		"  --rate PPS|max         requests per second (default 10000); max: as fast as "
		"the\n"
		"                         port and --window allow\n"
		"  --window N             most requests in flight, 1..65535 (default 65535); a "
		"small\n"
		"                         window with --rate max gives a closed loop\n"
		"  --duration S           seconds of sending (default 10); then replies in flight "
		"get\n"
		"                         --timeout-ms to arrive\n"
		"  --timeout-ms MS        a request without its whole reply after MS is lost\n"
		"                         (default 1000)\n"
		"  --get-ratio F          fraction of GETs, 0..1 (default 0.9); the rest are SETs\n"
		"  --keys N               distinct keys, 1..100000000 (default 10000)\n"
		"  --dist uniform|zipf:S  key popularity (default uniform); zipf with exponent S\n"
		"                         (e.g. zipf:0.99), from a precomputed table\n"
		"  --key-prefix P         keys are P followed by the key number (default \"lg:\")\n"
		"  --key-size B           pad the key number with zeros to B bytes of key\n"
		"  --value-size B         bytes per SET value (default 100; one request must fit "
		"one\n"
		"                         datagram: memcached drops requests spanning several)\n"
		"  --proto ascii|meta|binary   request protocol (default ascii): get/set, mg/ms,\n"
		"                         binary GET/SET\n"
		"  --preload              SET every key once before the timed run (keys not "
		"stored\n"
		"                         are retried, 5 passes at most), so GETs hit\n"
		"  --burst N              requests per TX burst, 1..64 (default 32)\n"
		"  --seed N               random seed for key choice and the GET/SET mix\n"
		"  --idle-us US           sleep US microseconds after 64 loop turns without work\n"
		"                         (default 0: spin); frees the CPU on a shared machine "
		"but\n"
		"                         adds up to US to measured latencies\n"
		"\n"
		"Ports and queues:\n"
		"  --queues N             queue pairs, 1..8 (default 1); bursts of requests leave "
		"on\n"
		"                         each in turn (net_memif has no RSS: the sender picks)\n"
		"  --multiget N           keys per GET, 1..100 (default 1; ASCII only)\n"
		"\n"
		"Node emulator (answers for memcached nodes on the same port):\n"
		"  --nodes PREFIX[:PORT]  answer memcached UDP requests to any address in PREFIX\n"
		"                         (e.g. 198.18.16.0/22; port 11211 by default) like a\n"
		"                         node, and ARP for them; every key is held except a\n"
		"                         share by hash, SETs are answered STORED\n"
		"  --node-value-size B    bytes of every value held (default --value-size)\n"
		"  --node-hit-ratio F     share of keys held, 0..1 (default 1)\n"
		"  --node-delay-us US     hold each reply US microseconds (default 0)\n"
		"  --node-cross F         share of replies sent on the next queue, not the one\n"
		"                         their request came in on (default 0)\n"
		"  --serve                be the nodes only: answer until SIGINT / SIGTERM, send\n"
		"                         nothing (the peer of a generator-only loopback run)\n"
		"\n"
		"RFC 2544 search (instead of one run):\n"
		"  --search               binary search on --rate for the highest rate whose\n"
		"                         trials all lose at most --loss-max, then latency trials\n"
		"                         at 10, 50 and 90%% of it\n"
		"  --search-lo PPS        lower bound (default 1000)\n"
		"  --search-hi PPS        upper bound, tried first (default 2000000)\n"
		"  --trial S              seconds per trial (default 2)\n"
		"  --loss-max F           loss ratio a trial may have (default 0.00001: 0.001%%)\n"
		"  --search-steps N       rates tried at most (default 12)\n"
		"  --search-repeat N      trials per rate, all must pass (default 1)\n"
		"  --search-res F         stop when (hi - lo) / hi < F (default 0.02)\n"
		"  --lat-trial S          seconds per latency trial (default --trial)\n"
		"  --trial-gap-ms MS      answer and poll MS between trials, sending nothing, so\n"
		"                         what an overloaded trial left in the router times out\n"
		"                         (default 0)\n"
		"\n"
		"Output:\n"
		"  --json FILE            write the JSON report to FILE instead of stdout\n"
		"  --series-ms MS         the run's hit ratio over time: GET hits, misses and "
		"lost\n"
		"                         requests per MS of send time, 10..60000 (default 100), "
		"in\n"
		"                         the JSON (run.series) and, per second, the lowest "
		"bucket\n"
		"                         on the progress line\n"
		"  --quiet                no progress lines\n"
		"  --help                 this text\n"
		"\n"
		"Exit status: 0 done (at least one reply), 1 set-up failed, 2 bad options, 3 no "
		"reply\n"
		"at all.\n"
		"\n"
		"Example (sandbox client namespace, against the router):\n"
		"  ip netns exec rw-client " PROG " --no-huge -m 256 --no-pci --no-shconf \\\n"
		"    --vdev net_af_packet0,iface=veth0 -- --src 198.18.0.20 --dst 198.18.0.1:11211 "
		"\\\n"
		"    --arp --rate 20000 --duration 10 --preload\n");
}

static void __attribute__((format(printf, 1, 2), noreturn)) bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(try " PROG " -- --help)\n");
	if (json_created != NULL)
		unlink(json_created);
	exit(EXIT_USAGE);
}

static void __attribute__((format(printf, 1, 2), noreturn)) fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (json_created != NULL)
		unlink(json_created);
	exit(EXIT_SETUP);
}

/* ---------------------------------------------------------------- option values */

static uint64_t parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		bad_usage("%s: '%s' is not a number", opt, s);
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		bad_usage("%s: '%s' is not a number", opt, s);
	if (v < min || v > max)
		bad_usage("%s: %llu is out of range %" PRIu64 "..%" PRIu64, opt, v, min, max);
	return v;
}

static double parse_double(const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || end == s || !isfinite(v))
		bad_usage("%s: '%s' is not a number", opt, s);
	if (v < min || v > max)
		bad_usage("%s: %g is out of range %g..%g", opt, v, min, max);
	return v;
}

/* "IP" or "IP:PORT" (PORT 1..65535); *port is left alone when absent. */
static void parse_addr(const char *opt, const char *s, uint32_t *ip, uint16_t *port)
{
	char buf[64];
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	struct in_addr a;

	if (n >= sizeof(buf))
		bad_usage("%s: '%s' is not IPv4[:PORT]", opt, s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		bad_usage("%s: '%s' is not an IPv4 address", opt, buf);
	*ip = a.s_addr;
	if (colon != NULL) {
		if (port == NULL)
			bad_usage("%s: takes no port", opt);
		*port = (uint16_t)parse_uint(opt, colon + 1, 1, 65535);
	}
}

static void parse_mac(const char *s, struct rte_ether_addr *mac)
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		bad_usage("--dst-mac: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)", s);
	for (int i = 0; i < 6; i++)
		mac->addr_bytes[i] = (uint8_t)b[i];
}

static void parse_dist(const char *s, struct lg_opts *o)
{
	if (strcmp(s, "uniform") == 0) {
		o->dist = LG_DIST_UNIFORM;
		return;
	}
	if (strncmp(s, "zipf:", 5) != 0)
		bad_usage("--dist: '%s' is neither uniform nor zipf:S", s);
	o->dist = LG_DIST_ZIPF;
	o->zipf_s = parse_double("--dist zipf", s + 5, 0.0, 10.0);
}

static void parse_proto(const char *s, struct lg_opts *o)
{
	if (strcmp(s, "ascii") == 0)
		o->proto = MC_PROTO_ASCII;
	else if (strcmp(s, "meta") == 0)
		o->proto = MC_PROTO_META;
	else if (strcmp(s, "binary") == 0)
		o->proto = MC_PROTO_BINARY;
	else
		bad_usage("--proto: '%s' is not ascii, meta or binary", s);
}

static void parse_key_prefix(const char *s, struct lg_opts *o)
{
	size_t n = strlen(s);

	if (n > MC_KEY_MAX - 1)
		bad_usage("--key-prefix: longer than %d bytes", MC_KEY_MAX - 1);
	/* The key goes into text commands as is: memcached's text rules apply. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] == 0x7f)
			bad_usage("--key-prefix: spaces and control characters are not allowed");
	memcpy(o->key_prefix, s, n + 1);
}

enum {
	OPT_SRC = 256,
	OPT_SRC_PORTS,
	OPT_DST,
	OPT_DST_MAC,
	OPT_ARP,
	OPT_GATEWAY,
	OPT_PORT_ID,
	OPT_RATE,
	OPT_WINDOW,
	OPT_DURATION,
	OPT_TIMEOUT,
	OPT_GET_RATIO,
	OPT_KEYS,
	OPT_DIST,
	OPT_KEY_PREFIX,
	OPT_KEY_SIZE,
	OPT_VALUE_SIZE,
	OPT_PROTO,
	OPT_PRELOAD,
	OPT_BURST,
	OPT_SEED,
	OPT_IDLE_US,
	OPT_JSON,
	OPT_QUIET,
	OPT_HELP,
	OPT_QUEUES,
	OPT_MULTIGET,
	OPT_NODES,
	OPT_NODE_VALUE_SIZE,
	OPT_NODE_HIT_RATIO,
	OPT_NODE_DELAY_US,
	OPT_NODE_CROSS,
	OPT_SEARCH,
	OPT_SEARCH_LO,
	OPT_SEARCH_HI,
	OPT_TRIAL,
	OPT_LOSS_MAX,
	OPT_SEARCH_STEPS,
	OPT_SEARCH_REPEAT,
	OPT_SEARCH_RES,
	OPT_LAT_TRIAL,
	OPT_TRIAL_GAP,
	OPT_SERIES_MS,
	OPT_SERVE,
};

static const struct option long_opts[] = {
	{"src", required_argument, NULL, OPT_SRC},
	{"src-ports", required_argument, NULL, OPT_SRC_PORTS},
	{"dst", required_argument, NULL, OPT_DST},
	{"dst-mac", required_argument, NULL, OPT_DST_MAC},
	{"arp", no_argument, NULL, OPT_ARP},
	{"gateway", required_argument, NULL, OPT_GATEWAY},
	{"port-id", required_argument, NULL, OPT_PORT_ID},
	{"rate", required_argument, NULL, OPT_RATE},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"timeout-ms", required_argument, NULL, OPT_TIMEOUT},
	{"get-ratio", required_argument, NULL, OPT_GET_RATIO},
	{"keys", required_argument, NULL, OPT_KEYS},
	{"dist", required_argument, NULL, OPT_DIST},
	{"key-prefix", required_argument, NULL, OPT_KEY_PREFIX},
	{"key-size", required_argument, NULL, OPT_KEY_SIZE},
	{"value-size", required_argument, NULL, OPT_VALUE_SIZE},
	{"proto", required_argument, NULL, OPT_PROTO},
	{"preload", no_argument, NULL, OPT_PRELOAD},
	{"burst", required_argument, NULL, OPT_BURST},
	{"seed", required_argument, NULL, OPT_SEED},
	{"idle-us", required_argument, NULL, OPT_IDLE_US},
	{"json", required_argument, NULL, OPT_JSON},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"help", no_argument, NULL, OPT_HELP},
	{"queues", required_argument, NULL, OPT_QUEUES},
	{"multiget", required_argument, NULL, OPT_MULTIGET},
	{"nodes", required_argument, NULL, OPT_NODES},
	{"node-value-size", required_argument, NULL, OPT_NODE_VALUE_SIZE},
	{"node-hit-ratio", required_argument, NULL, OPT_NODE_HIT_RATIO},
	{"node-delay-us", required_argument, NULL, OPT_NODE_DELAY_US},
	{"node-cross", required_argument, NULL, OPT_NODE_CROSS},
	{"search", no_argument, NULL, OPT_SEARCH},
	{"search-lo", required_argument, NULL, OPT_SEARCH_LO},
	{"search-hi", required_argument, NULL, OPT_SEARCH_HI},
	{"trial", required_argument, NULL, OPT_TRIAL},
	{"loss-max", required_argument, NULL, OPT_LOSS_MAX},
	{"search-steps", required_argument, NULL, OPT_SEARCH_STEPS},
	{"search-repeat", required_argument, NULL, OPT_SEARCH_REPEAT},
	{"search-res", required_argument, NULL, OPT_SEARCH_RES},
	{"lat-trial", required_argument, NULL, OPT_LAT_TRIAL},
	{"trial-gap-ms", required_argument, NULL, OPT_TRIAL_GAP},
	{"series-ms", required_argument, NULL, OPT_SERIES_MS},
	{"serve", no_argument, NULL, OPT_SERVE},
	{NULL, 0, NULL, 0},
};

static void opts_defaults(struct lg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sport_base = 20000;
	o->sport_count = 64;
	o->dst_port = 11211;
	o->rate = 10000;
	o->window = 65535;
	o->duration_s = 10;
	o->series_ms = 100;
	o->timeout_ms = 1000;
	o->get_ratio = 0.9;
	o->keys = 10000;
	o->value_size = 100;
	o->proto = MC_PROTO_ASCII;
	strcpy(o->key_prefix, "lg:");
	o->burst = 32;
	o->queues = 1;
	o->multiget = 1;
	o->node_port = 11211;
	o->node_value_size = UINT32_MAX; /* = value_size */
	o->node_hit_ratio = 1.0;
	o->search_lo = 1000;
	o->search_hi = 2000000;
	o->trial_s = 2;
	o->loss_max = 0.00001;
	o->search_steps = 12;
	o->search_repeat = 1;
	o->search_res = 0.02;
}

/* "A.B.C.D/LEN[:PORT]": the emulated nodes' prefix. */
static void parse_nodes(const char *s, struct lg_opts *o)
{
	char buf[64];
	const char *slash = strchr(s, '/'), *colon;
	size_t n = slash ? (size_t)(slash - s) : 0;
	struct in_addr a;
	uint64_t len;
	char lenbuf[8];

	if (slash == NULL || n >= sizeof(buf))
		bad_usage("--nodes: '%s' is not PREFIX/LEN[:PORT]", s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		bad_usage("--nodes: '%s' is not an IPv4 address", buf);
	colon = strchr(slash, ':');
	n = colon ? (size_t)(colon - slash - 1) : strlen(slash + 1);
	if (n == 0 || n >= sizeof(lenbuf))
		bad_usage("--nodes: bad prefix length in '%s'", s);
	memcpy(lenbuf, slash + 1, n);
	lenbuf[n] = '\0';
	len = parse_uint("--nodes", lenbuf, 1, 32);
	o->node_mask = rte_cpu_to_be_32(len == 32 ? 0xffffffffu : ~(0xffffffffu >> len));
	o->node_net = a.s_addr & o->node_mask;
	if (o->node_net != a.s_addr)
		bad_usage("--nodes: '%s' has host bits set", s);
	if (colon != NULL)
		o->node_port = (uint16_t)parse_uint("--nodes", colon + 1, 1, 65535);
	o->nodes = true;
}

static void parse_one(int c, const char *arg, struct lg_opts *o, bool *have_src, bool *have_dst)
{
	switch (c) {
	case OPT_SRC:
		parse_addr("--src", arg, &o->src_ip, &o->sport_base);
		*have_src = true;
		break;
	case OPT_SRC_PORTS:
		o->sport_count = (uint16_t)parse_uint("--src-ports", arg, 1, 4096);
		break;
	case OPT_DST:
		parse_addr("--dst", arg, &o->dst_ip, &o->dst_port);
		*have_dst = true;
		break;
	case OPT_DST_MAC:
		parse_mac(arg, &o->dst_mac);
		o->have_dst_mac = true;
		break;
	case OPT_ARP:
		o->arp = true;
		break;
	case OPT_GATEWAY:
		parse_addr("--gateway", arg, &o->gw_ip, NULL);
		break;
	case OPT_PORT_ID:
		o->port_id = (uint16_t)parse_uint("--port-id", arg, 0, RTE_MAX_ETHPORTS - 1);
		break;
	case OPT_RATE:
		o->rate = strcmp(arg, "max") == 0 ? 0 : parse_double("--rate", arg, 1, 1e9);
		break;
	case OPT_WINDOW:
		o->window = (uint32_t)parse_uint("--window", arg, 1, LG_IDS - 1);
		break;
	case OPT_DURATION:
		o->duration_s = parse_double("--duration", arg, 0.1, 86400);
		break;
	case OPT_TIMEOUT:
		o->timeout_ms = (uint32_t)parse_uint("--timeout-ms", arg, 1, 60000);
		break;
	case OPT_GET_RATIO:
		o->get_ratio = parse_double("--get-ratio", arg, 0, 1);
		break;
	case OPT_KEYS:
		o->keys = (uint32_t)parse_uint("--keys", arg, 1, 100000000);
		break;
	case OPT_DIST:
		parse_dist(arg, o);
		break;
	case OPT_KEY_PREFIX:
		parse_key_prefix(arg, o);
		break;
	case OPT_KEY_SIZE:
		o->key_size = (uint32_t)parse_uint("--key-size", arg, 1, MC_KEY_MAX);
		break;
	case OPT_VALUE_SIZE:
		o->value_size = (uint32_t)parse_uint("--value-size", arg, 0, 65535);
		break;
	case OPT_PROTO:
		parse_proto(arg, o);
		break;
	case OPT_PRELOAD:
		o->preload = true;
		break;
	case OPT_BURST:
		o->burst = (uint16_t)parse_uint("--burst", arg, 1, 64);
		break;
	case OPT_SEED:
		o->seed = parse_uint("--seed", arg, 0, UINT64_MAX);
		break;
	case OPT_IDLE_US:
		o->idle_us = (uint32_t)parse_uint("--idle-us", arg, 0, 100000);
		break;
	case OPT_JSON:
		o->json_path = arg;
		break;
	case OPT_QUIET:
		o->quiet = true;
		break;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	case OPT_QUEUES:
		o->queues = (uint16_t)parse_uint("--queues", arg, 1, 8);
		break;
	case OPT_MULTIGET:
		o->multiget = (uint16_t)parse_uint("--multiget", arg, 1, 100);
		break;
	case OPT_NODES:
		parse_nodes(arg, o);
		break;
	case OPT_NODE_VALUE_SIZE:
		o->node_value_size = (uint32_t)parse_uint("--node-value-size", arg, 0, 65536);
		break;
	case OPT_NODE_HIT_RATIO:
		o->node_hit_ratio = parse_double("--node-hit-ratio", arg, 0, 1);
		break;
	case OPT_NODE_DELAY_US:
		o->node_delay_us = (uint32_t)parse_uint("--node-delay-us", arg, 0, 1000000);
		break;
	case OPT_NODE_CROSS:
		o->node_cross = parse_double("--node-cross", arg, 0, 1);
		break;
	case OPT_SEARCH:
		o->search = true;
		break;
	case OPT_SERVE:
		o->serve = true;
		break;
	case OPT_SEARCH_LO:
		o->search_lo = parse_double("--search-lo", arg, 1, 1e9);
		break;
	case OPT_SEARCH_HI:
		o->search_hi = parse_double("--search-hi", arg, 1, 1e9);
		break;
	case OPT_TRIAL:
		o->trial_s = parse_double("--trial", arg, 0.05, 3600);
		break;
	case OPT_LOSS_MAX:
		o->loss_max = parse_double("--loss-max", arg, 0, 1);
		break;
	case OPT_SEARCH_STEPS:
		o->search_steps = (uint32_t)parse_uint("--search-steps", arg, 1, 100);
		break;
	case OPT_SEARCH_REPEAT:
		o->search_repeat = (uint32_t)parse_uint("--search-repeat", arg, 1, 100);
		break;
	case OPT_SEARCH_RES:
		o->search_res = parse_double("--search-res", arg, 0.0001, 1);
		break;
	case OPT_LAT_TRIAL:
		o->lat_trial_s = parse_double("--lat-trial", arg, 0.05, 3600);
		break;
	case OPT_TRIAL_GAP:
		o->trial_gap_ms = (uint32_t)parse_uint("--trial-gap-ms", arg, 0, 60000);
		break;
	case OPT_SERIES_MS:
		o->series_ms = (uint32_t)parse_uint("--series-ms", arg, 10, 60000);
		break;
	default:
		bad_usage("unknown option");
	}
}

/* Our own loop over the long options (no getopt: its global state would leak into EAL's
 * parser, which runs afterwards). Accepts "--name value" and "--name=value". */
static void parse_args(int argc, char **argv, struct lg_opts *o)
{
	bool have_src = false, have_dst = false;

	opts_defaults(o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const struct option *lo;
		size_t n;

		if (strcmp(a, "-h") == 0)
			a = "--help";
		if (strncmp(a, "--", 2) != 0)
			bad_usage("unexpected argument '%s'", a);
		a += 2;
		eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a) : strlen(a);
		for (lo = long_opts; lo->name != NULL; lo++)
			if (strlen(lo->name) == n && strncmp(lo->name, a, n) == 0)
				break;
		if (lo->name == NULL)
			bad_usage("unknown option '%s'", argv[i]);
		if (lo->has_arg == no_argument && eq != NULL)
			bad_usage("--%s takes no value", lo->name);
		if (lo->has_arg == required_argument) {
			if (eq != NULL)
				val = eq + 1;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				bad_usage("--%s needs a value", lo->name);
		}
		parse_one(lo->val, val, o, &have_src, &have_dst);
	}
	if (!have_dst)
		bad_usage("--dst IP[:PORT] is required");
	if (!have_src)
		bad_usage("--src IP[:PORTBASE] is required");
	if (o->have_dst_mac == o->arp)
		bad_usage("give exactly one of --dst-mac MAC and --arp");
	if (o->gw_ip != 0 && !o->arp)
		bad_usage("--gateway only makes sense with --arp");
	if (o->gw_ip == 0)
		o->gw_ip = o->dst_ip;
	if ((uint32_t)o->sport_base + o->sport_count > 65536)
		bad_usage("--src port base %u + --src-ports %u runs past 65535", o->sport_base,
			  o->sport_count);
	if (o->node_value_size == UINT32_MAX)
		o->node_value_size = o->value_size;
	if (o->lat_trial_s == 0)
		o->lat_trial_s = o->trial_s;
	if (o->multiget > 1 && o->proto != MC_PROTO_ASCII)
		bad_usage("--multiget: ASCII only (--proto ascii)");
	if (o->serve && !o->nodes)
		bad_usage("--serve needs --nodes PREFIX");
	if (o->search && o->search_lo >= o->search_hi)
		bad_usage("--search-lo must be below --search-hi");
	if (o->sport_count % o->queues != 0)
		bad_usage("--src-ports must be a multiple of --queues");
	if (o->dist == LG_DIST_ZIPF && o->keys > 50000000)
		bad_usage("--dist zipf: at most 50000000 keys (the CDF table takes 8 bytes a key)");
}

/* ---------------------------------------------------------------- set-up */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct rte_mempool *port_setup(uint16_t port, uint16_t nq, struct rte_ether_addr *mac,
				      uint32_t *mtu)
{
	struct rte_eth_conf conf;
	struct rte_mempool *pool;
	uint16_t nrx = 1024, ntx = 1024, m;
	int rc, socket;

	if (!rte_eth_dev_is_valid_port(port))
		fatal("port %u does not exist (%u ports; give one with --vdev or a PCI device)",
		      port, rte_eth_dev_count_avail());
	socket = rte_eth_dev_socket_id(port);
	if (socket < 0)
		socket = (int)rte_socket_id();
	pool = rte_pktmbuf_pool_create("loadgen_pool", 8191 + 8192u * nq, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (pool == NULL)
		fatal("cannot create the mbuf pool: %s", rte_strerror(rte_errno));
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	for (uint16_t q = 0; rc == 0 && q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nrx, (unsigned int)socket, NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(port, q, ntx, (unsigned int)socket, NULL);
	}
	if (rc == 0)
		rc = rte_eth_macaddr_get(port, mac);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	if (rc != 0)
		fatal("port %u set-up failed: %s", port, rte_strerror(-rc));
	*mtu = RTE_ETHER_MTU;
	if (rte_eth_dev_get_mtu(port, &m) == 0 && m >= 576)
		*mtu = m;
	return pool;
}

/* A net_memif port is up once its peer connected: wait for it (20 s at most; others are up).
 * A memif server still tearing down the previous client's rings (the router between two
 * line-rate cases) takes seconds on a busy machine before it accepts the next. */
static void wait_link(uint16_t port)
{
	struct rte_eth_link link;

	for (int i = 0; i < 2000 && !stop; i++) {
		if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status)
			return;
		rte_delay_us_sleep(10000);
	}
	fatal("port %u: link down after 20 s (memif peer not connected?)", port);
}

/* Requests must fit one datagram on this port's MTU. */
static void check_sizes(const struct lg_opts *o, const struct lg_req *q, uint32_t mtu)
{
	uint32_t over = 20 + 8 + MC_FRAME_HDR_LEN;
	bool sets = o->get_ratio < 1.0 || o->preload;

	if (sets && over + lg_req_max_len(q, LG_OP_SET) > mtu)
		bad_usage("--value-size %u: a SET of %u bytes does not fit one datagram on MTU %u "
			  "(memcached drops requests spanning datagrams)",
			  o->value_size, lg_req_max_len(q, LG_OP_SET), mtu);
	if (over + lg_req_max_len(q, LG_OP_GET) > mtu)
		bad_usage("a GET does not fit MTU %u", mtu);
}

/* ---------------------------------------------------------------- report */

static double us(uint64_t cycles, uint64_t hz)
{
	return (double)cycles * 1e6 / (double)hz;
}

/* One JSON array of a series column: bucket counts, or hit ratios (null: no GET result). */
static void json_column(FILE *f, const char *name, const struct lg_series *s, int what, bool last)
{
	fprintf(f, "      \"%s\": [", name);
	for (uint32_t i = 0; i < s->used; i++) {
		double r = lg_series_ratio(s, i);

		if (i > 0)
			fputs(i % 20 == 0 ? ",\n        " : ", ", f);
		if (what >= 0)
			fprintf(f, "%u", s->b[i].n[what]);
		else if (r < 0)
			fputs("null", f);
		else
			fprintf(f, "%.5f", r);
	}
	fprintf(f, "]%s\n", last ? "" : ",");
}

/* The hit ratio over time: bucket i covers send times [start_unix + i * interval_ms, + 1). */
static void json_series(FILE *f, const struct lg_series *s, double start_unix, uint64_t hz)
{
	uint32_t at = 0;
	double min = lg_series_min(s, 0, s->used, &at);

	fprintf(f, ",\n    \"series\": {\n");
	fprintf(f, "      \"interval_ms\": %.3f, \"start_unix\": %.6f, \"buckets\": %u,\n",
		(double)s->interval_tsc * 1000.0 / (double)hz, start_unix, s->used);
	if (min < 0)
		fprintf(f, "      \"min_hit_ratio\": null, \"min_at\": null,\n");
	else
		fprintf(f, "      \"min_hit_ratio\": %.5f, \"min_at\": %u,\n", min, at);
	json_column(f, "hits", s, LG_SER_HIT, false);
	json_column(f, "misses", s, LG_SER_MISS, false);
	json_column(f, "lost", s, LG_SER_LOST, false);
	json_column(f, "hit_ratio", s, -1, true);
	fprintf(f, "    }");
}

static void json_phase(FILE *f, const char *name, const struct lg_phase_result *r, uint64_t hz)
{
	const uint64_t *c = r->ctr;
	uint64_t gets = c[LG_CTR_HITS] + c[LG_CTR_MISSES];
	const struct lg_hist *h = &r->lat;

	fprintf(f, "  \"%s\": {\n", name);
	fprintf(f, "    \"elapsed_s\": %.6f,\n", r->elapsed_s);
	for (int i = 0; i < LG_CTR_COUNT; i++)
		fprintf(f, "    \"%s\": %" PRIu64 ",\n", lg_ctr_names[i], c[i]);
	fprintf(f, "    \"tx_pps\": %.1f,\n",
		r->elapsed_s > 0 ? (double)c[LG_CTR_SENT] / r->elapsed_s : 0.0);
	fprintf(f, "    \"reply_pps\": %.1f,\n",
		r->elapsed_s > 0 ? (double)c[LG_CTR_REPLIES] / r->elapsed_s : 0.0);
	fprintf(f, "    \"loss_ratio\": %.6f,\n",
		c[LG_CTR_SENT] ? (double)c[LG_CTR_LOST] / (double)c[LG_CTR_SENT] : 0.0);
	if (gets > 0)
		fprintf(f, "    \"hit_ratio\": %.6f,\n", (double)c[LG_CTR_HITS] / (double)gets);
	else
		fprintf(f, "    \"hit_ratio\": null,\n");
	fprintf(f,
		"    \"latency_us\": {\"count\": %" PRIu64 ", \"min\": %.2f, \"mean\": %.2f, "
		"\"p50\": %.2f, \"p90\": %.2f, \"p99\": %.2f, \"p99.9\": %.2f, \"max\": %.2f}",
		h->count, us(h->count ? h->min : 0, hz),
		h->count ? us(h->sum, hz) / (double)h->count : 0.0,
		us(lg_hist_quantile(h, 0.5), hz), us(lg_hist_quantile(h, 0.9), hz),
		us(lg_hist_quantile(h, 0.99), hz), us(lg_hist_quantile(h, 0.999), hz),
		us(h->max, hz));
	if (r->series.b != NULL)
		json_series(f, &r->series, r->start_unix, hz);
	fprintf(f, "\n  }");
}

/* ---------------------------------------------------------------- RFC 2544 search */

#define SEARCH_MAX 100

static struct {
	uint32_t n;
	double rate[SEARCH_MAX];
	bool pass[SEARCH_MAX];
	bool gen_limited[SEARCH_MAX];
	struct lg_phase_result *r[SEARCH_MAX];
	double zero_loss;
	struct lg_phase_result *lat[3];
	double lat_rate[3];
} srch;

static const double lat_fraction[3] = {0.1, 0.5, 0.9};

/* A trial passes when at most loss_max of its requests were lost (or answered with an error)
 * and the generator kept the schedule (offered rate x seconds requests, 99% of them at least,
 * taking at most 5% longer: it catches up after a stall): a generator that cannot offer the
 * rate has not shown the router carries it. */
static bool trial_pass(const struct lg_opts *o, double rate, const struct lg_phase_result *r,
		       bool *gen_limited)
{
	const uint64_t *c = r->ctr;
	/* An error reply (e.g. SERVER_ERROR when the router is out of multi-get contexts) is a
	 * request not served: it counts as lost. */
	double loss = c[LG_CTR_SENT]
			      ? (double)(c[LG_CTR_LOST] + c[LG_CTR_ERRORS]) / (double)c[LG_CTR_SENT]
			      : 1.0;

	*gen_limited = (double)c[LG_CTR_SENT] < 0.99 * rate * o->trial_s ||
		       r->elapsed_s > 1.05 * o->trial_s;
	return !*gen_limited && c[LG_CTR_SENT] > 0 && loss <= o->loss_max;
}

/* The rate passes when every one of search_repeat trials passes (stops at the first failure). */
static bool try_rate(struct lg_gen *g, const struct lg_opts *o, double rate)
{
	bool pass = true;

	for (uint32_t t = 0; t < o->search_repeat && pass && srch.n < SEARCH_MAX && !stop; t++) {
		struct lg_phase_result *r = calloc(1, sizeof(*r));
		uint32_t i = srch.n;

		if (r == NULL)
			fatal("out of memory");
		if (srch.n > 0 && o->trial_gap_ms > 0)
			lg_gen_settle(g, o->trial_gap_ms);
		lg_gen_trial(g, rate, o->trial_s, r);
		srch.r[i] = r;
		srch.rate[i] = rate;
		srch.pass[i] = trial_pass(o, rate, r, &srch.gen_limited[i]);
		pass = srch.pass[i];
		srch.n++;
		if (!o->quiet)
			fprintf(stderr,
				PROG ": search: %.0f/s %s (lost %" PRIu64 " of %" PRIu64 "%s)\n",
				rate, pass ? "passes" : "fails", r->ctr[LG_CTR_LOST],
				r->ctr[LG_CTR_SENT],
				srch.gen_limited[i] ? ", generator behind schedule" : "");
	}
	return pass && !stop;
}

/* Binary search: hi first (done if it passes), then halve [lo, hi) until the steps run out or
 * the interval is narrower than search_res; then the latency trials. */
static void run_search(struct lg_gen *g, const struct lg_opts *o)
{
	double lo = o->search_lo, hi = o->search_hi;
	uint32_t steps = 0;

	srch.zero_loss = 0;
	if (try_rate(g, o, hi)) {
		srch.zero_loss = hi;
	} else {
		steps++;
		if (try_rate(g, o, lo))
			srch.zero_loss = lo;
		steps++;
		while (srch.zero_loss > 0 && steps < o->search_steps &&
		       (hi - lo) / hi >= o->search_res && !stop) {
			double mid = (lo + hi) / 2;

			if (try_rate(g, o, mid))
				lo = srch.zero_loss = mid;
			else
				hi = mid;
			steps++;
		}
	}
	for (int i = 0; i < 3 && srch.zero_loss > 0 && !stop; i++) {
		srch.lat[i] = calloc(1, sizeof(*srch.lat[i]));
		if (srch.lat[i] == NULL)
			fatal("out of memory");
		srch.lat_rate[i] = srch.zero_loss * lat_fraction[i];
		if (o->trial_gap_ms > 0)
			lg_gen_settle(g, o->trial_gap_ms);
		lg_gen_trial(g, srch.lat_rate[i], o->lat_trial_s, srch.lat[i]);
	}
}

static void json_search(FILE *f, uint64_t hz)
{
	fprintf(f, "  \"search\": {\n    \"zero_loss_pps\": %.1f,\n    \"trials\": [\n",
		srch.zero_loss);
	for (uint32_t i = 0; i < srch.n; i++) {
		const struct lg_phase_result *r = srch.r[i];
		const uint64_t *c = r->ctr;

		fprintf(f,
			"      {\"rate\": %.1f, \"pass\": %s, \"generator_limited\": %s, "
			"\"elapsed_s\": %.4f, \"p50_us\": %.2f, \"p99_us\": %.2f",
			srch.rate[i], srch.pass[i] ? "true" : "false",
			srch.gen_limited[i] ? "true" : "false", r->elapsed_s,
			us(lg_hist_quantile(&r->lat, 0.5), hz),
			us(lg_hist_quantile(&r->lat, 0.99), hz));
		for (int k = 0; k < LG_CTR_COUNT; k++)
			fprintf(f, ", \"%s\": %" PRIu64, lg_ctr_names[k], c[k]);
		fprintf(f, "}%s\n", i + 1 < srch.n ? "," : "");
	}
	fprintf(f, "    ],\n    \"latency\": [");
	for (int i = 0; i < 3 && srch.lat[i] != NULL; i++) {
		char name[32];

		snprintf(name, sizeof(name), "at_%d_percent", (int)(lat_fraction[i] * 100 + 0.5));
		fprintf(f, "%s\n  {\"fraction\": %.2f, \"rate\": %.1f,\n", i ? "," : "",
			lat_fraction[i], srch.lat_rate[i]);
		json_phase(f, name, srch.lat[i], hz);
		fprintf(f, "}");
	}
	fprintf(f, "\n    ]\n  }");
}

static void json_report(FILE *f, const struct lg_opts *o, const struct lg_env *env,
			const struct lg_phase_result *pre, uint32_t pre_missing,
			const struct lg_phase_result *run)
{
	static const char *const protos[] = {"ascii", "meta", "binary"};
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	const struct rte_ether_addr *m = &env->dst_mac;

	inet_ntop(AF_INET, &o->src_ip, src, sizeof(src));
	inet_ntop(AF_INET, &o->dst_ip, dst, sizeof(dst));
	fprintf(f, "{\n  \"tool\": \"ringway-loadgen\",\n  \"config\": {\n");
	fprintf(f, "    \"src\": \"%s:%u\", \"src_ports\": %u, \"dst\": \"%s:%u\",\n", src,
		o->sport_base, o->sport_count, dst, o->dst_port);
	fprintf(f, "    \"dst_mac\": \"%02x:%02x:%02x:%02x:%02x:%02x\", \"mac_by_arp\": %s,\n",
		m->addr_bytes[0], m->addr_bytes[1], m->addr_bytes[2], m->addr_bytes[3],
		m->addr_bytes[4], m->addr_bytes[5], o->arp ? "true" : "false");
	fprintf(f, "    \"target_pps\": ");
	if (o->rate > 0)
		fprintf(f, "%.1f", o->rate);
	else
		fprintf(f, "\"max\"");
	fprintf(f, ", \"window\": %u, \"duration_s\": %.3f, \"timeout_ms\": %u,\n", o->window,
		o->duration_s, o->timeout_ms);
	fprintf(f, "    \"get_ratio\": %.4f, \"keys\": %u, \"dist\": \"%s\", \"zipf_s\": %.4f,\n",
		o->get_ratio, o->keys, o->dist == LG_DIST_ZIPF ? "zipf" : "uniform",
		o->dist == LG_DIST_ZIPF ? o->zipf_s : 0.0);
	fprintf(f,
		"    \"key_size\": %u, \"value_size\": %u, \"proto\": \"%s\", \"preload\": %s,\n",
		env->keys->key_len, o->value_size, protos[o->proto], o->preload ? "true" : "false");
	fprintf(f,
		"    \"queues\": %u, \"multiget\": %u, \"nodes\": %s, \"node_value_size\": %u, "
		"\"node_hit_ratio\": %.4f, \"node_delay_us\": %u, \"node_cross\": %.4f,\n",
		o->queues, o->multiget, o->nodes ? "true" : "false", o->node_value_size,
		o->node_hit_ratio, o->node_delay_us, o->node_cross);
	fprintf(f, "    \"idle_us\": %u, \"tsc_hz\": %" PRIu64 ", \"lcores\": 1\n  },\n",
		o->idle_us, env->hz);
	if (pre != NULL) {
		json_phase(f, "preload", pre, env->hz);
		fprintf(f, ",\n  \"preload_keys_missing\": %u,\n", pre_missing);
	}
	if (run != NULL)
		json_phase(f, "run", run, env->hz);
	else
		json_search(f, env->hz);
	fprintf(f, "\n}\n");
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct lg_opts o;
	struct lg_keys keys;
	struct lg_req req;
	struct lg_env env;
	struct lg_gen *g;
	struct lg_phase_result *run, *pre = NULL;
	uint32_t pre_missing = 0;
	int sep = argc, rc;
	FILE *out = stdout;

	/* Options after "--" are ours; with no "--", only --help is understood. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (sep == argc) {
		for (int i = 1; i < argc; i++)
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
				usage(stdout);
				return 0;
			}
		bad_usage("no application options: put them after \"--\"");
	}
	argv[sep] = argv[0];
	parse_args(argc - sep, argv + sep, &o);
	argv[sep] = (char *)"--";

	rc = lg_keys_init(&keys, &o);
	if (rc == -ENAMETOOLONG)
		bad_usage("--key-prefix + --key-size: keys longer than %d bytes", MC_KEY_MAX);
	if (rc != 0)
		fatal("cannot build the key table: %s", strerror(-rc));
	rc = lg_req_init(&req, &keys, &o);
	if (rc != 0)
		fatal("cannot build requests: %s", strerror(-rc));
	if (o.json_path != NULL) {
		out = fopen(o.json_path, "w");
		if (out == NULL)
			bad_usage("--json %s: %s", o.json_path, strerror(errno));
		json_created = o.json_path;
	}

	rc = rte_eal_init(sep, argv);
	if (rc < 0)
		fatal("EAL initialisation failed: %s", rte_strerror(rte_errno));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	memset(&env, 0, sizeof(env));
	env.o = &o;
	env.keys = &keys;
	env.req = &req;
	env.hz = rte_get_tsc_hz();
	env.stop = &stop;
	env.pool = port_setup(o.port_id, o.queues, &env.src_mac, &env.mtu);
	check_sizes(&o, &req, env.mtu);
	if (o.serve) {
		/* The nodes only (a generator-only loopback's far end): the peer may connect
		 * late, and may come and go; answer until told to stop. */
		env.dst_mac = o.dst_mac;
		g = lg_gen_create(&env);
		if (g == NULL)
			fatal("out of memory");
		fprintf(stderr, PROG ": serving as the nodes\n");
		while (!stop)
			lg_gen_settle(g, 1000);
		rte_eth_dev_stop(o.port_id);
		rte_eth_dev_close(o.port_id);
		lg_gen_free(g);
		lg_req_free(&req);
		lg_keys_free(&keys);
		rte_eal_cleanup();
		return 0;
	}
	wait_link(o.port_id);
	env.dst_mac = o.dst_mac;
	g = lg_gen_create(&env);
	run = calloc(1, sizeof(*run));
	if (o.preload)
		pre = calloc(1, sizeof(*pre));
	if (g == NULL || run == NULL || (o.preload && pre == NULL))
		fatal("out of memory");
	if (o.arp && lg_gen_resolve(g, &env, 3000) != 0)
		fatal("no ARP reply from the next hop in 3 s");

	if (o.preload && !stop) {
		lg_gen_preload(g, 5, pre);
		pre_missing = lg_gen_preload_missing(g);
		if (pre_missing > 0)
			fprintf(stderr, PROG ": preload: %u of %u keys not stored\n", pre_missing,
				o.keys);
	}
	if (!stop && o.search)
		run_search(g, &o);
	else if (!stop)
		lg_gen_run(g, run);

	json_report(out, &o, &env, pre, pre_missing, o.search ? NULL : run);
	if (out != stdout)
		fclose(out);
	if (o.search)
		rc = srch.zero_loss > 0 ? 0 : EXIT_NO_REPLY;
	else
		rc = run->ctr[LG_CTR_REPLIES] > 0 ? 0 : EXIT_NO_REPLY;
	if (rc != 0)
		fprintf(stderr, PROG ": no reply arrived\n");

	rte_eth_dev_stop(o.port_id);
	rte_eth_dev_close(o.port_id);
	lg_gen_free(g);
	lg_series_free(&run->series);
	free(run);
	free(pre);
	lg_req_free(&req);
	lg_keys_free(&keys);
	rte_eal_cleanup();
	return rc;
}
