/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The proxy path on real mbufs through a net_ring port: a client request leaves towards the
 * key's owner with the router's addresses and a (worker, slot)-naming port and request id;
 * the node's reply returns to that client only, with the client's request id; every
 * checksum valid; forged, stale, late and replayed replies are dropped by reason.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_test.h"

static const uint8_t node_mac_base[5] = {0x02, 0, 0, 0, 0x01};

struct fwd {
	uint16_t sport; /* router's source port towards the node */
	uint16_t reqid; /* request id the node sees */
	char node_ip[24];
};

/* Send @p text as a request from client port @p cport, expect it forwarded to the owner of
 * @p key; return how it left. */
static struct fwd forward_ok(uint16_t cport, uint16_t creqid, const char *text, const char *key)
{
	struct t_view v;
	struct rte_mbuf *m;
	struct fwd f;
	int32_t owner = t_owner(key);
	size_t len = strlen(text);
	uint64_t before = t_stats().ctr[DP_CTR_FORWARDED];

	assert_true(owner >= 0);
	t_inject(0, t_request(cport, creqid, text, len));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, false);
	/* Ethernet: router -> owner's MAC. */
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	assert_memory_equal(&v.eth->dst_addr, node_mac_base, 5);
	assert_int_equal(v.eth->dst_addr.addr_bytes[5], owner + 1);
	/* IP: router -> node; UDP: reply range -> 11211. */
	snprintf(f.node_ip, sizeof(f.node_ip), "198.18.1.%d", owner + 1);
	assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(f.node_ip));
	f.sport = rte_be_to_cpu_16(v.udp->src_port);
	assert_true(f.sport >= T_REPLY_BASE && f.sport < T_REPLY_BASE + T_REPLY_COUNT);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 11211);
	/* Frame: one datagram; payload after the request id untouched. */
	assert_int_equal(v.seq, 0);
	assert_int_equal(v.total, 1);
	assert_int_equal(v.plen, len + 8);
	assert_memory_equal(v.payload + 8, text, len);
	f.reqid = v.reqid;
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_FORWARDED], before + 1);
	return f;
}

/* Expect a reply datagram on queue @p q back to the client at @p cport with @p creqid. */
static void returned_ok(uint16_t q, uint16_t cport, uint16_t creqid, const char *body, uint16_t seq,
			uint16_t total)
{
	struct rte_mbuf *m = t_sent(q);
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_memory_equal(&v.eth->dst_addr, t_client_mac, 6);
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v.udp->src_port), T_LISTEN);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), cport);
	assert_int_equal(v.reqid, creqid);
	assert_int_equal(v.seq, seq);
	assert_int_equal(v.total, total);
	assert_int_equal(v.plen, strlen(body) + 8);
	assert_memory_equal(v.payload + 8, body, strlen(body));
	rte_pktmbuf_free(m);
}

static void test_get_round_trip(void **state)
{
	const char *val = "VALUE foo 0 3\r\nbar\r\nEND\r\n";
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_ok(5555, 0x1234, "get foo\r\n", "foo");
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, val, strlen(val)));
	t_poll(0);
	returned_ok(0, 5555, 0x1234, val, 0, 1);
	struct dp_stats s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_RX], 2);
	assert_int_equal(s.ctr[DP_CTR_RETURNED], 1);
	assert_int_equal(s.ctr[DP_CTR_SLOTS_COMPLETED], 1);
	assert_int_equal(s.slots_live, 0);
	/* The exit print: parseable lines, per node, and the identity. */
	char *text = NULL, want[64];
	size_t tlen = 0;
	FILE *out = open_memstream(&text, &tlen);

	assert_non_null(out);
	assert_int_equal(dp_stats_print(rig.dp, out), 0);
	fclose(out);
	assert_non_null(strstr(text, "\ntotal.rx 2\n"));
	assert_non_null(strstr(text, "\ntotal.forwarded 1\n"));
	assert_non_null(strstr(text, "\ntotal.returned 1\n"));
	assert_non_null(strstr(text, "\ntotal.drop.reply_no_slot 0\n"));
	assert_non_null(strstr(text, "worker.0.rx 2\n"));
	snprintf(want, sizeof(want), "\nnode.n%d.forwarded 1\n", t_owner("foo") + 1);
	assert_non_null(strstr(text, want));
	snprintf(want, sizeof(want), "\nnode.n%d.returned 1\n", t_owner("foo") + 1);
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "\nidentity ok rx=2 sum=2\n"));
	free(text);
	/* The same reply again (a replay): its slot is gone, nobody gets it. */
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, val, strlen(val)));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 1);
	t_dp_stop();
}

