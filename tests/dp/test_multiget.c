/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-gets over several nodes on real mbufs through a net_ring port: the router splits a
 * request into one sub-request per owning node (keys in order, from a slot of its own), the
 * fake nodes answer as memcached 1.6 does over UDP (a message per hit, END / MN / NOOP last,
 * values over several datagrams), and the client gets one merged reply under its request id:
 * checked byte by byte, one terminator, datagrams numbered 0..total-1 of the path's size.
 * A silent node's keys come back as misses after the timeout; the limits refuse; the
 * counters and the accounting identity hold.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_test.h"

#define BODY_MAX (1400 - 8)

/* A sub-request as it left the router. */
struct sub {
	int node; /* member index */
	char node_ip[24];
	uint16_t sport;
	uint16_t reqid;
	char body[1500];
	size_t blen;
};

/* The @p idx-th key "<prefix><i>" owned by member @p node. */
static void key_on(int node, int idx, const char *prefix, char *out, size_t len)
{
	for (int i = 0, found = 0; i < 100000; i++) {
		snprintf(out, len, "%s%d", prefix, i);
		if (t_owner(out) == node && found++ == idx)
			return;
	}
	fail_msg("no key on node %d", node);
}

/* Dequeue every packet on queue 0 as sub-requests: router -> a node, one datagram each. */
static int collect_subs(struct sub *subs, int max)
{
	struct rte_mbuf *m;
	int n = 0;

	while ((m = t_sent(0)) != NULL) {
		struct t_view v;
		uint32_t dst;

		assert_true(n < max);
		t_view_udp(m, &v, false);
		assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
		assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
		dst = rte_be_to_cpu_32(v.ip->dst_addr);
		assert_int_equal(dst >> 8, rte_be_to_cpu_32(t_ip("198.18.1.0")) >> 8);
		subs[n].node = (int)(dst & 0xff) - 1;
		assert_int_equal(v.eth->dst_addr.addr_bytes[5], subs[n].node + 1);
		snprintf(subs[n].node_ip, sizeof(subs[n].node_ip), "198.18.1.%d", subs[n].node + 1);
		assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 11211);
		subs[n].sport = rte_be_to_cpu_16(v.udp->src_port);
		assert_true(subs[n].sport >= T_REPLY_BASE &&
			    subs[n].sport < T_REPLY_BASE + T_REPLY_COUNT);
		assert_int_equal(v.seq, 0);
		assert_int_equal(v.total, 1);
		subs[n].reqid = v.reqid;
		subs[n].blen = v.plen - 8;
		memcpy(subs[n].body, v.payload + 8, subs[n].blen);
		subs[n].body[subs[n].blen] = '\0';
		for (int i = 0; i < n; i++) {
			assert_int_not_equal(subs[i].node, subs[n].node); /* one per node */
			assert_false(subs[i].sport == subs[n].sport &&
				     subs[i].reqid == subs[n].reqid);
		}
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

static struct sub *sub_of(struct sub *subs, int n, int node)
{
	for (int i = 0; i < n; i++)
		if (subs[i].node == node)
			return &subs[i];
	fail_msg("no sub-request to node %d", node);
	return NULL;
}

/* A node's datagram for sub-request @p s. */
static void node_says(const struct sub *s, uint16_t seq, uint16_t total, const void *body,
		      size_t len)
{
	t_inject(0, t_reply(s->node_ip, 11211, s->sport, s->reqid, seq, total, body, len));
	t_poll(0);
}

/* A memcached message of one or more datagrams (BODY_MAX bytes each). */
static void node_message(const struct sub *s, const char *body, size_t len)
{
	uint16_t total = (uint16_t)((len + BODY_MAX - 1) / BODY_MAX);

	for (uint16_t i = 0; i < total; i++) {
		size_t n = len - i * BODY_MAX < BODY_MAX ? len - i * BODY_MAX : BODY_MAX;

		node_says(s, i, total, body + i * BODY_MAX, n);
	}
}

/* Dequeue the merged reply: datagrams to the client from the listen port, the client's
 * request id, seq 0..n-1 of total n, every one but the last full (@p body_max bytes).
 * @return the reassembled body (caller frees), its length in *len. */
static char *merged(uint16_t cport, uint16_t creqid, size_t body_max, size_t *len, int *ndg)
{
	char *out = calloc(1, 1 << 20);
	struct rte_mbuf *m;
	uint16_t n = 0, total = 0;

	assert_non_null(out);
	*len = 0;
	while ((m = t_sent(0)) != NULL) {
		struct t_view v;

		t_view_udp(m, &v, false);
		assert_memory_equal(&v.eth->dst_addr, t_client_mac, 6);
		assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
		assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
		assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
		assert_int_equal(rte_be_to_cpu_16(v.udp->src_port), T_LISTEN);
		assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), cport);
		assert_int_equal(v.reqid, creqid);
		assert_int_equal(v.seq, n);
		if (n == 0)
			total = v.total;
		assert_int_equal(v.total, total);
		assert_true(v.plen - 8 <= body_max);
		if (v.seq + 1 < v.total)
			assert_int_equal(v.plen - 8, body_max);
		memcpy(out + *len, v.payload + 8, v.plen - 8);
		*len += v.plen - 8;
		rte_pktmbuf_free(m);
		n++;
	}
	assert_int_equal(n, total);
	*ndg = n;
	return out;
}

