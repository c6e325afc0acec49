/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nodes behind a gateway: the control lcore resolves each node's next hop when placement is
 * published and again when the routes change, ARPs once per gateway (not per node), and the
 * workers write the gateway's MAC into requests while the IP destination stays the node's.
 * Replies come back through the gateway (its MAC as the Ethernet source) and pass; one with
 * the node's own MAC does not. A next-hop change under traffic moves every node behind it to
 * the new gateway; requests meanwhile are dropped and counted, never sent to a stale MAC
 * after the new one is known, and the accounting identity holds throughout.
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_memcpy.h>

#include "dp_test.h"
#include "route.h"

#define GW1 "198.18.0.254"
#define GW2 "198.18.0.253"

static const uint8_t gw1_mac[6] = {0x02, 0, 0, 0, 0x0f, 0x01};
static const uint8_t gw2_mac[6] = {0x02, 0, 0, 0, 0x0f, 0x02};

static void routes_of(struct rt_table *t, const char *const *text, unsigned int n)
{
	struct rt_route r;
	char err[256];

	rt_init(t);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(rt_parse(text[i], strlen(text[i]), &r, err, sizeof(err)), 0);
		assert_true(rt_add(t, &r, err, sizeof(err)) > 0);
	}
}

/* A dp whose nodes n1..n@p nodes (198.18.1.x) all resolve by ARP, routed by @p t. */
static void start(uint32_t nodes, const struct rt_table *t)
{
	struct dp_config c;

	dp_config_defaults(&c);
	c.port_id = rig.port;
	c.n_workers = 1;
	c.router_ip = t_ip(T_ROUTER_IP);
	memcpy(c.router_mac, t_router_mac, 6);
	c.listen_ports[0] = T_LISTEN;
	c.n_listen = 1;
	c.reply_port_base = T_REPLY_BASE;
	c.reply_port_count = T_REPLY_COUNT;
	c.allowed[0].addr = t_ip("198.18.0.0");
	c.allowed[0].mask = t_ip("255.255.255.0");
	c.n_allowed = 1;
	c.slots = 256;
	c.pool = rig.pool;
	rig.dp = dp_create(&c);
	assert_non_null(rig.dp);
	assert_int_equal(dp_set_routes(rig.dp, t), 0); /* no node yet */
	rig.pl = t_fleet(nodes);
	rig.n_nodes = nodes;
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, NULL, 1), 0);
}

/* The control lcore's ARP requests now: their target addresses, in order. */
static unsigned int arps_sent(uint32_t *tip, unsigned int max)
{
	unsigned int n = 0;
	struct rte_mbuf *m;

	dp_control_poll(rig.dp);
	t_poll(0);
	while ((m = t_sent(0)) != NULL) {
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);

		assert_int_equal(eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP));
		assert_int_equal(a->arp_opcode, rte_cpu_to_be_16(RTE_ARP_OP_REQUEST));
		if (n < max)
			tip[n] = a->arp_data.arp_tip;
		n++;
		rte_pktmbuf_free(m);
	}
	return n;
}

/* @p gw answers the router's ARP request with @p mac. */
static void arp_answer(const char *gw, const uint8_t *mac)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	uint8_t buf[64] = {0};
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);
	char *p;

	assert_non_null(m);
	memcpy(&eth->dst_addr, t_router_mac, 6);
	memcpy(&eth->src_addr, mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	memcpy(&a->arp_data.arp_sha, mac, 6);
	a->arp_data.arp_sip = t_ip(gw);
	memcpy(&a->arp_data.arp_tha, t_router_mac, 6);
	a->arp_data.arp_tip = t_ip(T_ROUTER_IP);
	p = rte_pktmbuf_append(m, sizeof(buf));
	assert_non_null(p);
	rte_memcpy(p, buf, sizeof(buf));
	t_inject(0, m);
	t_poll(0);
}

