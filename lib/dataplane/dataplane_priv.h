/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DATAPLANE_PRIV_H
#define RINGWAY_DATAPLANE_PRIV_H

/*
 * Internal layout of the data plane, shared by its files, in layers (a file calls only
 * the files below it, never one that calls it):
 *   dp_control.c  creation, publication (RCU), neighbour timers, counters and telemetry
 *                 (control lcore; calls dp_mget_init / dp_mget_free, dp_arp_request and
 *                 dp_route.c)
 *   dp_route.c    each node's next hop (lib/route), at claim and on route changes (control
 *                 lcore)
 *   dp_health.c   node health (control lcore): passive signals, probes, dirty-key clean-up
 *   dp_worker.c   the worker loop: parse, request path, reply path; calls dp_mget.c and
 *                 dp_local.c for what it does not forward or return itself
 *   dp_hot.c      hot keys: sampling into per-worker sketches (dp_hot.h); control side: merge
 *   dp_mget.c     multi-gets over several nodes: split into sub-requests, merge the replies
 *                 (refusals are answered through dp_local.c)
 *   dp_failover.c stand-ins for down nodes (replica walk), the dirty-key record (workers)
 *   dp_local.c    what the router answers itself: ARP, ICMP echo, IPv6 ND and ICMPv6 echo,
 *                 memcached replies it builds
 *   dp_tx.c/.h    TX buffering and accounting, drops, request slots, UDP headers, checksums
 * This header holds the shared types and the entry points of dp_mget.c and dp_local.c;
 * dp_tx.h those of the bottom layer.
 */

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_udp.h>

/* DPDK 22.11's x86 rte_bswap16() of a non-constant is an `asm volatile` (xchgb): the compiler
 * can neither fold it nor move it, and each use costs extra moves (20 instructions per
 * forwarded request, 12 per reply, in callgrind). The builtin gives the same value (later
 * DPDK releases use it too); every byte-order conversion of the data plane goes through it. */
#undef rte_bswap16
#define rte_bswap16(x) ((uint16_t)__builtin_bswap16((uint16_t)(x)))

#include "dataplane.h"
#include "mcproto.h"
#include "observe.h"
#include "route.h"

/* dp_worker.vlan_want: frames on any VLAN are served. */
#define DP_VLAN_ANY UINT16_MAX

/* Bit 48 of a neighbour's MAC word: the MAC is known. */
#define DP_MAC_VALID (UINT64_C(1) << 48)

/* Tags of buffered TX packets: the outcome is counted when the NIC takes the packet. */
enum dp_tx_tag {
	DP_TX_FORWARDED,
	DP_TX_RETURNED,
	DP_TX_ANSWERED,
	DP_TX_CTL, /* control lcore's packet: not part of the rx accounting */
	DP_TX_MGET_SUB, /* multi-get sub-request the router built (not an rx packet) */
	DP_TX_MGET_OUT, /* merged multi-get reply datagram the router built (not an rx packet) */
	/* Warm-up (dp_warm.c), built by the router (not rx packets): */
	DP_TX_WARM_GET,	   /* a read sent to a moved key's previous owner (holds a slot) */
	DP_TX_WARM_FILL,   /* `add` of its hit to the new owner */
	DP_TX_WARM_DELETE, /* `delete` at the previous owner of a key written meanwhile */
	DP_TX_ANSWERED_NODE, /* ANSWERED, to the node port (two ports: an answer to a node) */
	DP_TX_HOT_FETCH, /* hot key: a get to the owner after a replica's miss (not an rx packet) */
	DP_TX_HOT_FILL,	 /* hot key: the owner's value added to a replica (not an rx packet) */
	DP_TX_HOT_INVAL, /* hot key: a replica's copy deleted on a write (not an rx packet) */
	/* IP fragments (dp_frag.c), built by the router: all but a datagram's last fragment,
	 * which keeps the datagram's own tag (not rx packets; ip_fragments_sent) */
	DP_TX_FRAG_CLIENT,
	DP_TX_FRAG_NODE,
	DP_TX_MOVED_DELETE, /* `delete` at the previous owner of a moved key written after the
			       warm-up window (dp_warm.c; not an rx packet) */
	/* Replicated pools (dp_repl.c), built by the router (not rx packets); refused, their
	 * keys are recorded for the replica (dp_fo_dirty) as if it had been down: */
	DP_TX_REPL_COPY,   /* a write copied to another replica of its key */
	DP_TX_REPL_DELETE, /* `delete KEY noreply` at another replica (a write not copied) */
};

/* With two ports: whether a TX tag leaves on the node port (else on the client port). */
static inline bool dp_tx_to_node(uint8_t tag)
{
	return tag == DP_TX_FORWARDED || tag == DP_TX_MGET_SUB || tag == DP_TX_CTL ||
	       tag == DP_TX_ANSWERED_NODE || tag == DP_TX_WARM_GET || tag == DP_TX_WARM_FILL ||
	       tag == DP_TX_WARM_DELETE || tag == DP_TX_HOT_FETCH || tag == DP_TX_HOT_FILL ||
	       tag == DP_TX_HOT_INVAL || tag == DP_TX_FRAG_NODE ||
	       tag == DP_TX_MOVED_DELETE || tag == DP_TX_REPL_COPY || tag == DP_TX_REPL_DELETE;
}

/*
 * A node endpoint (address:port) with its neighbour state. The table is allocated once;
 * entries are claimed by the control lcore at publication and never move.
 * Written by the control lcore except: mac (also by workers that learn it from a solicited ARP
 * reply, with a relaxed atomic 64-bit store: any writer stores a complete, valid value),
 * arp_seen and mac_changes (relaxed atomic add by workers) and arp_until (a worker that
 * accepts the reply to the outstanding request swaps it to 0, so one request teaches at most
 * one MAC). Workers read ip (relaxed atomic), nh_ip (relaxed atomic), mac and arp_until.
 * mac is the next hop's: the node's own when it is on the router's segment, else its
 * gateway's (nh_ip, resolved by dp_route.c at claim and on every route change); ARP asks for
 * nh_ip, and one reply teaches every endpoint behind that next hop.
 */
