/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hardening of the request path (issue 12), each finding with the test that would have caught
 * it: quiet reads that pinned their slot for the whole request timeout, one client holding
 * every slot, a slot kept for a request the TX queue dropped, answers to a group source MAC,
 * ICMP echo to anyone, the optional client MAC binding, and UDP checksums never checked.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <rte_icmp.h>

#include "dp_test.h"

#define CLIENT_B "198.18.0.11"

static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mcast_mac[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
static const uint8_t gw_mac[6] = {0x02, 0, 0, 0, 0, 0x20};

struct fwd {
	uint16_t sport; /* router's source port towards the node */
	uint16_t reqid; /* request id the node sees */
	char node_ip[24];
};

/* A request from @p sip (NULL: T_CLIENT_IP) and @p smac (NULL: t_client_mac). */
static struct rte_mbuf *req_from(const char *sip, const uint8_t *smac, uint16_t sport,
				 uint16_t reqid, const void *text, size_t len)
{
	uint8_t buf[1500];
	struct t_pkt_spec s = {0};

	assert_true(len + 8 <= sizeof(buf));
	buf[0] = (uint8_t)(reqid >> 8);
	buf[1] = (uint8_t)reqid;
	memcpy(buf + 2, "\x00\x00\x00\x01\x00\x00", 6);
	memcpy(buf + 8, text, len);
	s.sip = sip;
	s.src_mac = smac;
	s.payload = buf;
	s.plen = len + 8;
	s.sport = sport;
	s.dport = T_LISTEN;
	return t_pkt(&s);
}

/* Poll worker 0 until its RX ring is empty. */
static void poll_all(void)
{
	do
		t_poll(0);
	while (rte_ring_count(rig.rx[0]) != 0);
}

/* Take the next sent packet, a request forwarded to a node: how it left. */
static struct fwd forwarded(void)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;
	struct fwd f;
	struct in_addr a;

	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 11211);
	f.sport = rte_be_to_cpu_16(v.udp->src_port);
	f.reqid = v.reqid;
	a.s_addr = v.ip->dst_addr;
	snprintf(f.node_ip, sizeof(f.node_ip), "%s", inet_ntoa(a));
	rte_pktmbuf_free(m);
	return f;
}

/* Send @p text from @p sip and expect it forwarded. */
static struct fwd send_ok(const char *sip, uint16_t sport, uint16_t reqid, const void *text,
			  size_t len)
{
	t_inject(0, req_from(sip, NULL, sport, reqid, text, len));
	t_poll(0);
	return forwarded();
}

/* Feed @p m, expect nothing sent and drop reason @p why counted once more. */
static void expect_drop(struct rte_mbuf *m, enum dp_drop why)
{
	uint64_t before = t_drop(why);

	t_inject(0, m);
	t_poll(0);
	assert_int_equal(t_sent_count(0), 0);
	if (t_drop(why) != before + 1)
		fail_msg("expected drop reason %s", dp_drop_name(why));
}

/* A binary request (magic 0x80) with @p opcode for @p key, no extras: header + key. */
static size_t bin_req(uint8_t *out, uint8_t opcode, const char *key, uint32_t opaque)
{
	size_t kl = strlen(key);

	memset(out, 0, 24);
	out[0] = 0x80;
	out[1] = opcode;
	out[3] = (uint8_t)kl;
	out[11] = (uint8_t)kl;
	memcpy(out + 12, &opaque, 4);
	memcpy(out + 24, key, kl);
	return 24 + kl;
}

#define BIN_GETQ 0x09

/* ---- 1. quiet reads do not pin slots; the per-client cap --------------------------------- */

/* A lone quiet read is answered by one message (a hit) or an empty one (a miss): its slot is
 * free once that message passed. Before: its parser could never say done, the slot waited for
 * request_ms. */
