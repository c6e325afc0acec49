/* SPDX-License-Identifier: BSD-3-Clause */
/* The dataplane test rig: see dp_test.h. */

#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "dp_test.h"
#include "rw_rundir.h"

const uint8_t t_router_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
const uint8_t t_client_mac[6] = {0x02, 0, 0, 0, 0, 0x10};

struct t_rig rig;

uint32_t t_ip(const char *dotted)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, dotted, &a), 1);
	return a.s_addr;
}

void t_eal_setup(const char *name, const char *lcores, uint16_t nq)
{
	char prefix[64];
	char *argv[] = {
		(char *)name,  "-l",	      (char *)lcores,
		"--no-huge",   "-m",	      "256",
		"--no-pci",    "--no-shconf", "--no-telemetry",
		"--log-level", "error",	      "--file-prefix",
		prefix,
	};
	struct rte_eth_conf conf;
	char rname[32];

	snprintf(prefix, sizeof(prefix), "%s_%d", name, getpid());
	rw_rundir_remove_at_exit(prefix);
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
	rig.pool = rte_pktmbuf_pool_create("t_pool", 8191, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (rig.pool == NULL)
		exit(1);
	rig.nq = nq;
	for (uint16_t q = 0; q < nq; q++) {
		snprintf(rname, sizeof(rname), "t_rx%u", q);
		rig.rx[q] = rte_ring_create(rname, 4096, 0, 0);
		snprintf(rname, sizeof(rname), "t_tx%u", q);
		rig.tx[q] = rte_ring_create(rname, 4096, 0, 0);
	}
	int port = rte_eth_from_rings("t_ring", rig.rx, nq, rig.tx, nq, 0);

	if (port < 0)
		exit(1);
	rig.port = (uint16_t)port;
	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(rig.port, nq, nq, &conf) != 0)
		exit(1);
	for (uint16_t q = 0; q < nq; q++)
		if (rte_eth_rx_queue_setup(rig.port, q, 1024, 0, NULL, rig.pool) != 0 ||
		    rte_eth_tx_queue_setup(rig.port, q, 1024, 0, NULL) != 0)
			exit(1);
	if (rte_eth_dev_start(rig.port) != 0)
		exit(1);
}

int t_eal_teardown(int rc)
{
	rte_eth_dev_stop(rig.port);
	rte_eal_cleanup();
	rw_rundir_remove(); /* and again at exit, whichever way the process ends */
	return rc;
}

struct pl_placement *t_fleet(uint32_t n)
{
	struct pl_member m[8];
	struct pl_config c = {0};

	memset(m, 0, sizeof(m));
	for (uint32_t i = 0; i < n; i++) {
		snprintf(m[i].name, sizeof(m[i].name), "n%u", i + 1);
		snprintf(m[i].addr, sizeof(m[i].addr), "198.18.1.%u", i + 1);
		m[i].port = 11211;
		m[i].weight = 1;
	}
	c.algo = PL_ALGO_RING;
	return pl_build(&c, m, n);
}

void t_publish(const struct pl_placement *pl, uint32_t n)
{
	struct dp_node_mac macs[8];

	assert_true(n <= 8);
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < n; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	assert_int_equal(dp_publish_placement(rig.dp, pl, macs, 2), 0);
}

void t_dp_start(uint16_t workers, uint32_t n_nodes, void (*tweak)(struct dp_config *))
{
	struct dp_config c;
	struct dp_node_mac macs[8];

	dp_config_defaults(&c);
	c.port_id = rig.port;
	c.n_workers = workers;
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
	if (tweak)
		tweak(&c);
	rig.dp = dp_create(&c);
	assert_non_null(rig.dp);
	rig.pl = t_fleet(n_nodes);
	rig.n_nodes = n_nodes;
	assert_non_null(rig.pl);
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < n_nodes; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = i != 4; /* n5 is resolved by ARP */
	}
	if (c.router_ip == 0)
		return; /* IPv6-only: no IPv4 fleet (t_dp_start6 publishes the nodes) */
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 1), 0);
	assert_int_equal(dp_epoch(rig.dp), 1);
}

