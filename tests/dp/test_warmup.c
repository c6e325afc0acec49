/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Warm-up routing on membership changes (issue 14), on real mbufs: 3 nodes grow to 4 with a
 * window open. A moved key's read that misses at its new owner is asked of its previous
 * owner with the client's very bytes; its hit reaches the client as the node sent it and the
 * new owner gets `add` (the reply's TTL when meta `t` says it, ttl_s otherwise; beyond 30 days
 * as the absolute Unix time memcached needs, issue 27); a write of a
 * moved key deletes it at the previous owner; keys that did not move never take the path;
 * after the window no second request leaves. The accounting identity holds throughout.
 * Quiet reads as memcached 1.6 answers them over UDP (seen with 1.6.18): `mg k v q` + `mn`
 * misses with "MN" alone; binary GETQ + NOOP misses with an empty message (seq 0, total 0)
 * and then the NOOP response; a hit is the item's message and then the terminator's.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dataplane_priv.h"
#include "dp_test.h"

#define TTL_S 300

static void warm_on(struct dp_config *c)
{
	c->warm_window_s = 60;
	c->warm_ttl_s = TTL_S;
}

/* 3 nodes, then 4 (n4 joins): the window opens. */
static void grow(void)
{
	struct dp_node_mac macs[4];

	t_dp_start(1, 3, warm_on);
	pl_free(rig.pl);
	rig.pl = t_fleet(4);
	rig.n_nodes = 4;
	memset(macs, 0, sizeof(macs));
	for (int i = 0; i < 4; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 2), 0);
}

/* A key moved to n4 (member 3); *prev: its member before. */
static const char *moved_key(int32_t *prev)
{
	static char k[32];
	struct pl_placement *old = t_fleet(3);

	for (int i = 0;; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		if (t_owner(k) == 3) {
			*prev = pl_lookup(old, k, strlen(k));
			pl_free(old);
			return k;
		}
	}
}

static const char *unmoved_key(void)
{
	static char k[32];

	for (int i = 0;; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		if (t_owner(k) != 3)
			return k;
	}
}

static void ip_of(int32_t member, char *ip)
{
	sprintf(ip, "198.18.1.%d", member + 1);
}

/* The next packet sent: to member @p member with payload (after the frame header) @p body. */
static struct rte_mbuf *expect_sent(int32_t member, const char *body, struct t_view *v)
{
	struct rte_mbuf *m = t_sent(0);
	char ip[24];

	assert_non_null(m);
	t_view_udp(m, v, true);
	ip_of(member, ip);
	assert_int_equal(v->ip->dst_addr, t_ip(ip));
	assert_int_equal(v->plen, 8 + strlen(body));
	assert_memory_equal(v->payload + 8, body, strlen(body));
	return m;
}

/* Node @p member answers the request @p req (as it left the router) with @p body. */
static void node_answers(int32_t member, const struct t_view *req, const char *body)
{
	char ip[24];

	ip_of(member, ip);
	t_inject(0, t_reply(ip, 11211, rte_be_to_cpu_16(req->udp->src_port), req->reqid, 0, 1, body,
			    strlen(body)));
	t_poll(0);
}

/* The client's reply: to it, its request id, @p body byte for byte. */
static void expect_client(const char *body)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(v.reqid, 0x4242);
	assert_int_equal(v.plen, 8 + strlen(body));
	assert_memory_equal(v.payload + 8, body, strlen(body));
	rte_pktmbuf_free(m);
}

static void client_asks(const char *text)
{
	t_inject(0, t_request(5000, 0x4242, text, strlen(text)));
	t_poll(0);
}

/* Every slot names itself on the wire again, the one the previous owner was asked from among
 * them (it took over the first slot's request: not the first slot's port or request id):
 * more round trips than there are slots (dp_test.c: 256), each answered to the client. */
static void slots_round_trip(void)
{
	const char *k = unmoved_key();
	char req[64];

	snprintf(req, sizeof(req), "get %s\r\n", k);
	for (int i = 0; i < 300; i++) {
		struct t_view v;
		struct rte_mbuf *a;

		client_asks(req);
		a = expect_sent(t_owner(k), req, &v);
		node_answers(t_owner(k), &v, "END\r\n");
		expect_client("END\r\n");
		rte_pktmbuf_free(a);
	}
	assert_null(t_sent(0));
	assert_int_equal(t_stats().slots_live, 0);
}

