/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DP_TEST_H
#define RINGWAY_DP_TEST_H

/*
 * Shared rig of the dataplane tests: EAL with --no-huge on a unique file prefix, an mbuf
 * pool, a net_ring port whose queue q is a pair of rte_rings the test feeds and drains, a dp
 * over it with a known fleet, and a packet builder that writes real frames (valid checksums
 * unless asked otherwise).
 *
 * The fleet: router 198.18.0.1 (MAC 02:00:00:00:00:01), listen port 11211, reply range
 * 40000..40000+1024, clients 198.18.0.0/24 allowed; nodes n1..n4 at 198.18.1.1..4:11211 with
 * static MACs 02:00:00:00:01:0i; node n5 198.18.1.5:11211 without MAC (resolved by ARP) when
 * the test asks for it.
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_udp.h>

#include "dataplane.h"
#include "placement.h"

#define T_ROUTER_IP   "198.18.0.1"
#define T_CLIENT_IP   "198.18.0.10"
#define T_LISTEN      11211
#define T_REPLY_BASE  40000
#define T_REPLY_COUNT 1024
#define T_QUEUES_MAX  2

extern const uint8_t t_router_mac[6];
extern const uint8_t t_client_mac[6];

struct t_rig {
	struct rte_mempool *pool;
	uint16_t port;
	uint16_t nq;
	struct rte_ring *rx[T_QUEUES_MAX]; /* the test enqueues here: the port's RX */
	struct rte_ring *tx[T_QUEUES_MAX]; /* the port's TX: the test dequeues here */
	struct dp *dp;
	struct pl_placement *pl;
	uint32_t n_nodes;
};

extern struct t_rig rig;

/* EAL (lcores "0" or "0-1"), pool and a port with @p nq queues; once per process. */
void t_eal_setup(const char *name, const char *lcores, uint16_t nq);
/* EAL cleanup and removal of its (empty) runtime directory; returns @p rc. */
int t_eal_teardown(int rc);

/* A dp with @p workers workers over the rig's port, the fleet published (nodes n1..n_nodes;
 * n5 has no static MAC). @p tweak may edit the config before creation; one that clears
 * router_ip (IPv6-only) leaves the publishing to t_dp_start6. */
void t_dp_start(uint16_t workers, uint32_t n_nodes, void (*tweak)(struct dp_config *));
/* Free the dp and drain both rings of every queue. */
void t_dp_stop(void);
/* Placement of the rig's fleet with @p n nodes. */
struct pl_placement *t_fleet(uint32_t n);
/* Publish @p pl, whose members are the rig's nodes n1..n@p n, with their static MACs. */
void t_publish(const struct pl_placement *pl, uint32_t n);

/* Packet description for t_pkt(). */
struct t_pkt_spec {
	const uint8_t *src_mac, *dst_mac;
	const char *sip, *dip;
	uint16_t sport, dport;
	const void *payload;
	size_t plen;
	uint16_t vlan;	   /* tag with this TCI when non-zero */
	uint8_t ip_opts;   /* bytes of IP options (multiple of 4) */
	uint16_t frag;	   /* fragment_offset field (host order) */
	uint8_t proto;	   /* 0 = UDP */
	int udp_len_delta; /* added to the UDP length field after checksums */
	bool bad_ip_csum;
	bool no_udp_csum; /* UDP checksum 0 */
};

struct rte_mbuf *t_pkt(const struct t_pkt_spec *s);
/* A client request: frame header (reqid, 0, 1) + @p text, from T_CLIENT_IP:sport. */
struct rte_mbuf *t_request(uint16_t sport, uint16_t reqid, const void *text, size_t len);
/* The MAC of the fleet's node at @p sip (02:00:00:00:01:0i for 198.18.1.i; n1's for any
 * other address). */
void t_node_mac(const char *sip, uint8_t mac[6]);
/* A node reply datagram to the router from @p sip's MAC (t_node_mac): frame (reqid, seq,
 * total) + body. */
struct rte_mbuf *t_reply(const char *sip, uint16_t sport, uint16_t dport, uint16_t reqid,
			 uint16_t seq, uint16_t total, const void *body, size_t len);

