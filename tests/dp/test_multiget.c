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
#include "mcproto.h"

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

/* Dequeue every packet on queue 0 as sub-requests: router -> a node, one datagram each (one
 * per node unless @p per_node_many). */
static int collect(struct sub *subs, int max, bool per_node_many)
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
			if (!per_node_many)
				assert_int_not_equal(subs[i].node, subs[n].node);
			assert_false(subs[i].sport == subs[n].sport &&
				     subs[i].reqid == subs[n].reqid);
		}
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

static int collect_subs(struct sub *subs, int max)
{
	return collect(subs, max, false);
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
	/* Each sub-request: its GETKQ with the router's tag (the key's index) as opaque, then
	 * the NOOP, byte for byte. */
	for (int i = 0; i < 3; i++) {
		struct sub *sb = sub_of(s, n, i);
		size_t kl = strlen(k[i]), off = 0;
		uint8_t tagged[64];

		for (int j = 0; j < i; j++)
			off += 24 + strlen(k[j]);
		memcpy(tagged, req + off, 24 + kl);
		tagged[15] = (uint8_t)i;
		assert_int_equal(sb->blen, 24 + kl + 24);
		assert_memory_equal(sb->body, tagged, 24 + kl);
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
			resp[15] = (uint8_t)i;	     /* the tag echoed */
			resp[23] = (uint8_t)(i + 1); /* cas */
			memset(resp + 24, 0, 4);
			memcpy(resp + 28, k[i], kl);
			memcpy(resp + 28 + kl, "v!", 2);
			node_says(sb, 0, 1, resp, l);
			memcpy(hit[i], resp, l);
			hit[i][15] = (uint8_t)(100 + i); /* the client's opaque back */
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
	/* The router's tags: the client's O value replaced, or an O appended. */
	snprintf(want, sizeof(want), "mg %s v k O0\r\nmg %s s O3\r\nmn\r\n", k[0], k[0]);
	assert_string_equal(sub_of(s, n, 0)->body, want);
	snprintf(want, sizeof(want), "mg %s v q O2\r\nmn\r\n", k[2]);
	assert_string_equal(sub_of(s, n, 2)->body, want);
	snprintf(want, sizeof(want), "mg %s v O1 k\r\nmg %s b k v O4 s\r\nmn\r\n", k[1], b64[1]);
	assert_string_equal(sub_of(s, n, 1)->body, want);
	snprintf(msg, sizeof(msg), "VA 2 k%s O0\r\nhi\r\n", k[0]);
	node_says(sub_of(s, n, 0), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 0), 0, 1, "HD s2 O3\r\n", 10);
	node_says(sub_of(s, n, 0), 0, 1, "MN\r\n", 4);
	node_says(sub_of(s, n, 2), 0, 1, "VA 1 O2\r\nz\r\nMN\r\n", 16);
	snprintf(msg, sizeof(msg), "VA 2 k%s O1\r\nhi\r\n", k[0]);
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

/* ---- answers placed by the router's tags (meta O, binary opaque), never by order ------- */

/* The case: a quiet miss on one node before a hit on another. With k7 absent on node
 * A, k1 = "one" on A and k2 = "two" on B, "mg k7 q v / mg k2 v / mg k1 v / mn" is answered
 * "two" then "one", as one memcached would; merged by order it was "one" then "two". */
static void meta_quiet_case(int silent, const char *want_fmt)
{
	char k7[16], k1[16], k2[16], text[128], want[256];
	struct sub s[4];
	int n;

	t_dp_start(1, 4, short_timeout);
	key_on(0, 0, "q7_", k7, sizeof(k7));
	key_on(0, 1, "q1_", k1, sizeof(k1));
	key_on(1, 0, "q2_", k2, sizeof(k2));
	snprintf(text, sizeof(text), "mg %s q v\r\nmg %s v\r\nmg %s v\r\nmn\r\n", k7, k2, k1);
	request(5200, 40, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 2);
	snprintf(want, sizeof(want), "mg %s q v O0\r\nmg %s v O2\r\nmn\r\n", k7, k1);
	assert_string_equal(sub_of(s, n, 0)->body, want);
	snprintf(want, sizeof(want), "mg %s v O1\r\nmn\r\n", k2);
	assert_string_equal(sub_of(s, n, 1)->body, want);
	if (silent != 0) {
		node_says(sub_of(s, n, 0), 0, 0, "", 0); /* the quiet miss: an empty message */
		node_says(sub_of(s, n, 0), 0, 1, "VA 3 O2\r\none\r\n", 14);
		node_says(sub_of(s, n, 0), 0, 1, "MN\r\n", 4);
	}
	if (silent != 1) {
		node_says(sub_of(s, n, 1), 0, 1, "VA 3 O1\r\ntwo\r\n", 14);
		node_says(sub_of(s, n, 1), 0, 1, "MN\r\n", 4);
	}
	if (silent >= 0)
		wait_timeout();
	expect_merged(5200, 40, want_fmt, strlen(want_fmt), 1);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_PARTIAL], silent >= 0);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_NODE_ERRORS], 0);
	mg_stop();
}

