/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data plane's cost per packet, on the real worker code: every measured packet goes
 * through dp_worker_poll() (the body of a worker lcore's loop: control and hand-off rings,
 * rte_eth_rx_burst, dp_forward_burst, rte_eth_tx_burst, slot expiry) on real mbufs, over a
 * net_ring port whose queue w is a pair of rte_rings this program fills and drains.
 *
 * Stages (each a separate dp, so each packet takes exactly one path and one counter proves it):
 *   parse    no placement published: Ethernet/IPv4/UDP checks, client prefix, memcached frame
 *            and request parse (lib/mcproto), then drop as no_placement (mbuf freed)
 *   place    placement published without node MACs: + key hash and ring lookup, then drop as
 *            node_no_mac (mbuf freed)
 *   forward  static node MACs: + request slot, rewrite, incremental checksums, TX (ring
 *            enqueue)
 *   reply    the node's reply to each forwarded request (built here, untimed): slot check,
 *            rewrite back to the client, TX
 *   handoff  two workers; worker 0 forwards (untimed for the hand-off figure), the replies
 *            arrive on worker 1's queue (as RSS on a NIC may put them): worker 1 checks the
 *            source and hands each to worker 0 through its hand-off ring ("give"), worker 0
 *            takes it over and returns it to the client ("take"). Both workers are polled in
 *            turn on the main lcore, so the figure is the code's cost without the cache lines
 *            (mbuf, ring slots) crossing cores, which a real second core adds.
 * IPv6: forward_mix_reply_100_ipv6 is the mixed forward + reply case with IPv6 clients, router
 * and nodes (the same members by name at IPv6 addresses, so the same owners), reported next
 * to IPv4's (summary forward_ipv6_vs_ipv4); --ipv6 with --only runs that stage over IPv6.
 * Requests: ASCII `get`, meta `mg <key> v f t`, binary GET, keys of 10-40 random bytes from a
 * set of 65,536, from 4,096 client addresses on random ports, on a ring of 1,000 nodes x 160
 * vnodes (--nodes, --vnodes). Replies are single datagrams of 100 or 1,400 bytes of UDP
 * payload. Forward and reply alternate batch by batch so the request table stays in its
 * steady state.
 *
 * Time: TSC cycles around the polls of one batch (--batch packets, default 1024), divided by
 * the batch; the median over batches is reported (a batch the scheduler interrupted is an
 * outlier, not a shift). Packet building, the reply synthesis and the checks are outside the
 * timed region. Mpps per core = TSC Hz / cycles per packet.
 *
 * Checks (every run, also --quick): each stage's counter equals the packets sent (dropped as
 * no_placement / node_no_mac, forwarded, returned, slots completed), the identity
 * rx = forwarded + returned + answered + dropped holds, every forwarded request went to the
 * node pl_lookup() names for its key, and every reply reached the client that asked with its
 * request id. A failed check exits 1. Time is never judged.
 *
 * Instruction counts: --only forward|reply|handoff runs only that stage's timed polls through
 * timed_polls() (the other stage's polls go through untimed_polls()), so
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=timed_polls \
 *       bench_dataplane --only forward --packets N
 * counts only the stage's instructions; N and 2N packets differ by the per-packet cost
 * (scripts/bench.sh does this).
 *
 * Scaling: --scaling runs forward + reply with 1, 2, 4, ... up to every lcore as workers at
 * once, each on its own queue (replies steered to the worker owning the slot, as a NIC flow
 * rule on the reply port range would).
 *
 *   bench_dataplane [--quick] [--packets N] [--batch N] [--nodes N] [--vnodes N]
 *                   [--only forward|reply|handoff] [--scaling] [--workers N] [--json FILE]
 *                   [--offload] [--ipv6] [-- EAL-ARGS]
 * --offload: as on a NIC with checksum offloads: every received mbuf carries the IPv4 and L4
 * checksum-good verdicts and the data plane leaves TX checksums to the port
 * (tx_cksum_offload), so the software checksum work is out of the figures.
 * Default EAL: -l 0-(workers-1) --no-huge -m 512 --no-pci --no-shconf --no-telemetry; with
 * "-- EAL-ARGS" those are used instead (e.g. -l 2-9 on a bigger host with hugepages).
 * JSON on stdout (or --json FILE), a short table on stderr.
 */

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>
#include <rte_version.h>

#include "dataplane.h"
#include "mcproto.h"
#include "placement.h"
#include "rw_rundir.h"

#define B_QUEUES_MAX  64
#define B_KEYS	      65536u
#define B_KEY_MIN     10
#define B_KEY_MAX     40
#define B_CLIENTS     4096u
#define B_BATCH_MAX   2048u
#define B_LISTEN      11211
#define B_REPLY_BASE  32768
#define B_REPLY_COUNT 16384
/* Replies handed over per give/take round: a multiple of the burst, within the default
 * 1,024-entry hand-off ring. */
#define B_HANDOFF_CHUNK 512u

enum b_proto {
	B_ASCII,
	B_META,
	B_BINARY,
	B_MIX, /* one of the three at random per packet */
};
static const char *const proto_names[] = {"ascii", "meta", "binary", "mix"};

enum b_stage {
	B_PARSE,
	B_PLACE,
	B_FORWARD, /* forward and reply alternate */
};

/* Everything fixed for the run; read-only once workers start. */
struct b_run {
	uint32_t packets; /* per case and worker */
	uint32_t batch;
	uint32_t nodes;
	uint32_t vnodes;
	bool quick;
	bool offload;	  /* act as a NIC with checksum offloads: RX verdicts, TX offload */
	bool v6;	  /* this case's clients, router and nodes are IPv6 (run.pl6) */
	const char *only; /* NULL, "forward", "reply" or "handoff" */
	uint16_t port;
	uint16_t nq;
	struct rte_ring *rx[B_QUEUES_MAX];
	struct rte_ring *tx[B_QUEUES_MAX];
	struct rte_mempool *pool;
	struct pl_placement *pl;
	struct pl_placement *pl6; /* the same members (names) at IPv6 addresses */
	struct dp_node_mac *macs;
	uint32_t *node_ip; /* member -> IPv4, network order */
	char (*keys)[B_KEY_MAX + 1];
	uint8_t *key_len;
	uint64_t tsc_hz;
	int failed; /* set by any check */
};

static struct b_run run;

static const uint8_t router_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t client_gw_mac[6] = {0x02, 0, 0, 0, 0, 0x10};

/* One worker's part of a case: its timings and what it checked. */
struct b_worker_res {
	uint32_t nb;	  /* batches timed */
	double *cpp_fwd;  /* per batch: cycles per packet (stage B_PARSE/B_PLACE: this one) */
	double *cpp_rep;  /* per batch, reply */
	uint64_t sent;	  /* requests injected */
	uint64_t checked; /* forwarded requests / replies verified */
	uint64_t cyc_fwd; /* total timed cycles */
	uint64_t cyc_rep;
};

struct b_case_ctx {
	struct dp *dp;
	enum b_stage stage;
	enum b_proto proto;
	uint32_t reply_bytes;
	uint16_t workers;
	unsigned int lcore_of[B_QUEUES_MAX];
	struct b_worker_res res[B_QUEUES_MAX];
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_dataplane: CHECK FAILED: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	__atomic_store_n(&run.failed, 1, __ATOMIC_RELAXED);
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: cheap, and the same sequence every run. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static uint32_t client_ip(uint32_t c)
{
	/* 198.18.64.0/20 */
	return rte_cpu_to_be_32((198u << 24) | (18u << 16) | ((64u + c / 256) << 8) | (c % 256));
}

static uint32_t router_ip(void)
{
	return rte_cpu_to_be_32((198u << 24) | (18u << 16) | 1u); /* 198.18.0.1 */
}

static uint32_t node_ip(uint32_t i)
{
	/* 198.18.16.1 .. : 250 per /24 */
	return rte_cpu_to_be_32((198u << 24) | (18u << 16) | ((16u + i / 250) << 8) |
				(1 + i % 250));
}

/* IPv6 (--ipv6 and the IPv6 case): router 2001:2::1, client c at 2001:2:1::c (the allowed
 * 2001:2:1::/116), node i at 2001:2:2::i+1. */
static void ip6_of(uint8_t out[16], uint16_t net, uint32_t host)
{
	memset(out, 0, 16);
	out[0] = 0x20;
	out[1] = 0x01;
	out[3] = 0x02;
	out[5] = (uint8_t)net;
	out[12] = (uint8_t)(host >> 24);
	out[13] = (uint8_t)(host >> 16);
	out[14] = (uint8_t)(host >> 8);
	out[15] = (uint8_t)host;
}

static void client_ip6(uint32_t c, uint8_t out[16])
{
	ip6_of(out, 1, c);
}

static void router_ip6(uint8_t out[16])
{
	ip6_of(out, 0, 1);
}

static void node_ip6(uint32_t i, uint8_t out[16])
{
	ip6_of(out, 2, i + 1);
}

/* ---------------------------------------------------------------- fleet and keys */

static int make_fleet(void)
{
	struct pl_member *m = calloc(run.nodes, sizeof(*m));
	struct pl_config c = {0};
	uint64_t s = 0x5eed;

	run.macs = calloc(run.nodes, sizeof(*run.macs));
	run.node_ip = calloc(run.nodes, sizeof(*run.node_ip));
	run.keys = calloc(B_KEYS, sizeof(*run.keys));
	run.key_len = calloc(B_KEYS, 1);
	if (m == NULL || run.macs == NULL || run.node_ip == NULL || run.keys == NULL ||
	    run.key_len == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < run.nodes; i++) {
		uint32_t ip = rte_be_to_cpu_32(node_ip(i));

		snprintf(m[i].name, sizeof(m[i].name), "cache%04u", i);
		snprintf(m[i].addr, sizeof(m[i].addr), "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255,
			 (ip >> 8) & 255, ip & 255);
		m[i].port = 11211;
		m[i].weight = 1;
		run.node_ip[i] = node_ip(i);
		run.macs[i].mac[0] = 0x02;
		run.macs[i].mac[3] = 0x01;
		run.macs[i].mac[4] = (uint8_t)(i >> 8);
		run.macs[i].mac[5] = (uint8_t)i;
		run.macs[i].has_mac = true;
	}
	c.algo = PL_ALGO_RING;
	c.vnodes = run.vnodes;
	run.pl = pl_build(&c, m, run.nodes);
	/* The same names at IPv6 addresses: placement hashes names, so every key has the same
	 * owner in both. */
	for (uint32_t i = 0; i < run.nodes; i++) {
		uint8_t a[16];

		node_ip6(i, a);
		snprintf(m[i].addr, sizeof(m[i].addr), "2001:2:2::%x:%x", (a[12] << 8) | a[13],
			 (a[14] << 8) | a[15]);
	}
	run.pl6 = pl_build(&c, m, run.nodes);
	free(m);
	if (run.pl == NULL || run.pl6 == NULL)
		return -errno;
	/* Keys like applications make them: a prefix and an id, 10-40 bytes. */
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789:_-";
	for (uint32_t k = 0; k < B_KEYS; k++) {
		uint32_t len = B_KEY_MIN + (uint32_t)(rng_next(&s) % (B_KEY_MAX - B_KEY_MIN + 1));
		int n = snprintf(run.keys[k], B_KEY_MAX + 1, "u:%u:", k);

		for (uint32_t j = (uint32_t)n; j < len; j++)
			run.keys[k][j] = alpha[rng_next(&s) % (sizeof(alpha) - 1)];
		run.keys[k][len] = '\0';
		run.key_len[k] = (uint8_t)len;
	}
	return 0;
}

/* ---------------------------------------------------------------- packets */

/* Request payload (frame header + command) for @p key in @p proto into @p out. */
static size_t request_payload(uint8_t *out, enum b_proto proto, uint32_t key, uint16_t reqid)
{
	const char *k = run.keys[key];
	size_t kl = run.key_len[key], n = 0;

	out[0] = (uint8_t)(reqid >> 8);
	out[1] = (uint8_t)reqid;
	out[2] = out[3] = 0; /* seq 0 */
	out[4] = 0;
	out[5] = 1; /* total 1 */
	out[6] = out[7] = 0;
	out += MC_FRAME_HDR_LEN;
	switch (proto) {
	case B_ASCII:
		n = (size_t)sprintf((char *)out, "get %s\r\n", k);
		break;
	case B_META:
		n = (size_t)sprintf((char *)out, "mg %s v f t\r\n", k);
		break;
	default:
		memset(out, 0, MC_BIN_HDR_LEN);
		out[0] = 0x80; /* request magic */
		out[1] = 0x00; /* GET */
		out[3] = (uint8_t)kl;
		out[11] = (uint8_t)kl;	     /* total body length */
		memcpy(out + 12, &reqid, 2); /* opaque */
		memcpy(out + MC_BIN_HDR_LEN, k, kl);
		n = MC_BIN_HDR_LEN + kl;
		break;
	}
	return MC_FRAME_HDR_LEN + n;
}

/* Write Ethernet/IPv4/UDP headers around a payload already at offset 42, full checksums. */
static void finish_udp(struct rte_mbuf *m, const uint8_t *dmac, const uint8_t *smac, uint32_t sip,
		       uint32_t dip, uint16_t sport, uint16_t dport, size_t plen)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	size_t len = sizeof(*eth) + sizeof(*ip) + sizeof(*udp) + plen;

	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	memcpy(&eth->dst_addr, dmac, 6);
	memcpy(&eth->src_addr, smac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)sport);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = sip;
	ip->dst_addr = dip;
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + plen));
	udp->dgram_cksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	/* --offload: the verdicts a NIC with RX checksum offload puts in the mbuf. */
	if (run.offload)
		m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}