/* miss at n4 -> the same get at the previous owner -> hit -> client gets it, n4 gets `add`.
 * With @p abs_s, @p add_fmt has a %lu for an absolute exptime: the router's Unix time when it
 * wrote the add (one of the seconds around the hit's handling) plus @p abs_s. */
static void run_warm_hit_abs(const char *req_fmt, const char *hit_fmt, const char *add_fmt,
			     uint64_t abs_s)
{
	char req[128], hit[128], add[128];
	struct rte_mbuf *a, *b, *f;
	struct t_view va, vb, vf;
	struct dp_stats s;
	uint64_t before, after;
	int32_t prev;
	const char *k;

	grow();
	k = moved_key(&prev);
	snprintf(req, sizeof(req), req_fmt, k);
	snprintf(hit, sizeof(hit), hit_fmt, k);
	snprintf(add, sizeof(add), add_fmt, k);
	client_asks(req);
	a = expect_sent(3, req, &va);
	node_answers(3, &va, strstr(req, "mg ") == req ? "EN\r\n" : "END\r\n");
	b = expect_sent(prev, req, &vb); /* the client's bytes, to the previous owner */
	assert_null(t_sent(0));		 /* the miss went nowhere */
	before = dp_unix_at(rig.dp, rte_rdtsc());
	node_answers(prev, &vb, hit);
	after = dp_unix_at(rig.dp, rte_rdtsc());
	if (abs_s != 0) {
		f = t_sent(0);
		assert_non_null(f);
		t_view_udp(f, &vf, true);
		for (uint64_t t = before;; t++) {
			snprintf(add, sizeof(add), add_fmt, k, (unsigned long)(t + abs_s));
			if (vf.plen == 8 + strlen(add) &&
			    memcmp(vf.payload + 8, add, strlen(add)) == 0)
				break;
			if (t == after)
				fail_msg("add: %.*s", (int)vf.plen - 8, vf.payload + 8);
		}
	} else {
		f = expect_sent(3, add, &vf); /* the warm copy to the new owner */
	}
	assert_int_equal(vf.reqid, 0);
	expect_client(hit);
	assert_null(t_sent(0));
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_MOVED_READS], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_ABSORBED], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_REQUESTS], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_HITS], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_FILLS], 1);
	assert_int_equal(s.slots_live, 0);
	assert_int_equal(s.warm_open, 1);
	assert_true(s.warm_bytes > 0);
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
	rte_pktmbuf_free(f);
	slots_round_trip();
	t_dp_stop();
}

static void run_warm_hit(const char *req_fmt, const char *hit_fmt, const char *add_fmt)
{
	run_warm_hit_abs(req_fmt, hit_fmt, add_fmt, 0);
}

static void test_ascii_hit(void **state)
{
	(void)state;
	run_warm_hit("get %s\r\n", "VALUE %s 5 3\r\nabc\r\nEND\r\n",
		     "add %s 5 "
		     "300"
		     " 3 noreply\r\nabc\r\n");
}

/* meta `t`: the remaining TTL comes from the previous owner's reply. */
static void test_meta_ttl(void **state)
{
	(void)state;
	run_warm_hit("mg %s v f t\r\n", "VA 3 f7 t120\r\nxyz\r\n",
		     "add %s 7 120 3 noreply\r\nxyz\r\n");
}

/* meta `t` at memcached's 30-day boundary (issue 27): up to 2,592,000 s the add says the
 * seconds; beyond, memcached would read the number as a Unix time in 1970 and store the copy
 * expired, so the add says the absolute time. */
static void test_meta_ttl_30_days(void **state)
{
	(void)state;
	run_warm_hit("mg %s v f t\r\n", "VA 3 f7 t2591999\r\nxyz\r\n",
		     "add %s 7 2591999 3 noreply\r\nxyz\r\n");
	run_warm_hit("mg %s v f t\r\n", "VA 3 f7 t2592000\r\nxyz\r\n",
		     "add %s 7 2592000 3 noreply\r\nxyz\r\n");
	run_warm_hit_abs("mg %s v f t\r\n", "VA 3 f7 t2592001\r\nxyz\r\n",
			 "add %s 7 %lu 3 noreply\r\nxyz\r\n", 2592001);
	run_warm_hit_abs("mg %s v f t\r\n", "VA 3 f7 t3456000\r\nxyz\r\n",
			 "add %s 7 %lu 3 noreply\r\nxyz\r\n", 3456000);
	/* t-1: no expiry, written as 0 */
	run_warm_hit("mg %s v f t\r\n", "VA 3 f7 t-1\r\nxyz\r\n",
		     "add %s 7 0 3 noreply\r\nxyz\r\n");
}

