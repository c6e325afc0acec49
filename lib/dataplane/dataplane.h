/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DATAPLANE_H
#define RINGWAY_DATAPLANE_H

/**
 * @file
 * The router's data plane: poll-mode workers that parse memcached UDP requests, look the key
 * up on their own replica of the placement, forward the request to the owning node from a
 * (worker, slot)-naming source port, and return the node's reply to the client it answers.
 *
 * Lcore contexts (every function says which one may call it):
 *  - control: the main lcore (or the single thread of a test) that created the dp; it owns
 *    publication, neighbour (ARP) timers and teardown. Never a worker.
 *  - worker w: the lcore running dp_worker_run() for w, or, when no lcore runs w, any single
 *    thread driving w by hand with dp_worker_poll() (tests, benchmarks).
 *  - any: any thread, including DPDK's telemetry thread.
 *
 * Errors: constructors return NULL and set errno (and rte_errno is not used); other calls
 * return 0 or a negative errno. Nothing here logs, prints (except dp_stats_print) or exits.
 *
 * Accounting: every packet a worker receives is counted exactly once as forwarded (request
 * sent to a node), returned (node reply sent to its client), answered (handled by the router:
 * ARP, ICMP echo, a memcached reply it built) or dropped with one reason from
 * DP_FOREACH_DROP. rx = forwarded + returned + answered + dropped holds exactly over all
 * workers whenever no reply is in flight between two workers (hand-off rings empty).
 *
 * Multi-gets whose keys live on several nodes (ASCII get/gets/gat/gats, binary GETQ/GETKQ/
 * GATQ/GATKQ ... NOOP, meta mg ... mn) are split: one new packet per node, each with a request
 * slot of its own; the nodes' replies are parsed and merged into one reply under the client's
 * request id, buffered until every node answered or the request timeout passed (a silent
 * node's keys are misses), then sent as datagrams numbered 0..total-1. In the accounting the
 * client's request counts as forwarded once and every node datagram absorbed into a merged
 * reply as returned; the sub-requests and merged datagrams the router builds are counted
 * apart (multiget_subrequests, multiget_datagrams).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>

#include "health.h"
#include "mcproto.h"
#include "placement.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most workers a dp runs. */
#define DP_WORKERS_MAX 64
/** Most listen ports and allowed-client prefixes. */
#define DP_LISTEN_MAX 16
#define DP_PREFIXES_MAX 256
/** Most MACs client requests may come from (struct dp_config.client_macs). */
#define DP_CLIENT_MACS_MAX 64
/** Most packets one burst handles. */
#define DP_BURST_MAX 256

/** Packet counters of a worker, in telemetry and exit-print order: name, meaning. */
#define DP_FOREACH_COUNTER(_)                                                                      \
	_(RX, "rx")                     /* packets received from the worker's RX queue */         \
	_(FORWARDED, "forwarded")       /* requests sent to a node */                             \
	_(RETURNED, "returned")         /* reply datagrams sent back to their client */           \
	_(ANSWERED, "answered")         /* handled by the router itself (ARP, ICMP, mc replies) */ \
	_(DROPPED, "dropped")           /* sum of the drop reasons */                             \
	_(HANDED_OVER, "handed_over")   /* replies passed to the worker owning their slot */      \
	_(TAKEN_OVER, "taken_over")     /* replies received from another worker */                \
	_(SLOTS_EXPIRED, "slots_expired") /* request slots freed by timeout */                    \
	_(SLOTS_COMPLETED, "slots_completed") /* request slots freed by a complete reply */       \
	_(SLOTS_QUIET_EXPIRED, "slots_quiet_expired") /* ... after quiet_read_ms (quiet reads) */ \
	_(SLOTS_TX_FREED, "slots_tx_freed") /* ... at once: the TX queue refused the request */   \
	_(QUIET, "quiet_forwarded")     /* noreply/quiet writes: forwarded, no slot kept */        \
	_(MULTI_TRACKED, "multi_tracked") /* multi-message replies followed by a parser */        \
	_(MULTI_UNTRACKED, "multi_untracked") /* ... without a free parser: freed by timeout */   \
	_(FAST, "fast_lane") /* requests forwarded by the fast lane (single-key reads) */         \
	_(FAST_FALLBACK, "fast_fallback") /* ... of its shape that the general path handled */   \
	_(REPLY_LANE, "reply_lane") /* one-datagram replies returned by the reply lane */        \
	_(ARP_REPLIED, "arp_replied")   /* ARP requests for the router's address answered */      \
	_(ARP_LEARNED, "arp_learned")   /* ARP replies to the router's requests that taught a \
					   node's MAC */                                          \
	_(ARP_MAC_CHANGED, "arp_mac_changed") /* ... of them that moved a known MAC */            \
	_(ICMP_ECHOED, "icmp_echoed")	      /* ICMP and ICMPv6 echo requests answered */         \
	_(ND_REPLIED, "nd_replied") /* Neighbor Solicitations for address6 answered (NA) */        \
	_(ND_LEARNED, "nd_learned") /* Neighbor Advertisements answering the router's NS that      \
				       taught a node's (or gateway's) MAC */                       \
	_(MC_VERSION, "mc_version")     /* memcached version (and lone no-op) answered */         \
	_(MC_REFUSED, "mc_refused")     /* keyless admin commands refused with an error reply */  \
	_(MC_SPLIT_REFUSED, "mc_split_refused") /* multi-node requests of no splittable shape */ \
	_(MGET_SPLIT, "multiget_split") /* multi-gets split into one sub-request per node */       \
	_(MGET_SUBREQ, "multiget_subrequests") /* sub-requests the NIC took */                     \
	_(MGET_MERGED, "multiget_merged") /* merged replies sent to their client */               \
	_(MGET_PARTIAL, "multiget_partial") /* ... of them with a node's keys as misses */        \
	_(MGET_NODE_TIMEOUTS, "multiget_node_timeouts") /* sub-replies not complete in time */    \
	_(MGET_NODE_SHARE, "multiget_node_share") /* sub-requests not sent: the node held its share */ \
	_(MGET_NODE_ERRORS, "multiget_node_errors") /* sub-replies with an error or unparsable */ \
	_(MGET_REFUSED, "multiget_refused") /* refused: in-flight or buffer limit, no slot */     \
	_(MGET_OVERFLOW, "multiget_overflow") /* merged reply over the buffer: SERVER_ERROR */    \
	_(MGET_DATAGRAMS, "multiget_datagrams") /* merged reply datagrams the NIC took */         \
	_(MGET_TX_FAILED, "multiget_tx_failed") /* sub-requests / merged datagrams TX refused */  \
	_(MGET_TX_WAITS, "multiget_tx_waits") /* polls a merged reply waited for TX room */       \
	_(CTL_TX, "ctl_tx")		  /* packets sent for the control lcore (ARP, probes) */   \
	_(PROBE_REPLIES, "probe_replies") /* nodes' answers to the router's probes and replica  \
					     copies: their own accounting term, never passed  \
					     to a client */                                   \
	_(FAILOVER_NEXT, "failover_next") /* requests of a down node's keys sent to a stand-in */  \
	_(FAILOVER_GUTTER, "failover_gutter") /* ... of them sent to a gutter node */              \
	_(FAILOVER_FAST, "failover_fast") /* ... answered at once with the protocol's error */     \
	_(DRAIN_ANSWERED, "drain_answered") /* new requests of a draining router answered with the \
					       protocol's error (drain_answer error) */          \
	_(FAILOVER_NO_TARGET, "failover_no_target") /* ... with no live stand-in: an error */      \
	_(FAILOVER_TTL, "failover_ttl_capped")	    /* stand-in writes whose expiry was capped */  \
	_(DIRTY_KEYS, "dirty_keys")	 /* keys written or deleted for a down node, recorded */   \
	_(DIRTY_LOST, "dirty_keys_lost") /* ... not recorded: the worker's ring was full */        \
	_(FAILOVER_UNKNOWN, "failover_unknown") /* failover reads of keys whose copy at the     \
						   stand-in may be older: deleted there first   \
						   (a miss), or the failover error */           \
	_(TMO_BEFORE_CHANGE, "timeouts_before_change") /* timeouts of requests sent before the \
							  node's last health change: not  \
							  counted against it */            \
	_(WARM_MOVED_READS, "warm_moved_reads") /* reads of keys moved by the last change, in \
						   a warm-up window */                      \
	_(WARM_UNMOVED, "warm_unmoved") /* keys in a window that did not move: no warm path */     \
	_(WARM_NOT_FOLLOWED, "warm_not_followed") /* moved reads not single-key gets (misses  \
						     stay misses) */                          \
	_(WARM_ABSORBED, "warm_absorbed") /* new owners' misses absorbed to ask the previous     \
					     owner: their own accounting term */                 \
	_(WARM_REQUESTS, "warm_requests") /* reads sent to previous owners (the NIC took) */     \
	_(WARM_HITS, "warm_hits")	  /* ... answered with a hit: the client got it */        \
	_(WARM_MISSES, "warm_misses")	  /* ... answered with a miss */                          \
	_(WARM_FILLS, "warm_fills")	  /* `add`s of those hits sent to the new owners */       \
	_(WARM_NOT_FILLED, "warm_not_filled") /* hits not written back (value over a datagram, \
						 meta without f, expired) */                \
	_(WARM_DELETES, "warm_deletes") /* deletes sent to previous owners of written keys */   \
	_(MOVED_DELETES, "moved_deletes") /* ... after the window (or with warm-up off): the   \
	  previous owner must not hold an older value if the key moves back (issue 27) */      \
	_(WARM_UNSAFE_KEYS, "warm_unsafe_keys") /* keys ASCII cannot carry: no add / delete */   \
	_(WARM_TX_FAILED, "warm_tx_failed") /* warm-up packets without mbuf or TX room */       \
	_(HOT_SAMPLED, "hot_sampled")   /* requests whose first key went into the hot-key sketch */ \
	_(HOT_SPREAD, "hot_spread")     /* reads of hot keys sent to a replica, not the owner */   \
	_(HOT_MISSES, "hot_misses")     /* ... that missed there: the owner was asked */          \
	_(HOT_FETCHES, "hot_fetches")   /* gets the router sent to owners for them (NIC took) */  \
	_(HOT_FILLS, "hot_fills")       /* owners' values added to replicas (NIC took) */         \
	_(HOT_FILL_SKIPPED, "hot_fill_skipped") /* hits not copied: a write of the key began */   \
	_(HOT_INVALIDATIONS, "hot_invalidations") /* replica deletes on writes (NIC took) */      \
	_(HOT_TX_FAILED, "hot_tx_failed") /* fetches, fills, deletes not sent (TX, pool, MAC) */  \
	_(HOT_MISSED, "hot_missed") /* keys of hot-key writes a replica missed (not serving, not \
				       sent, TX refused): recorded, deleted there before it is read */ \
	_(REPL_COPIES, "repl_copies")   /* writes copied to another replica of their key (NIC  \
					   took) */                                             \
	_(REPL_DELETES, "repl_deletes") /* deletes at other replicas for writes not copied     \
					   (add, cas, incr, ...; NIC took) */                   \
	_(REPL_MISSED, "repl_missed")   /* keys of writes a replica missed (down, no MAC, no   \
					   room): recorded, deleted there before it is read */  \
	_(REPL_TX_FAILED, "repl_tx_failed") /* copies and deletes the TX queue refused (their \
					       keys counted in repl_missed) */             \
	_(REPL_FAILOVER, "repl_failover") /* requests of a down owner's keys sent to a replica  \
					     that holds them */                                \
	_(REPL_ANSWERS, "repl_answers") /* replicas' answers to copies, consumed (counted in    \
					   probe_replies) */                                    \
	_(POLLS, "polls")               /* loop iterations */                                     \
	_(IDLE_POLLS, "idle_polls")     /* iterations that found no packet */                     \
	_(PUBLISH_SEEN, "epochs_seen")  /* placement replicas picked up */                        \
	_(IP_REASSEMBLED, "ip_reassembled") /* datagrams reassembled from their fragments */       \
	_(IP_FRAG_MERGED, "ip_fragments_merged") /* fragments merged into a datagram that went on \
						    as the one that completed it: an accounting \
						    term */                                     \
	_(IP_FRAG_SENT, "ip_fragments_sent") /* fragments the router built for datagrams over the \
						MTU, each datagram's last aside (it is counted as \
						the datagram) */                                \
	_(IP_FRAG_TX_FAILED, "ip_fragments_tx_failed") /* ... that the TX queue refused */

