/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the router answers itself: keyless memcached commands refused with an error reply,
 * `version` answered, ARP for its address, ICMP echo; and node MAC resolution by ARP
 * (requests sent by the control side, replies learned by a worker).
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>

#include "dp_test.h"

/* Send @p req (text or binary) and return the router's own UDP reply to the client. */
static struct rte_mbuf *local_reply(const void *req, size_t len, uint16_t reqid, struct t_view *v)
{
	struct rte_mbuf *m;

	t_inject(0, t_request(4242, reqid, req, len));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, v, false);
	assert_memory_equal(&v->eth->dst_addr, t_client_mac, 6);
	assert_memory_equal(&v->eth->src_addr, t_router_mac, 6);
	assert_int_equal(v->ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v->ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v->udp->src_port), T_LISTEN);
	assert_int_equal(rte_be_to_cpu_16(v->udp->dst_port), 4242);
	assert_int_equal(v->reqid, reqid);
	assert_int_equal(v->seq, 0);
	assert_int_equal(v->total, 1);
	assert_null(t_sent(0));
	return m;
}

static void expect_text(const char *req, const char *prefix)
{
	struct t_view v;
	struct rte_mbuf *m = local_reply(req, strlen(req), 77, &v);
	size_t n = strlen(prefix);

	assert_true(v.plen >= 8 + n + 2);
	if (memcmp(v.payload + 8, prefix, n) != 0)
		fail_msg("reply to %s is '%.*s'", req, (int)(v.plen - 8), v.payload + 8);
	assert_memory_equal(v.payload + v.plen - 2, "\r\n", 2);
	assert_null(memchr(v.payload + 8, '\n', v.plen - 9)); /* one line */
	rte_pktmbuf_free(m);
	t_stats();
}

static void test_keyless_refused(void **state)
{
	static const char *const refused[] = {
		"stats\r\n",	"stats items\r\n", "flush_all\r\n",	     "flush_all 10\r\n",
		"shutdown\r\n", "verbosity 1\r\n", "cache_memlimit 100\r\n",
	};

	(void)state;
	t_dp_start(1, 4, NULL);
	for (size_t i = 0; i < RTE_DIM(refused); i++)
		expect_text(refused[i], "CLIENT_ERROR ");
	struct dp_stats s = t_stats();

	assert_int_equal(s.ctr[DP_CTR_MC_REFUSED], RTE_DIM(refused));
	assert_int_equal(s.ctr[DP_CTR_ANSWERED], RTE_DIM(refused));
	assert_int_equal(s.ctr[DP_CTR_FORWARDED], 0);
	t_dp_stop();
}

static void test_version_answered(void **state)
{
	struct t_view v;
	struct rte_mbuf *m;
	uint8_t bin[24] = {0x80, 0x0b};
	uint8_t stat[24] = {0x80, 0x10};

	(void)state;
	t_dp_start(1, 4, NULL);
	expect_text("version\r\n", "VERSION ");
	expect_text("mn\r\n", "MN");
	/* Binary VERSION: a binary response with the request's opaque. */
	memcpy(bin + 12, "\xde\xad\xbe\xef", 4);
	m = local_reply(bin, sizeof(bin), 78, &v);
	assert_true(v.plen > 8 + 24);
	assert_int_equal(v.payload[8], 0x81);
	assert_int_equal(v.payload[9], 0x0b);
	assert_int_equal(v.payload[8 + 6] << 8 | v.payload[8 + 7], 0); /* status */
	assert_memory_equal(v.payload + 8 + 12, "\xde\xad\xbe\xef", 4);
	assert_int_equal(v.payload[8 + 11], v.plen - 8 - 24); /* body length */
	rte_pktmbuf_free(m);
	/* Binary STAT: refused with a binary error status. */
	m = local_reply(stat, sizeof(stat), 79, &v);
	assert_int_equal(v.payload[8], 0x81);
	assert_int_equal(v.payload[9], 0x10);
	assert_int_not_equal(v.payload[8 + 6] << 8 | v.payload[8 + 7], 0);
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_MC_VERSION], 3);
	t_dp_stop();
}

