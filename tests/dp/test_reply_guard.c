/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a reply must be to reach a client (issue 12, item 5), on real mbufs through a net_ring
 * port: the node's own Ethernet source and the request's VLAN id; each datagram of a
 * one-message reply once (a duplicate first datagram does not complete the slot); request ids
 * with at least DP_GEN_BITS_MIN generation bits, starting at random; and a flood to another
 * worker's reply ports from strangers is dropped before the hand-off ring, which keeps room
 * for the node's real replies.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_test.h"

struct fwd {
	uint16_t sport; /* router's source port towards the node */
	uint16_t reqid; /* request id the node sees */
	char node_ip[24];
};

/* Send a get for @p key from client port @p cport (request id @p creqid), optionally tagged
 * with VLAN @p vlan, on queue @p q; @return how it left towards the owner. */
static struct fwd forward_on(uint16_t q, uint16_t cport, uint16_t creqid, const char *key,
			     uint16_t vlan)
{
	uint8_t buf[128];
	struct t_pkt_spec s = {0};
	struct rte_mbuf *m;
	struct t_view v;
	struct fwd f;
	int n = snprintf((char *)buf + 8, sizeof(buf) - 8, "get %s\r\n", key);

	memcpy(buf, "\0\0\0\0\0\x01\0\0", 8);
	buf[0] = (uint8_t)(creqid >> 8);
	buf[1] = (uint8_t)creqid;
	s.payload = buf;
	s.plen = 8 + (size_t)n;
	s.sport = cport;
	s.dport = T_LISTEN;
	s.vlan = vlan;
	t_inject(q, t_pkt(&s));
	t_poll(q);
	m = t_sent(q);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	snprintf(f.node_ip, sizeof(f.node_ip), "198.18.1.%d", t_owner(key) + 1);
	assert_int_equal(v.ip->dst_addr, t_ip(f.node_ip));
	f.sport = rte_be_to_cpu_16(v.udp->src_port);
	f.reqid = v.reqid;
	rte_pktmbuf_free(m);
	return f;
}

/* A reply datagram of @p f from @p src_mac (NULL: the node's own), tagged @p vlan. */
static struct rte_mbuf *reply_from(const struct fwd *f, const uint8_t *src_mac, uint16_t vlan,
				   uint16_t seq, uint16_t total, const char *body)
{
	uint8_t buf[1500], mac[6];
	struct t_pkt_spec s = {0};
	size_t len = strlen(body);

	buf[0] = (uint8_t)(f->reqid >> 8);
	buf[1] = (uint8_t)f->reqid;
	buf[2] = (uint8_t)(seq >> 8);
	buf[3] = (uint8_t)seq;
	buf[4] = (uint8_t)(total >> 8);
	buf[5] = (uint8_t)total;
	buf[6] = buf[7] = 0;
	memcpy(buf + 8, body, len);
	t_node_mac(f->node_ip, mac);
	s.src_mac = src_mac != NULL ? src_mac : mac;
	s.sip = f->node_ip;
	s.sport = 11211;
	s.dport = f->sport;
	s.payload = buf;
	s.plen = 8 + len;
	s.vlan = vlan;
	return t_pkt(&s);
}

/* Feed @p m on queue 0; expect it dropped for @p why, nothing sent. */
static void expect_drop(struct rte_mbuf *m, enum dp_drop why)
{
	uint64_t before = t_drop(why);

	t_inject(0, m);
	t_poll(0);
	assert_null(t_sent(0));
	if (t_drop(why) != before + 1)
		fail_msg("expected drop reason %s", dp_drop_name(why));
}

/* Expect datagram @p seq of @p total back at client port @p cport on queue @p q. */
static void expect_returned(uint16_t q, uint16_t cport, uint16_t creqid, uint16_t seq,
			    uint16_t total)
{
	struct rte_mbuf *m = t_sent(q);
	struct t_view v;

	if (m == NULL)
		fail_msg("datagram %u of %u did not reach the client", seq, total);
	t_view_udp(m, &v, false);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), cport);
	assert_int_equal(v.reqid, creqid);
	assert_int_equal(v.seq, seq);
	assert_int_equal(v.total, total);
	rte_pktmbuf_free(m);
}

/* From the node's address and port but another MAC: dropped; the node's own MAC passes. */
static void test_source_mac(void **state)
{
	static const uint8_t stranger[6] = {0x02, 0, 0, 0, 0x66, 0x66};
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_on(0, 5555, 0x11, "foo", 0);
	expect_drop(reply_from(&f, stranger, 0, 0, 1, "END\r\n"), DP_DROP_REPLY_WRONG_MAC);
	/* Another node's MAC is no better. */
	uint8_t other[6];

	t_node_mac(t_owner("foo") == 0 ? "198.18.1.2" : "198.18.1.1", other);
	expect_drop(reply_from(&f, other, 0, 0, 1, "END\r\n"), DP_DROP_REPLY_WRONG_MAC);
	t_inject(0, reply_from(&f, NULL, 0, 0, 1, "END\r\n"));
	t_poll(0);
	expect_returned(0, 5555, 0x11, 0, 1);
	assert_int_equal(t_stats().slots_live, 0);
	t_dp_stop();
}

