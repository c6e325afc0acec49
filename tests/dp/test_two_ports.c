/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two ports: clients on the rig's port (untagged, 198.18.0.1), nodes on a second net_ring
 * port with an address, MAC and VLAN of its own (198.18.1.254, VLAN 7). Requests are served
 * only from the client port and leave on the node port, tagged, from the node-side address;
 * replies are served only from the node port and leave on the client port untagged, from
 * the client-side address; multi-get sub-requests go to the node port and merged replies to
 * the client port; ARP for next hops leaves on the node port; each port answers ARP for its
 * own address. The accounting identity holds over both.
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include "dp_test.h"

#define NODE_SIDE_IP "198.18.1.254"
#define NODE_VID     7

static const uint8_t node_side_mac[6] = {0x02, 0, 0, 0, 0x01, 0xfe};
static struct rte_ring *node_rx, *node_tx;
static uint16_t node_port;

static void node_port_setup(void)
{
	struct rte_eth_conf conf;
	int port;

	node_rx = rte_ring_create("t_nrx", 4096, 0, 0);
	node_tx = rte_ring_create("t_ntx", 4096, 0, 0);
	assert_non_null(node_rx);
	assert_non_null(node_tx);
	port = rte_eth_from_rings("t_nring", &node_rx, 1, &node_tx, 1, 0);
	assert_true(port >= 0);
	node_port = (uint16_t)port;
	memset(&conf, 0, sizeof(conf));
	assert_int_equal(rte_eth_dev_configure(node_port, 1, 1, &conf), 0);
	assert_int_equal(rte_eth_rx_queue_setup(node_port, 0, 1024, 0, NULL, rig.pool), 0);
	assert_int_equal(rte_eth_tx_queue_setup(node_port, 0, 1024, 0, NULL), 0);
	assert_int_equal(rte_eth_dev_start(node_port), 0);
}

static void two_ports(struct dp_config *c)
{
	c->two_ports = true;
	c->node_port_id = node_port;
	c->node_router_ip = t_ip(NODE_SIDE_IP);
	memcpy(c->node_router_mac, node_side_mac, 6);
	c->node_vlan_fixed = true;
	c->node_vlan_id = NODE_VID;
}

static struct rte_mbuf *node_sent(void)
{
	void *m = NULL;

	return rte_ring_dequeue(node_tx, &m) == 0 ? m : NULL;
}

static void node_inject(struct rte_mbuf *m)
{
	assert_int_equal(rte_ring_enqueue(node_rx, m), 0);
}

/* A datagram from node @p ip to the router's node side, tagged @p vlan. */
static struct rte_mbuf *node_reply(const char *ip, uint16_t port, uint16_t rid, const char *body,
				   uint16_t vlan)
{
	uint8_t buf[256];
	size_t len = strlen(body);
	struct t_pkt_spec s = {0};
	uint8_t mac[6];

	memset(buf, 0, 8);
	buf[0] = (uint8_t)(rid >> 8);
	buf[1] = (uint8_t)rid;
	buf[5] = 1;
	memcpy(buf + 8, body, len);
	t_node_mac(ip, mac);
	s.src_mac = mac;
	s.dst_mac = node_side_mac;
	s.sip = ip;
	s.dip = NODE_SIDE_IP;
	s.sport = 11211;
	s.dport = port;
	s.payload = buf;
	s.plen = 8 + len;
	s.vlan = vlan;
	return t_pkt(&s);
}

/* The packet @p m went out on the node port: to @p node_ip, from the node side, on VLAN 7. */
static void check_to_node(struct rte_mbuf *m, const char *node_ip, uint16_t *port, uint16_t *rid)
{
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN));
	assert_int_equal(rte_be_to_cpu_16(((struct rte_vlan_hdr *)(v.eth + 1))->vlan_tci),
			 NODE_VID);
	assert_memory_equal(&v.eth->src_addr, node_side_mac, 6);
	assert_int_equal(v.ip->src_addr, t_ip(NODE_SIDE_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(node_ip));
	*port = rte_be_to_cpu_16(v.udp->src_port);
	*rid = v.reqid;
	rte_pktmbuf_free(m);
}

/* The packet @p m went out on the client port: untagged, from the client side. */
static void check_to_client(struct rte_mbuf *m, const char *body)
{
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, false);
	assert_int_equal(v.eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4));
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	assert_memory_equal(&v.eth->dst_addr, t_client_mac, 6);
	assert_int_equal(v.ip->src_addr, t_ip(T_ROUTER_IP));
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	if (body != NULL) {
		assert_int_equal(v.plen, 8 + strlen(body));
		assert_memory_equal(v.payload + 8, body, strlen(body));
	}
	rte_pktmbuf_free(m);
}

/* A key owned by member @p idx. */
static void key_of(int32_t idx, char *key, size_t len)
{
	for (int i = 0; i < 100000; i++) {
		snprintf(key, len, "tk%d", i);
		if (t_owner(key) == idx)
			return;
	}
	fail();
}

