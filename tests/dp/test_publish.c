/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement publication while a worker lcore forwards: hundreds of epochs swapped under
 * traffic, every request forwarded to its owner under the old or the new ring (never a
 * third node), none lost to the swap (identity, forwarded == sent), old replicas freed (the
 * heap returns to its size).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_malloc.h>

#include "dataplane_priv.h"
#include "dp_test.h"

#define ROUNDS	  300
#define PER_ROUND 16

static void big_table(struct dp_config *c)
{
	c->slots = 8192;
	c->request_timeout_ms = 60000;
}

static size_t heap_bytes(void)
{
	struct rte_malloc_socket_stats st;

	assert_int_equal(rte_malloc_get_socket_stats(0, &st), 0);
	return st.heap_allocsz_bytes;
}

/* Check every forwarded packet on queue 0: its node owns its key under @p a or @p b. */
static unsigned int drain_check(const struct pl_placement *a, const struct pl_placement *b)
{
	struct rte_mbuf *m;
	unsigned int n = 0;

	while ((m = t_sent(0)) != NULL) {
		struct t_view v;
		char key[64];
		size_t klen;
		int32_t oa, ob;
		uint32_t last;

		t_view_udp(m, &v, false);
		assert_true(v.plen > 8 + 4);
		assert_memory_equal(v.payload + 8, "get ", 4);
		klen = v.plen - 8 - 4 - 2;
		assert_true(klen < sizeof(key));
		memcpy(key, v.payload + 12, klen);
		oa = pl_lookup(a, key, klen);
		ob = pl_lookup(b, key, klen);
		last = rte_be_to_cpu_32(v.ip->dst_addr) & 0xff;
		if (last != (uint32_t)oa + 1 && last != (uint32_t)ob + 1)
			fail_msg("key %.*s went to node %u, owners %d / %d", (int)klen, key, last,
				 oa + 1, ob + 1);
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

static void test_publish_under_traffic(void **state)
{
	struct pl_placement *p4 = t_fleet(4), *p5 = t_fleet(5);
	struct dp_node_mac macs[5];
	unsigned int sent = 0, seen = 0;
	size_t heap0;
	char text[64];
	struct dp_stats s;
	uint64_t deadline;

	(void)state;
	t_dp_start(1, 4, big_table);
	memset(macs, 0, sizeof(macs));
	for (int i = 0; i < 5; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	/* The placements the last changes replaced are held for writes of moved keys
	 * (membership flips): dropped here and at the end, so the heap compares alike. */
	assert_int_equal(dp_publish_placement(rig.dp, p5, macs, 2), 0);
	assert_int_equal(dp_publish_placement(rig.dp, p4, macs, 3), 0);
	dp_warm_forget(rig.dp);
	heap0 = heap_bytes();
	assert_int_equal(rte_eal_remote_launch(dp_worker_run, dp_worker_get(rig.dp, 0), 1), 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int j = 0; j < PER_ROUND; j++) {
			int n = snprintf(text, sizeof(text), "get k%d_%d\r\n", r, j);

			t_inject(0, t_request((uint16_t)(1024 + j), (uint16_t)r, text, (size_t)n));
			sent++;
		}
		assert_int_equal(
			dp_publish_placement(rig.dp, r % 2 ? p4 : p5, macs, (uint64_t)r + 4), 0);
		assert_int_equal(dp_epoch(rig.dp), (uint64_t)r + 4);
		seen += drain_check(p4, p5);
	}
	assert_int_equal(dp_publish_placement(rig.dp, p4, macs, ROUNDS + 4), 0);
	deadline = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
	do {
		seen += drain_check(p4, p5);
		s = t_stats_raw();
	} while (s.ctr[DP_CTR_RX] < sent && rte_get_tsc_cycles() < deadline);
	dp_stop(rig.dp);
	assert_int_equal(rte_eal_wait_lcore(1), 0);
	seen += drain_check(p4, p5);
	s = t_stats();
	assert_int_equal(s.ctr[DP_CTR_RX], sent);
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], sent);
	assert_int_equal(s.ctr[DP_CTR_DROPPED], 0);
	assert_int_equal(seen, sent);
	assert_true(s.ctr[DP_CTR_PUBLISH_SEEN] >= 2);
	/* Every replica but the current one and the held ones was freed. */
	dp_warm_forget(rig.dp);
	assert_int_equal(heap_bytes(), heap0);
	pl_free(p4);
	pl_free(p5);
	t_dp_stop();
}