static struct rte_mbuf *arp(uint16_t op, const uint8_t *sha, const char *sip, const char *tip,
			    const uint8_t *dst)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, 60);
	struct rte_arp_hdr *a;

	if (eth == NULL)
		fail_msg("no room for an ARP frame");
	a = (struct rte_arp_hdr *)(eth + 1);
	memset(eth, 0, 60);
	rte_ether_addr_copy((const struct rte_ether_addr *)dst, &eth->dst_addr);
	rte_ether_addr_copy((const struct rte_ether_addr *)sha, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	memcpy(&a->arp_data.arp_sha, sha, 6);
	a->arp_data.arp_sip = t_ip(sip);
	a->arp_data.arp_tip = t_ip(tip);
	if (op == RTE_ARP_OP_REPLY)
		memcpy(&a->arp_data.arp_tha, t_router_mac, 6);
	return m;
}

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void test_arp_responder(void **state)
{
	struct rte_mbuf *m;
	struct rte_arp_hdr *a;
	struct rte_ether_hdr *eth;

	(void)state;
	t_dp_start(1, 4, NULL);
	t_inject(0, arp(RTE_ARP_OP_REQUEST, t_client_mac, T_CLIENT_IP, T_ROUTER_IP, bcast));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eth + 1);
	assert_memory_equal(&eth->dst_addr, t_client_mac, 6);
	assert_memory_equal(&eth->src_addr, t_router_mac, 6);
	assert_int_equal(a->arp_opcode, rte_cpu_to_be_16(RTE_ARP_OP_REPLY));
	assert_memory_equal(&a->arp_data.arp_sha, t_router_mac, 6);
	assert_int_equal(a->arp_data.arp_sip, t_ip(T_ROUTER_IP));
	assert_memory_equal(&a->arp_data.arp_tha, t_client_mac, 6);
	assert_int_equal(a->arp_data.arp_tip, t_ip(T_CLIENT_IP));
	rte_pktmbuf_free(m);
	/* ARP for someone else, from a stranger: not ours to answer. */
	t_inject(0, arp(RTE_ARP_OP_REQUEST, t_client_mac, T_CLIENT_IP, "198.18.0.77", bcast));
	t_poll(0);
	assert_null(t_sent(0));
	struct dp_stats s = t_stats();

	assert_int_equal(s.ctr[DP_CTR_ARP_REPLIED], 1);
	assert_int_equal(s.drop[DP_DROP_BAD_ARP], 1);
	t_dp_stop();
}

static void test_icmp_echo(void **state)
{
	uint8_t body[8 + 32];
	struct t_pkt_spec s = {0};
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip;
	struct rte_icmp_hdr *ic;
	struct rte_ether_hdr *eth;

	(void)state;
	t_dp_start(1, 4, NULL);
	/* t_pkt writes a UDP header: build ICMP in its place by hand. */
	memset(body, 0xab, sizeof(body));
	s.proto = IPPROTO_ICMP;
	s.payload = body;
	s.plen = sizeof(body) - 8;
	m = t_pkt(&s);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	ic = (struct rte_icmp_hdr *)(ip + 1);
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_code = 0;
	ic->icmp_ident = rte_cpu_to_be_16(99);
	ic->icmp_seq_nb = rte_cpu_to_be_16(1);
	ic->icmp_cksum = 0;
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(body));
	t_inject(0, m);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	ic = (struct rte_icmp_hdr *)(ip + 1);
	assert_memory_equal(&eth->dst_addr, t_client_mac, 6);
	assert_int_equal(ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(ic->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(rte_raw_cksum(ic, sizeof(body)), 0xffff);
	assert_int_equal(ic->icmp_ident, rte_cpu_to_be_16(99));
	rte_pktmbuf_free(m);
	assert_int_equal(t_stats().ctr[DP_CTR_ICMP_ECHOED], 1);
	/* Not an echo request (a timestamp request), and an echo with a bad checksum. */
	for (int bad = 0; bad < 2; bad++) {
		m = t_pkt(&s);
		ip = (struct rte_ipv4_hdr *)(rte_pktmbuf_mtod(m, struct rte_ether_hdr *) + 1);
		ic = (struct rte_icmp_hdr *)(ip + 1);
		ic->icmp_type = bad ? RTE_IP_ICMP_ECHO_REQUEST : 13;
		ic->icmp_code = 0;
		ic->icmp_cksum = 0;
		ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(body));
		if (bad)
			ic->icmp_cksum ^= 0x0101;
		t_inject(0, m);
		t_poll(0);
		assert_null(t_sent(0));
	}
	assert_int_equal(t_drop(DP_DROP_BAD_ICMP), 2);
	t_dp_stop();
}

