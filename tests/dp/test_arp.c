/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node MACs cannot be hijacked by ARP: a node's MAC is learned only from an ARP reply to the
 * router's own outstanding request (untagged, to the router's MAC and address, one reply per
 * request). Gratuitous ARP, unsolicited replies, tagged or misaddressed replies and a second
 * reply to the same request move nothing and are counted (drop arp_unsolicited); a solicited
 * reply that moves a known MAC is counted (arp_mac_changed) and reported for the operator's
 * log (dp_mac_changes). Before the fix any ARP from a node's address set its MAC.
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_cycles.h>

#include "dp_test.h"

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t real_mac[6] = {0x02, 0, 0, 0, 0x01, 0x55};
static const uint8_t evil_mac[6] = {0x02, 0, 0, 0, 0x0e, 0x01};
static const uint8_t new_mac[6] = {0x02, 0, 0, 0, 0x01, 0x56};

#define N5 "198.18.1.5"

struct arp_spec {
	uint16_t op;
	const uint8_t *sha;
	const char *sip;
	const char *tip;
	const uint8_t *dst; /* Ethernet destination */
	const uint8_t *tha; /* NULL: zero (requests) */
	uint16_t vlan;	    /* tag with this TCI when non-zero */
};

static struct rte_mbuf *arp(const struct arp_spec *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	size_t l2 = sizeof(struct rte_ether_hdr) + (s->vlan ? sizeof(struct rte_vlan_hdr) : 0);
	struct rte_arp_hdr a;
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, 64);
	assert_non_null(p);
	memset(p, 0, 64);
	memcpy(p, s->dst, 6);
	memcpy(p + 6, s->sha, 6);
	if (s->vlan) {
		p[12] = 0x81;
		p[14] = (uint8_t)(s->vlan >> 8);
		p[15] = (uint8_t)s->vlan;
		p[16] = 0x08;
		p[17] = 0x06;
	} else {
		p[12] = 0x08;
		p[13] = 0x06;
	}
	memset(&a, 0, sizeof(a));
	a.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a.arp_hlen = 6;
	a.arp_plen = 4;
	a.arp_opcode = rte_cpu_to_be_16(s->op);
	memcpy(&a.arp_data.arp_sha, s->sha, 6);
	a.arp_data.arp_sip = t_ip(s->sip);
	if (s->tha)
		memcpy(&a.arp_data.arp_tha, s->tha, 6);
	a.arp_data.arp_tip = t_ip(s->tip);
	memcpy(p + l2, &a, sizeof(a));
	return m;
}

/* A reply from n5's address claiming @p mac, as a real node answers the router. */
static struct rte_mbuf *reply_from_n5(const uint8_t *mac)
{
	struct arp_spec s = {RTE_ARP_OP_REPLY, mac, N5, T_ROUTER_IP, t_router_mac, t_router_mac, 0};

	return arp(&s);
}

static void send1(struct rte_mbuf *m)
{
	t_inject(0, m);
	t_poll(0);
}

/* n5's MAC as the router holds it; false when unknown. */
static bool n5_mac(uint8_t out[6])
{
	struct dp_node_stats nodes[8];

	assert_int_equal(dp_nodes_get(rig.dp, nodes, 8), 5);
	assert_string_equal(nodes[4].name, "n5");
	memcpy(out, nodes[4].mac, 6);
	return nodes[4].mac_known;
}

/* The control lcore asks for n5: exactly one ARP request leaves on worker 0's queue. */
static void router_asks(void)
{
	struct rte_mbuf *m;
	struct rte_arp_hdr *a;

	dp_control_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	a = (struct rte_arp_hdr *)(rte_pktmbuf_mtod(m, struct rte_ether_hdr *) + 1);
	assert_int_equal(a->arp_opcode, rte_cpu_to_be_16(RTE_ARP_OP_REQUEST));
	assert_int_equal(a->arp_data.arp_tip, t_ip(N5));
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
}

/* A key n5 owns, and where a get for it goes (its Ethernet destination). */
static void get_goes_to(const uint8_t *mac)
{
	char key[32], text[64];
	struct rte_mbuf *m;
	int i, n;

	for (i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "key%d", i);
		if (t_owner(key) == 4)
			break;
	}
	assert_true(i < 100000);
	n = snprintf(text, sizeof(text), "get %s\r\n", key);
	t_inject(0, t_request(5555, (uint16_t)i, text, (size_t)n));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), mac, 6);
	rte_pktmbuf_free(m);
}

/* A learned MAC is asked for again at every control poll: the refresh (and its window) can be
 * opened on demand. */
static void refresh_always(struct dp_config *c)
{
	c->arp_lifetime_s = 0;
}