struct dp_endpoint {
	_Atomic uint64_t mac;         /* DP_MAC_VALID | MAC bytes 0..5 in bits 0..47 */
	_Atomic uint64_t arp_until;   /* TSC until which the router's ARP request for ip is
				       * outstanding (set before it is sent); 0: none */
	_Atomic uint32_t ip;	      /* network order; 0 = unused; an IPv6 node's: dp_fold6()
				       * of ip6 (never 0) */
	_Atomic uint32_t nh_ip;	      /* next hop: ip, or its gateway; 0 = no route (IPv6:
				       * dp_fold6(nh_ip6)) */
	_Atomic uint32_t arp_seen;    /* ARP replies from ip accepted by workers */
	_Atomic uint32_t mac_changes; /* ... of them that replaced another known MAC */
	/* Health, published by the control lcore (relaxed: a word on its own, read once per
	 * request; a worker seeing the change a burst late is fine): DP_EP_SERVING or
	 * DP_EP_DOWN. Never an epoch change. */
	_Atomic uint32_t health;
	/* The outstanding probe's request id | DP_PROBE_VALID, set (relaxed) by the control
	 * lcore before the probe is enqueued (the enqueue's release orders it before the
	 * send); a worker that accepts its answer stores the id in probe_ok. */
	_Atomic uint32_t probe_id;
	_Atomic uint32_t probe_ok;
	uint16_t port;             /* host order */
	/* An IPv6 node (set with ip, before its release store; fixed while the entry is used):
	 * its address and its next hop's, network order. Workers compare replies' sources and
	 * NA targets with all 16 bytes; the folds above are hash keys and prefilters only. */
	bool v6;
	uint8_t ip6[16];
	uint8_t nh_ip6[16];
	bool used;
	bool in_ring;
	bool in_gutter; /* a node of the published gutter pool (control lcore) */
	bool mac_static;
	/* control lcore only */
	bool pending; /* claimed by dp_prepare_placement() for a member not yet published */
	bool resolving;
	bool nh_moved; /* dp_set_routes: the next hop changed, the MAC is being replaced */
	uint32_t tries;
	uint32_t seen_snapshot;
	uint64_t next_tsc;
	uint64_t learned_tsc;
	uint64_t arp_sent;
	uint64_t arp_failures;
	uint32_t changes_reported; /* mac_changes when dp_mac_changes() last looked */
	uint64_t mac_reported;	   /* the MAC the control lcore last saw settled */
	/* The workers' per-endpoint sums (node_fwd, node_ret, node_mget_partial, node_tmo,
	 * node_lost) when a member joined at this entry (ep_commit): what it shows, and what
	 * its health counts from (dp_health.c seeds a new health state with them), is what
	 * happened since. A node's history is its own, not the entry's former occupants'. */
	uint64_t base_fwd;
	uint64_t base_ret;
	uint64_t base_mget;
	uint64_t base_tmo;
	uint64_t base_lost;
	/* TSC when the entry left the last ring or gutter pool naming it (0: never): an entry
	 * whose requests may still be in flight is claimed for a new node only when no other is
	 * free (ep_claimable), so their timeouts and late replies do not count for the new node. */
	uint64_t released_tsc;
	char name[PL_NAME_MAX + 1];
	struct dp_ep_health *hs; /* control lcore: the health state (dp_health.c), NULL until
				    first judged */
	bool warm_hold; /* control lcore: the previous placement held (dp_warm.c) names it:
			   never reclaimed for another node meanwhile */
	/* The node's health generation, set by the control lcore (dp_health.c, relaxed) on
	 * every change of health between serving and not: health_tsc the TSC of the change (a
	 * request sent before it never counts against the node after it: expire_slot()),
	 * health_gen a number no other change of any endpoint had (dp->health_gen_next), which
	 * names a failover copy's outage and stand-in (dp_failover.c: dp_fo_mark). */
	_Atomic uint64_t health_tsc;
	_Atomic uint32_t health_gen;
} __rte_cache_aligned;

#define DP_EP_SERVING  0u
#define DP_EP_DOWN     1u
#define DP_PROBE_VALID (1u << 16)

/* Keys written or deleted for a down node, per worker, in a single-producer (the worker),
 * single-consumer (the control lcore) ring: the worker writes an entry, then release-stores
 * tail; the control lcore acquire-loads tail, copies, release-stores head. */
#define DP_DIRTY_RING 1024
struct dp_dirty {
	uint32_t ep; /* the down owner */
	uint32_t at; /* the stand-in the write went to */
	uint8_t len;
	uint8_t key[MC_KEY_MAX];
};

/* A member endpoint by address:port in a view's source table (open addressing, linear
 * probing, at most half full): key dp_src_key(), 0 = empty. One entry per distinct node:
 * IPv6 nodes whose folds collide have equal keys and an entry each (dp_view_find_src6). */
struct dp_src {
	uint64_t key;
	uint32_t ep;
};

/* The gutter pool in a view ([failover] gutter): its placement (NUMA-local clone; NULL: no
 * pool) and gutter member index -> endpoint index. Republished without an epoch change. */
struct dp_view_gutter {
	struct pl_placement *pl;
	uint32_t *ep;
	uint32_t n;
};

/* A worker's replica of the placement: immutable once published. */
struct dp_view {
	struct pl_placement *pl; /* NUMA-local clone */
	uint64_t epoch;
	struct dp_view_gutter gutter;
	struct dp_src *src; /* the members' endpoints by source, src_mask + 1 entries */
	uint32_t src_mask;
	uint32_t n;              /* members */
	size_t bytes;            /* this replica's memory (view, placement, gutter) */
	/* Held placements only (dp_warm.c): the one held before this one, up to DP_FLIP_HELD
	 * deep, NULL past it; written by the control lcore, read by workers. */
	_Atomic(struct dp_view *) older;
	uint32_t ep[];           /* member index -> endpoint index */
};

/* Placements held for writes after the membership changes that replaced them (dp_warm.c). */
#define DP_FLIP_HELD 4

/* Free one replica (not the ones it holds as older; dp_warm.c, the layer below dp_control.c
 * that frees held replicas). Control lcore, after the RCU synchronize that keeps workers
 * from it. */
void dp_view_free(struct dp_view *v);

/* The key of address word @p ip (IPv4, or an IPv6 address's dp_fold6()) and @p port; @p v6
 * keeps the families apart. */
static inline uint64_t dp_src_key(uint32_t ip, uint16_t port, bool v6)
{
	return ((uint64_t)v6 << 48 | (uint64_t)ip << 16 | port) + 1;
}

/* An IPv6 address (16 bytes, network order) folded to a 32-bit word, never 0: the key of IPv6
 * clients in the per-client slot count and of IPv6 nodes in the source tables. Two addresses
 * with one fold share a client's slot cap (a client can at worst lower another's headroom);
 * nodes are compared in full at every key match of a table lookup (dp_view_find_src6). */
static inline uint32_t dp_fold6(const uint8_t a[16])
{
	uint32_t w[4], f;

	memcpy(w, a, 16);
	f = w[0] ^ w[1] ^ w[2] ^ (w[3] * 0x9e3779b1u);
	return f != 0 ? f : 1;
}

static inline uint32_t dp_src_hash(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & mask;
}

/* The endpoint of the IPv4 member at @p ip (network order) : @p port (host order) in @p v,
 * or -1: the reply path's check that a datagram comes from a node before it costs another
 * worker anything. An IPv4 key is the whole address: the first entry with it is the answer. */
static inline int64_t dp_view_find_src(const struct dp_view *v, uint32_t ip, uint16_t port)
{
	uint64_t key = dp_src_key(ip, port, false);
	uint32_t h = dp_src_hash(key, v->src_mask);

	while (v->src[h].key != 0) {
		if (v->src[h].key == key)
			return v->src[h].ep;
		h = (h + 1) & v->src_mask;
	}
	return -1;
}