static void expect_merged(uint16_t cport, uint16_t creqid, const char *want, size_t want_len,
			  int want_dgrams)
{
	size_t len;
	int n;
	char *got = merged(cport, creqid, BODY_MAX, &len, &n);

	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, want_len);
	assert_int_equal(n, want_dgrams);
	free(got);
}

static void request(uint16_t cport, uint16_t creqid, const void *text, size_t len)
{
	t_inject(0, t_request(cport, creqid, text, len));
	t_poll(0);
}

/* Stop the dp and check no mbuf is left behind: sub-requests, node replies, the merged
 * stream and the kept requests all went back to the pool (also of multi-gets still live). */
static void mg_stop(void)
{
	t_dp_stop();
	assert_int_equal(rte_mempool_in_use_count(rig.pool), 0);
}

/* Keys on one node: forwarded as is, no split. */
static void test_one_node_not_split(void **state)
{
	char a[16], b[16], text[64];
	struct sub s[4];

	(void)state;
	t_dp_start(1, 4, NULL);
	key_on(2, 0, "k", a, sizeof(a));
	key_on(2, 1, "k", b, sizeof(b));
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(5000, 1, text, strlen(text));
	assert_int_equal(collect_subs(s, 4), 1);
	assert_int_equal(s[0].node, 2);
	assert_string_equal(s[0].body, text);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_SPLIT], 0);
	assert_int_equal(st.ctr[DP_CTR_MULTI_TRACKED], 1);
	assert_int_equal(st.mget_live, 0);
	mg_stop();
}

