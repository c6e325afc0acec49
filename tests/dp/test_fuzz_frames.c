/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random and mutated Ethernet frames through net_ring into the real workers (dp_worker_poll),
 * two workers: whatever the wire brings, every received packet is counted exactly once
 * (rx = forwarded + returned + answered + dropped, drop reasons summing to dropped) and no
 * mbuf is lost (the pool's in-use count back to 0 once the dp is freed).
 *
 * Frames start from valid templates (ASCII / meta / binary requests over IPv4 and IPv6,
 * multi-gets over several nodes, node replies built from the requests the router really sent,
 * so they hit live slots and cross between workers, from IPv4 and IPv6 nodes, ARP, ICMP echo)
 * and are mutated: byte flips, truncations, random lengths and bytes, VLAN tags, reply-port
 * destinations, broadcast sources, and IP / UDP length fields set to small or wrong values
 * with the UDP checksum signed again over what the fields then say, so that a datagram whose
 * lengths lie still passes the checksum and reaches the checks behind it.
 *
 * RINGWAY_FUZZ_FRAMES (default 1000000) frames from seed RINGWAY_FUZZ_SEED (default 1);
 * scripts/fuzz.sh runs it longer. It prints the frames, the seed and the time taken.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_icmp.h>
#include <rte_mempool.h>

#include "dp_test.h"

#define FRAME_MAX 1600
#define SENT_KEEP 256 /* requests the router forwarded, kept to answer */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* A request the router forwarded: what a node's reply to it needs. */
struct sent {
	uint32_t node_ip;     /* IPv4; for an IPv6 node (v6), its index 1..4 */
	uint16_t router_port; /* host order: the reply goes here */
	uint16_t reqid;
	uint8_t bin;
	uint8_t v6;
};

static struct sent sent[SENT_KEEP];
static uint32_t n_sent, n_sent6;

static const uint8_t node_mac[6] = {0x02, 0, 0, 0, 0x01, 0x01};
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Ethernet + IPv4 + UDP with valid checksums into @p f; returns the frame length. */
static size_t udp_frame(uint8_t *f, const uint8_t *smac, const char *sip, uint16_t sport,
			uint16_t dport, const uint8_t *payload, size_t plen)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memcpy(f, t_router_mac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + 8 + plen));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = t_ip(sip);
	ip->dst_addr = t_ip(T_ROUTER_IP);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + plen));
	udp->dgram_cksum = 0;
	memcpy(udp + 1, payload, plen);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	return 14 + 20 + 8 + plen;
}

/* The IPv6 address 2001:2::<hi>:<lo>-style text @p text into @p out (16 bytes). */
static void ip6_of(const char *text, uint8_t out[16])
{
	t_ip6(text, out);
}

/* Ethernet + IPv6 + UDP (no extension header) with a valid checksum into @p f. */
static size_t udp6_frame(uint8_t *f, const uint8_t *smac, const char *sip, uint16_t sport,
			 uint16_t dport, const uint8_t *payload, size_t plen)
{
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + 14);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);

	memcpy(f, t_router_mac, 6);
	memcpy(f + 6, smac, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	memset(ip6, 0, sizeof(*ip6));
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)(8 + plen));
	ip6->proto = IPPROTO_UDP;
	ip6->hop_limits = 64;
	ip6_of(sip, (uint8_t *)&ip6->src_addr);
	ip6_of(T_ROUTER_IP6, (uint8_t *)&ip6->dst_addr);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(8 + plen));
	udp->dgram_cksum = 0;
	memcpy(udp + 1, payload, plen);
	udp->dgram_cksum = t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
				    IPPROTO_UDP, udp, 8 + plen);
	return 14 + 40 + 8 + plen;
}

static size_t mc_frame(uint8_t *out, uint16_t reqid, uint16_t seq, uint16_t total, const void *body,
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
	return 8 + len;
}

/* A binary GET(K/Q) request for @p key. */
static size_t bin_get(uint8_t *out, uint8_t opcode, const char *key)
{
	size_t kl = strlen(key);

	memset(out, 0, 24);
	out[0] = 0x80;
	out[1] = opcode;
	out[3] = (uint8_t)kl;
	out[11] = (uint8_t)kl; /* total body length */
	out[12] = 0x11;	       /* opaque */
	memcpy(out + 24, key, kl);
	return 24 + kl;
}

