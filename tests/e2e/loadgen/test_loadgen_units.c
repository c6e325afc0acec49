/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The load generator's EAL-free parts: the latency histogram's quantiles, key names, the
 * zipf and uniform key choice against the exact probabilities, and request bytes in the
 * three protocols as memcached's protocol.txt / protocol_binary.h define them, and the hit
 * ratio over time (buckets of send time, the dip's minimum).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "loadgen.h"

static void opts_init(struct lg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->keys = 1000;
	o->value_size = 5;
	o->get_ratio = 0.9;
	strcpy(o->key_prefix, "lg:");
}

static void test_hist_quantiles(void **state)
{
	struct lg_hist *h = malloc(sizeof(*h));
	(void)state;

	lg_hist_reset(h);
	assert_int_equal(lg_hist_quantile(h, 0.5), 0);
	lg_hist_add(h, 12345);
	assert_int_equal(lg_hist_quantile(h, 0.5), 12345);
	assert_int_equal(lg_hist_quantile(h, 0.999), 12345);
	/* 1..1,000,000 cycles once each: the q-quantile is q * 1e6, within the 1/64 bucket. */
	lg_hist_reset(h);
	for (uint64_t v = 1; v <= 1000000; v++)
		lg_hist_add(h, v);
	static const double qs[] = {0.5, 0.9, 0.99, 0.999};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double want = qs[i] * 1e6, got = (double)lg_hist_quantile(h, qs[i]);

		assert_true(fabs(got - want) <= want / 64);
	}
	assert_int_equal(h->min, 1);
	assert_int_equal(h->max, 1000000);
	assert_int_equal(h->count, 1000000);
	free(h);
}

static void test_hist_buckets(void **state)
{
	unsigned int prev = 0;
	(void)state;

	/* Exact below 128; every value lies in [low(i), low(i + 1)); indices never fall. */
	for (uint64_t v = 0; v < 128; v++)
		assert_int_equal(lg_hist_low(lg_hist_index(v)), v);
	for (uint64_t v = 1; v < (1ULL << 40); v = v * 3 / 2 + 1) {
		unsigned int i = lg_hist_index(v);

		assert_true(i < LG_HIST_BUCKETS);
		assert_true(i >= prev);
		assert_true(lg_hist_low(i) <= v);
		assert_true(v < lg_hist_low(i + 1));
		assert_true((double)(lg_hist_low(i + 1) - lg_hist_low(i)) <= (double)v / 64 + 1);
		prev = i;
	}
	assert_true(lg_hist_index(UINT64_MAX) < LG_HIST_BUCKETS);
}

static void test_key_names(void **state)
{
	struct lg_opts o;
	struct lg_keys k;
	uint8_t buf[MC_KEY_MAX];
	(void)state;

	opts_init(&o);
	o.keys = 1000;
	assert_int_equal(lg_keys_init(&k, &o), 0);
	assert_int_equal(k.key_len, 6);
	lg_key_write(&k, 42, buf);
	assert_memory_equal(buf, "lg:042", 6);
	lg_key_write(&k, 999, buf);
	assert_memory_equal(buf, "lg:999", 6);
	lg_keys_free(&k);

	o.key_size = 20; /* padded with zeros to 20 bytes */
	assert_int_equal(lg_keys_init(&k, &o), 0);
	assert_int_equal(k.key_len, 20);
	lg_key_write(&k, 7, buf);
	assert_memory_equal(buf, "lg:00000000000000007", 20);
	lg_keys_free(&k);

	memset(o.key_prefix, 'p', 249);
	o.key_prefix[249] = '\0';
	o.key_size = 0;
	assert_int_equal(lg_keys_init(&k, &o), -ENAMETOOLONG); /* 249 + 3 digits > 250 */
}

/* Sampled frequencies against exact probabilities, within 5 standard deviations. */
static void check_freq(const struct lg_keys *k, const double *prob, uint32_t n, uint64_t samples)
{
	uint64_t *count = calloc(n, sizeof(uint64_t));
	struct lg_rng r = {.s = 0x1234567};

	for (uint64_t i = 0; i < samples; i++) {
		uint32_t key = lg_keys_pick(k, &r);

		assert_true(key < n);
		count[key]++;
	}
	for (uint32_t i = 0; i < n; i++) {
		double mean = prob[i] * (double)samples;
		double sd = sqrt(mean * (1 - prob[i]));

		if (fabs((double)count[i] - mean) > 5 * sd + 1)
			fail_msg("key %u: %" PRIu64 " picks, expected %.0f +- %.0f", i, count[i],
				 mean, sd);
	}
	free(count);
}

