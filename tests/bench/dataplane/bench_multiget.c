/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost of a multi-get over several nodes, on the real worker code: 10-key gets whose keys
 * live on all 4 nodes of the ring, through dp_worker_poll() (RX burst, dp_forward_burst, TX
 * burst) over a net_ring port this program fills and drains. --proto: ASCII `get k1 .. k10`
 * (default), meta `mg <k> v` x 10 + `mn`, or binary GETQ x 10 + NOOP (the router tags each
 * meta and binary key's request and puts the client's opaque back in the merge).
 *
 *   split  the client's request in: parse, hash and place 10 keys, open a context, build and
 *          send 4 sub-requests (mbufs from the pool, headers and checksums)
 *   merge  the nodes' replies in, as memcached 1.6 sends them over UDP (a message per hit of
 *          100 value bytes, then END / MN / NOOP; meta O and binary opaques echoed): slot
 *          checks, reply parsing, items copied per key, then the merged reply (key order,
 *          one terminator) built and sent to the client
 * Time: TSC cycles around the polls of a batch of multi-gets (--batch, default 64), per key
 * (10 per multi-get); the median over batches is reported. Building the node replies and
 * checking every merged reply (bytes, request id, numbering) are outside the timed region.
 * A failed check exits 1; time is never judged.
 *
 *   bench_multiget [--quick] [--proto ascii|meta|binary] [--batches N] [--batch N]
 *                  [--json FILE] [-- EAL-ARGS]
 * JSON on stdout (or --json FILE), one line on stderr.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "dataplane.h"
#include "mcproto.h"
#include "placement.h"
#include "rw_rundir.h"

#define M_NODES	     4
#define M_KEYS	     10
#define M_VALUE	     100
#define M_BATCH_MAX  100
#define M_LISTEN     11211
#define M_REPLY_BASE 32768

static const uint8_t router_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
static const uint8_t client_mac[6] = {0x02, 0, 0, 0, 0, 0x10};

static struct rte_mempool *pool;
static struct rte_ring *rxr, *txr;
static uint16_t port;
static struct dp *dp;
static struct pl_placement *pl;
static uint32_t router_ip, client_ip;
static int failed;
static enum mc_proto proto = MC_PROTO_ASCII;

static const char *proto_name(void)
{
	return proto == MC_PROTO_META ? "meta" : proto == MC_PROTO_BINARY ? "binary" : "ascii";
}

#define CHECK(c, ...)                                                                  \
	do {                                                                           \
		if (!(c)) {                                                            \
			fprintf(stderr, "bench_multiget: check failed: " __VA_ARGS__); \
			fprintf(stderr, "\n");                                         \
			failed = 1;                                                    \
		}                                                                      \
	} while (0)

static uint32_t ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return rte_cpu_to_be_32((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
}

/* A UDP packet: frame header (reqid, seq, total) + body. */
static struct rte_mbuf *udp_pkt(const uint8_t *smac, uint32_t sip, uint16_t sport, uint32_t dip,
				uint16_t dport, uint16_t reqid, uint16_t seq, uint16_t total,
				const void *body, size_t blen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	size_t len = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) +
		     sizeof(struct rte_udp_hdr) + 8 + blen;
	uint8_t *p;

	if (m == NULL || (p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len)) == NULL) {
		fprintf(stderr, "bench_multiget: out of mbufs\n");
		exit(1);
	}
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *f = (uint8_t *)(udp + 1);

	memset(p, 0, len - blen);
	memcpy(&eth->src_addr, smac, 6);
	memcpy(&eth->dst_addr, router_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - sizeof(*eth)));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = sip;
	ip->dst_addr = dip;
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + 8 + blen));
	f[0] = (uint8_t)(reqid >> 8);
	f[1] = (uint8_t)reqid;
	f[3] = (uint8_t)seq;
	f[5] = (uint8_t)total;
	memcpy(f + 8, body, blen);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	return m;
}

static struct pl_placement *fleet(void)
{
	struct pl_member m[M_NODES];
	struct pl_config c = {0};

	memset(m, 0, sizeof(m));
	for (int i = 0; i < M_NODES; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "n%d", i + 1);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.18.1.%d", i + 1);
		m[i].port = 11211;
		m[i].weight = 1;
	}
	c.algo = PL_ALGO_RING;
	return pl_build(&c, m, M_NODES);
}