/* A client request of a random shape. */
static size_t request(uint8_t *f)
{
	uint8_t body[600], pl[700];
	size_t n = 0;
	int k = (int)below(100000);

	switch (below(8)) {
	case 0:
		n = (size_t)snprintf((char *)body, sizeof(body), "get key%d\r\n", k);
		break;
	case 1:
		n = (size_t)snprintf((char *)body, sizeof(body), "get key%d key%d key%d key%d\r\n",
				     k, k + 1, k + 2, k + 3);
		break;
	case 2:
		n = (size_t)snprintf((char *)body, sizeof(body),
				     "mg key%d v k O%d\r\nmg key%d v q\r\nmn\r\n", k, k, k + 1);
		break;
	case 3:
		n = (size_t)snprintf((char *)body, sizeof(body), "set key%d 0 0 5\r\nhello\r\n", k);
		break;
	case 4: {
		char key[32];

		snprintf(key, sizeof(key), "key%d", k);
		n = bin_get(body, 0x00, key);
		break;
	}
	case 5: {
		char key[32];

		snprintf(key, sizeof(key), "key%d", k);
		n = bin_get(body, 0x0d, key); /* GETKQ */
		snprintf(key, sizeof(key), "key%d", k + 7);
		n += bin_get(body + n, 0x0d, key);
		memset(body + n, 0, 24);
		body[n] = 0x80;
		body[n + 1] = 0x0a; /* NOOP */
		n += 24;
		break;
	}
	case 6:
		n = (size_t)snprintf((char *)body, sizeof(body), "version\r\n");
		break;
	default:
		n = (size_t)snprintf((char *)body, sizeof(body), "gets key%d key%d\r\n", k, k + 9);
		break;
	}
	n = mc_frame(pl, (uint16_t)rnd(), 0, 1, body, n);
	if (below(3) == 0)
		return udp6_frame(f, t_client_mac, T_CLIENT_IP6, (uint16_t)(1024 + below(60000)),
				  T_LISTEN, pl, n);
	return udp_frame(f, t_client_mac, T_CLIENT_IP, (uint16_t)(1024 + below(60000)), T_LISTEN,
			 pl, n);
}

/* A node's reply to a request the router sent (or to a random reply port). */
static size_t reply(uint8_t *f)
{
	static const char *const ascii[] = {
		"END\r\n",
		"VALUE key1 0 5\r\nhello\r\nEND\r\n",
		"VALUE key1 0 5\r\nhello\r\nVALUE key2 0 1\r\nx\r\nEND\r\n",
		"STORED\r\n",
		"VA 5 k\r\nhello\r\nEN\r\n",
		"HD\r\nMN\r\n",
	};
	uint8_t body[200], pl[300], mac[6] = {0x02, 0, 0, 0, 0x01, 0x01};
	struct sent s = {t_ip("198.18.1.1"), (uint16_t)(T_REPLY_BASE + below(T_REPLY_COUNT)),
			 (uint16_t)rnd(), 0, 0};
	size_t n;
	char sip[16];
	uint16_t total = 1 + (below(8) == 0), seq = (uint16_t)below(total);

	if (n_sent > 0 && below(4) != 0)
		s = sent[below(n_sent < SENT_KEEP ? n_sent : SENT_KEEP)];
	if (s.bin) {
		memset(body, 0, 24);
		body[0] = 0x81;
		body[1] = (uint8_t)below(0x20);
		body[7] = (uint8_t)below(2);
		body[11] = 5;
		memcpy(body + 24, "hello", 5);
		n = 29;
	} else {
		const char *a = ascii[below(6)];

		n = strlen(a);
		memcpy(body, a, n);
	}
	n = mc_frame(pl, s.reqid, seq, total, body, n);
	if (s.v6) {
		char sip6[32];

		/* Node i at 2001:2::1:i with 198.18.1.i's MAC (t_dp_start6). */
		snprintf(sip6, sizeof(sip6), "2001:2::1:%u", s.node_ip);
		mac[5] = (uint8_t)s.node_ip;
		return udp6_frame(f, mac, sip6, 11211, s.router_port, pl, n);
	}
	snprintf(sip, sizeof(sip), "%u.%u.%u.%u", s.node_ip & 0xff, s.node_ip >> 8 & 0xff,
		 s.node_ip >> 16 & 0xff, s.node_ip >> 24);
	mac[5] = (uint8_t)(s.node_ip >> 24);
	return udp_frame(f, below(8) ? mac : node_mac, sip, 11211, s.router_port, pl, n);
}