static void test_zipf(void **state)
{
	static const double exps[] = {0.5, 0.99, 1.5};
	enum { N = 200 };
	double prob[N];
	(void)state;

	for (size_t e = 0; e < sizeof(exps) / sizeof(exps[0]); e++) {
		struct lg_opts o;
		struct lg_keys k;
		double h = 0;

		opts_init(&o);
		o.keys = N;
		o.dist = LG_DIST_ZIPF;
		o.zipf_s = exps[e];
		assert_int_equal(lg_keys_init(&k, &o), 0);
		for (int i = 0; i < N; i++)
			h += 1.0 / pow(i + 1, exps[e]);
		for (int i = 0; i < N; i++)
			prob[i] = 1.0 / pow(i + 1, exps[e]) / h;
		check_freq(&k, prob, N, 2000000);
		lg_keys_free(&k);
	}
}

static void test_uniform(void **state)
{
	enum { N = 37 };
	double prob[N];
	struct lg_opts o;
	struct lg_keys k;
	(void)state;

	opts_init(&o);
	o.keys = N;
	assert_int_equal(lg_keys_init(&k, &o), 0);
	for (int i = 0; i < N; i++)
		prob[i] = 1.0 / N;
	check_freq(&k, prob, N, 1000000);
	lg_keys_free(&k);
}

/* One request of each kind: the bytes, and the router's parser agrees on command and key. */
static void check_req(enum mc_proto proto, enum lg_op op, const uint8_t *want, size_t want_len,
		      enum mc_cmd cmd)
{
	struct lg_opts o;
	struct lg_keys k;
	struct lg_req q;
	uint8_t buf[256];
	uint32_t len;
	struct mc_requests *reqs = malloc(sizeof(*reqs));

	opts_init(&o);
	o.proto = proto;
	assert_int_equal(lg_keys_init(&k, &o), 0);
	assert_int_equal(lg_req_init(&q, &k, &o), 0);
	len = lg_req_write(&q, op, 42, 0x0102, buf);
	assert_int_equal(len, want_len);
	assert_memory_equal(buf, want, want_len);
	assert_true(len <= lg_req_max_len(&q, op));
	assert_int_equal(mc_parse_requests(buf, len, reqs), MC_OK);
	assert_int_equal(reqs->nreq, 1);
	assert_int_equal(reqs->req[0].cmd, cmd);
	assert_int_equal(reqs->keys[0].len, 6);
	assert_memory_equal(buf + reqs->keys[0].off, "lg:042", 6);
	lg_req_free(&q);
	lg_keys_free(&k);
	free(reqs);
}

static void test_requests(void **state)
{
	static const uint8_t bin_get[] = {
		0x80, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, /* magic GET keylen 6 */
		0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x01, 0x02, /* body 6, opaque 0x0102 */
		0,    0,    0,	  0,	0,    0,    0,	  0,	'l', 'g', ':', '0', '4', '2'};
	static const uint8_t bin_set[] = {
		0x80, 0x01, 0x00, 0x06, 0x08, 0x00, 0x00, 0x00, /* SET keylen 6 extras 8 */
		0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x01, 0x02, /* body 8 + 6 + 5 = 19 */
		0,    0,    0,	  0,	0,    0,    0,	  0,	0,   0,	  0,
		0,    0,    0,	  0,	0, /* cas; flags, exptime */
		'l',  'g',  ':',  '0',	'4',  '2',  'a',  'b',	'c', 'd', 'e'};
	(void)state;

#define TXT(s) (const uint8_t *)(s), sizeof(s) - 1
	check_req(MC_PROTO_ASCII, LG_OP_GET, TXT("get lg:042\r\n"), MC_CMD_GET);
	check_req(MC_PROTO_ASCII, LG_OP_SET, TXT("set lg:042 0 0 5\r\nabcde\r\n"), MC_CMD_SET);
	check_req(MC_PROTO_META, LG_OP_GET, TXT("mg lg:042 v\r\n"), MC_CMD_MG);
	check_req(MC_PROTO_META, LG_OP_SET, TXT("ms lg:042 5\r\nabcde\r\n"), MC_CMD_MS);
#undef TXT
	check_req(MC_PROTO_BINARY, LG_OP_GET, bin_get, sizeof(bin_get), MC_CMD_GET);
	check_req(MC_PROTO_BINARY, LG_OP_SET, bin_set, sizeof(bin_set), MC_CMD_SET);
}

/* 100-cycle buckets: results land in the bucket of their time, the ratio is hits / GET
 * results (lost requests apart), the minimum skips buckets without a GET result, times past
 * the table count in its last bucket. */
