/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 on real mbufs: IPv6 clients to IPv6 nodes and back; mixed families (an IPv6 client to an
 * IPv4 node, an IPv4 client to an IPv6 node); ICMPv6 echo; Neighbor Solicitation answered
 * (unicast and to the solicited-node group); Neighbor Advertisements teaching a next hop's MAC
 * only in answer to the router's own NS; and every header edge case dropped by reason.
 * Every test checks the accounting identity (t_stats).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_arp.h>

#include "dp_test.h"
#include "route.h"

/* All four nodes IPv6 / only nodes 1 and 3 / none. */
#define ALL6  0xfu
#define NONE6 0x0u

/* A key of each node of the rig's ring: key_of[i] is owned by member i. */
static char key_of[4][16];

static void find_keys(void)
{
	bool have[4] = {false, false, false, false};

	for (int k = 0, found = 0; found < 4 && k < 10000; k++) {
		char key[16];
		int32_t o;

		snprintf(key, sizeof(key), "k%d", k);
		o = t_owner(key);
		assert_true(o >= 0 && o < 4);
		if (!have[o]) {
			have[o] = true;
			snprintf(key_of[o], sizeof(key_of[o]), "%s", key);
			found++;
		}
	}
}

static void node_mac(int i, uint8_t mac[6])
{
	const uint8_t m[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

	memcpy(mac, m, 6);
}

static void node_ip6_text(int i, char *out, size_t len)
{
	snprintf(out, len, "2001:2::1:%d", i + 1);
}

struct sent {
	uint16_t sport; /* the router's port towards the node */
	uint16_t reqid; /* the request id the node sees */
};

/* The request left towards IPv6 node @p i: Ethernet, IPv6 from address6, checksum. */
static struct sent expect_to_node6(int i, size_t plen)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view6 v;
	uint8_t mac[6], a[16];
	char ip[48];
	struct sent s;

	assert_non_null(m);
	t_view_udp6(m, &v);
	node_mac(i, mac);
	assert_memory_equal(&v.eth->dst_addr, mac, 6);
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	t_ip6(T_ROUTER_IP6, a);
	assert_memory_equal(&v.ip6->src_addr, a, 16);
	node_ip6_text(i, ip, sizeof(ip));
	t_ip6(ip, a);
	assert_memory_equal(&v.ip6->dst_addr, a, 16);
	assert_int_equal(v.ip6->hop_limits, 64);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 11211);
	assert_int_equal(v.plen, plen);
	s.sport = rte_be_to_cpu_16(v.udp->src_port);
	s.reqid = v.reqid;
	assert_true(s.sport >= T_REPLY_BASE && s.sport < T_REPLY_BASE + T_REPLY_COUNT);
	rte_pktmbuf_free(m);
	return s;
}

/* The request left towards IPv4 node @p i (from the router's IPv4). */
static struct sent expect_to_node4(int i, size_t plen)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;
	char ip[24];
	struct sent s;

	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_int_equal(v.eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4));
	snprintf(ip, sizeof(ip), "198.18.1.%d", i + 1);
	assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(ip));
	assert_int_equal(v.ip->time_to_live, 64);
	assert_int_equal(v.plen, plen);
	s.sport = rte_be_to_cpu_16(v.udp->src_port);
	s.reqid = v.reqid;
	rte_pktmbuf_free(m);
	return s;
}

/* The reply came back to the IPv6 client at @p cport with @p creqid and @p body. */
static void expect_to_client6(uint16_t cport, uint16_t creqid, const char *body)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view6 v;
	uint8_t a[16];

	assert_non_null(m);
	t_view_udp6(m, &v);
	assert_memory_equal(&v.eth->dst_addr, t_client_mac, 6);
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	t_ip6(T_ROUTER_IP6, a);
	assert_memory_equal(&v.ip6->src_addr, a, 16);
	t_ip6(T_CLIENT_IP6, a);
	assert_memory_equal(&v.ip6->dst_addr, a, 16);
	assert_int_equal(rte_be_to_cpu_16(v.udp->src_port), T_LISTEN);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), cport);
	assert_int_equal(v.reqid, creqid);
	assert_int_equal(v.plen, 8 + strlen(body));
	assert_memory_equal(v.payload + 8, body, strlen(body));
	rte_pktmbuf_free(m);
}

/* The reply came back to the IPv4 client. */
static void expect_to_client4(uint16_t cport, uint16_t creqid, const char *body)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), cport);
	assert_int_equal(v.reqid, creqid);
	assert_int_equal(v.plen, 8 + strlen(body));
	assert_memory_equal(v.payload + 8, body, strlen(body));
	rte_pktmbuf_free(m);
}

static const char hit[] = "VALUE k 0 1\r\nx\r\nEND\r\n";

/* An IPv6 client's get reaches the owner over IPv6 and its reply comes back, every byte and
 * checksum right; on two workers the reply that lands on the other worker is handed over. */
static void test_v6_round_trip(void **state)
{
	char text[96], ip[48];
	struct dp_stats st;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	find_keys();
	for (int i = 0; i < 4; i++) {
		struct sent s;
		uint8_t mac[6];

		snprintf(text, sizeof(text), "get %s\r\n", key_of[i]);
		t_inject(0, t_request6(5000 + i, 0x100 + i, text, strlen(text)));
		t_poll(0);
		s = expect_to_node6(i, 8 + strlen(text));
		node_mac(i, mac);
		node_ip6_text(i, ip, sizeof(ip));
		t_inject(0, t_reply6(ip, mac, 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
		t_poll(0);
		expect_to_client6(5000 + i, 0x100 + i, hit);
	}
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 4);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 4);
	assert_int_equal(st.ctr[DP_CTR_SLOTS_COMPLETED], 4);
	assert_int_equal(st.ctr[DP_CTR_DROPPED], 0);
	t_dp_stop();
}

/* The same with the TX checksum offload: the fields the NIC needs. */
static void offload(struct dp_config *c)
{
	c->tx_cksum_offload = true;
}

static void test_v6_offload_flags(void **state)
{
	char text[96];
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	struct rte_udp_hdr *udp;

	(void)state;
	t_dp_start6(1, ALL6, offload);
	find_keys();
	snprintf(text, sizeof(text), "get %s\r\n", key_of[0]);
	t_inject(0, t_request6(5000, 1, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IPV6);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM);
	assert_false(m->ol_flags & RTE_MBUF_F_TX_IPV4);
	assert_int_equal(m->l3_len, 40);
	/* The UDP checksum field seeded with the pseudo-header sum, as DPDK asks. */
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, m->l2_len);
	udp = (struct rte_udp_hdr *)(ip6 + 1);
	assert_int_equal(udp->dgram_cksum, rte_ipv6_phdr_cksum(ip6, m->ol_flags));
	rte_pktmbuf_free(m);
	t_stats();
	t_dp_stop();
}

/* Mixed families: an IPv6 client to an IPv4 node and back, an IPv4 client to an IPv6 node and
 * back; the L3 header is rebuilt (20 bytes more or less) and both checksums recomputed. */