static void test_meta_quiet_miss_order(void **state)
{
	(void)state;
	meta_quiet_case(-1, "VA 3\r\ntwo\r\nVA 3\r\none\r\nMN\r\n");
	/* Node B times out: its mg (not quiet) gets EN; node A times out: its quiet miss stays
	 * absent, its hit becomes EN. */
	meta_quiet_case(1, "EN\r\nVA 3\r\none\r\nMN\r\n");
	meta_quiet_case(0, "VA 3\r\ntwo\r\nEN\r\nMN\r\n");
}

/* One key asked in base64 and in plain form (and twice in each) on one node, mixed with the
 * client's own O values (one empty) and k: each answer goes to its own request whatever key form
 * the node echoes; the client's O values come back, the router's tags never. */
static void test_meta_key_forms(void **state)
{
	char k1[16], x[16], b[32], text[320], want[512], msg[128];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	key_on(2, 0, "kf", k1, sizeof(k1));
	key_on(3, 0, "kx", x, sizeof(x));
	base64(k1, b);
	snprintf(text, sizeof(text),
		 "mg %s b k v\r\nmg %s v\r\nmg %s k v O7\r\nmg %s v O\r\nmg %s b v q Oabc\r\n"
		 "mg %s k O1234567890123456789012345678901 s v\r\nmn\r\n",
		 b, x, k1, k1, b, k1);
	request(5201, 41, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 2);
	snprintf(want, sizeof(want),
		 "mg %s b k v O0\r\nmg %s k v O2\r\nmg %s v O3\r\nmg %s b v q O4\r\n"
		 "mg %s k O5 s v\r\nmn\r\n",
		 b, k1, k1, b, k1);
	assert_string_equal(sub_of(s, n, 2)->body, want);
	/* memcached echoes the hit's key as stored (plain), whatever form it was asked in. */
	snprintf(msg, sizeof(msg), "VA 3 k%s O0\r\nabc\r\n", k1);
	node_says(sub_of(s, n, 2), 0, 1, msg, strlen(msg));
	snprintf(msg, sizeof(msg), "VA 3 k%s O2\r\nabc\r\n", k1);
	node_says(sub_of(s, n, 2), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 2), 0, 1, "VA 3 O3\r\nabc\r\n", 14);
	node_says(sub_of(s, n, 2), 0, 1, "VA 3 O4\r\nabc\r\n", 14);
	snprintf(msg, sizeof(msg), "VA 3 k%s O5 s3\r\nabc\r\n", k1);
	node_says(sub_of(s, n, 2), 0, 1, msg, strlen(msg));
	node_says(sub_of(s, n, 2), 0, 1, "MN\r\n", 4);
	node_says(sub_of(s, n, 3), 0, 1, "EN O1\r\n", 7);
	node_says(sub_of(s, n, 3), 0, 1, "MN\r\n", 4);
	snprintf(want, sizeof(want),
		 "VA 3 k%s\r\nabc\r\nEN\r\nVA 3 k%s O7\r\nabc\r\nVA 3 O\r\nabc\r\nVA 3 "
		 "Oabc\r\nabc\r\n"
		 "VA 3 k%s O1234567890123456789012345678901 s3\r\nabc\r\nMN\r\n",
		 k1, k1, k1);
	expect_merged(5201, 41, want, strlen(want), 1);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 0);
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_ERRORS], 0);
	assert_int_equal(t_drop(DP_DROP_REPLY_NO_SLOT), 0);
	/* The same request, the node with k1 silent: EN for the non-quiet mg with the client's O
	 * and k (base64 with " b"), nothing for the quiet one. */
	request(5201, 42, text, strlen(text));
	n = collect_subs(s, 4);
	node_says(sub_of(s, n, 3), 0, 1, "EN O1\r\nMN\r\n", 11);
	wait_timeout();
	snprintf(want, sizeof(want),
		 "EN k%s b\r\nEN\r\nEN k%s O7\r\nEN O\r\nEN k%s O1234567890123456789012345678901"
		 "\r\nMN\r\n",
		 b, k1, k1);
	expect_merged(5201, 42, want, strlen(want), 1);
	mg_stop();
}