static void test_lone_quiet_read_ends_with_first_message(void **state)
{
	uint8_t req[64], hit[64] = {0x81, BIN_GETQ, 0, 0, 4, 0, 0, 0, 0, 0, 0, 7};
	struct fwd f;
	struct dp_stats s;
	size_t n;

	(void)state;
	t_dp_start(1, 4, NULL);
	/* A miss: memcached sends an empty message (seq 0, total 0), passed as it is. */
	n = bin_req(req, BIN_GETQ, "foo", 0x11);
	f = send_ok(NULL, 5555, 1, req, n);
	assert_int_equal(t_stats().slots_live, 1);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 0, "", 0));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	s = t_stats();
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_COMPLETED], 1);
	/* A hit: one binary response with flags and the value. */
	f = send_ok(NULL, 5555, 2, req, n);
	memcpy(hit + 24, "\0\0\0\0bar", 7);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, hit, 31));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	assert_int_equal(t_stats().slots_live, 0);
	/* Meta: `mg <key> v q`, a hit. */
	f = send_ok(NULL, 5555, 3, "mg foo v q\r\n", 12);
	assert_int_equal(t_stats().slots_live, 1);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "VA 3\r\nbar\r\n", 11));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	s = t_stats();
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_COMPLETED], 3);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_EXPIRED] + s.ctr[DP_CTR_SLOTS_QUIET_EXPIRED], 0);
	t_dp_stop();
}

static void quiet_5ms(struct dp_config *c)
{
	c->quiet_read_ms = 5;
	c->request_timeout_ms = 60000;
}

/* Replies without an end the router can tell are freed after quiet_read_ms, on time even in a
 * large table (the sweep visits 16 slots a poll); others keep request_ms. */
static void test_quiet_read_grace(void **state)
{
	uint8_t req[64];
	size_t n = bin_req(req, BIN_GETQ, "foo", 1);
	const char *pipe = "mg foo v\r\nmg foo v q\r\n";
	struct dp_stats s;

	(void)state;
	t_dp_start(1, 4, quiet_5ms);
	send_ok(NULL, 5555, 1, req, n);				    /* lone GETQ, no answer */
	send_ok(NULL, 5555, 2, "mg foo v q\r\nmg foo v q\r\n", 24); /* two quiet reads */
	send_ok(NULL, 5555, 3, pipe, strlen(pipe));		    /* ends with a quiet read */
	send_ok(NULL, 5555, 4, "get foo\r\n", 9); /* an ordinary get: request_ms */
	assert_int_equal(t_stats().slots_live, 4);
	usleep(10000);
	t_poll(0);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_SLOTS_QUIET_EXPIRED], 3);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_EXPIRED], 0);
	assert_int_equal(s.slots_live, 1);
	t_dp_stop();
}

static void quiet_flood_cfg(struct dp_config *c)
{
	c->slots = 256;
	c->quiet_read_ms = 2;
	c->request_timeout_ms = 60000;
}

/* Lone GETQ misses at several times the table's size per request_ms from one client, whose
 * node never answers: a second client's gets are all served. Before: the table filled with
 * quiet slots and the second client got no_free_slot. */
static void test_quiet_flood_leaves_room(void **state)
{
	uint8_t req[64];
	char key[16];
	uint32_t served = 0;
	struct dp_stats s;

	(void)state;
	t_dp_start(1, 4, quiet_flood_cfg);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 100; i++) {
			snprintf(key, sizeof(key), "q%d", i);
			size_t n = bin_req(req, BIN_GETQ, key, (uint32_t)i);

			t_inject(0,
				 req_from(NULL, NULL, (uint16_t)(2000 + i), (uint16_t)i, req, n));
		}
		t_inject(0, req_from(CLIENT_B, NULL, 7777, (uint16_t)round, "get b\r\n", 7));
		poll_all();
		for (struct rte_mbuf *m; (m = t_sent(0)) != NULL; rte_pktmbuf_free(m)) {
			struct t_view v;

			t_view_udp(m, &v, true);
			served += rte_be_to_cpu_16(v.udp->src_port) >= T_REPLY_BASE &&
				  v.plen == 8 + 7 && memcmp(v.payload + 8, "get b\r\n", 7) == 0;
		}
		usleep(3000);
	}
	s = t_stats();
	assert_int_equal(served, 20);
	assert_int_equal(s.drop[DP_DROP_NO_SLOT], 0);
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], 20 * 101);
	assert_true(s.ctr[DP_CTR_SLOTS_QUIET_EXPIRED] >= 19 * 100);
	t_dp_stop();
}