static void test_mixed_families(void **state)
{
	char text[96], ip[48];
	struct sent s;
	uint8_t mac[6];
	struct dp_stats st;

	(void)state;
	t_dp_start6(1, 0x5u, NULL); /* n1, n3 IPv6; n2, n4 IPv4 */
	find_keys();
	/* IPv6 client -> IPv4 node n2 -> IPv6 client. */
	snprintf(text, sizeof(text), "get %s\r\n", key_of[1]);
	t_inject(0, t_request6(6000, 0x61, text, strlen(text)));
	t_poll(0);
	s = expect_to_node4(1, 8 + strlen(text));
	t_inject(0, t_reply("198.18.1.2", 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	expect_to_client6(6000, 0x61, hit);
	/* IPv4 client -> IPv6 node n1 -> IPv4 client. */
	snprintf(text, sizeof(text), "get %s\r\n", key_of[0]);
	t_inject(0, t_request(6001, 0x62, text, strlen(text)));
	t_poll(0);
	s = expect_to_node6(0, 8 + strlen(text));
	node_mac(0, mac);
	node_ip6_text(0, ip, sizeof(ip));
	t_inject(0, t_reply6(ip, mac, 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	expect_to_client4(6001, 0x62, hit);
	/* IPv4 to IPv4 is untouched by all this (n4). */
	snprintf(text, sizeof(text), "get %s\r\n", key_of[3]);
	t_inject(0, t_request(6002, 0x63, text, strlen(text)));
	t_poll(0);
	s = expect_to_node4(3, 8 + strlen(text));
	t_inject(0, t_reply("198.18.1.4", 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	expect_to_client4(6002, 0x63, hit);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 3);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 3);
	assert_int_equal(st.ctr[DP_CTR_DROPPED], 0);
	t_dp_stop();
}

/* A set of @p payload UDP payload bytes (frame header included) for key_of[@p node]. */
static size_t set_text(char *out, size_t cap, int node, size_t payload)
{
	size_t text = payload - 8, head, data;
	int n;

	n = snprintf(out, cap, "set %s 0 0 ", key_of[node]);
	head = (size_t)n;
	/* "set K 0 0 DDDD\r\n" + data + "\r\n": the length has four digits here */
	data = text - head - 4 - 2 - 2;
	n = snprintf(out + head, cap - head, "%zu\r\n", data);
	memset(out + head + (size_t)n, 'v', data);
	memcpy(out + head + (size_t)n + data, "\r\n", 2);
	assert_int_equal(head + (size_t)n + data + 2, text);
	return text;
}

/* An IPv4 client's datagram grows by 20 header bytes towards an IPv6 node: one that fits the
 * 1500-byte MTU over IPv6 is forwarded, one that fits only over IPv4 is dropped
 * (family_too_big), its slot freed, nothing sent; the identity holds. */
static void test_v4_to_v6_mtu(void **state)
{
	static char text[1600];
	struct dp_stats st;
	size_t len;
	struct sent s;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	find_keys();
	len = set_text(text, sizeof(text), 0, 1500 - 48);
	t_inject(0, t_request(6100, 0x71, text, len));
	t_poll(0);
	s = expect_to_node6(0, 8 + len);
	(void)s;
	len = set_text(text, sizeof(text), 0, 1500 - 28);
	t_inject(0, t_request(6101, 0x72, text, len));
	t_poll(0);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 1);
	assert_int_equal(st.drop[DP_DROP_FAMILY_TOO_BIG], 1);
	assert_int_equal(st.ctr[DP_CTR_DROPPED], 1);
	t_dp_stop();
}

/* A reply from another IPv6 address (one bit off), another port, or the IPv4 address whose
 * value folds like it is not the node's: reply_wrong_source; nothing reaches the client. */
static void test_forged_v6_replies(void **state)
{
	char text[96], ip[48];
	struct sent s;
	uint8_t mac[6];

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	find_keys();
	snprintf(text, sizeof(text), "get %s\r\n", key_of[2]);
	t_inject(0, t_request6(7000, 0x70, text, strlen(text)));
	t_poll(0);
	s = expect_to_node6(2, 8 + strlen(text));
	node_mac(2, mac);
	/* Wrong address (2001:2::1:13 instead of ::1:3), right MAC and port. */
	t_inject(0, t_reply6("2001:2::1:13", mac, 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	/* Right address, wrong port. */
	node_ip6_text(2, ip, sizeof(ip));
	t_inject(0, t_reply6(ip, mac, 11212, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	/* The IPv4 node n3's address cannot answer an IPv6 node's slot either. */
	t_inject(0, t_reply("198.18.1.3", 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_SOURCE), 3);
	/* The real one still passes. */
	t_inject(0, t_reply6(ip, mac, 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	expect_to_client6(7000, 0x70, hit);
	t_dp_stop();
}

/* Clients outside allowed_clients' IPv6 prefixes are refused; version is answered over IPv6. */
static void test_v6_acl_and_version(void **state)
{
	struct t_pkt6_spec sp = {0};
	uint8_t buf[64];
	struct rte_mbuf *m;
	struct t_view6 v;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	memcpy(buf, "\x00\x09\x00\x00\x00\x01\x00\x00get a\r\n", 15);
	sp.sip = "2001:2::200"; /* the outsider */
	sp.sport = 1000;
	sp.dport = T_LISTEN;
	sp.payload = buf;
	sp.plen = 15;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_CLIENT_DENIED), 1);
	t_inject(0, t_request6(1001, 0x77, "version\r\n", 9));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp6(m, &v);
	assert_int_equal(v.reqid, 0x77);
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 1001);
	assert_memory_equal(v.payload + 8, "VERSION ", 8);
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_ANSWERED], 1);
	t_dp_stop();
}

/* No address6: IPv6 is not served (not_ipv4, as before). */
static void test_no_address6(void **state)
{
	(void)state;
	t_dp_start(1, 4, NULL);
	t_inject(0, t_request6(1001, 1, "get a\r\n", 7));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NOT_IPV4), 1);
	t_dp_stop();
}

/* ICMPv6 echo request -> echo reply (identifier, sequence and data kept, checksum over the
 * pseudo-header); an outsider's echo is refused as its requests are. */
static void test_icmp6_echo(void **state)
{
	uint8_t echo[16] = {128, 0, 0, 0, 0x12, 0x34, 0x00, 0x07, 'p', 'i', 'n', 'g', 1, 2, 3, 4};
	struct t_pkt6_spec sp = {0};
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	uint8_t *ic, a[16];

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	sp.proto = IPPROTO_ICMPV6;
	sp.payload = echo;
	sp.plen = sizeof(echo);
	sp.cksum_off = 2;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	assert_int_equal(ip6->proto, IPPROTO_ICMPV6);
	t_ip6(T_ROUTER_IP6, a);
	assert_memory_equal(&ip6->src_addr, a, 16);
	t_ip6(T_CLIENT_IP6, a);
	assert_memory_equal(&ip6->dst_addr, a, 16);
	ic = (uint8_t *)(ip6 + 1);
	assert_int_equal(ic[0], 129);
	assert_memory_equal(ic + 4, echo + 4, sizeof(echo) - 4);
	assert_int_equal(t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
				  IPPROTO_ICMPV6, ic, sizeof(echo)),
			 0);
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_ICMP_ECHOED], 1);
	/* Wrong checksum: bad_icmp. An outsider: client_denied. */
	sp.bad_csum = true;
	t_inject(0, t_pkt6(&sp));
	sp.bad_csum = false;
	sp.sip = "2001:2::200";
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_BAD_ICMP), 1);
	assert_int_equal(t_drop(DP_DROP_CLIENT_DENIED), 1);
	t_dp_stop();
}

/* An NS message for @p target with a source link-layer option. */
static size_t ns_msg(uint8_t *b, const char *target, const uint8_t *sll)
{
	memset(b, 0, 32);
	b[0] = 135;
	t_ip6(target, b + 8);
	b[24] = 1;
	b[25] = 1;
	memcpy(b + 26, sll, 6);
	return 32;
}

/* Neighbor Solicitation for address6, unicast and to the solicited-node group (ff02::1:ff00:1
 * at 33:33:ff:00:00:01), is answered with a solicited, override NA carrying the router's MAC;
 * one for another target, one with hop limit 64, DAD from ::, and a group the router is not in
 * are dropped by reason. */