static void test_series(void **state)
{
	struct lg_series s;
	uint32_t at = 99;
	(void)state;

	assert_int_equal(lg_series_init(&s, 0, 10), -EINVAL);
	assert_int_equal(lg_series_init(&s, 100, 10), 0);
	assert_int_equal(s.used, 0);
	assert_true(lg_series_min(&s, 0, 10, &at) < 0);
	for (int i = 0; i < 100; i++) /* bucket 0: all hits */
		lg_series_add(&s, (uint64_t)i, LG_SER_HIT);
	for (int i = 0; i < 80; i++) /* bucket 2: 80 hits, 20 misses, 5 lost */
		lg_series_add(&s, 200, LG_SER_HIT);
	for (int i = 0; i < 20; i++)
		lg_series_add(&s, 299, LG_SER_MISS);
	for (int i = 0; i < 5; i++)
		lg_series_add(&s, 250, LG_SER_LOST);
	lg_series_add(&s, 300, LG_SER_HIT);  /* bucket 3 */
	lg_series_add(&s, 400, LG_SER_LOST); /* bucket 4: lost only, no GET result */
	assert_int_equal(s.used, 5);
	assert_int_equal(s.b[0].n[LG_SER_HIT], 100);
	assert_int_equal(s.b[1].n[LG_SER_HIT] + s.b[1].n[LG_SER_MISS], 0);
	assert_int_equal(s.b[2].n[LG_SER_MISS], 20);
	assert_int_equal(s.b[2].n[LG_SER_LOST], 5);
	assert_true(fabs(lg_series_ratio(&s, 0) - 1.0) < 1e-12);
	assert_true(lg_series_ratio(&s, 1) < 0);
	assert_true(fabs(lg_series_ratio(&s, 2) - 0.8) < 1e-12);
	assert_true(lg_series_ratio(&s, 4) < 0);
	assert_true(fabs(lg_series_min(&s, 0, 10, &at) - 0.8) < 1e-12);
	assert_int_equal(at, 2);
	assert_true(fabs(lg_series_min(&s, 3, 10, &at) - 1.0) < 1e-12);
	assert_int_equal(at, 3);
	assert_true(lg_series_min(&s, 4, 10, NULL) < 0);
	lg_series_add(&s, 1000000, LG_SER_MISS); /* past the end: the last bucket */
	assert_int_equal(s.used, 10);
	assert_int_equal(s.b[9].n[LG_SER_MISS], 1);
	assert_int_equal(lg_series_index(&s, 999), 9);
	lg_series_free(&s);
	lg_series_add(&s, 0, LG_SER_HIT); /* no table: nothing counted, no crash */
}

/* Request frames: the templated builder (tmpl.c) against the old one (lg_frame_build_ref),
 * byte for byte, over protocols, kinds, key spaces and sizes, multi-gets, random addresses
 * and random request numbers, keys, source ports and IP ids; and both checksums of every
 * templated frame recomputed in full. */
struct frame_case {
	enum mc_proto proto;
	uint32_t keys, key_size, value_size, multiget;
	const char *prefix;
};