/* gets over two nodes, then get over all four with a duplicate key and gat's exptime. */
static void test_ascii_two_and_all_nodes(void **state)
{
	char k[4][3][16], text[256], want[1024], msg[256];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	for (int node = 0; node < 4; node++)
		for (int i = 0; i < 3; i++)
			key_on(node, i, "m", k[node][i], sizeof(k[node][i]));
	snprintf(text, sizeof(text), "gets %s %s %s\r\n", k[1][0], k[3][0], k[1][1]);
	request(5001, 0x4242, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 2);
	snprintf(want, sizeof(want), "gets %s %s\r\n", k[1][0], k[1][1]);
	assert_string_equal(sub_of(s, n, 1)->body, want);
	snprintf(want, sizeof(want), "gets %s\r\n", k[3][0]);
	assert_string_equal(sub_of(s, n, 3)->body, want);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_SUBREQ], 2);
	/* Node 3 first: one hit, END in its own message; node 1: a hit, an empty message (a
	 * miss) and the last hit with END in one message. Nothing goes out before the end. */
	snprintf(msg, sizeof(msg), "VALUE %s 5 3 77\r\nabc\r\n", k[3][0]);
	node_says(sub_of(s, n, 3), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 3), 0, 1, "END\r\n", 5);
	snprintf(msg, sizeof(msg), "VALUE %s 0 2 78\r\nxy\r\n", k[1][0]);
	node_says(sub_of(s, n, 1), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 1), 0, 0, "", 0);
	assert_int_equal(t_sent_count(0), 0);
	assert_int_equal(t_stats().mget_live, 1);
	snprintf(msg, sizeof(msg), "VALUE %s 1 0 79\r\n\r\nEND\r\n", k[1][1]);
	node_says(sub_of(s, n, 1), 0, 1, msg, strlen(msg));
	/* In the request's key order, as one memcached holding every key would answer. */
	snprintf(
		want, sizeof(want),
		"VALUE %s 0 2 78\r\nxy\r\nVALUE %s 5 3 77\r\nabc\r\nVALUE %s 1 0 79\r\n\r\nEND\r\n",
		k[1][0], k[3][0], k[1][1]);
	expect_merged(5001, 0x4242, want, strlen(want), 1);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_SPLIT], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_MERGED], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 0);
	assert_int_equal(st.ctr[DP_CTR_MGET_DATAGRAMS], 1);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 1);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 5); /* node datagrams absorbed */
	assert_int_equal(st.ctr[DP_CTR_SLOTS_COMPLETED], 2);
	assert_int_equal(st.slots_live, 0);
	assert_int_equal(st.mget_live, 0);
	assert_int_equal(st.mget_bytes, 0);

	/* All four nodes; a duplicated key goes twice to its node, as memcached answers it. */
	snprintf(text, sizeof(text), "gat 300 %s %s %s %s %s %s\r\n", k[0][0], k[1][0], k[2][0],
		 k[3][0], k[0][0], k[2][1]);
	request(5002, 7, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 4);
	snprintf(want, sizeof(want), "gat 300 %s %s\r\n", k[0][0], k[0][0]);
	assert_string_equal(sub_of(s, n, 0)->body, want);
	snprintf(want, sizeof(want), "gat 300 %s %s\r\n", k[2][0], k[2][1]);
	assert_string_equal(sub_of(s, n, 2)->body, want);
	for (int node = 3; node >= 0; node--) {
		for (int rep = 0; rep < (node == 0 ? 2 : 1); rep++) {
			snprintf(msg, sizeof(msg), "VALUE %s %d 1\r\n%d\r\n", k[node][0], node,
				 node);
			node_says(sub_of(s, n, node), 0, 1, msg, strlen(msg));
		}
		node_says(sub_of(s, n, node), 0, 1, "END\r\n", 5);
	}
	/* Key order: k00 k10 k20 k30 k00 (k21 missed). */
	want[0] = '\0';
	for (int i = 0; i < 5; i++) {
		snprintf(msg, sizeof(msg), "VALUE %s %d 1\r\n%d\r\n", k[i % 4][0], i % 4, i % 4);
		strcat(want, msg);
	}
	strcat(want, "END\r\n");
	expect_merged(5002, 7, want, strlen(want), 1);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_SUBREQ], 6);
	assert_int_equal(st.ctr[DP_CTR_MGET_MERGED], 2);
	assert_int_equal(st.mget_live, 0);
	mg_stop();
}

/* Values over several datagrams on the way in and on the way out. */
static void test_multi_datagram(void **state)
{
	char a[16], b[16], text[64];
	static char big_a[5000], big_b[3000], msg[8200], want[16384];
	struct sub s[4];
	size_t wl = 0, ml;
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	key_on(0, 0, "big", a, sizeof(a));
	key_on(1, 0, "big", b, sizeof(b));
	for (size_t i = 0; i < sizeof(big_a); i++)
		big_a[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(big_b); i++)
		big_b[i] = (char)('A' + i % 23);
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(5003, 99, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 2);
	/* Node 0: its value as a 4-datagram message, then END. */
	ml = (size_t)snprintf(msg, sizeof(msg), "VALUE %s 0 %zu\r\n", a, sizeof(big_a));
	memcpy(msg + ml, big_a, sizeof(big_a));
	ml += sizeof(big_a);
	memcpy(msg + ml, "\r\n", 2);
	ml += 2;
	memcpy(want, msg, ml);
	wl = ml;
	node_message(sub_of(s, n, 0), msg, ml);
	node_says(sub_of(s, n, 0), 0, 1, "END\r\n", 5);
	/* Node 1: value and END in one 3-datagram message. */
	ml = (size_t)snprintf(msg, sizeof(msg), "VALUE %s 9 %zu\r\n", b, sizeof(big_b));
	memcpy(msg + ml, big_b, sizeof(big_b));
	ml += sizeof(big_b);
	memcpy(msg + ml, "\r\nEND\r\n", 7);
	memcpy(want + wl, msg, ml + 7);
	wl += ml + 7;
	node_message(sub_of(s, n, 1), msg, ml + 7);
	expect_merged(5003, 99, want, wl, (int)((wl + BODY_MAX - 1) / BODY_MAX));
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_DATAGRAMS], (wl + BODY_MAX - 1) / BODY_MAX);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 4 + 1 + 3);
	assert_true(st.mget_bytes_peak >= wl - 5); /* the items; END is added when sending */
	mg_stop();
}