/* A binary request header (extras zero) for @p key. @return its length. */
static size_t bin_req(uint8_t *h, uint8_t opcode, const char *key, uint8_t extlen, uint32_t opaque)
{
	size_t kl = key != NULL ? strlen(key) : 0;

	memset(h, 0, 24 + extlen);
	h[0] = 0x80;
	h[1] = opcode;
	h[3] = (uint8_t)kl;
	h[4] = extlen;
	h[11] = (uint8_t)(extlen + kl);
	h[12] = (uint8_t)(opaque >> 24), h[13] = (uint8_t)(opaque >> 16);
	h[14] = (uint8_t)(opaque >> 8), h[15] = (uint8_t)opaque;
	if (kl)
		memcpy(h + 24 + extlen, key, kl);
	return 24 + extlen + kl;
}

/* A binary GETQ/GATQ hit response: flags extras, value @p v. @return its length. */
static size_t bin_hit(uint8_t *h, uint8_t opcode, uint32_t opaque, const char *v)
{
	size_t vl = strlen(v);

	memset(h, 0, 28);
	h[0] = 0x81;
	h[1] = opcode;
	h[4] = 4;
	h[11] = (uint8_t)(4 + vl);
	h[12] = (uint8_t)(opaque >> 24), h[13] = (uint8_t)(opaque >> 16);
	h[14] = (uint8_t)(opaque >> 8), h[15] = (uint8_t)opaque;
	h[23] = 7;    /* cas */
	h[27] = 0x2a; /* flags */
	memcpy(h + 28, v, vl);
	return 28 + vl;
}

/* memcached's NOOP response to the client's NOOP (opaque 0x01020304). */
static size_t bin_noop_resp(uint8_t *h)
{
	size_t l = bin_req(h, MC_BIN_NOOP, NULL, 0, 0x01020304);

	h[0] = 0x81;
	return l;
}

/* GETQ and GATQ (no key echo) with misses on both nodes: each hit under the client's opaque,
 * in request order; a silent node's quiet keys stay absent. */