static void test_nd_answer(void **state)
{
	const uint8_t sn_mac[6] = {0x33, 0x33, 0xff, 0x00, 0x00, 0x01};
	const uint8_t other_sn_mac[6] = {0x33, 0x33, 0xff, 0x00, 0x00, 0x02};
	struct t_pkt6_spec sp = {0};
	uint8_t ns[32], a[16];
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	uint8_t *ic;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	sp.proto = IPPROTO_ICMPV6;
	sp.payload = ns;
	sp.plen = ns_msg(ns, T_ROUTER_IP6, t_client_mac);
	sp.cksum_off = 2;
	sp.hop = 255;
	for (int group = 0; group < 2; group++) {
		sp.dst_mac = group ? sn_mac : NULL;
		sp.dip = group ? "ff02::1:ff00:1" : NULL;
		t_inject(0, t_pkt6(&sp));
		t_poll(0);
		m = t_sent(0);
		assert_non_null(m);
		assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), t_client_mac, 6);
		assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *) + 6, t_router_mac, 6);
		ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
					      sizeof(struct rte_ether_hdr));
		assert_int_equal(ip6->hop_limits, 255);
		assert_int_equal(rte_be_to_cpu_16(ip6->payload_len), 32);
		t_ip6(T_ROUTER_IP6, a);
		assert_memory_equal(&ip6->src_addr, a, 16);
		t_ip6(T_CLIENT_IP6, a);
		assert_memory_equal(&ip6->dst_addr, a, 16);
		ic = (uint8_t *)(ip6 + 1);
		assert_int_equal(ic[0], 136);
		assert_int_equal(ic[4], 0x60); /* solicited, override; not a router */
		t_ip6(T_ROUTER_IP6, a);
		assert_memory_equal(ic + 8, a, 16);
		assert_int_equal(ic[24], 2);
		assert_int_equal(ic[25], 1);
		assert_memory_equal(ic + 26, t_router_mac, 6);
		assert_int_equal(t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
					  IPPROTO_ICMPV6, ic, 32),
				 0);
		rte_pktmbuf_free(m);
	}
	assert_int_equal(t_stats().ctr[DP_CTR_ND_REPLIED], 2);
	assert_int_equal(t_stats().ctr[DP_CTR_ANSWERED], 2);
	/* Hop limit 64: not from the link. */
	sp.dst_mac = NULL;
	sp.dip = NULL;
	sp.hop = 64;
	t_inject(0, t_pkt6(&sp));
	sp.hop = 255;
	/* Another target. */
	sp.plen = ns_msg(ns, "2001:2::7", t_client_mac);
	t_inject(0, t_pkt6(&sp));
	/* DAD (from ::) for our address. */
	sp.plen = ns_msg(ns, T_ROUTER_IP6, t_client_mac);
	ns[24] = 0; /* no source link-layer option from :: (an option of type 0 is still valid) */
	sp.sip = "::";
	t_inject(0, t_pkt6(&sp));
	sp.sip = NULL;
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_BAD_ND), 3);
	/* Another solicited-node group (MAC and address): not for us. */
	sp.plen = ns_msg(ns, "2001:2::2", t_client_mac);
	sp.dst_mac = other_sn_mac;
	sp.dip = "ff02::1:ff00:2";
	t_inject(0, t_pkt6(&sp));
	sp.dst_mac = t_router_mac;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NOT_FOR_US), 1);
	assert_int_equal(t_drop(DP_DROP_NOT_OUR_IP), 1);
	/* An option of length 0: malformed. */
	sp.dst_mac = NULL;
	sp.dip = NULL;
	sp.plen = ns_msg(ns, T_ROUTER_IP6, t_client_mac);
	ns[25] = 0;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_BAD_ND), 4);
	t_dp_stop();
}

/* Duplicate address detection for address6 (an NS from ::, to the solicited-node group, no
 * source link-layer address): the router defends its address with an NA to all nodes
 * (ff02::1, 33:33:00:00:00:01), solicited flag clear, override set, its MAC as the target
 * link-layer address (RFC 4861 7.2.4). DAD carrying a source link-layer address, DAD for
 * another target, and DAD unicast (test_nd_answer) are bad_nd. */
static void test_nd_dad_defended(void **state)
{
	const uint8_t sn_mac[6] = {0x33, 0x33, 0xff, 0x00, 0x00, 0x01};
	const uint8_t all_mac[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
	struct t_pkt6_spec sp = {0};
	uint8_t ns[32], a[16];
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	struct dp_stats st;
	uint8_t *ic;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	sp.proto = IPPROTO_ICMPV6;
	sp.payload = ns;
	sp.plen = ns_msg(ns, T_ROUTER_IP6, t_client_mac) - 8; /* no option at all */
	sp.cksum_off = 2;
	sp.hop = 255;
	sp.sip = "::";
	sp.dst_mac = sn_mac;
	sp.dip = "ff02::1:ff00:1";
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), all_mac, 6);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *) + 6, t_router_mac, 6);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	assert_int_equal(ip6->proto, IPPROTO_ICMPV6);
	assert_int_equal(ip6->hop_limits, 255);
	assert_int_equal(rte_be_to_cpu_16(ip6->payload_len), 32);
	t_ip6(T_ROUTER_IP6, a);
	assert_memory_equal(&ip6->src_addr, a, 16);
	t_ip6("ff02::1", a);
	assert_memory_equal(&ip6->dst_addr, a, 16);
	ic = (uint8_t *)(ip6 + 1);
	assert_int_equal(ic[0], 136);
	assert_int_equal(ic[1], 0);
	assert_int_equal(ic[4], 0x20); /* override only: not solicited, not a router */
	t_ip6(T_ROUTER_IP6, a);
	assert_memory_equal(ic + 8, a, 16);
	assert_int_equal(ic[24], 2);
	assert_int_equal(ic[25], 1);
	assert_memory_equal(ic + 26, t_router_mac, 6);
	assert_int_equal(t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
				  IPPROTO_ICMPV6, ic, 32),
			 0);
	assert_int_equal(rte_pktmbuf_data_len(m), sizeof(struct rte_ether_hdr) + 40 + 32);
	rte_pktmbuf_free(m);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_ND_REPLIED], 1);
	assert_int_equal(st.ctr[DP_CTR_ANSWERED], 1);
	/* From :: with a source link-layer address: invalid (RFC 4861 7.1.1). */
	sp.plen = ns_msg(ns, T_ROUTER_IP6, t_client_mac);
	t_inject(0, t_pkt6(&sp));
	/* DAD for another address (in our solicited-node group): not ours to defend. */
	sp.plen = ns_msg(ns, "2001:2::5:0:1", t_client_mac) - 8;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_BAD_ND), 2);
	assert_int_equal(t_stats().ctr[DP_CTR_ND_REPLIED], 1);
	t_dp_stop();
}

/* An IPv6-only router: no IPv4 address (router_ip 0), no IPv4 prefix. */
static void v6_only(struct dp_config *c)
{
	c->router_ip = 0;
	c->n_allowed = 0;
}

/* An ARP request for @p tip from a client. */
static struct rte_mbuf *arp_request(const char *tip)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	struct rte_arp_hdr *a;
	uint8_t p[64] = {0};
	char *d;

	assert_non_null(m);
	memcpy(p, bcast, 6);
	memcpy(p + 6, t_client_mac, 6);
	p[12] = 0x08;
	p[13] = 0x06;
	a = (struct rte_arp_hdr *)(p + 14);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	memcpy(&a->arp_data.arp_sha, t_client_mac, 6);
	a->arp_data.arp_sip = t_ip(T_CLIENT_IP);
	a->arp_data.arp_tip = t_ip(tip);
	d = rte_pktmbuf_append(m, sizeof(p));
	assert_non_null(d);
	memcpy(d, p, sizeof(p));
	return m;
}

/*
 * IPv6-only: IPv6 clients are served by IPv6 nodes; every IPv4 frame is dropped as not_ipv4
 * (a family the router has no address of, as IPv6 without address6), whatever its
 * destination (the router's old IPv4, 0.0.0.0); ARP is never answered (not for 0.0.0.0
 * either): bad_arp; a placement with an IPv4 member is refused; so is a dp given IPv4 client
 * prefixes. A frame whose EtherType is 0 (what the IPv4 dispatch compares with there) is
 * still refused: the IPv4 ACL is empty. The identity holds throughout (t_stats).
 */