/* Publication with a worker that sleeps in backoff must not wait for it to wake. */
static void backoff_idle(struct dp_config *c)
{
	c->idle = DP_IDLE_BACKOFF;
	c->backoff_after = 1;
	c->backoff_us = 50000;
}

static void test_publish_with_sleeping_worker(void **state)
{
	struct pl_placement *p5 = t_fleet(5);
	uint64_t t0, us;

	(void)state;
	t_dp_start(1, 4, backoff_idle);
	assert_int_equal(rte_eal_remote_launch(dp_worker_run, dp_worker_get(rig.dp, 0), 1), 0);
	usleep(20000);
	t0 = rte_get_tsc_cycles();
	for (int i = 0; i < 20; i++)
		assert_int_equal(dp_publish_placement(rig.dp, p5, NULL, (uint64_t)i + 2), 0);
	us = (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
	/* 20 publications: far less than 20 sleeps of 50 ms. */
	assert_true(us < 500000);
	dp_stop(rig.dp);
	assert_int_equal(rte_eal_wait_lcore(1), 0);
	pl_free(p5);
	t_dp_stop();
}

/* A bad member address refuses the publication and keeps the ring in force. */
static void test_publish_refused_keeps_ring(void **state)
{
	struct pl_member m[2];
	struct pl_config c = {0};
	struct pl_placement *bad;

	(void)state;
	t_dp_start(1, 4, NULL);
	memset(m, 0, sizeof(m));
	snprintf(m[0].name, sizeof(m[0].name), "a");
	snprintf(m[0].addr, sizeof(m[0].addr), "cache.example");
	m[0].port = 11211;
	m[0].weight = 1;
	snprintf(m[1].name, sizeof(m[1].name), "b");
	snprintf(m[1].addr, sizeof(m[1].addr), "198.18.1.9");
	m[1].port = 11211;
	m[1].weight = 1;
	bad = pl_build(&c, m, 2);
	assert_non_null(bad);
	assert_int_equal(dp_publish_placement(rig.dp, bad, NULL, 9), -EINVAL);
	assert_int_equal(dp_epoch(rig.dp), 1);
	t_inject(0, t_request(5555, 1, "get foo\r\n", 9));
	t_poll(0);
	struct rte_mbuf *out = t_sent(0);
	struct t_view v;

	t_view_udp(out, &v, false);
	assert_int_equal(rte_be_to_cpu_32(v.ip->dst_addr) & 0xff, (uint32_t)t_owner("foo") + 1);
	rte_pktmbuf_free(out);
	pl_free(bad);
	t_dp_stop();
}

static void many_neighbours(struct dp_config *c)
{
	c->neighbours = 16384;
}

/* 10,000 nodes: publication stays linear (endpoint lookups indexed), a removed node's
 * endpoint is reused by the next new one, and requests follow the placement. */
static void test_publish_10000_nodes(void **state)
{
	enum { N = 10000 };
	struct pl_member *m = calloc(N + 1, sizeof(*m));
	struct pl_config c = {0};
	struct pl_placement *big, *moved;
	struct dp_node_stats ns;
	uint64_t t0, us1, us2;

	(void)state;
	assert_non_null(m);
	t_dp_start(1, 4, many_neighbours);
	for (int i = 0; i < N + 1; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "m%d", i);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.19.%d.%d", i / 200, 1 + i % 200);
		m[i].port = 11211;
		m[i].weight = 1;
	}
	c.vnodes = 8;
	big = pl_build(&c, m, N);
	moved = pl_build(&c, m + 1, N); /* m0 gone, m10000 new */
	assert_non_null(big);
	assert_non_null(moved);
	t0 = rte_get_tsc_cycles();
	assert_int_equal(dp_publish_placement(rig.dp, big, NULL, 2), 0);
	us1 = (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
	t0 = rte_get_tsc_cycles();
	assert_int_equal(dp_publish_placement(rig.dp, moved, NULL, 3), 0);
	us2 = (rte_get_tsc_cycles() - t0) * 1000000 / rte_get_tsc_hz();
	print_message("# publish 10000 nodes: %lu us first, %lu us after a change\n",
		      (unsigned long)us1, (unsigned long)us2);
	assert_true(us2 < 2000000);
	/* Member 9999 of `moved` is m10000 at 198.19.50.1. */
	assert_int_equal(dp_member_node(rig.dp, N - 1, &ns), 0);
	assert_string_equal(ns.name, "m10000");
	assert_int_equal(ns.ip, t_ip("198.19.50.1"));
	assert_int_equal(dp_member_node(rig.dp, 0, &ns), 0);
	assert_string_equal(ns.name, "m1");
	assert_int_equal(ns.ip, t_ip("198.19.0.2"));
	assert_int_equal(dp_member_node(rig.dp, N, &ns), -ENOENT);
	pl_free(big);
	pl_free(moved);
	free(m);
	t_dp_stop();
}

/* An ARP reply from @p ip (MAC @p mac) to the router. */
static struct rte_mbuf *arp_reply(const uint8_t mac[6], const char *ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;

	assert_non_null(m);
	/* Every byte of the Ethernet and ARP headers is set below. */
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eth) + sizeof(*a));
	assert_non_null(eth);
	memcpy(&eth->dst_addr, t_router_mac, 6);
	memcpy(&eth->src_addr, mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a = (struct rte_arp_hdr *)(eth + 1);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	memcpy(&a->arp_data.arp_sha, mac, 6);
	a->arp_data.arp_sip = t_ip(ip);
	memcpy(&a->arp_data.arp_tha, t_router_mac, 6);
	a->arp_data.arp_tip = t_ip(T_ROUTER_IP);
	return m;
}