static void test_unsolicited_arp_moves_nothing(void **state)
{
	struct arp_spec garp_req = {RTE_ARP_OP_REQUEST, evil_mac, N5, N5, bcast, NULL, 0};
	struct arp_spec garp_rep = {RTE_ARP_OP_REPLY, evil_mac, N5, N5, bcast, bcast, 0};
	struct arp_spec tagged = {RTE_ARP_OP_REPLY, evil_mac,	  N5, T_ROUTER_IP,
				  t_router_mac,	    t_router_mac, 7};
	struct arp_spec to_bcast = {RTE_ARP_OP_REPLY, evil_mac, N5, T_ROUTER_IP, bcast,
				    t_router_mac,     0};
	struct arp_spec other_tip = {RTE_ARP_OP_REPLY, evil_mac,     N5, "198.18.0.77",
				     t_router_mac,     t_router_mac, 0};
	struct arp_spec asks_us = {RTE_ARP_OP_REQUEST, evil_mac, N5, T_ROUTER_IP, bcast, NULL, 0};
	struct dp_mac_change ch[4];
	uint8_t mac[6];
	struct rte_mbuf *m;

	(void)state;
	t_dp_start(1, 5, refresh_always); /* n5 is resolved by ARP */
	/* Before the router asked: a reply, a gratuitous request and a gratuitous reply. */
	send1(reply_from_n5(evil_mac));
	send1(arp(&garp_req));
	send1(arp(&garp_rep));
	assert_false(n5_mac(mac));
	assert_int_equal(t_drop(DP_DROP_ARP_UNSOLICITED), 3);
	/* The router asks; while it waits, answers on another VLAN, to broadcast or for
	 * another address do not count. */
	router_asks();
	send1(arp(&tagged));
	send1(arp(&to_bcast));
	send1(arp(&other_tip));
	assert_false(n5_mac(mac));
	assert_int_equal(t_drop(DP_DROP_ARP_UNSOLICITED), 6);
	/* n5 asking for the router's address is answered and teaches nothing. */
	send1(arp(&asks_us));
	m = t_sent(0);
	assert_non_null(m);
	rte_pktmbuf_free(m);
	assert_false(n5_mac(mac));
	/* The real answer teaches the MAC. */
	send1(reply_from_n5(real_mac));
	assert_true(n5_mac(mac));
	assert_memory_equal(mac, real_mac, 6);
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_LEARNED], 1);
	/* One request, one answer: a second reply (the attacker racing) and gratuitous ARP
	 * afterwards move nothing. */
	send1(reply_from_n5(evil_mac));
	send1(arp(&garp_req));
	send1(arp(&garp_rep));
	assert_true(n5_mac(mac));
	assert_memory_equal(mac, real_mac, 6);
	assert_int_equal(t_drop(DP_DROP_ARP_UNSOLICITED), 9);
	get_goes_to(real_mac);
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_MAC_CHANGED], 0);
	assert_int_equal(dp_mac_changes(rig.dp, ch, 4), 0);
	/* The node really moved (new NIC): the refresh's answer moves the MAC, counted and
	 * reported once for the log. */
	router_asks();
	send1(reply_from_n5(new_mac));
	assert_true(n5_mac(mac));
	assert_memory_equal(mac, new_mac, 6);
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_LEARNED], 2);
	assert_int_equal(t_stats().ctr[DP_CTR_ARP_MAC_CHANGED], 1);
	assert_int_equal(dp_mac_changes(rig.dp, ch, 4), 1);
	assert_string_equal(ch[0].name, "n5");
	assert_int_equal(ch[0].ip, t_ip(N5));
	assert_memory_equal(ch[0].old_mac, real_mac, 6);
	assert_memory_equal(ch[0].new_mac, new_mac, 6);
	assert_int_equal(ch[0].changes, 1);
	assert_int_equal(dp_mac_changes(rig.dp, ch, 4), 0);
	get_goes_to(new_mac);
	t_dp_stop();
}

/* The window closes: an answer after arp_retry_ms is not taken (a late attacker, or a
 * request the router gave up on). */
static void short_retry(struct dp_config *c)
{
	c->arp_retry_ms = 10;
}

static void test_late_reply_refused(void **state)
{
	uint8_t mac[6];

	(void)state;
	t_dp_start(1, 5, short_retry);
	router_asks();
	rte_delay_ms(30);
	send1(reply_from_n5(evil_mac));
	assert_false(n5_mac(mac));
	assert_int_equal(t_drop(DP_DROP_ARP_UNSOLICITED), 1);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsolicited_arp_moves_nothing),
		cmocka_unit_test(test_late_reply_refused),
	};

	t_eal_setup("dp_arp", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