static void test_v6_only_router(void **state)
{
	struct t_pkt_spec sp4 = {0};
	struct dp_config c;
	struct rte_mbuf *m;
	struct pl_member mb = {.name = "v4", .addr = "198.18.1.1", .port = 11211, .weight = 1};
	struct pl_config pc = {.algo = PL_ALGO_RING};
	struct dp_node_mac mac = {.mac = {0x02, 0, 0, 0, 0x01, 0x01}, .has_mac = true};
	struct pl_placement *pl;
	struct dp_stats st;
	char text[64], ip[48];
	struct sent s;
	uint8_t nmac[6];

	(void)state;
	t_dp_start6(1, ALL6, v6_only);
	find_keys();
	snprintf(text, sizeof(text), "get %s\r\n", key_of[1]);
	t_inject(0, t_request6(5001, 0x77, text, strlen(text)));
	t_poll(0);
	s = expect_to_node6(1, 8 + strlen(text));
	node_mac(1, nmac);
	node_ip6_text(1, ip, sizeof(ip));
	t_inject(0, t_reply6(ip, nmac, 11211, s.sport, s.reqid, 0, 1, hit, strlen(hit)));
	t_poll(0);
	expect_to_client6(5001, 0x77, hit);
	/* IPv4: to the address an IPv4 router would have, to 0.0.0.0, an ICMP echo. */
	t_inject(0, t_request(5002, 1, text, strlen(text)));
	sp4.sip = T_CLIENT_IP;
	sp4.dip = "0.0.0.0";
	sp4.sport = 5003;
	sp4.dport = T_LISTEN;
	sp4.payload = "\0\1\0\0\0\1\0\0get a\r\n";
	sp4.plen = 15;
	t_inject(0, t_pkt(&sp4));
	sp4.proto = IPPROTO_ICMP;
	t_inject(0, t_pkt(&sp4));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NOT_IPV4), 3);
	/* ARP for 0.0.0.0 and for a would-be IPv4 address: never answered. */
	t_inject(0, arp_request("0.0.0.0"));
	t_inject(0, arp_request(T_ROUTER_IP));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_BAD_ARP), 2);
	/* EtherType 0 with an IPv4 datagram to 0.0.0.0 inside: no IPv4 path takes it. */
	sp4.proto = 0;
	m = t_pkt(&sp4);
	rte_pktmbuf_mtod(m, uint8_t *)[12] = 0;
	rte_pktmbuf_mtod(m, uint8_t *)[13] = 0;
	t_inject(0, m);
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NOT_IPV4), 4);
	assert_int_equal(t_drop(DP_DROP_CLIENT_DENIED), 0);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 1);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 1);
	assert_int_equal(st.ctr[DP_CTR_ARP_REPLIED], 0);
	assert_int_equal(st.ctr[DP_CTR_DROPPED], 6);
	/* An IPv4 member cannot be published: the router has nothing to reach it from. */
	pl = pl_build(&pc, &mb, 1);
	assert_non_null(pl);
	assert_int_equal(dp_publish_placement(rig.dp, pl, &mac, 3), -EINVAL);
	pl_free(pl);
	t_dp_stop();
	/* IPv4 client prefixes on a router without IPv4: refused at creation. */
	dp_config_defaults(&c);
	c.port_id = rig.port;
	c.n_workers = 1;
	c.listen_ports[0] = T_LISTEN;
	c.n_listen = 1;
	c.reply_port_base = T_REPLY_BASE;
	c.reply_port_count = T_REPLY_COUNT;
	c.allowed[0].addr = t_ip("198.18.0.0");
	c.allowed[0].mask = t_ip("255.255.255.0");
	c.n_allowed = 1;
	c.slots = 256;
	c.pool = rig.pool;
	t_ip6(T_ROUTER_IP6, c.router_ip6);
	assert_null(dp_create(&c));
}

/* n2 at 2001:2::1:2 has no static MAC: the control lcore sends an NS for it (to its
 * solicited-node group, with the router's link-layer address, on the same timers as ARP); a
 * solicited NA from it teaches the MAC (nd_learned, answered), after which requests reach it;
 * an unsolicited NA (the window closed) moves nothing. */
static void no_mac_n2(struct dp_config *c)
{
	c->arp_retry_ms = 1000;
}

static void test_ns_and_na_learning(void **state)
{
	struct pl_member mb[2];
	struct pl_config pc = {0};
	struct dp_node_mac macs[2];
	const uint8_t n2_mac[6] = {0x02, 0, 0, 0, 0x01, 0x22};
	const uint8_t forged_mac[6] = {0x02, 0, 0, 0, 0x0f, 0x0f};
	struct t_pkt6_spec sp = {0};
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	struct dp_stats st;
	uint8_t na[32], a[16], *ic;
	char text[96];

	(void)state;
	t_dp_start6(1, NONE6, no_mac_n2);
	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	snprintf(mb[0].name, sizeof(mb[0].name), "n1");
	snprintf(mb[0].addr, sizeof(mb[0].addr), "2001:2::1:1");
	snprintf(mb[1].name, sizeof(mb[1].name), "n2");
	snprintf(mb[1].addr, sizeof(mb[1].addr), "2001:2::1:2");
	mb[0].port = mb[1].port = 11211;
	mb[0].weight = mb[1].weight = 1;
	memcpy(macs[0].mac, (const uint8_t[]){0x02, 0, 0, 0, 0x01, 0x01}, 6);
	macs[0].has_mac = true;
	pc.algo = PL_ALGO_RING;
	pl_free(rig.pl);
	rig.pl = pl_build(&pc, mb, 2);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 3), 0);
	dp_control_poll(rig.dp);
	t_poll(0); /* worker 0 sends what the control lcore queued */
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *),
			    ((const uint8_t[]){0x33, 0x33, 0xff, 0x01, 0x00, 0x02}), 6);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	assert_int_equal(ip6->hop_limits, 255);
	t_ip6("ff02::1:ff01:2", a);
	assert_memory_equal(&ip6->dst_addr, a, 16);
	ic = (uint8_t *)(ip6 + 1);
	assert_int_equal(ic[0], 135);
	t_ip6("2001:2::1:2", a);
	assert_memory_equal(ic + 8, a, 16);
	assert_int_equal(ic[24], 1);
	assert_memory_equal(ic + 26, t_router_mac, 6);
	assert_int_equal(t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
				  IPPROTO_ICMPV6, ic, 32),
			 0);
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	/* The solicited NA. */
	memset(na, 0, sizeof(na));
	na[0] = 136;
	na[4] = 0x60;
	t_ip6("2001:2::1:2", na + 8);
	na[24] = 2;
	na[25] = 1;
	memcpy(na + 26, n2_mac, 6);
	sp.src_mac = n2_mac;
	sp.sip = "2001:2::1:2";
	sp.proto = IPPROTO_ICMPV6;
	sp.payload = na;
	sp.plen = sizeof(na);
	sp.cksum_off = 2;
	sp.hop = 255;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_ND_LEARNED], 1);
	/* A second (forged) NA: the window is closed, nothing moves. */
	memcpy(na + 26, forged_mac, 6);
	sp.src_mac = forged_mac;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_ND_UNSOLICITED), 1);
	/* A request for one of n2's keys now reaches n2's learned MAC. */
	for (int k = 0; k < 10000; k++) {
		char key[16];

		snprintf(key, sizeof(key), "q%d", k);
		if (t_owner(key) != 1)
			continue;
		snprintf(text, sizeof(text), "get %s\r\n", key);
		break;
	}
	t_inject(0, t_request6(8000, 0x80, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), n2_mac, 6);
	rte_pktmbuf_free(m);
	t_stats();
	/* AF_XDP mode's feed (the kernel's IPv6 neighbours): a moved MAC is reported with the
	 * node's IPv6 address; an IPv4 update for the fold's value moves nothing. */
	{
		struct dp_mac_change ch[2];
		uint32_t fold;

		dp_control_poll(rig.dp); /* the MAC the NA taught, settled */
		t_ip6("2001:2::1:2", a);
		memcpy(&fold, a + 12, 4);
		assert_int_equal(dp_neigh_update(rig.dp, fold, forged_mac), 0);
		assert_int_equal(dp_neigh_update6(rig.dp, a, forged_mac), 1);
		assert_int_equal(dp_mac_changes(rig.dp, ch, 2), 1);
		assert_true(ch[0].v6);
		assert_memory_equal(ch[0].ip6, a, 16);
		assert_memory_equal(ch[0].new_mac, forged_mac, 6);
		assert_memory_equal(ch[0].old_mac, n2_mac, 6);
	}
	t_dp_stop();
}