enum dp_counter {
#define DP_CTR_ENUM(e, s) DP_CTR_##e,
	DP_FOREACH_COUNTER(DP_CTR_ENUM)
#undef DP_CTR_ENUM
	DP_CTR_COUNT
};

/** Drop reasons: enum suffix, telemetry name. Every dropped packet has exactly one. */
#define DP_FOREACH_DROP(_)                                                                         \
	_(MULTI_SEGMENT, "multi_segment")       /* chained mbuf: not supported */                 \
	_(TRUNC_ETH, "truncated_ethernet")      /* shorter than Ethernet (+ VLAN) header */       \
	_(NOT_FOR_US, "not_for_us")             /* unicast to another MAC */                      \
	_(SRC_MAC_GROUP, "source_mac_multicast") /* Ethernet source multicast or broadcast */     \
	_(NOT_IPV4, "not_ipv4")			  /* other EtherType (LLDP, QinQ, ...; IPv6 when   \
						     no address6 is set, IPv4 when no address) */  \
	_(TRUNC_IP, "truncated_ip")		  /* shorter than the IPv4 header it claims, or an \
						     IPv6 extension header cut short */            \
	_(BAD_IP, "bad_ip")			  /* version, IHL, total / payload length, IPv4    \
						     checksum, an IPv6 routing header with         \
						     segments left, too many extension headers */  \
	_(IP_FRAGMENT, "ip_fragment")		  /* fragments not reassembled: reassembly off,  \
						     not UDP, an IPv6 fragment header after other \
						     extension headers */                          \
	_(IP_FRAG_TIMEOUT, "ip_fragment_timeout") /* fragments whose datagram did not complete  \
						     within [timeouts] fragment_ms */             \
	_(IP_FRAG_TABLE_FULL, "ip_fragment_table_full") /* a new datagram's fragment, the      \
							   reassembly table full */            \
	_(IP_FRAG_INVALID, "ip_fragment_invalid") /* overlapping, duplicate, empty or more than \
						     8 fragments: the whole datagram */          \
	_(IP_TOO_BIG, "ip_too_big") /* a datagram over the router's limit: cut short by the port  \
				       (af_packet: larger than its frames), reassembled over       \
				       12288 bytes, or not to be fragmented again */               \
	_(NOT_OUR_IP, "not_our_ip")		  /* to another address (IPv6: or multicast) */    \
	_(NOT_UDP, "not_udp")                   /* other IP protocols (ICMP echo excepted) */     \
	_(FAMILY_TOO_BIG, "family_too_big")	  /* an IPv4 datagram to an IPv6 peer would pass   \
						     the MTU with its 20 more header bytes (or     \
						     the mbuf has no headroom for them) */         \
	_(BAD_ICMP, "bad_icmp")			  /* ICMP other than a well-formed echo request;   \
						     ICMPv6 other than that, NS for address6       \
						     or NA, or with a wrong checksum */            \
	_(BAD_ND, "bad_nd")			  /* NS / NA with hop limit not 255, code not 0,   \
						     short, bad options, or NS for another         \
						     target */                                     \
	_(TRUNC_UDP, "truncated_udp")           /* shorter than a UDP header */                   \
	_(BAD_UDP_LEN, "bad_udp_length")        /* UDP length lies about the IP payload */        \
	_(BAD_UDP_CKSUM, "bad_udp_checksum")	  /* UDP checksum wrong (0, none, is allowed in    \
						     IPv4) */                                      \
	_(UDP_ZERO_CKSUM, "udp_checksum_zero")	  /* IPv6 UDP without checksum (mandatory) */      \
	_(BAD_PORT, "bad_port")                 /* UDP to a port nobody listens on */             \
	_(CLIENT_DENIED, "client_denied")       /* source not in the allowed prefixes */          \
	_(CLIENT_MAC_DENIED, "client_mac_denied") /* source MAC not in allowed_client_macs */     \
	_(MC_FRAME, "mc_bad_frame")             /* frame header short, seq or total not 0/1 */    \
	_(MC_MULTI_DATAGRAM, "mc_multi_datagram") /* request spanning datagrams */                \
	_(MC_KEY_TOO_LONG, "mc_key_too_long")   /* key over 250 bytes */                          \
	_(MC_BAD_REQUEST, "mc_bad_request")     /* any other request parse error */               \
	_(NO_PLACEMENT, "no_placement")         /* no ring published yet, or no member weighs */  \
	_(NODE_NO_MAC, "node_no_mac")           /* owner's MAC not resolved (yet) */              \
	_(NO_SLOT, "no_free_slot")              /* worker's request table full */                 \
	_(CLIENT_SLOTS, "client_slot_cap")      /* the client holds client_slots_max slots */     \
	_(REPLY_NO_SLOT, "reply_no_slot")       /* reply for a slot that is not live */           \
	_(REPLY_WRONG_SOURCE, "reply_wrong_source") /* reply from another address than asked */   \
	_(REPLY_STALE, "reply_stale")           /* request id does not match the slot */          \
	_(REPLY_BAD_FRAME, "reply_bad_frame")   /* short frame, seq >= total, total changed */    \
	_(REPLY_WRONG_MAC, "reply_wrong_mac")   /* node's address, not its Ethernet source */     \
	_(REPLY_UNKNOWN_SOURCE, "reply_unknown_source") /* for another worker, not from a node */ \
	_(REPLY_DUPLICATE, "reply_duplicate")   /* datagram seq of a reply that already passed */ \
	_(REPLY_SEQ_AHEAD, "reply_seq_ahead")   /* seq 64+ past the reply's first missing one */  \
	_(VLAN_MISMATCH, "vlan_mismatch")       /* reply's VLAN id unlike the client's request */ \
	_(WRONG_VLAN, "wrong_vlan")             /* for the router, VLAN id not the port's */    \
	_(HANDOFF_FULL, "handoff_full")         /* owner worker's hand-off ring full */           \
	_(BAD_ARP, "bad_arp")                   /* malformed ARP, or ARP not for the router */    \
	_(ARP_UNSOLICITED, "arp_unsolicited")   /* ARP from a node's address that answers no  \
						   request of the router: ignored */      \
	_(ND_UNSOLICITED, "nd_unsolicited")   /* NA that answers no NS of the router */            \
	_(PROBE_FOREIGN, "probe_foreign")     /* to the probe port, not from a node */             \
	_(PROBE_STALE, "probe_stale")	      /* from a node, not the answer to its probe */       \
	_(FAILOVER_TOO_LONG, "failover_too_long") /* a stand-in write with its expiry capped       \
						     does not fit the datagram */                  \
	_(DRAINING, "draining") /* a new request while the router drains (drain_answer silent) */ \
	_(TX_FULL, "tx_full")                   /* TX queue did not take the packet */

