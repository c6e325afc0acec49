/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast lane (lib/dataplane/dp_fast.h): each request runs through two data planes made
 * alike from the same random seed (so their slots' request ids and ports are the same), one
 * with the lane and one without (dp_config.no_fast_lane); what leaves towards the node, the
 * reply that goes back to the client, and every counter but the lane's own two must be the
 * same bytes and values. The lane must have taken each eligible kind (fast_lane) and none of
 * the ineligible ones, which the general path answered (fast_fallback for those of its shape).
 * Replies likewise: the reply lane (dp_worker.c, reply_lane_ok()) must return each one-datagram
 * reply of a one-message slot (reply_lane) and leave every other datagram (a second one, a
 * duplicate, a stale generation, a wrong source, MAC or tag, a hot or warm-up read, a quiet
 * one, IPv6) to the general path, with the same bytes and counters as without it.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_random.h>

#include "dp_test.h"

#define MAX_OUT 8

struct out {
	unsigned n;
	size_t len[MAX_OUT];
	uint8_t b[MAX_OUT][2048];
	struct dp_stats st;
};

/* A node datagram sent back for the forwarded request (by default from the node it went to,
 * port 11211, its MAC, the request id it carried, untagged). */
struct rspec {
	uint16_t seq, total;
	uint16_t reqid_xor;  /* flips generation bits: a stale reply */
	const char *sip;     /* another source address */
	uint16_t sport;      /* another source port */
	bool other_mac;      /* from a MAC the router does not know for the node */
	uint16_t vlan;       /* tagged */
	bool no_udp_csum;    /* UDP checksum 0 (valid in IPv4) */
	const char *body;    /* NULL: a one-value get reply */
};

#define MAX_REPLIES 4

/* What the case needs before its request, and the request itself. */
struct fcase {
	const char *name;
	const void *body; /* after the frame header */
	size_t len;
	bool v6;		     /* from T_CLIENT_IP6 (t_dp_start6, IPv4 nodes) */
	uint32_t v6_nodes;	     /* v6: these nodes IPv6 (t_dp_start6's mask) */
	struct t_pkt6_spec v6_spec;  /* v6: what differs from t_request6's (its sip, dip, dport,
					checksum, extension headers, hop limit, length) */
	const char *sip;	     /* another IPv4 source (NULL: T_CLIENT_IP) */
	bool bad_ip_csum;
	void (*tweak)(struct dp_config *c);
	void (*before)(void); /* after the start, before the request */
	bool eligible;
	bool lane_shape; /* reaches the lane's predicate (counted fast_fallback when refused) */
	struct rspec replies[MAX_REPLIES]; /* none given: one datagram, seq 0 of 1 */
	unsigned n_replies;
	int reply_lane;	     /* replies the reply lane must take */
	bool check_drop;     /* the general path must have dropped one as @c drop */
	enum dp_drop drop;
};

static bool lane_off;
static void (*case_tweak)(struct dp_config *c);

static void tweak(struct dp_config *c)
{
	c->no_fast_lane = lane_off;
	if (case_tweak)
		case_tweak(c);
}

static void collect(struct out *o)
{
	struct rte_mbuf *m;

	while ((m = t_sent(0)) != NULL) {
		assert_true(o->n < MAX_OUT);
		o->len[o->n] = rte_pktmbuf_data_len(m);
		assert_true(o->len[o->n] <= sizeof(o->b[0]));
		memcpy(o->b[o->n], rte_pktmbuf_mtod(m, void *), o->len[o->n]);
		o->n++;
		rte_pktmbuf_free(m);
	}
}

static struct rte_mbuf *request(const struct fcase *fc)
{
	static uint8_t p[1024] = {0x00, 0x4d, 0, 0, 0, 1, 0, 0};

	memcpy(p + 8, fc->body, fc->len);
	if (fc->v6) {
		struct t_pkt6_spec s = fc->v6_spec;

		s.payload = p;
		s.plen = 8 + fc->len;
		s.sport = 5555;
		if (s.dport == 0)
			s.dport = T_LISTEN;
		return t_pkt6(&s);
	}
	if (fc->sip == NULL && !fc->bad_ip_csum)
		return t_request(5555, 77, fc->body, fc->len);
	struct t_pkt_spec s = {
		.src_mac = t_client_mac,
		.dst_mac = t_router_mac,
		.sip = fc->sip ? fc->sip : T_CLIENT_IP,
		.dip = T_ROUTER_IP,
		.sport = 5555,
		.dport = T_LISTEN,
		.payload = p,
		.plen = 8 + fc->len,
		.bad_ip_csum = fc->bad_ip_csum,
	};
	return t_pkt(&s);
}

static struct rte_mbuf *reply(const struct rspec *r, const char *node, uint16_t dport,
			      uint16_t reqid)
{
	static const char body[] = "VALUE k 0 5\r\nhello\r\nEND\r\n";
	const char *b = r->body ? r->body : body;
	uint8_t p[1024] = {(uint8_t)(reqid >> 8), (uint8_t)reqid, (uint8_t)(r->seq >> 8),
			   (uint8_t)r->seq, (uint8_t)(r->total >> 8), (uint8_t)r->total, 0, 0};
	uint8_t mac[6];
	static const uint8_t stranger[6] = {0x02, 0, 0, 0, 0x07, 0x07};
	const char *sip = r->sip ? r->sip : node;
	size_t len = strlen(b);

	t_node_mac(sip, mac);
	memcpy(p + 8, b, len);
	struct t_pkt_spec s = {
		.src_mac = r->other_mac ? stranger : mac,
		.sip = sip,
		.sport = r->sport ? r->sport : 11211,
		.dport = dport,
		.payload = p,
		.plen = 8 + len,
		.vlan = r->vlan,
		.no_udp_csum = r->no_udp_csum,
	};
	return t_pkt(&s);
}

/* ... from an IPv6 node (@p node, its MAC @p mac); r->sip is then an IPv6 address. */
static struct rte_mbuf *reply6(const struct rspec *r, const char *node, const uint8_t mac[6],
			       uint16_t dport, uint16_t reqid)
{
	static const char body[] = "VALUE k 0 5\r\nhello\r\nEND\r\n";
	static const uint8_t stranger[6] = {0x02, 0, 0, 0, 0x07, 0x07};
	const char *b = r->body ? r->body : body;
	uint8_t p[1024] = {(uint8_t)(reqid >> 8), (uint8_t)reqid, (uint8_t)(r->seq >> 8),
			   (uint8_t)r->seq, (uint8_t)(r->total >> 8), (uint8_t)r->total, 0, 0};
	size_t len = strlen(b);

	memcpy(p + 8, b, len);
	struct t_pkt6_spec s = {
		.src_mac = r->other_mac ? stranger : mac,
		.sip = r->sip ? r->sip : node,
		.sport = r->sport ? r->sport : 11211,
		.dport = dport,
		.payload = p,
		.plen = 8 + len,
		.vlan = r->vlan,
	};
	return t_pkt6(&s);
}

/* The request of @p fc through a new data plane (lane on or off); a request that left for a
 * node gets that node's replies (fc->replies, or one datagram). */
static void run(const struct fcase *fc, bool off, struct out *o)
{
	static const struct rspec one = {.seq = 0, .total = 1};

	memset(o, 0, sizeof(*o));
	lane_off = off;
	case_tweak = fc->tweak;
	rte_srand(20261203);
	if (fc->v6)
		t_dp_start6(1, fc->v6_nodes, tweak);
	else
		t_dp_start(1, 4, tweak);
	if (fc->before)
		fc->before();
	collect(o); /* whatever the set-up sent (none expected) */
	o->n = 0;
	t_inject(0, request(fc));
	t_poll(0);
	collect(o);
	if (o->n == 1 && o->len[0] >= 42 && o->b[0][12] == 0x08 && o->b[0][13] == 0x00 &&
	    o->b[0][30] == 198 && o->b[0][31] == 18 && o->b[0][32] == 1) {
		char node[INET_ADDRSTRLEN];
		uint16_t dport = (uint16_t)(o->b[0][34] << 8 | o->b[0][35]);
		uint16_t reqid = (uint16_t)(o->b[0][42] << 8 | o->b[0][43]);
		unsigned n = fc->n_replies ? fc->n_replies : 1;

		inet_ntop(AF_INET, o->b[0] + 30, node, sizeof(node));
		for (unsigned i = 0; i < n; i++) {
			const struct rspec *r = fc->n_replies ? &fc->replies[i] : &one;

			t_inject(0, reply(r, node, dport, (uint16_t)(reqid ^ r->reqid_xor)));
			t_poll(0);
			collect(o);
		}
	} else if (o->n == 1 && o->len[0] >= 62 && o->b[0][12] == 0x86 && o->b[0][13] == 0xdd) {
		/* To an IPv6 node 2001:2::1:i, whose MAC is 198.18.1.i's. */
		char node[INET6_ADDRSTRLEN], node4[INET_ADDRSTRLEN];
		uint8_t mac[6];
		uint16_t dport = (uint16_t)(o->b[0][54] << 8 | o->b[0][55]);
		uint16_t reqid = (uint16_t)(o->b[0][62] << 8 | o->b[0][63]);

		inet_ntop(AF_INET6, o->b[0] + 38, node, sizeof(node));
		snprintf(node4, sizeof(node4), "198.18.1.%u", o->b[0][53]);
		unsigned n = fc->n_replies ? fc->n_replies : 1;

		t_node_mac(node4, mac);
		for (unsigned i = 0; i < n; i++) {
			const struct rspec *r = fc->n_replies ? &fc->replies[i] : &one;

			t_inject(0, reply6(r, node, mac, dport, (uint16_t)(reqid ^ r->reqid_xor)));
			t_poll(0);
			collect(o);
		}
	}
	o->st = t_stats();
	t_dp_stop();
}

static bool lane_counter(int c)
{
	return c == DP_CTR_FAST || c == DP_CTR_FAST_FALLBACK || c == DP_CTR_REPLY_LANE;
}

static void check(const struct fcase *fc)
{
	static struct out on, off;

	run(fc, false, &on);
	run(fc, true, &off);
	assert_int_equal(on.n, off.n);
	for (unsigned i = 0; i < on.n; i++) {
		assert_int_equal(on.len[i], off.len[i]);
		if (memcmp(on.b[i], off.b[i], on.len[i]) != 0)
			fail_msg("%s: packet %u differs with the fast lane", fc->name, i);
	}
	for (int c = 0; c < DP_CTR_COUNT; c++)
		if (!lane_counter(c) && on.st.ctr[c] != off.st.ctr[c])
			fail_msg("%s: counter %d: %" PRIu64 " with the lane, %" PRIu64 " without",
				 fc->name, c, on.st.ctr[c], off.st.ctr[c]);
	for (int d = 0; d < DP_DROP_COUNT; d++)
		assert_int_equal(on.st.drop[d], off.st.drop[d]);
	assert_int_equal(off.st.ctr[DP_CTR_FAST], 0);
	assert_int_equal(off.st.ctr[DP_CTR_FAST_FALLBACK], 0);
	assert_int_equal(off.st.ctr[DP_CTR_REPLY_LANE], 0);
	if (on.st.ctr[DP_CTR_REPLY_LANE] != (uint64_t)fc->reply_lane)
		fail_msg("%s: the reply lane took %" PRIu64 " replies, expected %d", fc->name,
			 on.st.ctr[DP_CTR_REPLY_LANE], fc->reply_lane);
	if (fc->check_drop && on.st.drop[fc->drop] != 1)
		fail_msg("%s: drop %d counted %" PRIu64 " times, expected once", fc->name,
			 (int)fc->drop, on.st.drop[fc->drop]);
	if (fc->eligible) {
		/* Taken by the lane, answered: request out, reply back. */
		assert_int_equal(on.st.ctr[DP_CTR_FAST], 1);
		assert_int_equal(on.st.ctr[DP_CTR_FAST_FALLBACK], 0);
		assert_int_equal(on.st.ctr[DP_CTR_FORWARDED], 1);
		if (fc->n_replies == 0) {
			assert_int_equal(on.n, 2);
			assert_int_equal(on.st.ctr[DP_CTR_RETURNED], 1);
			assert_int_equal(on.st.ctr[DP_CTR_SLOTS_COMPLETED], 1);
		}
	} else {
		assert_int_equal(on.st.ctr[DP_CTR_FAST], 0);
		assert_int_equal(on.st.ctr[DP_CTR_FAST_FALLBACK], fc->lane_shape ? 1 : 0);
	}
}

#define BODY(s) .body = s, .len = sizeof(s) - 1

static const uint8_t bin_get[] = {0x80, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 4,
				  0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0, 0, 0, 'k', 'e', 'y', '7'};
static const uint8_t bin_getk[] = {0x80, 0x0c, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 4,
				   0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 'k', 'e', 'y', '8'};

static const uint8_t bin_getq[] = {0x80, 0x09, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
				   0, 0, 0, 0, 0, 0, 0, 0, 'q'};

static void test_eligible_same_bytes(void **state)
{
	(void)state;
	const struct fcase cases[] = {
		{.name = "ascii get", BODY("get foo\r\n"), .eligible = true, .reply_lane = 1},
		{.name = "ascii get, long key", BODY("get some:longer:key:of:forty:bytes:12345678\r\n"),
		 .eligible = true, .reply_lane = 1},
		{.name = "mg", BODY("mg foo\r\n"), .eligible = true, .reply_lane = 1},
		{.name = "mg v f t", BODY("mg bar v f t\r\n"), .eligible = true, .reply_lane = 1},
		{.name = "mg k s v", BODY("mg baz k s v\r\n"), .eligible = true, .reply_lane = 1},
		{.name = "binary GET", .body = bin_get, .len = sizeof(bin_get), .eligible = true,
		 .reply_lane = 1},
		{.name = "binary GETK", .body = bin_getk, .len = sizeof(bin_getk), .eligible = true,
		 .reply_lane = 1},
		/* IPv6 client, IPv6 nodes: the IPv6 lanes */
		{.name = "IPv6 get", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf, .eligible = true,
		 .reply_lane = 1},
		{.name = "IPv6 mg", BODY("mg bar v f t\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .eligible = true, .reply_lane = 1},
		{.name = "IPv6 binary GETK", .body = bin_getk, .len = sizeof(bin_getk), .v6 = true,
		 .v6_nodes = 0xf, .eligible = true, .reply_lane = 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(&cases[i]);
}

/* Ineligible conditions ------------------------------------------------------------------ */

static void hot_every(struct dp_config *c)
{
	c->hot_sample_every = 1; /* the sampler's turn on every request */
	c->hot_sketch_keys = 64;
	c->hot_interval_ms = 50;
	c->hot_threshold_pct = 0;
	c->hot_replicas = 3;
	c->hot_fill_ttl_s = 1;
}

static void hot_cfg(struct dp_config *c)
{
	hot_every(c);
	c->hot_sample_every = 1000000;
}

static void pin_foo(void)
{
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"foo", 3, true), 0);
}

static const char *key_of(int32_t member)
{
	static char k[32];

	for (int i = 0;; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		if (t_owner(k) == member)
			return k;
	}
}

static char down_req[64], moved_req[64];

static void owner_down(void)
{
	assert_int_equal(dp_health_admin(rig.dp, "n1", DP_HEALTH_DOWN), 0);
}

static void warm_on(struct dp_config *c)
{
	c->warm_window_s = 60;
	c->warm_ttl_s = 30;
}

/* 4 nodes, then 3 (n4 leaves): the warm-up window opens for reads. */
static void shrink(void)
{
	struct dp_node_mac macs[3];

	pl_free(rig.pl);
	rig.pl = t_fleet(3);
	rig.n_nodes = 3;
	memset(macs, 0, sizeof(macs));
	for (int i = 0; i < 3; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 2), 0);
}

static void client_macs(struct dp_config *c)
{
	static const uint8_t other[6] = {0x02, 0, 0, 0, 0x09, 0x09};

	memcpy(c->client_macs[0], t_client_mac, 6);
	memcpy(c->client_macs[1], other, 6);
	c->n_client_macs = 2;
}

static void test_ineligible_fall_through(void **state)
{
	(void)state;
	/* A key of member 0 (n1), to be held down; the placement is the rig's 4 nodes. */
	t_dp_start(1, 4, NULL);
	snprintf(down_req, sizeof(down_req), "get %s\r\n", key_of(0));
	snprintf(moved_req, sizeof(moved_req), "get %s\r\n", key_of(3)); /* n4's: moves */
	t_dp_stop();
	const struct fcase cases[] = {
		{.name = "hot key", BODY("get foo\r\n"), .tweak = hot_cfg, .before = pin_foo,
		 .lane_shape = true},
		{.name = "sampler's turn", BODY("mg foo v\r\n"), .tweak = hot_every, .lane_shape = true,
		 .reply_lane = 1},
		/* foo stays where it was: no warm-up read, its reply takes the reply lane */
		{.name = "warm-up window", BODY("get foo\r\n"), .tweak = warm_on, .before = shrink,
		 .lane_shape = true, .reply_lane = 1},
		{.name = "warm-up read", .body = moved_req, .len = strlen(moved_req), .tweak = warm_on,
		 .before = shrink, .lane_shape = true},
		{.name = "down endpoint", .body = down_req, .len = strlen(down_req), .before = owner_down,
		 .lane_shape = true, .reply_lane = 1},
		{.name = "ACL refused", BODY("get foo\r\n"), .sip = "198.18.5.5", .lane_shape = true},
		{.name = "client MAC list", BODY("get foo\r\n"), .tweak = client_macs},
		{.name = "bad checksum", BODY("get foo\r\n"), .bad_ip_csum = true},
		{.name = "IPv6 to an IPv4 node", BODY("get foo\r\n"), .v6 = true, .lane_shape = true},
		{.name = "IPv6 multi-get", BODY("get foo bar\r\n"), .v6 = true, .v6_nodes = 0xf},
		/* What fast_ipv6_request() must leave to handle_ipv6() */
		{.name = "IPv6 bad checksum", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.bad_csum = true}},
		{.name = "IPv6 checksum 0", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.zero_csum = true}},
		{.name = "IPv6 to another address", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.dip = "2001:2::2"}},
		{.name = "IPv6 not a listen port", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.dport = 11311}},
		{.name = "IPv6 payload length long", BODY("get foo\r\n"), .v6 = true,
		 .v6_nodes = 0xf, .v6_spec = {.plen_delta = 4}},
		{.name = "IPv6 payload length short", BODY("get foo\r\n"), .v6 = true,
		 .v6_nodes = 0xf, .v6_spec = {.plen_delta = -2}},
		{.name = "IPv6 hop limit 1", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.hop = 1}, .eligible = true, .reply_lane = 1},
		{.name = "IPv6 refused client", BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf,
		 .v6_spec = {.sip = "2001:2::200"}, .lane_shape = true},
		{.name = "multi-get", BODY("get foo bar baz\r\n")},
		{.name = "quiet mg", BODY("mg foo v q\r\n")},
		{.name = "gets", BODY("gets foo\r\n"), .reply_lane = 1},
		{.name = "binary GETQ", .body = bin_getq, .len = sizeof(bin_getq)},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(&cases[i]);
}