/* IPv6 nodes behind an IPv6 gateway (`2001:2:2::/64 via 2001:2::fe`): the router solicits
 * the gateway, not the nodes; the gateway's NA teaches every node behind it; requests leave
 * with the gateway's MAC and the node's address, and the reply (from the gateway's MAC) is
 * accepted. IPv4 routes in the same table leave IPv4 nodes alone. */
static void test_v6_nodes_behind_gateway(void **state)
{
	const uint8_t gw_mac[6] = {0x02, 0, 0, 0, 0x0f, 0xfe};
	struct pl_member mb[2];
	struct pl_config pc = {0};
	struct dp_node_mac macs[2];
	struct rt_table t;
	struct rt_route r;
	struct t_pkt6_spec sp = {0};
	struct rte_mbuf *m;
	struct rte_ipv6_hdr *ip6;
	struct dp_stats st;
	uint8_t na[32], a[16], *ic;
	char err[128], text[96] = "";
	struct sent sn;
	int node = -1;

	(void)state;
	t_dp_start6(1, NONE6, no_mac_n2);
	rt_init(&t);
	assert_int_equal(rt_parse("2001:2:2::/64 via 2001:2::fe", 28, &r, err, sizeof(err)), 0);
	assert_int_equal(rt_add(&t, &r, err, sizeof(err)), 1);
	(void)dp_set_routes(rig.dp, &t);
	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	for (int i = 0; i < 2; i++) {
		snprintf(mb[i].name, sizeof(mb[i].name), "n%d", i + 1);
		snprintf(mb[i].addr, sizeof(mb[i].addr), "2001:2:2::%d", i + 1);
		mb[i].port = 11211;
		mb[i].weight = 1;
	}
	pc.algo = PL_ALGO_RING;
	pl_free(rig.pl);
	rig.pl = pl_build(&pc, mb, 2);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 3), 0);
	dp_control_poll(rig.dp);
	t_poll(0);
	/* One NS, for the gateway (both nodes share it). */
	m = t_sent(0);
	assert_non_null(m);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
	ic = (uint8_t *)(ip6 + 1);
	assert_int_equal(ic[0], 135);
	t_ip6("2001:2::fe", a);
	assert_memory_equal(ic + 8, a, 16);
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	/* The gateway's NA. */
	memset(na, 0, sizeof(na));
	na[0] = 136;
	na[4] = 0x60;
	memcpy(na + 8, a, 16);
	na[24] = 2;
	na[25] = 1;
	memcpy(na + 26, gw_mac, 6);
	sp.src_mac = gw_mac;
	sp.sip = "2001:2::fe";
	sp.proto = IPPROTO_ICMPV6;
	sp.payload = na;
	sp.plen = sizeof(na);
	sp.cksum_off = 2;
	sp.hop = 255;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_ND_LEARNED], 1);
	/* A request for a key of n2: to the gateway's MAC, n2's address. */
	for (int k = 0; k < 10000 && node < 0; k++) {
		char key[16];

		snprintf(key, sizeof(key), "g%d", k);
		if (t_owner(key) == 1) {
			snprintf(text, sizeof(text), "get %s\r\n", key);
			node = 1;
		}
	}
	t_inject(0, t_request6(8100, 0x81, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	{
		struct t_view6 v;

		t_view_udp6(m, &v);
		assert_memory_equal(&v.eth->dst_addr, gw_mac, 6);
		t_ip6("2001:2:2::2", a);
		assert_memory_equal(&v.ip6->dst_addr, a, 16);
		sn.sport = rte_be_to_cpu_16(v.udp->src_port);
		sn.reqid = v.reqid;
	}
	rte_pktmbuf_free(m);
	t_inject(0, t_reply6("2001:2:2::2", gw_mac, 11211, sn.sport, sn.reqid, 0, 1, hit,
			     strlen(hit)));
	t_poll(0);
	expect_to_client6(8100, 0x81, hit);
	t_dp_stop();
}

/* A multi-get from an IPv6 client over an IPv6 node (n1) and an IPv4 node (n2): split into a
 * sub-request per node in its family, merged into one reply to the IPv6 client. */
static void test_v6_multiget_split(void **state)
{
	char text[96], ip[48], b1[64], b2[64];
	struct rte_mbuf *m;
	struct t_view6 v6;
	struct t_view v4;
	uint8_t mac[6];
	struct dp_stats st;

	(void)state;
	t_dp_start6(1, 0x1u, NULL); /* n1 IPv6, the rest IPv4 */
	find_keys();
	snprintf(text, sizeof(text), "get %s %s\r\n", key_of[0], key_of[1]);
	t_inject(0, t_request6(9100, 0x91, text, strlen(text)));
	t_poll(0);
	/* Two sub-requests, in either order: one IPv6 to n1, one IPv4 to n2. */
	for (int k = 0; k < 2; k++) {
		m = t_sent(0);
		assert_non_null(m);
		if (rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type ==
		    rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
			uint16_t sport, reqid;
			uint8_t a[16];

			t_view_udp6(m, &v6);
			node_ip6_text(0, ip, sizeof(ip));
			t_ip6(ip, a);
			assert_memory_equal(&v6.ip6->dst_addr, a, 16);
			sport = rte_be_to_cpu_16(v6.udp->src_port);
			reqid = v6.reqid;
			rte_pktmbuf_free(m);
			snprintf(b1, sizeof(b1), "VALUE %s 0 1\r\nA\r\nEND\r\n", key_of[0]);
			node_mac(0, mac);
			t_inject(0, t_reply6(ip, mac, 11211, sport, reqid, 0, 1, b1, strlen(b1)));
		} else {
			uint16_t sport, reqid;

			t_view_udp(m, &v4, false);
			assert_int_equal(v4.ip->dst_addr, t_ip("198.18.1.2"));
			sport = rte_be_to_cpu_16(v4.udp->src_port);
			reqid = v4.reqid;
			rte_pktmbuf_free(m);
			snprintf(b2, sizeof(b2), "VALUE %s 0 1\r\nB\r\nEND\r\n", key_of[1]);
			t_inject(0,
				 t_reply("198.18.1.2", 11211, sport, reqid, 0, 1, b2, strlen(b2)));
		}
	}
	for (int i = 0; i < 4; i++)
		t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp6(m, &v6);
	assert_int_equal(v6.reqid, 0x91);
	assert_int_equal(rte_be_to_cpu_16(v6.udp->dst_port), 9100);
	snprintf(text, sizeof(text), "VALUE %s 0 1\r\nA\r\nVALUE %s 0 1\r\nB\r\nEND\r\n", key_of[0],
		 key_of[1]);
	assert_int_equal(v6.plen, 8 + strlen(text));
	assert_memory_equal(v6.payload + 8, text, strlen(text));
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_MGET_SPLIT], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_MERGED], 1);
	assert_int_equal(st.ctr[DP_CTR_MGET_DATAGRAMS], 1);
	assert_int_equal(st.slots_live, 0);
	t_dp_stop();
}

/* Warm-up for an IPv6 client across families: n5 (IPv6) joins four IPv4 nodes; a moved key's
 * get goes to n5 over IPv6, its miss is absorbed and the same get asked of the previous
 * (IPv4) owner, whose hit reaches the IPv6 client while n5 gets the `add`. */
static void warm_on(struct dp_config *c)
{
	c->warm_window_s = 60;
	c->warm_ttl_s = 300;
}