/* A request on VLAN 42: a reply on VLAN 43 is dropped; on VLAN 42 with other priority bits it
 * passes, re-tagged with the client's TCI. */
static void test_vlan_id(void **state)
{
	struct fwd f;
	struct rte_mbuf *m;
	struct t_view v;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_on(0, 5555, 0x12, "foo", 42);
	expect_drop(reply_from(&f, NULL, 43, 0, 1, "END\r\n"), DP_DROP_VLAN_MISMATCH);
	expect_drop(reply_from(&f, NULL, 0x1000 | 0x82a, 0, 1, "END\r\n"), /* DEI, VID 2090 */
		    DP_DROP_VLAN_MISMATCH);
	t_inject(0, reply_from(&f, NULL, 0xa000 | 42, 0, 1, "END\r\n")); /* PCP 5 */
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_int_equal(((struct rte_vlan_hdr *)(v.eth + 1))->vlan_tci, rte_cpu_to_be_16(42));
	assert_int_equal(v.reqid, 0x12);
	rte_pktmbuf_free(m);
	t_dp_stop();
}

/* A two-datagram reply whose first datagram comes twice: the copy is dropped, the slot waits
 * for the second, which reaches the client. */
static void test_duplicate_first_datagram(void **state)
{
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_on(0, 5555, 0x13, "foo", 0);
	t_inject(0, reply_from(&f, NULL, 0, 0, 2, "VALUE foo 0 3\r\n"));
	t_poll(0);
	expect_returned(0, 5555, 0x13, 0, 2);
	expect_drop(reply_from(&f, NULL, 0, 0, 2, "VALUE foo 0 3\r\n"), DP_DROP_REPLY_DUPLICATE);
	assert_int_equal(t_stats().slots_live, 1);
	t_inject(0, reply_from(&f, NULL, 0, 1, 2, "bar\r\nEND\r\n"));
	t_poll(0);
	expect_returned(0, 5555, 0x13, 1, 2);
	assert_int_equal(t_stats().slots_live, 0);
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_COMPLETED], 1);
	t_dp_stop();
}

/* A 368-datagram reply (a 500 KB value): out of order within the window, duplicates dropped
 * wherever they fall, a datagram 64 or more past the first missing one dropped, and the slot
 * completes with its last missing datagram, not before. */
static void test_long_reply_order(void **state)
{
	const uint16_t total = 368;
	uint16_t passed = 0;
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_on(0, 5555, 0x14, "foo", 0);
	expect_drop(reply_from(&f, NULL, 0, 64, total, "x"), DP_DROP_REPLY_SEQ_AHEAD);
	for (uint16_t base = 0; base < total; base += 16) {
		if (base >= 16) /* one of the run before, all of which passed */
			expect_drop(reply_from(&f, NULL, 0, (uint16_t)(base - 16), total, "x"),
				    DP_DROP_REPLY_DUPLICATE);
		/* Each run of 16 backwards: 15, 14, ..., 0 past the base. */
		for (int i = 15; i >= 0; i--) {
			uint16_t seq = (uint16_t)(base + i);

			if (seq >= total)
				continue;
			t_inject(0, reply_from(&f, NULL, 0, seq, total, "x"));
			t_poll(0);
			expect_returned(0, 5555, 0x14, seq, total);
			passed++;
			if (i == 7)
				expect_drop(reply_from(&f, NULL, 0, seq, total, "x"),
					    DP_DROP_REPLY_DUPLICATE);
		}
		assert_int_equal(t_stats().slots_live, passed < total ? 1 : 0);
	}
	assert_int_equal(passed, total);
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_COMPLETED], 1);
	t_dp_stop();
}

static struct dp_config gen_config(uint32_t slots, uint32_t reply_ports, uint16_t workers)
{
	struct dp_config c;

	dp_config_defaults(&c);
	c.port_id = rig.port;
	c.n_workers = workers;
	c.router_ip = t_ip(T_ROUTER_IP);
	c.reply_port_base = T_REPLY_BASE;
	c.reply_port_count = reply_ports;
	c.slots = slots;
	c.pool = rig.pool;
	return c;
}

/* Too few generation bits are refused; so is a buffer whose merged reply would outnumber the
 * frame header's 16-bit total. */
static void test_generation_bits_refused(void **state)
{
	struct dp_config c;
	struct dp *dp;

	(void)state;
	assert_int_equal(dp_generation_bits(65536, 16, 1), 4);
	assert_int_equal(dp_generation_bits(4096, 16384, 64), 12);
	c = gen_config(65536, 16, 1); /* 16 generations */
	errno = 0;
	assert_null(dp_create(&c));
	assert_int_equal(errno, EINVAL);
	c = gen_config(4096, 32, 2); /* 16 ports per worker: 8 slot bits in the id */
	assert_null(dp_create(&c));
	c = gen_config(256, 16, 1); /* 16 slots per port: 12 generation bits, enough */
	dp = dp_create(&c);
	assert_non_null(dp);
	dp_free(dp);
	c = gen_config(256, 1024, 1);
	c.mtu = 576;
	c.mget_bytes = 64u << 20; /* ~124,000 datagrams of 540 bytes */
	assert_true(dp_mget_datagrams_max(c.mget_bytes, c.mtu) > DP_REPLY_DATAGRAMS_MAX);
	assert_null(dp_create(&c));
}