/* ... of the IPv6 member at @p a (16 bytes, network order) : @p port, its endpoints in
 * @p eps. An IPv6 key holds only dp_fold6() of the address, and distinct members may share
 * one (2001:2::e8:1:99 and 2001:2::1:1 do): each has an entry of its own (view_src_put), and
 * the probe goes on past an entry whose endpoint's full address differs. */
static inline int64_t dp_view_find_src6(const struct dp_view *v, const struct dp_endpoint *eps,
					const uint8_t a[16], uint16_t port)
{
	uint64_t key = dp_src_key(dp_fold6(a), port, true);
	uint32_t h = dp_src_hash(key, v->src_mask);

	while (v->src[h].key != 0) {
		if (v->src[h].key == key && memcmp(eps[v->src[h].ep].ip6, a, 16) == 0)
			return v->src[h].ep;
		h = (h + 1) & v->src_mask;
	}
	return -1;
}

/* Datagrams of a one-message reply tracked past the first one missing (dp_slot.seq_seen). */
#define DP_SEQ_WINDOW 64

/* One request in flight. tsc == 0: free. */
struct dp_slot {
	uint64_t tsc;
	/* One-message reply: bit i = datagram seq_base + i passed (bit 0 is always clear:
	 * seq_base is the first datagram missing). Bounded at DP_SEQ_WINDOW whatever the reply's
	 * size: a datagram further ahead is dropped (reply_seq_ahead); a reply with a gap that
	 * long has lost a datagram, and its client drops it whole anyway. */
	uint64_t seq_seen;
	uint32_t client_ip;  /* network order, as are the ports below */
	uint32_t node_ip;
	uint16_t client_port;
	uint16_t client_reqid; /* host order */
	uint16_t listen_port;
	uint16_t node_port;
	/* The request id this use of the slot went out with: its generation in the bits above
	 * slot_lo_bits, the slot index's low bits below (fixed). */
	uint16_t reqid;
	uint16_t port_be;    /* the reply port naming the slot (network order), fixed */
	uint16_t vlan_tci;   /* network order */
	uint16_t total;      /* datagrams in the reply, 0 until the first arrives */
	union {
		uint16_t seq_base; /* one-message reply: datagrams 0..seq_base-1 all passed */
		uint16_t mget;   /* multi == DP_MULTI_MGET: the multi-get context it answers */
	};
	uint32_t ep;
	uint16_t parser;     /* reply parser tracking a multi-message reply, or DP_NO_PARSER */
	uint8_t client_mac[6];
	uint8_t has_vlan;
	uint8_t multi;       /* DP_MULTI_*: how the reply is followed */
	uint8_t quiet;       /* its reply has no end the router can tell: freed after
				quiet_read_ms (a lone quiet read: on its first message) */
	uint8_t fam;	     /* DP_FAM_*: which side is IPv6 (its address in slot6[]) */
};
static_assert(sizeof(struct dp_slot) <= RTE_CACHE_LINE_SIZE,
	      "a slot is one cache line: taking it and its reply touch one line");

/* dp_slot.fam: the client / the node of a slot is IPv6; client_ip / node_ip then hold
 * dp_fold6() of the addresses in the worker's slot6[] entry. */
#define DP_FAM_CLIENT6 1u
#define DP_FAM_NODE6   2u

/* The IPv6 addresses of a slot (dp_worker.slot6, by slot index): kept beside the slot so that
 * struct dp_slot stays within its cache line. Valid per DP_FAM_* bit. */
struct dp_slot6 {
	uint8_t client[16];
	uint8_t node[16];
};

#define DP_NO_PARSER UINT16_MAX
/* Not a slot: a TX entry without one (dp_worker.tx_slot). */
#define DP_NO_SLOT UINT32_MAX

/* A client address's slots in flight in one worker (dp_worker.clients); n == 0: empty. */
struct dp_client {
	uint32_t ip; /* network order */
	uint32_t n;
};

/* A quiet slot in the order taken (dp_worker.quiet_q): its index and the low bits of the tsc
 * it was taken with, so an entry outlived by its slot's use is told apart. */
struct dp_quiet {
	uint32_t slot;
	uint32_t tsc_lo;
};

/* dp_slot.multi */
enum {
	DP_MULTI_NONE = 0, /* one message: passes by its frame header */
	DP_MULTI_TRACK,    /* several messages: passes, a parser says when complete */
	DP_MULTI_MGET,     /* a multi-get sub-reply: parsed and merged, not passed */
	DP_MULTI_HOT,      /* a spread read of a hot key: dp_hot_reply() sees its reply first */
};

#define DP_NO_MGET UINT16_MAX

/* A multi-get sub-request's state in its context (dp_mget.sub_state). */
enum {
	DP_SUB_PENDING = 0,
	DP_SUB_DONE,
	DP_SUB_FAILED,
};

#define DP_NO_KEY UINT16_MAX
#define DP_NO_OPAQUE UINT8_MAX
/* Pieces of items one merged reply may hold (an item is one piece unless datagrams of other
 * nodes arrived in its middle: in the worst case one piece per datagram). 2048 covers the
 * default 2 MiB buffer's ~1,500 datagrams fully interleaved plus every key (512 did not: a
 * 1.8 MB reply of 3 nodes whose datagrams alternated was answered as an overflow); past it
 * the reply is an overflow error, counted. 12 bytes each, per multi-get context. */
#define DP_MGET_FRAGS 2048

/* A list of mbufs linked by their next pointer, each a datagram to be: headers left blank,
 * then the frame header, then up to mget_body_max bytes (all full but the last). */
struct dp_chain {
	struct rte_mbuf *first;
	struct rte_mbuf *last;
	uint32_t n;
	uint32_t bytes;
};

/* Bytes [pos, pos + len) of a context's stream belong to the item of key @c key. */
struct dp_mget_frag {
	uint32_t pos;
	uint32_t len;
	uint16_t key;
};

/*
 * A multi-get being merged: the client's addressing; the items the nodes sent, copied in
 * arrival order into a stream of pool mbufs, with where each key's item lies (frag); the
 * sub-requests, one per node. At the end the items are copied in the request's key order
 * into the datagrams to send (out), which leave a burst at a time as the TX queue has room
 * (the send list). tsc == 0: free. Worker-owned.
 */