/* Where the UDP payload starts in this case's frames. */
#define B_PAY_OFF                                                               \
	(sizeof(struct rte_ether_hdr) +                                         \
	 (run.v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr)) + \
	 sizeof(struct rte_udp_hdr))

/* finish_udp() for IPv6: Ethernet/IPv6/UDP around a payload at offset 62, UDP checksum. */
static void finish_udp6(struct rte_mbuf *m, const uint8_t *dmac, const uint8_t *smac,
			const uint8_t *sip, const uint8_t *dip, uint16_t sport, uint16_t dport,
			size_t plen)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);
	size_t len = sizeof(*eth) + sizeof(*ip6) + sizeof(*udp) + plen;

	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	memcpy(&eth->dst_addr, dmac, 6);
	memcpy(&eth->src_addr, smac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28);
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + plen));
	ip6->proto = IPPROTO_UDP;
	ip6->hop_limits = 64;
	memcpy(&ip6->src_addr, sip, 16);
	memcpy(&ip6->dst_addr, dip, 16);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = ip6->payload_len;
	udp->dgram_cksum = 0;
	udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip6, udp);
	if (run.offload)
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}

/* What a batch sent, to check what came out. */
struct b_sent {
	uint32_t key;
	uint32_t client;
	uint16_t cport;
	uint16_t reqid;
};