static void test_v6_warmup_mixed(void **state)
{
	struct pl_member mb[5];
	struct pl_config pc = {0};
	struct dp_node_mac macs[5];
	struct pl_placement *old;
	char key[32], req[96], val[128], add[128], ip[24];
	struct rte_mbuf *m;
	struct t_view6 v6;
	struct t_view v4;
	uint16_t sport, reqid;
	uint8_t mac[6], a[16];
	struct dp_stats st;
	int32_t prev = -1;

	(void)state;
	t_dp_start6(1, NONE6, warm_on);
	old = rig.pl;
	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	for (int i = 0; i < 5; i++) {
		snprintf(mb[i].name, sizeof(mb[i].name), "n%d", i + 1);
		if (i == 4)
			snprintf(mb[i].addr, sizeof(mb[i].addr), "2001:2::1:5");
		else
			snprintf(mb[i].addr, sizeof(mb[i].addr), "198.18.1.%d", i + 1);
		mb[i].port = 11211;
		mb[i].weight = 1;
		node_mac(i, macs[i].mac);
		macs[i].has_mac = true;
	}
	pc.algo = PL_ALGO_RING;
	rig.pl = pl_build(&pc, mb, 5);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 3), 0);
	for (int i = 0;; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		if (t_owner(key) == 4) {
			prev = pl_lookup(old, key, strlen(key));
			break;
		}
	}
	pl_free(old);
	snprintf(req, sizeof(req), "get %s\r\n", key);
	snprintf(val, sizeof(val), "VALUE %s 5 3\r\nabc\r\nEND\r\n", key);
	snprintf(add, sizeof(add), "add %s 5 300 3 noreply\r\nabc\r\n", key);
	t_inject(0, t_request6(5000, 0x4242, req, strlen(req)));
	t_poll(0);
	/* To n5 over IPv6; it misses. */
	m = t_sent(0);
	t_view_udp6(m, &v6);
	t_ip6("2001:2::1:5", a);
	assert_memory_equal(&v6.ip6->dst_addr, a, 16);
	sport = rte_be_to_cpu_16(v6.udp->src_port);
	reqid = v6.reqid;
	rte_pktmbuf_free(m);
	node_mac(4, mac);
	t_inject(0, t_reply6("2001:2::1:5", mac, 11211, sport, reqid, 0, 1, "END\r\n", 5));
	t_poll(0);
	/* The same get to the previous owner over IPv4; it hits. */
	m = t_sent(0);
	t_view_udp(m, &v4, false);
	snprintf(ip, sizeof(ip), "198.18.1.%d", prev + 1);
	assert_int_equal(v4.ip->dst_addr, t_ip(ip));
	assert_memory_equal(v4.payload + 8, req, strlen(req));
	sport = rte_be_to_cpu_16(v4.udp->src_port);
	reqid = v4.reqid;
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
	t_inject(0, t_reply(ip, 11211, sport, reqid, 0, 1, val, strlen(val)));
	t_poll(0);
	/* The warm copy to n5 over IPv6, then the hit to the IPv6 client. */
	m = t_sent(0);
	t_view_udp6(m, &v6);
	t_ip6("2001:2::1:5", a);
	assert_memory_equal(&v6.ip6->dst_addr, a, 16);
	assert_memory_equal(v6.payload + 8, add, strlen(add));
	rte_pktmbuf_free(m);
	expect_to_client6(5000, 0x4242, val);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_WARM_ABSORBED], 1);
	assert_int_equal(st.ctr[DP_CTR_WARM_HITS], 1);
	assert_int_equal(st.ctr[DP_CTR_WARM_FILLS], 1);
	assert_int_equal(st.slots_live, 0);
	t_dp_stop();
}

/* Hot-key spreading for IPv6 clients: a pinned key's gets are spread over its replicas (IPv4
 * and IPv6 nodes), and each reply returns to the IPv6 client. */
static void hot_on(struct dp_config *c)
{
	c->hot_sample_every = 1;
	c->hot_sketch_keys = 64;
	c->hot_interval_ms = 10;
	c->hot_threshold_pct = 0;
	c->hot_replicas = 3;
	c->hot_fill_ttl_s = 1;
}

static void test_v6_hot_spread(void **state)
{
	uint32_t per[4] = {0};
	int nodes = 0;
	struct dp_stats st;

	(void)state;
	t_dp_start6(1, 0x5u, hot_on); /* n1, n3 IPv6; n2, n4 IPv4 */
	assert_int_equal(dp_hot_pin(rig.dp, (const uint8_t *)"hk", 2, true), 0);
	for (int i = 0; i < 60; i++) {
		struct rte_mbuf *m;
		uint16_t sport, reqid;
		uint8_t mac[6];
		char ip[48];
		int d = -1;

		t_inject(0, t_request6(7000, (uint16_t)(0x100 + i), "get hk\r\n", 8));
		t_poll(0);
		m = t_sent(0);
		assert_non_null(m);
		assert_null(t_sent(0));
		if (rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type ==
		    rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
			struct t_view6 v;

			t_view_udp6(m, &v);
			d = ((uint8_t *)&v.ip6->dst_addr)[15] - 1;
			sport = rte_be_to_cpu_16(v.udp->src_port);
			reqid = v.reqid;
			assert_memory_equal(v.payload + 8, "get hk\r\n", 8);
			node_ip6_text(d, ip, sizeof(ip));
			node_mac(d, mac);
			rte_pktmbuf_free(m);
			t_inject(0, t_reply6(ip, mac, 11211, sport, reqid, 0, 1,
					     "VALUE hk 0 1\r\nv\r\nEND\r\n", 22));
		} else {
			struct t_view v;

			t_view_udp(m, &v, false);
			d = (int)(rte_be_to_cpu_32(v.ip->dst_addr) & 0xff) - 1;
			sport = rte_be_to_cpu_16(v.udp->src_port);
			reqid = v.reqid;
			snprintf(ip, sizeof(ip), "198.18.1.%d", d + 1);
			rte_pktmbuf_free(m);
			t_inject(0, t_reply(ip, 11211, sport, reqid, 0, 1,
					    "VALUE hk 0 1\r\nv\r\nEND\r\n", 22));
		}
		assert_true(d >= 0 && d < 4);
		per[d]++;
		t_poll(0);
		expect_to_client6(7000, (uint16_t)(0x100 + i), "VALUE hk 0 1\r\nv\r\nEND\r\n");
	}
	for (int d = 0; d < 4; d++)
		nodes += per[d] > 0;
	assert_true(nodes >= 2); /* spread, not all to the owner */
	st = t_stats();
	assert_true(st.ctr[DP_CTR_HOT_SPREAD] > 0);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 60);
	assert_int_equal(st.slots_live, 0);
	t_dp_stop();
}

/* Every IPv6 header edge case, each dropped by its reason and nothing sent. */
/* A UDP length (and payload_len) shorter than the UDP header, its checksum right over those
 * bytes, in a frame padded to the size of a request: never a request (it once passed the
 * look-ahead's IPv6 pattern with a payload length of 2^32 - 4), dropped as ipv6_serve()
 * judges it, nothing sent. */
static void test_v6_udp_shorter_than_header(void **state)
{
	static const struct {
		uint16_t ulen;
		enum dp_drop why;
	} cases[] = {{0, DP_DROP_BAD_IP}, {4, DP_DROP_TRUNC_UDP}, {6, DP_DROP_TRUNC_UDP}};
	const char text[] = "get some-key-of-a-request\r\n";

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rte_mbuf *m;
		struct rte_ipv6_hdr *ip6;
		struct rte_udp_hdr *udp;
		uint16_t c;

		t_dp_start6(1, ALL6, NULL);
		m = t_request6(9000, 7, text, strlen(text));
		ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
		udp = (struct rte_udp_hdr *)(ip6 + 1);
		ip6->payload_len = rte_cpu_to_be_16(cases[i].ulen);
		udp->dgram_len = rte_cpu_to_be_16(cases[i].ulen);
		udp->dgram_cksum = rte_cpu_to_be_16(0x1234); /* not 0, outside the datagram */
		/* The source port that makes the sum over ulen bytes verify. */
		udp->src_port = 0;
		c = t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr, IPPROTO_UDP, udp,
			     cases[i].ulen);
		if (cases[i].ulen >= 2)
			udp->src_port = c;
		t_inject(0, m);
		t_poll(0);
		assert_int_equal(t_sent_count(0), 0);
		if (t_drop(cases[i].why) != 1)
			fail_msg("UDP length %u: drop %d counted %" PRIu64 " times", cases[i].ulen,
				 (int)cases[i].why, t_drop(cases[i].why));
		t_dp_stop();
	}
}