enum dp_drop {
#define DP_DROP_ENUM(e, s) DP_DROP_##e,
	DP_FOREACH_DROP(DP_DROP_ENUM)
#undef DP_DROP_ENUM
	DP_DROP_COUNT
};

/** Name of a counter / drop reason ("unknown" when out of range). */
const char *dp_counter_name(enum dp_counter c);
const char *dp_drop_name(enum dp_drop d);

/** What a worker does when its RX queue is empty. */
enum dp_idle {
	DP_IDLE_POLL = 0, /**< spin */
	DP_IDLE_BACKOFF,  /**< after backoff_after empty polls, sleep backoff_us per empty poll */
	/** spin while traffic is recent (for twice the worker's measured wake-up overshoot after
	 *  the last packet, at most 2 x backoff_us), then sleep an eighth of the time since the
	 *  last packet (1 us up to backoff_us), with a 1 ns timer slack; backoff_after unused */
	DP_IDLE_ADAPTIVE,
};

/** An IPv4 prefix, network byte order; s is in it when (s & mask) == addr. */
struct dp_prefix {
	uint32_t addr;
	uint32_t mask;
};

/** An IPv6 prefix, network byte order as two 64-bit words; s is in it when
 *  (s[i] & mask[i]) == addr[i] for both words. */
struct dp_prefix6 {
	uint64_t addr[2];
	uint64_t mask[2];
};

/** What workers do with a request whose owner is down ([failover] mode). */
#define DP_FOREACH_FAILOVER(_)                                                               \
	_(NEXT, "next") /* the next distinct live member in the algorithm's replica order */ \
	_(FAST, "fast")	    /* the protocol's own error at once, no slot held */                 \
	_(GUTTER, "gutter") /* the gutter pool ([gutter NAME]), placed by the same algorithm */

enum dp_failover {
#define DP_FAILOVER_ENUM(e, s) DP_FAILOVER_##e,
	DP_FOREACH_FAILOVER(DP_FAILOVER_ENUM)
#undef DP_FAILOVER_ENUM
		DP_FAILOVER_COUNT
};

/** Name of a failover mode ("unknown" out of range); parse one: 0 or -EINVAL. */
const char *dp_failover_name(enum dp_failover f);
int dp_failover_parse(const char *name, enum dp_failover *out);

/** What a draining router does with a new request on its listen ports (dp_drain_start). */
#define DP_FOREACH_DRAIN_ANSWER(_)                                                             \
	_(ERROR, "error")   /* the protocol's own error at once (SERVER_ERROR draining; binary: \
			       temporary failure), counted in drain_answered: clients fail over */ \
	_(SILENT, "silent") /* nothing: dropped and counted (drop reason draining) */

enum dp_drain_answer {
#define DP_DRAIN_ANSWER_ENUM(e, s) DP_DRAIN_##e,
	DP_FOREACH_DRAIN_ANSWER(DP_DRAIN_ANSWER_ENUM)
#undef DP_DRAIN_ANSWER_ENUM
		DP_DRAIN_ANSWER_COUNT
};

/** Name of a drain answer ("unknown" out of range); parse one: 0 or -EINVAL. */
const char *dp_drain_answer_name(enum dp_drain_answer a);
int dp_drain_answer_parse(const char *name, enum dp_drain_answer *out);

/** Everything a dp needs, fixed for its lifetime. Addresses and IPs in network byte order,
 *  ports in host byte order. */