void t_dp_stop(void)
{
	void *m;

	dp_free(rig.dp);
	rig.dp = NULL;
	pl_free(rig.pl);
	rig.pl = NULL;
	for (uint16_t q = 0; q < rig.nq; q++) {
		while (rte_ring_dequeue(rig.rx[q], &m) == 0)
			rte_pktmbuf_free(m);
		while (rte_ring_dequeue(rig.tx[q], &m) == 0)
			rte_pktmbuf_free(m);
	}
}

struct rte_mbuf *t_pkt(const struct t_pkt_spec *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	size_t l2 = sizeof(struct rte_ether_hdr) + (s->vlan ? sizeof(struct rte_vlan_hdr) : 0);
	size_t l3 = sizeof(struct rte_ipv4_hdr) + s->ip_opts;
	size_t len = l2 + l3 + sizeof(struct rte_udp_hdr) + s->plen;
	uint8_t *p;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memset(p, 0, len);
	eth = (struct rte_ether_hdr *)p;
	memcpy(&eth->src_addr, s->src_mac ? s->src_mac : t_client_mac, 6);
	memcpy(&eth->dst_addr, s->dst_mac ? s->dst_mac : t_router_mac, 6);
	if (s->vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(s->vlan);
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	} else {
		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	}
	ip = (struct rte_ipv4_hdr *)(p + l2);
	ip->version_ihl = (uint8_t)(0x40 | (l3 / 4));
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - l2));
	ip->packet_id = rte_cpu_to_be_16(7);
	ip->fragment_offset = rte_cpu_to_be_16(s->frag);
	ip->time_to_live = 63;
	ip->next_proto_id = s->proto ? s->proto : IPPROTO_UDP;
	ip->src_addr = t_ip(s->sip ? s->sip : T_CLIENT_IP);
	ip->dst_addr = t_ip(s->dip ? s->dip : T_ROUTER_IP);
	for (size_t i = 0; i < s->ip_opts; i++)
		((uint8_t *)(ip + 1))[i] = 1; /* NOP options */
	udp = (struct rte_udp_hdr *)((uint8_t *)ip + l3);
	udp->src_port = rte_cpu_to_be_16(s->sport);
	udp->dst_port = rte_cpu_to_be_16(s->dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + s->plen));
	if (s->plen)
		memcpy(udp + 1, s->payload, s->plen);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (s->bad_ip_csum)
		ip->hdr_checksum ^= 0x5a5a;
	if (!s->no_udp_csum)
		udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	udp->dgram_len =
		rte_cpu_to_be_16((uint16_t)((int)(sizeof(*udp) + s->plen) + s->udp_len_delta));
	return m;
}

static size_t frame(uint8_t *out, uint16_t reqid, uint16_t seq, uint16_t total, const void *body,
		    size_t len)
{
	out[0] = (uint8_t)(reqid >> 8);
	out[1] = (uint8_t)reqid;
	out[2] = (uint8_t)(seq >> 8);
	out[3] = (uint8_t)seq;
	out[4] = (uint8_t)(total >> 8);
	out[5] = (uint8_t)total;
	out[6] = out[7] = 0;
	memcpy(out + 8, body, len);
	return len + 8;
}

struct rte_mbuf *t_request(uint16_t sport, uint16_t reqid, const void *text, size_t len)
{
	uint8_t buf[1500];
	struct t_pkt_spec s = {0};

	assert_true(len + 8 <= sizeof(buf));
	s.payload = buf;
	s.plen = frame(buf, reqid, 0, 1, text, len);
	s.sport = sport;
	s.dport = T_LISTEN;
	return t_pkt(&s);
}

void t_node_mac(const char *sip, uint8_t mac[6])
{
	uint32_t ip = rte_be_to_cpu_32(t_ip(sip));
	uint8_t m[6] = {0x02, 0, 0, 0, 0x01, 0x01};

	if ((ip >> 8) == (rte_be_to_cpu_32(t_ip("198.18.1.0")) >> 8))
		m[5] = (uint8_t)ip;
	memcpy(mac, m, 6);
}