static void test_v6_header_edges(void **state)
{
	uint8_t buf[64];
	struct t_pkt6_spec sp = {0}, base = {0};
	/* A hop-by-hop header (8 bytes: next UDP, PadN) and a destination options one. */
	uint8_t hbh_dst[16] = {IPPROTO_DSTOPTS, 0, 1, 4, 0, 0, 0, 0,
			       IPPROTO_UDP,	0, 1, 4, 0, 0, 0, 0};
	/* Of a TCP datagram: UDP fragments are reassembled (test_frag). */
	uint8_t frag[8] = {IPPROTO_TCP, 0, 0, 1, 0, 0, 0, 9};
	uint8_t route_left[8] = {IPPROTO_UDP, 0, 4, 1, 0, 0, 0, 0}; /* segments left 1 */
	uint8_t route_done[8] = {IPPROTO_UDP, 0, 4, 0, 0, 0, 0, 0}; /* segments left 0 */
	uint8_t hbh_long[8] = {IPPROTO_UDP, 3, 1, 4, 0, 0, 0, 0};   /* claims 32 bytes */
	struct dp_stats st;
	char text[96];
	struct sent s;
	struct rte_mbuf *m;

	(void)state;
	t_dp_start6(1, ALL6, NULL);
	find_keys();
	snprintf(text, sizeof(text), "get %s\r\n", key_of[0]);
	memcpy(buf, "\x00\x01\x00\x00\x00\x01\x00\x00", 8);
	memcpy(buf + 8, text, strlen(text));
	base.sport = 9000;
	base.dport = T_LISTEN;
	base.payload = buf;
	base.plen = 8 + strlen(text);

	/* Extension headers the router walks: served, and forwarded without them. */
	sp = base;
	sp.ext = hbh_dst;
	sp.ext_len = sizeof(hbh_dst);
	sp.ext_first = IPPROTO_HOPOPTS;
	t_inject(0, t_pkt6(&sp));
	sp.ext = route_done;
	sp.ext_len = sizeof(route_done);
	sp.ext_first = IPPROTO_ROUTING;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	s = expect_to_node6(0, base.plen);
	s = expect_to_node6(0, base.plen);
	(void)s;

	/* A fragment header. */
	sp = base;
	sp.ext = frag;
	sp.ext_len = sizeof(frag);
	sp.ext_first = IPPROTO_FRAGMENT;
	t_inject(0, t_pkt6(&sp));
	/* A routing header with segments left. */
	sp.ext = route_left;
	sp.ext_first = IPPROTO_ROUTING;
	t_inject(0, t_pkt6(&sp));
	/* An extension header longer than the payload: 32 bytes claimed, 16 in payload_len;
	 * and one whose first 8 bytes are cut (payload_len 4). */
	sp.ext = hbh_long;
	sp.ext_first = IPPROTO_HOPOPTS;
	sp.plen_delta = -(int)(8 + base.plen) + 8;
	t_inject(0, t_pkt6(&sp));
	sp.plen_delta = -(int)(8 + base.plen) - 4;
	t_inject(0, t_pkt6(&sp));
	sp.plen_delta = 0;
	/* payload_len beyond the frame; payload_len 0 (jumbogram). */
	sp = base;
	sp.plen_delta = 1;
	t_inject(0, t_pkt6(&sp));
	sp.plen_delta = -(int)(8 + base.plen);
	t_inject(0, t_pkt6(&sp));
	/* payload_len shorter than the UDP datagram: the UDP length lies. */
	sp.plen_delta = -1;
	t_inject(0, t_pkt6(&sp));
	/* UDP checksum 0 and wrong. */
	sp = base;
	sp.zero_csum = true;
	t_inject(0, t_pkt6(&sp));
	sp.zero_csum = false;
	sp.bad_csum = true;
	t_inject(0, t_pkt6(&sp));
	/* A multicast destination (all nodes) and another unicast address. */
	sp = base;
	sp.dip = "ff02::1";
	t_inject(0, t_pkt6(&sp));
	sp.dip = "2001:2::9";
	t_inject(0, t_pkt6(&sp));
	/* Truncated: 30 bytes of an IPv6 header. */
	m = t_request6(9000, 1, "get a\r\n", 7);
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_data_len(m) - 14 - 30));
	t_inject(0, m);
	/* Version 4 in an IPv6 frame. */
	m = t_request6(9000, 1, "get a\r\n", 7);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14)[0] = 0x40;
	t_inject(0, m);
	/* Hop limit 1 is fine for UDP to the router (it is the destination). */
	sp = base;
	sp.hop = 1;
	t_inject(0, t_pkt6(&sp));
	t_poll(0);
	s = expect_to_node6(0, base.plen);
	assert_null(t_sent(0));
	st = t_stats();
	assert_int_equal(st.drop[DP_DROP_IP_FRAGMENT], 1);
	assert_int_equal(st.drop[DP_DROP_BAD_IP], 4);	/* routing left, payload_len x2, version */
	assert_int_equal(st.drop[DP_DROP_TRUNC_IP], 3); /* ext headers x2, 30-byte header */
	assert_int_equal(st.drop[DP_DROP_BAD_UDP_LEN], 1);
	assert_int_equal(st.drop[DP_DROP_UDP_ZERO_CKSUM], 1);
	assert_int_equal(st.drop[DP_DROP_BAD_UDP_CKSUM], 1);
	assert_int_equal(st.drop[DP_DROP_NOT_OUR_IP], 2);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 3);
	t_dp_stop();
}

/* ---- IPv6 nodes whose 32-bit fold collides (issue 27, defect 7) ------------------------ */

/* dp_fold6(2001:2::e8:1:99) == dp_fold6(2001:2::1:1): n5 there shares n1's source key. */
#define T_FOLD_TWIN "2001:2::e8:1:99"

static const char *fold_addr[6] = {"2001:2::1:1", "2001:2::1:2", "2001:2::1:3",
				   "2001:2::1:4", T_FOLD_TWIN,	 "2001:2::1:6"};

/* Publish nodes n<i+1> for the bits of @p mask at fold_addr[i] (MAC 02:00:00:00:01:i+1) as
 * epoch @p epoch; the rig's placement becomes it. */
static void publish6(uint32_t mask, uint64_t epoch)
{
	struct pl_member mb[6];
	struct dp_node_mac macs[6];
	struct pl_config pc = {0};
	uint32_t n = 0;

	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < 6; i++) {
		if (!(mask & (1u << i)))
			continue;
		snprintf(mb[n].name, sizeof(mb[n].name), "n%u", i + 1);
		snprintf(mb[n].addr, sizeof(mb[n].addr), "%s", fold_addr[i]);
		mb[n].port = 11211;
		mb[n].weight = 1;
		node_mac((int)i, macs[n].mac);
		macs[n].has_mac = true;
		n++;
	}
	pc.algo = PL_ALGO_RING;
	pl_free(rig.pl);
	rig.pl = pl_build(&pc, mb, n);
	assert_non_null(rig.pl);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, epoch), 0);
}

/* The member index of node @p name in the rig's placement. */
static int32_t member_of(const char *name)
{
	for (uint32_t i = 0; i < pl_member_count(rig.pl); i++)
		if (strcmp(pl_member_at(rig.pl, i)->name, name) == 0)
			return (int32_t)i;
	fail_msg("no member %s", name);
	return -1;
}

/* A key member @p member owns. */
static void key_owned(int32_t member, char *out, size_t len)
{
	for (int k = 0; k < 100000; k++) {
		snprintf(out, len, "f%d", k);
		if (t_owner(out) == member)
			return;
	}
	fail_msg("no key on member %d", member);
}