struct dp_config {
	uint16_t port_id;          /**< ethdev port: RX queue w and TX queue w belong to worker w */
	uint16_t n_workers;        /**< 1..DP_WORKERS_MAX */
	unsigned int worker_socket[DP_WORKERS_MAX]; /**< NUMA socket of each worker's lcore */
	uint32_t router_ip;        /**< the router's IPv4 (network order); 0 = none (IPv6-only:
				        IPv4 frames are dropped as not_ipv4, no ARP) */
	/** The router's IPv6 (address6), network order; all zero: IPv6 is not served (IPv6
	 *  frames are dropped as not_ipv4). Nodes and clients may be of either family. */
	uint8_t router_ip6[16];
	uint8_t router_mac[6];     /**< source MAC of everything the router sends */
	uint16_t listen_ports[DP_LISTEN_MAX];
	uint16_t n_listen;         /**< >= 1 */
	uint16_t reply_port_base;  /**< first port of the reply range */
	uint32_t reply_port_count; /**< power of two, >= n_workers */
	struct dp_prefix allowed[DP_PREFIXES_MAX];
	uint16_t n_allowed;			     /**< 0 = nobody is served (over IPv4) */
	struct dp_prefix6 allowed6[DP_PREFIXES_MAX]; /**< IPv6 clients allowed */
	uint16_t n_allowed6;			     /**< 0 = nobody is served over IPv6 */
	/** Client requests (and ICMP echo) must come from one of these Ethernet sources (the
	 *  clients' own MACs or their gateways'); n_client_macs 0 = from any unicast MAC. */
	uint8_t client_macs[DP_CLIENT_MACS_MAX][6];
	uint16_t n_client_macs;
	/** Every request takes the general path (the fast lane off: tests compare the two). */
	bool no_fast_lane;
	uint32_t slots;            /**< request slots per worker: power of two, 64..65536 */
	uint32_t request_timeout_ms; /**< a slot without a complete reply is freed after this */
	uint32_t quiet_read_ms;    /**< a slot whose reply has no end the router can tell (quiet
				        reads without mn / NOOP after them) is freed after this;
				        0 or more than request_timeout_ms: request_timeout_ms */
	uint32_t client_slots_max; /**< slots one client address may hold in a worker; past it
				        its requests are dropped (client_slot_cap); 0 = no cap
				        (the default here; ringway's config sets 1024) */
	uint32_t burst;            /**< packets per RX burst, 1..DP_BURST_MAX */
	uint32_t handoff_ring;     /**< hand-off ring size per worker, power of two */
	uint32_t neighbours;       /**< node endpoints (address:port) the dp can track */
	uint32_t arp_retry_ms;     /**< between ARP requests for an unresolved node */
	uint32_t arp_attempts;     /**< requests before a node counts as unresolved */
	uint32_t arp_lifetime_s;   /**< a learned MAC is refreshed (re-ARPed) after this */
	enum dp_idle idle;
	uint32_t backoff_us;
	uint32_t backoff_after;
	bool tx_cksum_offload;     /**< the port computes IPv4 and UDP checksums on TX */
	/** Receive and send on a port only while its link is up, read once per poll: for a PMD
	 *  whose bursts use queue memory it maps on connect and unmaps on disconnect (DPDK
	 *  22.11's net_memif reads a ring it computed before checking that it is connected,
	 *  docs/performance.md, "Router deaths"). While a port's link is down what would leave on it is
	 *  refused as by a full queue. */
	bool link_gated;
	/** The port's VLAN: with vlan_fixed, only frames on VLAN vlan_id (0: untagged, a
	 *  priority tag counts as untagged) are served, anything else is dropped (wrong_vlan),
	 *  and the router's own ARP requests go out on it (tagged unless 0) and are answered
	 *  only there. Without: any VLAN is served (a reply must come on its request's) and
	 *  the router's ARP is untagged. */
	bool vlan_fixed;
	uint16_t vlan_id;          /**< 0..4094 */
	/** Two ports: clients on port_id (router_ip, router_mac, vlan_*), nodes on node_port_id
	 *  with addresses of their own (node_router_ip, node_router_mac, node_vlan_*): requests
	 *  are served only from the client port and leave on the node port, replies only from
	 *  the node port and leave on the client port; ARP for next hops, on the node port.
	 *  Worker w has RX/TX queue w on both. Without two_ports the node_* fields are ignored
	 *  (one port, the client fields serve both sides). */
	bool two_ports;
	uint16_t node_port_id;     /**< != port_id */
	uint32_t node_router_ip;   /**< the router's IPv4 on the node network (network order) */
	uint8_t node_router_ip6[16]; /**< ... its IPv6 there (all zero: router_ip6) */
	uint8_t node_router_mac[6];
	bool node_vlan_fixed;
	uint16_t node_vlan_id;
	bool no_arp_requests;      /**< never send ARP requests (AF_XDP mode: the kernel owns
				        ARP; feed MACs with dp_neigh_update()) */
	struct rte_mempool *pool;  /**< mbufs for packets the router builds (ARP requests,
				        multi-get sub-requests and merged replies) */
	uint32_t mtu;              /**< IP MTU of the port: merged multi-get replies use
				        datagrams of min(1400, mtu - 28) UDP payload bytes
				        (mtu - 48 with router_ip6); an IPv4 datagram too big
				        for it once its header grows for an IPv6 peer is
				        dropped (family_too_big) */
	uint32_t mget_max;         /**< multi-gets split and in flight per worker (0: none are
				        split, multi-node multi-gets are refused) */
	uint32_t mget_bytes;       /**< bytes of merged replies a worker may buffer (items being
				        merged and merged replies still to send) */
	uint32_t mget_send_burst;  /**< merged reply datagrams a worker offers its TX queue per
				        poll (what the queue does not take waits for the next) */
	/** Slow nodes (dp_slow_poll): a node whose round-trip p99 over a window of
	 *  slow_window_ms is above slow_factor_pct % of the fleet's median p99 is flagged;
	 *  only nodes with slow_min_replies replies in the window count, and at least 3 of
	 *  them. slow_factor_pct 0: never flagged. */
	uint32_t slow_factor_pct;
	uint32_t slow_window_ms;
	uint32_t slow_min_replies;
	struct hl_config health;   /**< node health thresholds (dp_health_poll) */
	enum dp_failover failover; /**< what a down node's requests get */
	uint32_t failover_ttl_s;   /**< most seconds a write sent to a stand-in lives there */
	/** Replicated pool (pl_config.replicas): writes go to the first @c replicas distinct
	 *  members of each key's replica walk, a down owner's keys are read from the next live
	 *  one of them (dp_repl.c); 0 or 1: the owner alone. At most PL_REPLICAS_MAX. */
	uint32_t replicas;
	uint32_t dirty_keys_max;   /**< keys remembered per down node (cleaned before it
					returns); past it the node waits for the operator */
	uint16_t probe_port;	   /**< UDP source port of the router's probes (host order):
					no listen port, outside the reply range; 0: one below the
					reply range */
	uint32_t warm_window_s;	   /**< warm-up: seconds each worker keeps the placement before
					a membership change next to the new one (0: off) */
	uint32_t warm_ttl_s;	   /**< expiry of a warm copy written to a new owner when the
					previous owner's reply does not say its TTL */
	/** Hot keys (dp_hotkeys_get): each worker files the first key of 1 in hot_sample_every
	 *  keyed requests (on average; 0: none) in its own Space-Saving sketch of
	 *  hot_sketch_keys keys (1..4096); the control lcore merges them every hot_interval_ms. */
	uint32_t hot_sample_every;
	uint32_t hot_sketch_keys;
	uint32_t hot_interval_ms;
	/** Spreading (dp_hot_pin): a key whose estimated rate is at least hot_threshold_pct % of
	 *  its owner's request rate (0: only pinned keys) has its single ASCII gets spread over
	 *  hot_replicas (2..8) replicas, the lower load of two random ones under
	 *  (100 + hot_load_pct) % of the average; copies are added with exptime hot_fill_ttl_s. */
	uint32_t hot_threshold_pct;
	uint32_t hot_replicas;
	uint32_t hot_load_pct;
	uint32_t hot_fill_ttl_s;
	/** IP fragments (dp_frag.h): datagrams in reassembly per worker (0: none, fragments are
	 *  dropped as ip_fragment), each given frag_timeout_ms (0: 500) to complete. */
	uint32_t frag_entries;
	uint32_t frag_timeout_ms;
	/** rte_flow rules the control lcore installed on the port replies arrive on
	 *  (dp_reply_steer_install) before creating the dp: reported as the gauge
	 *  reply_steering_rules, 0 = replies on another worker's queue are handed over. */
	uint32_t reply_steer_rules;
};

/** Fewest generation bits a request id keeps (the bits the reply port cannot name a slot
 *  with take the rest): a late or forged reply must not match a slot's current use by luck. */
#define DP_GEN_BITS_MIN 12

/** Generation bits of a request id with @p slots slots per worker and @p reply_port_count reply
 *  ports shared by @p n_workers workers (both powers of two). */
static inline unsigned int dp_generation_bits(uint32_t slots, uint32_t reply_port_count,
					      uint32_t n_workers)
{
	unsigned int s = 0, p = 0;

	while ((slots >> s) > 1)
		s++;
	while (n_workers != 0 && (reply_port_count / n_workers >> p) > 1)
		p++;
	return s > p ? 16 - (s - p) : 16;
}

/** Most datagrams a merged multi-get reply may take (the frame header's total is 16 bits). */
#define DP_REPLY_DATAGRAMS_MAX 65535

/** Longest miss line a merged meta reply rebuilds for a silent node: "EN", " O" and the
 *  client's opaque, " k" and the key, " b", "\r\n". */
#define DP_MGET_MISS_MAX (2 + 2 + MC_OPAQUE_MAX + 2 + MC_KEY_MAX + 2 + 2)

/** Datagrams of the largest merged multi-get reply a worker can send with a buffer of
 *  @p mget_bytes bytes and an IP MTU of @p mtu (0 = 1500): the buffer's items, every key's
 *  miss line and the terminator, in datagrams of min(1400, mtu - 28) bytes less the frame
 *  header. */
static inline uint32_t dp_mget_datagrams_max(uint32_t mget_bytes, uint32_t mtu)
{
	uint64_t udp = (mtu != 0 ? mtu : 1500) - 28;
	uint64_t bytes = (uint64_t)mget_bytes + (uint64_t)MC_MAX_KEYS * DP_MGET_MISS_MAX + 64;
	uint64_t body;

	if (udp > MC_UDP_PAYLOAD_MAX)
		udp = MC_UDP_PAYLOAD_MAX;
	body = udp - MC_FRAME_HDR_LEN;
	return (uint32_t)((bytes + body - 1) / body);
}

