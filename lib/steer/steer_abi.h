/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_STEER_ABI_H
#define RINGWAY_STEER_ABI_H

/*
 * What the XDP steering program (steer.bpf.c) and its loader (steer.c) agree on: the
 * read-only configuration block, the map and program names, and the counter slots.
 * Included by both the BPF side (clang -target bpf) and userspace, so it uses only
 * <linux/types.h> types and holds no code.
 *
 * Byte order: steer_cfg fields marked "network order" are compared with packet bytes
 * as-is; everything else is host order.
 */

#include <linux/types.h>

/** Name of the XDP program: how the loader recognises a program left by a crashed run. */
#define STEER_PROG_NAME "ringway_steer"
/** Name of the XSKMAP the AF_XDP PMD fills (DPDK 22.11 looks it up by exactly this name). */
#define STEER_XSKS_MAP_NAME "xsks_map"
/** Name of the per-CPU counters map (see STEER_FOREACH_CTR). */
#define STEER_STATS_MAP_NAME "steer_stats"
/** Name of the read-only configuration variable, patched into the object before load. */
#define STEER_CFG_SYMBOL "steer_cfg"

/** Entries of xsks_map: RX queue indexes 0 .. STEER_MAX_QUEUES - 1 can be steered. */
#define STEER_MAX_QUEUES 64
/** Most UDP listen ports the program matches for requests. */
#define STEER_MAX_LISTEN_PORTS 16
/** steer_cfg.magic in the unpatched object; the loader checks it before patching. */
#define STEER_CFG_MAGIC 0x52575354u /* "RWST" */
/** steer_cfg.flags: router_ip6 is set, IPv6 is steered (else IPv6 counts as not ours). */
#define STEER_CFG_IPV6 0x1u
/**
 * steer_cfg.flags: only frames on VLAN vlan_id are ours (0: untagged or priority-tagged);
 * without it any one tag (or none) is.
 */
#define STEER_CFG_VLAN 0x2u
/**
 * IPv6 extension headers (hop-by-hop, routing, destination options) the program walks
 * before UDP; a packet with more passes to the kernel (pass_ipv6_ext).
 */
#define STEER_MAX_EXT_HDRS 4

/**
 * The configuration the program reads (const volatile .rodata). The object as built has
 * magic set and everything else zero, which steers nothing (every packet passes with
 * reason "unconfigured": no IPv4 address and no IPv6 flag); the loader writes a filled copy
 * into the object it hands out.
 */
struct steer_cfg {
	__u32 magic;				    /**< STEER_CFG_MAGIC */
	__u32 router_ip;			    /**< network order; 0 = none */
	__u16 listen_ports[STEER_MAX_LISTEN_PORTS]; /**< network order; the first n used */
	__u16 n_listen_ports;			    /**< 1 .. STEER_MAX_LISTEN_PORTS */
	__u16 reply_port_base;			    /**< host order: first reply port */
	__u16 reply_port_count;			    /**< ports base .. base + count - 1 */
	__u16 flags;				    /**< STEER_CFG_IPV6, STEER_CFG_VLAN */
	__u32 router_ip6[4]; /**< network order (16 bytes as words), with STEER_CFG_IPV6 */
	__u16 vlan_id;	     /**< host order, 0..4094, with STEER_CFG_VLAN */
	__u16 reserved;	     /**< 0 */
};

/*
 * One counter per decision. Every packet the program sees increments exactly one of the
 * TO_XSK_* or PASS_* counters; XSK_MISSING additionally counts TO_XSK_* packets that went
 * to the kernel because no AF_XDP socket was bound to their RX queue. Names are the
 * telemetry keys.
 */
#define STEER_FOREACH_CTR(_)                                                                     \
	_(TO_XSK_REQUEST, "to_xsk_request")	  /* UDP to router address, a listen port */     \
	_(TO_XSK_REPLY, "to_xsk_reply")		  /* UDP to router address, reply port range */  \
	_(PASS_UNCONFIGURED, "pass_unconfigured") /* object not patched by the loader */         \
	_(PASS_SHORT_ETH, "pass_short_eth")   /* frame shorter than its Ethernet/VLAN header */  \
	_(PASS_OTHER_VLAN, "pass_other_vlan") /* STEER_CFG_VLAN: tagged otherwise (or not) */    \
	_(PASS_NOT_IPV4, "pass_not_ipv4")     /* ARP, others, 2 tags; IPv6 if no router_ip6 */   \
	_(PASS_BAD_IPV4, "pass_bad_ipv4")     /* truncated, version != 4, IHL < 5, bad length */ \
	_(PASS_BAD_IPV6, "pass_bad_ipv6")     /* truncated (ext.) header, version, length */     \
	_(PASS_IPV6_EXT, "pass_ipv6_ext")     /* over STEER_MAX_EXT_HDRS extension headers */    \
	_(PASS_FRAGMENT, "pass_fragment")     /* IPv4 MF or offset; IPv6 fragment header */      \
	_(PASS_NOT_UDP, "pass_not_udp")	      /* ICMP, ICMPv6, TCP, ... */                       \
	_(PASS_OTHER_ADDR, "pass_other_addr") /* not to the router address (ND multicast) */     \
	_(PASS_BAD_UDP, "pass_bad_udp")	      /* truncated UDP header or lying UDP length */     \
	_(PASS_OTHER_PORT, "pass_other_port") /* UDP to the router, not a port of ours */        \
	_(XSK_MISSING, "xsk_missing")	      /* of TO_XSK_*: no socket on the queue */          \
	_(TO_XSK_FRAGMENT, "to_xsk_fragment") /* a UDP fragment to the router: it reassembles */

#define STEER_CTR_ENUM_(id, name) STEER_CTR_##id,
/** Counter slots: index into steer_stats. */
enum steer_ctr { STEER_FOREACH_CTR(STEER_CTR_ENUM_) STEER_CTR_COUNT };
#undef STEER_CTR_ENUM_

#endif /* RINGWAY_STEER_ABI_H */