static void cap_4(struct dp_config *c)
{
	c->client_slots_max = 4;
}

/* One client holds at most client_slots_max slots; the others are served meanwhile. */
static void test_client_slot_cap(void **state)
{
	struct fwd f[6];
	char text[32];

	(void)state;
	t_dp_start(1, 4, cap_4);
	for (int i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "get a%d\r\n", i);
		f[i] = send_ok(NULL, (uint16_t)(3000 + i), (uint16_t)i, text, strlen(text));
	}
	expect_drop(req_from(NULL, NULL, 3004, 4, "get a4\r\n", 8), DP_DROP_CLIENT_SLOTS);
	/* noreply writes keep no slot: not capped. */
	send_ok(NULL, 3005, 5, "set a 0 0 1 noreply\r\nx\r\n", 24);
	/* A multi-get over several nodes would take one slot per node. */
	expect_drop(req_from(NULL, NULL, 3006, 6, "get a0 a1 a2 a3 a4 a5 a6 a7\r\n", 29),
		    DP_DROP_CLIENT_SLOTS);
	send_ok(CLIENT_B, 4000, 1, "get b\r\n", 7);
	/* A slot given back (its reply passed) makes room for one more. */
	t_inject(0, t_reply(f[0].node_ip, 11211, f[0].sport, f[0].reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	rte_pktmbuf_free(t_sent(0));
	send_ok(NULL, 3007, 7, "get a7\r\n", 8);
	assert_int_equal(t_stats().slots_live, 5);
	assert_int_equal(t_drop(DP_DROP_CLIENT_SLOTS), 2);
	t_dp_stop();
}

static void cap_2_small(struct dp_config *c)
{
	c->client_slots_max = 2;
	c->slots = 64; /* a table of 128 addresses: long probe runs, many removals */
}

/* The per-client table against a model: random sends and replies from 48 addresses. */
static void test_client_table_model(void **state)
{
	enum { CLIENTS = 48, LIVE_MAX = 64 };
	struct {
		struct fwd f;
		int client;
	} live[LIVE_MAX];
	int nlive = 0, count[CLIENTS] = {0};
	uint64_t capped = 0;
	char sip[24];

	(void)state;
	t_dp_start(1, 4, cap_2_small);
	srand(12);
	for (int op = 0; op < 5000; op++) {
		if (nlive > 0 && (nlive == LIVE_MAX || rand() % 3 == 0)) {
			int k = rand() % nlive;
			struct fwd *f = &live[k].f;

			t_inject(0, t_reply(f->node_ip, 11211, f->sport, f->reqid, 0, 1, "END\r\n",
					    5));
			t_poll(0);
			assert_int_equal(t_sent_count(0), 1);
			rte_pktmbuf_free(t_sent(0));
			count[live[k].client]--;
			live[k] = live[--nlive];
			continue;
		}
		int c = rand() % CLIENTS;

		snprintf(sip, sizeof(sip), "198.18.0.%d", 64 + c);
		t_inject(0, req_from(sip, NULL, 5000, (uint16_t)op, "get k\r\n", 7));
		t_poll(0);
		if (count[c] == 2) {
			assert_int_equal(t_sent_count(0), 0);
			capped++;
			continue;
		}
		live[nlive].f = forwarded();
		live[nlive++].client = c;
		count[c]++;
	}
	assert_int_equal(t_drop(DP_DROP_CLIENT_SLOTS), capped);
	assert_true(capped > 100);
	assert_int_equal(t_stats().slots_live, (uint32_t)nlive);
	t_dp_stop();
}

/* ---- 2. a request the TX queue drops frees its slot at once ------------------------------ */

static void small_table(struct dp_config *c)
{
	c->slots = 64;
}

static void test_tx_refused_frees_slot(void **state)
{
	struct rte_mbuf *fill[4096];
	unsigned int nfill = 0;
	char text[32];
	struct dp_stats s;

	(void)state;
	t_dp_start(1, 4, small_table);
	/* Fill the port's TX ring: nothing more goes out. */
	while (rte_ring_free_count(rig.tx[0]) > 0) {
		fill[nfill] = rte_pktmbuf_alloc(rig.pool);
		assert_non_null(fill[nfill]);
		assert_int_equal(rte_ring_enqueue(rig.tx[0], fill[nfill]), 0);
		nfill++;
	}
	t_inject(0, t_request(5555, 1, "get foo\r\n", 9));
	t_inject(0, t_request(5556, 2, "set n 0 0 1 noreply\r\nx\r\n", 24));
	poll_all();
	s = t_stats();
	assert_int_equal(s.drop[DP_DROP_TX_FULL], 2);
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_TX_FREED], 1); /* the noreply one kept none */
	for (unsigned int i = 0; i < nfill; i++)
		rte_pktmbuf_free(t_sent(0));
	/* The free list is whole: exactly 64 slots to take, no slot twice. */
	for (int i = 0; i < 65; i++) {
		snprintf(text, sizeof(text), "get k%d\r\n", i);
		t_inject(0, t_request((uint16_t)(7000 + i), (uint16_t)i, text, strlen(text)));
	}
	poll_all();
	assert_int_equal(t_sent_count(0), 64);
	s = t_stats();
	assert_int_equal(s.drop[DP_DROP_NO_SLOT], 1);
	assert_int_equal(s.slots_live, 64);
	t_dp_stop();
}