/* Enqueue on queue @p q's RX ring, poll worker @p w once. */
void t_inject(uint16_t q, struct rte_mbuf *m);
void t_poll(uint16_t w);
/* Dequeue one packet from queue @p q's TX ring (NULL when empty) / count what is there. */
struct rte_mbuf *t_sent(uint16_t q);
unsigned int t_sent_count(uint16_t q);

/* Parsed view of a sent packet; asserts it is Ethernet (+VLAN) / IPv4 / UDP with valid IP and
 * UDP checksums (UDP checksum 0 allowed when @p allow_zero_csum). */
struct t_view {
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint8_t *payload;
	size_t plen;
	uint16_t reqid, seq, total;
};
void t_view_udp(struct rte_mbuf *m, struct t_view *v, bool allow_zero_csum);

uint32_t t_ip(const char *dotted);

/* IPv6: the router's address6, a client in the allowed prefix 2001:2::100/121, an outsider;
 * t_dp_start6 gives the dp address6 and that prefix, and publishes nodes n1..n4 of which
 * those flagged in @p v6_mask (bit i: node i+1) are at 2001:2::1:i+1 instead of
 * 198.18.1.i+1 (same static MACs). */
#define T_ROUTER_IP6 "2001:2::1"
#define T_CLIENT_IP6 "2001:2::100"
void t_ip6(const char *text, uint8_t out[16]);
void t_dp_start6(uint16_t workers, uint32_t v6_mask, void (*tweak)(struct dp_config *));

/* IPv6 packet description for t_pkt6(): UDP unless @c proto (then the payload is that
 * protocol's message, its checksum at @c cksum_off computed with the pseudo-header). */
struct t_pkt6_spec {
	const uint8_t *src_mac, *dst_mac;
	const char *sip, *dip;
	uint16_t sport, dport;
	const void *payload;
	size_t plen;
	uint16_t vlan;
	const uint8_t *ext; /* extension headers put after the IPv6 header, as they are */
	size_t ext_len;
	uint8_t ext_first; /* next header of the IPv6 header when ext is set */
	uint8_t proto;	   /* 0 = UDP; the upper layer (the last extension header names it) */
	size_t cksum_off;  /* proto != 0: where its checksum goes in the payload */
	uint8_t hop;	   /* 0 = 64 */
	int plen_delta;	   /* added to payload_len after everything */
	bool zero_csum;	   /* UDP checksum 0 */
	bool bad_csum;	   /* checksum flipped */
};
struct rte_mbuf *t_pkt6(const struct t_pkt6_spec *s);
/* A request from T_CLIENT_IP6 / a node's reply from @p sip (IPv6 text), as t_request / t_reply. */
struct rte_mbuf *t_request6(uint16_t sport, uint16_t reqid, const void *text, size_t len);
struct rte_mbuf *t_reply6(const char *sip, const uint8_t mac[6], uint16_t sport, uint16_t dport,
			  uint16_t reqid, uint16_t seq, uint16_t total, const void *body,
			  size_t len);
/* Parsed view of a sent IPv6 UDP packet; asserts the header, lengths and a valid checksum. */
struct t_view6 {
	struct rte_ether_hdr *eth;
	struct rte_ipv6_hdr *ip6;
	struct rte_udp_hdr *udp;
	uint8_t *payload;
	size_t plen;
	uint16_t reqid, seq, total;
};
void t_view_udp6(struct rte_mbuf *m, struct t_view6 *v);
/* The ones' complement checksum over an IPv6 pseudo-header and @p len bytes at @p l4. */
uint16_t t_cksum6(const uint8_t src[16], const uint8_t dst[16], uint8_t proto, const void *l4,
		  size_t len);

/* The counters; asserts the identity holds and returns the totals. */
struct dp_stats t_stats(void);
/* The counters without the identity check (a reply may be between two workers). */
struct dp_stats t_stats_raw(void);
uint64_t t_drop(enum dp_drop d);

/* Member index owning @p key in the rig's placement. */
int32_t t_owner(const char *key);

#endif /* RINGWAY_DP_TEST_H */