static size_t arp(uint8_t *f)
{
	struct rte_arp_hdr a;
	bool rep = below(2);

	memset(f, 0, 60);
	memcpy(f, rep ? t_router_mac : bcast, 6);
	memcpy(f + 6, node_mac, 6);
	f[12] = 0x08;
	f[13] = 0x06;
	memset(&a, 0, sizeof(a));
	a.arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a.arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a.arp_hlen = 6;
	a.arp_plen = 4;
	a.arp_opcode = rte_cpu_to_be_16(rep ? RTE_ARP_OP_REPLY : RTE_ARP_OP_REQUEST);
	memcpy(&a.arp_data.arp_sha, node_mac, 6);
	a.arp_data.arp_sip = t_ip(below(2) ? "198.18.1.5" : T_CLIENT_IP);
	if (rep)
		memcpy(&a.arp_data.arp_tha, t_router_mac, 6);
	a.arp_data.arp_tip = t_ip(T_ROUTER_IP);
	memcpy(f + 14, &a, sizeof(a));
	return 60;
}

static size_t icmp(uint8_t *f)
{
	uint8_t pl[64];
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);
	size_t len = 8 + below(56);

	for (size_t i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)rnd();
	udp_frame(f, t_client_mac, T_CLIENT_IP, 1, 1, pl, len - 8);
	ip->next_proto_id = IPPROTO_ICMP;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + len));
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memset(ic, 0, sizeof(*ic));
	ic->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, len);
	return 14 + 20 + len;
}

/* Sign the UDP checksum of untagged IPv4 (no options) or IPv6 (UDP next) frame @p f again,
 * over the bytes its UDP length field names, when the frame holds them. */
static void resign(uint8_t *f, size_t len)
{
	if (len >= 14 + 20 + 8 && f[12] == 0x08 && f[13] == 0x00 && f[14] == 0x45) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
		size_t ulen = rte_be_to_cpu_16(udp->dgram_len);
		uint64_t sum;

		if (ulen < 2 || ulen > len - 34)
			return;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		udp->dgram_cksum = 0;
		sum = (uint64_t)rte_raw_cksum(udp, ulen) + rte_raw_cksum(&ip->src_addr, 8) +
		      rte_cpu_to_be_16(IPPROTO_UDP) + udp->dgram_len;
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		udp->dgram_cksum = (uint16_t)~sum ? (uint16_t)~sum : 0xffff;
	} else if (len >= 14 + 40 + 8 && f[12] == 0x86 && f[13] == 0xdd && f[20] == IPPROTO_UDP) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + 14);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);
		size_t ulen = rte_be_to_cpu_16(udp->dgram_len);
		uint16_t keep = udp->dgram_cksum;

		if (ulen > len - 54)
			return;
		/* A length below the header's leaves the checksum field outside the datagram:
		 * it keeps a value that is not 0, and the source port makes the sum right. */
		if (ulen < 8) {
			if (ulen < 2)
				return;
			udp->src_port = 0;
			udp->src_port = t_cksum6((uint8_t *)&ip6->src_addr,
						 (uint8_t *)&ip6->dst_addr, IPPROTO_UDP, udp, ulen);
			udp->dgram_cksum = keep ? keep : 0x1234;
			return;
		}
		udp->dgram_cksum = 0;
		udp->dgram_cksum = t_cksum6((uint8_t *)&ip6->src_addr, (uint8_t *)&ip6->dst_addr,
					    IPPROTO_UDP, udp, ulen);
	}
}

/* Set the IP and UDP length fields of frame @p f to small or wrong values, consistent with
 * each other or not, and sign the checksum again (resign). */
static void lie_lengths(uint8_t *f, size_t len)
{
	uint16_t ulen = (uint16_t)(below(2) ? below(16) : below(1600));
	uint16_t ilen = below(2) ? ulen : (uint16_t)(ulen + below(9) - 4);

	if (len >= 14 + 20 + 8 && f[12] == 0x08 && f[13] == 0x00) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

		ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + ilen));
		udp->dgram_len = rte_cpu_to_be_16(ulen);
	} else if (len >= 14 + 40 + 8 && f[12] == 0x86 && f[13] == 0xdd) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + 14);
		struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);

		ip6->payload_len = rte_cpu_to_be_16(ilen);
		udp->dgram_len = rte_cpu_to_be_16(ulen);
	}
	resign(f, len);
}