static void test_many_clients_distinct(void **state)
{
	struct fwd f[40];
	char text[64], key[32], body[64];

	(void)state;
	t_dp_start(1, 4, NULL);
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "key:%d", i);
		snprintf(text, sizeof(text), "get %s\r\n", key);
		f[i] = forward_ok((uint16_t)(6000 + i), (uint16_t)(100 + i), text, key);
		for (int j = 0; j < i; j++)
			assert_false(f[j].sport == f[i].sport && f[j].reqid == f[i].reqid);
	}
	/* Replies in reverse order: each reaches its own client with its own request id. */
	for (int i = 39; i >= 0; i--) {
		snprintf(body, sizeof(body), "VALUE key:%d 0 1\r\n%d\r\nEND\r\n", i, i % 10);
		t_inject(0, t_reply(f[i].node_ip, 11211, f[i].sport, f[i].reqid, 0, 1, body,
				    strlen(body)));
		t_poll(0);
		returned_ok(0, (uint16_t)(6000 + i), (uint16_t)(100 + i), body, 0, 1);
	}
	assert_int_equal(t_stats().ctr[DP_CTR_RETURNED], 40);
	t_dp_stop();
}

static void test_multi_datagram_reply(void **state)
{
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_ok(5555, 7, "get big\r\n", "big");
	for (uint16_t seq = 0; seq < 3; seq++) {
		t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, seq, 3, "xxxx", 4));
		t_poll(0);
		returned_ok(0, 5555, 7, "xxxx", seq, 3);
		assert_int_equal(t_stats().slots_live, seq < 2 ? 1 : 0);
	}
	/* A fourth datagram after the last one passed: the slot is free. */
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 2, 3, "xxxx", 4));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 1);
	t_dp_stop();
}

static void test_forged_and_stale_replies(void **state)
{
	const char *val = "END\r\n";
	struct fwd f;
	char other[24];

	(void)state;
	t_dp_start(1, 4, NULL);
	f = forward_ok(5555, 9, "get foo\r\n", "foo");
	/* From an address that is no node. */
	t_inject(0, t_reply("198.18.0.99", 11211, f.sport, f.reqid, 0, 1, val, 5));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_SOURCE), 1);
	/* From another node than the one asked. */
	snprintf(other, sizeof(other), "198.18.1.%d", (t_owner("foo") + 1) % 4 + 1);
	t_inject(0, t_reply(other, 11211, f.sport, f.reqid, 0, 1, val, 5));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_SOURCE), 2);
	/* From the right node's address but another port. */
	t_inject(0, t_reply(f.node_ip, 11212, f.sport, f.reqid, 0, 1, val, 5));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_SOURCE), 3);
	/* Right source, wrong request id generation. */
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, (uint16_t)(f.reqid + 0x100), 0, 1, val, 5));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_STALE), 1);
	/* Bad frame: seq beyond total. */
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 3, 1, val, 5));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_REPLY_BAD_FRAME), 1);
	/* A reply-range port no request left from. */
	t_inject(0, t_reply(f.node_ip, 11211, (uint16_t)(f.sport + 1), f.reqid, 0, 1, val, 5));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 1);
	/* The genuine reply still reaches the client. */
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, val, 5));
	t_poll(0);
	returned_ok(0, 5555, 9, val, 0, 1);
	t_dp_stop();
}