static void check_frames(const struct frame_case *c, struct lg_rng *r, uint32_t rounds)
{
	struct lg_opts o;
	struct lg_keys k;
	struct lg_req q;
	struct lg_tmpl t[2];
	struct rte_ether_addr sm, dm;
	uint8_t hdr[LG_HDR_LEN];
	uint8_t *want = malloc(4096), *got = malloc(4096);

	opts_init(&o);
	o.proto = c->proto;
	o.keys = c->keys;
	o.key_size = c->key_size;
	o.value_size = c->value_size;
	o.multiget = (uint16_t)c->multiget;
	strcpy(o.key_prefix, c->prefix);
	o.src_ip = (uint32_t)lg_rand(r);
	o.dst_ip = (uint32_t)lg_rand(r);
	o.dst_port = (uint16_t)lg_rand(r);
	for (int i = 0; i < RTE_ETHER_ADDR_LEN; i++) {
		sm.addr_bytes[i] = (uint8_t)lg_rand(r);
		dm.addr_bytes[i] = (uint8_t)lg_rand(r);
	}
	assert_int_equal(lg_keys_init(&k, &o), 0);
	assert_int_equal(lg_req_init(&q, &k, &o), 0);
	lg_frame_hdr_init(hdr, &sm, &dm, &o);
	for (int op = LG_OP_GET; op <= LG_OP_SET; op++)
		assert_int_equal(lg_tmpl_init(&t[op], &q, (enum lg_op)op, hdr), 0);
	for (uint32_t i = 0; i < rounds; i++) {
		enum lg_op op = (lg_rand(r) & 1) ? LG_OP_SET : LG_OP_GET;
		/* Edges first: key 0 and the last key, request 0 and 65535, ports 0 and 65535. */
		uint32_t key = i == 0 ? 0 : i == 1 ? c->keys - 1 : (uint32_t)(lg_rand(r) % c->keys);
		uint32_t n = i == 1 ? 0xffffffffu : (uint32_t)lg_rand(r);
		uint16_t sport = i == 1 ? 0xffff : (uint16_t)lg_rand(r);
		uint16_t ipid = i == 1 ? 0xffff : (uint16_t)lg_rand(r);
		uint32_t wl, gl;

		if (i == 0)
			n = sport = ipid = 0;
		wl = lg_frame_build_ref(&q, hdr, op, key, n, sport, ipid, want);
		memset(got, 0xa5, 4096);
		gl = lg_tmpl_write(&t[op], key, n, sport, ipid, got);
		assert_int_equal(gl, wl);
		if (memcmp(got, want, wl) != 0)
			fail_msg("proto %d op %d key %u n %u sport %u ipid %u: frames differ",
				 c->proto, op, key, n, sport, ipid);
		/* Independently of the old builder: the checksums hold over the whole frame. */
		{
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(got + RTE_ETHER_HDR_LEN);
			struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
			uint16_t ick = ip->hdr_checksum, uck = udp->dgram_cksum;

			ip->hdr_checksum = 0;
			assert_int_equal(rte_ipv4_cksum(ip), ick);
			ip->hdr_checksum = ick;
			udp->dgram_cksum = 0;
			assert_int_equal(rte_ipv4_udptcp_cksum(ip, udp), uck);
			udp->dgram_cksum = uck;
			/* The receiver's check: the whole datagram with its pseudo-header sums
			 * to 0xffff. */
			assert_int_equal(lg_cksum_fold((uint32_t)rte_raw_cksum(udp, gl - 34) +
						       rte_ipv4_phdr_cksum(ip, 0)),
					 0xffff);
		}
	}
	/* A UDP checksum that computes to 0 goes out as 0xffff (RFC 768): find a source port
	 * that makes it so and compare. */
	for (uint32_t sp = 0; sp < 65536; sp++) {
		struct rte_udp_hdr *udp;

		lg_frame_build_ref(&q, hdr, LG_OP_GET, 1, 7, (uint16_t)sp, 9, want);
		udp = (struct rte_udp_hdr *)(want + LG_HDR_LEN - sizeof(*udp));
		if (udp->dgram_cksum != 0xffff)
			continue;
		lg_tmpl_write(&t[LG_OP_GET], 1, 7, (uint16_t)sp, 9, got);
		assert_memory_equal(got, want, t[LG_OP_GET].len);
		break;
	}
	for (int op = LG_OP_GET; op <= LG_OP_SET; op++)
		lg_tmpl_free(&t[op]);
	lg_req_free(&q);
	lg_keys_free(&k);
	free(want);
	free(got);
}

static void test_frames(void **state)
{
	static const struct frame_case cases[] = {
		{MC_PROTO_ASCII, 100000, 0, 100, 1, "key:"},
		{MC_PROTO_META, 100000, 0, 100, 1, "key:"},
		{MC_PROTO_BINARY, 100000, 0, 100, 1, "key:"},
		{MC_PROTO_ASCII, 1000, 0, 5, 1, "lg:"},
		{MC_PROTO_META, 1000, 0, 1400, 1, "lg:"},
		{MC_PROTO_BINARY, 1000, 0, 1400, 1, "lg:"},
		{MC_PROTO_ASCII, 1, 0, 0, 1, "k"},		/* one key: one digit */
		{MC_PROTO_ASCII, 10, 0, 1, 1, "ab"},		/* odd prefix: digits at odd offsets */
		{MC_PROTO_META, 12345, 31, 7, 1, "m"},		/* padded, odd length */
		{MC_PROTO_BINARY, 999999, 40, 33, 1, "bin-"},	/* padded */
		{MC_PROTO_BINARY, 7, 0, 2, 1, "odd"},
		{MC_PROTO_ASCII, 100000, 0, 100, 10, "key:"},	/* multi-get */
		{MC_PROTO_ASCII, 77, 0, 100, 3, "q"},
		{MC_PROTO_ASCII, 5000, 9, 100, 100, "mg:"},	/* 100 keys */
	};
	struct lg_rng r = {.s = 0x5eed1234abcdULL};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_frames(&cases[i], &r, 3000);
}

/* Ones' complement folding: end-around carry, twice when the first fold carries. */
static void test_cksum_fold(void **state)
{
	struct lg_rng r = {.s = 99};
	(void)state;

	assert_int_equal(lg_cksum_fold(0), 0);
	assert_int_equal(lg_cksum_fold(0xffff), 0xffff);
	assert_int_equal(lg_cksum_fold(0x10000), 1);
	assert_int_equal(lg_cksum_fold(0x1fffe), 0xffff); /* 0xfffe + 1, no second carry */
	assert_int_equal(lg_cksum_fold(0x2ffff), 0x2);	  /* 0xffff + 2 carries again */
	for (int i = 0; i < 100000; i++) {
		uint32_t words = (uint32_t)(lg_rand(&r) % 64) + 1, s = 0, ref = 0;

		for (uint32_t w = 0; w < words; w++) {
			uint16_t v = (uint16_t)lg_rand(&r);

			s += v;
			ref += v; /* reference: fold after every word */
			ref = (ref & 0xffff) + (ref >> 16);
		}
		assert_int_equal(lg_cksum_fold(s), ref);
	}
}