static void test_binary_quiet_order(void **state)
{
	char k7[16], k1[16], k2[16], k3[16];
	uint8_t req[512], want[512], resp[128], tag[4][64];
	size_t rl = 0, wl = 0, l;
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	key_on(0, 0, "g7_", k7, sizeof(k7));
	key_on(0, 1, "g1_", k1, sizeof(k1));
	key_on(1, 0, "g2_", k2, sizeof(k2));
	key_on(1, 1, "g3_", k3, sizeof(k3));
	for (int round = 0; round < 2; round++) {
		rl = wl = 0;
		rl += bin_req(req + rl, MC_BIN_GETQ, k7, 0, 0xa0000000u);
		rl += bin_req(req + rl, MC_BIN_GETQ, k2, 0, 0xa1);
		rl += bin_req(req + rl, MC_BIN_GATQ, k1, 4, 0xa2);
		rl += bin_req(req + rl, MC_BIN_GATQ, k3, 4, 0xdeadbeef);
		rl += bin_req(req + rl, MC_BIN_NOOP, NULL, 0, 0x01020304);
		request(5202, (uint16_t)(43 + round), req, rl);
		n = collect_subs(s, 4);
		assert_int_equal(n, 2);
		/* Node A: GETQ k7 tagged 0, GATQ k1 tagged 2, NOOP. */
		l = bin_req(tag[0], MC_BIN_GETQ, k7, 0, 0);
		l += bin_req(tag[0] + l, MC_BIN_GATQ, k1, 4, 2);
		l += bin_req(tag[0] + l, MC_BIN_NOOP, NULL, 0, 0x01020304);
		assert_int_equal(sub_of(s, n, 0)->blen, l);
		assert_memory_equal(sub_of(s, n, 0)->body, tag[0], l);
		l = bin_req(tag[1], MC_BIN_GETQ, k2, 0, 1);
		l += bin_req(tag[1] + l, MC_BIN_GATQ, k3, 4, 3);
		l += bin_req(tag[1] + l, MC_BIN_NOOP, NULL, 0, 0x01020304);
		assert_int_equal(sub_of(s, n, 1)->blen, l);
		assert_memory_equal(sub_of(s, n, 1)->body, tag[1], l);
		/* B answers first: k2 = "two" (k3 misses); then A: k1 = "one" (k7 misses). */
		node_says(sub_of(s, n, 1), 0, 1, resp, bin_hit(resp, MC_BIN_GETQ, 1, "two"));
		node_says(sub_of(s, n, 1), 0, 0, "", 0);
		node_says(sub_of(s, n, 1), 0, 1, resp, bin_noop_resp(resp));
		if (round == 0) {
			node_says(sub_of(s, n, 0), 0, 1, resp,
				  bin_hit(resp, MC_BIN_GATQ, 2, "one"));
			node_says(sub_of(s, n, 0), 0, 1, resp, bin_noop_resp(resp));
		} else {
			wait_timeout(); /* node A silent */
		}
		wl += bin_hit(want + wl, MC_BIN_GETQ, 0xa1, "two");
		if (round == 0)
			wl += bin_hit(want + wl, MC_BIN_GATQ, 0xa2, "one");
		wl += bin_req(want + wl, MC_BIN_NOOP, NULL, 0, 0x01020304);
		want[wl - 24] = 0x81;
		expect_merged(5202, (uint16_t)(43 + round), (const char *)want, wl, 1);
	}
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_MERGED], 2);
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_ERRORS], 0);
	mg_stop();
}

/* A node that answers without the router's tag, with a tag of another node's key, twice
 * with one tag or with garbage in it cannot be placed: counted as a node error, its keys not
 * yet answered become misses, the rest is exact. */
static void test_tag_garbage(void **state)
{
	static const char *bad[] = {"VA 1\r\nX\r\nMN\r\n", "VA 1 O1\r\nX\r\nMN\r\n",
				    "VA 1 O0\r\nX\r\nVA 1 O0\r\nY\r\nMN\r\n", "VA 1 O9x\r\nX\r\n"};
	char a[16], b[16], text[128], want[128];
	struct sub s[4];
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	key_on(0, 0, "t", a, sizeof(a));
	key_on(1, 0, "t", b, sizeof(b));
	snprintf(text, sizeof(text), "mg %s v\r\nmg %s v O5\r\nmn\r\n", a, b);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		request(5203, (uint16_t)(50 + i), text, strlen(text));
		n = collect_subs(s, 4);
		node_says(sub_of(s, n, 1), 0, 1, "VA 1 O1\r\nB\r\nMN\r\n", 16);
		node_says(sub_of(s, n, 0), 0, 1, bad[i], strlen(bad[i]));
		/* The answer placed before a repeated tag stays; the node's other keys miss. */
		snprintf(want, sizeof(want), "%sVA 1 O5\r\nB\r\nMN\r\n",
			 i == 2 ? "VA 1\r\nX\r\n" : "EN\r\n");
		expect_merged(5203, (uint16_t)(50 + i), want, strlen(want), 1);
		assert_int_equal(t_stats().ctr[DP_CTR_MGET_NODE_ERRORS], i + 1);
	}
	mg_stop();
}

/* The tags make a sub-request longer than the client's part of it: a node's keys that no
 * longer fit one datagram of the path go in two sub-requests, still merged in key order. */