struct rte_mbuf *t_reply(const char *sip, uint16_t sport, uint16_t dport, uint16_t reqid,
			 uint16_t seq, uint16_t total, const void *body, size_t len)
{
	uint8_t buf[1500];
	uint8_t node_mac[6];
	struct t_pkt_spec s = {0};

	assert_true(len + 8 <= sizeof(buf));
	t_node_mac(sip, node_mac);
	s.src_mac = node_mac;
	s.sip = sip;
	s.payload = buf;
	s.plen = frame(buf, reqid, seq, total, body, len);
	s.sport = sport;
	s.dport = dport;
	return t_pkt(&s);
}

void t_inject(uint16_t q, struct rte_mbuf *m)
{
	assert_int_equal(rte_ring_enqueue(rig.rx[q], m), 0);
}

void t_poll(uint16_t w)
{
	dp_worker_poll(dp_worker_get(rig.dp, w));
}

struct rte_mbuf *t_sent(uint16_t q)
{
	void *m; /* not through (void **)&mbuf_ptr: a type-punned write */

	return rte_ring_dequeue(rig.tx[q], &m) == 0 ? m : NULL;
}

unsigned int t_sent_count(uint16_t q)
{
	return rte_ring_count(rig.tx[q]);
}

void t_view_udp(struct rte_mbuf *m, struct t_view *v, bool allow_zero_csum)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	size_t l2 = sizeof(struct rte_ether_hdr);

	assert_non_null(m);
	v->eth = (struct rte_ether_hdr *)p;
	if (v->eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN))
		l2 += sizeof(struct rte_vlan_hdr);
	v->ip = (struct rte_ipv4_hdr *)(p + l2);
	assert_int_equal(v->ip->next_proto_id, IPPROTO_UDP);
	assert_int_equal(rte_raw_cksum(v->ip, rte_ipv4_hdr_len(v->ip)), 0xffff);
	assert_int_equal(rte_pktmbuf_data_len(m), l2 + rte_be_to_cpu_16(v->ip->total_length));
	v->udp = (struct rte_udp_hdr *)((uint8_t *)v->ip + rte_ipv4_hdr_len(v->ip));
	assert_int_equal(rte_be_to_cpu_16(v->udp->dgram_len),
			 rte_be_to_cpu_16(v->ip->total_length) - rte_ipv4_hdr_len(v->ip));
	if (!(allow_zero_csum && v->udp->dgram_cksum == 0)) {
		uint16_t got = v->udp->dgram_cksum;

		v->udp->dgram_cksum = 0;
		assert_int_equal(got, rte_ipv4_udptcp_cksum(v->ip, v->udp));
		v->udp->dgram_cksum = got;
	}
	v->payload = (uint8_t *)(v->udp + 1);
	v->plen = rte_be_to_cpu_16(v->udp->dgram_len) - sizeof(struct rte_udp_hdr);
	assert_true(v->plen >= 8);
	v->reqid = (uint16_t)(v->payload[0] << 8 | v->payload[1]);
	v->seq = (uint16_t)(v->payload[2] << 8 | v->payload[3]);
	v->total = (uint16_t)(v->payload[4] << 8 | v->payload[5]);
}

struct dp_stats t_stats_raw(void)
{
	struct dp_stats s;

	assert_int_equal(dp_stats_get(rig.dp, -1, &s), 0);
	return s;
}

struct dp_stats t_stats(void)
{
	struct dp_stats s;

	assert_int_equal(dp_stats_get(rig.dp, -1, &s), 0);
	if (!dp_stats_identity(&s))
		fail_msg("identity broken: rx %lu fwd %lu ret %lu ans %lu drop %lu",
			 (unsigned long)s.ctr[DP_CTR_RX], (unsigned long)s.ctr[DP_CTR_FORWARDED],
			 (unsigned long)s.ctr[DP_CTR_RETURNED],
			 (unsigned long)s.ctr[DP_CTR_ANSWERED],
			 (unsigned long)s.ctr[DP_CTR_DROPPED]);
	return s;
}

uint64_t t_drop(enum dp_drop d)
{
	return t_stats().drop[d];
}

int32_t t_owner(const char *key)
{
	return pl_lookup(rig.pl, key, strlen(key));
}

void t_ip6(const char *text, uint8_t out[16])
{
	assert_int_equal(inet_pton(AF_INET6, text, out), 1);
}

static void (*tweak6_user)(struct dp_config *);