/* Node replies: the templated reply (lg_node_tmpl + lg_node_tmpl_write) against the general
 * one (lg_node_body + lg_node_dgram_ref), byte for byte, for random requests in every
 * protocol and shape (those that take a template and those that do not), hits and misses,
 * random addresses and ports; and the UDP checksum recomputed in full. */
struct node_req {
	const char *text; /* NULL: binary */
	uint8_t opcode;	  /* binary */
	bool fast;	  /* expected to take a template */
};

static uint32_t node_req_write(const struct node_req *nr, const char *key, uint32_t opaque,
			       uint16_t reqid, uint8_t *p)
{
	struct mc_frame f = {.request_id = reqid, .seq = 0, .total = 1, .reserved = 0};
	uint32_t klen = (uint32_t)strlen(key), len;

	mc_frame_write(p, &f);
	if (nr->text != NULL) {
		len = (uint32_t)snprintf((char *)p + MC_FRAME_HDR_LEN, 1024, nr->text, key);
		return MC_FRAME_HDR_LEN + len;
	}
	memset(p + MC_FRAME_HDR_LEN, 0, MC_BIN_HDR_LEN);
	p[MC_FRAME_HDR_LEN] = 0x80;
	p[MC_FRAME_HDR_LEN + 1] = nr->opcode;
	p[MC_FRAME_HDR_LEN + 3] = (uint8_t)klen;
	p[MC_FRAME_HDR_LEN + 11] = (uint8_t)klen;
	{
		uint32_t be = rte_cpu_to_be_32(opaque);

		memcpy(p + MC_FRAME_HDR_LEN + 12, &be, 4);
	}
	memcpy(p + MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN, key, klen);
	return MC_FRAME_HDR_LEN + MC_BIN_HDR_LEN + klen;
}

static void check_node_replies(uint32_t value_size, double hit_ratio, struct lg_rng *r)
{
	static const struct node_req reqs[] = {
		{"get %s\r\n", 0, true},
		{"mg %s v\r\n", 0, true},
		{"mg %s s v f t c\r\n", 0, true},
		{"mg %s\r\n", 0, true},
		{"mg %s k v\r\n", 0, false},	/* k: the key echoed */
		{"mg %s v Oabc\r\n", 0, false}, /* O: the opaque echoed */
		{"mg %s v q\r\n", 0, false},	/* quiet */
		{"gets %s\r\n", 0, false},
		{"get %s lg:other\r\n", 0, false}, /* two keys */
		{"set %s 0 0 1\r\nx\r\n", 0, false},
		{NULL, MC_BIN_GET, true},
		{NULL, MC_BIN_GETK, true},
		{NULL, MC_BIN_GETQ, false},
	};
	struct lg_node_core *nd = calloc(1, sizeof(*nd));
	uint8_t *req = malloc(2048), *want = malloc(4096), *got = malloc(4096);
	uint8_t hdr[LG_HDR_LEN];
	uint64_t ctr[LG_CTR_COUNT];
	uint32_t fast[sizeof(reqs) / sizeof(reqs[0])] = {0};
	struct rte_ether_addr mac = {{2, 0, 0, 0, 0, 9}};

	nd->value_size = value_size;
	nd->hit_thresh = (uint64_t)(hit_ratio * 9007199254740992.0);
	nd->value_len_text_len = (uint8_t)snprintf(nd->value_len_text, sizeof(nd->value_len_text),
						   "%u", value_size);
	nd->value = malloc(value_size + 1);
	nd->body = malloc(LG_NODE_BODY_MAX);
	nd->req = malloc(sizeof(*nd->req));
	for (uint32_t i = 0; i < value_size; i++)
		nd->value[i] = (uint8_t)('a' + i % 26);
	for (uint32_t i = 0; i < 20000; i++) {
		size_t w = (size_t)(lg_rand(r) % (sizeof(reqs) / sizeof(reqs[0])));
		char key[64];
		uint32_t plen, wl, gl, len;
		const struct lg_reply_tmpl *t;
		const struct mc_key *k;
		bool hit;

		/* Keys of two lengths, odd and even, so templates of both are learnt. */
		snprintf(key, sizeof(key), (lg_rand(r) & 1) ? "key:%05u" : "k%06u",
			 (unsigned int)(lg_rand(r) % 100000));
		for (size_t b = 0; b < sizeof(hdr); b++)
			hdr[b] = (uint8_t)lg_rand(r);
		plen = node_req_write(&reqs[w], key, (uint32_t)lg_rand(r), (uint16_t)lg_rand(r), req);
		assert_int_equal(mc_parse_datagram_flags(req, plen, MC_PARSE_CTL_KEYS, nd->req),
				 MC_OK);
		k = &nd->req->keys[nd->req->req[0].key_first];
		hit = lg_node_key_held(nd, req + k->off, k->len);
		t = lg_node_tmpl(nd, req, hit);
		if (t == NULL) {
			if (reqs[w].fast && value_size < 1000)
				fail_msg("'%s' op %u: no template", reqs[w].text ? reqs[w].text : "bin",
					 reqs[w].opcode);
			continue;
		}
		assert_true(reqs[w].fast);
		fast[w]++;
		memset(ctr, 0, sizeof(ctr));
		assert_true(lg_node_body(nd, req, ctr, &len));
		wl = lg_node_dgram_ref(hdr, &mac, (uint16_t)i, nd->req->frame.request_id, 0, 1,
				       nd->body, len, want);
		memset(got, 0x5a, 4096);
		gl = lg_node_tmpl_write(nd, t, hdr, req, &mac, (uint16_t)i, got);
		assert_int_equal(gl, wl);
		if (memcmp(got, want, wl) != 0)
			fail_msg("'%s' op %u key %s hit %d: replies differ",
				 reqs[w].text ? reqs[w].text : "bin", reqs[w].opcode, key, hit);
		{
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(got + RTE_ETHER_HDR_LEN);
			struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

			assert_int_equal(lg_cksum_fold((uint32_t)rte_raw_cksum(udp, gl - 34) +
						       rte_ipv4_phdr_cksum(ip, 0)),
					 0xffff);
		}
	}
	for (size_t w = 0; w < sizeof(reqs) / sizeof(reqs[0]); w++)
		if (reqs[w].fast && value_size < 1000 && fast[w] == 0)
			fail_msg("request %zu never took its template", w);
	free(nd->value);
	free(nd->body);
	free(nd->req);
	free(nd);
	free(req);
	free(want);
	free(got);
}