static void short_timeout(struct dp_config *c)
{
	c->request_timeout_ms = 1;
	c->slots = 64;
}

static void test_late_reply_after_expiry(void **state)
{
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	f = forward_ok(5555, 11, "get foo\r\n", "foo");
	usleep(5000);
	for (int i = 0; i < 8; i++) /* the sweep visits every slot */
		t_poll(0);
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_EXPIRED], 1);
	assert_int_equal(t_stats().slots_live, 0);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 1);
	t_dp_stop();
}

static void small_table(struct dp_config *c)
{
	c->slots = 64;
}

static void test_slot_exhaustion(void **state)
{
	char text[32];

	(void)state;
	t_dp_start(1, 4, small_table);
	for (int i = 0; i < 65; i++) {
		snprintf(text, sizeof(text), "get k%d\r\n", i);
		t_inject(0, t_request((uint16_t)(7000 + i), (uint16_t)i, text, strlen(text)));
	}
	for (int i = 0; i < 4; i++)
		t_poll(0);
	assert_int_equal(t_sent_count(0), 64);
	struct dp_stats s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], 64);
	assert_int_equal(s.drop[DP_DROP_NO_SLOT], 1);
	assert_int_equal(s.slots_live, 64);
	t_dp_stop();
}

/* noreply writes keep no slot: a flood of them cannot starve the table, and a late error
 * reply for one is dropped. */
static void test_noreply_keeps_no_slot(void **state)
{
	char text[64], key[16];
	struct fwd f;

	(void)state;
	t_dp_start(1, 4, small_table);
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "nr%d", i);
		snprintf(text, sizeof(text), "set %s 0 0 1 noreply\r\nx\r\n", key);
		f = forward_ok((uint16_t)(3000 + i), (uint16_t)i, text, key);
	}
	struct dp_stats s = t_stats();

	assert_int_equal(s.ctr[DP_CTR_QUIET], 100);
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(s.drop[DP_DROP_NO_SLOT], 0);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "SERVER_ERROR x\r\n", 16));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_stats().drop[DP_DROP_REPLY_NO_SLOT], 1);
	/* A get with a key still takes a slot. */
	forward_ok(5555, 1, "get foo\r\n", "foo");
	assert_int_equal(t_stats().slots_live, 1);
	t_dp_stop();
}

static void test_handoff_to_owner(void **state)
{
	const char *val = "END\r\n";
	struct fwd f;
	struct dp_stats s;

	(void)state;
	t_dp_start(2, 4, NULL);
	f = forward_ok(5555, 21, "get foo\r\n", "foo"); /* worker 0's slot */
	/* The reply arrives on queue 1: worker 1 hands it over, worker 0 returns it. */
	t_inject(1, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, val, 5));
	t_poll(1);
	assert_null(t_sent(1));
	assert_int_equal(t_stats_raw().ctr[DP_CTR_HANDED_OVER], 1);
	t_poll(0);
	returned_ok(0, 5555, 21, val, 0, 1);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_TAKEN_OVER], 1);
	assert_int_equal(s.ctr[DP_CTR_RETURNED], 1);
	t_dp_stop();
}

/* Two keys on the same node and two on different nodes, from the rig's placement. */
static void key_pairs(char same[2][16], char diff[2][16])
{
	int32_t o0 = t_owner("a0");
	bool have_same = false, have_diff = false;

	snprintf(same[0], 16, "a0");
	snprintf(diff[0], 16, "a0");
	for (int i = 1; i < 1000 && !(have_same && have_diff); i++) {
		char k[16];

		snprintf(k, sizeof(k), "a%d", i);
		if (!have_same && t_owner(k) == o0) {
			snprintf(same[1], 16, "%s", k);
			have_same = true;
		} else if (!have_diff && t_owner(k) != o0) {
			snprintf(diff[1], 16, "%s", k);
			have_diff = true;
		}
	}
	assert_true(have_same && have_diff);
}