struct dp_mget {
	uint64_t tsc;
	uint32_t client_ip; /* network order, as are the ports */
	uint16_t client_port;
	uint16_t client_reqid; /* host order */
	uint16_t listen_port;
	uint16_t vlan_tci; /* network order */
	uint8_t has_vlan;
	uint8_t proto;	  /* enum mc_proto of the request */
	uint8_t overflow; /* the reply outgrew the buffer: answered with an error */
	uint8_t client_v6; /* an IPv6 client: client_ip6 (client_ip its dp_fold6) */
	uint8_t client_ip6[16];
	uint8_t client_mac[6];
	uint16_t nsub;
	uint16_t pending;
	uint16_t nkeys;
	uint16_t nfrag;
	uint16_t prev, next;  /* live list, oldest first */
	uint32_t noop_opaque; /* binary: the NOOP request's opaque */
	struct dp_chain stream;
	struct dp_chain out;  /* the merged reply's datagrams not sent yet (on the send list) */
	uint16_t out_seq;     /* seq of out.first */
	uint16_t out_total;   /* datagrams of the whole merged reply */
	uint16_t send_next;   /* send list, oldest first */
	struct rte_mbuf *req; /* the client's request: keys are compared with its bytes */
	uint16_t req_off;     /* its UDP payload: offset in the mbuf's data, length */
	uint16_t req_len;
	uint32_t sub_slot[MC_MAX_KEYS];
	uint32_t sub_ep[MC_MAX_KEYS];
	uint8_t sub_state[MC_MAX_KEYS];
	uint16_t sub_cursor[MC_MAX_KEYS]; /* ASCII: the node's next key an item may answer */
	uint16_t sub_key[MC_MAX_KEYS];	  /* key whose value bytes come next, or DP_NO_KEY */
	uint8_t key_sub[MC_MAX_KEYS];	  /* key index -> sub-request index */
	uint16_t key_off[MC_MAX_KEYS];	  /* key bytes in the request payload */
	uint8_t key_len[MC_MAX_KEYS];
	uint8_t key_done[MC_MAX_KEYS]; /* its item arrived whole */
	/* Meta and binary: the client's own opaque of each key's request, put back in place of
	 * the router's tag (meta: the last `O` token's value, length 0 when it had none;
	 * binary: the header's four opaque bytes), as offsets in the request payload;
	 * DP_NO_OPAQUE: the client's mg had no O token (the router's is removed). */
	uint16_t key_opq_off[MC_MAX_KEYS];
	uint8_t key_opq_len[MC_MAX_KEYS];
	struct dp_mget_frag frag[DP_MGET_FRAGS];
};

/* Look-ahead entries kept per worker (a power of two above dp_worker.c's DP_HINT_AHEAD). */
#define DP_AHEAD_RING 16

/* What the burst's look-ahead learned of a request datagram (dp_forward_burst): its parse
 * (parse once: the request path takes it instead of parsing again) and the owner of its first
 * key on the burst's view, looked up ahead. payload NULL: none (not a request datagram as far
 * as lengths tell, or no look-ahead); the request path uses it only for the very payload bytes
 * it was made from. */
struct dp_hint {
	const uint8_t *payload;  /* the UDP payload parsed */
	uint32_t plen;
	int32_t err;             /* enum mc_err of the parse */
	struct mc_requests *req; /* the parse (a dp_worker.ahead[] entry) */
	int32_t owner;           /* pl_lookup_hash() of the first key */
	bool has_owner;          /* owner was looked up (a plain first key, a placement) */
	uint64_t hash;           /* the first key's pl_key_hash(), when has_owner */
};

/* No look-ahead: the hint of a packet the loop did not look at (its payload is NULL). */
extern const struct dp_hint dp_no_hint;

/* Where the headers of a parsed packet are (kept in the mbuf's l2_len / l3_len too), and what
 * the burst's look-ahead learned about it. */
/* An EtherType no frame carries (dp_worker.ipv4_etype). */
#define DP_ETYPE_NONE UINT32_C(0x10000)

struct dp_pkt {
	struct rte_ether_hdr *eth;
	uint16_t l2_len; /* 14 or 18 */
	uint16_t l3_len; /* IPv4 header length; IPv6: 40 + its extension headers */
	bool vlan;
	bool v6; /* IPv6: ip6 is set, ip is NULL */
	struct rte_ipv4_hdr *ip;
	struct rte_ipv6_hdr *ip6;
	struct rte_udp_hdr *udp;
	uint8_t *payload; /* UDP payload */
	uint32_t plen;
	const struct dp_hint *hint; /* never NULL: dp_no_hint when there is none */
};

/*
 * The first DP_HDR_TMPL_LEN bytes of every frame the IPv4 request and reply paths serve on
 * the port being received on, as a byte pattern: an untagged Ethernet frame to the router's
 * MAC from a unicast source, IPv4 without options, not a fragment, UDP, to the router's
 * IPv4 address (each byte: (frame ^ want) & mask == 0). The look-ahead compares a frame with
 * it in a few vector instructions instead of check_frame()'s and check_ipv4()'s field by
 * field checks of the same facts; a frame that does not match takes those checks (and gets
 * their verdict and drop reason). min_len: DP_HDR_TMPL_LEN, or above every frame length when
 * no frame may take the pattern (no IPv4 address; a port on a VLAN other than 0).
 */
#define DP_HDR_TMPL_LEN 42 /* Ethernet, IPv4 and UDP headers */
struct dp_hdr_tmpl {
	alignas(16) uint8_t want[3][16]; /* frame bytes 0..15, 16..31 and 26..41 (IPv6: 38..53) */
	alignas(16) uint8_t mask[3][16];
	uint32_t min_len;
	uint32_t len_span; /* frame lengths min_len .. min_len + len_span take the pattern (longer
			      than the MTU: check_frame(), to be fragmented again); 0 with no
			      pattern */
};

/*
 * The IPv6 pattern beside it, in the same struct: the first DP_HDR6_TMPL_LEN bytes of an
 * untagged Ethernet frame to the router's MAC from a unicast source, IPv6, UDP as the next
 * header (no extension header), to the router's IPv6 address, compared as frame bytes 0..15,
 * 16..31 and 38..53 (32..37 are the source address, any); min_len counts the UDP header. A
 * frame that matches gets ipv6_serve()'s remaining checks in the look-ahead (check_served6)
 * and the IPv4 verdicts (DP_V_REPLY, DP_V_REQUEST6); any other takes handle_ipv6() as before.
 */
#define DP_HDR6_TMPL_LEN 54 /* Ethernet and IPv6 headers */

/* The look-ahead's record of one frame of the burst (dp_forward_burst): the headers as the
 * checks found them, where the frame goes (dp_worker.c's enum dp_verdict, with the drop reason
 * or the reply port index), and for a request its parse. */
struct dp_ahead {
	struct dp_pkt pk;
	uint32_t len;     /* the frame's length */
	uint16_t verdict; /* enum dp_verdict */
	uint16_t why;     /* enum dp_drop, when dropped */
	uint32_t k;       /* a reply: its destination port's index */
	struct dp_hint hint;
};

#define DP_TX_CAP (3 * DP_BURST_MAX)