/* Fill @p n mbufs with requests and put them on RX ring @p q. */
static int inject_requests(uint16_t q, enum b_proto proto, uint32_t n, uint64_t *rng,
			   struct b_sent *sent)
{
	struct rte_mbuf *ms[B_BATCH_MAX];

	if (rte_pktmbuf_alloc_bulk(run.pool, ms, n) != 0) {
		fail("mbuf pool empty");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = rng_next(rng);
		enum b_proto p = proto == B_MIX ? (enum b_proto)((r >> 60) % 3) : proto;
		struct b_sent *s = &sent[i];
		size_t plen;

		s->key = (uint32_t)(r % B_KEYS);
		s->client = (uint32_t)((r >> 16) % B_CLIENTS);
		s->cport = (uint16_t)(1024 + (r >> 32) % 64512);
		s->reqid = (uint16_t)(r >> 48);
		plen = request_payload(rte_pktmbuf_mtod_offset(ms[i], uint8_t *, B_PAY_OFF), p,
				       s->key, s->reqid);
		if (run.v6) {
			uint8_t c6[16], r6[16];

			client_ip6(s->client, c6);
			router_ip6(r6);
			finish_udp6(ms[i], router_mac, client_gw_mac, c6, r6, s->cport, B_LISTEN,
				    plen);
			continue;
		}
		finish_udp(ms[i], router_mac, client_gw_mac, client_ip(s->client), router_ip(),
			   s->cport, B_LISTEN, plen);
	}
	if (rte_ring_enqueue_bulk(run.rx[q], (void **)ms, n, NULL) != n) {
		fail("RX ring full");
		rte_pktmbuf_free_bulk(ms, n);
		return -ENOSPC;
	}
	return 0;
}

/* Reply body "VALUE <key> 0 <n>\r\n<data>\r\nEND\r\n" making @p total bytes of UDP payload
 * with the frame header. */
static size_t reply_body(uint8_t *out, uint32_t total, const char *key)
{
	char head[96];
	size_t room = total - MC_FRAME_HDR_LEN, hl = 0, dl = 0;

	/* The data length's digits change the header's length: settle it in two rounds. */
	for (int round = 0; round < 3; round++) {
		hl = (size_t)snprintf(head, sizeof(head), "VALUE %s 0 %zu\r\n", key, dl);
		dl = room > hl + 7 ? room - hl - 7 : 0;
	}
	hl = (size_t)snprintf(head, sizeof(head), "VALUE %s 0 %zu\r\n", key, dl);
	memcpy(out, head, hl);
	memset(out + hl, 'v', dl);
	memcpy(out + hl + dl, "\r\nEND\r\n", 7);
	return hl + dl + 7;
}

/*
 * Turn forwarded requests (taken from TX ring @p q) into their nodes' replies in place, check
 * each went to the right node, and put them on RX ring @p to. @return replies injected.
 */
static uint32_t make_replies(uint16_t q, uint16_t to, uint32_t n, const struct b_sent *sent,
			     uint32_t reply_bytes)
{
	void *objs[B_BATCH_MAX];
	uint32_t got = rte_ring_dequeue_burst(run.tx[q], objs, n, NULL), bad = 0;

	if (got != n)
		fail("worker %u: %u of %u requests forwarded", q, got, n);
	for (uint32_t i = 0; i < got; i++) {
		struct rte_mbuf *m = objs[i];
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
		struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + sizeof(*eth));
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(p + sizeof(*eth));
		struct rte_udp_hdr *udp =
			run.v6 ? (struct rte_udp_hdr *)(ip6 + 1) : (struct rte_udp_hdr *)(ip + 1);
		uint8_t *pay = p + B_PAY_OFF;
		int32_t owner = pl_lookup(run.pl, run.keys[sent[i].key], run.key_len[sent[i].key]);
		uint8_t node_mac[6], n6[16], r6[16];
		uint32_t nip = ip->dst_addr;
		uint16_t rport = rte_be_to_cpu_16(udp->src_port);
		uint16_t nport = rte_be_to_cpu_16(udp->dst_port);
		size_t plen;

		router_ip6(r6);
		if (owner >= 0)
			node_ip6((uint32_t)owner, n6);
		if (owner < 0 || nport != 11211 ||
		    memcmp(&eth->dst_addr, run.macs[owner].mac, 6) != 0 ||
		    (run.v6 ? eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) ||
				      memcmp(&ip6->dst_addr, n6, 16) != 0 ||
				      memcmp(&ip6->src_addr, r6, 16) != 0
			    : nip != run.node_ip[owner] || ip->src_addr != router_ip()))
			bad++;
		memcpy(node_mac, &eth->dst_addr, 6);
		/* The reply echoes the frame's request id; body after it. */
		pay[2] = pay[3] = 0;
		pay[4] = 0;
		pay[5] = 1;
		pay[6] = pay[7] = 0;
		plen = MC_FRAME_HDR_LEN +
		       reply_body(pay + MC_FRAME_HDR_LEN, reply_bytes, run.keys[sent[i].key]);
		if (run.v6)
			finish_udp6(m, router_mac, node_mac, n6, r6, nport, rport, plen);
		else
			finish_udp(m, router_mac, node_mac, nip, router_ip(), nport, rport, plen);
	}
	if (bad != 0)
		fail("worker %u: %u of %u requests went to another node than pl_lookup names", q,
		     bad, got);
	if (got != 0 && rte_ring_enqueue_bulk(run.rx[to], objs, got, NULL) != got) {
		fail("RX ring full");
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, got);
		return 0;
	}
	return got;
}

/* The IPv6 UDP checksum of a datagram the router sent is right (0 is not allowed); with
 * --offload, the field holds the pseudo-header sum the NIC starts from. */
static bool udp6_cksum_ok(struct rte_ipv6_hdr *ip6, struct rte_udp_hdr *udp)
{
	uint16_t got = udp->dgram_cksum, want;

	if (run.offload)
		return got == rte_ipv6_phdr_cksum(ip6, 0);
	udp->dgram_cksum = 0;
	want = rte_ipv6_udptcp_cksum(ip6, udp);
	udp->dgram_cksum = got;
	return got != 0 && got == want;
}