/* Mutate the frame in @p f (length @p len, room FRAME_MAX); returns the new length. */
static size_t mutate(uint8_t *f, size_t len)
{
	switch (below(12)) {
	case 8:
		lie_lengths(f, len);
		break;
	case 9: /* byte flips in the headers, then signed again */
		for (uint32_t i = 0, n = 1 + below(3); i < n; i++)
			f[14 + below((uint32_t)(len > 70 ? 56 : len > 14 ? len - 14 : 1))] ^=
				(uint8_t)(1 + below(255));
		resign(f, len);
		break;
	case 0:
	case 1:
	case 2: /* byte flips */
		for (uint32_t i = 0, n = 1 + below(8); i < n; i++)
			f[below((uint32_t)len)] ^= (uint8_t)(1 + below(255));
		break;
	case 3: /* truncation */
		len = below((uint32_t)len + 1);
		break;
	case 4: /* a VLAN tag */
		if (len + 4 <= FRAME_MAX) {
			memmove(f + 16, f + 12, len - 12);
			f[12] = 0x81;
			f[13] = 0x00;
			f[14] = (uint8_t)below(16);
			f[15] = (uint8_t)rnd();
			len += 4;
		}
		break;
	case 5: /* to a reply port */
		if (len >= 14 + 20 + 8 && f[12] == 0x08 && f[13] == 0) {
			uint16_t p = (uint16_t)(T_REPLY_BASE + below(T_REPLY_COUNT + 8));

			f[14 + 22] = (uint8_t)(p >> 8);
			f[14 + 23] = (uint8_t)p;
		}
		break;
	case 6: /* broadcast / multicast source */
		memcpy(f + 6, bcast, 6);
		f[6] = below(2) ? 0xff : 0x01;
		break;
	case 7: /* random tail */
		for (size_t i = below((uint32_t)len); i < len; i++)
			f[i] = (uint8_t)rnd();
		break;
	default: /* unchanged */
		break;
	}
	return len;
}

/* One frame of a random kind. */
static size_t frame(uint8_t *f)
{
	uint32_t k = below(100);
	size_t len;

	if (k < 3) { /* random bytes of a random length */
		len = below(FRAME_MAX + 1);
		for (size_t i = 0; i < len; i++)
			f[i] = (uint8_t)rnd();
		if (len >= 12 && below(2))
			memcpy(f, t_router_mac, 6);
		return len;
	}
	if (k < 45)
		len = request(f);
	else if (k < 85)
		len = reply(f);
	else if (k < 92)
		len = arp(f);
	else
		len = icmp(f);
	return below(3) == 0 ? len : mutate(f, len);
}

/* Remember a request the router forwarded to a node, so replies can answer it. */
static void note_sent(struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l2 = 14;
	const struct rte_ipv4_hdr *ip;
	const struct rte_udp_hdr *udp;
	const uint8_t *pl;

	if (len >= 18 && d[12] == 0x81 && d[13] == 0)
		l2 = 18;
	if (len >= l2 + 40 + 8 + 8 + 1 && d[l2 - 2] == 0x86 && d[l2 - 1] == 0xdd) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(d + l2);
		const uint8_t *a = (const uint8_t *)&ip6->dst_addr;

		udp = (const struct rte_udp_hdr *)(ip6 + 1);
		pl = (const uint8_t *)(udp + 1);
		/* To node 2001:2::1:i (i in 1..4) port 11211 */
		if (rte_be_to_cpu_16(udp->dst_port) != 11211 || a[0] != 0x20 || a[1] != 0x01 ||
		    a[13] != 1 || a[15] < 1 || a[15] > 4)
			return;
		sent[n_sent % SENT_KEEP] =
			(struct sent){a[15], rte_be_to_cpu_16(udp->src_port),
				      (uint16_t)(pl[0] << 8 | pl[1]), pl[8] == 0x80, 1};
		n_sent++;
		n_sent6++;
		return;
	}
	if (len < l2 + 20 + 8 + 8 + 1 || d[l2 - 2] != 0x08 || d[l2 - 1] != 0)
		return;
	ip = (const struct rte_ipv4_hdr *)(d + l2);
	udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + 20);
	if (rte_be_to_cpu_16(udp->dst_port) != 11211 ||
	    (ip->dst_addr & 0xffff) != t_ip("198.18.0.0"))
		return;
	pl = (const uint8_t *)(udp + 1);
	sent[n_sent % SENT_KEEP] = (struct sent){ip->dst_addr, rte_be_to_cpu_16(udp->src_port),
						 (uint16_t)(pl[0] << 8 | pl[1]), pl[8] == 0x80, 0};
	n_sent++;
}