struct dp_worker {
	/* Read-mostly configuration, copied so the hot path touches one structure. */
	struct dp *dp;
	uint16_t id;
	uint16_t n_workers;
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t burst;
	uint16_t n_listen;
	uint16_t n_allowed;
	uint16_t n_client_macs;
	bool fast_off; /* no request takes the fast lane (dp_fast.h) */
	uint16_t reply_base;
	uint32_t reply_count;
	uint32_t port_shift;   /* log2(reply ports per worker) */
	uint32_t slot_lo_bits; /* slot bits carried in the request id (the rest: in the port) */
	/* Derived once at set-up for the per-packet path: (1 << port_shift) - 1,
	 * (1 << slot_lo_bits) - 1, 1 << slot_lo_bits (a request id's step to the next
	 * generation) and this worker's first reply port, reply_base + (id << port_shift). */
	uint32_t port_mask;
	uint32_t lo_mask;
	uint32_t gen_step;
	uint32_t my_port_base;
	uint32_t slot_mask;
	/* The port being received on (per burst; fixed with one port): its address, MAC, VLAN
	 * (DP_VLAN_ANY: any) and the tag of the router's answers there. What it serves is in
	 * n_listen and reply_count below: with two ports the client port has no reply range and
	 * the node port no listen port, so the dispatch needs no test of its own. */
	uint32_t router_ip;
	uint16_t vlan_want;
	/* The EtherType handle_packet takes for IPv4: IPv4's (network order), or
	 * DP_ETYPE_NONE (above every 16-bit value: no frame has it) on a port without an IPv4
	 * address, so an IPv6-only router drops IPv4 as not_ipv4 at no cost to the IPv4 path. */
	uint32_t ipv4_etype;
	struct rte_ether_addr router_mac;
	/* ... its IPv6 (has_ip6: one is set) and the solicited-node multicast MAC of it
	 * (33:33:ff:xx:xx:xx), the one group address Neighbor Solicitations reach it at. */
	bool has_ip6;
	uint8_t router_ip6[16];
	struct rte_ether_addr sn_mac;
	uint8_t answer_tag;
	/* The frame pattern of the port being received on (copied from hdr_side[] by
	 * dp_rx_side(): [0] the client port's, [1] the node port's; equal with one port). */
	struct dp_hdr_tmpl hdr;
	struct dp_hdr_tmpl hdr_side[2];
	struct dp_hdr_tmpl hdr6; /* the IPv6 pattern, likewise */
	struct dp_hdr_tmpl hdr6_side[2];
	/* Sources of what leaves towards the clients / the nodes (equal with one port). */
	uint32_t client_src_ip;
	struct rte_ether_addr client_src_mac;
	uint32_t node_src_ip;
	struct rte_ether_addr node_src_mac;
	uint8_t client_src_ip6[16]; /* all zero: no address6 */
	uint8_t node_src_ip6[16];
	bool two_ports;
	uint16_t node_port_id;
	/* dp_config.link_gated: port_up / node_port_up are read at each poll's start (else
	 * always true) and gate every RX and TX burst on the port. */
	bool link_gated;
	bool port_up;
	bool node_port_up;
	/* The node port's VLAN is fixed (vlan_fixed / node_vlan_fixed): what goes to nodes is
	 * tagged node_vlan_tci (network order) when node_vlan_tagged, else untagged, and replies
	 * were checked against it on arrival. Not fixed: requests keep the client's tag. */
	bool node_vlan_fixed;
	bool node_vlan_tagged;
	uint16_t node_vlan_tci;
	bool tx_offload;
	uint16_t listen[DP_LISTEN_MAX];
	const struct dp_prefix *allowed;
	const struct dp_prefix6 *allowed6;
	uint16_t n_allowed6;
	const uint64_t *client_macs; /* MAC bytes 0..5 copied into a zeroed word, as a packet's */
	struct dp_endpoint *eps;
	uint64_t timeout_tsc;
	uint64_t quiet_tsc; /* quiet_read_ms */
	uint64_t backoff_after;
	uint32_t backoff_us;
	enum dp_idle idle;

	/* Request table: a FIFO of free slots, so a freed slot is reused as late as possible. */
	struct dp_slot *slots;
	struct dp_slot6 *slot6; /* IPv6 addresses of the slots (dp_slot.fam) */
	uint32_t *free_fifo;
	uint32_t free_head;
	uint32_t free_tail;
	uint32_t sweep;
	uint64_t now; /* TSC at the start of the current burst */

	/* Quiet slots, oldest first: all share quiet_read_ms, so only the head can be due and
	 * the loop frees them on time whatever the table's size (the sweep visits a few slots
	 * per poll). As many entries as slots; entries of slots freed earlier are skipped. */
	struct dp_quiet *quiet_q;
	uint32_t quiet_head;
	uint32_t quiet_tail;

	/* Slots per client address: open addressing, linear probing, 2 x slots entries (at most
	 * half full), a per-worker random hash multiplier; client_max 0 = no cap, no table. */
	struct dp_client *clients;
	uint32_t client_mask;
	uint32_t client_max;
	uint64_t client_seed;

	/* Reply parsers for slots whose reply may span several messages: memcached sends each
	 * hit of a multi-get, each pipelined response, as a message of its own, so only the
	 * parser (mc_reply_expect) can say when the reply is complete. Without a free parser
	 * such a slot is freed by its timeout. */
	struct mc_reply_parser *parsers;
	uint16_t *parser_free; /* stack of free parser indices */
	uint32_t n_parser_free;

	/* Multi-gets being merged: contexts, a stack of free ones, the live list (oldest first:
	 * all share one timeout, so only the head can be due) and the bytes buffered. */
	struct dp_mget *mgets;
	uint16_t *mget_free;
	uint32_t n_mget_free;
	uint16_t mget_head, mget_tail;
	uint16_t send_head, send_tail; /* merged replies being sent, oldest first */
	uint32_t mget_send_burst;      /* merged datagrams offered to the TX queue per poll */
	uint64_t mget_bytes;
	uint64_t mget_bytes_peak;
	uint64_t mget_bytes_max;
	uint32_t mget_body_max; /* merged reply bytes per datagram after the frame header */
	uint32_t mtu;           /* IP MTU of the port(s): rewrite_mixed's bound */
	struct rte_mbuf **mget_index; /* scratch: a stream's mbufs by position (finish) */
	uint32_t mget_index_max;
	struct rte_mempool *pool;
	uint64_t *node_mget_partial; /* per endpoint */
	/* Per endpoint: this worker's multi-get sub-requests in flight to it (taken in
	 * send_sub, given back in sub_end: every sub-request sent ends there once, by reply,
	 * error or timeout), and the TSC of its last sign of progress (a sub-reply datagram, or a
	 * sub-request sent while it had none in flight). A node holding mget_node_share of them
	 * with no progress for half a request timeout gets no more: a multi-get touching it is
	 * answered without its keys (misses, as on its timeout), so a silent node cannot hold
	 * every context until it is detected, while a busy node that answers is never cut. */
	uint16_t *node_mget_out;
	uint64_t *node_mget_seen;
	uint32_t mget_node_share;
	uint64_t *node_tmo;	     /* per endpoint: slots expired without an answer */
	uint64_t *node_lost;	     /* per endpoint: dirty keys the ring had no room for */
	struct dp_dirty *dirty;	     /* DP_DIRTY_RING entries */
	_Atomic uint32_t dirty_head; /* written by the control lcore */
	_Atomic uint32_t dirty_tail; /* written by this worker */
	uint32_t failover_ttl_s;
	uint32_t replicas; /* copies of each write (dp_repl.c); 1: the owner alone */
	uint16_t probe_port;
	uint8_t failover; /* enum dp_failover */