/* A member new to the ring gets its neighbour entry before the swap (dp_prepare_placement):
 * the control lcore ARPs for it while the workers still run the old ring, and the ring
 * published once its MAC is known forwards its keys at once. Published straight away, its
 * first requests were dropped as node_no_mac until ARP answered (seen under memcaslap). */
static void test_prepare_new_member(void **state)
{
	static const uint8_t n5_mac[6] = {0x02, 0, 0, 0, 0x01, 0x55};
	struct pl_placement *p5 = t_fleet(5);
	struct dp_node_mac macs[5];
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;
	struct rte_mbuf *m;
	char key[32], text[64];
	int i, n;

	(void)state;
	assert_non_null(p5);
	t_dp_start(1, 4, NULL); /* n1..n4 with static MACs, epoch 1 */
	memset(macs, 0, sizeof(macs));
	for (i = 0; i < 4; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	/* n5 (by ARP) is new and unknown; asking again changes nothing. */
	assert_int_equal(dp_prepare_placement(rig.dp, p5, macs), 1);
	assert_int_equal(dp_prepare_placement(rig.dp, p5, macs), 1);
	dp_control_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eth + 1);
	assert_int_equal(eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP));
	assert_int_equal(a->arp_opcode, rte_cpu_to_be_16(RTE_ARP_OP_REQUEST));
	assert_int_equal(a->arp_data.arp_tip, t_ip("198.18.1.5"));
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	assert_int_equal(dp_epoch(rig.dp), 1); /* the workers still run the old ring */
	/* The answer teaches the MAC: nothing left to wait for. */
	t_inject(0, arp_reply(n5_mac, "198.18.1.5"));
	t_poll(0);
	assert_int_equal(dp_prepare_placement(rig.dp, p5, macs), 0);
	assert_int_equal(dp_publish_placement(rig.dp, p5, macs, 2), 0);
	/* A key of n5 goes straight to its learned MAC. */
	for (i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		if (pl_lookup(p5, key, strlen(key)) == 4)
			break;
	}
	assert_true(i < 100000);
	n = snprintf(text, sizeof(text), "get %s\r\n", key);
	t_inject(0, t_request(5555, 1, text, (size_t)n));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), n5_mac, 6);
	rte_pktmbuf_free(m);
	assert_int_equal(t_drop(DP_DROP_NODE_NO_MAC), 0);
	/* Every member is in the ring now: nothing new to resolve. */
	assert_int_equal(dp_prepare_placement(rig.dp, p5, macs), 0);
	pl_free(p5);
	t_dp_stop();
}

