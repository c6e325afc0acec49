/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile and malformed input: every packet is dropped and counted under exactly its reason,
 * nothing leaves the router, the identity holds after each, and the router still serves a
 * good request afterwards.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "dp_test.h"

static const char good[] = "get foo\r\n";

/* Feed @p m, expect nothing sent and exactly @p why counted once more. */
static void expect_drop(struct rte_mbuf *m, enum dp_drop why)
{
	struct dp_stats before = t_stats(), after;

	t_inject(0, m);
	t_poll(0);
	assert_int_equal(t_sent_count(0), 0);
	after = t_stats();
	assert_int_equal(after.ctr[DP_CTR_RX], before.ctr[DP_CTR_RX] + 1);
	assert_int_equal(after.ctr[DP_CTR_DROPPED], before.ctr[DP_CTR_DROPPED] + 1);
	if (after.drop[why] != before.drop[why] + 1)
		fail_msg("expected drop reason %s", dp_drop_name(why));
}

/* The router still forwards a good request. */
static void still_serves(void)
{
	struct rte_mbuf *m;

	t_inject(0, t_request(5555, 1, good, strlen(good)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
}

static struct rte_mbuf *raw(const void *bytes, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	void *p = rte_pktmbuf_append(m, (uint16_t)len);

	memcpy(p, bytes, len);
	return m;
}

/* A good request with one field of its spec changed by @p edit. */
static struct rte_mbuf *request_with(void (*edit)(struct t_pkt_spec *s))
{
	static uint8_t buf[64];
	struct t_pkt_spec s = {0};

	memcpy(buf, "\x00\x01\x00\x00\x00\x01\x00\x00", 8);
	memcpy(buf + 8, good, strlen(good));
	s.payload = buf;
	s.plen = 8 + strlen(good);
	s.sport = 5555;
	s.dport = T_LISTEN;
	edit(&s);
	return t_pkt(&s);
}

/* Fragments of a TCP datagram: UDP ones are reassembled (test_frag). */
static void e_frag_mf(struct t_pkt_spec *s)
{
	s->frag = RTE_IPV4_HDR_MF_FLAG;
	s->proto = IPPROTO_TCP;
}
static void e_frag_off(struct t_pkt_spec *s)
{
	s->frag = 185;
	s->proto = IPPROTO_TCP;
}
static void e_bad_csum(struct t_pkt_spec *s)
{
	s->bad_ip_csum = true;
}
static void e_udp_long(struct t_pkt_spec *s)
{
	s->udp_len_delta = 10;
}
static void e_udp_short(struct t_pkt_spec *s)
{
	s->udp_len_delta = -3;
}
static void e_udp_tiny(struct t_pkt_spec *s)
{
	s->udp_len_delta = -(int)(8 + s->plen) + 4;
}
static void e_other_ip(struct t_pkt_spec *s)
{
	s->dip = "198.18.0.2";
}
static void e_tcp(struct t_pkt_spec *s)
{
	s->proto = IPPROTO_TCP;
}
static void e_port(struct t_pkt_spec *s)
{
	s->dport = 11212;
}
static void e_denied(struct t_pkt_spec *s)
{
	s->sip = "198.18.3.7";
}
static void e_other_mac(struct t_pkt_spec *s)
{
	static const uint8_t m[6] = {0x02, 0, 0, 0, 0, 0x77};

	s->dst_mac = m;
}

static void test_layer_2_3_4(void **state)
{
	uint8_t b[64];

	(void)state;
	t_dp_start(1, 4, NULL);
	memset(b, 0, sizeof(b));
	memcpy(b, t_router_mac, 6);
	expect_drop(raw(b, 10), DP_DROP_TRUNC_ETH);
	/* VLAN tag cut short. */
	b[12] = 0x81;
	b[13] = 0x00;
	expect_drop(raw(b, 16), DP_DROP_TRUNC_ETH);
	/* IPv6. */
	b[12] = 0x86;
	b[13] = 0xdd;
	expect_drop(raw(b, 60), DP_DROP_NOT_IPV4);
	/* IPv4 cut inside its header. */
	b[12] = 0x08;
	b[13] = 0x00;
	b[14] = 0x45;
	expect_drop(raw(b, 14 + 12), DP_DROP_TRUNC_IP);
	/* IHL says 60 bytes of header, frame has 40. */
	b[14] = 0x4f;
	expect_drop(raw(b, 14 + 40), DP_DROP_TRUNC_IP);
	/* IHL below 5, and version 6 in an IPv4 EtherType. */
	b[14] = 0x44;
	expect_drop(raw(b, 60), DP_DROP_BAD_IP);
	b[14] = 0x65;
	expect_drop(raw(b, 60), DP_DROP_BAD_IP);
	expect_drop(request_with(e_bad_csum), DP_DROP_BAD_IP);
	expect_drop(request_with(e_frag_mf), DP_DROP_IP_FRAGMENT);
	expect_drop(request_with(e_frag_off), DP_DROP_IP_FRAGMENT);
	expect_drop(request_with(e_other_ip), DP_DROP_NOT_OUR_IP);
	expect_drop(request_with(e_tcp), DP_DROP_NOT_UDP);
	expect_drop(request_with(e_udp_long), DP_DROP_BAD_UDP_LEN);
	expect_drop(request_with(e_udp_short), DP_DROP_BAD_UDP_LEN);
	expect_drop(request_with(e_udp_tiny), DP_DROP_BAD_UDP_LEN);
	expect_drop(request_with(e_port), DP_DROP_BAD_PORT);
	expect_drop(request_with(e_denied), DP_DROP_CLIENT_DENIED);
	expect_drop(request_with(e_other_mac), DP_DROP_NOT_FOR_US);
	still_serves();
	t_dp_stop();
}

/* An IPv4 total length that claims more than the frame holds. */
static void test_lying_ip_length(void **state)
{
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip;

	(void)state;
	t_dp_start(1, 4, NULL);
	m = t_request(5555, 1, good, strlen(good));
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	ip->total_length = rte_cpu_to_be_16(rte_be_to_cpu_16(ip->total_length) + 100);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	expect_drop(m, DP_DROP_BAD_IP);
	/* Frame truncated inside the UDP header (IP length consistent with it). */
	m = t_request(5555, 1, good, strlen(good));
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
	ip->total_length = rte_cpu_to_be_16(24);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - 14 - 24));
	expect_drop(m, DP_DROP_TRUNC_UDP);
	still_serves();
	t_dp_stop();
}