static void drain_tx(void)
{
	struct rte_mbuf *m;

	for (uint16_t q = 0; q < rig.nq; q++)
		while ((m = t_sent(q)) != NULL) {
			note_sent(m);
			rte_pktmbuf_free(m);
		}
}

static void fast_slots(struct dp_config *c)
{
	c->request_timeout_ms = 2;
	c->slots = 1024;
}

static void test_fuzz_frames(void **state)
{
	const char *fe = getenv("RINGWAY_FUZZ_FRAMES"), *se = getenv("RINGWAY_FUZZ_SEED");
	uint64_t frames = fe ? strtoull(fe, NULL, 10) : 1000000,
		 seed = se ? strtoull(se, NULL, 10) : 1;
	uint8_t f[FRAME_MAX];
	uint64_t done = 0, t0 = rte_get_tsc_cycles();
	struct dp_stats s;
	double secs;

	(void)state;
	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	/* Nodes n1, n2 at IPv6 addresses, n3, n4 at IPv4 ones; the router has both. */
	t_dp_start6(2, 0x3, fast_slots);
	while (done < frames) {
		/* A burst for each queue, then both workers poll (replies cross between them). */
		for (uint16_t q = 0; q < 2; q++) {
			for (uint32_t i = 0, n = 1 + below(32); i < n && done < frames; i++) {
				size_t len = frame(f);
				struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);
				char *p;

				assert_non_null(m);
				p = rte_pktmbuf_append(m, (uint16_t)len);
				assert_non_null(p);
				memcpy(p, f, len);
				assert_int_equal(rte_ring_enqueue(rig.rx[q], m), 0);
				done++;
			}
		}
		t_poll(0);
		t_poll(1);
		drain_tx();
		if ((done & 0x3fff) < 32)
			dp_control_poll(rig.dp);
	}
	/* Until every queue, hand-off ring and TX ring is empty. */
	for (int i = 0; i < 64; i++) {
		t_poll(0);
		t_poll(1);
		drain_tx();
	}
	s = t_stats(); /* asserts the identity */
	secs = (double)(rte_get_tsc_cycles() - t0) / (double)rte_get_tsc_hz();
	print_message("# frames %" PRIu64 " seed %" PRIu64 " in %.1f s: rx %" PRIu64
		      " forwarded %" PRIu64 " returned %" PRIu64 " answered %" PRIu64
		      " dropped %" PRIu64 " handed_over %" PRIu64 " multiget_split %" PRIu64 "\n",
		      frames, seed, secs, s.ctr[DP_CTR_RX], s.ctr[DP_CTR_FORWARDED],
		      s.ctr[DP_CTR_RETURNED], s.ctr[DP_CTR_ANSWERED], s.ctr[DP_CTR_DROPPED],
		      s.ctr[DP_CTR_HANDED_OVER], s.ctr[DP_CTR_MGET_SPLIT]);
	assert_int_equal(s.ctr[DP_CTR_RX], frames);
	/* Every kind of outcome happened: the frames reached deep into the worker. */
	assert_true(n_sent6 > 0); /* requests reached IPv6 nodes, so their replies came */
	assert_true(s.ctr[DP_CTR_FORWARDED] > 0 && s.ctr[DP_CTR_RETURNED] > 0 &&
		    s.ctr[DP_CTR_ANSWERED] > 0 && s.ctr[DP_CTR_HANDED_OVER] > 0 &&
		    s.ctr[DP_CTR_MGET_SPLIT] > 0);
	t_dp_stop();
	assert_int_equal(rte_mempool_in_use_count(rig.pool), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_frames),
	};

	t_eal_setup("dp_fuzz", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