/* The first request id a fresh dp gives out is not a constant: generations start at random
 * per slot. */
static void test_generation_random_start(void **state)
{
	uint16_t first[4];
	bool differ = false;

	(void)state;
	for (int i = 0; i < 4; i++) {
		t_dp_start(1, 4, NULL);
		first[i] = forward_on(0, 5555, 1, "foo", 0).reqid;
		t_dp_stop();
		differ |= i > 0 && first[i] != first[0];
	}
	/* Equal four times at random: 1 in 2^48. */
	assert_true(differ);
}

/* Worker 0's slot; a flood of 2,000 strangers' datagrams to worker 0's reply ports arrives on
 * worker 1 while worker 0 is busy elsewhere (not polled): worker 1 drops them itself, so the
 * hand-off ring (1,024) keeps room and the node's real reply still reaches the client. Then a
 * datagram from the node's address and port but not its MAC is dropped there too. */
static void test_handoff_flood(void **state)
{
	static const uint8_t stranger_mac[6] = {0x02, 0, 0, 0, 0x77, 0x77};
	struct fwd f;
	struct dp_stats s;

	(void)state;
	t_dp_start(2, 4, NULL);
	f = forward_on(0, 5555, 0x15, "foo", 0);
	for (int i = 0; i < 2000; i++) {
		char sip[24];

		snprintf(sip, sizeof(sip), "203.0.113.%d", 1 + i % 200);
		t_inject(1, t_reply(sip, (uint16_t)(1024 + i), (uint16_t)(T_REPLY_BASE + i % 512),
				    (uint16_t)i, 0, 1, "END\r\n", 5));
		if (i % 32 == 31)
			t_poll(1);
	}
	t_poll(1);
	s = t_stats_raw();
	assert_int_equal(s.drop[DP_DROP_HANDOFF_FULL], 0);
	assert_int_equal(s.drop[DP_DROP_REPLY_UNKNOWN_SOURCE], 2000);
	assert_int_equal(s.ctr[DP_CTR_HANDED_OVER], 0);
	t_inject(1, reply_from(&f, stranger_mac, 0, 0, 1, "END\r\n"));
	t_poll(1);
	assert_int_equal(t_stats_raw().drop[DP_DROP_REPLY_WRONG_MAC], 1);
	t_inject(1, reply_from(&f, NULL, 0, 0, 1, "END\r\n"));
	t_poll(1);
	assert_null(t_sent(1));
	t_poll(0);
	expect_returned(0, 5555, 0x15, 0, 1);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_HANDED_OVER], 1);
	assert_int_equal(s.ctr[DP_CTR_TAKEN_OVER], 1);
	t_dp_stop();
}

/* A node removed while a request to it is in flight: its reply, landing on the other worker,
 * is still handed over and reaches the client (the source check knows the endpoints the new
 * ring leaves out); strangers stay out. e2e-control-live lost such replies under memcaslap
 * (reply_unknown_source) when the check knew only the new ring's members. */
static void test_handoff_after_remove(void **state)
{
	struct pl_placement *fewer;
	struct fwd f;
	char key[32];
	int owner = -1;

	(void)state;
	t_dp_start(2, 4, NULL);
	for (int i = 0; owner != 3; i++) { /* a key on n4, the member the change removes */
		snprintf(key, sizeof(key), "gone%d", i);
		owner = t_owner(key);
	}
	f = forward_on(0, 5556, 0x16, key, 0);
	fewer = t_fleet(3);
	assert_non_null(fewer);
	assert_int_equal(dp_publish_placement(rig.dp, fewer, NULL, 2), 0);
	t_inject(1, reply_from(&f, NULL, 0, 0, 1, "END\r\n"));
	t_poll(1);
	assert_null(t_sent(1));
	t_poll(0);
	expect_returned(0, 5556, 0x16, 0, 1);
	assert_int_equal(t_stats().drop[DP_DROP_REPLY_UNKNOWN_SOURCE], 0);
	t_inject(1, t_reply("203.0.113.9", 11211, (uint16_t)(f.sport), 1, 0, 1, "END\r\n", 5));
	t_poll(1);
	assert_int_equal(t_stats_raw().drop[DP_DROP_REPLY_UNKNOWN_SOURCE], 1);
	pl_free(fewer);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_mac),
		cmocka_unit_test(test_vlan_id),
		cmocka_unit_test(test_duplicate_first_datagram),
		cmocka_unit_test(test_long_reply_order),
		cmocka_unit_test(test_generation_bits_refused),
		cmocka_unit_test(test_generation_random_start),
		cmocka_unit_test(test_handoff_flood),
		cmocka_unit_test(test_handoff_after_remove),
	};

	t_eal_setup("dp_reply_guard", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