static void test_tags_overflow_datagram(void **state)
{
	static char text[2048], want[4096], msg[64], body[2][1500];
	char keys[41][16];
	struct sub s[8];
	size_t tl = 0, wl = 0, bl[2] = {0};
	int n, nodes0 = 0;

	(void)state;
	t_dp_start(1, 4, small_mtu); /* 540-byte datagram bodies */
	for (int i = 0; i < 40; i++)
		key_on(0, i, "o", keys[i], sizeof(keys[i]));
	key_on(1, 0, "o", keys[40], sizeof(keys[40]));
	for (int i = 0; i <= 40; i++)
		tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "mg %s v\r\n", keys[i]);
	tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "mn\r\n");
	assert_true(tl <= 576 - 28 - 8 + 40); /* the client's request: about one datagram */
	request(5204, 60, text, tl);
	n = collect(s, 8, true);
	assert_int_equal(n, 3);
	for (int j = 0; j < n; j++) {
		assert_true(s[j].blen <= 540);
		assert_memory_equal(s[j].body + s[j].blen - 4, "mn\r\n", 4);
		nodes0 += s[j].node == 0;
	}
	assert_int_equal(nodes0, 2);
	/* Every key exactly once over node 0's two sub-requests, in order, with its tag. */
	for (int j = 0, part = 0; j < n; j++)
		if (s[j].node == 0) {
			memcpy(body[part], s[j].body, s[j].blen - 4);
			bl[part++] = s[j].blen - 4;
		}
	body[0][bl[0]] = body[1][bl[1]] = '\0';
	for (int i = 0, part = 0; i < 40; i++) {
		snprintf(msg, sizeof(msg), "mg %s v O%d\r\n", keys[i], i);
		if (strstr(body[part], msg) == NULL)
			part++;
		assert_true(part < 2 && strstr(body[part], msg) != NULL);
	}
	/* Each node answers every key with a hit whose value is its index, tags echoed. */
	for (int j = 0; j < n; j++) {
		char *line = s[j].body;

		for (char *o; (o = strstr(line, " O")) != NULL; line = o + 2) {
			int k = atoi(o + 2);
			int ml = snprintf(msg, sizeof(msg), "VA %d O%d\r\n%d\r\n", k >= 10 ? 2 : 1,
					  k, k);

			node_says(&s[j], 0, 1, msg, (size_t)ml);
		}
		node_says(&s[j], 0, 1, "MN\r\n", 4);
	}
	for (int i = 0; i <= 40; i++)
		wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "VA %d\r\n%d\r\n",
				       i >= 10 ? 2 : 1, i);
	wl += (size_t)snprintf(want + wl, sizeof(want) - wl, "MN\r\n");
	char *got;
	size_t len;
	int nd;

	got = merged(5204, 60, 540, &len, &nd);
	assert_int_equal(len, wl);
	assert_memory_equal(got, want, wl);
	free(got);
	mg_stop();
}

/* Three nodes' 600 KB values whose datagrams arrive alternating node by node: every datagram
 * is a piece of its own (1,296 pieces), and the merged reply is still whole and in key order,
 * not an overflow (512 pieces were too few: e2e-hardening-reply saw it once). */
static void test_interleaved_three_large(void **state)
{
	enum { VLEN = 600000 };
	char keys[3][16], text[96], *msg[3], *want = malloc(3 * (VLEN + 64));
	size_t ml[3], wl = 0, len;
	uint16_t total[3];
	struct sub s[4];
	int n, nd;

	(void)state;
	assert_non_null(want);
	t_dp_start(1, 4, NULL);
	for (int k = 0; k < 3; k++)
		key_on(k, 0, "ilv", keys[k], sizeof(keys[k]));
	snprintf(text, sizeof(text), "get %s %s %s\r\n", keys[0], keys[1], keys[2]);
	request(6300, 78, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	for (int k = 0; k < 3; k++) {
		msg[k] = malloc(VLEN + 64);
		assert_non_null(msg[k]);
		ml[k] = (size_t)snprintf(msg[k], 64, "VALUE %s 0 %d\r\n", keys[k], VLEN);
		for (int i = 0; i < VLEN; i++)
			msg[k][ml[k] + (size_t)i] = (char)('a' + (i + k) % 26);
		ml[k] += VLEN;
		memcpy(msg[k] + ml[k], "\r\n", 2);
		memcpy(want + wl, msg[k], ml[k] + 2);
		wl += ml[k] + 2;
		memcpy(msg[k] + ml[k] + 2, "END\r\n", 5);
		ml[k] += 7;
		total[k] = (uint16_t)((ml[k] + BODY_MAX - 1) / BODY_MAX);
	}
	memcpy(want + wl, "END\r\n", 5);
	wl += 5;
	for (uint16_t i = 0; i < total[0]; i++)
		for (int k = 0; k < 3; k++) {
			size_t off = (size_t)i * BODY_MAX;

			node_says(sub_of(s, n, k), i, total[k], msg[k] + off,
				  ml[k] - off < BODY_MAX ? ml[k] - off : BODY_MAX);
		}
	/* The merged reply leaves multiget_send_burst datagrams a poll: collect, poll again. */
	char *got = calloc(1, 2 << 20);
	uint16_t next = 0, all = 0;

	assert_non_null(got);
	len = 0;
	for (int polls = 0; all == 0 || next < all; polls++) {
		struct rte_mbuf *m;

		assert_true(polls < 100);
		while ((m = t_sent(0)) != NULL) {
			struct t_view v;

			t_view_udp(m, &v, false);
			assert_int_equal(v.reqid, 78);
			assert_int_equal(v.seq, next);
			all = v.total;
			memcpy(got + len, v.payload + 8, v.plen - 8);
			len += v.plen - 8;
			next++;
			rte_pktmbuf_free(m);
		}
		t_poll(0);
	}
	nd = next;
	assert_int_equal(nd, (int)((wl + BODY_MAX - 1) / BODY_MAX));
	assert_int_equal(len, wl);
	assert_memory_equal(got, want, wl);
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_OVERFLOW], 0);
	free(got);
	for (int k = 0; k < 3; k++)
		free(msg[k]);
	free(want);
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