/* Every node's next hop text and MAC: all equal @p via and @p mac (NULL: unknown). */
static void nodes_are(const char *via, const uint8_t *mac)
{
	struct dp_node_stats n[8];
	uint32_t k = dp_nodes_get(rig.dp, n, 8);
	char text[64];
	uint64_t v;

	assert_int_equal(k, rig.n_nodes);
	for (uint32_t i = 0; i < k; i++) {
		assert_int_equal(dp_node_field(&n[i], DP_NODE_F_via, text, sizeof(text), &v), 1);
		assert_string_equal(text, via);
		assert_int_equal(n[i].mac_known, mac != NULL);
		if (mac != NULL)
			assert_memory_equal(n[i].mac, mac, 6);
	}
}

/* A get for a key of node index @p node; returns the request's reqid (== i of "k<i>"). */
static uint16_t get_for(uint32_t node, uint16_t sport)
{
	char key[32], text[64];
	int i, n;

	for (i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		if (t_owner(key) == (int32_t)node)
			break;
	}
	assert_true(i < 100000);
	n = snprintf(text, sizeof(text), "get %s\r\n", key);
	t_inject(0, t_request(sport, (uint16_t)i, text, (size_t)n));
	t_poll(0);
	return (uint16_t)i;
}

/* The request just sent: to @p node_ip through @p mac; its source port and request id. */
static void request_went(const char *node_ip, const uint8_t *mac, uint16_t *port, uint16_t *rid)
{
	struct rte_mbuf *m = t_sent(0);
	struct t_view v;

	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_memory_equal(&v.eth->dst_addr, mac, 6);
	assert_memory_equal(&v.eth->src_addr, t_router_mac, 6);
	assert_int_equal(v.ip->dst_addr, t_ip(node_ip));
	*port = rte_be_to_cpu_16(v.udp->src_port);
	*rid = v.reqid;
	rte_pktmbuf_free(m);
}

/* The node's reply to (port, rid), its Ethernet source @p mac (the gateway it came through). */
static void reply_via(const char *node_ip, const uint8_t *mac, uint16_t port, uint16_t rid)
{
	static const char body[] = "END\r\n";
	uint8_t buf[64];
	struct t_pkt_spec s = {0};

	buf[0] = (uint8_t)(rid >> 8);
	buf[1] = (uint8_t)rid;
	memset(buf + 2, 0, 6);
	buf[5] = 1;
	memcpy(buf + 8, body, sizeof(body) - 1);
	s.src_mac = mac;
	s.sip = node_ip;
	s.dip = T_ROUTER_IP;
	s.sport = 11211;
	s.dport = port;
	s.payload = buf;
	s.plen = 8 + sizeof(body) - 1;
	t_inject(0, t_pkt(&s));
	t_poll(0);
}

static const char *const routed[] = {"198.18.0.0/24 direct", "198.18.1.0/24 via " GW1};

static void test_behind_gateway(void **state)
{
	struct rt_table t;
	uint32_t tip[8];
	uint16_t port, rid;
	struct rte_mbuf *m;
	uint8_t node_mac[6];

	(void)state;
	routes_of(&t, routed, 2);
	start(4, &t);
	nodes_are(GW1, NULL);
	/* Unresolved: the request is dropped and counted. */
	get_for(0, 5000);
	assert_int_equal(t_drop(DP_DROP_NODE_NO_MAC), 1);
	/* One ARP request for the gateway, not one per node (or for the nodes). */
	assert_int_equal(arps_sent(tip, 8), 1);
	assert_int_equal(tip[0], t_ip(GW1));
	arp_answer(GW1, gw1_mac);
	nodes_are(GW1, gw1_mac);
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_LEARNED], 1);
	/* To the node's address through the gateway's MAC; back through the gateway. */
	for (uint32_t node = 0; node < 4; node++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "198.18.1.%u", node + 1);
		rid = get_for(node, (uint16_t)(5001 + node));
		request_went(ip, gw1_mac, &port, &rid);
		/* The node's own MAC is not the next hop: refused. */
		t_node_mac(ip, node_mac);
		reply_via(ip, node_mac, port, rid);
		assert_null(t_sent(0));
		reply_via(ip, gw1_mac, port, rid);
		m = t_sent(0);
		assert_non_null(m);
		assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), t_client_mac, 6);
		rte_pktmbuf_free(m);
	}
	assert_int_equal(t_drop(DP_DROP_REPLY_WRONG_MAC), 4);
	assert_int_equal(t_stats().ctr[DP_CTR_RETURNED], 4);
	/* A refresh asks the gateway once again, not each node. */
	assert_int_equal(arps_sent(tip, 8), 0); /* lifetime not over */
	t_dp_stop();
}