/** What dp_reply_steer_install() did on a port. */
struct dp_reply_steer {
	uint16_t port;	/**< the port the rules went on */
	uint32_t rules; /**< rte_flow rules installed; 0: replies are handed over */
	bool masked;	/**< rules match a worker's block of ports by mask (else one per port) */
	int err;	/**< 0, or the negative errno of the refusal */
	char why[160];	/**< why no rules: the PMD's message, or "one worker: ..." */
};

/** Most rules dp_reply_steer_install() creates (a PMD that matches exact ports only needs one
 *  per reply port and family). */
#define DP_STEER_RULES_MAX 32768

/**
 * Steer node replies to their worker on @p port (the port nodes reply on: node_port_id with
 * two ports, else port_id), started with c->n_workers RX queues: for each worker, rte_flow
 * rules "UDP to one of its reply ports -> its RX queue" (by port mask where the PMD can, else
 * one rule per port), IPv4 and/or IPv6 as the node side has an address, with the node side's
 * VLAN when fixed. Validated first; any refusal, and any failure to create one (the ones
 * created are flushed), leaves no rule: replies are then handed over between workers as
 * before. With one worker nothing is installed (returns 0, rules 0). Lcore: control, after
 * rte_eth_dev_start and before the workers poll (rules are never made by a worker).
 * @return 0 (see @p out->rules) or the negative errno of the refusal (also in @p out).
 */
int dp_reply_steer_install(uint16_t port, const struct dp_config *c, struct dp_reply_steer *out);
/** Remove every rte_flow rule on @p port (rte_flow_flush), before it stops. @return 0 or a
 *  negative errno (ENOSYS: the PMD has no rte_flow). Lcore: control. */
int dp_reply_steer_remove(uint16_t port);

/** Set @p cfg to defaults (listen 11211, 4096 slots, 1 s timeout, 20 ms for quiet reads, no
 *  per-client cap, ...); addresses zero. */
void dp_config_defaults(struct dp_config *cfg);

struct dp;
struct dp_worker;

/**
 * Create the data plane: per-worker state (request tables, hand-off rings, counters) in each
 * worker's NUMA-local memory, the RCU variable, the neighbour table. Needs EAL. No placement
 * is published yet: until dp_publish_placement(), requests are dropped (no_placement).
 * Lcore: control. @return the dp, or NULL with errno (EINVAL: bad config, ENOMEM).
 */
struct dp *dp_create(const struct dp_config *cfg);

/** Free everything; workers must have returned from dp_worker_run(). NULL is fine.
 *  Lcore: control. */
void dp_free(struct dp *dp);

/** Worker @p idx (0..n_workers-1), or NULL. Lcore: any. */
struct dp_worker *dp_worker_get(struct dp *dp, unsigned int idx);

/** Optional static MAC for a member of a placement being published, index-aligned with its
 *  members. */
struct dp_node_mac {
	uint8_t mac[6];
	bool has_mac; /**< false: resolve by ARP */
};

/**
 * Publish @p pl (with the epoch it stands for) to every worker: clone it once per worker into
 * that worker's NUMA-local memory (rte_malloc_socket), map each member to a neighbour entry
 * (static MACs from @p macs, index-aligned with the members, NULL = all by ARP), store each
 * worker's pointer with release order, wait with rte_rcu_qsbr_synchronize() until no worker
 * can read the previous replicas, then free them. @p pl stays the caller's.
 * Blocks for at most one loop iteration of every online worker.
 * Lcore: control. @return 0; -EINVAL (a member address is not a dotted IPv4), -ENOSPC
 * (neighbour table full), -ENOMEM. On error the previous placement stays in force.
 */
int dp_publish_placement(struct dp *dp, const struct pl_placement *pl,
			 const struct dp_node_mac *macs, uint64_t epoch);

/**
 * dp_publish_placement(), and each member i with @p flush[i] set (index-aligned with the
 * members; NULL: none) that no published ring holds (a node added, added back, or a gutter
 * node made a member) joins not serving: the control lcore sends it `flush_all` and it serves
 * once that is answered (dp_health_poll(); dp_health_joining() counts those still waiting).
 * Until then its keys fail over as a down node's do. Why: a node that left the ring (or was
 * never in this router's) may hold values older than the fleet's, and nothing else tells
 * which. Members already in the ring are never flushed. Lcore: control. @return as
 * dp_publish_placement().
 */
int dp_publish_placement_flush(struct dp *dp, const struct pl_placement *pl,
			       const struct dp_node_mac *macs, uint64_t epoch, const bool *flush);

/**
 * Before dp_publish_placement(@p pl, @p macs): give each member that no published ring holds
 * yet (a node being added) its neighbour entry now, so dp_control_poll() resolves its MAC
 * before any worker forwards to it (else the first requests for its keys would be dropped as
 * node_no_mac). Idempotent: call it, dp_control_poll() and again until it returns 0 or a
 * deadline passes; publishing anyway is safe (those requests are then dropped and counted).
 * Lcore: control. @return members new to the ring whose MAC is still unknown (static MACs
 * count as known), or -EINVAL / -ENOSPC / -ENOMEM as dp_publish_placement().
 */
int dp_prepare_placement(struct dp *dp, const struct pl_placement *pl,
			 const struct dp_node_mac *macs);

/**
 * [failover] gutter: make @p gpl (NULL or no members: none) the gutter pool every worker sends
 * a down node's keys to, placed by @p gpl's own algorithm (build it with the placement's
 * settings). Each gutter node gets a neighbour entry (static MACs from @p macs, index-aligned,
 * NULL = all by ARP) that health probes and ARP keep like a member's; a gutter node at a
 * member's address:port shares the member's entry. Published as the placement is: a new
 * view per worker (same placement, same epoch: a gutter change is no membership change),
 * swapped by RCU; dp_publish_placement() keeps the pool. Lcore: control. @return 0, or
 * -EINVAL / -ENOSPC / -ENOMEM as dp_publish_placement(); on -EINVAL / -ENOSPC the previous
 * pool stays; on -ENOMEM while building the views the new pool reaches the workers with the
 * next publication.
 */
int dp_publish_gutter(struct dp *dp, const struct pl_placement *gpl,
		      const struct dp_node_mac *macs);

/** Epoch of the last published placement (0 before any). Lcore: any. */
uint64_t dp_epoch(const struct dp *dp);

/**
 * Neighbour housekeeping: send ARP requests for unresolved or stale node MACs (through worker
 * 0's TX queue, via its control ring), give up after arp_attempts and retry later; every
 * hot_interval_ms, merge the workers' hot-key sketches into the view dp_hotkeys_get() reports.
 * Call every few milliseconds. Lcore: control.
 */
void dp_control_poll(struct dp *dp);

/**
 * Set the MAC of every node whose next hop is @p ip (network order: the node's own address,
 * or the gateway it is reached through) and that has no static MAC, as if an ARP packet had
 * taught it (e.g. from the kernel's neighbour table in AF_XDP mode).
 * Lcore: control. @return the number of nodes updated (0: no node has that address).
 */
unsigned int dp_neigh_update(struct dp *dp, uint32_t ip, const uint8_t mac[6]);

/**
 * dp_neigh_update() for an IPv6 next hop @p ip6 (16 bytes, network order): the nodes whose
 * next hop it is (AF_XDP mode: the kernel's IPv6 neighbour table). Lcore: control.
 */
unsigned int dp_neigh_update6(struct dp *dp, const uint8_t ip6[16], const uint8_t mac[6]);

struct rt_table;

/**
 * Route the nodes through @p t (see route.h; dp_create starts with an empty table: every node
 * is a neighbour): copy it, resolve every node endpoint's next hop again, and for each whose
 * next hop changed wait until no worker can still be learning the old next hop's MAC
 * (rte_rcu_qsbr_synchronize), then give it the MAC another endpoint knows for the new next
 * hop, or none (the control lcore ARPs for it at its next dp_control_poll; meanwhile requests
 * to that node are dropped as node_no_mac). Nodes publications claim later resolve through
 * @p t too. Never per packet: the workers read the next hop's MAC from the endpoint.
 * A node without a route is never resolved (the control plane refuses such members).
 * Lcore: control. @return endpoints whose next hop changed.
 */
unsigned int dp_set_routes(struct dp *dp, const struct rt_table *t);