/* Both miss: the client gets the previous owner's miss, nothing is written. */
static void test_both_miss(void **state)
{
	struct rte_mbuf *a, *b;
	struct t_view va, vb;
	char req[64];
	struct dp_stats s;
	int32_t prev;
	const char *k;

	(void)state;
	grow();
	k = moved_key(&prev);
	snprintf(req, sizeof(req), "get %s\r\n", k);
	client_asks(req);
	a = expect_sent(3, req, &va);
	node_answers(3, &va, "END\r\n");
	b = expect_sent(prev, req, &vb);
	node_answers(prev, &vb, "END\r\n");
	expect_client("END\r\n");
	assert_null(t_sent(0));
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_MISSES], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_FILLS], 0);
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
	t_dp_stop();
}

/* A write of a moved key: to n4 as usual, and `delete KEY noreply` to the previous owner. */
static void test_write_deletes_previous(void **state)
{
	struct rte_mbuf *d, *w;
	struct t_view vd, vw;
	char req[64], del[64];
	int32_t prev;
	const char *k;

	(void)state;
	grow();
	k = moved_key(&prev);
	snprintf(req, sizeof(req), "set %s 0 0 1\r\nx\r\n", k);
	snprintf(del, sizeof(del), "delete %s noreply\r\n", k);
	client_asks(req);
	d = expect_sent(prev, del, &vd);
	w = expect_sent(3, req, &vw);
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_WARM_DELETES], 1);
	/* ... and a delete too goes to both. */
	rte_pktmbuf_free(d);
	rte_pktmbuf_free(w);
	snprintf(req, sizeof(req), "delete %s\r\n", k);
	client_asks(req);
	d = expect_sent(prev, del, &vd);
	w = expect_sent(3, req, &vw);
	assert_int_equal(t_stats().ctr[DP_CTR_WARM_DELETES], 2);
	rte_pktmbuf_free(d);
	rte_pktmbuf_free(w);
	t_dp_stop();
}

/* A key that did not move never takes the warm path: its miss is the client's. */
static void test_unmoved(void **state)
{
	struct rte_mbuf *a;
	struct t_view va;
	char req[64];
	const char *k;
	struct dp_stats s;

	(void)state;
	grow();
	k = unmoved_key();
	snprintf(req, sizeof(req), "get %s\r\n", k);
	client_asks(req);
	a = expect_sent(t_owner(k), req, &va);
	node_answers(t_owner(k), &va, "END\r\n");
	expect_client("END\r\n");
	assert_null(t_sent(0));
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_UNMOVED], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_REQUESTS], 0);
	rte_pktmbuf_free(a);
	t_dp_stop();
}

/* After the window (ended early): a moved key's miss is the client's, no second request; a
 * write of it still deletes at the previous owner (moved_deletes, not warm_deletes): the
 * previous placement is held until the next change (issue 27, membership flips). */
static void test_window_end(void **state)
{
	struct rte_mbuf *a;
	struct t_view va;
	char req[64], del[64];
	int32_t prev;
	const char *k;
	struct dp_stats s;

	(void)state;
	grow();
	k = moved_key(&prev);
	assert_int_equal(dp_warm_end(rig.dp), 0);
	assert_int_equal(dp_warm_end(rig.dp), -ENOENT);
	snprintf(req, sizeof(req), "get %s\r\n", k);
	client_asks(req);
	a = expect_sent(3, req, &va);
	node_answers(3, &va, "END\r\n");
	expect_client("END\r\n");
	assert_null(t_sent(0));
	rte_pktmbuf_free(a);
	snprintf(req, sizeof(req), "set %s 0 0 1\r\nx\r\n", k);
	client_asks(req);
	snprintf(del, sizeof(del), "delete %s noreply\r\n", k);
	rte_pktmbuf_free(expect_sent(prev, del, &va));
	a = expect_sent(3, req, &va);
	assert_null(t_sent(0));
	rte_pktmbuf_free(a);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_REQUESTS] + s.ctr[DP_CTR_WARM_DELETES], 0);
	assert_int_equal(s.ctr[DP_CTR_MOVED_DELETES], 1);
	assert_int_equal(s.warm_open, 0);
	assert_true(s.warm_bytes > 0); /* held for the writes until the next change */
	t_dp_stop();
}