	/* Warm-up (dp_warm.c): contexts of moved keys' reads, reused round robin (a context
	 * outlived by its slot's use is told apart by the slot's tsc and generation), each
	 * slot's context (DP_NO_WARM: none), and until when a reply may find one. */
	struct dp_warm_ctx *warm;
	uint16_t *warm_of_slot;
	uint32_t warm_next;
	uint32_t warm_ttl_s;
	uint64_t warm_gate;
	const struct dp_view *prev_cur; /* the previous placement loaded for this burst */
	bool warm_reads;		/* ... and its warm-up window is open (reads follow) */
	/* dp->drain loaded for this burst (dp_drain.c): DP_DRAIN_WORD_MODE() 0 serving, else the
	 * drain answer + 1 that new requests get. */
	uint32_t drain;

	struct rte_ring *handoff; /* MP/SC: replies for this worker's slots from others */
	struct rte_ring *ctl_ring; /* SP/SC: packets the control lcore wants sent (worker 0) */

	const struct dp_view *cur; /* the view loaded for this burst */
	uint64_t epoch_seen;       /* epoch of the last view this worker used */
	struct mc_requests req;    /* the request path's parse scratch (dp_worker.c) */
	/* The look-ahead's records and parses, by packet index in the burst modulo
	 * DP_AHEAD_RING: the packets from the one being handled to the one DP_HINT_AHEAD ahead
	 * each keep theirs. */
	struct mc_requests ahead[DP_AHEAD_RING];
	struct dp_ahead ahead_pkt[DP_AHEAD_RING];

	uint16_t ntx;
	struct rte_mbuf *tx[DP_TX_CAP];
	uint8_t tx_tag[DP_TX_CAP];
	uint32_t tx_ep[DP_TX_CAP];
	uint32_t tx_slot[DP_TX_CAP]; /* FORWARDED: the request's slot, or DP_NO_SLOT */

	uint64_t ctr[DP_CTR_COUNT];
	uint64_t drop[DP_DROP_COUNT];
	uint64_t *node_fwd; /* per endpoint */
	uint64_t *node_ret;
	/* Latency (dp_observe.h): round trips per endpoint (bucket-major: the lines a reply
	 * touches stay hot however many nodes), the router's own time per packet;
	 * ns = cycles * ns_mult >> DP_NS_SHIFT. */
	struct obs_hist_set node_rtt;
	struct obs_hist *router_time;
	uint64_t ns_mult;

	/* Hot keys (dp_hot.h): requests until the next sample, the sketches. */
	uint32_t hot_left;
	struct dp_hotw *hot;

	/* Written by the control lcore (release), read by this worker once per burst (acquire). */
	_Atomic(struct dp_view *) view __rte_cache_aligned;
	/* Warm-up: the placement before the last membership change while its window is open,
	 * else NULL; published and retired by the control lcore like view (dp_warm.c). */
	_Atomic(struct dp_view *) prev_view;
	/* Failover copies known current (dp_failover.c), shared by all workers: dp->fo_seen. */
	_Atomic uint64_t *fo_seen;

	/* IP fragments (dp_frag.c): the reassembly (NULL: none), fragments it holds now (a
	 * gauge and a term of the accounting identity), the last IPv6 fragment id sent. */
	struct dp_frag *frag;
	uint32_t frag_held;
	uint32_t frag_id6;

	/* Drain (dp_drain.c): the drain word this worker last found itself empty under (no slot,
	 * no multi-get) at the end of a poll, 0 when not empty. Written by this worker (relaxed,
	 * only while draining), read by the control lcore. */
	_Atomic uint32_t drain_ack;
} __rte_cache_aligned;

struct dp {
	struct dp_config cfg;
	struct dp_worker *w[DP_WORKERS_MAX];
	struct rte_rcu_qsbr *rcu;
	struct dp_endpoint *eps;
	_Atomic uint32_t n_eps_hwm; /* entries [0, hwm) may be in use */
	_Atomic uint64_t epoch;
	_Atomic bool stop;
	uint64_t tsc_hz;
	/* Unix time (CLOCK_REALTIME, s) at TSC unix_tsc0, read once at creation: workers turn a
	 * TSC into Unix seconds without a syscall (dp_unix_now) for the absolute exptimes memcached
	 * needs beyond 30 days. Drift of the TSC against the wall clock is ppm: seconds in a week,
	 * nothing to a 30-day horizon. */
	uint64_t unix_s0;
	uint64_t unix_tsc0;
	struct rte_ring *handoff_rings[DP_WORKERS_MAX];
	uint64_t client_macs[DP_CLIENT_MACS_MAX]; /* cfg.client_macs as MAC words */
	struct dp_obs *obs; /* latency: control-side state (dp_observe.c) */
	struct dp_health *health;		  /* control lcore (dp_health.c) */
	/* Warm-up window (control lcore, dp_warm.c): TSC it ends at (0: none open), the epoch
	 * of the placement held as previous; memory of each worker's current view and its
	 * placement clone (set at publication) and of the previous one it holds (a gauge). */
	uint64_t warm_until;
	uint64_t warm_prev_epoch;
	/* The window is open: moved keys' reads ask the previous owner after a miss. Without
	 * it the previous placement is still held, for writes only (dp_warm.c). Written by the
	 * control lcore, read by workers once per burst (relaxed: a burst that sees the old
	 * value either follows one read too many, which is harmless, or one too few). */
	_Atomic bool warm_reads;
	size_t view_bytes[DP_WORKERS_MAX];
	size_t warm_bytes[DP_WORKERS_MAX];
	struct rt_table routes; /* control lcore: what next hops resolve with (dp_route.c) */
	struct dp_hot *hot; /* hot keys: control-side state (dp_hot.c) */
	_Atomic(struct dp_hotset *) hotset; /* hot keys being spread (dp_hot.h); NULL: none */
	/* The published gutter pool (control lcore): what dp_publish_placement() puts in each
	 * new view. pl malloc-owned, NULL: none. */
	struct {
		struct pl_placement *pl;
		uint32_t *ep;
		uint32_t n;
	} gutter;
	/* Failover copies known current: DP_FO_SEEN entries shared by the workers (relaxed
	 * 64-bit stores and loads), allocated by dp_health_init(), freed by dp_health_free(). */
	_Atomic uint64_t *fo_seen;
	uint32_t health_gen_next; /* control lcore: the last health_gen given (dp_health.c) */
	/* Drain (dp_drain.c). The word workers load once per burst (relaxed: a burst that
	 * still sees the old word serves its requests as before the command, which is what a
	 * request that arrived before it gets): a sequence number that grows with each drain
	 * (bits 2..31, never 0 while draining) and the mode (bits 0..1). Written by the control
	 * lcore only. */
	_Atomic uint32_t drain;
	_Atomic uint32_t drain_state; /* enum dp_drain_state, for readers on any lcore */
	uint32_t drain_seq;	      /* control lcore: the last sequence number given */
	uint32_t drain_at_start;      /* slots in use when the drain began */
	uint64_t drain_tsc;	      /* TSC the drain began at (0: serving) */
	uint64_t drained_tsc;	      /* TSC it was first seen drained (0: not yet) */
};