static void test_node_replies(void **state)
{
	struct lg_rng r = {.s = 0xfeedULL};
	(void)state;

	check_node_replies(100, 0.5, &r);
	check_node_replies(1, 0.9, &r);
	check_node_replies(0, 0.5, &r);
	check_node_replies(1400, 0.5, &r); /* two datagrams: the general path */
}

/* The node's fast path (lg_node_fast: a learnt request, no parse, the reply written over the
 * request) against the general one (parse, lg_node_body, lg_node_dgram_ref), byte for byte, in
 * every protocol: learnt as node.c learns (fast first, the general path learns what it
 * templated); requests that take no template never take the fast path; a learnt request with
 * one byte changed (a space or DEL in the key, another command, length) either falls through
 * or gets exactly the general path's reply. */
static void check_node_fast(uint32_t value_size, double hit_ratio, struct lg_rng *r)
{
	static const struct node_req reqs[] = {
		{"get %s\r\n", 0, true},
		{"mg %s v\r\n", 0, true},
		{"mg %s s v f t c\r\n", 0, true},
		{"mg %s k v\r\n", 0, false},
		{"mg %s v q\r\n", 0, false},
		{"gets %s\r\n", 0, false},
		{"get %s lg:other\r\n", 0, false},
		{"set %s 0 0 1\r\nx\r\n", 0, false},
		{NULL, MC_BIN_GET, true},
		{NULL, MC_BIN_GETK, true},
		{NULL, MC_BIN_GETQ, false},
	};
	enum { NREQ = sizeof(reqs) / sizeof(reqs[0]) };
	struct lg_node_core *nd = calloc(1, sizeof(*nd));
	uint8_t *req = malloc(2048), *frame = malloc(4096), *want = malloc(4096);
	uint64_t ctr[LG_CTR_COUNT];
	uint32_t fast[NREQ] = {0}, mutated_fast = 0;
	struct rte_ether_addr mac = {{2, 0, 0, 0, 0, 9}};

	nd->value_size = value_size;
	nd->hit_thresh = hit_ratio >= 1.0 ? 1ULL << 53 : (uint64_t)(hit_ratio * 9007199254740992.0);
	nd->value_len_text_len = (uint8_t)snprintf(nd->value_len_text, sizeof(nd->value_len_text),
						   "%u", value_size);
	nd->value = malloc(value_size + 1);
	nd->body = malloc(LG_NODE_BODY_MAX);
	nd->req = malloc(sizeof(*nd->req));
	for (uint32_t i = 0; i < value_size; i++)
		nd->value[i] = (uint8_t)('a' + i % 26);
	for (uint32_t i = 0; i < 30000; i++) {
		size_t w = (size_t)(lg_rand(r) % NREQ);
		bool mutate = lg_rand(r) % 4 == 0, hit = false, general_ok, fast_hit = false;
		char key[64];
		uint32_t plen, wl = 0, fl, len = 0;
		const struct lg_reply_tmpl *t = NULL;

		snprintf(key, sizeof(key), (lg_rand(r) & 1) ? "key:%05u" : "k%06u",
			 (unsigned int)(lg_rand(r) % 100000));
		plen = node_req_write(&reqs[w], key, (uint32_t)lg_rand(r), (uint16_t)lg_rand(r), req);
		if (mutate) { /* one byte after the request id: to a random one, a space or DEL */
			uint32_t at = 2 + (uint32_t)(lg_rand(r) % (plen - 2));
			uint32_t how = (uint32_t)(lg_rand(r) % 3);

			req[at] = how == 0 ? ' ' : how == 1 ? 0x7f : (uint8_t)lg_rand(r);
		}
		for (size_t b = 0; b < LG_HDR_LEN; b++)
			frame[b] = (uint8_t)lg_rand(r);
		memcpy(frame + LG_HDR_LEN, req, plen);
		/* The general path, on its own copy of the request. */
		general_ok = mc_parse_datagram_flags(req, plen, MC_PARSE_CTL_KEYS, nd->req) == MC_OK;
		if (general_ok) {
			memset(ctr, 0, sizeof(ctr));
			general_ok = lg_node_body(nd, req, ctr, &len) && len > 0 &&
				     len <= LG_NODE_DGRAM_BODY;
		}
		if (general_ok)
			wl = lg_node_dgram_ref(frame, &mac, (uint16_t)i, nd->req->frame.request_id,
					       0, 1, nd->body, len, want);
		/* The fast path, in place. */
		fl = lg_node_fast(nd, frame, frame + LG_HDR_LEN, plen, &mac, (uint16_t)i, 4096, frame,
				  &fast_hit);
		if (fl != 0) {
			if (!general_ok)
				fail_msg("'%s' op %u key %s: fast reply, the general path has none",
					 reqs[w].text ? reqs[w].text : "bin", reqs[w].opcode, key);
			if (!reqs[w].fast && !mutate)
				fail_msg("'%s': no template, yet the fast path", reqs[w].text);
			assert_int_equal(fl, wl);
			if (memcmp(frame, want, wl) != 0)
				fail_msg("'%s' op %u key %s mutated %d: replies differ",
					 reqs[w].text ? reqs[w].text : "bin", reqs[w].opcode, key,
					 mutate);
			assert_int_equal(fast_hit, ctr[LG_CTR_NODE_HITS] == 1);
			if (mutate)
				mutated_fast++;
			else
				fast[w]++;
			continue;
		}
		/* Learn as node.c does: the templated ones. */
		if (general_ok && nd->req->nreq == 1 && nd->req->req[0].key_count == 1 &&
		    nd->req->req[0].kind == MC_KIND_READ) {
			const struct mc_key *k = &nd->req->keys[nd->req->req[0].key_first];

			hit = lg_node_key_held(nd, req + k->off, k->len);
			t = lg_node_tmpl(nd, req, hit);
			if (t != NULL)
				lg_node_pat_learn(nd, req, plen, hit, t);
		}
	}
	for (size_t w = 0; w < NREQ; w++)
		if (reqs[w].fast && value_size < 1000 && fast[w] == 0)
			fail_msg("request %zu never took the fast path", w);
	(void)mutated_fast;
	free(nd->value);
	free(nd->body);
	free(nd->req);
	free(nd);
	free(req);
	free(frame);
	free(want);
}