/*
 * A 1.8 MB multi-get over 3 nodes (600,000-byte values, 1,296 merged datagrams) while the
 * port's TX queue has room for fewer than 200: the merged reply leaves a burst at a time as
 * the queue drains (the test is the NIC: it empties the queue, then the worker polls again),
 * nothing is refused (multiget_tx_failed 0), and the client gets every datagram in order.
 */
static void test_paced_large_reply(void **state)
{
	enum { VLEN = 600000, FILL = 3900 };
	char keys[3][16], text[96];
	char *msg = malloc(VLEN + 64), *want = malloc(3 * (VLEN + 64)), *got = calloc(1, 2 << 20);
	size_t wl = 0, gl = 0;
	uint16_t next = 0, total = 0;
	struct sub s[4];
	int n, polls = 0;

	(void)state;
	assert_true(msg != NULL && want != NULL && got != NULL);
	t_dp_start(1, 4, NULL);
	for (int k = 0; k < 3; k++)
		key_on(k, 0, "paced", keys[k], sizeof(keys[k]));
	snprintf(text, sizeof(text), "get %s %s %s\r\n", keys[0], keys[1], keys[2]);
	request(6200, 77, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 3);
	/* The queue mostly full of someone else's packets. */
	for (int i = 0; i < FILL; i++)
		assert_int_equal(rte_ring_enqueue(rig.tx[0], rte_pktmbuf_alloc(rig.pool)), 0);
	for (int k = 0; k < 3; k++) {
		size_t ml = (size_t)snprintf(msg, 64, "VALUE %s 0 %d\r\n", keys[k], VLEN);

		for (int i = 0; i < VLEN; i++)
			msg[ml + (size_t)i] = (char)('a' + (i + k) % 26);
		ml += VLEN;
		memcpy(msg + ml, "\r\n", 2);
		memcpy(want + wl, msg, ml + 2);
		wl += ml + 2;
		memcpy(msg + ml + 2, "END\r\n", 5);
		node_message(sub_of(s, n, k), msg, ml + 7);
	}
	memcpy(want + wl, "END\r\n", 5);
	wl += 5;
	/* Drain the queue as a NIC would, poll, until the whole reply left. */
	while (total == 0 || next < total) {
		struct rte_mbuf *m;

		assert_true(++polls < 100);
		while ((m = t_sent(0)) != NULL) {
			struct t_view v;

			if (rte_pktmbuf_data_len(m) == 0) { /* a filler */
				rte_pktmbuf_free(m);
				continue;
			}
			t_view_udp(m, &v, false);
			assert_int_equal(v.reqid, 77);
			assert_int_equal(v.seq, next);
			if (next == 0)
				total = v.total;
			assert_int_equal(v.total, total);
			assert_true(gl + v.plen - 8 <= (2u << 20));
			memcpy(got + gl, v.payload + 8, v.plen - 8);
			gl += v.plen - 8;
			next++;
			rte_pktmbuf_free(m);
		}
		t_poll(0);
	}
	assert_int_equal(total, (wl + BODY_MAX - 1) / BODY_MAX);
	assert_int_equal(gl, wl);
	assert_memory_equal(got, want, wl);
	struct dp_stats st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_TX_FAILED], 0);
	assert_int_equal(st.ctr[DP_CTR_MGET_DATAGRAMS], total);
	assert_true(st.ctr[DP_CTR_MGET_TX_WAITS] > 0);
	assert_int_equal(st.mget_bytes, 0);
	free(msg);
	free(want);
	free(got);
	mg_stop();
}