/* Check the replies on TX ring @p q went to the clients that asked, with their ids; free. */
static uint32_t check_returned(uint16_t q, uint32_t n, const struct b_sent *sent)
{
	void *objs[B_BATCH_MAX];
	uint32_t got = rte_ring_dequeue_burst(run.tx[q], objs, n, NULL), bad = 0;

	if (got != n)
		fail("worker %u: %u of %u replies returned", q, got, n);
	for (uint32_t i = 0; i < got; i++) {
		uint8_t *p = rte_pktmbuf_mtod((struct rte_mbuf *)objs[i], uint8_t *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + sizeof(struct rte_ether_hdr));
		struct rte_ipv6_hdr *ip6 =
			(struct rte_ipv6_hdr *)(p + sizeof(struct rte_ether_hdr));
		struct rte_udp_hdr *udp =
			run.v6 ? (struct rte_udp_hdr *)(ip6 + 1) : (struct rte_udp_hdr *)(ip + 1);
		uint8_t *pay = p + B_PAY_OFF;
		uint16_t reqid = (uint16_t)(pay[0] << 8 | pay[1]);
		uint8_t c6[16], r6[16];

		client_ip6(sent[i].client, c6);
		router_ip6(r6);
		if ((run.v6 ? memcmp(&ip6->dst_addr, c6, 16) != 0 ||
				      memcmp(&ip6->src_addr, r6, 16) != 0 ||
				      !udp6_cksum_ok(ip6, udp)
			    : ip->dst_addr != client_ip(sent[i].client) ||
				      ip->src_addr != router_ip()) ||
		    rte_be_to_cpu_16(udp->dst_port) != sent[i].cport || reqid != sent[i].reqid ||
		    rte_be_to_cpu_16(udp->src_port) != B_LISTEN)
			bad++;
	}
	if (bad != 0)
		fail("worker %u: %u of %u replies did not reach the client that asked", q, bad,
		     got);
	rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, got);
	return got - bad;
}

/* ---------------------------------------------------------------- timed polls */

/*
 * Poll worker @p w until it has taken @p n packets (or finds its queue empty): the measured
 * region. noinline so that callgrind can count exactly this (--toggle-collect=timed_polls).
 * @return TSC cycles.
 */
__attribute__((noinline)) uint64_t timed_polls(struct dp_worker *w, uint32_t n);
__attribute__((noinline)) uint64_t timed_polls(struct dp_worker *w, uint32_t n)
{
	uint64_t t0 = rte_rdtsc();
	uint32_t done = 0, got;

	do {
		got = dp_worker_poll(w);
		done += got;
	} while (done < n && got != 0);
	return rte_rdtsc() - t0;
}

/* The same without the clock, for the stage callgrind must not count. */
__attribute__((noinline)) void untimed_polls(struct dp_worker *w, uint32_t n);
__attribute__((noinline)) void untimed_polls(struct dp_worker *w, uint32_t n)
{
	uint32_t done = 0, got;

	while (done < n && (got = dp_worker_poll(w)) != 0)
		done += got;
}

/* ---------------------------------------------------------------- one worker's case */

static int worker_case(void *arg)
{
	struct b_case_ctx *cx = arg;
	unsigned int lc = rte_lcore_id();
	uint16_t q = 0;

	while (q < cx->workers && cx->lcore_of[q] != lc)
		q++;
	if (q == cx->workers)
		return 0;

	struct dp_worker *w = dp_worker_get(cx->dp, q);
	struct b_worker_res *r = &cx->res[q];
	struct b_sent sent[B_BATCH_MAX];
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)q << 32) ^ cx->proto;
	bool time_fwd = run.only == NULL || strcmp(run.only, "forward") == 0;
	bool time_rep = run.only == NULL || strcmp(run.only, "reply") == 0;

	for (uint32_t done = 0;
	     done < run.packets && !__atomic_load_n(&run.failed, __ATOMIC_RELAXED);
	     done += run.batch) {
		uint32_t n = RTE_MIN(run.batch, run.packets - done);

		if (inject_requests(q, cx->proto, n, &rng, sent) != 0)
			break;
		r->sent += n;
		if (time_fwd) {
			uint64_t c = timed_polls(w, n);

			r->cpp_fwd[r->nb] = (double)c / n;
			r->cyc_fwd += c;
		} else {
			untimed_polls(w, n);
		}
		if (cx->stage != B_FORWARD) {
			r->nb++;
			continue;
		}
		uint32_t nr = make_replies(q, q, n, sent, cx->reply_bytes);

		if (time_rep) {
			uint64_t c = timed_polls(w, nr);

			r->cpp_rep[r->nb] = nr ? (double)c / nr : 0;
			r->cyc_rep += c;
		} else {
			untimed_polls(w, nr);
		}
		r->checked += check_returned(q, nr, sent);
		r->nb++;
	}
	return 0;
}

/* ---------------------------------------------------------------- cases */

static struct dp *make_dp(uint16_t workers, enum b_stage stage)
{
	struct dp_config c;
	struct dp *dp;

	dp_config_defaults(&c);
	c.port_id = run.port;
	c.n_workers = workers;
	c.router_ip = router_ip();
	memcpy(c.router_mac, router_mac, 6);
	c.listen_ports[0] = B_LISTEN;
	c.n_listen = 1;
	c.reply_port_base = B_REPLY_BASE;
	c.reply_port_count = B_REPLY_COUNT;
	c.allowed[0].addr = client_ip(0);
	c.allowed[0].mask = rte_cpu_to_be_32(0xfffff000u);
	c.n_allowed = 1;
	if (run.v6) {
		uint8_t a[16], mk[16];

		router_ip6(c.router_ip6);
		client_ip6(0, a);
		memset(mk, 0xff, 16);
		mk[14] = 0xf0; /* /116: 4,096 clients */
		mk[15] = 0;
		memcpy(c.allowed6[0].addr, a, 16);
		memcpy(c.allowed6[0].mask, mk, 16);
		c.n_allowed6 = 1;
	}
	/* Long enough that a slow run (callgrind's cache simulation on a busy host) never
	 * expires a slot between a forward batch and its replies. */
	c.request_timeout_ms = 60000;
	c.neighbours = run.nodes + 16;
	c.no_arp_requests = true;
	c.tx_cksum_offload = run.offload;
	c.pool = run.pool;
	for (uint16_t i = 0; i < workers; i++)
		c.worker_socket[i] = rte_socket_id();
	dp = dp_create(&c);
	if (dp == NULL) {
		fprintf(stderr, "bench_dataplane: dp_create: %s\n", strerror(errno));
		return NULL;
	}
	if (stage == B_PARSE)
		return dp;
	/* place: every member resolved by ARP, which never runs here: node_no_mac. */
	struct dp_node_mac *none = calloc(run.nodes, sizeof(*none));
	int rc = none == NULL ? -ENOMEM
			      : dp_publish_placement(dp, run.v6 ? run.pl6 : run.pl,
						     stage == B_PLACE ? none : run.macs, 1);

	free(none);
	if (rc != 0) {
		fprintf(stderr, "bench_dataplane: dp_publish_placement: %s\n", strerror(-rc));
		dp_free(dp);
		return NULL;
	}
	return dp;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median and 10th / 90th percentiles of @p n values (sorted in place). */
struct b_dist {
	double p10, median, p90, mean;
	uint64_t packets;
};

static struct b_dist dist_of(double *v, uint32_t n, uint64_t cycles, uint64_t packets)
{
	struct b_dist d = {0};