/* Latch drained once every worker is empty under the current drain (dp_drain.c). Lcore:
 * control (dp_control_poll, dp_drain_get). */
void dp_drain_poll(struct dp *dp);

/* The drain word's parts (struct dp.drain). */
#define DP_DRAIN_WORD_MODE(x) ((x) & 3u)
#define DP_DRAIN_WORD(seq, mode) (((seq) << 2) | (mode))

/* Unix seconds at TSC @p tsc (a worker's w->now), for exptimes (mc_exptime_write). */
static inline uint64_t dp_unix_at(const struct dp *dp, uint64_t tsc)
{
	return dp->unix_s0 + (tsc > dp->unix_tsc0 ? (tsc - dp->unix_tsc0) / dp->tsc_hz : 0);
}

/* True when IPv6 address @p a is not all zero. */
static inline bool dp_ip6_set(const uint8_t a[16])
{
	uint64_t x[2];

	memcpy(x, a, 16);
	return (x[0] | x[1]) != 0;
}

/* The solicited-node multicast MAC of @p a: 33:33:ff and its last three bytes (RFC 2464,
 * RFC 4291 2.7.1). */
static inline void dp_sn_mac(const uint8_t a[16], struct rte_ether_addr *mac)
{
	const uint8_t m[6] = {0x33, 0x33, 0xff, a[13], a[14], a[15]};

	memcpy(mac, m, 6);
}

/* Worker @p w receives from the node port (@p node) or the client port next: the addresses,
 * VLAN and roles the packets of that burst are checked against. With one port both roles
 * stay on (set once at creation). */
static inline void dp_rx_side(struct dp_worker *w, bool node)
{
	const struct dp_config *c = &w->dp->cfg;

	w->router_ip = node ? c->node_router_ip : c->router_ip;
	w->ipv4_etype = w->router_ip != 0 ? rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) : DP_ETYPE_NONE;
	memcpy(&w->router_mac, node ? c->node_router_mac : c->router_mac, 6);
	memcpy(w->router_ip6, node ? c->node_router_ip6 : c->router_ip6, 16);
	w->has_ip6 = dp_ip6_set(w->router_ip6);
	dp_sn_mac(w->router_ip6, &w->sn_mac);
	w->vlan_want = (node ? c->node_vlan_fixed : c->vlan_fixed)
			       ? (node ? c->node_vlan_id : c->vlan_id)
			       : DP_VLAN_ANY;
	w->n_listen = c->two_ports && node ? 0 : c->n_listen;
	w->reply_count = c->two_ports && !node ? 0 : c->reply_port_count;
	w->answer_tag = c->two_ports && node ? DP_TX_ANSWERED_NODE : DP_TX_ANSWERED;
	w->hdr = w->hdr_side[node];
	w->hdr6 = w->hdr6_side[node];
}

/* dp_mget.c: multi-gets over several nodes. Each consumes @p m. */
/* Split @p r, the parsed request of @p pk (whose keys live on several nodes), or refuse it. */
void dp_mget_split(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
		   const struct mc_requests *r);
/* A datagram of a sub-reply for slot @p s (checked: live, source, generation, VLAN). */
void dp_mget_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t s);
/* Slot @p s of a sub-request timed out. */
void dp_mget_slot_expired(struct dp_worker *w, uint32_t s);
/* Send the merged replies whose time is up. */
void dp_mget_expire(struct dp_worker *w);
/* Offer the TX queue up to mget_send_burst datagrams of the merged replies waiting on the
 * send list; what it does not take waits for the next poll. */
void dp_mget_send(struct dp_worker *w);
/* Allocate / free a worker's contexts (control lcore). */
int dp_mget_init(struct dp_worker *w, const struct dp_config *c, int socket);
void dp_mget_free(struct dp_worker *w);

/* dp_observe.c: a worker's histograms (control lcore, at creation), the control-side state,
 * and an endpoint (re)claimed for a new node: its round trips count from now. */
int dp_obs_worker_init(struct dp_worker *w, const struct dp_config *c, int socket);
void dp_obs_worker_free(struct dp_worker *w);
int dp_obs_init(struct dp *dp);
void dp_obs_free(struct dp *dp);
void dp_obs_ep_claimed(struct dp *dp, uint32_t ep);
/* The quantile gauges and slow_nodes of @p out (dp_stats_get). */
void dp_obs_stats(const struct dp *dp, int worker, struct dp_stats *out);
/* The latency fields of node @p ep. */
void dp_obs_node_fill(const struct dp *dp, uint32_t ep, struct dp_node_stats *o);
/* /ringway/latency telemetry. */
int dp_obs_telemetry_register(struct dp *dp);
/* dp_failover.c: stand-ins for down nodes; worker lcore. */
/* The endpoint serving key @p key (@p len bytes, hash @p hash in the burst's view) whose
 * owner is down: [failover] next: the next distinct member in the algorithm's replica order
 * (pl_replicas) that is serving and has a MAC; gutter: the first such node of the gutter
 * pool in its own placement's replica order for the key. -1: none in the first DP_FO_WALK. */
#define DP_FO_WALK 8
int32_t dp_fo_target(const struct dp_worker *w, const uint8_t *key, size_t len, uint64_t hash);
/* Remember that key @p key (@p len bytes) was written or deleted while endpoint @p ep was down,
 * the write sent to stand-in @p at (UINT32_MAX: none; or that replica @p ep missed its write:
 * dp_repl.c). In dp_tx.c, the layer below both. */
void dp_fo_dirty(struct dp_worker *w, uint32_t ep, uint32_t at, const uint8_t *key, size_t len);

/* Entries of the table of failover copies known current (a power of two). */
#define DP_FO_SEEN (1u << 16)
/* A write of the key hashed @p hash (the placement's hash) for down endpoint @p owner went to
 * stand-in @p target: its copy there is current for this outage of owner and this life of
 * target. */
void dp_fo_mark(const struct dp_worker *w, uint64_t hash, uint32_t owner, uint32_t target);
/* The copy at @p target of the key hashed @p hash is known current (dp_fo_mark in this outage
 * of @p owner and this life of @p target). false: it may be older; read it only after it is
 * deleted there. */
bool dp_fo_known(const struct dp_worker *w, uint64_t hash, uint32_t owner, uint32_t target);
/* Datagram @p p (@p len bytes, parsed as @p r) with a quiet delete of each key k with
 * unknown[k] before its requests, in @p out (@p cap bytes). @return its length, 0: no room. */
size_t dp_fo_delete_first(const uint8_t *p, size_t len, const struct mc_requests *r,
			  const bool *unknown, uint8_t *out, size_t cap);
/* dp_repl.c: replicated pools (dp_worker.replicas > 1); worker lcore. The rules are there. */
/* Endpoint @p ep is one of the other replicas (not the owner) of the key hashed @p hash:
 * its copy is current (false whenever replicas is 1). */