static void test_request_and_reply(void **state)
{
	char key[32], text[64], ip[32];
	uint16_t port, rid;
	int n;

	(void)state;
	t_dp_start(1, 4, two_ports);
	key_of(1, key, sizeof(key));
	snprintf(ip, sizeof(ip), "198.18.1.2");
	n = snprintf(text, sizeof(text), "get %s\r\n", key);
	t_inject(0, t_request(5555, 77, text, (size_t)n));
	t_poll(0);
	assert_null(t_sent(0)); /* nothing back on the client port */
	check_to_node(node_sent(), ip, &port, &rid);
	/* The reply on the node port, on VLAN 7: back on the client port, untagged. */
	node_inject(node_reply(ip, port, rid, "END\r\n", NODE_VID));
	t_poll(0);
	assert_null(node_sent());
	check_to_client(t_sent(0), "END\r\n");
	/* A request on the node port, a reply on the client port: dropped (bad_port). */
	t_inject(0, t_request(5556, 78, text, (size_t)n));
	t_poll(0);
	check_to_node(node_sent(), ip, &port, &rid);
	t_inject(0, t_reply(ip, 11211, port, rid, 0, 1, "END\r\n", 5));
	{
		struct t_pkt_spec s = {0};
		uint8_t buf[64] = {0, 9, 0, 0, 0, 1, 0, 0};

		memcpy(buf + 8, text, (size_t)n);
		s.src_mac = t_client_mac;
		s.dst_mac = node_side_mac;
		s.sip = T_CLIENT_IP;
		s.dip = NODE_SIDE_IP;
		s.sport = 5557;
		s.dport = T_LISTEN;
		s.payload = buf;
		s.plen = 8 + (size_t)n;
		s.vlan = NODE_VID;
		node_inject(t_pkt(&s));
	}
	t_poll(0);
	assert_null(t_sent(0));
	assert_null(node_sent());
	assert_int_equal(t_drop(DP_DROP_BAD_PORT), 2);
	/* The node port's VLAN is checked: a reply on VLAN 8 is dropped. */
	node_inject(node_reply(ip, port, rid, "END\r\n", 8));
	t_poll(0);
	assert_int_equal(t_drop(DP_DROP_WRONG_VLAN), 1);
	node_inject(node_reply(ip, port, rid, "END\r\n", NODE_VID));
	t_poll(0);
	check_to_client(t_sent(0), "END\r\n");
	t_stats();
	t_dp_stop();
}

static void test_multiget_over_two_ports(void **state)
{
	char k1[32], k2[32], text[96];
	uint16_t port[2], rid[2];
	struct rte_mbuf *m;
	int n;

	(void)state;
	t_dp_start(1, 4, two_ports);
	key_of(0, k1, sizeof(k1));
	key_of(2, k2, sizeof(k2));
	n = snprintf(text, sizeof(text), "get %s %s\r\n", k1, k2);
	t_inject(0, t_request(6000, 99, text, (size_t)n));
	t_poll(0);
	assert_null(t_sent(0));
	/* Sub-requests in key order of their nodes: n1 then n3, both on the node port. */
	check_to_node(node_sent(), "198.18.1.1", &port[0], &rid[0]);
	check_to_node(node_sent(), "198.18.1.3", &port[1], &rid[1]);
	assert_null(node_sent());
	snprintf(text, sizeof(text), "VALUE %s 0 1\r\na\r\nEND\r\n", k1);
	node_inject(node_reply("198.18.1.1", port[0], rid[0], text, NODE_VID));
	snprintf(text, sizeof(text), "VALUE %s 0 1\r\nb\r\nEND\r\n", k2);
	node_inject(node_reply("198.18.1.3", port[1], rid[1], text, NODE_VID));
	t_poll(0);
	t_poll(0);
	m = t_sent(0);
	check_to_client(m, NULL);
	assert_null(node_sent());
	assert_int_equal(t_stats().ctr[DP_CTR_MGET_MERGED], 1);
	t_dp_stop();
}

static void test_arp_per_port(void **state)
{
	struct rte_mbuf *m;
	struct rte_ether_hdr *eth;
	struct rte_arp_hdr *a;

	(void)state;
	t_dp_start(1, 5, two_ports); /* n5 resolves by ARP */
	dp_control_poll(rig.dp);
	t_poll(0);
	assert_null(t_sent(0));
	m = node_sent();
	assert_non_null(m);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	assert_int_equal(eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN));
	a = (struct rte_arp_hdr *)((uint8_t *)(eth + 1) + sizeof(struct rte_vlan_hdr));
	assert_memory_equal(&eth->src_addr, node_side_mac, 6);
	assert_int_equal(a->arp_data.arp_sip, t_ip(NODE_SIDE_IP));
	assert_int_equal(a->arp_data.arp_tip, t_ip("198.18.1.5"));
	rte_pktmbuf_free(m);
	t_stats();
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_and_reply),
		cmocka_unit_test(test_multiget_over_two_ports),
		cmocka_unit_test(test_arp_per_port),
	};

	t_eal_setup("dp_two_ports", "0", 1);
	node_port_setup();
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