static void small_mtu(struct dp_config *c)
{
	c->mtu = 576;
}

/* A smaller path MTU: datagrams of mtu - 28 bytes. */
static void test_mtu(void **state)
{
	char a[16], b[16], text[64], msg[1200], want[2400];
	struct sub s[4];
	size_t len, wl = 0;
	int n, nd;

	(void)state;
	t_dp_start(1, 4, small_mtu);
	key_on(0, 0, "z", a, sizeof(a));
	key_on(3, 0, "z", b, sizeof(b));
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(5004, 5, text, strlen(text));
	n = collect_subs(s, 4);
	for (int i = 0; i < 2; i++) {
		size_t ml = (size_t)snprintf(msg, sizeof(msg), "VALUE %s 0 1000\r\n", i ? b : a);

		memset(msg + ml, i ? 'q' : 'p', 1000);
		memcpy(msg + ml + 1000, "\r\nEND\r\n", 8);
		node_says(sub_of(s, n, i ? 3 : 0), 0, 1, msg, ml + 1007);
		memcpy(want + wl, msg, ml + 1002);
		wl += ml + 1002;
	}
	memcpy(want + wl, "END\r\n", 5);
	wl += 5;
	char *got = merged(5004, 5, 576 - 28 - 8, &len, &nd);

	assert_int_equal(len, wl);
	assert_memory_equal(got, want, wl);
	assert_int_equal(nd, (int)((wl + 539) / 540));
	free(got);
	mg_stop();
}

static void short_timeout(struct dp_config *c)
{
	c->request_timeout_ms = 20;
}

static void wait_timeout(void)
{
	usleep(30000);
	for (int i = 0; i < 20; i++)
		t_poll(0);
}

static uint64_t node_partial(int node)
{
	struct dp_node_stats ns;

	assert_int_equal(dp_member_node(rig.dp, (uint32_t)node, &ns), 0);
	return ns.mget_partial;
}

/* A silent node: after the timeout its keys are misses, the rest is there; a late answer
 * from it reaches nobody. */
static void test_silent_node(void **state)
{
	char a[16], b[16], c[16], text[64], msg[64], want[256];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	key_on(0, 0, "s", a, sizeof(a));
	key_on(1, 0, "s", b, sizeof(b));
	key_on(2, 0, "s", c, sizeof(c));
	snprintf(text, sizeof(text), "get %s %s %s\r\n", a, b, c);
	request(5005, 11, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	snprintf(msg, sizeof(msg), "VALUE %s 0 1\r\nA\r\nEND\r\n", a);
	node_says(sub_of(s, n, 0), 0, 1, msg, strlen(msg));
	/* Node 1 sends half a reply (its value, no END) and node 2 nothing. */
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nB\r\n", b);
	node_says(sub_of(s, n, 1), 0, 1, want, strlen(want));
	assert_int_equal(t_sent_count(0), 0);
	wait_timeout();
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nA\r\nVALUE %s 0 1\r\nB\r\nEND\r\n", a, b);
	expect_merged(5005, 11, want, strlen(want), 1);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_MERGED], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_TIMEOUTS], 2);
	assert_int_equal(node_partial(0), 0);
	assert_int_equal(node_partial(1), 1);
	assert_int_equal(node_partial(2), 1);
	assert_int_equal(st.slots_live, 0);
	assert_int_equal(st.mget_live, 0);
	/* Node 2 wakes up: its slot is gone. */
	node_says(sub_of(s, n, 2), 0, 1, "END\r\n", 5);
	assert_int_equal(t_sent_count(0), 0);
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 1);
	/* A node answering an error: its keys are misses too, counted as an error. */
	request(5006, 12, text, strlen(text));
	n = collect_subs(s, 4);
	snprintf(msg, sizeof(msg), "VALUE %s 0 1\r\nA\r\nEND\r\n", a);
	node_says(sub_of(s, n, 0), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 1), 0, 1, "SERVER_ERROR out of memory\r\n", 28);
	node_says(sub_of(s, n, 2), 0, 1, "END\r\n", 5);
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nA\r\nEND\r\n", a);
	expect_merged(5006, 12, want, strlen(want), 1);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_ERRORS], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 2);
	assert_int_equal(node_partial(1), 2);
	mg_stop();
}