bool dp_repl_holds(const struct dp_worker *w, uint64_t hash, uint32_t ep);
/* The first serving replica with a known MAC of the key hashed @p hash after its owner, or -1
 * (none, or replicas 1): where a down owner's request for it goes. */
int32_t dp_repl_target(const struct dp_worker *w, uint64_t hash);
/* The writes of @p r (the parse of @p pk, all of one owner) reach the key's other replicas:
 * the datagram copied, or deletes of its keys; replicas that cannot take them have the keys
 * recorded (dp_fo_dirty). Endpoints @p sent (it gets the client's own datagram) and @p skip
 * (a down owner whose keys the caller records; UINT32_MAX: none) are left out. Before the
 * client's datagram is rewritten or sent. */
void dp_repl_write(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		   uint32_t sent, uint32_t skip);
/* The endpoint's health word: true when requests go to it. */
static inline bool dp_ep_serving(const struct dp_worker *w, uint32_t ep)
{
	return atomic_load_explicit(&w->eps[ep].health, memory_order_relaxed) == DP_EP_SERVING;
}

/* dp_health.c: control lcore. Free the health state (dp_free); forget endpoint @p e's (a new
 * member takes it: serving, no probe); a node's health fields for dp_node_stats; the dirty
 * sets' memory. */
struct dp_ep_health;
void dp_health_free(struct dp *dp);
void dp_health_reset(struct dp *dp, struct dp_endpoint *e);
/* A member joins (not serving until its flush_all is answered; its keys fail over meanwhile).
 * @return 0, -ENOMEM. */
int dp_health_join_flush(struct dp *dp, struct dp_endpoint *e);
void dp_health_fill(const struct dp *dp, uint32_t i, struct dp_node_stats *o);
uint64_t dp_health_bytes(const struct dp *dp);
/* The failover table (dp->fo_seen): 0 or -ENOMEM. Before the workers are made. */
int dp_health_init(struct dp *dp);

/* dp_warm.c: warm-up routing on membership changes. */
#define DP_WARM_CTX	256 /* contexts per worker, a power of two */
#define DP_WARM_REQ_MAX 384 /* request bytes (after the frame header) a context keeps */
#define DP_NO_WARM	UINT16_MAX
/* A moved key's read in flight: stage 1 at its new owner, 2 at its previous owner. */
struct dp_warm_ctx {
	uint64_t tsc;  /* the bound slot's tsc and request id (its generation) */
	uint32_t slot; /* DP_NO_SLOT: free */
	uint32_t new_ep;
	uint32_t prev_ep;
	uint16_t reqid;
	uint16_t req_len;
	uint8_t stage;
	uint8_t proto;
	uint8_t key_len;
	uint8_t key[MC_KEY_MAX]; /* decoded */
	uint8_t req[DP_WARM_REQ_MAX];
};
/* Worker lcore, a previous placement held (w->prev_cur): for request @p r of @p pk going to
 * endpoint @p ep, send deletes to the previous owners of moved keys it writes, and, while the
 * window is open (w->warm_reads), for a single-key read of a moved key, prepare a context:
 * @return its index (bind it to the request's slot with dp_warm_bind), or -1. */
int dp_warm_request(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		    uint32_t ep);
/* ... the deletes alone, for requests @p first.. of @p r of @p pk whose keys' owner @p owner
 * does not serve (failover_request: the writes go to a stand-in, the previous owners still
 * hold the moved keys' older values; the deletes it put before reads are not writes). */
void dp_warm_writes(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		    uint32_t owner, uint16_t first);
void dp_warm_bind(struct dp_worker *w, uint32_t ctx, uint32_t s);
/* Worker lcore: a reply datagram for slot @p s (checked). @return true when it consumed @p m
 * (a new owner's miss absorbed, the previous owner asked); false: pass it on as usual. */
bool dp_warm_reply(struct dp_worker *w, struct rte_mbuf *m, const struct dp_pkt *pk, uint32_t s);
/* Control lcore: contexts (creation / teardown); at publication, before dp->epoch moves on,
 * keep @p old[k] (each worker's replaced view) as the previous placement, putting the one it
 * replaces in old[k] to be freed, or leave it in old[] (first publication; a window open
 * already keeps its oldest). */
int dp_warm_init(struct dp_worker *w, const struct dp_config *c, int socket);
void dp_warm_free(struct dp_worker *w);
void dp_warm_rotate(struct dp *dp, struct dp_view **old);

/* dp_route.c (control lcore): the next hop of @p ip under dp->routes (0: no route); and
 * endpoint @p i, just (re)claimed for a node, takes the MAC another endpoint behind the same
 * next hop learned (a new node behind a known gateway needs no ARP of its own). */
uint32_t dp_route_nexthop(const struct dp *dp, uint32_t ip);
/* ... of IPv6 node @p ip6 into @p nh6 (all zero: no route). */
void dp_route_nexthop6(const struct dp *dp, const uint8_t ip6[16], uint8_t nh6[16]);
/* Endpoints @p a and @p b have the same next hop (family and, for IPv6, all 16 bytes). */
static inline bool dp_same_nh(const struct dp_endpoint *a, const struct dp_endpoint *b)
{
	return a->v6 == b->v6 &&
	       atomic_load_explicit(&a->nh_ip, memory_order_relaxed) ==
		       atomic_load_explicit(&b->nh_ip, memory_order_relaxed) &&
	       (!a->v6 || memcmp(a->nh_ip6, b->nh_ip6, 16) == 0);
}
void dp_route_share_mac(struct dp *dp, uint32_t i);

/* dp_local.c: each consumes @p m (answers, absorbs or drops it). */
void dp_local_arp(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk);
void dp_local_icmp(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk);
/* ICMPv6 (@p pk parsed to the ICMPv6 header at l3_len, its checksum checked): echo request
 * (the client ACL passed), Neighbor Solicitation for address6, Neighbor Advertisement. */
void dp_local_icmp6_echo(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk);
void dp_local_nd(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk);
/* Reply to the client with the text/binary answer for the requests in @p r, the parse of
 * @p pk (version, mn, noop), or the error @p why (non-NULL: refused / split) with binary
 * status @p status (enum mc_bin_status) for request @p req_idx. Sets ANSWERED. */
void dp_local_mc_reply(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk,
		       const struct mc_requests *r, const char *why, bool server_error,
		       uint16_t status, uint16_t req_idx);
/* Build an ARP request for @p target_ip from the router; NULL when the pool is empty or the
 * router has no IPv4 on the node side (IPv6-only). */
struct rte_mbuf *dp_arp_request(const struct dp *dp, uint32_t target_ip);
/* Build a Neighbor Solicitation for IPv6 @p target from the router (to its solicited-node
 * multicast address, with the router's link-layer address); NULL when the pool is empty or
 * the router has no IPv6. */
struct rte_mbuf *dp_ns_request(const struct dp *dp, const uint8_t target[16]);

#endif /* RINGWAY_DATAPLANE_PRIV_H */