/* Node @p name's stats, looked up by name among the endpoints in use (not by member). */
static struct dp_node_stats node_named(const char *name)
{
	static struct dp_node_stats all[64];
	uint32_t n = dp_nodes_get(rig.dp, all, 64);
	struct dp_node_stats found;
	int hits = 0;

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(all[i].name, name) == 0 && all[i].in_ring) {
			found = all[i];
			hits++;
		}
	assert_int_equal(hits, 1);
	return found;
}

/* A get of node @p i's key leaves on worker 0 to fold_addr[i]; its reply arrives on queue 1,
 * is handed to worker 0 and reaches the client. */
static void fold_round_trip(int i, uint16_t cport)
{
	char name[8], key[16], text[64];
	uint8_t mac[6], a[16];
	struct rte_mbuf *m;
	struct t_view6 v;
	uint16_t sport, reqid;

	snprintf(name, sizeof(name), "n%d", i + 1);
	key_owned(member_of(name), key, sizeof(key));
	snprintf(text, sizeof(text), "get %s\r\n", key);
	t_inject(0, t_request6(cport, 0x77, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp6(m, &v);
	t_ip6(fold_addr[i], a);
	assert_memory_equal(&v.ip6->dst_addr, a, 16);
	sport = rte_be_to_cpu_16(v.udp->src_port);
	reqid = v.reqid;
	rte_pktmbuf_free(m);
	node_mac(i, mac);
	/* The reply port names worker 0's slot: worker 1 checks the source, hands it over. */
	t_inject(1, t_reply6(fold_addr[i], mac, 11211, sport, reqid, 0, 1, hit, strlen(hit)));
	t_poll(1);
	assert_null(t_sent(1));
	t_poll(0);
	expect_to_client6(cport, 0x77, hit);
}

/* Two distinct IPv6 nodes with one fold and port are two sources: each one's handed-over
 * replies reach their clients, each keeps its own counters through changes beside it. */
static void test_v6_fold_collision_replies(void **state)
{
	uint8_t a1[16], a5[16];
	struct dp_node_stats n1, n5;
	struct dp_stats st;

	(void)state;
	t_ip6(fold_addr[0], a1);
	t_ip6(fold_addr[4], a5);
	assert_memory_not_equal(a1, a5, 16);
	t_dp_start6(2, ALL6, NULL);
	publish6(0x1f, 2); /* n1..n4 and n5, n5's fold n1's */
	fold_round_trip(0, 7001);
	fold_round_trip(4, 7005);
	assert_int_equal(t_drop(DP_DROP_REPLY_UNKNOWN_SOURCE), 0);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_HANDED_OVER], 2);
	assert_int_equal(st.ctr[DP_CTR_RETURNED], 2);
	n1 = node_named("n1");
	n5 = node_named("n5");
	assert_memory_equal(n1.ip6, a1, 16);
	assert_memory_equal(n5.ip6, a5, 16);
	assert_int_equal(n1.forwarded, 1);
	assert_int_equal(n5.forwarded, 1);
	assert_int_equal(n1.returned, 1);
	assert_int_equal(n5.returned, 1);
	/* Unrelated changes: n3 leaves, n6 joins, n3 comes back. Neither twin moves. */
	publish6(0x1b, 3);
	publish6(0x3b, 4);
	publish6(0x3f, 5);
	for (int round = 0; round < 2; round++) {
		n1 = node_named("n1");
		n5 = node_named("n5");
		assert_memory_equal(n1.ip6, a1, 16);
		assert_memory_equal(n5.ip6, a5, 16);
		assert_int_equal(n1.forwarded, 1 + round);
		assert_int_equal(n5.forwarded, 1 + round);
		assert_int_equal(n1.returned, 1 + round);
		assert_int_equal(n5.returned, 1 + round);
		if (round == 0) {
			fold_round_trip(0, 7011);
			fold_round_trip(4, 7015);
		}
	}
	assert_int_equal(t_drop(DP_DROP_REPLY_UNKNOWN_SOURCE), 0);
	t_dp_stop();
}

static void fold_quick(struct dp_config *c)
{
	c->request_timeout_ms = 1;
	c->health.fail_down = 2;
	c->health.probe_min_ms = 1;
	c->health.probe_timeout_ms = 60000;
	c->health.up_successes = 1;
}

/* Both twins time out, are marked down and probed: each one's own answer (on the other
 * worker's queue) counts, and both serve again. */
static void test_v6_fold_collision_probes(void **state)
{
	uint16_t id[6] = {0};
	int seen = 0;
	struct rte_mbuf *m;

	(void)state;
	t_dp_start6(2, ALL6, fold_quick);
	publish6(0x1f, 2);
	for (int i = 0; i < 6; i++) {
		char key[16], text[64];
		int node = i % 2 == 0 ? 0 : 4;
		char name[8];

		snprintf(name, sizeof(name), "n%d", node + 1);
		key_owned(member_of(name), key, sizeof(key));
		snprintf(text, sizeof(text), "get %s\r\n", key);
		t_inject(0, t_request6((uint16_t)(7100 + i), 1, text, strlen(text)));
		t_poll(0);
	}
	while ((m = t_sent(0)) != NULL)
		rte_pktmbuf_free(m);
	usleep(3000);
	for (int i = 0; i < 32; i++)
		t_poll(0);
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_EXPIRED], 6);
	dp_health_poll(rig.dp);
	assert_int_equal(node_named("n1").health, HL_DOWN);
	assert_int_equal(node_named("n5").health, HL_DOWN);
	usleep(2000);
	dp_health_poll(rig.dp);
	t_poll(0);
	while ((m = t_sent(0)) != NULL) {
		struct t_view6 v;
		uint8_t a[16];

		t_view_udp6(m, &v);
		assert_memory_equal(v.payload + 8, "version\r\n", 9);
		for (int i = 0; i < 6; i++) {
			t_ip6(fold_addr[i], a);
			if (memcmp(&v.ip6->dst_addr, a, 16) == 0) {
				id[i] = v.reqid;
				seen |= 1 << i;
			}
		}
		rte_pktmbuf_free(m);
	}
	assert_int_equal(seen, 0x11); /* a probe to each twin */
	for (int i = 0; i < 6; i += 4) {
		uint8_t mac[6];
		static const char ver[] = "VERSION 1.6.21\r\n";

		node_mac(i, mac);
		t_inject(1, t_reply6(fold_addr[i], mac, 11211, T_REPLY_BASE - 1, id[i], 0, 1, ver,
				     strlen(ver)));
		t_poll(1);
	}
	assert_int_equal(t_drop(DP_DROP_PROBE_FOREIGN), 0);
	assert_int_equal(t_stats().ctr[DP_CTR_PROBE_REPLIES], 2);
	dp_health_poll(rig.dp);
	assert_int_equal(node_named("n1").health, HL_UP);
	assert_int_equal(node_named("n5").health, HL_UP);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v6_round_trip),
		cmocka_unit_test(test_v6_offload_flags),
		cmocka_unit_test(test_mixed_families),
		cmocka_unit_test(test_v4_to_v6_mtu),
		cmocka_unit_test(test_forged_v6_replies),
		cmocka_unit_test(test_v6_acl_and_version),
		cmocka_unit_test(test_no_address6),
		cmocka_unit_test(test_icmp6_echo),
		cmocka_unit_test(test_nd_answer),
		cmocka_unit_test(test_nd_dad_defended),
		cmocka_unit_test(test_v6_only_router),
		cmocka_unit_test(test_ns_and_na_learning),
		cmocka_unit_test(test_v6_nodes_behind_gateway),
		cmocka_unit_test(test_v6_multiget_split),
		cmocka_unit_test(test_v6_warmup_mixed),
		cmocka_unit_test(test_v6_hot_spread),
		cmocka_unit_test(test_v6_header_edges),
		cmocka_unit_test(test_v6_udp_shorter_than_header),
		cmocka_unit_test(test_v6_fold_collision_replies),
		cmocka_unit_test(test_v6_fold_collision_probes),
	};

	t_eal_setup("dp_ipv6", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