/* Two nodes' multi-datagram values arriving interleaved datagram by datagram: each value
 * whole and in key order. A third node's value cut off by the timeout is left out whole. */
static void test_interleaved_and_cut(void **state)
{
	char k[3][16], text[128];
	static char msg[3][4200], want[9000];
	size_t ml[3], wl = 0;
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	for (int i = 0; i < 3; i++)
		key_on(i, 0, "iv", k[i], sizeof(k[i]));
	snprintf(text, sizeof(text), "get %s %s %s\r\n", k[2], k[1], k[0]);
	request(5010, 31, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		ml[i] = (size_t)snprintf(msg[i], sizeof(msg[i]), "VALUE %s %d 3000\r\n", k[i], i);
		memset(msg[i] + ml[i], 'a' + i, 3000);
		memcpy(msg[i] + ml[i] + 3000, "\r\nEND\r\n", 7);
		ml[i] += 3007;
	}
	/* Datagrams 0, 1, 2 of nodes 0 and 1 alternate; node 2 sends only datagram 0 of 3. */
	for (uint16_t d = 0; d < 3; d++)
		for (int i = 0; i < 3; i++) {
			size_t off = d * BODY_MAX,
			       len = ml[i] - off < BODY_MAX ? ml[i] - off : BODY_MAX;

			if (i < 2 || d == 0)
				node_says(sub_of(s, n, i), d, 3, msg[i] + off, len);
		}
	assert_int_equal(t_sent_count(0), 0);
	wait_timeout();
	for (int i = 1; i >= 0; i--) { /* key order: k2 (cut: left out), k1, k0 */
		memcpy(want + wl, msg[i], ml[i] - 5);
		wl += ml[i] - 5;
	}
	memcpy(want + wl, "END\r\n", 5);
	wl += 5;
	expect_merged(5010, 31, want, wl, (int)((wl + BODY_MAX - 1) / BODY_MAX));
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_TIMEOUTS], 1);
	assert_int_equal(node_partial(2), 1);
	assert_int_equal(st.mget_bytes, 0);
	mg_stop();
}