/* ---- 3. client identity on the segment --------------------------------------------------- */

/* An ICMP echo request from @p sip / @p smac. */
static struct rte_mbuf *echo_from(const char *sip, const uint8_t *smac)
{
	uint8_t body[8 + 32];
	struct t_pkt_spec s = {0};
	struct rte_mbuf *m;
	struct rte_icmp_hdr *ic;

	memset(body, 0xab, sizeof(body));
	s.proto = IPPROTO_ICMP;
	s.sip = sip;
	s.src_mac = smac;
	s.payload = body;
	s.plen = sizeof(body) - 8;
	m = t_pkt(&s); /* a UDP header where ICMP goes: rewritten below */
	ic = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *,
				     sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr));
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_ident = rte_cpu_to_be_16(99);
	ic->icmp_seq_nb = rte_cpu_to_be_16(1);
	ic->icmp_cksum = 0;
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(body));
	return m;
}

static void expect_echo(struct rte_mbuf *m)
{
	t_inject(0, m);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
}

/* A group source MAC is nobody's: no reply, local answer or echo may go to it. */
static void test_group_source_mac(void **state)
{
	(void)state;
	t_dp_start(1, 4, NULL);
	expect_drop(req_from(NULL, bcast_mac, 5555, 1, "get foo\r\n", 9), DP_DROP_SRC_MAC_GROUP);
	expect_drop(req_from(NULL, mcast_mac, 5555, 2, "get foo\r\n", 9), DP_DROP_SRC_MAC_GROUP);
	expect_drop(req_from(NULL, bcast_mac, 5555, 3, "version\r\n", 9), DP_DROP_SRC_MAC_GROUP);
	expect_drop(echo_from(NULL, bcast_mac), DP_DROP_SRC_MAC_GROUP);
	expect_echo(echo_from(NULL, NULL));
	send_ok(NULL, 5555, 4, "get foo\r\n", 9);
	t_stats(); /* the identity holds */
	t_dp_stop();
}

/* ICMP echo obeys the client ACL as requests do. Before: the router echoed anyone. */
static void test_icmp_obeys_acl(void **state)
{
	(void)state;
	t_dp_start(1, 4, NULL);
	expect_drop(echo_from("198.18.3.7", NULL), DP_DROP_CLIENT_DENIED);
	expect_drop(req_from("198.18.3.7", NULL, 5555, 1, "version\r\n", 9), DP_DROP_CLIENT_DENIED);
	expect_echo(echo_from(NULL, NULL));
	t_dp_stop();
}