/* Publish the rig's fleet of @p n nodes (static MACs) at @p epoch. */
static void fleet_of(uint32_t n, uint64_t epoch)
{
	struct dp_node_mac macs[8];

	pl_free(rig.pl);
	rig.pl = t_fleet(n);
	rig.n_nodes = n;
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < n; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, epoch), 0);
}

/* A write of @p k: the delete at member @p prev (unless -1), then the write to its owner. */
static void write_deletes_at(const char *k, int32_t prev)
{
	char req[64], del[64];
	struct t_view v;

	snprintf(req, sizeof(req), "set %s 0 0 1\r\nx\r\n", k);
	snprintf(del, sizeof(del), "delete %s noreply\r\n", k);
	client_asks(req);
	if (prev >= 0)
		rte_pktmbuf_free(expect_sent(prev, del, &v));
	rte_pktmbuf_free(expect_sent(t_owner(k), req, &v));
	assert_null(t_sent(0));
}

/* With window_s 0 no read follows; the previous placement is held for the writes. */
static void test_off(void **state)
{
	struct dp_warm_state ws;
	struct t_view v;
	char req[64];
	int32_t prev;
	const char *k;

	(void)state;
	t_dp_start(1, 3, NULL);
	fleet_of(4, 2);
	dp_warm_get(rig.dp, &ws);
	assert_false(ws.open);
	assert_true(ws.held);
	k = moved_key(&prev);
	snprintf(req, sizeof(req), "get %s\r\n", k);
	client_asks(req);
	rte_pktmbuf_free(expect_sent(3, req, &v)); /* the get alone: reads do not look */
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_WARM_UNMOVED], 0);
	write_deletes_at(k, prev);
	assert_int_equal(t_stats().ctr[DP_CTR_MOVED_DELETES], 1);
	assert_int_equal(t_stats().ctr[DP_CTR_WARM_DELETES], 0);
	t_dp_stop();
}

/* Issue 27, membership flips, warm-up off (the default): add n4, write a key that moved to it,
 * remove n4: the key's owner before the add must not hold the value from before the write.
 * Before the fix nothing was held with window_s 0 and no delete left, so the returning
 * owner served the older value. Then back and forth: each write of the key deletes it at its
 * owner in the placement before, and the memory held stays one placement. */
static void test_flip_add_remove(void **state)
{
	struct dp_warm_state ws;
	size_t bytes;
	int32_t prev;
	const char *k;

	(void)state;
	t_dp_start(1, 3, NULL);
	fleet_of(4, 2); /* add n4 */
	k = moved_key(&prev);
	write_deletes_at(k, prev); /* the old owner is told while n4 owns the key */
	fleet_of(3, 3);		   /* remove n4: the key is back at prev */
	assert_int_equal(t_owner(k), prev);
	write_deletes_at(k, 3); /* and n4 no longer holds the value of before */
	dp_warm_get(rig.dp, &ws);
	assert_true(ws.held && !ws.open);
	assert_int_equal(ws.prev_epoch, 2);
	bytes = ws.bytes;
	fleet_of(4, 4); /* n4 back */
	write_deletes_at(k, prev);
	/* The same membership again moves nothing: the placement of the last real change (the
	 * one without n4) stays held, so the key's writes still delete at prev. */
	fleet_of(4, 5);
	write_deletes_at(k, prev);
	dp_warm_get(rig.dp, &ws);
	assert_int_equal(ws.prev_epoch, 3);
	assert_true(ws.bytes <= 2 * bytes); /* three placements held, of 3, 4 and 3 nodes */
	assert_int_equal(t_stats().ctr[DP_CTR_MOVED_DELETES], 4);
	t_dp_stop();
}

/* Owner of @p k among the first @p n members. */
static int32_t owner_in(uint32_t n, const char *k)
{
	struct pl_placement *p = t_fleet(n);
	int32_t o = pl_lookup(p, k, strlen(k));

	pl_free(p);
	return o;
}