/* A binary GETKQ ... NOOP pipeline: hits from each node, one NOOP response at the end. */
static void test_binary(void **state)
{
	char k[3][16];
	uint8_t req[512], want[512], resp[128];
	size_t rl = 0, wl = 0;
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	for (int i = 0; i < 3; i++)
		key_on(i, 0, "b", k[i], sizeof(k[i]));
	for (int i = 0; i < 3; i++) { /* GETKQ k_i, opaque 100+i */
		uint8_t *h = req + rl;
		size_t kl = strlen(k[i]);

		memset(h, 0, 24);
		h[0] = 0x80;
		h[1] = 0x0d;
		h[3] = (uint8_t)kl;
		h[11] = (uint8_t)kl;
		h[15] = (uint8_t)(100 + i);
		memcpy(h + 24, k[i], kl);
		rl += 24 + kl;
	}
	memset(req + rl, 0, 24); /* NOOP, opaque 0x01020304 */
	req[rl] = 0x80;
	req[rl + 1] = 0x0a;
	req[rl + 12] = 1;
	req[rl + 13] = 2;
	req[rl + 14] = 3;
	req[rl + 15] = 4;
	rl += 24;
	request(5007, 13, req, rl);
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	/* Each sub-request: its GETKQ then the NOOP, byte for byte. */
	for (int i = 0; i < 3; i++) {
		struct sub *sb = sub_of(s, n, i);
		size_t kl = strlen(k[i]), off = 0;

		for (int j = 0; j < i; j++)
			off += 24 + strlen(k[j]);
		assert_int_equal(sb->blen, 24 + kl + 24);
		assert_memory_equal(sb->body, req + off, 24 + kl);
		assert_memory_equal(sb->body + 24 + kl, req + rl - 24, 24);
	}
	/* Node 1 misses (only NOOP); nodes 0 and 2 hit: GETKQ response, NOOP response. They
	 * answer in reverse; the merged reply is in key order. */
	uint8_t hit[3][64];
	size_t hl[3] = {0};

	for (int i = 2; i >= 0; i--) {
		struct sub *sb = sub_of(s, n, i);
		uint8_t noop[24] = {0x81, 0x0a};
		size_t kl = strlen(k[i]), l = 24 + 4 + kl + 2;

		noop[12] = 1, noop[13] = 2, noop[14] = 3, noop[15] = 4;
		if (i != 1) {
			memset(resp, 0, 24);
			resp[0] = 0x81;
			resp[1] = 0x0d;
			resp[3] = (uint8_t)kl;
			resp[4] = 4;
			resp[11] = (uint8_t)(4 + kl + 2);
			resp[15] = (uint8_t)(100 + i);
			resp[23] = (uint8_t)(i + 1); /* cas */
			memset(resp + 24, 0, 4);
			memcpy(resp + 28, k[i], kl);
			memcpy(resp + 28 + kl, "v!", 2);
			node_says(sb, 0, 1, resp, l);
			memcpy(hit[i], resp, l);
			hl[i] = l;
		} else {
			node_says(sb, 0, 0, "", 0);
		}
		node_says(sb, 0, 1, noop, 24);
	}
	for (int i = 0; i < 3; i++) {
		memcpy(want + wl, hit[i], hl[i]);
		wl += hl[i];
	}
	memset(want + wl, 0, 24);
	want[wl] = 0x81;
	want[wl + 1] = 0x0a;
	want[wl + 12] = 1, want[wl + 13] = 2, want[wl + 14] = 3, want[wl + 15] = 4;
	wl += 24;
	expect_merged(5007, 13, (const char *)want, wl, 1);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_MERGED], 1);
	mg_stop();
}

/* Meta mg ... mn: responses from each node, one MN; a silent node's mg get EN (with O). */
static void base64(const char *in, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(uint8_t)in[i] << 16;

		v |= i + 1 < n ? (uint32_t)(uint8_t)in[i + 1] << 8 : 0;
		v |= i + 2 < n ? (uint8_t)in[i + 2] : 0;
		out[o++] = tab[v >> 18];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? tab[v & 63] : '=';
	}
	out[o] = '\0';
}

static void test_meta(void **state)
{
	char k[3][16], b64[3][32], plain[16], text[320], msg[128], want[512];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	for (int i = 0; i < 3; i++)
		key_on(i, 0, "mm", k[i], sizeof(k[i]));
	key_on(1, 0, "b64_", plain, sizeof(plain)); /* placed by its decoded bytes */
	base64(plain, b64[1]);
	snprintf(text, sizeof(text),
		 "mg %s v k O1\r\nmg %s v O2 k\r\nmg %s v q\r\nmg %s s\r\nmg %s b k v O3 "
		 "s\r\nmn\r\n",
		 k[0], k[1], k[2], k[0], b64[1]);
	request(5008, 14, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	snprintf(want, sizeof(want), "mg %s v k O1\r\nmg %s s\r\nmn\r\n", k[0], k[0]);
	assert_string_equal(sub_of(s, n, 0)->body, want);
	snprintf(want, sizeof(want), "mg %s v q\r\nmn\r\n", k[2]);
	assert_string_equal(sub_of(s, n, 2)->body, want);
	snprintf(msg, sizeof(msg), "VA 2 k%s O1\r\nhi\r\n", k[0]);
	node_says(sub_of(s, n, 0), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 0), 0, 1, "HD s2\r\n", 7);
	node_says(sub_of(s, n, 0), 0, 1, "MN\r\n", 4);
	node_says(sub_of(s, n, 2), 0, 1, "VA 1\r\nz\r\nMN\r\n", 13);
	wait_timeout(); /* node 1 is silent */
	/* Key order: mg k0, mg k1 (EN: silent node), mg k2 (q hit), mg k0 s, mg b64 (EN). The EN
	 * lines as memcached 1.6.18 answers such misses itself ("mg bWlzcw== b k v O9" -> "EN
	 * kbWlzcw== b O9"): O and k in request order, " b" after a base64 key. */
	snprintf(want, sizeof(want), "%sEN O2 k%s\r\nVA 1\r\nz\r\nHD s2\r\nEN k%s b O3\r\nMN\r\n",
		 msg, k[1], b64[1]);
	expect_merged(5008, 14, want, strlen(want), 1);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_PARTIAL], 1);
	mg_stop();
}