/* ---- a new member starts clean (issue 27, defect 8) ------------------------------------ */

/* Publish nodes n<i+1> (198.18.1.i+1, static MAC 02:00:00:00:01:i+1) for the bits of @p mask
 * as epoch @p epoch; the rig's placement becomes it. */
static void publish_mask(uint32_t mask, uint64_t epoch)
{
	struct pl_member mb[8];
	struct dp_node_mac macs[8];
	struct pl_config pc = {0};
	uint32_t n = 0;

	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < 8; i++) {
		const uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		if (!(mask & (1u << i)))
			continue;
		snprintf(mb[n].name, sizeof(mb[n].name), "n%u", i + 1);
		snprintf(mb[n].addr, sizeof(mb[n].addr), "198.18.1.%u", i + 1);
		mb[n].port = 11211;
		mb[n].weight = 1;
		memcpy(macs[n].mac, mac, 6);
		macs[n].has_mac = true;
		n++;
	}
	pc.algo = PL_ALGO_RING;
	pl_free(rig.pl);
	rig.pl = pl_build(&pc, mb, n);
	assert_non_null(rig.pl);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, epoch), 0);
}

/* Endpoints in use, in endpoint order, into @p out; @return how many. */
static uint32_t nodes(struct dp_node_stats *out, uint32_t max)
{
	return dp_nodes_get(rig.dp, out, max);
}

/* The in-ring node named @p name. */
static struct dp_node_stats ring_node(const char *name)
{
	struct dp_node_stats all[16], found;
	uint32_t n = nodes(all, 16);
	int hits = 0;

	for (uint32_t i = 0; i < n; i++)
		if (all[i].in_ring && strcmp(all[i].name, name) == 0) {
			found = all[i];
			hits++;
		}
	assert_int_equal(hits, 1);
	return found;
}

/* Send @p count gets of keys node @p name owns, nobody answers; the forwarded datagrams are
 * dropped here. */
static void unanswered_gets(const char *name, int count)
{
	struct rte_mbuf *m;
	int sent = 0;

	for (int i = 0; sent < count && i < 100000; i++) {
		char key[24], text[48];
		int32_t o;
		int n;

		snprintf(key, sizeof(key), "c%d", i);
		o = t_owner(key);
		if (o < 0 || strcmp(pl_member_at(rig.pl, (uint32_t)o)->name, name) != 0)
			continue;
		n = snprintf(text, sizeof(text), "get %s\r\n", key);
		t_inject(0, t_request((uint16_t)(6000 + sent), 1, text, (size_t)n));
		t_poll(0);
		sent++;
	}
	assert_int_equal(sent, count);
	while ((m = t_sent(0)) != NULL)
		rte_pktmbuf_free(m);
}

/* Poll until @p want slots expired in all (a bounded wait for a condition). */
static void wait_expired(uint64_t want, unsigned int max_ms)
{
	for (unsigned int ms = 0; t_stats().ctr[DP_CTR_SLOTS_EXPIRED] < want && ms < max_ms; ms++) {
		usleep(1000);
		for (int i = 0; i < 32; i++)
			t_poll(0);
	}
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_EXPIRED], want);
}

/* Nothing this node did not do: no forwards, replies, timeouts or failures; up. */
static void assert_clean(const char *name)
{
	struct dp_node_stats n;

	for (int i = 0; i < 3; i++)
		dp_health_poll(rig.dp);
	n = ring_node(name);
	assert_int_equal(n.forwarded, 0);
	assert_int_equal(n.returned, 0);
	assert_int_equal(n.timeouts, 0);
	assert_int_equal(n.failures, 0);
	assert_int_equal(n.downs, 0);
	assert_int_equal(n.health, HL_UP);
}