/*
 * Two changes, the key written only after the second, then the first undone: a key moved by
 * the first change (3 -> 4 nodes: from A to n4) and not by the second (4 -> 5 nodes) is
 * deleted at A by a write after the second, so when the key returns to A (back to 3 nodes)
 * A holds nothing older. With one placement held (the old code) the write deleted nowhere:
 * soak seeds 3013 and 3015 read A's value from before (issue 27). Then the history is bounded:
 * DP_FLIP_HELD placements, the oldest dropped, its memory returned.
 */
static void test_flip_history(void **state)
{
	struct dp_warm_state ws;
	char k[32];
	int32_t a = -1;
	size_t bytes;

	(void)state;
	t_dp_start(1, 3, NULL);
	for (int i = 0; a < 0; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		if (owner_in(4, k) == 3 && owner_in(5, k) == 3)
			a = owner_in(3, k);
	}
	fleet_of(4, 2); /* the key moves A -> n4 */
	fleet_of(5, 3); /* it stays at n4 */
	write_deletes_at(k, a);
	fleet_of(3, 4); /* back at A */
	assert_int_equal(t_owner(k), a);
	dp_warm_get(rig.dp, &ws);
	assert_true(ws.held);
	bytes = ws.bytes; /* 5, 4 and 3 nodes */
	for (uint64_t e = 5; e < 5 + 2 * DP_FLIP_HELD; e++)
		fleet_of(e % 2 ? 4 : 3, e);
	dp_warm_get(rig.dp, &ws);
	assert_true(ws.bytes < 2 * bytes); /* DP_FLIP_HELD placements of 3 and 4 nodes */
	assert_int_equal(t_stats().ctr[DP_CTR_MOVED_DELETES], 1);
	t_dp_stop();
}

/* The next packet sent: to member @p member with payload (after the frame header) @p body of
 * @p len bytes (binary-safe). */
static struct rte_mbuf *expect_sent_n(int32_t member, const void *body, size_t len,
				      struct t_view *v)
{
	struct rte_mbuf *m = t_sent(0);
	char ip[24];

	assert_non_null(m);
	t_view_udp(m, v, true);
	ip_of(member, ip);
	assert_int_equal(v->ip->dst_addr, t_ip(ip));
	assert_int_equal(v->plen, 8 + len);
	assert_memory_equal(v->payload + 8, body, len);
	return m;
}

/* Node @p member answers @p req with one message (seq 0 of @p total; total 0: an empty one). */
static void node_sends(int32_t member, const struct t_view *req, uint16_t total, const void *body,
		       size_t len)
{
	char ip[24];

	ip_of(member, ip);
	t_inject(0, t_reply(ip, 11211, rte_be_to_cpu_16(req->udp->src_port), req->reqid, 0, total,
			    body, len));
	t_poll(0);
}

/* The client gets a datagram with its request id and payload @p body (@p len bytes). */
static void expect_client_n(const void *body, size_t len)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(v.reqid, 0x4242);
	assert_int_equal(v.plen, 8 + len);
	assert_memory_equal(v.payload + 8, body, len);
	rte_pktmbuf_free(m);
}

/* Quiet meta read + mn: the new owner's "MN" alone is its miss; the previous owner's hit
 * (VA, then MN as a second message) reaches the client whole and n4 gets `add`. */
static void test_meta_quiet(void **state)
{
	char req[64], add[96];
	struct rte_mbuf *a, *b, *f;
	struct t_view va, vb, vf;
	struct dp_stats s;
	int32_t prev;
	const char *k;

	(void)state;
	grow();
	k = moved_key(&prev);
	snprintf(req, sizeof(req), "mg %s v f q\r\nmn\r\n", k);
	snprintf(add, sizeof(add), "add %s 7 300 3 noreply\r\nxyz\r\n", k);
	client_asks(req);
	a = expect_sent(3, req, &va);
	node_sends(3, &va, 1, "MN\r\n", 4);
	b = expect_sent(prev, req, &vb);
	assert_null(t_sent(0));
	node_sends(prev, &vb, 1, "VA 3 f7\r\nxyz\r\n", 14);
	f = expect_sent(3, add, &vf);
	expect_client("VA 3 f7\r\nxyz\r\n");
	node_sends(prev, &vb, 1, "MN\r\n", 4);
	expect_client("MN\r\n");
	assert_null(t_sent(0));
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_ABSORBED], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_HITS], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_FILLS], 1);
	assert_int_equal(s.slots_live, 0);
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
	rte_pktmbuf_free(f);
	t_dp_stop();
}