static void test_multiget(void **state)
{
	char same[2][16], diff[2][16], text[64];
	struct rte_mbuf *m;
	struct t_view v;

	(void)state;
	t_dp_start(1, 4, NULL);
	key_pairs(same, diff);
	snprintf(text, sizeof(text), "get %s %s\r\n", same[0], same[1]);
	struct fwd f = forward_ok(5555, 1, text, same[0]);
	char hit[2][64];

	/* memcached answers a multi-get with a message per hit, then END: all of them pass, an
	 * empty message included, and the slot is freed after END only. */
	for (int i = 0; i < 2; i++) {
		snprintf(hit[i], sizeof(hit[i]), "VALUE %s 0 1\r\n%d\r\n", same[i], i);
		t_inject(0,
			 t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, hit[i], strlen(hit[i])));
		t_poll(0);
		returned_ok(0, 5555, 1, hit[i], 0, 1);
		assert_int_equal(t_stats().slots_live, 1);
	}
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 0, "", 0));
	t_poll(0);
	returned_ok(0, 5555, 1, "", 0, 0);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	returned_ok(0, 5555, 1, "END\r\n", 0, 1);
	assert_int_equal(t_stats().slots_live, 0);
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_COMPLETED], 1);
	assert_int_equal(t_stats().ctr[DP_CTR_MULTI_TRACKED], 1);
	/* A pipeline of two gets on one node: two responses, each ending in END. */
	snprintf(text, sizeof(text), "get %s\r\nget %s\r\n", same[0], same[1]);
	f = forward_ok(5557, 3, text, same[0]);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	returned_ok(0, 5557, 3, "END\r\n", 0, 1);
	assert_int_equal(t_stats().slots_live, 1);
	t_inject(0, t_reply(f.node_ip, 11211, f.sport, f.reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	returned_ok(0, 5557, 3, "END\r\n", 0, 1);
	assert_int_equal(t_stats().slots_live, 0);
	/* Keys on two nodes in a shape that is not a multi-get (two pipelined gets) cannot be
	 * split (test_multiget.c covers the shapes that are): refused, never half answered. */
	snprintf(text, sizeof(text), "get %s\r\nget %s\r\n", diff[0], diff[1]);
	t_inject(0, t_request(5556, 2, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, false);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 5556);
	assert_int_equal(v.reqid, 2);
	assert_true(v.plen > 8 + 13);
	assert_memory_equal(v.payload + 8, "SERVER_ERROR ", 13);
	assert_memory_equal(v.payload + v.plen - 2, "\r\n", 2);
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_MC_SPLIT_REFUSED], 1);
	assert_int_equal(t_stats().ctr[DP_CTR_ANSWERED], 1);
	t_dp_stop();
}

static void test_meta_and_binary(void **state)
{
	uint8_t bin[24 + 3] = {0x80, 0x00, 0x00, 0x03};

	(void)state;
	t_dp_start(1, 4, NULL);
	forward_ok(5555, 3, "mg foo v\r\n", "foo");
	forward_ok(5555, 4, "set bar 0 0 2\r\nhi\r\n", "bar");
	forward_ok(5555, 5, "delete baz\r\n", "baz");
	/* Keys with control characters, as memcaslap sends them and memcached accepts. */
	forward_ok(5555, 7, "get \x10\x10\x10mc-key\r\n", "\x10\x10\x10mc-key");
	bin[11] = 3; /* body length */
	memcpy(bin + 24, "qux", 3);
	struct t_view v;
	int32_t owner = t_owner("qux");
	char ip[24];

	t_inject(0, t_request(5555, 6, bin, sizeof(bin)));
	t_poll(0);
	struct rte_mbuf *m = t_sent(0);

	t_view_udp(m, &v, false);
	snprintf(ip, sizeof(ip), "198.18.1.%d", owner + 1);
	assert_int_equal(v.ip->dst_addr, t_ip(ip));
	assert_memory_equal(v.payload + 8, bin, sizeof(bin));
	rte_pktmbuf_free(m);
	t_dp_stop();
}