static void test_nexthop_change_under_traffic(void **state)
{
	static const char *const moved[] = {"198.18.0.0/24 direct", "198.18.1.0/24 via " GW2};
	static const char *const direct[] = {"198.18.0.0/23 direct"};
	struct rt_table t;
	uint32_t tip[8];
	uint16_t port[4], rid[4], p, r;
	struct rte_mbuf *m;

	(void)state;
	routes_of(&t, routed, 2);
	start(4, &t);
	assert_int_equal(arps_sent(tip, 8), 1);
	arp_answer(GW1, gw1_mac);
	/* Requests in flight through gw1. */
	for (uint32_t node = 0; node < 4; node++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "198.18.1.%u", node + 1);
		get_for(node, (uint16_t)(6000 + node));
		request_went(ip, gw1_mac, &port[node], &rid[node]);
	}
	/* The route moves to gw2: every node behind it changes next hop at once. */
	routes_of(&t, moved, 2);
	assert_int_equal(dp_set_routes(rig.dp, &t), 4);
	assert_int_equal(dp_set_routes(rig.dp, &t), 0); /* idempotent */
	nodes_are(GW2, NULL);
	/* Traffic meanwhile: dropped and counted (node_no_mac), never sent to gw1. */
	get_for(1, 6100);
	assert_null(t_sent(0));
	assert_int_equal(t_drop(DP_DROP_NODE_NO_MAC), 1);
	/* A late answer from gw1 teaches nothing now. */
	arp_answer(GW1, gw1_mac);
	nodes_are(GW2, NULL);
	assert_int_equal(arps_sent(tip, 8), 1);
	assert_int_equal(tip[0], t_ip(GW2));
	arp_answer(GW2, gw2_mac);
	nodes_are(GW2, gw2_mac);
	/* A reply to a request sent before the change, arriving through the new gateway,
	 * passes; through the old one it does not. */
	reply_via("198.18.1.1", gw1_mac, port[0], rid[0]);
	assert_null(t_sent(0));
	reply_via("198.18.1.2", gw2_mac, port[1], rid[1]);
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
	get_for(2, 6200);
	request_went("198.18.1.3", gw2_mac, &p, &r);
	/* A node added behind gw2 takes the gateway's MAC: usable at once, no ARP. */
	pl_free(rig.pl);
	rig.pl = t_fleet(5);
	rig.n_nodes = 5;
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, NULL, 2), 0);
	nodes_are(GW2, gw2_mac);
	assert_int_equal(arps_sent(tip, 8), 0);
	get_for(4, 6300);
	request_went("198.18.1.5", gw2_mac, &p, &r);
	/* The prefix becomes direct: each node is its own next hop, asked for itself. */
	routes_of(&t, direct, 1);
	assert_int_equal(dp_set_routes(rig.dp, &t), 5);
	nodes_are("direct", NULL);
	assert_int_equal(arps_sent(tip, 8), 5);
	for (uint32_t i = 0; i < 5; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "198.18.1.%u", i + 1);
		assert_int_equal(tip[i], t_ip(ip));
	}
	t_stats(); /* the identity holds */
	t_dp_stop();
}

/* A node no route holds: never resolved, nothing asked, its requests dropped. */
static void test_no_route(void **state)
{
	static const char *const only_segment[] = {"198.18.0.0/24 direct"};
	struct rt_table t;
	uint32_t tip[8];

	(void)state;
	routes_of(&t, only_segment, 1);
	start(2, &t);
	nodes_are("none", NULL);
	assert_int_equal(arps_sent(tip, 8), 0);
	get_for(0, 7000);
	assert_int_equal(t_drop(DP_DROP_NODE_NO_MAC), 1);
	t_stats();
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_behind_gateway),
		cmocka_unit_test(test_nexthop_change_under_traffic),
		cmocka_unit_test(test_no_route),
	};

	t_eal_setup("dp_route", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
