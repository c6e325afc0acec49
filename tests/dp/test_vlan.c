/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port on one VLAN ([router] vlan, dp_config.vlan_fixed): requests, replies, ARP and ICMP
 * are served on that VLAN id only (anything else is dropped as wrong_vlan, counted once), the
 * router's own ARP requests leave tagged with it, and only an answer on it teaches a next
 * hop's MAC. vlan 0 means untagged only. Without vlan_fixed nothing changes (test_forward's
 * VLAN cases).
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_memcpy.h>

#include "dp_test.h"

#define VID 100
#define N5  "198.18.1.5"

static const uint8_t n5_mac[6] = {0x02, 0, 0, 0, 0x01, 0x55};

static void on_vlan_100(struct dp_config *c)
{
	c->vlan_fixed = true;
	c->vlan_id = VID;
}

static void untagged_only(struct dp_config *c)
{
	c->vlan_fixed = true;
	c->vlan_id = 0;
}

/* A get for @p key from the client, tagged @p vlan (0: untagged). */
static struct rte_mbuf *get_req(const char *key, uint16_t vlan, uint16_t rid)
{
	uint8_t buf[64];
	struct t_pkt_spec s = {0};
	int n = snprintf((char *)buf + 8, sizeof(buf) - 8, "get %s\r\n", key);

	memset(buf, 0, 8);
	buf[0] = (uint8_t)(rid >> 8);
	buf[1] = (uint8_t)rid;
	buf[5] = 1;
	s.sip = T_CLIENT_IP;
	s.dip = T_ROUTER_IP;
	s.sport = 5555;
	s.dport = T_LISTEN;
	s.payload = buf;
	s.plen = 8 + (size_t)n;
	s.vlan = vlan;
	return t_pkt(&s);
}

/* An ARP reply from n5 to the router, tagged @p vlan (0: untagged). */
static struct rte_mbuf *n5_answers(uint16_t vlan)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	uint8_t buf[68] = {0};
	size_t l2 = vlan ? 18 : 14;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(buf + l2);
	char *p;

	assert_non_null(m);
	memcpy(buf, t_router_mac, 6);
	memcpy(buf + 6, n5_mac, 6);
	if (vlan) {
		buf[12] = 0x81;
		buf[14] = (uint8_t)(vlan >> 8);
		buf[15] = (uint8_t)vlan;
		buf[16] = 0x08;
		buf[17] = 0x06;
	} else {
		buf[12] = 0x08;
		buf[13] = 0x06;
	}
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	memcpy(&a->arp_data.arp_sha, n5_mac, 6);
	a->arp_data.arp_sip = t_ip(N5);
	memcpy(&a->arp_data.arp_tha, t_router_mac, 6);
	a->arp_data.arp_tip = t_ip(T_ROUTER_IP);
	p = rte_pktmbuf_append(m, sizeof(buf));
	assert_non_null(p);
	rte_memcpy(p, buf, sizeof(buf));
	return m;
}

/* The reply of the owner of key "a" to (port, rid), tagged @p vlan. */
static void node_reply(uint16_t port, uint16_t rid, uint16_t vlan)
{
	uint8_t buf[13] = {
		(uint8_t)(rid >> 8), (uint8_t)rid, 0, 0, 0, 1, 0, 0, 'E', 'N', 'D', '\r', '\n'};
	struct t_pkt_spec s = {0};
	uint8_t node_mac[6];
	char ip[16];

	snprintf(ip, sizeof(ip), "198.18.1.%u", (unsigned int)(t_owner("a") + 1));
	t_node_mac(ip, node_mac);
	s.src_mac = node_mac;
	s.sip = ip;
	s.dip = T_ROUTER_IP;
	s.sport = 11211;
	s.dport = port;
	s.payload = buf;
	s.plen = sizeof(buf);
	s.vlan = vlan;
	t_inject(0, t_pkt(&s));
	t_poll(0);
}

static bool n5_known(void)
{
	struct dp_node_stats n[8];

	assert_int_equal(dp_nodes_get(rig.dp, n, 8), 5);
	return n[4].mac_known;
}

static void test_port_on_vlan(void **state)
{
	struct rte_mbuf *m;
	struct t_view v;
	struct rte_vlan_hdr *vh;
	uint16_t port, rid;

	(void)state;
	t_dp_start(1, 5, on_vlan_100);
	/* Untagged and other VLANs: dropped, counted once each. */
	t_inject(0, get_req("a", 0, 1));
	t_inject(0, get_req("a", 200, 2));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_WRONG_VLAN), 2);
	/* On the port's VLAN (priority bits set): forwarded, tag kept. */
	t_inject(0, get_req("a", (5 << 13) | VID, 3));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, true);
	vh = (struct rte_vlan_hdr *)(v.eth + 1);
	assert_int_equal(rte_be_to_cpu_16(vh->vlan_tci) & 0xfff, VID);
	port = rte_be_to_cpu_16(v.udp->src_port);
	rid = v.reqid;
	rte_pktmbuf_free(m);
	/* The node's reply on another VLAN: dropped before it reaches the slot. */
	node_reply(port, rid, 200);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_WRONG_VLAN), 3);
	node_reply(port, rid, VID);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, true);
	vh = (struct rte_vlan_hdr *)(v.eth + 1);
	assert_int_equal(rte_be_to_cpu_16(vh->vlan_tci) & 0xfff, VID);
	rte_pktmbuf_free(m);
	/* The router's ARP request for n5 leaves on VLAN 100. */
	dp_control_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	{
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		struct rte_vlan_hdr *tag = (struct rte_vlan_hdr *)(eth + 1);
		struct rte_arp_hdr *a = (struct rte_arp_hdr *)(tag + 1);

		assert_int_equal(eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN));
		assert_int_equal(tag->vlan_tci, rte_cpu_to_be_16(VID));
		assert_int_equal(tag->eth_proto, rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP));
		assert_int_equal(a->arp_data.arp_tip, t_ip(N5));
	}
	rte_pktmbuf_free(m);
	/* Untagged or on another VLAN the answer teaches nothing; on VLAN 100 it does. */
	t_inject(0, n5_answers(0));
	t_inject(0, n5_answers(200));
	t_poll(0);
	assert_false(n5_known());
	assert_int_equal(t_drop(DP_DROP_WRONG_VLAN), 5);
	t_inject(0, n5_answers(VID));
	t_poll(0);
	assert_true(n5_known());
	t_stats(); /* identity */
	t_dp_stop();
}

static void test_untagged_only(void **state)
{
	struct rte_mbuf *m;

	(void)state;
	t_dp_start(1, 5, untagged_only);
	t_inject(0, get_req("a", VID, 1));
	t_poll(0);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_WRONG_VLAN), 1);
	/* A priority tag (VLAN id 0) counts as untagged. */
	t_inject(0, get_req("a", 3 << 13, 2));
	t_inject(0, get_req("a", 0, 3));
	t_poll(0);
	for (int i = 0; i < 2; i++) {
		m = t_sent(0);
		assert_non_null(m);
		rte_pktmbuf_free(m);
	}
	/* The router's ARP stays untagged. */
	dp_control_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type,
			 rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP));
	rte_pktmbuf_free(m);
	t_stats();
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_on_vlan),
		cmocka_unit_test(test_untagged_only),
	};

	t_eal_setup("dp_vlan", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