static void test_node_fast(void **state)
{
	struct lg_rng r = {.s = 0xf00dULL};
	(void)state;

	check_node_fast(100, 1.0, &r);
	check_node_fast(100, 0.5, &r);
	check_node_fast(0, 0.7, &r);
	check_node_fast(1400, 0.5, &r); /* two datagrams: never fast */
}

/* The slow verdict on a reply datagram @p p (frame header included) to @p tmpl: a whole reply
 * of one hit (and ASCII's END) of @p vsize bytes. */
static bool parser_says_hit(const struct mc_requests *tmpl, const uint8_t *p, uint32_t len,
			    uint32_t vsize)
{
	struct mc_reply_parser *rp = malloc(sizeof(*rp));
	struct mc_reply_event ev;
	bool first = true, hit = false, more = false;
	int rc;

	mc_reply_init(rp);
	mc_reply_expect(rp, tmpl);
	if (mc_reply_feed_datagram(rp, p, len) != MC_OK)
		goto out;
	while ((rc = mc_reply_next(rp, &ev)) != MC_EV_MORE) {
		if (rc < 0)
			goto out;
		if (rc != MC_EV_ITEM)
			continue;
		if (!first) {
			more |= ev.result != MC_RES_END;
			continue;
		}
		first = false;
		hit = ev.result == MC_RES_HIT && ev.value_len == vsize;
	}
	hit = hit && !more && mc_reply_done(rp);
out:
	free(rp);
	return hit;
}