static void test_vlan_options_and_no_checksum(void **state)
{
	uint8_t buf[64];
	struct t_pkt_spec s = {0};
	struct rte_mbuf *m;
	struct t_view v;
	const char *text = "get foo\r\n";

	(void)state;
	t_dp_start(1, 4, NULL);
	memcpy(buf, "\x00\x2a\x00\x00\x00\x01\x00\x00", 8);
	memcpy(buf + 8, text, strlen(text));
	s.payload = buf;
	s.plen = 8 + strlen(text);
	s.sport = 5555;
	s.dport = T_LISTEN;
	s.vlan = 42;
	s.ip_opts = 4;
	s.no_udp_csum = true;
	t_inject(0, t_pkt(&s));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, true);
	assert_int_equal(v.udp->dgram_cksum, 0);
	assert_int_equal(v.eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN));
	assert_int_equal(rte_ipv4_hdr_len(v.ip), 24);
	uint16_t sport = rte_be_to_cpu_16(v.udp->src_port), reqid = v.reqid;
	char ip[24];

	snprintf(ip, sizeof(ip), "%s", "198.18.1.0");
	ip[9] = (char)('1' + t_owner("foo"));
	rte_pktmbuf_free(m);
	/* The reply, tagged too, returns with the client's tag. */
	struct t_pkt_spec r = {0};
	uint8_t node_mac[6];

	t_node_mac(ip, node_mac); /* the owner's own MAC: the router checks it */
	memcpy(buf, "\x00\x00\x00\x00\x00\x01\x00\x00END\r\n", 13);
	buf[0] = (uint8_t)(reqid >> 8);
	buf[1] = (uint8_t)reqid;
	r.src_mac = node_mac;
	r.sip = ip;
	r.sport = 11211;
	r.dport = sport;
	r.payload = buf;
	r.plen = 13;
	r.vlan = 42;
	t_inject(0, t_pkt(&r));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, false);
	assert_int_equal(v.eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN));
	assert_int_equal(((struct rte_vlan_hdr *)(v.eth + 1))->vlan_tci, rte_cpu_to_be_16(42));
	assert_int_equal(v.reqid, 0x2a);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 5555);
	rte_pktmbuf_free(m);
	/* Tagged request, untagged reply: the router cannot re-tag in place, it drops. */
	uint8_t req2[64];

	memcpy(req2, "\x00\x2b\x00\x00\x00\x01\x00\x00", 8);
	memcpy(req2 + 8, text, strlen(text));
	s.payload = req2;
	t_inject(0, t_pkt(&s));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, true);
	buf[0] = (uint8_t)(v.reqid >> 8);
	buf[1] = (uint8_t)v.reqid;
	r.dport = rte_be_to_cpu_16(v.udp->src_port);
	r.vlan = 0;
	rte_pktmbuf_free(m);
	t_inject(0, t_pkt(&r));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_VLAN_MISMATCH), 1);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_round_trip),
		cmocka_unit_test(test_many_clients_distinct),
		cmocka_unit_test(test_multi_datagram_reply),
		cmocka_unit_test(test_forged_and_stale_replies),
		cmocka_unit_test(test_late_reply_after_expiry),
		cmocka_unit_test(test_slot_exhaustion),
		cmocka_unit_test(test_noreply_keeps_no_slot),
		cmocka_unit_test(test_handoff_to_owner),
		cmocka_unit_test(test_multiget),
		cmocka_unit_test(test_meta_and_binary),
		cmocka_unit_test(test_vlan_options_and_no_checksum),
	};

	t_eal_setup("dp_forward", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