static void tight_limits(struct dp_config *c)
{
	c->mget_max = 2;
	c->mget_bytes = 3000;
}

/* Past the limits: new multi-gets refused with SERVER_ERROR; a reply over the buffer is an
 * error; single gets keep going. */
static void test_limits(void **state)
{
	char a[16], b[16], text[64];
	static char msg[4000];
	struct sub s[4];
	struct rte_mbuf *m;
	struct t_view v;
	int n;

	(void)state;
	t_dp_start(1, 4, tight_limits);
	key_on(0, 0, "l", a, sizeof(a));
	key_on(1, 0, "l", b, sizeof(b));
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(6000, 1, text, strlen(text));
	assert_int_equal(collect_subs(s, 4), 2);
	request(6001, 2, text, strlen(text));
	assert_int_equal(collect_subs(s, 4), 2);
	request(6002, 3, text, strlen(text));
	m = t_sent(0);
	t_view_udp(m, &v, false);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 6002);
	assert_int_equal(v.reqid, 3);
	assert_true(v.plen > 8 + 13);
	assert_memory_equal(v.payload + 8, "SERVER_ERROR ", 13);
	assert_memory_equal(v.payload + v.plen - 2, "\r\n", 2);
	rte_pktmbuf_free(m);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_REFUSED], 1);
	assert_int_equal(st.ctr[DP_CTR_ANSWERED], 1);
	assert_int_equal(st.mget_live, 2);
	/* Single gets pass meanwhile. */
	snprintf(text, sizeof(text), "get %s\r\n", a);
	request(6003, 4, text, strlen(text));
	assert_int_equal(collect_subs(s, 4), 1);
	assert_int_equal(s[0].node, 0);
	mg_stop();

	/* One reply over the 3000-byte buffer: the client gets SERVER_ERROR, memory freed. */
	t_dp_start(1, 4, tight_limits);
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(6004, 5, text, strlen(text));
	n = collect_subs(s, 4);
	size_t ml = (size_t)snprintf(msg, sizeof(msg), "VALUE %s 0 3500\r\n", a);
	memset(msg + ml, 'x', 3500);
	memcpy(msg + ml + 3500, "\r\nEND\r\n", 7);
	node_message(sub_of(s, n, 0), msg, ml + 3507);
	node_says(sub_of(s, n, 1), 0, 1, "END\r\n", 5);
	const char *err = "SERVER_ERROR multi-get reply larger than the router's buffer\r\n";
	expect_merged(6004, 5, err, strlen(err), 1);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_OVERFLOW], 1);
	assert_int_equal(st.mget_bytes, 0);
	assert_true(st.mget_bytes_peak <= 3000);
	assert_int_equal(st.mget_live, 0);
	mg_stop();
}

/* A sub-reply arriving on the other worker is handed to the slot's owner. */
static void test_handoff(void **state)
{
	char a[16], b[16], text[64], msg[64], want[128];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(2, 4, NULL);
	key_on(0, 0, "h", a, sizeof(a));
	key_on(2, 0, "h", b, sizeof(b));
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	request(6100, 21, text, strlen(text));
	n = collect_subs(s, 4);
	snprintf(msg, sizeof(msg), "VALUE %s 0 1\r\n1\r\nEND\r\n", a);
	t_inject(1, t_reply(sub_of(s, n, 0)->node_ip, 11211, sub_of(s, n, 0)->sport,
			    sub_of(s, n, 0)->reqid, 0, 1, msg, strlen(msg)));
	t_poll(1);
	node_says(sub_of(s, n, 2), 0, 1, "END\r\n", 5);
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\n1\r\nEND\r\n", a);
	expect_merged(6100, 21, want, strlen(want), 1);
	assert_int_equal(t_stats().ctr[DP_CTR_TAKEN_OVER], 1);
	mg_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_node_not_split),
		cmocka_unit_test(test_ascii_two_and_all_nodes),
		cmocka_unit_test(test_multi_datagram),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_silent_node),
		cmocka_unit_test(test_interleaved_and_cut),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_handoff),
	};

	t_eal_setup("dp_multiget", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