/* A binary request header (magic 0x80) for @p key with @p opcode and @p opaque. */
static size_t bin_req(uint8_t *p, uint8_t opcode, const char *key, uint32_t opaque)
{
	size_t kl = key != NULL ? strlen(key) : 0;

	memset(p, 0, 24);
	p[0] = 0x80;
	p[1] = opcode;
	p[3] = (uint8_t)kl;
	p[11] = (uint8_t)kl;
	p[12] = (uint8_t)(opaque >> 24);
	p[15] = (uint8_t)opaque;
	memcpy(p + 24, key, kl);
	return 24 + kl;
}

/* Binary GETQ + NOOP: memcached answers a miss with an empty message, then the NOOP's
 * response. Both are the new owner's miss: absorbed, the previous owner is asked; its hit
 * (GETQ response with flags, then NOOP) reaches the client and n4 gets `add` (ttl_s: binary
 * does not say the TTL). */
static void test_binary_quiet(void **state)
{
	uint8_t req[128], hit[64], noop[24];
	char add[96];
	struct rte_mbuf *a, *b, *f;
	struct t_view va, vb, vf;
	struct dp_stats s;
	size_t n;
	int32_t prev;
	const char *k;

	(void)state;
	grow();
	k = moved_key(&prev);
	n = bin_req(req, 0x09, k, 1);	      /* GETQ */
	n += bin_req(req + n, 0x0a, NULL, 2); /* NOOP */
	memset(hit, 0, sizeof(hit));
	hit[0] = 0x81;
	hit[1] = 0x09;
	hit[4] = 4;  /* extras: flags */
	hit[11] = 7; /* body: 4 + 3 */
	hit[15] = 1; /* opaque */
	hit[27] = 5; /* flags 5 */
	memcpy(hit + 28, "xyz", 3);
	memset(noop, 0, sizeof(noop));
	noop[0] = 0x81;
	noop[1] = 0x0a;
	noop[15] = 2;
	snprintf(add, sizeof(add), "add %s 5 300 3 noreply\r\nxyz\r\n", k);
	t_inject(0, t_request(5000, 0x4242, req, n));
	t_poll(0);
	a = expect_sent_n(3, req, n, &va);
	node_sends(3, &va, 0, NULL, 0); /* the GETQ's miss: an empty message */
	node_sends(3, &va, 1, noop, sizeof(noop));
	b = expect_sent_n(prev, req, n, &vb); /* the client's bytes, to the previous owner */
	assert_null(t_sent(0));		      /* neither half of the miss reached the client */
	node_sends(prev, &vb, 1, hit, 31);
	f = expect_sent(3, add, &vf);
	expect_client_n(hit, 31);
	node_sends(prev, &vb, 1, noop, sizeof(noop));
	expect_client_n(noop, sizeof(noop));
	assert_null(t_sent(0));
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_WARM_ABSORBED], 2);
	assert_int_equal(s.ctr[DP_CTR_WARM_HITS], 1);
	assert_int_equal(s.ctr[DP_CTR_WARM_FILLS], 1);
	assert_int_equal(s.slots_live, 0);
	assert_true(dp_stats_identity(&s));
	rte_pktmbuf_free(a);
	rte_pktmbuf_free(b);
	rte_pktmbuf_free(f);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii_hit),    cmocka_unit_test(test_meta_ttl),
		cmocka_unit_test(test_meta_ttl_30_days),
		cmocka_unit_test(test_both_miss),    cmocka_unit_test(test_write_deletes_previous),
		cmocka_unit_test(test_unmoved),	     cmocka_unit_test(test_window_end),
		cmocka_unit_test(test_off),	     cmocka_unit_test(test_meta_quiet),
		cmocka_unit_test(test_flip_add_remove),
		cmocka_unit_test(test_flip_history),
		cmocka_unit_test(test_binary_quiet),
	};

	t_eal_setup("dp_warmup", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