static void short_requests(struct dp_config *c)
{
	c->request_timeout_ms = 5;
	c->health.fail_down = 2;
}

/* A node added at the entry of one removed takes nothing of its past (it was marked down at
 * once by the old one's timeouts: "node5 up -> down: 162 failure(s)"); neither does a node
 * that comes back at its own address after it left. */
static void test_new_member_starts_clean(void **state)
{
	struct dp_node_stats all[16];
	uint32_t n;

	(void)state;
	t_dp_start(1, 4, short_requests);
	publish_mask(0x0f, 2);
	unanswered_gets("n4", 5);
	wait_expired(5, 5000);
	dp_health_poll(rig.dp);
	assert_int_equal(ring_node("n4").timeouts, 5);
	publish_mask(0x07, 3); /* n4 leaves */
	/* The placement n4 left is held for writes of moved keys for DP_FLIP_HELD changes
	 * (dp_warm.c: membership flips), and names n4: that many more changes that move keys
	 * (n3 out and in; the same membership again would keep the hold) release it. */
	for (uint64_t e = 4; e < 4 + DP_FLIP_HELD; e++)
		publish_mask(e % 2 ? 0x07 : 0x03, e);
	usleep(20000);	       /* past its entry's hold (two request timeouts) */
	publish_mask(0x17, 4 + DP_FLIP_HELD); /* n5 joins: n4's entry is the first free one */
	n = nodes(all, 16);
	assert_int_equal(n, 4);
	assert_string_equal(all[3].name, "n5");
	assert_clean("n5");

	/* n5 serves, times out, leaves, comes back at its own address: clean again. */
	unanswered_gets("n5", 3);
	wait_expired(8, 5000);
	dp_health_poll(rig.dp);
	assert_int_equal(ring_node("n5").forwarded, 3);
	assert_int_equal(ring_node("n5").timeouts, 3);
	/* n5 leaves, then DP_FLIP_HELD changes: the placements naming n5 no longer held. */
	for (uint64_t e = 5 + DP_FLIP_HELD; e <= 5 + 2 * DP_FLIP_HELD; e++)
		publish_mask(e % 2 ? 0x07 : 0x03, e);
	usleep(20000);
	publish_mask(0x17, 6 + 2 * DP_FLIP_HELD);
	assert_int_equal(nodes(all, 16), 4);
	assert_clean("n5");
	t_dp_stop();
}

static void slow_requests(struct dp_config *c)
{
	c->request_timeout_ms = 300;
	c->health.fail_down = 2;
}

/* Requests to a node just removed are still in flight: a node added right after takes
 * another entry, so their timeouts never count against it. */
static void test_new_member_skips_busy_entry(void **state)
{
	struct dp_node_stats all[16];
	uint32_t n;

	(void)state;
	t_dp_start(1, 4, slow_requests);
	publish_mask(0x0f, 2);
	unanswered_gets("n4", 4);
	publish_mask(0x07, 3); /* n4 leaves with 4 requests in flight */
	publish_mask(0x17, 4); /* n5 joins within 600 ms: not at n4's entry */
	n = nodes(all, 16);
	assert_int_equal(n, 5);
	assert_string_equal(all[3].name, "n4");
	assert_false(all[3].in_ring);
	assert_string_equal(all[4].name, "n5");
	wait_expired(4, 10000);
	assert_clean("n5");
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_under_traffic),
		cmocka_unit_test(test_publish_with_sleeping_worker),
		cmocka_unit_test(test_publish_refused_keeps_ring),
		cmocka_unit_test(test_publish_10000_nodes),
		cmocka_unit_test(test_prepare_new_member),
		cmocka_unit_test(test_new_member_starts_clean),
		cmocka_unit_test(test_new_member_skips_busy_entry),
	};

	t_eal_setup("dp_publish", "0-1", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