static void only_gw(struct dp_config *c)
{
	memcpy(c->client_macs[0], gw_mac, 6);
	c->n_client_macs = 1;
}

/* allowed_client_macs: requests, local answers and echo only from the listed MACs. */
static void test_allowed_client_macs(void **state)
{
	(void)state;
	t_dp_start(1, 4, only_gw);
	expect_drop(req_from(NULL, NULL, 5555, 1, "get foo\r\n", 9), DP_DROP_CLIENT_MAC_DENIED);
	expect_drop(req_from(NULL, NULL, 5555, 2, "version\r\n", 9), DP_DROP_CLIENT_MAC_DENIED);
	expect_drop(echo_from(NULL, NULL), DP_DROP_CLIENT_MAC_DENIED);
	/* The MAC does not make a denied address allowed. */
	expect_drop(req_from("198.18.3.7", gw_mac, 5555, 3, "get foo\r\n", 9),
		    DP_DROP_CLIENT_DENIED);
	t_inject(0, req_from(NULL, gw_mac, 5555, 4, "get foo\r\n", 9));
	t_poll(0);
	forwarded();
	expect_echo(echo_from(NULL, gw_mac));
	t_dp_stop();
}

/* ---- 6. UDP checksums -------------------------------------------------------------------- */

/* Flip a payload byte of @p m without fixing the UDP checksum. */
static struct rte_mbuf *corrupt(struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	p[rte_pktmbuf_data_len(m) - 3] ^= 0x20;
	return m;
}

static void test_udp_checksum(void **state)
{
	struct fwd f;
	struct rte_mbuf *m;

	(void)state;
	t_dp_start(1, 4, NULL);
	/* A request whose checksum does not match (here "get fOo"): dropped, not re-signed. */
	expect_drop(corrupt(t_request(5555, 1, "get foo\r\n", 9)), DP_DROP_BAD_UDP_CKSUM);
	/* A node's reply likewise; the slot waits for the good one. */
	f = send_ok(NULL, 5555, 2, "get foo\r\n", 9);
	expect_drop(corrupt(t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5)),
		    DP_DROP_BAD_UDP_CKSUM);
	assert_int_equal(t_stats().slots_live, 1);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	/* The port's verdict is used when it gives one. */
	m = t_request(5555, 3, "get foo\r\n", 9);
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_BAD;
	expect_drop(m, DP_DROP_BAD_UDP_CKSUM);
	m = corrupt(t_request(5555, 4, "get foo\r\n", 9));
	m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD; /* (a test's lie: no software check) */
	t_inject(0, m);
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_BAD_UDP_CKSUM), 3);
	/* Every length (odd ones too) and every byte position: the software sum agrees with
	 * the sender's checksum, and any one flipped bit is caught. */
	srand(6);
	for (int len = 1; len <= 160; len++) {
		char key[200], text[220];
		int n;

		for (int i = 0; i < len; i++)
			key[i] = (char)('a' + rand() % 26);
		key[len] = '\0';
		n = snprintf(text, sizeof(text), "get %s\r\n", key);
		send_ok(NULL, (uint16_t)(1000 + len), (uint16_t)len, text, (size_t)n);
		m = t_request((uint16_t)(1000 + len), (uint16_t)len, text, (size_t)n);
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t at = 14 + 20 + 8 + (uint32_t)rand() % (8 + (uint32_t)n);

		p[at] ^= (uint8_t)(1u << (rand() % 8));
		expect_drop(m, DP_DROP_BAD_UDP_CKSUM);
	}
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lone_quiet_read_ends_with_first_message),
		cmocka_unit_test(test_quiet_read_grace),
		cmocka_unit_test(test_quiet_flood_leaves_room),
		cmocka_unit_test(test_client_slot_cap),
		cmocka_unit_test(test_client_table_model),
		cmocka_unit_test(test_tx_refused_frees_slot),
		cmocka_unit_test(test_group_source_mac),
		cmocka_unit_test(test_icmp_obeys_acl),
		cmocka_unit_test(test_allowed_client_macs),
		cmocka_unit_test(test_udp_checksum),
	};

	t_eal_setup("dp_hardening", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