/** A node whose learned MAC moved (dp_mac_changes()). */
struct dp_mac_change {
	char name[PL_NAME_MAX + 1];
	uint32_t ip; /**< network order (an IPv6 node: 0, see ip6) */
	bool v6;     /**< an IPv6 node: its address in ip6 */
	uint8_t ip6[16];
	uint8_t old_mac[6];  /**< the MAC the control lcore last saw settled */
	uint8_t new_mac[6];  /**< the MAC now used */
	uint32_t changes;    /**< changes since the last report */
};

/**
 * Nodes whose MAC an accepted ARP reply (or dp_neigh_update()) changed since the previous
 * call, at most @p max of them (the rest are reported by the next call): for the operator's
 * log, which the caller rate-limits by how often it asks. A node's MAC is learned only from
 * an ARP reply to the router's own outstanding request (untagged, to the router's MAC and
 * address, one reply per request), so a gratuitous or unsolicited ARP never moves it.
 * Lcore: control. @return entries written.
 */
uint32_t dp_mac_changes(struct dp *dp, struct dp_mac_change *out, uint32_t max);

/**
 * Worker main loop for rte_eal_remote_launch(): polls until dp_stop(). Registers the worker
 * online with RCU, reports quiescence once per iteration, goes offline while it sleeps in
 * backoff or adaptive (which also sets the calling thread's timer slack to 1 ns). @p arg is the
 * worker (dp_worker_get()). Lcore: worker. @return 0.
 */
int dp_worker_run(void *arg);

/** Ask every worker loop to return. Lcore: any (signal handlers included). */
void dp_stop(struct dp *dp);

/**
 * Return once every worker has finished the poll it was in when called (an RCU grace period:
 * workers report quiescence after each poll and are offline while they sleep or after they
 * stopped, so this takes a poll's time at most). For a thread about to free what a worker's
 * poll might still be reading. Lcore: any but a worker (a worker would wait for itself).
 */
void dp_quiesce(const struct dp *dp);

/**
 * One loop iteration without RCU reporting: drain the control and hand-off rings, receive a
 * burst, handle it (dp_forward_burst), expire a few slots.
 * Lcore: worker (a test thread driving w; the worker must not be online in RCU then).
 * @return packets received from the RX queue and hand-off ring.
 */
unsigned int dp_worker_poll(struct dp_worker *w);

/**
 * Handle @p n received packets: count each in rx, then forward, return, answer or drop it;
 * every mbuf is consumed (sent or freed, in exactly one place).
 * Lcore: worker. @return @p n.
 */
uint16_t dp_forward_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n);

/**
 * Gauges (a moment's value, not a count) of struct dp_stats, in telemetry, exit-print and
 * control-socket order: C type, member, name. A new gauge is a row here plus the line that
 * fills it in dp_stats_get(); the printers, telemetry and `stats` loop over this list.
 */
#define DP_FOREACH_GAUGE(_)                                                                     \
	_(uint64_t, epoch, "epoch")                     /* epoch of the published placement */    \
	_(uint32_t, slots_live, "slots_live")           /* request slots in use */                \
	_(uint32_t, mget_live, "multiget_live")         /* multi-gets being merged */             \
	_(uint64_t, mget_bytes, "multiget_bytes")       /* bytes of merged replies buffered now */ \
	_(uint64_t, mget_bytes_peak, "multiget_bytes_peak") /* most one worker ever buffered */ \
	_(uint64_t, rtt_p50_ns, "rtt_p50_ns")           /* node round trips, all nodes (ns) */   \
	_(uint64_t, rtt_p90_ns, "rtt_p90_ns")                                                     \
	_(uint64_t, rtt_p99_ns, "rtt_p99_ns")                                                     \
	_(uint64_t, rtt_p999_ns, "rtt_p999_ns")                                                   \
	_(uint64_t, router_p50_ns, "router_p50_ns")     /* time in the router per packet (ns) */ \
	_(uint64_t, router_p90_ns, "router_p90_ns")                                               \
	_(uint64_t, router_p99_ns, "router_p99_ns")                                               \
	_(uint64_t, router_p999_ns, "router_p999_ns")                                             \
	_(uint32_t, slow_nodes, "slow_nodes")           /* nodes flagged slow now */ \
	_(uint64_t, dirty_bytes, "dirty_keys_bytes") /* memory of the down nodes' key records */ \
	_(uint32_t, warm_open, "warmup_open")	      /* a warm-up window is open (0/1) */         \
	_(uint64_t, warm_bytes, "warmup_bytes") /* memory of the previous placements it holds */ \
	_(uint32_t, frag_held, "ip_fragments_held") /* fragments waiting for their datagram */ \
	_(uint32_t, drain_state, "drain_state") /* 0 serving, 1 draining, 2 drained (dp_drain_get) */ \
	_(uint32_t, reply_steer_rules, "reply_steering_rules") /* rte_flow rules steering replies \
								 to their worker; 0: hand-off */

/** Totals over all workers (or one). */
struct dp_stats {
	uint64_t ctr[DP_CTR_COUNT];
	uint64_t drop[DP_DROP_COUNT];
#define DP_GAUGE_FIELD(type, member, name) type member;
	DP_FOREACH_GAUGE(DP_GAUGE_FIELD)
#undef DP_GAUGE_FIELD
};

/** Sum the counters of every worker (@p worker < 0) or of one. Counters are read without
 *  stopping the workers, so a sum taken under traffic is a moment's view, not exact.
 *  Lcore: any. @return 0 or -EINVAL. */
int dp_stats_get(const struct dp *dp, int worker, struct dp_stats *out);

/**
 * Per-node fields, in telemetry, exit-print and `list` order: kind, member, name.
 * TEXT: formatted by dp_node_field() (name; address "ip:port"; mac, "unknown" until known;
 * via: "direct", the gateway, or "none" without a route).
 * U64: the member of struct dp_node_stats of that name (a count or a 0/1 flag).
 * A new numeric field is a row here, a member in struct dp_node_stats, and the line that fills
 * it in node_fill() (dp_control.c); telemetry, the exit print and `list` loop over this list.
 */
#define DP_FOREACH_NODE_FIELD(_)                                                                 \
	_(TEXT, name, "name")                                                                    \
	_(TEXT, address, "address")                                                              \
	_(TEXT, mac, "mac")                                                                      \
	_(TEXT, via, "via")                  /* "direct", the gateway it is reached through, "none" */ \
	_(U64, mac_known, "mac_known")       /* the next hop's MAC is resolved */               \
	_(U64, mac_static, "mac_static")     /* ... and given by configuration, not ARP */       \
	_(U64, in_ring, "in_ring")           /* a member of the current placement */             \
	_(U64, gutter, "gutter")	 /* a node of the gutter pool ([failover] gutter) */       \
	_(U64, forwarded, "forwarded")       /* requests sent to it */                           \
	_(U64, returned, "returned")         /* its reply datagrams sent back */                 \
	_(U64, mget_partial, "multiget_partial") /* multi-get sub-replies missing */             \
	_(U64, arp_sent, "arp_sent")         /* ARP requests sent for it */                      \
	_(U64, arp_failures, "arp_failures") /* resolution rounds without an answer */        \
	_(U64, rtt_replies, "rtt_replies")   /* replies whose round trip was measured */        \
	_(U64, rtt_p50_ns, "rtt_p50_ns")     /* round-trip quantiles since it joined (ns) */    \
	_(U64, rtt_p99_ns, "rtt_p99_ns")                                                        \
	_(U64, slow, "slow")                 /* flagged slow in the last window */              \
	_(U64, slow_windows, "slow_windows") /* windows it was flagged slow in */ \
	_(TEXT, health, "health") /* up, suspect, down, probing (+ ",held", ",stale") */           \
	_(U64, health_for_ms, "health_for_ms") /* milliseconds in that state */                    \
	_(TEXT, failover, "failover")	       /* where its keys go while down: next, fast, - */   \
	_(U64, timeouts, "timeouts")	       /* its requests that got no answer in time */       \
	_(U64, failures, "failures")	       /* timeouts and failed probes the health counted */ \
	_(U64, downs, "downs")		       /* times marked down */                             \
	_(U64, flaps, "flaps")		       /* ... within flap_ms of coming back */             \
	_(U64, probes_sent, "probes_sent")     /* probes (and clean-up batches) sent to it */      \
	_(U64, probes_answered, "probes_answered") /* ... answered */                              \
	_(U64, dirty_keys, "dirty_keys")	   /* keys to delete before it returns */          \
	_(U64, dirty_lost, "dirty_lost")	   /* keys that could not be remembered: stale */  \
	_(U64, stale_copies, "stale_copies") /* failover copies to delete: owners are back */   \
	_(U64, stale_copies_lost, "stale_copies_lost") /* ... not remembered (dirty_keys_max) */