static void test_memcached_payloads(void **state)
{
	char key251[300], text[320];
	uint8_t frame2[32] = {0, 5, 0, 0, 0, 2, 0, 0};
	struct t_pkt_spec s = {0};

	(void)state;
	t_dp_start(1, 4, NULL);
	memset(key251, 'k', 251);
	key251[251] = '\0';
	snprintf(text, sizeof(text), "get %s\r\n", key251);
	expect_drop(t_request(5555, 1, text, strlen(text)), DP_DROP_MC_KEY_TOO_LONG);
	/* 250 bytes is fine. */
	key251[250] = '\0';
	snprintf(text, sizeof(text), "get %s\r\n", key251);
	t_inject(0, t_request(5555, 1, text, strlen(text)));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 1);
	rte_pktmbuf_free(t_sent(0));
	/* First datagram of a two-datagram request. */
	memcpy(frame2 + 8, "get foo\r\n", 9);
	s.payload = frame2;
	s.plen = 17;
	s.sport = 5555;
	s.dport = T_LISTEN;
	expect_drop(t_pkt(&s), DP_DROP_MC_MULTI_DATAGRAM);
	/* Frame header cut short. */
	s.plen = 5;
	expect_drop(t_pkt(&s), DP_DROP_MC_FRAME);
	/* Not memcached at all. */
	expect_drop(t_request(5555, 1, "\x16\x03\x01\x02\x00", 5), DP_DROP_MC_BAD_REQUEST);
	expect_drop(t_request(5555, 1, "hello world\r\n", 13), DP_DROP_MC_BAD_REQUEST);
	expect_drop(t_request(5555, 1, "get foo", 7), DP_DROP_MC_BAD_REQUEST);
	expect_drop(t_request(5555, 1, "set foo 0 0 10\r\nab\r\n", 20), DP_DROP_MC_BAD_REQUEST);
	expect_drop(t_request(5555, 1, "", 0), DP_DROP_MC_BAD_REQUEST);
	still_serves();
	t_dp_stop();
}

static void test_node_reply_from_a_stranger(void **state)
{
	(void)state;
	t_dp_start(1, 4, NULL);
	/* A "reply" from outside to a reply-range port nothing was sent from. */
	expect_drop(t_reply("203.0.113.9", 11211, T_REPLY_BASE + 5, 0x0105, 0, 1, "END\r\n", 5),
		    DP_DROP_REPLY_NO_SLOT);
	/* A node's datagram too short for a frame header. */
	struct t_pkt_spec s = {0};

	s.sip = "198.18.1.1";
	s.sport = 11211;
	s.dport = T_REPLY_BASE;
	s.payload = "\0\0\0\0";
	s.plen = 4;
	expect_drop(t_pkt(&s), DP_DROP_REPLY_BAD_FRAME);
	still_serves();
	t_dp_stop();
}

/* A ring where no member has weight owns nothing: requests are dropped, not sent anywhere. */
static void test_empty_ring(void **state)
{
	struct pl_member m = {0};
	struct pl_config c = {0};
	struct pl_placement *pl;

	(void)state;
	t_dp_start(1, 4, NULL);
	snprintf(m.name, sizeof(m.name), "drained");
	snprintf(m.addr, sizeof(m.addr), "198.18.1.1");
	m.port = 11211;
	pl = pl_build(&c, &m, 1);
	assert_non_null(pl);
	assert_int_equal(dp_publish_placement(rig.dp, pl, NULL, 2), 0);
	expect_drop(t_request(5555, 1, good, strlen(good)), DP_DROP_NO_PLACEMENT);
	pl_free(pl);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layer_2_3_4),
		cmocka_unit_test(test_lying_ip_length),
		cmocka_unit_test(test_memcached_payloads),
		cmocka_unit_test(test_node_reply_from_a_stranger),
		cmocka_unit_test(test_empty_ring),
	};

	t_eal_setup("dp_hostile", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