	if (n == 0)
		return d;
	qsort(v, n, sizeof(*v), cmp_double);
	d.p10 = v[n / 10];
	d.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	d.p90 = v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
	d.mean = packets ? (double)cycles / (double)packets : 0;
	d.packets = packets;
	return d;
}

/* Results of a case over its workers. */
struct b_case {
	char name[48];
	const char *stage;
	enum b_proto proto;
	uint32_t reply_bytes;
	uint16_t workers;
	struct b_dist fwd;		 /* parse / place / forward */
	struct b_dist rep;		 /* reply (stage forward only); handoff: give + take */
	struct b_dist give, take;	 /* handoff: worker 1's side, worker 0's take-over */
	double fwd_worker[B_QUEUES_MAX]; /* median per worker */
	double rep_worker[B_QUEUES_MAX];
	const char *counter;
	uint64_t counted;
	uint64_t expected;
	bool identity;
	bool ok;
};

#define B_CASES_MAX 32
static struct b_case cases[B_CASES_MAX];
static uint32_t n_cases;

static int run_case(enum b_stage stage, enum b_proto proto, uint32_t reply_bytes, uint16_t workers,
		    struct b_case *out)
{
	struct b_case_ctx *cx = calloc(1, sizeof(*cx));
	uint32_t nb_max = run.packets / run.batch + 2;
	unsigned int lc;
	uint16_t k = 0;
	struct dp_stats st;
	int rc = -ENOMEM;

	if (cx == NULL)
		return -ENOMEM;
	cx->stage = stage;
	cx->proto = proto;
	cx->reply_bytes = reply_bytes;
	cx->workers = workers;
	cx->lcore_of[k++] = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER (lc) {
		if (k == workers)
			break;
		cx->lcore_of[k++] = lc;
	}
	for (uint16_t i = 0; i < workers; i++) {
		cx->res[i].cpp_fwd = calloc(nb_max, sizeof(double));
		cx->res[i].cpp_rep = calloc(nb_max, sizeof(double));
		if (cx->res[i].cpp_fwd == NULL || cx->res[i].cpp_rep == NULL)
			goto out;
	}
	cx->dp = make_dp(workers, stage);
	if (cx->dp == NULL)
		goto out;
	for (uint16_t i = 1; i < workers; i++)
		rte_eal_remote_launch(worker_case, cx, cx->lcore_of[i]);
	worker_case(cx);
	rte_eal_mp_wait_lcore();

	/* Results: per-worker medians, and the distribution over every worker's batches. */
	double *all_f = calloc((size_t)nb_max * workers, sizeof(double));
	double *all_r = calloc((size_t)nb_max * workers, sizeof(double));
	uint32_t nf = 0, nr = 0;
	uint64_t cf = 0, cr = 0, sent = 0, checked = 0;

	if (all_f == NULL || all_r == NULL) {
		free(all_f);
		free(all_r);
		goto out;
	}
	memset(out, 0, sizeof(*out));
	for (uint16_t i = 0; i < workers; i++) {
		struct b_worker_res *r = &cx->res[i];

		memcpy(all_f + nf, r->cpp_fwd, r->nb * sizeof(double));
		memcpy(all_r + nr, r->cpp_rep, r->nb * sizeof(double));
		nf += r->nb;
		nr += r->nb;
		cf += r->cyc_fwd;
		cr += r->cyc_rep;
		sent += r->sent;
		checked += r->checked;
		out->fwd_worker[i] = dist_of(r->cpp_fwd, r->nb, r->cyc_fwd, r->sent).median;
		out->rep_worker[i] = dist_of(r->cpp_rep, r->nb, r->cyc_rep, r->sent).median;
	}
	out->fwd = dist_of(all_f, nf, cf, sent);
	if (stage == B_FORWARD)
		out->rep = dist_of(all_r, nr, cr, sent);
	free(all_f);
	free(all_r);