enum dp_node_field {
#define DP_NODE_FIELD_ENUM(kind, member, name) DP_NODE_F_##member,
	DP_FOREACH_NODE_FIELD(DP_NODE_FIELD_ENUM)
#undef DP_NODE_FIELD_ENUM
	DP_NODE_FIELD_COUNT
};

/** Per-node view for telemetry / exit print. */
struct dp_node_stats {
	char name[PL_NAME_MAX + 1];
	uint32_t ip;        /**< network order */
	uint16_t port;
	uint8_t mac[6];
	bool mac_known;
	bool mac_static;
	bool in_ring;       /**< a member of the current placement */
	uint32_t nh_ip;     /**< next hop (network order): ip when direct; 0 = no route */
	bool v6;	/**< an IPv6 node: ip6 / nh_ip6 hold its addresses (ip, nh_ip a
			     32-bit fold of them) */
	uint8_t ip6[16];
	uint8_t nh_ip6[16];
	uint64_t gutter; /**< 1: a node of the published gutter pool */
	uint64_t forwarded;
	uint64_t returned;
	uint64_t mget_partial; /**< multi-get sub-replies missing (timeout, error) */
	uint64_t arp_sent;
	uint64_t arp_failures; /**< resolution rounds that ended without an answer */
	uint64_t rtt_replies;  /**< round trips measured (dp_node_rtt() has them all) */
	uint64_t rtt_p50_ns;
	uint64_t rtt_p99_ns;
	uint64_t slow;         /**< 1: flagged slow in the last window */
	uint64_t slow_windows; /**< windows it was flagged slow in */
	enum hl_state health;
	bool held;  /**< held down by the operator */
	bool stale; /**< dirty keys were lost: waits for `health NAME up --flush` */
	enum dp_failover failover_mode;
	uint64_t health_for_ms;
	uint64_t timeouts;
	uint64_t failures;
	uint64_t downs;
	uint64_t flaps;
	uint64_t probes_sent;
	uint64_t probes_answered;
	uint64_t dirty_keys;
	uint64_t dirty_lost;
	uint64_t stale_copies;
	uint64_t stale_copies_lost;
};

/** Name of a per-node field ("unknown" when out of range). */
const char *dp_node_field_name(enum dp_node_field f);

/**
 * Field @p f of @p n: a TEXT field is written to @p text (NUL-terminated, at least 32 bytes
 * fit every field) and 1 returned; a U64 field is stored in *@p v and 0 returned.
 * Lcore: any. @return 1, 0, or -EINVAL (@p f out of range).
 */
int dp_node_field(const struct dp_node_stats *n, enum dp_node_field f, char *text, size_t len,
		  uint64_t *v);

/** Fill @p out with up to @p max nodes (endpoints in use). Lcore: any.
 *  @return the number written. */
uint32_t dp_nodes_get(const struct dp *dp, struct dp_node_stats *out, uint32_t max);

/**
 * The node behind member @p idx of the placement currently published.
 * Lcore: control (it alone replaces the replicas). @return 0, or -ENOENT.
 */
int dp_member_node(const struct dp *dp, uint32_t idx, struct dp_node_stats *out);

/**
 * Print the totals, per worker and per node as "key value" lines:
 *   total.rx 123 / total.drop.bad_port 4 / total.slots_live 0 / worker.0.forwarded 7 /
 *   node.cache1.forwarded 5 (counters, drops and gauges per worker and in total; every node
 *   field but the name per node) plus a final line "identity ok|broken rx=... sum=...".
 * Lcore: any. @return 0 or -EIO.
 */
int dp_stats_print(const struct dp *dp, FILE *out);

/** A warm-up window's state (dp_warm_get()). */
struct dp_warm_state {
	bool open;	     /**< the window is open (reads of moved keys follow) */
	bool held;	     /**< a previous placement is held (writes delete there) */
	uint64_t ms_left;    /**< until the window ends */
	uint64_t prev_epoch; /**< epoch of the previous placement held */
	uint64_t bytes;	     /**< memory of the previous placements (all workers) */
	uint32_t window_s;   /**< [warmup] window_s, 0: off */
	uint32_t ttl_s;	     /**< [warmup] ttl_s */
};

/**
 * Warm-up routing (dp_warm.c): for window_s after each dp_publish_placement() that replaces a
 * placement, workers keep the previous one; a moved key's read that misses at its new owner
 * is asked of its previous owner (a hit is answered and written to the new owner with `add`),
 * a moved key's write also deletes it at its previous owner. A change during an open window
 * keeps the window's previous placement (the oldest, which holds the warm copies) and restarts
 * the window. dp_warm_poll() ends the window on time (dp_control_poll() calls it),
 * dp_warm_end() at once (-ENOENT: none open): reads stop following, but the previous
 * placement stays held (with window_s 0 too) until the next publication replaces it, and
 * writes of moved keys keep deleting at their previous owner (moved_deletes: membership
 * flips, issue 27). Lcore: control.
 */
void dp_warm_poll(struct dp *dp);
int dp_warm_end(struct dp *dp);
/** End the window and free the previous placement held (writes no longer delete at its
 *  owners): waits for RCU. For a set-up step that is not a flip (tests). Lcore: control. */
void dp_warm_forget(struct dp *dp);
/** The window's state. Lcore: control. @return 0. */
int dp_warm_get(const struct dp *dp, struct dp_warm_state *out);

/** A router's drain (dp_drain_get()). */
enum dp_drain_state {
	DP_DRAIN_SERVING = 0, /**< new requests are served */
	DP_DRAIN_DRAINING,    /**< new requests get the drain answer; requests in flight finish */
	DP_DRAIN_DRAINED,     /**< ... and none is in flight any more on any worker */
};

/** Name of a drain state: serving, draining, drained ("unknown" out of range). */
const char *dp_drain_state_name(enum dp_drain_state s);

struct dp_drain_status {
	enum dp_drain_state state;
	enum dp_drain_answer answer; /**< what new requests get (while not serving) */
	uint32_t in_flight;	     /**< request slots in use now, all workers (slots_live) */
	uint32_t mget_live;	     /**< multi-gets being merged or sent now */
	uint32_t in_flight_at_start; /**< slots in use when the drain began */
	uint64_t ms;		     /**< since the drain began (0 serving) */
	uint64_t drained_after_ms;   /**< from the drain's start to drained (drained only) */
};

/**
 * Drain (docs/operations.md "Draining a router"): from the next burst on, every worker gives
 * each new request on a listen port @p answer instead of serving it, while replies to the
 * requests already in flight are still proxied back, probes and health go on, and nothing
 * else changes. Once every worker has seen the drain and holds no request slot and no
 * multi-get, the state is drained (each worker tells so itself once per poll: no torn view of
 * another lcore's table). While draining, a second call changes only the answer.
 * How it ends: dp_drain_stop() (`undrain`), or the process ending: the state lives in memory
 * only, never in the state file, so a restarted router serves (the operator drained it to
 * take it out; a restart is a return). Nothing is left to clean up: requests refused were
 * never given a slot. Lcore: control. @return 0, or -EINVAL (@p answer out of range).
 */
int dp_drain_start(struct dp *dp, enum dp_drain_answer answer);
/** Serve new requests again from the next burst on. Lcore: control. @return 0, or -ENOENT
 *  when the router was not draining (nothing changes). */
int dp_drain_stop(struct dp *dp);
/** The drain's state now (latching drained: dp_control_poll() also does, so the gauge moves
 *  without anyone asking). Lcore: control. @return 0. */
int dp_drain_get(struct dp *dp, struct dp_drain_status *out);

/** True when rx == forwarded + returned + answered + dropped + probe_replies + warm_absorbed
 *  in @p s (probe replies answer packets the router originated, not a client's; a new owner's
 *  miss absorbed by warm-up is answered by the previous owner's reply instead). */
bool dp_stats_identity(const struct dp_stats *s);