/* Expected replies: the reply check that skips the parser accepts a reply only when the
 * parser would find it a whole single hit of the right size; the node emulator's real hits
 * to random keys match; random corruptions match only when the parser agrees. */
static void test_expect(void **state)
{
	static const enum mc_proto protos[] = {MC_PROTO_ASCII, MC_PROTO_META, MC_PROTO_BINARY};
	static const uint32_t vsizes[] = {100, 5, 1300};
	struct lg_rng r = {.s = 0xabcdefULL};
	uint8_t *req = malloc(2048), *rep = malloc(4096);
	(void)state;

	for (size_t pi = 0; pi < 3; pi++)
		for (size_t vi = 0; vi < 3; vi++) {
			struct lg_opts o;
			struct lg_keys k;
			struct lg_req q;
			struct lg_node_core *nd = calloc(1, sizeof(*nd));
			struct lg_expect *x = calloc(1, sizeof(*x));
			uint64_t ctr[LG_CTR_COUNT] = {0};
			uint32_t matched = 0, mutated_ok = 0;

			opts_init(&o);
			o.proto = protos[pi];
			o.keys = 100000;
			o.value_size = vsizes[vi];
			strcpy(o.key_prefix, "key:");
			assert_int_equal(lg_keys_init(&k, &o), 0);
			assert_int_equal(lg_req_init(&q, &k, &o), 0);
			nd->value_size = vsizes[vi];
			nd->hit_thresh = 1ULL << 53;
			nd->value_len_text_len = (uint8_t)snprintf(
				nd->value_len_text, sizeof(nd->value_len_text), "%u", vsizes[vi]);
			nd->value = malloc(vsizes[vi] + 1);
			nd->body = malloc(LG_NODE_BODY_MAX);
			nd->req = malloc(sizeof(*nd->req));
			for (uint32_t i = 0; i < vsizes[vi]; i++)
				nd->value[i] = (uint8_t)('a' + i % 26);
			for (uint32_t i = 0; i < 4000; i++) {
				struct mc_frame f = {(uint16_t)i, 0, 1, 0};
				uint32_t key = (uint32_t)(lg_rand(&r) % o.keys), len, plen;
				bool fast, slow;

				mc_frame_write(req, &f);
				plen = MC_FRAME_HDR_LEN + lg_req_write(&q, LG_OP_GET, key, (uint16_t)i,
								       req + MC_FRAME_HDR_LEN);
				assert_int_equal(mc_parse_datagram_flags(req, plen, MC_PARSE_CTL_KEYS,
									 nd->req),
						 MC_OK);
				assert_true(lg_node_body(nd, req, ctr, &len));
				mc_frame_write(rep, &f);
				memcpy(rep + MC_FRAME_HDR_LEN, nd->body, len);
				if (i == 0) { /* learnt from the first, as gen.c does */
					assert_true(parser_says_hit(q.tmpl[LG_OP_GET], rep,
								    MC_FRAME_HDR_LEN + len,
								    vsizes[vi]));
					lg_expect_learn(x, o.proto, rep + MC_FRAME_HDR_LEN, len,
							k.key_len);
					assert_true(x->valid);
				}
				if (i % 2 == 1) { /* corrupt: one byte, or the length */
					if (lg_rand(&r) % 4 == 0)
						len -= (uint32_t)(lg_rand(&r) % 3);
					else
						rep[MC_FRAME_HDR_LEN + lg_rand(&r) % len] =
							(uint8_t)lg_rand(&r);
				}
				fast = lg_expect_match(x, rep + MC_FRAME_HDR_LEN, len);
				slow = parser_says_hit(q.tmpl[LG_OP_GET], rep, MC_FRAME_HDR_LEN + len,
						       vsizes[vi]);
				if (fast && !slow)
					fail_msg("proto %d size %u key %u: matched, the parser says no",
						 o.proto, vsizes[vi], key);
				if (i % 2 == 0) {
					assert_true(fast); /* an untouched hit always matches */
					matched++;
				} else if (fast) {
					mutated_ok++;
				}
			}
			assert_true(matched == 2000);
			(void)mutated_ok;
			lg_req_free(&q);
			lg_keys_free(&k);
			free(nd->value);
			free(nd->body);
			free(nd->req);
			free(nd);
			free(x);
		}
	free(req);
	free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_quantiles), cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_key_names),      cmocka_unit_test(test_zipf),
		cmocka_unit_test(test_uniform),	       cmocka_unit_test(test_requests),
		cmocka_unit_test(test_series),	       cmocka_unit_test(test_frames),
		cmocka_unit_test(test_cksum_fold),	       cmocka_unit_test(test_node_replies),
		cmocka_unit_test(test_expect),
		cmocka_unit_test(test_node_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
