/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sandbox's VLAN tagging (`sandbox.sh up --vlan N`), for kernels without 802.1Q support:
 * on a client's or node's veth0, tc ingress drops the tag of frames on VLAN VID (and refuses
 * other tagged frames) and tc egress tags every untagged frame with VID, so the wire between
 * them and the router carries VLAN VID as an access port of a switch would. Frames a raw
 * socket sends already tagged leave as they are (the hostile and wrong-VLAN probes).
 * Built by sandbox.sh with clang -target bpf -DVID=N; attached with tc (clsact, direct action).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VID
#error "VID must be given (-DVID=N)"
#endif

SEC("tc/ingress")
int vlan_untag(struct __sk_buff *skb)
{
	if (!skb->vlan_present)
		return TC_ACT_OK;
	if ((skb->vlan_tci & 0x0fff) != VID)
		return TC_ACT_SHOT;
	return bpf_skb_vlan_pop(skb) == 0 ? TC_ACT_OK : TC_ACT_SHOT;
}

SEC("tc/egress")
int vlan_tag(struct __sk_buff *skb)
{
	__u16 type = 0;

	if (skb->vlan_present || bpf_skb_load_bytes(skb, 12, &type, sizeof(type)) != 0 ||
	    type == bpf_htons(ETH_P_8021Q) || type == bpf_htons(ETH_P_8021AD))
		return TC_ACT_OK;
	return bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), VID) == 0 ? TC_ACT_OK : TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "GPL";