/* address6 2001:2::1, IPv6 clients 2001:2::100/121, then the test's own tweak. */
static void tweak6(struct dp_config *c)
{
	uint8_t p[16];

	t_ip6(T_ROUTER_IP6, c->router_ip6);
	t_ip6("2001:2::100", p);
	memcpy(c->allowed6[0].addr, p, 16);
	memset(c->allowed6[0].mask, 0xff, 16);
	((uint8_t *)c->allowed6[0].mask)[15] = 0x80; /* /121 */
	c->n_allowed6 = 1;
	if (tweak6_user)
		tweak6_user(c);
}

void t_dp_start6(uint16_t workers, uint32_t v6_mask, void (*tweak)(struct dp_config *))
{
	struct pl_member mb[4];
	struct pl_config pc = {0};
	struct dp_node_mac macs[4];

	tweak6_user = tweak;
	t_dp_start(workers, 4, tweak6);
	memset(mb, 0, sizeof(mb));
	memset(macs, 0, sizeof(macs));
	for (uint32_t i = 0; i < 4; i++) {
		uint8_t mac[6] = {0x02, 0, 0, 0, 0x01, (uint8_t)(i + 1)};

		snprintf(mb[i].name, sizeof(mb[i].name), "n%u", i + 1);
		if (v6_mask & (1u << i))
			snprintf(mb[i].addr, sizeof(mb[i].addr), "2001:2::1:%u", i + 1);
		else
			snprintf(mb[i].addr, sizeof(mb[i].addr), "198.18.1.%u", i + 1);
		mb[i].port = 11211;
		mb[i].weight = 1;
		memcpy(macs[i].mac, mac, 6);
		macs[i].has_mac = true;
	}
	pc.algo = PL_ALGO_RING;
	pl_free(rig.pl);
	rig.pl = pl_build(&pc, mb, 4);
	assert_non_null(rig.pl);
	assert_int_equal(dp_publish_placement(rig.dp, rig.pl, macs, 2), 0);
	/* The IPv4 fleet of t_dp_start is a set-up step, not a membership flip: forget it, or
	 * writes would also delete at its nodes (dp_warm.c). */
	dp_warm_forget(rig.dp);
}

static uint64_t t_sum(const uint8_t *p, size_t len, uint64_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t t_cksum6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, const void *l4,
		  size_t len)
{
	uint64_t sum = t_sum(src, 16, 0);

	sum = t_sum(dst, 16, sum);
	sum += (uint32_t)len + proto;
	sum = t_sum(l4, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return rte_cpu_to_be_16((uint16_t)~sum);
}

struct rte_mbuf *t_pkt6(const struct t_pkt6_spec *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
	size_t l2 = sizeof(struct rte_ether_hdr) + (s->vlan ? sizeof(struct rte_vlan_hdr) : 0);
	size_t l4 = s->proto ? s->plen : sizeof(struct rte_udp_hdr) + s->plen;
	size_t len = l2 + sizeof(struct rte_ipv6_hdr) + s->ext_len + l4;
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip6;
	uint8_t *p, *u;
	uint16_t c;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memset(p, 0, len);
	eth = (struct rte_ether_hdr *)p;
	memcpy(&eth->src_addr, s->src_mac ? s->src_mac : t_client_mac, 6);
	memcpy(&eth->dst_addr, s->dst_mac ? s->dst_mac : t_router_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	if (s->vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(s->vlan);
		vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	}
	ip6 = (struct rte_ipv6_hdr *)(p + l2);
	ip6->vtc_flow = rte_cpu_to_be_32(UINT32_C(6) << 28 | 0x12345);
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)(s->ext_len + l4));
	ip6->proto = s->ext ? s->ext_first : s->proto ? s->proto : IPPROTO_UDP;
	ip6->hop_limits = s->hop ? s->hop : 64;
	t_ip6(s->sip ? s->sip : T_CLIENT_IP6, (uint8_t *)&ip6->src_addr);
	t_ip6(s->dip ? s->dip : T_ROUTER_IP6, (uint8_t *)&ip6->dst_addr);
	if (s->ext_len)
		memcpy(ip6 + 1, s->ext, s->ext_len);
	u = (uint8_t *)(ip6 + 1) + s->ext_len;
	if (s->proto) {
		memcpy(u, s->payload, s->plen);
		memset(u + s->cksum_off, 0, 2);
		c = t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr, s->proto, u, l4);
		if (s->bad_csum)
			c ^= 0x5a5a;
		memcpy(u + s->cksum_off, &c, 2);
	} else {
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)u;

		udp->src_port = rte_cpu_to_be_16(s->sport);
		udp->dst_port = rte_cpu_to_be_16(s->dport);
		udp->dgram_len = rte_cpu_to_be_16((uint16_t)l4);
		if (s->plen)
			memcpy(udp + 1, s->payload, s->plen);
		c = t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr, IPPROTO_UDP, udp,
			     l4);
		if (c == 0)
			c = 0xffff;
		if (s->bad_csum)
			c ^= 0x5a5a;
		udp->dgram_cksum = s->zero_csum ? 0 : c;
	}
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)((int)(s->ext_len + l4) + s->plen_delta));
	return m;
}