static void setup(int argc, char **argv)
{
	struct rte_eth_conf conf;
	struct dp_config c;
	struct dp_node_mac macs[M_NODES];

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "bench_multiget: EAL init failed\n");
		exit(1);
	}
	pool = rte_pktmbuf_pool_create("m_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	rxr = rte_ring_create("m_rx", 8192, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	txr = rte_ring_create("m_tx", 8192, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	int p = rte_eth_from_rings("m_ring", &rxr, 1, &txr, 1, 0);

	memset(&conf, 0, sizeof(conf));
	if (pool == NULL || p < 0 || rte_eth_dev_configure((uint16_t)p, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup((uint16_t)p, 0, 1024, 0, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup((uint16_t)p, 0, 1024, 0, NULL) != 0 ||
	    rte_eth_dev_start((uint16_t)p) != 0) {
		fprintf(stderr, "bench_multiget: port setup failed\n");
		exit(1);
	}
	port = (uint16_t)p;
	router_ip = ip4(198, 18, 0, 1);
	client_ip = ip4(198, 18, 0, 10);
	dp_config_defaults(&c);
	c.port_id = port;
	c.router_ip = router_ip;
	memcpy(c.router_mac, router_mac, 6);
	c.reply_port_base = M_REPLY_BASE;
	c.allowed[0].addr = ip4(198, 18, 0, 0);
	c.allowed[0].mask = ip4(255, 255, 255, 0);
	c.n_allowed = 1;
	c.pool = pool;
	dp = dp_create(&c);
	pl = fleet();
	for (int i = 0; i < M_NODES; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	if (dp == NULL || pl == NULL || dp_publish_placement(dp, pl, macs, 1) != 0) {
		fprintf(stderr, "bench_multiget: dp setup failed\n");
		exit(1);
	}
}

/* Keys of multi-get @p i: 10 keys over all 4 nodes (resampled until they are). */
static void keys_of(uint32_t i, char keys[M_KEYS][24])
{
	for (uint32_t salt = 0;; salt++) {
		bool on[M_NODES] = {false};
		int n = 0;

		for (int k = 0; k < M_KEYS; k++) {
			snprintf(keys[k], 24, "user:%u:%u:%d", i, salt, k);
			on[pl_lookup(pl, keys[k], strlen(keys[k]))] = true;
		}
		for (int j = 0; j < M_NODES; j++)
			n += on[j];
		if (n == M_NODES)
			return;
	}
}

static void value_of(const char *key, char *out)
{
	for (int i = 0; i < M_VALUE; i++)
		out[i] = (char)('a' + (key[i % strlen(key)] + i) % 26);
}

/* Poll until the RX ring is empty and nothing is left in flight; @return TSC cycles. */
static uint64_t drain_timed(struct dp_worker *w)
{
	uint64_t t0 = rte_rdtsc_precise();

	while (rte_ring_count(rxr) > 0)
		dp_worker_poll(w);
	return rte_rdtsc_precise() - t0;
}

/* What a node sends for one key of sub-request body @p body at @p pos (@p pos moves past that
 * key's request): ASCII VALUE, meta VA with the O token echoed, binary GETQ response with
 * the opaque echoed. @return its length, 0 at the terminator. */
static size_t node_item(const uint8_t *body, size_t blen, size_t *pos, uint8_t *msg)
{
	const uint8_t *b = body + *pos;
	char val[M_VALUE], key[64];
	size_t l = 0, kl;

	if (proto == MC_PROTO_BINARY) {
		if (*pos + 24 > blen || b[1] != MC_BIN_GETQ)
			return 0;
		kl = (size_t)(b[2] << 8 | b[3]);
		memcpy(key, b + 24, kl);
		key[kl] = '\0';
		memset(msg, 0, 28);
		msg[0] = 0x81;
		msg[1] = MC_BIN_GETQ;
		msg[4] = 4;
		msg[11] = 4 + M_VALUE;
		memcpy(msg + 12, b + 12, 4);
		l = 28;
		*pos += 24 + kl;
	} else if (proto == MC_PROTO_META) {
		const uint8_t *nl = memchr(b, '\n', blen - *pos), *sp, *o;

		if (nl == NULL || b[0] != 'm' || b[1] != 'g')
			return 0;
		sp = memchr(b + 3, ' ', (size_t)(nl - b - 3));
		kl = (size_t)(sp - b - 3);
		memcpy(key, b + 3, kl);
		key[kl] = '\0';
		o = memchr(sp, 'O', (size_t)(nl - sp));
		l = (size_t)sprintf((char *)msg, "VA %d", M_VALUE);
		if (o != NULL) {
			memcpy(msg + l, o - 1, (size_t)(nl - 1 - (o - 1)));
			l += (size_t)(nl - 1 - (o - 1));
		}
		memcpy(msg + l, "\r\n", 2);
		l += 2;
		*pos += (size_t)(nl + 1 - b);
	} else {
		const uint8_t *e = b;

		while (*pos + (size_t)(e - b) < blen && *e != ' ' && *e != '\r')
			e++;
		if (e == b)
			return 0;
		kl = (size_t)(e - b);
		memcpy(key, b, kl);
		key[kl] = '\0';
		l = (size_t)sprintf((char *)msg, "VALUE %s 0 %d\r\n", key, M_VALUE);
		*pos += kl + (*e == ' ');
	}
	value_of(key, val);
	memcpy(msg + l, val, M_VALUE);
	l += M_VALUE;
	if (proto != MC_PROTO_BINARY) {
		memcpy(msg + l, "\r\n", 2);
		l += 2;
	}
	return l;
}

/* The node replies to the sub-requests on the TX ring, as memcached sends them. */
static unsigned int node_replies(struct rte_mbuf **out, unsigned int max, unsigned int *nsub)
{
	void *objs[M_BATCH_MAX * M_NODES];
	unsigned int n = rte_ring_dequeue_burst(txr, objs, RTE_DIM(objs), NULL), k = 0;
	static const uint8_t noop[24] = {0x81, MC_BIN_NOOP};

	*nsub = n;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = objs[i];
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + sizeof(struct rte_ether_hdr));
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
		uint8_t *body = (uint8_t *)(udp + 1) + 8, msg[512];
		size_t blen = (size_t)(rte_be_to_cpu_16(udp->dgram_len) - 16), pos = 0, l;
		uint16_t reqid =
			(uint16_t)(((uint8_t *)(udp + 1))[0] << 8 | ((uint8_t *)(udp + 1))[1]);
		uint8_t nmac[6] = {0x02, 0, 0, 0, 0x01, p[5]};

		if (proto == MC_PROTO_ASCII) {
			CHECK(memcmp(body, "get ", 4) == 0, "sub-request %.20s", body);
			pos = 4;
		}
		while (k + 2 < max && (l = node_item(body, blen, &pos, msg)) != 0)
			out[k++] = udp_pkt(nmac, ip->dst_addr, 11211, router_ip,
					   rte_be_to_cpu_16(udp->src_port), reqid, 0, 1, msg, l);
		if (proto == MC_PROTO_BINARY)
			memcpy(msg, noop, 24), memcpy(msg + 12, body + blen - 12, 4), l = 24;
		else
			l = (size_t)sprintf((char *)msg,
					    proto == MC_PROTO_META ? "MN\r\n" : "END\r\n");
		out[k++] = udp_pkt(nmac, ip->dst_addr, 11211, router_ip,
				   rte_be_to_cpu_16(udp->src_port), reqid, 0, 1, msg, l);
		rte_pktmbuf_free(m);
	}
	return k;
}

/* Multi-get @p idx's request (@p req) or the merged reply one memcached would send (!req). */
static size_t multiget_text(uint32_t idx, bool req, uint8_t *out, size_t room)
{
	char keys[M_KEYS][24], val[M_VALUE];
	size_t l = 0;

	keys_of(idx, keys);
	if (proto == MC_PROTO_ASCII && req)
		l += (size_t)snprintf((char *)out, room, "get");
	for (int k = 0; k < M_KEYS; k++) {
		size_t kl = strlen(keys[k]);

		value_of(keys[k], val);
		if (proto == MC_PROTO_BINARY) {
			memset(out + l, 0, 28); /* header (+ the response's flags) */
			out[l] = req ? 0x80 : 0x81;
			out[l + 1] = MC_BIN_GETQ;
			out[l + 3] = req ? (uint8_t)kl : 0;
			out[l + 4] = req ? 0 : 4;
			out[l + 11] = (uint8_t)(req ? kl : 4 + M_VALUE);
			out[l + 15] = (uint8_t)(100 + k); /* the client's opaque */
			l += req ? 24 : 28;
			if (req)
				memcpy(out + l, keys[k], kl), l += kl;
			else
				memcpy(out + l, val, M_VALUE), l += M_VALUE;
		} else if (req) {
			l += (size_t)snprintf((char *)out + l, room - l,
					      proto == MC_PROTO_META ? "mg %s v\r\n" : " %s",
					      keys[k]);
		} else {
			if (proto == MC_PROTO_META)
				l += (size_t)snprintf((char *)out + l, room - l, "VA %d\r\n",
						      M_VALUE);
			else
				l += (size_t)snprintf((char *)out + l, room - l,
						      "VALUE %s 0 %d\r\n", keys[k], M_VALUE);
			memcpy(out + l, val, M_VALUE);
			memcpy(out + l + M_VALUE, "\r\n", 2);
			l += M_VALUE + 2;
		}
	}
	if (proto == MC_PROTO_BINARY) {
		memset(out + l, 0, 24);
		out[l] = req ? 0x80 : 0x81;
		out[l + 1] = MC_BIN_NOOP;
		out[l + 14] = 0xfe, out[l + 15] = 0xed;
		l += 24;
	} else {
		l += (size_t)snprintf((char *)out + l, room - l, "%s",
				      proto == MC_PROTO_META ? "mn\r\n"
				      : req		     ? "\r\n"
							     : "END\r\n");
		if (!req && proto == MC_PROTO_META)
			memcpy(out + l - 4, "MN", 2);
	}
	return l;
}

/* Check the merged replies on the TX ring: one per multi-get, byte for byte what one memcached
 * would send (values in key order, the client's opaques, one terminator). */
static void check_merged(uint32_t first, uint32_t n)
{
	void *objs[M_BATCH_MAX * 4];
	unsigned int got = rte_ring_dequeue_burst(txr, objs, RTE_DIM(objs), NULL);
	uint8_t want[2048];

	CHECK(got == n, "%u merged datagrams for %u multi-gets", got, n);
	for (unsigned int i = 0; i < got; i++) {
		struct rte_mbuf *m = objs[i];
		uint8_t *f = rte_pktmbuf_mtod_offset(m, uint8_t *, 42);
		uint16_t reqid = (uint16_t)(f[0] << 8 | f[1]);
		uint32_t idx = first + (uint32_t)(reqid - (uint16_t)first);
		size_t blen = rte_pktmbuf_data_len(m) - 50;
		size_t wl = multiget_text(idx, false, want, sizeof(want));

		CHECK(f[2] == 0 && f[3] == 0 && f[4] == 0 && f[5] == 1, "numbering of reply %u",
		      idx);
		size_t at = 0;

		while (at < wl && at < blen && f[8 + at] == want[at])
			at++;
		CHECK(blen == wl && at == wl,
		      "merged reply %u (%zu bytes, want %zu, differ at %zu)", idx, blen, wl, at);
		rte_pktmbuf_free(m);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static struct rte_mbuf *reqs[M_BATCH_MAX], *reps[M_BATCH_MAX * (M_KEYS + M_NODES)];
	char *def[] = {argv[0],	      "-l",	     "0",
		       "--no-huge",   "-m",	     "512",
		       "--no-pci",    "--no-shconf", "--no-telemetry",
		       "--log-level", "error",	     "--file-prefix",
		       NULL};
	char prefix[64];
	uint8_t text[1024];
	uint32_t batches = 200, batch = 64;
	bool quick = false;
	const char *json = NULL;
	int opt, eal_argc = (int)RTE_DIM(def);
	char **eal_argv = def;
	static const struct option lo[] = {
		{"quick", no_argument, NULL, 'q'},	 {"batches", required_argument, NULL, 'n'},
		{"proto", required_argument, NULL, 'p'}, {"batch", required_argument, NULL, 'b'},
		{"json", required_argument, NULL, 'j'},	 {NULL, 0, NULL, 0}};

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quick = true;
			batches = 10;
			break;
		case 'n':
			batches = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'b':
			batch = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'j':
			json = optarg;
			break;
		case 'p':
			proto = strcmp(optarg, "meta") == 0	? MC_PROTO_META
				: strcmp(optarg, "binary") == 0 ? MC_PROTO_BINARY
								: MC_PROTO_ASCII;
			if (proto == MC_PROTO_ASCII && strcmp(optarg, "ascii") != 0) {
				fprintf(stderr, "bench_multiget: --proto ascii|meta|binary\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr,
				"usage: bench_multiget [--quick] [--proto ascii|meta|binary] "
				"[--batches N] [--batch N] [--json FILE] [-- EAL-ARGS]\n");
			return 2;
		}
	}
	if (batch == 0 || batch > M_BATCH_MAX || batches == 0) {
		fprintf(stderr, "bench_multiget: --batch 1..%d, --batches >= 1\n", M_BATCH_MAX);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "bench_mget_%d", getpid());
	rw_rundir_remove_at_exit(prefix);
	def[RTE_DIM(def) - 1] = prefix;
	if (optind < argc) {
		eal_argv = argv + optind - 1;
		eal_argv[0] = argv[0];
		eal_argc = argc - optind + 1;
	}
	setup(eal_argc, eal_argv);

	struct dp_worker *w = dp_worker_get(dp, 0);
	double *cpk = calloc(batches, sizeof(double)), *split = calloc(batches, sizeof(double));
	double *merge = calloc(batches, sizeof(double));
	uint32_t next = 1;

	for (uint32_t b = 0; b < batches && !failed; b++) {
		unsigned int nsub = 0, nrep;
		uint64_t cs, cm;

		for (uint32_t i = 0; i < batch; i++) {
			size_t l = multiget_text(next + i, true, text, sizeof(text));

			reqs[i] = udp_pkt(client_mac, client_ip, (uint16_t)(20000 + i), router_ip,
					  M_LISTEN, (uint16_t)(next + i), 0, 1, text, l);
		}
		rte_ring_enqueue_bulk(rxr, (void **)reqs, batch, NULL);
		cs = drain_timed(w);
		nrep = node_replies(reps, RTE_DIM(reps), &nsub);
		CHECK(nsub == batch * M_NODES, "%u sub-requests for %u multi-gets", nsub, batch);
		rte_ring_enqueue_bulk(rxr, (void **)reps, nrep, NULL);
		cm = drain_timed(w);
		check_merged(next, batch);
		split[b] = (double)cs / batch;
		merge[b] = (double)cm / batch;
		cpk[b] = (double)(cs + cm) / (batch * M_KEYS);
		next += batch;
	}
	struct dp_stats s;

	dp_stats_get(dp, -1, &s);
	CHECK(dp_stats_identity(&s), "accounting identity");
	CHECK(s.ctr[DP_CTR_MGET_MERGED] == (uint64_t)batches * batch, "merged %" PRIu64,
	      s.ctr[DP_CTR_MGET_MERGED]);
	CHECK(s.ctr[DP_CTR_MGET_PARTIAL] == 0 && s.ctr[DP_CTR_MGET_REFUSED] == 0 &&
		      s.mget_live == 0 && s.slots_live == 0,
	      "no partial, refused or live multi-get left");
	qsort(cpk, batches, sizeof(double), cmp_double);
	qsort(split, batches, sizeof(double), cmp_double);
	qsort(merge, batches, sizeof(double), cmp_double);
	FILE *out = json ? fopen(json, "w") : stdout;

	if (out == NULL)
		return 1;
	fprintf(out,
		"{\"benchmark\": \"multiget\", \"proto\": \"%s\", \"quick\": %s, \"ok\": %s, "
		"\"nodes\": %d, "
		"\"keys_per_multiget\": %d, \"value_bytes\": %d, \"batches\": %u, \"batch\": %u, "
		"\"tsc_hz\": %" PRIu64 ", \"cycles_per_key\": %.1f, "
		"\"split_cycles_per_multiget\": %.1f, \"merge_cycles_per_multiget\": %.1f, "
		"\"merged\": %" PRIu64 ", \"subrequests\": %" PRIu64 "}\n",
		proto_name(), quick ? "true" : "false", failed ? "false" : "true", M_NODES, M_KEYS,
		M_VALUE, batches, batch, rte_get_tsc_hz(), cpk[batches / 2], split[batches / 2],
		merge[batches / 2], s.ctr[DP_CTR_MGET_MERGED], s.ctr[DP_CTR_MGET_SUBREQ]);
	if (json)
		fclose(out);
	fprintf(stderr,
		"%s multi-get 10 keys over 4 nodes: %.0f cycles/key (split %.0f + merge %.0f "
		"cycles per multi-get, medians of %u batches)\n",
		proto_name(), cpk[batches / 2], split[batches / 2], merge[batches / 2], batches);
	free(cpk);
	free(split);
	free(merge);
	dp_free(dp);
	pl_free(pl);
	rte_eal_cleanup();
	return failed;
}
