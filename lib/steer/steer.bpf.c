/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XDP steering for ringway's AF_XDP mode: memcached UDP for the router goes to the AF_XDP
 * socket of the packet's RX queue, everything else to the kernel.
 *
 * Ours: Ethernet (at most one 802.1Q tag: with STEER_CFG_VLAN the port's VLAN only, untagged
 * or a priority tag for VLAN 0) / IPv4 (options allowed, not a fragment) / UDP
 * to steer_cfg.router_ip, or Ethernet / IPv6 (up to STEER_MAX_EXT_HDRS hop-by-hop, routing
 * or destination-options headers, no fragment header) / UDP to steer_cfg.router_ip6, to a
 * listen port (requests) or into the reply port range (replies from the nodes), with a UDP
 * length that fits the IP payload. Everything else, including any header that is truncated
 * or inconsistent, passes to the kernel: the kernel owns ARP, ND, ICMP, ICMPv6, TCP (ssh),
 * fragments other than UDP ones to the router (ringway reassembles those) and whatever else
 * arrives on a shared NIC. UDP checksums are the router's to check (an IPv6 datagram with
 * checksum 0 is steered and dropped there under its own reason).
 *
 * Configuration is read-only data written by the loader (steer.c) into the object before
 * the AF_XDP PMD loads it; there are no build flavours.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"

#define IP_MF	      0x2000
#define IP_OFFSET     0x1fff
#define VLAN_VID_MASK 0x0fff

/* Read-only configuration: the loader patches it in the object file (steer_cfg_patch). */
const volatile struct steer_cfg steer_cfg = {.magic = STEER_CFG_MAGIC};

/* One AF_XDP socket per RX queue (key: queue index), inserted by the AF_XDP PMD. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* Decision counters per CPU (slots: enum steer_ctr), summed by the loader for telemetry. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STEER_CTR_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} steer_stats SEC(".maps");

struct vlan_tag {
	__be16 tci;
	__be16 inner_proto;
};

static __always_inline void count(__u32 ctr)
{
	__u64 *n = bpf_map_lookup_elem(&steer_stats, &ctr);

	if (n)
		*n += 1; /* per-CPU slot: no other writer */
}

static __always_inline int pass(__u32 ctr)
{
	count(ctr);
	return XDP_PASS;
}

/* Counter for UDP destination @port (network order): request, reply or other port. */
static __always_inline __u32 match_port(__be16 port)
{
	__u16 host = bpf_ntohs(port);
	__u32 i;

	for (i = 0; i < STEER_MAX_LISTEN_PORTS; i++) {
		if (i >= steer_cfg.n_listen_ports)
			break;
		if (port == steer_cfg.listen_ports[i])
			return STEER_CTR_TO_XSK_REQUEST;
	}
	/* Unsigned: a port below the base wraps to a huge offset. */
	if ((__u32)host - steer_cfg.reply_port_base < steer_cfg.reply_port_count)
		return STEER_CTR_TO_XSK_REPLY;
	return STEER_CTR_PASS_OTHER_PORT;
}

static __always_inline int to_xsk(struct xdp_md *ctx, __u32 ctr)
{
	int act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);

	count(ctr);
	if (act != XDP_REDIRECT)
		count(STEER_CTR_XSK_MISSING);
	return act;
}

/* UDP header at @udp with @room bytes of IP payload from it on: ours by port, or passed. */
static __always_inline int steer_udp(struct xdp_md *ctx, struct udphdr *udp, void *data_end,
				     __u32 room)
{
	__u32 udp_len, ctr;

	if ((void *)(udp + 1) > data_end)
		return pass(STEER_CTR_PASS_BAD_UDP);
	udp_len = bpf_ntohs(udp->len);
	if (udp_len < sizeof(*udp) || udp_len > room)
		return pass(STEER_CTR_PASS_BAD_UDP);
	ctr = match_port(udp->dest);
	if (ctr == STEER_CTR_PASS_OTHER_PORT)
		return pass(ctr);
	return to_xsk(ctx, ctr);
}

static __always_inline int steer_ipv4(struct xdp_md *ctx, struct iphdr *ip, void *data_end)
{
	__u32 ihl_bytes, ip_len;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5)
		return pass(STEER_CTR_PASS_BAD_IPV4);
	ihl_bytes = (__u32)ip->ihl * 4;
	ip_len = bpf_ntohs(ip->tot_len);
	/* The IP length may be shorter than the frame (Ethernet padding), never longer. */
	if (ip_len < ihl_bytes || (void *)ip + ip_len > data_end)
		return pass(STEER_CTR_PASS_BAD_IPV4);
	if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET)) {
		/* Only the first fragment names a port: every UDP fragment to the router goes
		 * to ringway, which reassembles them (and drops what is not for its ports). */
		if (ip->protocol == IPPROTO_UDP && steer_cfg.router_ip != 0 &&
		    ip->daddr == steer_cfg.router_ip)
			return to_xsk(ctx, STEER_CTR_TO_XSK_FRAGMENT);
		return pass(STEER_CTR_PASS_FRAGMENT);
	}
	if (ip->protocol != IPPROTO_UDP)
		return pass(STEER_CTR_PASS_NOT_UDP);
	if (steer_cfg.router_ip == 0 || ip->daddr != steer_cfg.router_ip)
		return pass(STEER_CTR_PASS_OTHER_ADDR);
	return steer_udp(ctx, (void *)ip + ihl_bytes, data_end, ip_len - ihl_bytes);
}