static void small_table(struct dp_config *c)
{
	c->mget_max = 8;	      /* a node's share: 6 */
	c->request_timeout_ms = 6000; /* silent for 3 s: cut */
}

/* A black-holed node, not yet detected, holds at most its share of the multi-get table
 * (issue 27, defect 10): past it, once silent for half a request timeout, multi-gets
 * touching it are answered at once without its keys (misses, as after its timeout), and a
 * multi-get of live nodes only is served. Before that, a node holding its share is not cut:
 * a busy node that answers never is. */
static void test_silent_node_share(void **state)
{
	char a[16], b[16], c[16], d[16], text[96], want[128];
	struct sub s[4];
	struct dp_stats st;
	int n;

	(void)state;
	t_dp_start(1, 4, small_table);
	key_on(0, 0, "h", a, sizeof(a)); /* node 0 never answers */
	key_on(1, 0, "h", b, sizeof(b));
	key_on(2, 0, "h", c, sizeof(c));
	key_on(3, 0, "h", d, sizeof(d));
	snprintf(text, sizeof(text), "get %s %s\r\n", a, b);
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nB\r\n", b);
	for (int i = 0; i < 8; i++) {
		request((uint16_t)(7000 + i), (uint16_t)i, text, strlen(text));
		n = collect_subs(s, 4);
		if (i == 6) /* node 0 holds its share; still within half a timeout: not cut */
			assert_int_equal(n, 2);
		else
			assert_int_equal(n, i < 6 ? 2 : 1); /* the 8th: silent 3 s, cut */
		node_message(sub_of(s, n, 1), want, strlen(want));
		node_says(sub_of(s, n, 1), 0, 1, "END\r\n", 5);
		if (i == 6)
			usleep(3100 * 1000); /* node 0's silence passes half the timeout */
		if (i < 7) {
			assert_int_equal(t_sent_count(0), 0); /* waits for node 0 */
			continue;
		}
		char got[128];

		snprintf(got, sizeof(got), "VALUE %s 0 1\r\nB\r\nEND\r\n", b);
		expect_merged((uint16_t)(7000 + i), (uint16_t)i, got, strlen(got), 1);
	}
	st = t_stats();
	assert_int_equal(st.mget_live, 7);
	assert_int_equal(st.ctr[DP_CTR_MGET_NODE_SHARE], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_PARTIAL], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_REFUSED], 0);
	assert_int_equal(node_partial(0), 1);
	/* Live nodes only: served while node 0 still holds its seven. */
	snprintf(text, sizeof(text), "get %s %s\r\n", c, d);
	request(7100, 100, text, strlen(text));
	n = collect_subs(s, 4);
	assert_int_equal(n, 2);
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nC\r\nEND\r\n", c);
	node_says(sub_of(s, n, 2), 0, 1, want, strlen(want));
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nD\r\nEND\r\n", d);
	node_says(sub_of(s, n, 3), 0, 1, want, strlen(want));
	snprintf(want, sizeof(want), "VALUE %s 0 1\r\nC\r\nVALUE %s 0 1\r\nD\r\nEND\r\n", c, d);
	expect_merged(7100, 100, want, strlen(want), 1);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_REFUSED], 0);
	assert_int_equal(st.mget_live, 7);
	assert_int_equal(st.slots_live, 7);
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
		cmocka_unit_test(test_meta_quiet_miss_order),
		cmocka_unit_test(test_meta_key_forms),
		cmocka_unit_test(test_binary_quiet_order),
		cmocka_unit_test(test_tag_garbage),
		cmocka_unit_test(test_tags_overflow_datagram),
		cmocka_unit_test(test_interleaved_three_large),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_silent_node_share),
		cmocka_unit_test(test_handoff),
		cmocka_unit_test(test_paced_large_reply),
	};

	t_eal_setup("dp_multiget", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