/* Replies: each datagram's way, with the lane and without ------------------------------- */

#define GET_FOO BODY("get foo\r\n"), .eligible = true
#define R1 {.seq = 0, .total = 1}
#define GET6 BODY("get foo\r\n"), .v6 = true, .v6_nodes = 0xf, .eligible = true

static void test_reply_lane(void **state)
{
	(void)state;
	const struct fcase cases[] = {
		{.name = "two datagrams", GET_FOO, .n_replies = 2, .replies = {{0, 2}, {1, 2}}},
		{.name = "second datagram first", GET_FOO, .n_replies = 2,
		 .replies = {{1, 2}, {0, 2}}},
		{.name = "duplicate", GET_FOO, .reply_lane = 1, .n_replies = 2, .replies = {R1, R1},
		 .check_drop = true, .drop = DP_DROP_REPLY_NO_SLOT},
		{.name = "seq 1 of 1", GET_FOO, .n_replies = 2, .replies = {{1, 1}, R1},
		 .reply_lane = 1, .check_drop = true, .drop = DP_DROP_REPLY_BAD_FRAME},
		{.name = "total 0", GET_FOO, .n_replies = 1, .replies = {{0, 0}}},
		{.name = "stale generation", GET_FOO, .n_replies = 2,
		 .replies = {{0, 1, .reqid_xor = 0xf000}, R1}, .reply_lane = 1, .check_drop = true,
		 .drop = DP_DROP_REPLY_STALE},
		{.name = "wrong source port", GET_FOO, .n_replies = 2,
		 .replies = {{0, 1, .sport = 11212}, R1}, .reply_lane = 1, .check_drop = true,
		 .drop = DP_DROP_REPLY_WRONG_SOURCE},
		{.name = "another node's address", GET_FOO, .n_replies = 1,
		 .replies = {{0, 1, .sip = "198.18.1.9"}}},
		{.name = "unknown MAC", GET_FOO, .n_replies = 2, .replies = {{0, 1, .other_mac = true}, R1},
		 .reply_lane = 1, .check_drop = true, .drop = DP_DROP_REPLY_WRONG_MAC},
		{.name = "tagged reply", GET_FOO, .n_replies = 1, .replies = {{0, 1, .vlan = 100}}},
		{.name = "UDP checksum 0", GET_FOO, .n_replies = 1, .replies = {{0, 1, .no_udp_csum = true}},
		 .reply_lane = 1},
		{.name = "miss", GET_FOO, .n_replies = 1, .replies = {{0, 1, .body = "END\r\n"}},
		 .reply_lane = 1},
		{.name = "set", BODY("set foo 0 0 5\r\nhello\r\n"), .n_replies = 1,
		 .replies = {{0, 1, .body = "STORED\r\n"}}, .reply_lane = 1},
		{.name = "delete", BODY("delete foo\r\n"), .n_replies = 1,
		 .replies = {{0, 1, .body = "DELETED\r\n"}}, .reply_lane = 1},
		{.name = "IPv6: two datagrams", GET6, .n_replies = 2, .replies = {{0, 2}, {1, 2}}},
		{.name = "IPv6: duplicate", GET6, .reply_lane = 1, .n_replies = 2,
		 .replies = {R1, R1}, .check_drop = true, .drop = DP_DROP_REPLY_NO_SLOT},
		{.name = "IPv6: stale generation", GET6, .n_replies = 2,
		 .replies = {{0, 1, .reqid_xor = 0xf000}, R1}, .reply_lane = 1, .check_drop = true,
		 .drop = DP_DROP_REPLY_STALE},
		{.name = "IPv6: wrong source port", GET6, .n_replies = 2,
		 .replies = {{0, 1, .sport = 11212}, R1}, .reply_lane = 1, .check_drop = true,
		 .drop = DP_DROP_REPLY_WRONG_SOURCE},
		/* A member's address but not the slot's node: the full 16 bytes compared */
		{.name = "IPv6: another node's address", GET6, .n_replies = 2,
		 .replies = {{0, 1, .sip = "2001:2::1:9"}, R1}, .reply_lane = 1},
		{.name = "IPv6: unknown MAC", GET6, .n_replies = 2,
		 .replies = {{0, 1, .other_mac = true}, R1}, .reply_lane = 1, .check_drop = true,
		 .drop = DP_DROP_REPLY_WRONG_MAC},
		{.name = "IPv6: tagged reply", GET6, .n_replies = 1, .replies = {{0, 1, .vlan = 100}}},
		{.name = "mg, reply of two datagrams", BODY("mg foo v\r\n"), .eligible = true,
		 .n_replies = 2, .replies = {{0, 2, .body = "VA 1\r\n"}, {1, 2, .body = "x\r\n"}}},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check(&cases[i]);
}

static void hot_sparse(struct dp_config *c)
{
	hot_every(c);
	c->hot_sample_every = 4;
}

/* Many requests in bursts, lane on and off: the same packets out and the same counters, the
 * lane taking every one but the hot-key sampler's turns, and every packet counted once (t_stats
 * checks the identity). */
static void test_bursts_same_bytes(void **state)
{
	static struct out on, off;
	(void)state;

	for (int pass = 0; pass < 2; pass++) {
		struct out *o = pass == 0 ? &on : &off;

		memset(o, 0, sizeof(*o));
		lane_off = pass == 1;
		case_tweak = hot_sparse;
		rte_srand(7);
		t_dp_start(1, 4, tweak);
		for (int i = 0; i < 40; i++) {
			char k[64];
			int n = snprintf(k, sizeof(k), i % 2 ? "get key%d\r\n" : "mg key%d v f\r\n", i);

			rte_ring_enqueue(rig.rx[0], t_request((uint16_t)(6000 + i), (uint16_t)i, k,
							      (size_t)n));
		}
		for (int i = 0; i < 4; i++)
			t_poll(0);
		struct rte_mbuf *m;
		uint32_t sum = 0, cnt = 0;

		while ((m = t_sent(0)) != NULL) {
			const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);

			for (uint32_t j = 0; j < rte_pktmbuf_data_len(m); j++)
				sum = sum * 31 + d[j];
			cnt++;
			rte_pktmbuf_free(m);
		}
		o->n = cnt;
		o->len[0] = sum;
		o->st = t_stats();
		t_dp_stop();
	}
	assert_int_equal(on.n, 40);
	assert_int_equal(off.n, 40);
	assert_int_equal(on.len[0], off.len[0]);
	for (int c = 0; c < DP_CTR_COUNT; c++)
		if (!lane_counter(c))
			assert_int_equal(on.st.ctr[c], off.st.ctr[c]);
	/* The sampler's turns went to the general path, the rest through the lane. */
	assert_true(on.st.ctr[DP_CTR_HOT_SAMPLED] > 0);
	assert_int_equal(on.st.ctr[DP_CTR_FAST] + on.st.ctr[DP_CTR_FAST_FALLBACK], 40);
	assert_int_equal(on.st.ctr[DP_CTR_FAST_FALLBACK], on.st.ctr[DP_CTR_HOT_SAMPLED]);
	assert_int_equal(on.st.ctr[DP_CTR_FORWARDED], 40);
	assert_int_equal(off.st.ctr[DP_CTR_FORWARDED], 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eligible_same_bytes),
		cmocka_unit_test(test_ineligible_fall_through),
		cmocka_unit_test(test_bursts_same_bytes),
		cmocka_unit_test(test_reply_lane),
	};
	int rc;

	t_eal_setup("dp_fast", "0", 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	return t_eal_teardown(rc);
}