static __always_inline int is_ext_hdr(__u8 next)
{
	return next == IPPROTO_HOPOPTS || next == IPPROTO_ROUTING || next == IPPROTO_DSTOPTS;
}

static __always_inline int ours_ip6(const struct ipv6hdr *ip6)
{
	return ip6->daddr.in6_u.u6_addr32[0] == steer_cfg.router_ip6[0] &&
	       ip6->daddr.in6_u.u6_addr32[1] == steer_cfg.router_ip6[1] &&
	       ip6->daddr.in6_u.u6_addr32[2] == steer_cfg.router_ip6[2] &&
	       ip6->daddr.in6_u.u6_addr32[3] == steer_cfg.router_ip6[3];
}

/*
 * IPv6: the fixed header, the address, then at most STEER_MAX_EXT_HDRS extension headers
 * walked with their lengths checked against the payload length (which the frame must hold),
 * so every read is bounded for the verifier: each header adds at most 2,048 bytes.
 */
static __always_inline int steer_ipv6(struct xdp_md *ctx, struct ipv6hdr *ip6, void *data_end)
{
	struct ipv6_opt_hdr *eh;
	__u32 plen, off = 0, i;
	__u8 next;

	if (!(steer_cfg.flags & STEER_CFG_IPV6))
		return pass(STEER_CTR_PASS_NOT_IPV4);
	if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
		return pass(STEER_CTR_PASS_BAD_IPV6);
	plen = bpf_ntohs(ip6->payload_len);
	/* As IPv4: shorter than the frame (padding) is fine, longer is not. */
	if ((void *)(ip6 + 1) + plen > data_end)
		return pass(STEER_CTR_PASS_BAD_IPV6);
	if (!ours_ip6(ip6))
		return pass(STEER_CTR_PASS_OTHER_ADDR);
	next = ip6->nexthdr;
#pragma unroll
	for (i = 0; i < STEER_MAX_EXT_HDRS; i++) {
		if (!is_ext_hdr(next))
			break;
		eh = (void *)(ip6 + 1) + off;
		if ((void *)(eh + 1) > data_end || off + sizeof(*eh) > plen)
			return pass(STEER_CTR_PASS_BAD_IPV6);
		next = eh->nexthdr;
		off += ((__u32)eh->hdrlen + 1) * 8;
		if (off > plen)
			return pass(STEER_CTR_PASS_BAD_IPV6); /* extension header cut short */
	}
	if (next == IPPROTO_FRAGMENT) {
		/* Right after the fixed header, of a UDP datagram: ringway reassembles it (one
		 * further in is not reassembled there: the kernel's). */
		eh = (void *)(ip6 + 1);
		if (off == 0 && (void *)eh + 8 <= data_end && plen >= 8 &&
		    eh->nexthdr == IPPROTO_UDP)
			return to_xsk(ctx, STEER_CTR_TO_XSK_FRAGMENT);
		return pass(STEER_CTR_PASS_FRAGMENT);
	}
	if (is_ext_hdr(next))
		return pass(STEER_CTR_PASS_IPV6_EXT);
	if (next != IPPROTO_UDP)
		return pass(STEER_CTR_PASS_NOT_UDP);
	return steer_udp(ctx, (void *)(ip6 + 1) + off, data_end, plen - off);
}

SEC("xdp")
int ringway_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u16 vid = 0; /* untagged */
	__be16 proto;
	void *l3;

	if (steer_cfg.router_ip == 0 && !(steer_cfg.flags & STEER_CFG_IPV6))
		return pass(STEER_CTR_PASS_UNCONFIGURED);
	if ((void *)(eth + 1) > data_end)
		return pass(STEER_CTR_PASS_SHORT_ETH);
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > data_end)
			return pass(STEER_CTR_PASS_SHORT_ETH);
		vid = bpf_ntohs(tag->tci) & VLAN_VID_MASK;
		proto = tag->inner_proto;
		l3 = tag + 1;
	}
	/* The port's VLAN only (a priority tag, VLAN 0, counts as untagged): frames on another
	 * are the kernel's (a VLAN interface of its own there, or nothing). */
	if ((steer_cfg.flags & STEER_CFG_VLAN) && vid != steer_cfg.vlan_id)
		return pass(STEER_CTR_PASS_OTHER_VLAN);
	if (proto == bpf_htons(ETH_P_IP))
		return steer_ipv4(ctx, l3, data_end);
	if (proto == bpf_htons(ETH_P_IPV6))
		return steer_ipv6(ctx, l3, data_end);
	return pass(STEER_CTR_PASS_NOT_IPV4);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