/* A key owned by member @p idx (0-based) of the rig's placement. */
static void key_of(int32_t idx, char *key, size_t len)
{
	for (int i = 0; i < 100000; i++) {
		snprintf(key, len, "key%d", i);
		if (t_owner(key) == idx)
			return;
	}
	fail_msg("no key for member %d", idx);
}

static void test_node_mac_by_arp(void **state)
{
	static const uint8_t n5_mac[6] = {0x02, 0, 0, 0, 0x01, 0x55};
	char key[32], text[64];
	struct rte_mbuf *m;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;
	struct dp_node_stats nodes[8];
	uint32_t n;

	(void)state;
	t_dp_start(1, 5, NULL); /* n5 has no static MAC */
	key_of(4, key, sizeof(key));
	snprintf(text, sizeof(text), "get %s\r\n", key);
	/* Unknown MAC: dropped and counted, not queued. */
	t_inject(0, t_request(5555, 1, text, strlen(text)));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NODE_NO_MAC), 1);
	/* The control side asks; worker 0 transmits the request. */
	dp_control_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	a = (struct rte_arp_hdr *)(eth + 1);
	assert_memory_equal(&eth->dst_addr, bcast, 6);
	assert_int_equal(a->arp_opcode, rte_cpu_to_be_16(RTE_ARP_OP_REQUEST));
	assert_int_equal(a->arp_data.arp_tip, t_ip("198.18.1.5"));
	assert_int_equal(a->arp_data.arp_sip, t_ip(T_ROUTER_IP));
	rte_pktmbuf_free(m);
	assert_null(t_sent(0)); /* static nodes are never asked for */
	/* Not yet time for a retry. */
	dp_control_poll(rig.dp);
	t_poll(0);
	assert_null(t_sent(0));
	/* The answer teaches the MAC. */
	t_inject(0, arp(RTE_ARP_OP_REPLY, n5_mac, "198.18.1.5", T_ROUTER_IP, t_router_mac));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_LEARNED], 1);
	n = dp_nodes_get(rig.dp, nodes, 8);
	assert_int_equal(n, 5);
	assert_string_equal(nodes[4].name, "n5");
	assert_true(nodes[4].mac_known);
	assert_int_equal(nodes[4].arp_sent, 1);
	/* Now the request goes out to the learned MAC. */
	t_inject(0, t_request(5555, 2, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	assert_memory_equal(&eth->dst_addr, n5_mac, 6);
	rte_pktmbuf_free(m);
	/* A forged ARP cannot move a static node. */
	t_inject(0, arp(RTE_ARP_OP_REPLY, n5_mac, "198.18.1.1", T_ROUTER_IP, t_router_mac));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_BAD_ARP), 1);
	n = dp_nodes_get(rig.dp, nodes, 8);
	assert_int_equal(nodes[0].mac[5], 1);
	assert_int_equal(dp_nodes_get(rig.dp, nodes, 8), 5);
	assert_int_equal(nodes[4].forwarded, 1);
	t_dp_stop();
}

/* MACs fed by the control side (AF_XDP mode: the kernel's neighbour table); no ARP sent. */
static void no_arp(struct dp_config *c)
{
	c->no_arp_requests = true;
}

static void test_neigh_fed_by_control(void **state)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, 0x66};
	char key[32], text[64];
	struct rte_mbuf *m;

	(void)state;
	t_dp_start(1, 5, no_arp);
	key_of(4, key, sizeof(key));
	snprintf(text, sizeof(text), "get %s\r\n", key);
	dp_control_poll(rig.dp);
	t_poll(0);
	assert_null(t_sent(0)); /* no ARP request */
	assert_int_equal(dp_neigh_update(rig.dp, t_ip("198.18.1.5"), mac), 1);
	assert_int_equal(dp_neigh_update(rig.dp, t_ip("198.18.1.1"), mac), 0); /* static */
	assert_int_equal(dp_neigh_update(rig.dp, t_ip("198.18.9.9"), mac), 0);
	t_inject(0, t_request(5555, 2, text, strlen(text)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), mac, 6);
	rte_pktmbuf_free(m);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyless_refused), cmocka_unit_test(test_version_answered),
		cmocka_unit_test(test_arp_responder),	cmocka_unit_test(test_icmp_echo),
		cmocka_unit_test(test_node_mac_by_arp), cmocka_unit_test(test_neigh_fed_by_control),
	};

	t_eal_setup("dp_local", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