	out->proto = proto;
	out->reply_bytes = reply_bytes;
	out->workers = workers;
	out->expected = sent;
	dp_stats_get(cx->dp, -1, &st);
	out->identity = dp_stats_identity(&st);
	switch (stage) {
	case B_PARSE:
		out->stage = "parse";
		out->counter = "drop.no_placement";
		out->counted = st.drop[DP_DROP_NO_PLACEMENT];
		break;
	case B_PLACE:
		out->stage = "place";
		out->counter = "drop.node_no_mac";
		out->counted = st.drop[DP_DROP_NODE_NO_MAC];
		break;
	case B_FORWARD:
		out->stage = "forward";
		out->counter = "returned";
		/* Every request forwarded, every reply returned and checked, every slot freed. */
		out->counted = st.ctr[DP_CTR_RETURNED];
		if (st.ctr[DP_CTR_FORWARDED] != sent || st.ctr[DP_CTR_SLOTS_COMPLETED] != sent ||
		    checked != sent || st.slots_live != 0)
			fail("%s: forwarded %" PRIu64 ", completed %" PRIu64 ", checked %" PRIu64
			     ", live slots %u, sent %" PRIu64,
			     proto_names[proto], st.ctr[DP_CTR_FORWARDED],
			     st.ctr[DP_CTR_SLOTS_COMPLETED], checked, st.slots_live, sent);
		break;
	}
	if (st.ctr[DP_CTR_RX] != (stage == B_FORWARD ? 2 * sent : sent))
		fail("%s %s: rx %" PRIu64 " for %" PRIu64 " sent", out->stage, proto_names[proto],
		     st.ctr[DP_CTR_RX], sent);
	if (out->counted != sent)
		fail("%s %s: %s %" PRIu64 " != %" PRIu64 " sent", out->stage, proto_names[proto],
		     out->counter, out->counted, sent);
	if (!out->identity)
		fail("%s %s: accounting identity broken", out->stage, proto_names[proto]);
	out->ok = out->counted == sent && out->identity && !run.failed;
	if (stage == B_FORWARD)
		snprintf(out->name, sizeof(out->name), "forward_%s_reply_%u%s", proto_names[proto],
			 reply_bytes, run.v6 ? "_ipv6" : "");
	else
		snprintf(out->name, sizeof(out->name), "%s_%s", out->stage, proto_names[proto]);
	rc = 0;
out:
	if (cx->dp != NULL)
		dp_free(cx->dp);
	for (uint16_t i = 0; i < workers; i++) {
		free(cx->res[i].cpp_fwd);
		free(cx->res[i].cpp_rep);
	}
	/* Nothing may stay on the rings for the next case. */
	for (uint16_t q = 0; q < run.nq; q++) {
		void *m;

		while (rte_ring_dequeue(run.rx[q], &m) == 0)
			rte_pktmbuf_free(m);
		while (rte_ring_dequeue(run.tx[q], &m) == 0)
			rte_pktmbuf_free(m);
	}
	free(cx);
	return rc;
}

/*
 * The hand-off case: requests forwarded by worker 0, their replies delivered to worker 1's
 * queue. Per batch: worker 1's polls (give) and then worker 0's (take), timed apart; both on
 * this lcore (the workers' loops are plain functions; the hand-off ring is MP/SC).
 */
static int handoff_case(enum b_proto proto, uint32_t reply_bytes, struct b_case *out)
{
	uint32_t nb_max = run.packets / run.batch + 2, nb = 0;
	double *give = calloc(nb_max, sizeof(double)), *take = calloc(nb_max, sizeof(double));
	double *sum = calloc(nb_max, sizeof(double)), *fwd = calloc(nb_max, sizeof(double));
	struct dp *dp = NULL;
	struct b_sent sent[B_BATCH_MAX];
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ proto, n_sent = 0, checked = 0;
	uint64_t cf = 0, cg = 0, ct = 0;
	/* --only handoff: callgrind counts the give and take polls, not the forward. */
	bool timed = run.only == NULL || strcmp(run.only, "handoff") == 0;
	bool time_fwd = run.only == NULL;
	struct dp_stats st;
	int rc = -ENOMEM;

	if (give == NULL || take == NULL || sum == NULL || fwd == NULL)
		goto out;
	dp = make_dp(2, B_FORWARD);
	if (dp == NULL)
		goto out;
	struct dp_worker *w0 = dp_worker_get(dp, 0), *w1 = dp_worker_get(dp, 1);

	for (uint32_t done = 0; done < run.packets && !run.failed; done += run.batch, nb++) {
		uint32_t n = RTE_MIN(run.batch, run.packets - done), nr;
		uint64_t c;

		if (inject_requests(0, proto, n, &rng, sent) != 0)
			break;
		n_sent += n;
		if (time_fwd) {
			c = timed_polls(w0, n);
			fwd[nb] = (double)c / n;
			cf += c;
		} else {
			untimed_polls(w0, n);
		}
		/* Worker 0's requests, answered on worker 1's queue. */
		nr = make_replies(0, 1, n, sent, reply_bytes);
		/* In chunks the hand-off ring holds (a ring of N takes N - 1). */
		uint64_t g = 0, t = 0;

		for (uint32_t i = 0; i < nr; i += B_HANDOFF_CHUNK) {
			uint32_t k = RTE_MIN(B_HANDOFF_CHUNK, nr - i);

			if (timed) {
				g += timed_polls(w1, k);
				t += timed_polls(w0, k);
			} else {
				untimed_polls(w1, k);
				untimed_polls(w0, k);
			}
		}
		give[nb] = nr ? (double)g / nr : 0;
		take[nb] = nr ? (double)t / nr : 0;
		sum[nb] = give[nb] + take[nb];
		cg += g;
		ct += t;
		checked += check_returned(0, nr, sent);
	}
	memset(out, 0, sizeof(*out));
	out->fwd = dist_of(fwd, nb, cf, n_sent);
	out->rep = dist_of(sum, nb, cg + ct, n_sent);
	out->give = dist_of(give, nb, cg, n_sent);
	out->take = dist_of(take, nb, ct, n_sent);
	out->stage = "handoff";
	out->proto = proto;
	out->reply_bytes = reply_bytes;
	out->workers = 2;
	out->expected = n_sent;
	out->counter = "taken_over";
	dp_stats_get(dp, -1, &st);
	out->counted = st.ctr[DP_CTR_TAKEN_OVER];
	out->identity = dp_stats_identity(&st);
	/* Every reply handed over by worker 1, taken over and returned by worker 0. */
	if (st.ctr[DP_CTR_HANDED_OVER] != n_sent || out->counted != n_sent ||
	    st.ctr[DP_CTR_RETURNED] != n_sent || st.ctr[DP_CTR_SLOTS_COMPLETED] != n_sent ||
	    checked != n_sent || st.slots_live != 0 || !out->identity)
		fail("handoff: sent %" PRIu64 ", handed over %" PRIu64 ", taken over %" PRIu64
		     ", returned %" PRIu64 ", checked %" PRIu64 ", identity %d",
		     n_sent, st.ctr[DP_CTR_HANDED_OVER], out->counted, st.ctr[DP_CTR_RETURNED],
		     checked, out->identity);
	out->ok = !run.failed;
	snprintf(out->name, sizeof(out->name), "handoff_%s_reply_%u", proto_names[proto],
		 reply_bytes);
	rc = 0;
out:
	if (dp != NULL)
		dp_free(dp);
	free(give);
	free(take);
	free(sum);
	free(fwd);
	for (uint16_t q = 0; q < run.nq; q++) {
		void *m;

		while (rte_ring_dequeue(run.rx[q], &m) == 0)
			rte_pktmbuf_free(m);
		while (rte_ring_dequeue(run.tx[q], &m) == 0)
			rte_pktmbuf_free(m);
	}
	return rc;
}

/* ---------------------------------------------------------------- output */

static double mpps(double cpp)
{
	return cpp > 0 ? (double)run.tsc_hz / cpp / 1e6 : 0;
}

static void json_dist(FILE *f, const char *name, const struct b_dist *d)
{
	fprintf(f,
		"\"%s\": {\"cycles_per_packet\": %.1f, \"p10\": %.1f, \"p90\": %.1f, "
		"\"mean\": %.1f, \"mpps_per_core\": %.2f, \"packets\": %" PRIu64 "}",
		name, d->median, d->p10, d->p90, d->mean, mpps(d->median), d->packets);
}

static void cpu_name(char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c != NULL) {
			c += 2;
			c[strcspn(c, "\n\"\\")] = '\0';
			snprintf(out, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

/* The 1-minute load average: how busy the machine was (others' work moves the figures). */
static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f != NULL) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static const struct b_case *find_case(const char *name)
{
	for (uint32_t i = 0; i < n_cases; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

static void write_json(FILE *f, const struct b_case *scaling, uint32_t n_scaling)
{
	char cpu[128];

	cpu_name(cpu, sizeof(cpu));
	fprintf(f, "{\n\"benchmark\": \"dataplane\",\n\"quick\": %s,\n",
		run.quick ? "true" : "false");
	fprintf(f, "\"offload\": %s,\n", run.offload ? "true" : "false");
	fprintf(f, "\"only\": %s%s%s,\n", run.only ? "\"" : "", run.only ? run.only : "null",
		run.only ? "\"" : "");
	fprintf(f, "\"cpu\": \"%s\",\n\"online_cpus\": %ld,\n\"tsc_hz\": %" PRIu64 ",\n", cpu,
		sysconf(_SC_NPROCESSORS_ONLN), run.tsc_hz);
	fprintf(f, "\"dpdk\": \"%s\",\n\"loadavg_1min\": %.2f,\n", rte_version(), load_average());
	fprintf(f,
		"\"ring\": {\"algorithm\": \"ring\", \"nodes\": %u, \"vnodes\": %u, "
		"\"points\": %" PRIu64 ", \"memory_bytes\": %zu},\n",
		run.nodes, run.vnodes, pl_point_count(run.pl), pl_memory(run.pl));
	fprintf(f,
		"\"packets_per_case\": %u,\n\"batch\": %u,\n\"burst\": 32,\n\"keys\": %u,\n"
		"\"key_bytes\": [%d, %d],\n\"clients\": %u,\n",
		run.packets, run.batch, B_KEYS, B_KEY_MIN, B_KEY_MAX, B_CLIENTS);
	fprintf(f, "\"cases\": [\n");
	for (uint32_t i = 0; i < n_cases; i++) {
		const struct b_case *c = &cases[i];

		fprintf(f,
			"  {\"name\": \"%s\", \"stage\": \"%s\", \"proto\": \"%s\", "
			"\"workers\": %u, ",
			c->name, c->stage, proto_names[c->proto], c->workers);
		if (c->reply_bytes)
			fprintf(f, "\"reply_bytes\": %u, ", c->reply_bytes);
		json_dist(f, c->reply_bytes ? "forward" : c->stage, &c->fwd);
		if (strcmp(c->stage, "handoff") == 0) {
			fprintf(f, ", ");
			json_dist(f, "handoff", &c->rep);
			fprintf(f, ", ");
			json_dist(f, "give", &c->give);
			fprintf(f, ", ");
			json_dist(f, "take", &c->take);
		} else if (c->reply_bytes) {
			fprintf(f, ", ");
			json_dist(f, "reply", &c->rep);
		}
		fprintf(f,
			", \"counter\": \"%s\", \"counted\": %" PRIu64 ", \"expected\": %" PRIu64
			", \"identity_ok\": %s, \"ok\": %s}%s\n",
			c->counter, c->counted, c->expected, c->identity ? "true" : "false",
			c->ok ? "true" : "false", i + 1 < n_cases ? "," : "");
	}
	fprintf(f, "],\n");

	/* The headline figures: mix of the three protocols, 100-byte replies. */
	const struct b_case *pa = find_case("parse_mix"), *pp = find_case("place_mix"),
			    *fw = find_case("forward_mix_reply_100"),
			    *fb = find_case("forward_mix_reply_1400");

	fprintf(f, "\"summary\": {");
	if (pa && pp && fw) {
		fprintf(f,
			"\"parse_cycles\": %.1f, \"place_cycles\": %.1f, \"forward_cycles\": %.1f, "
			"\"reply_100_cycles\": %.1f, ",
			pa->fwd.median, pp->fwd.median, fw->fwd.median, fw->rep.median);
		if (fb)
			fprintf(f, "\"reply_1400_cycles\": %.1f, ", fb->rep.median);
		fprintf(f,
			"\"parse_mpps\": %.2f, \"place_mpps\": %.2f, \"forward_mpps\": %.2f, "
			"\"reply_100_mpps\": %.2f, \"forward_target_cycles\": 200, "
			"\"reply_target_cycles\": 100, \"forward_target_met\": %s, "
			"\"reply_target_met\": %s",
			mpps(pa->fwd.median), mpps(pp->fwd.median), mpps(fw->fwd.median),
			mpps(fw->rep.median), fw->fwd.median <= 200 ? "true" : "false",
			fw->rep.median <= 100 ? "true" : "false");
	}
	/* The IPv6 case next to IPv4's (target: within 10%). */
	const struct b_case *f6 = find_case("forward_mix_reply_100_ipv6");

	if (f6 != NULL && fw != NULL)
		fprintf(f,
			"%s\"forward_ipv6_cycles\": %.1f, \"reply_100_ipv6_cycles\": %.1f, "
			"\"forward_ipv6_vs_ipv4\": %.3f, \"reply_ipv6_vs_ipv4\": %.3f",
			pa && pp ? ", " : "", f6->fwd.median, f6->rep.median,
			f6->fwd.median / fw->fwd.median, f6->rep.median / fw->rep.median);
	/* A reply that lands on another worker: worker 1's hand-over + worker 0's take-over,
	 * next to the direct reply above. */
	const struct b_case *ho = find_case("handoff_mix_reply_100");

	if (ho != NULL)
		fprintf(f,
			"%s\"handoff_cycles\": %.1f, \"handoff_give_cycles\": %.1f, "
			"\"handoff_take_cycles\": %.1f",
			pa && pp && fw ? ", " : "", ho->rep.median, ho->give.median,
			ho->take.median);
	fprintf(f, "},\n\"scaling\": [");
	for (uint32_t i = 0; i < n_scaling; i++) {
		const struct b_case *c = &scaling[i];
		double af = 0, ar = 0;

		fprintf(f, "%s\n  {\"workers\": %u, \"forward_cycles_per_worker\": [", i ? "," : "",
			c->workers);
		for (uint16_t w = 0; w < c->workers; w++) {
			fprintf(f, "%s%.1f", w ? ", " : "", c->fwd_worker[w]);
			af += mpps(c->fwd_worker[w]);
		}
		fprintf(f, "], \"reply_cycles_per_worker\": [");
		for (uint16_t w = 0; w < c->workers; w++) {
			fprintf(f, "%s%.1f", w ? ", " : "", c->rep_worker[w]);
			ar += mpps(c->rep_worker[w]);
		}
		fprintf(f,
			"], \"forward_mpps_total\": %.2f, \"reply_mpps_total\": %.2f, \"ok\": %s}",
			af, ar, c->ok ? "true" : "false");
	}
	fprintf(f, "%s],\n\"ok\": %s\n}\n", n_scaling ? "\n" : "", run.failed ? "false" : "true");
}

static void print_table(const struct b_case *scaling, uint32_t n_scaling)
{
	char cpu[128];

	cpu_name(cpu, sizeof(cpu));
	fprintf(stderr, "dataplane: %s, TSC %.2f GHz, ring %u nodes x %u vnodes, %u packets/case\n",
		cpu, (double)run.tsc_hz / 1e9, run.nodes, run.vnodes, run.packets);
	fprintf(stderr, "%-26s %9s %9s %9s %9s\n", "case", "stage", "cyc/pkt", "p90", "Mpps");
	for (uint32_t i = 0; i < n_cases; i++) {
		const struct b_case *c = &cases[i];

		bool ho = strcmp(c->stage, "handoff") == 0;

		fprintf(stderr, "%-26s %9s %9.1f %9.1f %9.2f\n", c->name,
			c->reply_bytes ? "forward" : c->stage, c->fwd.median, c->fwd.p90,
			mpps(c->fwd.median));
		if (c->reply_bytes)
			fprintf(stderr, "%-26s %9s %9.1f %9.1f %9.2f\n", "",
				ho ? "handoff" : "reply", c->rep.median, c->rep.p90,
				mpps(c->rep.median));
		if (ho)
			fprintf(stderr, "%-26s %9s %9.1f / %.1f (worker 1 / worker 0)\n", "",
				"give/take", c->give.median, c->take.median);
	}
	for (uint32_t i = 0; i < n_scaling; i++) {
		double af = 0, ar = 0;

		for (uint16_t w = 0; w < scaling[i].workers; w++) {
			af += mpps(scaling[i].fwd_worker[w]);
			ar += mpps(scaling[i].rep_worker[w]);
		}
		fprintf(stderr,
			"scaling: %u worker(s): forward %.2f Mpps, reply %.2f Mpps in total "
			"(worker 0: %.1f / %.1f cycles)\n",
			scaling[i].workers, af, ar, scaling[i].fwd_worker[0],
			scaling[i].rep_worker[0]);
	}
}

/* ---------------------------------------------------------------- set-up */

static int port_setup(uint16_t nq)
{
	struct rte_eth_conf conf;
	char name[32];
	int port;

	/* A batch in flight per worker plus the per-lcore caches: each worker cycles through about
	 * batch + 512 mbufs, as a NIC queue cycles through the mbufs of its RX ring. */
	run.pool = rte_pktmbuf_pool_create("b_pool", (run.batch + 512u) * nq + 1023u, 256, 0,
					   RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (run.pool == NULL)
		return -ENOMEM;
	run.nq = nq;
	for (uint16_t q = 0; q < nq; q++) {
		snprintf(name, sizeof(name), "b_rx%u", q);
		run.rx[q] = rte_ring_create(name, 4096, (int)rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "b_tx%u", q);
		run.tx[q] = rte_ring_create(name, 4096, (int)rte_socket_id(),
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (run.rx[q] == NULL || run.tx[q] == NULL)
			return -ENOMEM;
	}
	port = rte_eth_from_rings("b_ring", run.rx, nq, run.tx, nq, rte_socket_id());
	if (port < 0)
		return -ENODEV;
	run.port = (uint16_t)port;
	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(run.port, nq, nq, &conf) != 0)
		return -EIO;
	for (uint16_t q = 0; q < nq; q++)
		if (rte_eth_rx_queue_setup(run.port, q, 1024, rte_socket_id(), NULL, run.pool) !=
			    0 ||
		    rte_eth_tx_queue_setup(run.port, q, 1024, rte_socket_id(), NULL) != 0)
			return -EIO;
	return rte_eth_dev_start(run.port) == 0 ? 0 : -EIO;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_dataplane [--quick] [--packets N] [--batch N] [--nodes N] "
		"[--vnodes N]\n"
		"                       [--only forward|reply|handoff] [--scaling] [--workers N] "
		"[--offload] [--ipv6] "
		"[--json FILE]\n"
		"                       [-- EAL-ARGS]\n");
	exit(2);
}

static unsigned long num_arg(const char *s, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "bench_dataplane: '%s' is not a number in %lu..%lu\n", s, lo, hi);
		usage();
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"packets", required_argument, NULL, 'p'},
		{"batch", required_argument, NULL, 'b'},
		{"nodes", required_argument, NULL, 'n'},
		{"vnodes", required_argument, NULL, 'v'},
		{"only", required_argument, NULL, 'o'},
		{"scaling", no_argument, NULL, 's'},
		{"workers", required_argument, NULL, 'w'},
		{"json", required_argument, NULL, 'j'},
		{"offload", no_argument, NULL, 'f'},
		{"ipv6", no_argument, NULL, '6'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long workers = ncpu >= 2 ? 2 : 1;
	bool scaling = false, packets_set = false;
	const char *json = NULL;
	char lcores[32], prefix[64];
	int opt, rc;

	run.batch = 1024;
	run.nodes = 1000;
	run.vnodes = 160;
	run.packets = 262144;
	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			run.quick = true;
			break;
		case 'p':
			run.packets = (uint32_t)num_arg(optarg, 1, 1u << 30);
			packets_set = true;
			break;
		case 'b':
			run.batch = (uint32_t)num_arg(optarg, 32, 2048);
			break;
		case 'n':
			run.nodes = (uint32_t)num_arg(optarg, 1, 50000);
			break;
		case 'v':
			run.vnodes = (uint32_t)num_arg(optarg, 1, 1000);
			break;
		case 'o':
			if (strcmp(optarg, "forward") != 0 && strcmp(optarg, "reply") != 0 &&
			    strcmp(optarg, "handoff") != 0)
				usage();
			run.only = optarg;
			break;
		case 's':
			scaling = true;
			break;
		case 'w':
			workers = num_arg(optarg, 1, B_QUEUES_MAX);
			break;
		case 'j':
			json = optarg;
			break;
		case 'f':
			run.offload = true;
			break;
		case '6':
			run.v6 = true; /* --only: the stage over IPv6 */
			break;
		default:
			usage();
		}
	}
	if (run.quick && !packets_set)
		run.packets = 8192;

	/* EAL: the caller's arguments after "--", or ours. */
	char *def_argv[] = {
		argv[0],       "-l",	      lcores,
		"--no-huge",   "-m",	      "512",
		"--no-pci",    "--no-shconf", "--no-telemetry",
		"--log-level", "error",	      "--file-prefix",
		prefix,
	};
	char **eargv = def_argv;
	int eargc = (int)RTE_DIM(def_argv);

	snprintf(lcores, sizeof(lcores), "0-%lu", workers - 1);
	snprintf(prefix, sizeof(prefix), "bench_dp_%d", getpid());
	rw_rundir_remove_at_exit(prefix);
	if (optind < argc) {
		eargv = argv + optind - 1;
		eargv[0] = argv[0];
		eargc = argc - optind + 1;
	}
	if (rte_eal_init(eargc, eargv) < 0) {
		fprintf(stderr, "bench_dataplane: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	run.tsc_hz = rte_get_tsc_hz();
	uint16_t nl = (uint16_t)RTE_MIN(rte_lcore_count(), (unsigned int)B_QUEUES_MAX);

	rc = port_setup(RTE_MAX(nl, 2)); /* the hand-off case needs two queues */
	if (rc == 0)
		rc = make_fleet();
	if (rc != 0) {
		fprintf(stderr, "bench_dataplane: set-up failed: %s\n", strerror(-rc));
		rte_eal_cleanup();
		return 1;
	}

	/* The cases of one worker; --only runs just the stage callgrind counts. */
	static const enum b_proto protos[] = {B_MIX, B_ASCII, B_META, B_BINARY};
	struct b_case scal[8];
	uint32_t n_scal = 0;

	if (run.only != NULL && strcmp(run.only, "handoff") == 0) {
		rc = handoff_case(B_MIX, 100, &cases[n_cases++]);
	} else if (run.only != NULL) {
		rc = run_case(B_FORWARD, B_MIX, 100, 1, &cases[n_cases++]);
	} else {
		for (size_t i = 0; rc == 0 && i < RTE_DIM(protos); i++)
			rc = run_case(B_PARSE, protos[i], 0, 1, &cases[n_cases++]);
		for (size_t i = 0; rc == 0 && i < RTE_DIM(protos); i++)
			rc = run_case(B_PLACE, protos[i], 0, 1, &cases[n_cases++]);
		for (size_t i = 0; rc == 0 && i < RTE_DIM(protos); i++)
			rc = run_case(B_FORWARD, protos[i], 100, 1, &cases[n_cases++]);
		if (rc == 0)
			rc = run_case(B_FORWARD, B_MIX, 1400, 1, &cases[n_cases++]);
		/* The same mixed load over IPv6 (clients, router and nodes), beside IPv4's. */
		run.v6 = true;
		if (rc == 0)
			rc = run_case(B_FORWARD, B_MIX, 100, 1, &cases[n_cases++]);
		run.v6 = false;
		if (rc == 0)
			rc = handoff_case(B_MIX, 100, &cases[n_cases++]);
	}
	if (rc == 0 && (scaling || run.quick) && run.only == NULL) {
		for (uint16_t w = 1; rc == 0 && w <= nl && n_scal < RTE_DIM(scal); w *= 2)
			rc = run_case(B_FORWARD, B_MIX, 100, w, &scal[n_scal++]);
		if (rc == 0 && (nl & (nl - 1)) != 0 && n_scal < RTE_DIM(scal))
			rc = run_case(B_FORWARD, B_MIX, 100, nl, &scal[n_scal++]);
	}
	if (rc != 0) {
		fprintf(stderr, "bench_dataplane: a case could not run: %s\n", strerror(-rc));
		run.failed = 1;
	}

	FILE *out = stdout;

	if (json != NULL && (out = fopen(json, "w")) == NULL) {
		fprintf(stderr, "bench_dataplane: %s: %s\n", json, strerror(errno));
		out = stdout;
		run.failed = 1;
	}
	write_json(out, scal, n_scal);
	if (out != stdout)
		fclose(out);
	print_table(scal, n_scal);

	pl_free(run.pl);
	pl_free(run.pl6);
	rte_eth_dev_stop(run.port);
	rte_eal_cleanup();
	return run.failed ? 1 : 0;
}