struct rte_mbuf *t_request6(uint16_t sport, uint16_t reqid, const void *text, size_t len)
{
	uint8_t buf[1500];
	struct t_pkt6_spec s = {0};

	assert_true(len + 8 <= sizeof(buf));
	s.payload = buf;
	s.plen = frame(buf, reqid, 0, 1, text, len);
	s.sport = sport;
	s.dport = T_LISTEN;
	return t_pkt6(&s);
}

struct rte_mbuf *t_reply6(const char *sip, const uint8_t mac[6], uint16_t sport, uint16_t dport,
			  uint16_t reqid, uint16_t seq, uint16_t total, const void *body,
			  size_t len)
{
	uint8_t buf[1500];
	struct t_pkt6_spec s = {0};

	assert_true(len + 8 <= sizeof(buf));
	s.src_mac = mac;
	s.sip = sip;
	s.payload = buf;
	s.plen = frame(buf, reqid, seq, total, body, len);
	s.sport = sport;
	s.dport = dport;
	return t_pkt6(&s);
}

void t_view_udp6(struct rte_mbuf *m, struct t_view6 *v)
{
	uint8_t *p;
	size_t l2 = sizeof(struct rte_ether_hdr);
	uint16_t got;

	assert_non_null(m);
	p = rte_pktmbuf_mtod(m, uint8_t *);
	v->eth = (struct rte_ether_hdr *)p;
	if (v->eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
		l2 += sizeof(struct rte_vlan_hdr);
		assert_int_equal(((struct rte_vlan_hdr *)(v->eth + 1))->eth_proto,
				 rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6));
	} else {
		assert_int_equal(v->eth->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6));
	}
	v->ip6 = (struct rte_ipv6_hdr *)(p + l2);
	assert_int_equal(rte_be_to_cpu_32(v->ip6->vtc_flow) >> 28, 6);
	assert_int_equal(v->ip6->proto, IPPROTO_UDP);
	assert_int_equal(rte_pktmbuf_data_len(m),
			 l2 + sizeof(*v->ip6) + rte_be_to_cpu_16(v->ip6->payload_len));
	assert_int_equal(rte_pktmbuf_pkt_len(m), rte_pktmbuf_data_len(m));
	v->udp = (struct rte_udp_hdr *)(v->ip6 + 1);
	assert_int_equal(v->udp->dgram_len, v->ip6->payload_len);
	got = v->udp->dgram_cksum;
	assert_int_not_equal(got, 0);
	v->udp->dgram_cksum = 0;
	uint16_t want = t_cksum6((uint8_t *)&v->ip6->src_addr, (uint8_t *)&v->ip6->dst_addr,
				 IPPROTO_UDP, v->udp, rte_be_to_cpu_16(v->udp->dgram_len));
	assert_int_equal(got, want == 0 ? 0xffff : want);
	v->udp->dgram_cksum = got;
	v->payload = (uint8_t *)(v->udp + 1);
	v->plen = rte_be_to_cpu_16(v->udp->dgram_len) - sizeof(struct rte_udp_hdr);
	assert_true(v->plen >= 8);
	v->reqid = (uint16_t)(v->payload[0] << 8 | v->payload[1]);
	v->seq = (uint16_t)(v->payload[2] << 8 | v->payload[3]);
	v->total = (uint16_t)(v->payload[4] << 8 | v->payload[5]);
}