/**
 * Node health, once per control tick: merge the workers' per-node timeouts and replies into
 * each node's state machine (lib/health), send due probes (memcached `version` from the
 * router's address and probe_port, through worker 0's control ring), read the answers the
 * workers accepted, drain the keys written for down nodes, and before a node is up again send
 * it a `delete` for each (batched, each batch ending in `version`, waited for). A node whose
 * record overflowed is held until dp_health_admin(UP_FLUSH or UP_ACCEPT_STALE). State changes
 * publish the per-node word workers read (relaxed); never a new epoch. Lcore: control.
 */
void dp_health_poll(struct dp *dp);

/** Members that joined to be flushed (dp_publish_placement_flush()) and do not serve yet.
 *  Lcore: control. */
uint32_t dp_health_joining(const struct dp *dp);

/** Operator commands on a node's health. */
enum dp_health_admin {
	DP_HEALTH_DOWN,		   /**< hold it down (maintenance): its keys fail over */
	DP_HEALTH_UP,		   /**< let it back (after cleaning its dirty keys) */
	DP_HEALTH_UP_FLUSH,	   /**< ... with flush_all sent to it instead (record overflowed) */
	DP_HEALTH_UP_ACCEPT_STALE, /**< ... without cleaning what was lost */
};

/** Apply @p op to the member named @p name. Lcore: control. @return 0, or -ENOENT. */
int dp_health_admin(struct dp *dp, const char *name, enum dp_health_admin op);

/** A node's health changed (dp_health_events()). */
struct dp_health_event {
	char name[PL_NAME_MAX + 1];
	enum hl_state from, to;
	uint64_t at_ms; /**< on the dp's millisecond clock */
	char why[96];
};

/** Health changes since the previous call, oldest first, at most @p max (later ones wait;
 *  past 256 unread the oldest are counted in *@p lost and forgotten). Lcore: control.
 *  @return entries written. */
uint32_t dp_health_events(struct dp *dp, struct dp_health_event *out, uint32_t max, uint64_t *lost);

/**
 * Register the telemetry commands for @p dp (DPDK 22.11 telemetry: flat dicts only, keys of
 * [A-Za-z0-9_/]):
 *  - /ringway/stats[,W]  totals (or worker W): every DP_FOREACH_COUNTER name (rx, forwarded,
 *    returned, answered, dropped, ...), drop_<reason> for every DP_FOREACH_DROP name, every
 *    DP_FOREACH_GAUGE name (epoch, slots_live, ...), identity_ok (0/1), workers
 *  - /ringway/drops[,W]  {reason: count}
 *  - /ringway/nodes      nodes (count), mac_known (count), and per node i node<i>_<field> for
 *    every DP_FOREACH_NODE_FIELD name (a page of as many nodes as fit in one reply)
 *  - /ringway/node,NAME  the same fields of one node, unprefixed
 * Only one dp per process is served. Lcore: control, after rte_eal_init.
 * @return 0 or a negative errno.
 */
int dp_telemetry_register(struct dp *dp);

/* ---- latency (dp_observe.c) ------------------------------------------------------------- */

struct obs_hist;
struct obs_text;

/**
 * Round trips of the node in endpoint slot @p node_idx (the index dp_nodes_get() walks: the
 * nodes in use, in order) since it joined, merged over the workers, into @p out (set, not
 * added). Lcore: any. @return 0, or -ENOENT.
 */
int dp_node_rtt(const struct dp *dp, uint32_t node_idx, struct obs_hist *out);

/**
 * Merged histograms over every worker (@p worker < 0) or one: all nodes' round trips since
 * start, and the router's own time per packet (RX burst start to TX burst end). Either
 * pointer may be NULL. Lcore: any. @return 0 or -EINVAL.
 */
int dp_latency_get(const struct dp *dp, int worker, struct obs_hist *rtt, struct obs_hist *router);

/** A node whose slow flag changed at the end of a window. */
struct dp_slow_event {
	char name[PL_NAME_MAX + 1];
	bool slow;          /**< flagged now (else: no longer) */
	uint64_t p99_ns;    /**< its round-trip p99 in the window */
	uint64_t median_ns; /**< the median of the eligible nodes' p99 */
	uint64_t replies;   /**< its replies in the window */
	uint32_t eligible;  /**< nodes with enough replies in the window */
};

/**
 * Slow-node detection, the config's slow_* keys: call every few milliseconds. When a window
 * of slow_window_ms has passed, each node's round-trip p99 over it is compared with the
 * median of the nodes' p99 (nodes with at least slow_min_replies replies in the window, and
 * only when 3 or more have); a node above slow_factor_pct % of it is flagged (node field
 * "slow", counted in "slow_windows"), others are cleared. Up to @p max changes are written
 * to @p ev (for the caller to log). Lcore: control. @return the number of changes written.
 */
unsigned int dp_slow_poll(struct dp *dp, struct dp_slow_event *ev, unsigned int max);

/**
 * Append the Prometheus text exposition (0.0.4) of @p dp to @p out: every counter as
 * ringway_<name>_total, drops as ringway_drops_total{reason}, gauges as ringway_<name>
 * (except the quantile gauges, which the histograms carry), per-node counters and flags with
 * labels node and address, and the histograms ringway_node_rtt_seconds{node,address} and
 * ringway_router_seconds (_bucket / _sum / _count, seconds). Lcore: any. @return 0 or
 * -ENOMEM.
 */
int dp_metrics_write(const struct dp *dp, struct obs_text *out);

/** One key of the fleet's hot-key view: the workers' sketches merged over the last interval. */
struct dp_hotkey {
	uint8_t key[MC_KEY_MAX];
	uint32_t len;
	uint64_t count;	   /**< sampled requests counted for it (an upper bound) */
	uint64_t err;	   /**< count - err is a lower bound */
	double rate;	   /**< estimated requests/s: count x sample_every / interval */
	double rate_min;   /**< (count - err) x sample_every / interval */
	double owner_rate; /**< requests/s the router forwarded to its owner in the interval */
	int32_t owner;	   /**< member index in the placement, or -1 */
	char owner_name[PL_NAME_MAX + 1];
	bool guaranteed; /**< among the guaranteed true top keys (hotkey.h) */
	uint8_t spread;	 /**< DP_HOT_STATE_* */
};

/** dp_hotkey.spread */
enum {
	DP_HOT_STATE_NO = 0,
	DP_HOT_STATE_SPREAD,  /**< over the threshold: reads spread */
	DP_HOT_STATE_PINNED,  /**< pinned by hand: reads spread */
	DP_HOT_STATE_COOLING, /**< no longer spread; writes still delete the copies */
};

/** What a hot-key view covers. */
struct dp_hot_summary {
	uint64_t intervals; /**< views merged so far (0: none yet) */
	double interval_s;  /**< length of the interval the view covers */
	uint64_t sampled;   /**< samples in it (N) */
	uint32_t sample_every;
	uint32_t sketch_keys; /**< K */
	double bound_rate;    /**< N / K x sample_every / interval: no rate is over by more */
	uint32_t keys;	      /**< keys in the view */
	uint32_t guaranteed;  /**< the first ones of them in the guaranteed true top list */
	uint64_t late;	      /**< worker sketches that missed a merge (the worker was not
				   polling): counted in the next one */
	uint32_t spreading;   /**< keys whose reads are spread now (pinned ones included) */
	uint32_t cooling;     /**< keys cooling down */
	uint64_t publishes;   /**< hot sets published */
};

/**
 * Pin (@p pin) or unpin key @p key (@p len bytes) for spreading, whatever its rate; the hot
 * set is published before the call returns. Lcore: control. @return 0; -EINVAL (length),
 * -ENOSPC (DP_HOT_IDS keys named already), -ENOENT (unpin of a key not pinned), -ENOMEM.
 */
int dp_hot_pin(struct dp *dp, const uint8_t *key, uint32_t len, bool pin);

/**
 * The fleet's hot keys, largest estimated rate first: up to @p n into @p out (NULL with n 0:
 * only the summary), the summary into @p sum (may be NULL). Any thread (a lock shared with
 * the control lcore's merge, never taken by a worker). @return the number written.
 */
uint32_t dp_hotkeys_get(struct dp *dp, struct dp_hotkey *out, uint32_t n,
			struct dp_hot_summary *sum);

/** @p key as text without spaces or quotes: bytes outside '!'..'~', '%', '"' and '\\' as %XX.
 *  Writes at most @p cap bytes with the NUL (3 x len + 1 is enough). @return its length. */
size_t dp_hotkey_text(const uint8_t *key, uint32_t len, char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_DATAPLANE_H */
