/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringway's configuration loader.
 *
 * Three passes over one file:
 *   1. scan: our own reading of the text, line by line, with rte_cfgfile's rules (comment
 *      character '#', "key = value", "[section]"). It rejects what rte_cfgfile would silently
 *      accept or truncate (lines without '=', over-long names and values, duplicate keys and
 *      sections, unknown names) and records the line of every section and key, which
 *      rte_cfgfile does not report.
 *   2. rte_cfgfile_load_with_params() reads the same file; its sections and entries come in
 *      file order, so entry j of section i is the j-th key the scan saw in that section.
 *   3. every value rte_cfgfile returns is parsed by the key's type from the key table below,
 *      then the checks that span keys run (reply range vs listen ports, duplicate nodes, ...).
 *
 * The key table (RW_CFG_FOREACH_KEY) is the single source of the keys: the parser, the
 * defaults, rw_config_dump() and the reference in docs/config.md all come from it.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <rte_build_config.h>
#include <rte_cfgfile.h>

#include "config.h"
#include "control.h"

/* Sections; node sections are "[node NAME]". */
#define RW_FOREACH_SECTION(_)     \
	_(ROUTER, "router")       \
	_(PLACEMENT, "placement") \
	_(NODE, "node")           \
	_(TIMEOUTS, "timeouts")   \
	_(TABLES, "tables")       \
	_(CONTROL, "control")     \
	_(LOG, "log")             \
	_(HEALTH, "health")       \
	_(METRICS, "metrics")     \
	_(FAILOVER, "failover")   \
	_(WARMUP, "warmup")       \
	_(ROUTE, "route")         \
	_(HOTKEYS, "hotkeys")

enum sec_id {
#define SEC_ENUM(e, s) SEC_##e,
	RW_FOREACH_SECTION(SEC_ENUM)
#undef SEC_ENUM
		SEC_COUNT
};

static const char *const sec_names[] = {
#define SEC_NAME(e, s) s,
	RW_FOREACH_SECTION(SEC_NAME)
#undef SEC_NAME
};

/* Value types; each has one parser, one printer and one description for errors and docs. */
enum key_kind {
	K_U32,	     /* decimal integer in [min, max]; F_POW2 / F_PRIME narrow it */
	K_IPV4,	     /* unicast IPv4 address -> uint32_t, network order */
	K_MAC,	     /* unicast MAC -> uint8_t[6]; off2: the bool "given" */
	K_PORTS,     /* list of UDP ports -> uint16_t[max]; off2: uint32_t count */
	K_PREFIXES,  /* list of IPv4 / IPv6 prefixes -> struct rw_cfg_prefix[max]; off2: count */
	K_MACS,	     /* list of unicast MACs, may be empty -> uint8_t[max][6]; off2: count */
	K_IDLE,	     /* enum dp_idle */
	K_FAILOVER,  /* enum dp_failover */
	K_DRAIN,     /* enum dp_drain_answer */
	K_STEERING,  /* enum rw_reply_steering */
	K_ALGO,	     /* enum pl_algo */
	K_HASH,	     /* enum pl_hash, empty = the algorithm's default */
	K_HASH_TAG,  /* two characters or empty -> char[2] */
	K_PATH,	     /* absolute path -> char[RW_CFG_PATH_MAX]; max = longest allowed */
	K_LOG_LEVEL, /* DPDK log level 1..8 */
	K_NODE_ADDR, /* IPv4[:port] or [IPv6][:port] -> struct pl_member addr/port; off2: uint32_t
			ip (0 for IPv6); the node's inet_addr too (node keys only) */
	K_LISTEN,    /* empty (off) or IPv4:port, loopback allowed -> uint32_t address (network
			order); off2: uint32_t port (0 = off) */
	K_OPT_IPV4,  /* empty (none) or a unicast IPv4 address -> uint32_t, network order (0) */
	K_OPT_IPV6,  /* empty (none) or a unicast IPv6 address -> uint8_t[16] (all zero) */
	K_OPT_U32,   /* empty (unset) or an integer min..max -> uint32_t; off2: bool "given" */
	K_ROUTES,    /* empty or a list of `PREFIX via GW` / `PREFIX direct` -> struct rt_table
			(off); off2: its uint32_t count */
};

#define F_REQUIRED 0x1u /* no default: the file must give it */
#define F_LIST	   0x2u /* may repeat; lines accumulate (the first replaces the default) */
#define F_POW2	   0x4u /* K_U32: a power of two */
#define F_PRIME	   0x8u /* K_U32: a prime */

#define DEFAULT_LISTEN_PORT 11211
#define SUN_PATH_MAX	    ((uint32_t)sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
#define RING_POINTS_MAX	    (1u << 24)

#define C(field) offsetof(struct rw_config, field)
#define N(field) offsetof(struct rw_cfg_node, field)

/*
 * Every key: section, name, type, where it goes (offset in struct rw_config, or in struct
 * rw_cfg_node for node keys), a second offset (count, "given" flag or address), range, flags,
 * default text (parsed by the same parser as the file; NULL = none) and what it means.
 */
#define RW_CFG_FOREACH_KEY(_)                                                                      \
	_(ROUTER, "port", K_U32, C(router.port), 0, 0, RTE_MAX_ETHPORTS - 1, 0, "0",               \
	  "DPDK ethdev port id of the router's port")                                              \
	_(ROUTER, "address", K_IPV4, C(router.address), 0, 0, 0, 0, NULL,                          \
	  "the router's IPv4 address: clients send requests here, nodes reply here; leave it out " \
	  "on an IPv6-only network (address6 then required, IPv4 is not served)")                  \
	_(ROUTER, "address6", K_OPT_IPV6, C(router.address6), 0, 0, 0, 0, "",                      \
	  "the router's IPv6 address: IPv6 clients send requests here, IPv6 nodes reply here, "    \
	  "Neighbor Solicitations for it are answered; empty = IPv6 is not served")                \
	_(ROUTER, "mac", K_MAC, C(router.mac), C(router.has_mac), 0, 0, 0, NULL,                   \
	  "source MAC for everything the router sends; unset = the port's own MAC")                \
	_(ROUTER, "listen_ports", K_PORTS, C(router.listen_ports), C(router.n_listen_ports), 1,    \
	  RW_CFG_LISTEN_PORTS_MAX, F_LIST, "11211",                                                \
	  "UDP ports clients send memcached requests to")                                          \
	_(ROUTER, "reply_port_base", K_U32, C(router.reply_port_base), 0, 1024, 65535, 0, "32768", \
	  "first UDP source port the router uses towards nodes")                                   \
	_(ROUTER, "reply_port_count", K_U32, C(router.reply_port_count), 0, 1, 32768, F_POW2,      \
	  "16384", "ports in the reply range; a request's source port names its worker and slot")  \
	_(ROUTER, "reply_steering", K_STEERING, C(router.reply_steering), 0, 0, 0, 0, "auto",     \
	  "with two or more workers: auto = at start, rte_flow rules put each node reply on the "  \
	  "queue of the worker whose reply ports it is sent to, where the port takes them (else, " \
	  "and with off, a reply on another worker's queue is handed over to it)")                \
	_(ROUTER, "allowed_clients", K_PREFIXES, C(router.allowed_clients),                        \
	  C(router.n_allowed_clients), 1, RW_CFG_PREFIXES_MAX, F_REQUIRED | F_LIST, NULL,          \
	  "client prefixes served, IPv4 (a.b.c.d/len) and IPv6 (2001:db8::/64); everything else "  \
	  "is dropped and counted")                                                                \
	_(ROUTER, "allowed_client_macs", K_MACS, C(router.allowed_client_macs),                    \
	  C(router.n_allowed_client_macs), 0, RW_CFG_CLIENT_MACS_MAX, F_LIST, "",                  \
	  "when set, client requests and ICMP echo must also come from one of these Ethernet "     \
	  "sources (the clients' own MACs, or the gateway they are behind); empty = any")          \
	_(ROUTER, "idle", K_IDLE, C(router.idle), 0, 0, 0, 0, "poll",                              \
	  "idle workers spin (poll), sleep after a run of empty polls (backoff), or spin while "   \
	  "traffic is recent and sleep longer the longer they are idle (adaptive)")                \
	_(ROUTER, "backoff_us", K_U32, C(router.backoff_us), 0, 1, 100000, 0, "100",               \
	  "backoff: microseconds slept per empty poll; adaptive: the longest sleep")               \
	_(ROUTER, "backoff_after", K_U32, C(router.backoff_after), 0, 1, 1000000, 0, "1024",       \
	  "backoff: empty polls in a row before sleeping")                                         \
	_(ROUTER, "vlan", K_OPT_U32, C(router.vlan), C(router.has_vlan), 0, 4094, 0, "",           \
	  "the port's VLAN: only frames on this VLAN id are served (0 = untagged only), the "      \
	  "router's ARP goes out and is learned there (AF_XDP: the steering program takes this "   \
	  "VLAN only, the kernel's VLAN interface resolves the nodes); empty = any VLAN (a reply " \
	  "must come on its request's), ARP untagged")                                             \
	_(ROUTER, "node_port", K_OPT_U32, C(router.node_port), C(router.has_node_port), 0,         \
	  RTE_MAX_ETHPORTS - 1, 0, "",                                                             \
	  "two ports: DPDK ethdev port id facing the nodes (`port` then faces the clients only); " \
	  "either may be AF_XDP, each with its own steering program; empty = one port for both")   \
	_(ROUTER, "client_port", K_OPT_U32, C(router.client_port), C(router.has_client_port), 0,   \
	  RTE_MAX_ETHPORTS - 1, 0, "",                                                             \
	  "two ports: DPDK ethdev port id facing the clients, the name to use beside node_port; "  \
	  "`port` still works (both given: the same id); empty = `port`")                          \
	_(ROUTER, "node_address", K_OPT_IPV4, C(router.node_address), 0, 0, 0, 0, "",              \
	  "two ports: the router's IPv4 on the node network (nodes reply there, ARP asks from "    \
	  "it); with node_port it or node_address6 is required (without it, no IPv4 node)")        \
	_(ROUTER, "node_address6", K_OPT_IPV6, C(router.node_address6), 0, 0, 0, 0, "",            \
	  "two ports: the router's IPv6 on the node network; required with node_port when a "      \
	  "node is IPv6")                                                                          \
	_(ROUTER, "node_vlan", K_OPT_U32, C(router.node_vlan), C(router.has_node_vlan), 0, 4094,   \
	  0, "",                                                                                   \
	  "two ports: the node port's VLAN, as `vlan` is the client port's; empty = requests "     \
	  "keep the client's tag")                                                                 \
	_(ROUTER, "mtu", K_U32, C(router.mtu), 0, 576, 9000, 0, "1500",                            \
	  "IP MTU of the port; merged multi-get replies use datagrams of min(1400, mtu - 28) "     \
	  "bytes")                                                                                 \
	_(ROUTER, "drain_answer", K_DRAIN, C(router.drain_answer), 0, 0, 0, 0, "error",            \
	  "what a draining router (`ringwayctl drain`) gives a new request: error (the "           \
	  "protocol's own error at once, SERVER_ERROR draining, so clients fail over) or silent "  \
	  "(nothing: dropped and counted as draining); `drain error|silent` overrides it")         \
	_(PLACEMENT, "algorithm", K_ALGO, C(placement.algo), 0, 0, 0, 0, "ring",                   \
	  "key placement algorithm")                                                               \
	_(PLACEMENT, "vnodes", K_U32, C(placement.vnodes), 0, 1, 10000, 0, "160",                  \
	  "ring: points per unit of weight")                                                       \
	_(PLACEMENT, "hash_tag", K_HASH_TAG, C(placement.hash_tag), 0, 0, 0, 0, "",                \
	  "hash only the text between these two characters; empty = the whole key")                \
	_(PLACEMENT, "key_hash", K_HASH, C(placement.key_hash), 0, 0, 0, 0, "",                    \
	  "twemproxy: its key hash; empty = fnv1a_64 (other algorithms refuse a value)")           \
	_(PLACEMENT, "maglev_size", K_U32, C(placement.maglev_size), 0, 3, 16777213, F_PRIME,      \
	  "65537", "maglev: lookup table size (other algorithms ignore it)")                       \
	_(PLACEMENT, "replicas", K_U32, C(placement.replicas), 0, 1, PL_REPLICAS_MAX, 0, "1",      \
	  "copies of every write: the first R distinct nodes of the key's replica walk; a down "  \
	  "owner's keys are read from the next live one (docs/pools.md); 1 = the owner alone")   \
	_(NODE, "address", K_NODE_ADDR, N(member), N(ip), 0, 0, F_REQUIRED, NULL,                  \
	  "the node's address and memcached UDP port (default 11211): a.b.c.d[:port] or "          \
	  "[IPv6][:port] (IPv6 needs [router] address6, IPv4 [router] address)")                   \
	_(NODE, "weight", K_U32, N(member.weight), 0, 1, PL_WEIGHT_MAX, 0, "1",                    \
	  "the node's share relative to the others")                                               \
	_(NODE, "mac", K_MAC, N(mac), N(has_mac), 0, 0, 0, NULL,                                   \
	  "static MAC of the node; unset = resolve it by ARP")                                     \
	_(TIMEOUTS, "request_ms", K_U32, C(timeouts.request_ms), 0, 1, 60000, 0, "1000",           \
	  "a request slot without a complete reply is freed after this")                           \
	_(TIMEOUTS, "quiet_read_ms", K_U32, C(timeouts.quiet_read_ms), 0, 1, 60000, 0, "20",       \
	  "a slot whose reply has no end the router can tell (quiet reads without mn / noop "      \
	  "after them) is freed after this, a lone quiet read once its first reply passed; at "    \
	  "most request_ms")                                                                       \
	_(TIMEOUTS, "arp_retry_ms", K_U32, C(timeouts.arp_retry_ms), 0, 10, 60000, 0, "1000",      \
	  "interval between ARP requests for one node")                                            \
	_(TIMEOUTS, "arp_attempts", K_U32, C(timeouts.arp_attempts), 0, 1, 100, 0, "5",            \
	  "ARP requests before a node counts as unresolved")                                       \
	_(TIMEOUTS, "arp_lifetime_s", K_U32, C(timeouts.arp_lifetime_s), 0, 1, 86400, 0, "300",    \
	  "a learned node MAC is refreshed after this")                                            \
	_(TIMEOUTS, "fragment_ms", K_U32, C(timeouts.fragment_ms), 0, 10, 60000, 0, "500",         \
	  "a datagram in reassembly whose fragments are not all there after this is dropped "      \
	  "(ip_fragment_timeout)")                                                                 \
	_(TABLES, "request_slots", K_U32, C(tables.request_slots), 0, 64, 65536, F_POW2, "4096",   \
	  "request slots per worker: requests in flight")                                          \
	_(TABLES, "client_slots_max", K_U32, C(tables.client_slots_max), 0, 0, 65536, 0, "1024",   \
	  "request slots one client address may hold per worker; past it its requests are "        \
	  "dropped (client_slot_cap); 0 = no cap")                                                 \
	_(TABLES, "mbufs", K_U32, C(tables.mbufs), 0, 1024, 4194304, 0, "16383",                   \
	  "mbufs per packet pool")                                                                 \
	_(TABLES, "mbuf_cache", K_U32, C(tables.mbuf_cache), 0, 0, 512, 0, "256",                  \
	  "per-lcore mempool cache (the ranges keep it under mbufs / 1.5)")                        \
	_(TABLES, "burst", K_U32, C(tables.burst), 0, 1, DP_BURST_MAX, 0, "32",                    \
	  "packets per RX/TX burst; at most rx_desc and tx_desc")                                  \
	_(TABLES, "rx_desc", K_U32, C(tables.rx_desc), 0, 64, 16384, F_POW2, "1024",               \
	  "descriptors per RX queue")                                                              \
	_(TABLES, "tx_desc", K_U32, C(tables.tx_desc), 0, 64, 16384, F_POW2, "1024",               \
	  "descriptors per TX queue")                                                              \
	_(TABLES, "handoff_ring", K_U32, C(tables.handoff_ring), 0, 64, 65536, F_POW2, "1024",     \
	  "per-worker ring for replies that arrive on another worker")                             \
	_(TABLES, "neighbours", K_U32, C(tables.neighbours), 0, 16, 65536, 0, "1024",              \
	  "neighbour (ARP) table entries: node endpoints tracked, at least the nodes")             \
	_(TABLES, "multiget_inflight", K_U32, C(tables.multiget_inflight), 0, 0, 65534, 0, "128",  \
	  "multi-gets over several nodes being merged per worker; past it they are refused; "      \
	  "0 = never split")                                                                       \
	_(TABLES, "multiget_buffer_kb", K_U32, C(tables.multiget_buffer_kb), 0, 16, 65536, 0,      \
	  "2048",                                                                                  \
	  "KiB of merged multi-get replies a worker buffers (pool mbufs); past it new "            \
	  "multi-gets are refused")                                                                \
	_(TABLES, "multiget_send_burst", K_U32, C(tables.multiget_send_burst), 0, 1, 65535, 0,     \
	  "256",                                                                                   \
	  "merged multi-get reply datagrams a worker offers its TX queue per poll; what the "      \
	  "queue does not take waits for the next poll")                                           \
	_(TABLES, "fragments", K_U32, C(tables.fragments), 0, 0, 65536, 0, "128",                  \
	  "IP datagrams in reassembly per worker (each up to 8 fragments, its mbufs held from "    \
	  "the pool); past it a new datagram's fragments are dropped; 0 = fragments dropped "      \
	  "(ip_fragment)")                                                                         \
	_(TABLES, "mbuf_bytes", K_U32, C(tables.mbuf_bytes), 0, 2048, 16384, 0, "2048",            \
	  "data room of each pool mbuf: the largest frame received whole (af_packet: raise it "    \
	  "with the port's framesz to take datagrams its kernel socket reassembled)")              \
	_(CONTROL, "socket", K_PATH, C(control.socket), 0, 0, SUN_PATH_MAX, 0, CTL_DEFAULT_SOCKET, \
	  "management socket (Unix stream, mode 0600)")                                            \
	_(CONTROL, "state_file", K_PATH, C(control.state_file), 0, 0, RW_CFG_PATH_MAX - 1, 0,      \
	  "/var/lib/ringway/state",                                                                \
	  "membership and epoch, written on every change; wins over [node] at start")              \
	_(CONTROL, "tcp_port", K_U32, C(control.tcp_port), 0, 0, 65535, 0, "0",                    \
	  "control protocol on 127.0.0.1:PORT as well; 0 = off")                                   \
	_(CONTROL, "tcp_token_file", K_PATH, C(control.tcp_token_file), 0, 0, RW_CFG_PATH_MAX - 1, \
	  0, NULL,                                                                                 \
	  "with tcp_port: file whose first line is the token TCP clients send as `auth TOKEN` "    \
	  "(16-256 printable characters; owner-only mode, or ringway refuses to start)")           \
	_(LOG, "level", K_LOG_LEVEL, C(log.level), 0, 0, 0, 0, "info", "log level")                \
	_(HEALTH, "slow_factor_pct", K_U32, C(health.slow_factor_pct), 0, 0, 100000, 0, "300",     \
	  "a node whose round-trip p99 over a window is above this % of the fleet's median p99 "   \
	  "is flagged slow (log line, `list` field slow, counter slow_windows); 0 = off")          \
	_(HEALTH, "slow_window_ms", K_U32, C(health.slow_window_ms), 0, 100, 3600000, 0, "10000",  \
	  "length of a slow-node window")                                                          \
	_(HEALTH, "slow_min_replies", K_U32, C(health.slow_min_replies), 0, 1, 1000000000, 0,      \
	  "100", "replies a node needs in a window to be judged (and 3 nodes with that many)")     \
	_(HOTKEYS, "sample_every", K_U32, C(hotkeys.sample_every), 0, 0, 1000000, 0, "64",         \
	  "each worker files the first key of 1 in N keyed requests (on average) in its hot-key "  \
	  "sketch; 0 = no detection")                                                              \
	_(HOTKEYS, "sketch_keys", K_U32, C(hotkeys.sketch_keys), 0, 1, 4096, 0, "64",              \
	  "keys a sketch holds (K): a key's estimated rate is over by at most 1/K of the "         \
	  "sampled rate")                                                                          \
	_(HOTKEYS, "interval_ms", K_U32, C(hotkeys.interval_ms), 0, 10, 3600000, 0, "1000",        \
	  "the control lcore merges the workers' sketches into the hot-key view this often")       \
	_(HOTKEYS, "threshold_pct", K_U32, C(hotkeys.threshold_pct), 0, 0, 100, 0, "0",            \
	  "a key whose estimated rate is at least this % of its owner's request rate has its "     \
	  "gets spread over replicas; 0 = only keys pinned with `ringwayctl hot add`")             \
	_(HOTKEYS, "replicas", K_U32, C(hotkeys.replicas), 0, 2, 8, 0, "3",                        \
	  "replicas a hot key's gets are spread over (the placement's replica order)")             \
	_(HOTKEYS, "load_pct", K_U32, C(hotkeys.load_pct), 0, 0, 1000, 0, "25",                    \
	  "bounded load: a replica above (100 + this) % of the average load is passed over")       \
	_(HOTKEYS, "fill_ttl_s", K_U32, C(hotkeys.fill_ttl_s), 0, 1, 2592000, 0, "10",             \
	  "exptime of the copies added to replicas; a key no longer hot deletes them on writes "   \
	  "and writes none for this long plus 2 s (memcached's clock), then leaves the hot set")  \
	_(METRICS, "listen", K_LISTEN, C(metrics.address), C(metrics.port), 0, 0, 0, "",           \
	  "Prometheus /metrics on this IPv4:port (HTTP, a thread of its own, not a worker); "      \
	  "empty = off. Loopback unless the scrapers need more")                                   \
	_(HEALTH, "fail_down", K_U32, C(health.fail_down), 0, 1, 1000, 0, "3",                     \
	  "requests without an answer (or failed probes) within window_ms that mark a node down")  \
	_(HEALTH, "window_ms", K_U32, C(health.window_ms), 0, 1, 600000, 0, "1000",                \
	  "the window failures are counted in; a suspect node without more failures in it is up")  \
	_(HEALTH, "probe_min_ms", K_U32, C(health.probe_min_ms), 0, 1, 600000, 0, "100",           \
	  "first interval between probes (memcached version) of a down node")                      \
	_(HEALTH, "probe_max_ms", K_U32, C(health.probe_max_ms), 0, 1, 3600000, 0, "5000",         \
	  "the interval doubles after each failed probe up to this; at least probe_min_ms")        \
	_(HEALTH, "probe_timeout_ms", K_U32, C(health.probe_timeout_ms), 0, 1, 60000, 0, "200",    \
	  "a probe not answered within this failed")                                               \
	_(HEALTH, "up_successes", K_U32, C(health.up_successes), 0, 1, 1000, 0, "2",               \
	  "probes answered in a row before a down node is cleaned and serves again")               \
	_(HEALTH, "flap_ms", K_U32, C(health.flap_ms), 0, 0, 86400000, 0, "10000",                 \
	  "a node down again within this of coming back flapped: its probe interval keeps "        \
	  "doubling")                                                                              \
	_(HEALTH, "dirty_keys_max", K_U32, C(health.dirty_keys_max), 0, 0, 10000000, 0, "10000",   \
	  "keys written or deleted for a down node remembered (and deleted on it before it "       \
	  "serves again); past it the node waits for `ringwayctl health NAME up --flush` or "      \
	  "`--accept-stale`")                                                                      \
	_(HEALTH, "probe_port", K_U32, C(health.probe_port), 0, 0, 65535, 0, "0",                  \
	  "UDP source port of probes; 0 = one below reply_port_base")                              \
	_(FAILOVER, "mode", K_FAILOVER, C(failover.mode), 0, 0, 0, 0, "next",                      \
	  "a down node's keys: next (the next live member in the algorithm's replica order), "     \
	  "gutter (the [gutter NAME] pool, placed by the same algorithm) or fast (the "            \
	  "protocol's error at once)")                                                             \
	_(FAILOVER, "failover_ttl_s", K_U32, C(failover.ttl_s), 0, 1, 2592000, 0, "60",            \
	  "writes sent to a stand-in expire within this (their expiry is capped)")                 \
	_(WARMUP, "window_s", K_U32, C(warmup.window_s), 0, 0, 86400, 0, "0",                      \
	  "after a membership change, reads of moved keys that miss at the new owner are asked "   \
	  "of the previous one (and its hit written to the new owner with add) for this long; "    \
	  "0 = off")                                                                               \
	_(WARMUP, "ttl_s", K_U32, C(warmup.ttl_s), 0, 1, 2592000, 0, "300",                        \
	  "expiry of a warm copy written to the new owner when the reply does not say its TTL "    \
	  "(meta mg ... t does)")                                                                  \
	_(ROUTE, "default_gateway", K_OPT_IPV4, C(route.default_gw), 0, 0, 0, 0, "",               \
	  "next hop of every node no other route holds (the route `default via GW`); empty = "     \
	  "none")                                                                                  \
	_(ROUTE, "default_gateway6", K_OPT_IPV6, C(route.default_gw6), 0, 0, 0, 0, "",             \
	  "next hop of every IPv6 node no other route holds (the route `default6 via GW`); "       \
	  "empty = none")                                                                          \
	_(ROUTE, "static", K_ROUTES, C(route.table), C(route.table.n), 0, RT_ROUTES_MAX - 1,       \
	  F_LIST, "",                                                                              \
	  "routes to nodes off the router's segment: `PREFIX via GW` (a gateway on the segment) "  \
	  "or `PREFIX direct` (on the segment); the longest prefix wins. With no direct route "    \
	  "every node no route holds is on the segment; with one, such a node is refused. "        \
	  "Changed live with `ringwayctl route`")

struct key_def {
	enum sec_id sec;
	const char *name;
	enum key_kind kind;
	size_t off;
	size_t off2;
	uint32_t min;
	uint32_t max;
	unsigned int flags;
	const char *def;
	const char *doc;
};

static const struct key_def keys[] = {
#define KEY_DEF(s, n, k, o, o2, lo, hi, f, d, doc) {SEC_##s, n, k, o, o2, lo, hi, f, d, doc},
	RW_CFG_FOREACH_KEY(KEY_DEF)
#undef KEY_DEF
};

#define KEY_COUNT (sizeof(keys) / sizeof(keys[0]))

static const char *const log_levels[] = {"emerg",   "alert",  "crit", "err",
					 "warning", "notice", "info", "debug"};

static const char *const algo_names[] = {
#define ALGO_NAME(e, s) s,
	PL_FOREACH_ALGO(ALGO_NAME)
#undef ALGO_NAME
};

static const char *const hash_names[] = {
#define HASH_NAME(e, s) s,
	PL_FOREACH_HASH(HASH_NAME)
#undef HASH_NAME
};

static const char *const idle_names[] = {
	[DP_IDLE_POLL] = "poll",
	[DP_IDLE_BACKOFF] = "backoff",
	[DP_IDLE_ADAPTIVE] = "adaptive",
};

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(DIM(idle_names) == DP_IDLE_ADAPTIVE + 1, "a name for every enum dp_idle");

static const char *const steering_names[] = {
	[RW_STEER_AUTO] = "auto",
	[RW_STEER_OFF] = "off",
};

_Static_assert(DIM(steering_names) == RW_STEER_OFF + 1, "a name for every reply_steering");

static const char *const failover_names[] = {
#define RW_FAILOVER_NAME(e, s) s,
	DP_FOREACH_FAILOVER(RW_FAILOVER_NAME)
#undef RW_FAILOVER_NAME
};

static const char *const drain_names[] = {
#define RW_DRAIN_NAME(e, s) s,
	DP_FOREACH_DRAIN_ANSWER(RW_DRAIN_NAME)
#undef RW_DRAIN_NAME
};

/* ---- value parsers: 0, or -EINVAL with "expected ..." (or a reason) in why ---- */

/* What a key accepts, for "expected ..." and the docs. */
static void describe(const struct key_def *d, char *buf, size_t len)
{
	switch (d->kind) {
	case K_U32:
		snprintf(buf, len, "%s %u..%u",
			 d->flags & F_POW2    ? "a power of two"
			 : d->flags & F_PRIME ? "a prime"
					      : "an integer",
			 d->min, d->max);
		break;
	case K_IPV4:
		snprintf(buf, len, "a unicast IPv4 address");
		break;
	case K_MAC:
		snprintf(buf, len, "a unicast MAC address like 02:00:c6:12:00:01");
		break;
	case K_PORTS:
		snprintf(buf, len, "a comma-separated list of 1..%u UDP ports 1..65535", d->max);
		break;
	case K_PREFIXES:
		snprintf(buf, len,
			 "a comma-separated list of IPv4 prefixes a.b.c.d/len and IPv6 prefixes "
			 "2001:db8::/len");
		break;
	case K_MACS:
		snprintf(buf, len, "empty or a comma-separated list of up to %u unicast MACs",
			 d->max);
		break;
	case K_IDLE:
		snprintf(buf, len, "poll, backoff or adaptive");
		break;
	case K_FAILOVER:
		snprintf(buf, len, "next, fast or gutter");
		break;
	case K_DRAIN:
		snprintf(buf, len, "error or silent");
		break;
	case K_STEERING:
		snprintf(buf, len, "auto or off");
		break;
	case K_ALGO: {
		size_t o = (size_t)snprintf(buf, len, "one of");
		for (size_t i = 0; i < DIM(algo_names) && o < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%s %s", i ? "," : "",
					      algo_names[i]);
		break;
	}
	case K_HASH:
		snprintf(buf, len, "empty or a twemproxy hash: fnv1a_64, md5, crc32, murmur, ...");
		break;
	case K_HASH_TAG:
		snprintf(buf, len, "empty or two characters like {}");
		break;
	case K_PATH:
		snprintf(buf, len, "an absolute path of at most %u bytes", d->max);
		break;
	case K_LOG_LEVEL:
		snprintf(buf, len, "emerg, alert, crit, err, warning, notice, info or debug");
		break;
	case K_NODE_ADDR:
		snprintf(buf, len, "a unicast IPv4 address with an optional :port (1..65535)");
		break;
	case K_LISTEN:
		snprintf(buf, len, "empty (off) or an IPv4 address and port like 127.0.0.1:9150");
		break;
	case K_OPT_IPV4:
		snprintf(buf, len, "empty or a unicast IPv4 address");
		break;
	case K_OPT_IPV6:
		snprintf(buf, len, "empty or a unicast IPv6 address (not ::, ::1 or multicast)");
		break;
	case K_OPT_U32:
		snprintf(buf, len, "empty or an integer %u..%u", d->min, d->max);
		break;
	case K_ROUTES:
		snprintf(buf, len,
			 "empty or a comma-separated list of routes like 198.18.2.0/24 via "
			 "198.18.0.254 or 198.18.0.0/24 direct");
		break;
	}
}

static int expected(const struct key_def *d, char *why, size_t wlen)
{
	char what[160];

	describe(d, what, sizeof(what));
	snprintf(why, wlen, "expected %s", what);
	return -EINVAL;
}

/* Strict decimal: digits only, no sign, no spaces, fits in 32 bits. */
static int parse_decimal(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static bool is_prime(uint32_t v)
{
	if (v < 2)
		return false;
	for (uint32_t f = 2; (uint64_t)f * f <= v; f++)
		if (v % f == 0)
			return false;
	return true;
}

static int parse_u32(const struct key_def *d, const char *val, uint32_t *out, char *why,
		     size_t wlen)
{
	uint32_t v;

	if (parse_decimal(val, strlen(val), &v) < 0 || v < d->min || v > d->max ||
	    ((d->flags & F_POW2) && (v & (v - 1)) != 0) || ((d->flags & F_PRIME) && !is_prime(v)))
		return expected(d, why, wlen);
	*out = v;
	return 0;
}

/* A unicast IPv4 address: not 0/8, 127/8, multicast, reserved or broadcast. */
static int parse_ipv4_text(const char *s, size_t len, uint32_t *out)
{
	char buf[INET_ADDRSTRLEN];
	struct in_addr a;
	uint32_t h;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -EINVAL;
	h = ntohl(a.s_addr);
	*out = a.s_addr;
	if ((h >> 24) == 0 || (h >> 24) == 127 || h >= 0xe0000000u)
		return -ERANGE;
	return 0;
}

/* A unicast IPv6 address (inet_parse: no IPv4, no mapped form): not ::, ::1 or ff00::/8. */
static int parse_ipv6_text(const char *s, size_t len, uint8_t out[16])
{
	static const uint8_t loopback[16] = {[15] = 1};
	struct inet_addr a;

	if (inet_parse(s, len, &a) != 0 || inet_is_v4(&a))
		return -EINVAL;
	memcpy(out, a.b, 16);
	if (inet_is_zero(&a) || memcmp(a.b, loopback, 16) == 0 || a.b[0] == 0xff)
		return -ERANGE;
	return 0;
}

/* True when the IPv6 address @p a (16 bytes) is set. */
static bool ip6_set(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return memcmp(a, zero, 16) != 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		int hi = hex_digit(s[3 * i]), lo = hex_digit(s[3 * i + 1]);

		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	if (mac[0] & 1)
		return -EINVAL; /* multicast or broadcast */
	if ((mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0)
		return -EINVAL;
	return 0;
}

/* Next comma-separated item of *s, without surrounding blanks; false at the end. */
static bool next_item(const char **s, const char **item, size_t *len)
{
	const char *p = *s, *end;

	if (*p == '\0')
		return false;
	end = strchr(p, ',');
	if (end == NULL)
		end = p + strlen(p);
	*s = *end == ',' ? end + 1 : end;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*item = p;
	*len = (size_t)(end - p);
	return true;
}

static int parse_ports(const struct key_def *d, const char *val, uint16_t *ports, uint32_t *n,
		       char *why, size_t wlen)
{
	const char *item;
	size_t len;
	uint32_t v;

	if (*val == '\0' || val[strlen(val) - 1] == ',')
		return expected(d, why, wlen);
	while (next_item(&val, &item, &len)) {
		if (parse_decimal(item, len, &v) < 0 || v < 1 || v > 65535)
			return expected(d, why, wlen);
		for (uint32_t i = 0; i < *n; i++) {
			if (ports[i] == v) {
				snprintf(why, wlen, "port %u is listed twice", v);
				return -EINVAL;
			}
		}
		if (*n >= d->max) {
			snprintf(why, wlen, "at most %u ports", d->max);
			return -EINVAL;
		}
		ports[(*n)++] = (uint16_t)v;
	}
	return 0;
}

/* An IPv6 prefix (the item has a ':'), by lib/inet's rules. */
static int parse_prefix6(const char *item, size_t len, struct rw_cfg_prefix *p, char *why,
			 size_t wlen)
{
	struct inet_addr a;
	char err[96];

	if (inet_parse_prefix(item, len, &a, &p->len, err, sizeof(err)) != 0 || inet_is_v4(&a)) {
		snprintf(why, wlen, "expected IPv6 prefixes like 2001:db8::/64 ('%.*s': %s)",
			 (int)len, item, inet_is_v4(&a) ? "not IPv6" : err);
		return -EINVAL;
	}
	uint8_t plen = p->len;

	memset(p, 0, sizeof(*p));
	p->v6 = true;
	p->len = plen;
	memcpy(p->addr6, a.b, 16);
	return 0;
}

static int parse_prefix(const char *item, size_t len, struct rw_cfg_prefix *p, char *why,
			size_t wlen)
{
	const char *slash = memchr(item, '/', len);
	uint32_t addr, plen, mask;
	struct in_addr a;
	char text[INET_ADDRSTRLEN];

	if (memchr(item, ':', len) != NULL)
		return parse_prefix6(item, len, p, why, wlen);
	if (slash == NULL ||
	    parse_decimal(slash + 1, len - (size_t)(slash + 1 - item), &plen) < 0 || plen > 32) {
		snprintf(why, wlen, "expected IPv4 prefixes a.b.c.d/len with len 0..32 ('%.*s')",
			 (int)len, item);
		return -EINVAL;
	}
	if (parse_ipv4_text(item, (size_t)(slash - item), &addr) == -EINVAL) {
		snprintf(why, wlen, "expected IPv4 prefixes a.b.c.d/len ('%.*s')", (int)len, item);
		return -EINVAL;
	}
	mask = plen == 0 ? 0 : htonl(~0u << (32 - plen));
	if ((addr & ~mask) != 0) {
		a.s_addr = addr & mask;
		inet_ntop(AF_INET, &a, text, sizeof(text));
		snprintf(why, wlen, "prefix '%.*s' has host bits set (did you mean %s/%u?)",
			 (int)len, item, text, plen);
		return -EINVAL;
	}
	/* the whole entry, padding too: a loaded config compares byte for byte (its dump must
	 * load back the same), and field stores left the stack's padding bytes in it */
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->mask = mask;
	p->len = (uint8_t)plen;
	return 0;
}

static int parse_prefixes(const struct key_def *d, const char *val, struct rw_cfg_prefix *list,
			  uint32_t *n, char *why, size_t wlen)
{
	const char *item;
	size_t len;
	struct rw_cfg_prefix p;

	if (*val == '\0' || val[strlen(val) - 1] == ',')
		return expected(d, why, wlen);
	while (next_item(&val, &item, &len)) {
		if (parse_prefix(item, len, &p, why, wlen) < 0)
			return -EINVAL;
		for (uint32_t i = 0; i < *n; i++) {
			if (list[i].v6 == p.v6 && list[i].addr == p.addr && list[i].len == p.len &&
			    memcmp(list[i].addr6, p.addr6, 16) == 0) {
				snprintf(why, wlen, "prefix '%.*s' is listed twice", (int)len,
					 item);
				return -EINVAL;
			}
		}
		if (*n >= d->max) {
			snprintf(why, wlen, "at most %u prefixes", d->max);
			return -EINVAL;
		}
		list[(*n)++] = p;
	}
	return 0;
}

/* Empty: none. Routes are checked together (and with default_gateway) in check_routes. */
static int parse_routes(const struct key_def *d, const char *val, struct rt_table *t, char *why,
			size_t wlen)
{
	const char *item;
	size_t len;
	struct rt_route r;

	if (*val == '\0')
		return 0;
	if (val[strlen(val) - 1] == ',')
		return expected(d, why, wlen);
	while (next_item(&val, &item, &len)) {
		if (rt_parse(item, len, &r, why, wlen) < 0)
			return -EINVAL;
		for (uint32_t i = 0; i < t->n; i++) {
			if (inet_equal(&t->r[i].addr, &r.addr) && t->r[i].len == r.len) {
				snprintf(why, wlen, "route '%.*s': its prefix is listed twice",
					 (int)len, item);
				return -EINVAL;
			}
		}
		if (t->n >= d->max) {
			snprintf(why, wlen, "at most %u routes", d->max);
			return -EINVAL;
		}
		t->r[t->n++] = r;
	}
	return 0;
}

/* Empty: none (any MAC). */
static int parse_macs(const struct key_def *d, const char *val, uint8_t (*list)[6], uint32_t *n,
		      char *why, size_t wlen)
{
	const char *item;
	size_t len;
	char text[18];
	uint8_t mac[6];

	if (*val == '\0')
		return 0;
	if (val[strlen(val) - 1] == ',')
		return expected(d, why, wlen);
	while (next_item(&val, &item, &len)) {
		if (len != 17)
			return expected(d, why, wlen);
		memcpy(text, item, len);
		text[len] = '\0';
		if (parse_mac(text, mac) < 0)
			return expected(d, why, wlen);
		for (uint32_t i = 0; i < *n; i++) {
			if (memcmp(list[i], mac, 6) == 0) {
				snprintf(why, wlen, "MAC '%s' is listed twice", text);
				return -EINVAL;
			}
		}
		if (*n >= d->max) {
			snprintf(why, wlen, "at most %u MACs", d->max);
			return -EINVAL;
		}
		memcpy(list[(*n)++], mac, 6);
	}
	return 0;
}

static int find_name(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

static int parse_path(const struct key_def *d, const char *val, char *out, char *why, size_t wlen)
{
	size_t len = strlen(val);

	if (val[0] != '/' || len > d->max || val[len - 1] == '/')
		return expected(d, why, wlen);
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)val[i] < 0x20 || val[i] == 0x7f)
			return expected(d, why, wlen);
	}
	memcpy(out, val, len + 1);
	return 0;
}

/* `[IPV6]` or `[IPV6]:PORT` (a bare IPv6 too): the member's address text without brackets. */
static int parse_node_addr6(const struct key_def *d, const char *val, struct rw_cfg_node *n,
			    char *why, size_t wlen)
{
	static const uint8_t loopback[16] = {[15] = 1};
	uint16_t port = DEFAULT_LISTEN_PORT;

	(void)d;
	if (inet_parse_endpoint(val, strlen(val), true, &n->addr, &port) != 0 ||
	    inet_is_v4(&n->addr) || port == 0 || inet_is_zero(&n->addr) ||
	    memcmp(n->addr.b, loopback, 16) == 0 || n->addr.b[0] == 0xff) {
		snprintf(why, wlen,
			 "expected a unicast IPv6 address in brackets with an optional :port "
			 "(1..65535) like [2001:db8::5]:11211, got '%s'",
			 val);
		return -EINVAL;
	}
	inet_format(&n->addr, n->member.addr); /* without brackets, as members hold it */
	n->member.port = port;
	n->ip = 0;
	return 0;
}

static int parse_node_addr(const struct key_def *d, const char *val, struct rw_cfg_node *n,
			   char *why, size_t wlen)
{
	const char *colon = strchr(val, ':');
	size_t alen = colon ? (size_t)(colon - val) : strlen(val);
	uint32_t port = DEFAULT_LISTEN_PORT;
	struct pl_member *m = &n->member;
	uint32_t *ip = &n->ip;
	struct in_addr a;

	if (val[0] == '[' || (colon != NULL && strchr(colon + 1, ':') != NULL))
		return parse_node_addr6(d, val, n, why, wlen);
	if (parse_ipv4_text(val, alen, ip) < 0)
		return expected(d, why, wlen);
	if (colon &&
	    (parse_decimal(colon + 1, strlen(colon + 1), &port) < 0 || port < 1 || port > 65535))
		return expected(d, why, wlen);
	a.s_addr = *ip;
	inet_ntop(AF_INET, &a, m->addr, sizeof(m->addr));
	m->port = (uint16_t)port;
	inet_from_v4(&n->addr, *ip);
	return 0;
}

/* "" (off: port 0) or "a.b.c.d:port" with any address inet_pton takes (loopback, 0.0.0.0 for
 * every address) and port 1..65535. */
static int parse_listen(const struct key_def *d, const char *val, uint32_t *addr, uint32_t *port,
			char *why, size_t wlen)
{
	char buf[INET_ADDRSTRLEN];
	const char *colon = strrchr(val, ':');
	struct in_addr a;
	uint32_t p = 0;

	if (*val == '\0') {
		*addr = 0;
		*port = 0;
		return 0;
	}
	if (colon == NULL || (size_t)(colon - val) >= sizeof(buf) || colon[1] == '\0')
		return expected(d, why, wlen);
	memcpy(buf, val, (size_t)(colon - val));
	buf[colon - val] = '\0';
	for (const char *c = colon + 1; *c != '\0'; c++) {
		if (*c < '0' || *c > '9' || p > 65535)
			return expected(d, why, wlen);
		p = p * 10 + (uint32_t)(*c - '0');
	}
	if (inet_pton(AF_INET, buf, &a) != 1 || p == 0 || p > 65535)
		return expected(d, why, wlen);
	*addr = a.s_addr;
	*port = p;
	return 0;
}

/* Parse @p val for key @p d into @p base (a struct rw_config, or a node for node keys). */
static int parse_value(const struct key_def *d, const char *val, void *base, char *why, size_t wlen)
{
	char *p = (char *)base + d->off;
	int i;

	switch (d->kind) {
	case K_U32:
		return parse_u32(d, val, (uint32_t *)p, why, wlen);
	case K_IPV4:
		if (parse_ipv4_text(val, strlen(val), (uint32_t *)p) < 0)
			return expected(d, why, wlen);
		return 0;
	case K_MAC:
		if (parse_mac(val, (uint8_t *)p) < 0)
			return expected(d, why, wlen);
		*(bool *)((char *)base + d->off2) = true;
		return 0;
	case K_PORTS:
		return parse_ports(d, val, (uint16_t *)p, (uint32_t *)((char *)base + d->off2), why,
				   wlen);
	case K_PREFIXES:
		return parse_prefixes(d, val, (struct rw_cfg_prefix *)p,
				      (uint32_t *)((char *)base + d->off2), why, wlen);
	case K_MACS:
		return parse_macs(d, val, (uint8_t(*)[6])p, (uint32_t *)((char *)base + d->off2),
				  why, wlen);
	case K_IDLE:
		if ((i = find_name(idle_names, DIM(idle_names), val)) < 0)
			return expected(d, why, wlen);
		*(enum dp_idle *)p = (enum dp_idle)i;
		return 0;
	case K_FAILOVER:
		if ((i = find_name(failover_names, DIM(failover_names), val)) < 0)
			return expected(d, why, wlen);
		*(enum dp_failover *)p = (enum dp_failover)i;
		return 0;
	case K_DRAIN:
		if ((i = find_name(drain_names, DIM(drain_names), val)) < 0)
			return expected(d, why, wlen);
		*(enum dp_drain_answer *)p = (enum dp_drain_answer)i;
		return 0;
	case K_STEERING:
		if ((i = find_name(steering_names, DIM(steering_names), val)) < 0)
			return expected(d, why, wlen);
		*(enum rw_reply_steering *)p = (enum rw_reply_steering)i;
		return 0;
	case K_ALGO:
		if ((i = find_name(algo_names, DIM(algo_names), val)) < 0)
			return expected(d, why, wlen);
		*(enum pl_algo *)p = (enum pl_algo)i;
		return 0;
	case K_HASH:
		/* xxh3 is not a twemproxy hash; 0 means "the algorithm's default" */
		i = *val ? find_name(hash_names, DIM(hash_names), val) : PL_HASH_XXH3;
		if (i < 0 || (*val && i == PL_HASH_XXH3))
			return expected(d, why, wlen);
		*(enum pl_hash *)p = (enum pl_hash)i;
		return 0;
	case K_HASH_TAG:
		if (*val != '\0' && (strlen(val) != 2 || val[0] <= ' ' || val[1] <= ' ' ||
				     val[0] == 0x7f || val[1] == 0x7f))
			return expected(d, why, wlen);
		p[0] = val[0];
		p[1] = *val ? val[1] : '\0';
		return 0;
	case K_PATH:
		return parse_path(d, val, p, why, wlen);
	case K_LOG_LEVEL:
		if ((i = find_name(log_levels, DIM(log_levels), val)) < 0)
			return expected(d, why, wlen);
		*(uint32_t *)p = (uint32_t)i + 1;
		return 0;
	case K_NODE_ADDR: /* node keys only: base is the node */
		return parse_node_addr(d, val, (struct rw_cfg_node *)base, why, wlen);
	case K_LISTEN:
		return parse_listen(d, val, (uint32_t *)p, (uint32_t *)((char *)base + d->off2),
				    why, wlen);
	case K_OPT_IPV4:
		*(uint32_t *)p = 0;
		if (*val != '\0' && parse_ipv4_text(val, strlen(val), (uint32_t *)p) < 0)
			return expected(d, why, wlen);
		return 0;
	case K_OPT_IPV6:
		memset(p, 0, 16);
		if (*val != '\0' && parse_ipv6_text(val, strlen(val), (uint8_t *)p) < 0)
			return expected(d, why, wlen);
		return 0;
	case K_ROUTES:
		return parse_routes(d, val, (struct rt_table *)p, why, wlen);
	case K_OPT_U32:
		*(bool *)((char *)base + d->off2) = *val != '\0';
		*(uint32_t *)p = 0;
		if (*val != '\0')
			return parse_u32(d, val, (uint32_t *)p, why, wlen) < 0
				       ? expected(d, why, wlen)
				       : 0;
		return 0;
	}
	return expected(d, why, wlen);
}

static void apply_defaults(enum sec_id sec, void *base)
{
	char why[8];

	for (size_t i = 0; i < KEY_COUNT; i++) {
		if (keys[i].def != NULL && (keys[i].sec == SEC_NODE) == (sec == SEC_NODE))
			(void)parse_value(&keys[i], keys[i].def, base, why, sizeof(why));
	}
}

void rw_config_defaults(struct rw_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	apply_defaults(SEC_ROUTER, cfg);
}

/* ---- the scan: structure, names and line numbers ---- */

struct scan_section {
	char name[CFG_NAME_LEN];
	enum sec_id sec;
	unsigned int line;
	uint32_t node;	      /* SEC_NODE: index into cfg->nodes */
	uint32_t first_entry; /* into scan.entries */
	uint32_t n_entries;
};

struct scan_entry {
	unsigned int line;
	const struct key_def *def;
};

struct loader {
	const char *path;
	struct rw_config *cfg;
	char *err;
	size_t errlen;
	struct scan_section *sections;
	uint32_t n_sections, cap_sections;
	struct scan_entry *entries;
	uint32_t n_entries, cap_entries;
	unsigned int key_line[KEY_COUNT];	  /* non-node keys: first line seen, 0 = unset */
	unsigned int section_line[SEC_COUNT];	  /* first line of each section kind */
	unsigned int node_line[RW_CFG_NODES_MAX]; /* "[node NAME]" line */
	unsigned int node_addr_line[RW_CFG_NODES_MAX]; /* its address line */
};

static int fail(struct loader *l, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct loader *l, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	size_t o = 0;

	if (l->errlen == 0)
		return -EINVAL;
	if (line > 0)
		o = (size_t)snprintf(l->err, l->errlen, "%s:%u: ", l->path, line);
	else
		o = (size_t)snprintf(l->err, l->errlen, "%s: ", l->path);
	if (o < l->errlen) {
		va_start(ap, fmt);
		vsnprintf(l->err + o, l->errlen - o, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Edit distance of two short names, for "did you mean". */
static unsigned int distance(const char *a, const char *b)
{
	unsigned int row[CFG_NAME_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > CFG_NAME_LEN || lb > CFG_NAME_LEN)
		return UINT32_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned int diag = row[0];

		row[0] = (unsigned int)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int up = row[j];
			unsigned int best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const struct key_def *find_key(enum sec_id sec, const char *name)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (keys[i].sec == sec && strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

static int unknown_key(struct loader *l, unsigned int line, const struct scan_section *s,
		       const char *key)
{
	const char *best = NULL;
	unsigned int best_d = 3;

	for (size_t i = 0; i < KEY_COUNT; i++) {
		unsigned int d = distance(key, keys[i].name);

		if (keys[i].sec == s->sec && d < best_d) {
			best = keys[i].name;
			best_d = d;
		}
	}
	if (best)
		return fail(l, line, "key '%s' in [%s]: unknown key (did you mean '%s'?)", key,
			    s->name, best);
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].name, key) == 0)
			return fail(l, line, "key '%s' in [%s]: unknown key (it belongs in [%s])",
				    key, s->name, sec_names[keys[i].sec]);
	return fail(l, line, "key '%s' in [%s]: unknown key", key, s->name);
}

static bool valid_node_name(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > RW_CFG_NODE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = n[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      ((c == '.' || c == '_' || c == '-') && i > 0)))
			return false;
	}
	return true;
}

/* Which section kind "[name]" is; for node sections *node_name points at NAME (gutter
 * sections are node sections whose *gutter is set). */
static int classify_section(struct loader *l, unsigned int line, const char *name, enum sec_id *sec,
			    const char **node_name, bool *gutter)
{
	const char *best = NULL;
	unsigned int best_d = 3;
	char first[CFG_NAME_LEN];
	size_t flen = strcspn(name, " \t");

	for (int i = 0; i < SEC_COUNT; i++) {
		if (i != SEC_NODE && strcmp(name, sec_names[i]) == 0) {
			*sec = (enum sec_id)i;
			return 0;
		}
	}
	*gutter = flen == 6 && strncmp(name, "gutter", 6) == 0;
	if ((flen == 4 && strncmp(name, "node", 4) == 0) || *gutter) {
		const char *n = name + flen;

		while (*n == ' ' || *n == '\t')
			n++;
		if (!valid_node_name(n))
			return fail(
				l, line,
				"section [%s]: expected [node NAME] or [gutter NAME] with NAME of "
				"1..%u "
				"letters, digits, '.', '_', '-' (starting with a letter or digit)",
				name, RW_CFG_NODE_NAME_MAX);
		*sec = SEC_NODE;
		*node_name = n;
		return 0;
	}
	memcpy(first, name, flen);
	first[flen] = '\0';
	for (int i = 0; i < SEC_COUNT; i++) {
		unsigned int d = distance(first, sec_names[i]);

		if (d < best_d) {
			best = sec_names[i];
			best_d = d;
		}
	}
	if (best && strcmp(best, "node") == 0)
		return fail(l, line, "section [%s]: unknown section (did you mean [node NAME]?)",
			    name);
	if (best)
		return fail(l, line, "section [%s]: unknown section (did you mean [%s]?)", name,
			    best);
	return fail(l, line,
		    "section [%s]: unknown section (expected router, placement, node NAME, "
		    "timeouts, tables, control or log)",
		    name);
}

static void *grow(void *arr, uint32_t *cap, size_t elem)
{
	uint32_t ncap = *cap ? *cap * 2 : 16;
	void *n = realloc(arr, (size_t)ncap * elem);

	if (n != NULL)
		*cap = ncap;
	return n;
}

static int scan_section_line(struct loader *l, unsigned int line, char *s, size_t len)
{
	char *end = memchr(s, ']', len);
	char *name = s + 1;
	struct scan_section *sec;
	const char *node_name = NULL;
	enum sec_id id = SEC_COUNT;
	bool gutter = false;

	if (end == NULL)
		return fail(l, line, "expected ']' to close the section name");
	for (char *t = end + 1; t < s + len; t++)
		if (*t != ' ' && *t != '\t')
			return fail(l, line, "expected nothing after ']'");
	while (end > name && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	while (name < end && (*name == ' ' || *name == '\t'))
		name++;
	*end = '\0';
	if (*name == '\0')
		return fail(l, line, "expected a section name between '[' and ']'");
	if (strlen(name) >= CFG_NAME_LEN)
		return fail(l, line, "section [%.20s...]: name longer than %d characters", name,
			    CFG_NAME_LEN - 1);
	if (classify_section(l, line, name, &id, &node_name, &gutter) < 0)
		return -EINVAL;
	for (uint32_t i = 0; i < l->n_sections; i++) {
		const struct scan_section *o = &l->sections[i];

		if (strcmp(o->name, name) == 0 ||
		    (id == SEC_NODE && o->sec == SEC_NODE &&
		     strcmp(l->cfg->nodes[o->node].member.name, node_name) == 0))
			return fail(l, line, "section [%s]: appears twice (first at line %u)", name,
				    o->line);
	}
	if (id == SEC_NODE && l->cfg->n_nodes >= RW_CFG_NODES_MAX)
		return fail(l, line, "section [%s]: more than %u nodes", name, RW_CFG_NODES_MAX);
	if (l->n_sections == l->cap_sections) {
		void *n = grow(l->sections, &l->cap_sections, sizeof(*l->sections));

		if (n == NULL)
			return -ENOMEM;
		l->sections = n;
	}
	sec = &l->sections[l->n_sections++];
	memset(sec, 0, sizeof(*sec));
	memcpy(sec->name, name, strlen(name) + 1);
	sec->sec = id;
	sec->line = line;
	sec->first_entry = l->n_entries;
	if (l->section_line[id] == 0)
		l->section_line[id] = line;
	if (id == SEC_NODE) {
		struct rw_cfg_node *node = &l->cfg->nodes[l->cfg->n_nodes];

		sec->node = l->cfg->n_nodes++;
		apply_defaults(SEC_NODE, node);
		snprintf(node->member.name, sizeof(node->member.name), "%s", node_name);
		node->gutter = gutter;
		l->node_line[sec->node] = line;
	}
	return 0;
}

static int scan_key_line(struct loader *l, unsigned int line, char *s, size_t len)
{
	char *eq = memchr(s, '=', len);
	char *key = s, *kend, *val;
	struct scan_section *sec;
	const struct key_def *d;

	if (eq == NULL)
		return fail(l, line, "expected 'key = value', '[section]' or a '#' comment");
	if (l->n_sections == 0)
		return fail(l, line, "expected a [section] before the first key");
	sec = &l->sections[l->n_sections - 1];
	kend = eq;
	while (kend > key && (kend[-1] == ' ' || kend[-1] == '\t'))
		kend--;
	*kend = '\0';
	val = eq + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	if (*key == '\0')
		return fail(l, line, "expected a key name before '=' in [%s]", sec->name);
	if (strlen(key) >= CFG_NAME_LEN)
		return fail(l, line, "key '%.20s...' in [%s]: name longer than %d characters", key,
			    sec->name, CFG_NAME_LEN - 1);
	if (strlen(val) >= CFG_VALUE_LEN)
		return fail(l, line, "key '%s' in [%s]: value longer than %d characters", key,
			    sec->name, CFG_VALUE_LEN - 1);
	d = find_key(sec->sec, key);
	if (d == NULL)
		return unknown_key(l, line, sec, key);
	for (uint32_t i = sec->first_entry; i < l->n_entries; i++) {
		if (l->entries[i].def == d && !(d->flags & F_LIST))
			return fail(l, line, "key '%s' in [%s]: appears twice (first at line %u)",
				    key, sec->name, l->entries[i].line);
	}
	if (l->n_entries == l->cap_entries) {
		void *n = grow(l->entries, &l->cap_entries, sizeof(*l->entries));

		if (n == NULL)
			return -ENOMEM;
		l->entries = n;
	}
	l->entries[l->n_entries].line = line;
	l->entries[l->n_entries].def = d;
	l->n_entries++;
	sec->n_entries++;
	return 0;
}

/* One line, without its '\n'. Mirrors rte_cfgfile's reading of the same line. */
static int scan_line(struct loader *l, unsigned int line, char *s, size_t len)
{
	char *hash = memchr(s, '#', len);

	if (len > RW_CFG_LINE_MAX)
		return fail(l, line, "line longer than %d characters", RW_CFG_LINE_MAX);
	if (hash != NULL)
		len = (size_t)(hash - s);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			return fail(l, line, "a backslash is not allowed outside comments");
		if ((c < 0x20 && c != '\t' && !(c == '\r' && i == len - 1)) || c == 0x7f)
			return fail(l, line, "control character 0x%02x", c);
	}
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	if (len == 0)
		return 0;
	s[len] = '\0';
	if (*s == '[')
		return scan_section_line(l, line, s, len);
	return scan_key_line(l, line, s, len);
}

static int read_file(struct loader *l, char **text, size_t *len)
{
	FILE *f = fopen(l->path, "r");
	size_t cap = 4096, n = 0;
	char *buf = NULL;
	int ret = 0;

	if (f == NULL) {
		ret = -errno;
		fail(l, 0, "cannot open: %s", strerror(errno));
		return ret;
	}
	for (;;) {
		char *nb = realloc(buf, cap + 1);

		if (nb == NULL) {
			ret = -ENOMEM;
			goto out;
		}
		buf = nb;
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		if (cap >= (16u << 20)) {
			ret = fail(l, 0, "file larger than 16 MiB");
			goto out;
		}
		cap *= 2;
	}
	if (ferror(f)) {
		ret = -EIO;
		fail(l, 0, "read error");
		goto out;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return ret;
}

static int scan(struct loader *l)
{
	char *text = NULL, *p;
	size_t len = 0;
	unsigned int line = 0;
	int ret;

	ret = read_file(l, &text, &len);
	if (ret < 0)
		return ret;
	if (memchr(text, '\0', len) != NULL) {
		char *z = memchr(text, '\0', len);
		unsigned int zl = 1;

		for (char *q = text; q < z; q++)
			zl += *q == '\n';
		ret = fail(l, zl, "NUL byte in the file");
		goto out;
	}
	for (p = text; p < text + len && ret == 0;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);

		line++;
		ret = scan_line(l, line, p, ll);
		p += ll + 1;
	}
out:
	free(text);
	return ret;
}

/* ---- pass 2 and 3: rte_cfgfile's values through the key parsers ---- */

static int apply_entry(struct loader *l, const struct scan_section *s, const struct scan_entry *e,
		       const char *value)
{
	const struct key_def *d = e->def;
	void *base = s->sec == SEC_NODE ? (void *)&l->cfg->nodes[s->node] : (void *)l->cfg;
	char why[200];

	if (s->sec != SEC_NODE) {
		size_t k = (size_t)(d - keys);

		/* the first line of a list key replaces its default; the others add to it */
		if ((d->flags & F_LIST) && l->key_line[k] == 0)
			*(uint32_t *)((char *)base + d->off2) = 0;
		if (l->key_line[k] == 0)
			l->key_line[k] = e->line;
	} else if (d->kind == K_NODE_ADDR) {
		l->node_addr_line[s->node] = e->line;
	}
	if (parse_value(d, value, base, why, sizeof(why)) < 0) {
		if (strchr(why, '\'') != NULL) /* the parser quoted the bad part itself */
			return fail(l, e->line, "key '%s' in [%s]: %s", d->name, s->name, why);
		return fail(l, e->line, "key '%s' in [%s]: %s, got '%.80s'", d->name, s->name, why,
			    value);
	}
	return 0;
}

static int apply_section(struct loader *l, struct rte_cfgfile *cf, int idx)
{
	const struct scan_section *s = &l->sections[idx];
	char name[CFG_NAME_LEN];
	struct rte_cfgfile_entry *ent;
	int n = rte_cfgfile_section_num_entries_by_index(cf, name, idx);
	int ret = 0;

	if (n < 0 || (uint32_t)n != s->n_entries || strcmp(name, s->name) != 0)
		return fail(l, s->line, "section [%s]: rte_cfgfile read it differently", s->name);
	if (n == 0)
		return 0;
	ent = calloc((size_t)n, sizeof(*ent));
	if (ent == NULL)
		return -ENOMEM;
	if (rte_cfgfile_section_entries_by_index(cf, idx, name, ent, n) != n) {
		ret = fail(l, s->line, "section [%s]: rte_cfgfile read it differently", s->name);
		goto out;
	}
	for (int j = 0; j < n && ret == 0; j++) {
		const struct scan_entry *e = &l->entries[s->first_entry + (uint32_t)j];

		if (strcmp(ent[j].name, e->def->name) != 0)
			ret = fail(l, e->line, "key '%s' in [%s]: rte_cfgfile read it differently",
				   e->def->name, s->name);
		else
			ret = apply_entry(l, s, e, ent[j].value);
	}
out:
	free(ent);
	return ret;
}

static int apply_cfgfile(struct loader *l)
{
	struct rte_cfgfile_parameters params = {.comment_character = '#'};
	struct rte_cfgfile *cf;
	int ret = 0;

	cf = rte_cfgfile_load_with_params(l->path, CFG_FLAG_EMPTY_VALUES, &params);
	if (cf == NULL)
		return fail(l, 0, "rte_cfgfile could not read the file");
	if (rte_cfgfile_num_sections(cf, NULL, 0) != (int)l->n_sections)
		ret = fail(l, 0, "rte_cfgfile read a different number of sections");
	for (uint32_t i = 0; i < l->n_sections && ret == 0; i++)
		ret = apply_section(l, cf, (int)i);
	rte_cfgfile_close(cf);
	return ret;
}

/* ---- checks across keys ---- */

static unsigned int line_of(const struct loader *l, enum sec_id sec, const char *name)
{
	const struct key_def *d = find_key(sec, name);
	unsigned int line = l->key_line[d - keys];

	return line ? line : l->section_line[sec];
}

/* The router needs an address of at least one family: `address` (IPv4), `address6` or both. */
static int check_router_address(struct loader *l)
{
	static const char what[] = "missing key 'address' (a unicast IPv4 address) or 'address6' "
				   "(a unicast IPv6 address): the router needs one of them or both";

	const struct rw_cfg_router *r = &l->cfg->router;

	/* IPv6-only: an IPv4 client could never be answered (nothing IPv4 is received). */
	for (uint32_t i = 0; r->address == 0 && i < r->n_allowed_clients; i++) {
		const struct rw_cfg_prefix *p = &r->allowed_clients[i];
		struct in_addr a = {.s_addr = p->addr};
		char text[INET_ADDRSTRLEN];

		if (p->v6 || !ip6_set(r->address6))
			continue;
		inet_ntop(AF_INET, &a, text, sizeof(text));
		return fail(l, line_of(l, SEC_ROUTER, "allowed_clients"),
			    "key 'allowed_clients' in [router]: %s/%u is an IPv4 prefix and the "
			    "router has no IPv4 'address' (IPv6-only: list IPv6 prefixes only)",
			    text, p->len);
	}
	if (r->address != 0 || ip6_set(r->address6))
		return 0;
	if (l->section_line[SEC_ROUTER] == 0)
		return fail(l, 0, "missing section [router] with key 'address' or 'address6'");
	return fail(l, l->section_line[SEC_ROUTER], "section [router]: %s", what);
}

static int check_required(struct loader *l)
{
	char what[160];
	int ret = check_router_address(l);

	if (ret < 0)
		return ret;
	for (size_t k = 0; k < KEY_COUNT; k++) {
		const struct key_def *d = &keys[k];

		if (!(d->flags & F_REQUIRED) || d->sec == SEC_NODE || l->key_line[k] != 0)
			continue;
		describe(d, what, sizeof(what));
		if (l->section_line[d->sec] == 0)
			return fail(l, 0, "missing section [%s] with key '%s' (%s)",
				    sec_names[d->sec], d->name, what);
		return fail(l, l->section_line[d->sec], "section [%s]: missing key '%s' (%s)",
			    sec_names[d->sec], d->name, what);
	}
	if (l->cfg->n_nodes == 0)
		return fail(l, 0, "no [node NAME] section: at least one node is needed");
	for (uint32_t i = 0; i < l->cfg->n_nodes; i++) {
		if (l->node_addr_line[i] == 0)
			return fail(l, l->node_line[i],
				    "section [%s %s]: missing key 'address' (IPv4[:port])",
				    l->cfg->nodes[i].gutter ? "gutter" : "node",
				    l->cfg->nodes[i].member.name);
	}
	return 0;
}

static int check_ports(struct loader *l)
{
	const struct rw_cfg_router *r = &l->cfg->router;
	uint32_t end = r->reply_port_base + r->reply_port_count;

	if (end > 65536)
		return fail(l, line_of(l, SEC_ROUTER, "reply_port_count"),
			    "key 'reply_port_count' in [router]: reply_port_base %u + %u ports "
			    "runs past port 65535",
			    r->reply_port_base, r->reply_port_count);
	for (uint32_t i = 0; i < r->n_listen_ports; i++) {
		if (r->listen_ports[i] >= r->reply_port_base && r->listen_ports[i] < end)
			return fail(l, line_of(l, SEC_ROUTER, "listen_ports"),
				    "key 'listen_ports' in [router]: port %u lies in the reply "
				    "range %u..%u",
				    r->listen_ports[i], r->reply_port_base, end - 1);
	}
	if (l->cfg->control.tcp_port != 0 && l->cfg->control.tcp_port >= r->reply_port_base &&
	    l->cfg->control.tcp_port < end)
		return fail(l, line_of(l, SEC_CONTROL, "tcp_port"),
			    "key 'tcp_port' in [control]: port %u lies in the reply range %u..%u",
			    l->cfg->control.tcp_port, r->reply_port_base, end - 1);
	if (l->cfg->control.tcp_port != 0 && l->cfg->control.tcp_token_file[0] == '\0')
		return fail(l, line_of(l, SEC_CONTROL, "tcp_port"),
			    "key 'tcp_port' in [control]: the TCP listener needs "
			    "'tcp_token_file' (a token only root can read)");
	return 0;
}

static int check_tables(struct loader *l)
{
	const struct rw_cfg_tables *t = &l->cfg->tables;
	const struct rw_cfg_timeouts *o = &l->cfg->timeouts;

	if (o->quiet_read_ms > o->request_ms)
		return fail(l, line_of(l, SEC_TIMEOUTS, "quiet_read_ms"),
			    "key 'quiet_read_ms' in [timeouts]: %u is more than request_ms (%u)",
			    o->quiet_read_ms, o->request_ms);
	const struct rw_cfg_health *h = &l->cfg->health;

	if (h->probe_min_ms > h->probe_max_ms)
		return fail(l, line_of(l, SEC_HEALTH, "probe_max_ms"),
			    "key 'probe_max_ms' in [health]: %u is less than probe_min_ms (%u)",
			    h->probe_max_ms, h->probe_min_ms);
	uint32_t probe = h->probe_port ? h->probe_port : l->cfg->router.reply_port_base - 1;

	for (uint32_t i = 0; i < l->cfg->router.n_listen_ports; i++)
		if (probe == l->cfg->router.listen_ports[i] ||
		    (probe >= l->cfg->router.reply_port_base &&
		     probe - l->cfg->router.reply_port_base < l->cfg->router.reply_port_count))
			return fail(l, line_of(l, SEC_HEALTH, "probe_port"),
				    "key 'probe_port' in [health]: port %u is a listen port or in "
				    "the reply range",
				    probe);

	const struct rw_cfg_router *r = &l->cfg->router;
	unsigned int gen = dp_generation_bits(t->request_slots, r->reply_port_count, 1);
	uint32_t dgrams = dp_mget_datagrams_max(t->multiget_buffer_kb * 1024u, r->mtu);

	if (t->burst > t->rx_desc || t->burst > t->tx_desc)
		return fail(l, line_of(l, SEC_TABLES, "burst"),
			    "key 'burst' in [tables]: %u is more than rx_desc (%u) or tx_desc (%u)",
			    t->burst, t->rx_desc, t->tx_desc);
	/* With one worker; more workers split the reply ports and need more (checked at start,
	 * when their number is known). */
	if (gen < DP_GEN_BITS_MIN)
		return fail(
			l, line_of(l, SEC_TABLES, "request_slots"),
			"keys 'request_slots' in [tables] and 'reply_port_count' in [router]: "
			"%u slots over %u reply ports leave %u generation bits in a request id, "
			"at least %u are needed (request_slots at most 16 x reply_port_count / "
			"workers)",
			t->request_slots, r->reply_port_count, gen, DP_GEN_BITS_MIN);
	if (dgrams > DP_REPLY_DATAGRAMS_MAX)
		return fail(
			l, line_of(l, SEC_TABLES, "multiget_buffer_kb"),
			"keys 'multiget_buffer_kb' in [tables] and 'mtu' in [router]: the largest "
			"merged multi-get reply (%u KiB in datagrams of mtu %u) would take %u "
			"datagrams, more than the %u a frame header can number",
			t->multiget_buffer_kb, r->mtu, dgrams, DP_REPLY_DATAGRAMS_MAX);
	return 0;
}

static int check_nodes(struct loader *l)
{
	const struct rw_config *c = l->cfg;
	uint64_t weight = 0;

	for (uint32_t i = 0; i < c->n_nodes; i++) {
		const struct rw_cfg_node *n = &c->nodes[i];

		weight += n->member.weight;
		if (!inet_is_v4(&n->addr) && !ip6_set(c->router.address6))
			return fail(
				l, l->node_addr_line[i],
				"key 'address' in [%s %s]: an IPv6 node needs the router's IPv6 "
				"('address6' in [router])",
				n->gutter ? "gutter" : "node", n->member.name);
		if (inet_is_v4(&n->addr) && c->router.address == 0 && !c->router.has_node_port)
			return fail(
				l, l->node_addr_line[i],
				"key 'address' in [%s %s]: an IPv4 node needs the router's IPv4 "
				"('address' in [router]; this router is IPv6-only)",
				n->gutter ? "gutter" : "node", n->member.name);
		if (!inet_is_v4(&n->addr) && memcmp(n->addr.b, c->router.address6, 16) == 0)
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [%s %s]: %s is the router's own address6",
				    n->gutter ? "gutter" : "node", n->member.name, n->member.addr);
		if (n->ip != 0 && n->ip == c->router.address)
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [%s %s]: %s is the router's own address",
				    n->gutter ? "gutter" : "node", n->member.name, n->member.addr);
		for (uint32_t j = 0; j < i; j++) {
			if (inet_equal(&c->nodes[j].addr, &n->addr) &&
			    c->nodes[j].member.port == n->member.port)
				return fail(l, l->node_addr_line[i],
					    "key 'address' in [%s %s]: %s%s%s:%u is also node %s "
					    "(line %u)",
					    n->gutter ? "gutter" : "node", n->member.name,
					    n->ip ? "" : "[", n->member.addr, n->ip ? "" : "]",
					    n->member.port, c->nodes[j].member.name,
					    l->node_addr_line[j]);
		}
	}
	if (c->tables.neighbours < c->n_nodes)
		return fail(l, line_of(l, SEC_TABLES, "neighbours"),
			    "key 'neighbours' in [tables]: %u entries cannot hold the %u nodes",
			    c->tables.neighbours, c->n_nodes);
	if (c->placement.algo == PL_ALGO_RING &&
	    (uint64_t)c->placement.vnodes * weight > RING_POINTS_MAX)
		return fail(l, line_of(l, SEC_PLACEMENT, "vnodes"),
			    "key 'vnodes' in [placement]: %u vnodes x total weight %llu is more "
			    "than %u ring points",
			    c->placement.vnodes, (unsigned long long)weight, RING_POINTS_MAX);
	/* pl_build refuses it too: say so here, with the line, rather than at start-up. */
	if (c->placement.algo != PL_ALGO_TWEMPROXY && c->placement.key_hash != PL_HASH_XXH3)
		return fail(l, line_of(l, SEC_PLACEMENT, "key_hash"),
			    "key 'key_hash' in [placement]: applies only to algorithm twemproxy "
			    "(algorithm is %s); leave it empty",
			    algo_names[c->placement.algo]);
	if (c->placement.algo == PL_ALGO_MAGLEV && c->placement.maglev_size <= c->n_nodes)
		return fail(l, line_of(l, SEC_PLACEMENT, "maglev_size"),
			    "key 'maglev_size' in [placement]: %u must be larger than the number "
			    "of nodes (%u)",
			    c->placement.maglev_size, c->n_nodes);
	return 0;
}

void rw_config_routes(const struct rw_config *cfg, struct rt_table *out)
{
	*out = cfg->route.table;
	if (cfg->route.default_gw != 0 && out->n < RT_ROUTES_MAX) {
		struct rt_route *r = &out->r[out->n++];

		memset(r, 0, sizeof(*r));
		inet_from_v4(&r->addr, 0);
		inet_from_v4(&r->gw, cfg->route.default_gw);
	}
	if (ip6_set(cfg->route.default_gw6) && out->n < RT_ROUTES_MAX) {
		struct rt_route *r = &out->r[out->n++];

		memset(r, 0, sizeof(*r)); /* ::/0 */
		inet_from_v6(&r->gw, cfg->route.default_gw6);
	}
}

/* The routes with the default gateway: one route per prefix, gateways on the segment, a route
 * for every node. */
/* Two ports: node_port with its own address; the node_* keys only with it. */
static int check_node_port(struct loader *l)
{
	struct rw_cfg_router *r = &l->cfg->router;
	unsigned int port_line = l->key_line[find_key(SEC_ROUTER, "port") - keys];

	if (r->has_client_port && !r->has_node_port)
		return fail(l, line_of(l, SEC_ROUTER, "client_port"),
			    "key 'client_port' in [router]: needs node_port (two ports); one port "
			    "is 'port'");
	if (r->has_client_port && port_line != 0 && r->port != r->client_port)
		return fail(l, line_of(l, SEC_ROUTER, "client_port"),
			    "keys 'client_port' and 'port' (line %u) in [router]: %u and %u name "
			    "different client ports; give one of them",
			    port_line, r->client_port, r->port);
	if (r->has_client_port)
		r->port = r->client_port;
	if (!r->has_node_port) {
		if (r->node_address != 0 || r->has_node_vlan)
			return fail(l,
				    line_of(l, SEC_ROUTER,
					    r->node_address != 0 ? "node_address" : "node_vlan"),
				    "section [router]: node_address and node_vlan need node_port "
				    "(two ports)");
		if (ip6_set(r->node_address6))
			return fail(l, line_of(l, SEC_ROUTER, "node_address6"),
				    "section [router]: node_address6 needs node_port (two ports)");
		return 0;
	}
	if (r->node_port == r->port)
		return fail(l, line_of(l, SEC_ROUTER, "node_port"),
			    "key 'node_port' in [router]: %u is also 'port'; leave node_port "
			    "empty for one port",
			    r->node_port);
	if (r->node_address == 0 && !ip6_set(r->node_address6))
		return fail(l, line_of(l, SEC_ROUTER, "node_port"),
			    "key 'node_port' in [router]: two ports need 'node_address', the "
			    "router's IPv4 on the node network, or 'node_address6' (or both)");
	if (r->node_address != 0 && r->node_address == r->address)
		return fail(l, line_of(l, SEC_ROUTER, "node_address"),
			    "key 'node_address' in [router]: the node port needs an address of "
			    "its own (it is 'address')");
	for (uint32_t i = 0; i < l->cfg->n_nodes; i++)
		if (!inet_is_v4(&l->cfg->nodes[i].addr) && !ip6_set(r->node_address6))
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [node %s]: two ports and an IPv6 node need "
				    "'node_address6' in [router]",
				    l->cfg->nodes[i].member.name);
	for (uint32_t i = 0; i < l->cfg->n_nodes; i++)
		if (inet_is_v4(&l->cfg->nodes[i].addr) && r->node_address == 0)
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [node %s]: two ports and an IPv4 node need "
				    "'node_address' in [router]",
				    l->cfg->nodes[i].member.name);
	for (uint32_t i = 0; i < l->cfg->n_nodes; i++)
		if (l->cfg->nodes[i].ip != 0 && l->cfg->nodes[i].ip == r->node_address)
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [node %s]: %s is the router's node_address",
				    l->cfg->nodes[i].member.name, l->cfg->nodes[i].member.addr);
	return 0;
}

static int check_routes(struct loader *l)
{
	const struct rw_config *c = l->cfg;
	struct rt_table t;
	struct inet_addr nh;
	char why[200];

	for (uint32_t i = 0; ip6_set(c->route.default_gw6) && i < c->route.table.n; i++)
		if (c->route.table.r[i].len == 0 && !inet_is_v4(&c->route.table.r[i].addr))
			return fail(l, line_of(l, SEC_ROUTE, "default_gateway6"),
				    "key 'default_gateway6' in [route]: 'static' has an IPv6 "
				    "default route already; give one of them");
	for (uint32_t i = 0; c->route.default_gw != 0 && i < c->route.table.n; i++)
		if (c->route.table.r[i].len == 0 && inet_is_v4(&c->route.table.r[i].addr))
			return fail(l, line_of(l, SEC_ROUTE, "default_gateway"),
				    "key 'default_gateway' in [route]: 'static' has a default "
				    "route already; give one of them");
	rw_config_routes(c, &t);
	if (rt_check(&t, why, sizeof(why)) < 0)
		return fail(l, line_of(l, SEC_ROUTE, "static"), "section [route]: %s", why);
	for (uint32_t i = 0; i < c->n_nodes; i++) {
		if (rt_lookup(&t, &c->nodes[i].addr, &nh) < 0)
			return fail(l, l->node_addr_line[i],
				    "key 'address' in [node %s]: no route to %s (add a 'static' "
				    "route or '%s' in [route])",
				    c->nodes[i].member.name, c->nodes[i].member.addr,
				    inet_is_v4(&c->nodes[i].addr) ? "default_gateway"
								  : "default_gateway6");
	}
	return 0;
}

/* Move the [gutter NAME] nodes (checked with the others: names, addresses) out of the
 * members into cfg->gutter, in file order. */
static int split_gutter(struct loader *l)
{
	struct rw_config *c = l->cfg;
	uint32_t k = 0;

	c->n_gutter = 0;
	for (uint32_t i = 0; i < c->n_nodes; i++) {
		if (!c->nodes[i].gutter) {
			c->nodes[k++] = c->nodes[i];
			continue;
		}
		if (c->n_gutter == RW_CFG_GUTTER_MAX)
			return fail(l, l->node_line[i],
				    "section [gutter %s]: more than %u gutter nodes",
				    c->nodes[i].member.name, RW_CFG_GUTTER_MAX);
		c->gutter[c->n_gutter++] = c->nodes[i];
	}
	c->n_nodes = k;
	if (k == 0)
		return fail(l, 0, "no [node NAME] section: at least one node is needed");
	return 0;
}

int rw_config_load(const char *path, struct rw_config *cfg, char *err, size_t errlen)
{
	struct loader *l = calloc(1, sizeof(*l));
	int ret;

	if (errlen > 0)
		err[0] = '\0';
	if (l == NULL)
		return -ENOMEM;
	l->path = path;
	l->cfg = cfg;
	l->err = err;
	l->errlen = errlen;
	rw_config_defaults(cfg);
	ret = scan(l);
	if (ret == 0)
		ret = apply_cfgfile(l);
	if (ret == 0)
		ret = check_required(l);
	if (ret == 0)
		ret = check_ports(l);
	if (ret == 0)
		ret = check_tables(l);
	if (ret == 0)
		ret = check_nodes(l);
	if (ret == 0)
		ret = check_routes(l);
	if (ret == 0)
		ret = check_node_port(l);
	if (ret == 0)
		ret = split_gutter(l);
	if (ret == -ENOMEM && errlen > 0)
		snprintf(err, errlen, "%s: out of memory", path);
	free(l->sections);
	free(l->entries);
	free(l);
	return ret;
}

/* ---- output: dump, reference ---- */

static void print_ipv4(FILE *out, uint32_t be)
{
	char text[INET_ADDRSTRLEN];
	struct in_addr a = {.s_addr = be};

	inet_ntop(AF_INET, &a, text, sizeof(text));
	fputs(text, out);
}

static void print_value(FILE *out, const struct key_def *d, const void *base)
{
	const char *p = (const char *)base + d->off;
	const void *p2 = (const char *)base + d->off2;

	switch (d->kind) {
	case K_U32:
		fprintf(out, "%u", *(const uint32_t *)p);
		break;
	case K_IPV4:
		print_ipv4(out, *(const uint32_t *)p);
		break;
	case K_MAC: {
		const uint8_t *m = (const uint8_t *)p;

		fprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
		break;
	}
	case K_PORTS:
		for (uint32_t i = 0; i < *(const uint32_t *)p2; i++)
			fprintf(out, "%s%u", i ? ", " : "", ((const uint16_t *)p)[i]);
		break;
	case K_PREFIXES:
		for (uint32_t i = 0; i < *(const uint32_t *)p2; i++) {
			const struct rw_cfg_prefix *x = &((const struct rw_cfg_prefix *)p)[i];

			fputs(i ? ", " : "", out);
			if (x->v6) {
				struct inet_addr a;
				char t[INET_PREFIX_TEXT_MAX];

				inet_from_v6(&a, x->addr6);
				inet_format_prefix(&a, x->len, t);
				fputs(t, out);
				continue;
			}
			print_ipv4(out, x->addr);
			fprintf(out, "/%u", x->len);
		}
		break;
	case K_MACS:
		for (uint32_t i = 0; i < *(const uint32_t *)p2; i++) {
			const uint8_t *m = (const uint8_t *)p + 6 * i;

			fprintf(out, "%s%02x:%02x:%02x:%02x:%02x:%02x", i ? ", " : "", m[0], m[1],
				m[2], m[3], m[4], m[5]);
		}
		break;
	case K_IDLE:
		fputs(idle_names[*(const enum dp_idle *)p], out);
		break;
	case K_FAILOVER:
		fputs(failover_names[*(const enum dp_failover *)p], out);
		break;
	case K_DRAIN:
		fputs(drain_names[*(const enum dp_drain_answer *)p], out);
		break;
	case K_STEERING:
		fputs(steering_names[*(const enum rw_reply_steering *)p], out);
		break;
	case K_ALGO:
		fputs(algo_names[*(const enum pl_algo *)p], out);
		break;
	case K_HASH:
		if (*(const enum pl_hash *)p != PL_HASH_XXH3)
			fputs(hash_names[*(const enum pl_hash *)p], out);
		break;
	case K_HASH_TAG:
		if (p[0] != '\0')
			fprintf(out, "%c%c", p[0], p[1]);
		break;
	case K_PATH:
		fputs(p, out);
		break;
	case K_LOG_LEVEL:
		fputs(log_levels[*(const uint32_t *)p - 1], out);
		break;
	case K_NODE_ADDR: {
		const struct pl_member *m = (const struct pl_member *)p;

		fprintf(out, strchr(m->addr, ':') ? "[%s]:%u" : "%s:%u", m->addr, m->port);
		break;
	}
	case K_LISTEN:
		if (*(const uint32_t *)p2 != 0) {
			char a[INET_ADDRSTRLEN];

			inet_ntop(AF_INET, p, a, sizeof(a));
			fprintf(out, "%s:%u", a, *(const uint32_t *)p2);
		}
		break;
	case K_OPT_IPV4:
		if (*(const uint32_t *)p != 0)
			print_ipv4(out, *(const uint32_t *)p);
		break;
	case K_OPT_IPV6: {
		struct inet_addr a;
		char t[INET_TEXT_MAX];

		inet_from_v6(&a, (const uint8_t *)p);
		if (!inet_is_zero(&a)) {
			inet_format(&a, t);
			fputs(t, out);
		}
		break;
	}
	case K_OPT_U32:
		if (*(const bool *)p2)
			fprintf(out, "%u", *(const uint32_t *)p);
		break;
	case K_ROUTES:
		for (uint32_t i = 0; i < ((const struct rt_table *)p)->n; i++) {
			char text[RT_TEXT_MAX];

			rt_format(&((const struct rt_table *)p)->r[i], text);
			fprintf(out, "%s%s", i ? ", " : "", text);
		}
		break;
	}
}

static void dump_section(FILE *out, enum sec_id sec, const void *base)
{
	for (size_t k = 0; k < KEY_COUNT; k++) {
		const struct key_def *d = &keys[k];

		if (d->sec != sec)
			continue;
		if (d->kind == K_MAC && !*(const bool *)((const char *)base + d->off2))
			continue; /* unset: the port's MAC / ARP */
		if (d->kind == K_PATH && *((const char *)base + d->off) == '\0')
			continue; /* unset (only keys without a default can be) */
		if (d->kind == K_IPV4 && *(const uint32_t *)((const char *)base + d->off) == 0)
			continue; /* unset: no IPv4 address (IPv6-only) */
		fprintf(out, "%s = ", d->name);
		print_value(out, d, base);
		fputc('\n', out);
	}
}

int rw_config_dump(const struct rw_config *cfg, FILE *out)
{
	for (int s = 0; s < SEC_COUNT; s++) {
		if (s == SEC_NODE) {
			for (uint32_t i = 0; i < cfg->n_nodes; i++) {
				fprintf(out, "[node %s]\n", cfg->nodes[i].member.name);
				dump_section(out, SEC_NODE, &cfg->nodes[i]);
				fputc('\n', out);
			}
			for (uint32_t i = 0; i < cfg->n_gutter; i++) {
				fprintf(out, "[gutter %s]\n", cfg->gutter[i].member.name);
				dump_section(out, SEC_NODE, &cfg->gutter[i]);
				fputc('\n', out);
			}
			continue;
		}
		fprintf(out, "[%s]\n", sec_names[s]);
		dump_section(out, (enum sec_id)s, cfg);
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

void rw_config_members(const struct rw_config *cfg, struct pl_member *out)
{
	for (uint32_t i = 0; i < cfg->n_nodes; i++)
		out[i] = cfg->nodes[i].member;
}

int rw_config_write_reference(FILE *out)
{
	char what[160];

	fputs("| section | key | accepts | default | meaning |\n", out);
	fputs("|---|---|---|---|---|\n", out);
	for (size_t k = 0; k < KEY_COUNT; k++) {
		const struct key_def *d = &keys[k];
		const char *def = d->def;

		describe(d, what, sizeof(what));
		if (def == NULL)
			def = d->flags & F_REQUIRED ? "required" : "unset";
		fprintf(out, "| `[%s%s]` | `%s` | %s%s | %s%s%s | %s |\n", sec_names[d->sec],
			d->sec == SEC_NODE ? " NAME" : "", d->name, what,
			d->flags & F_LIST ? " (repeatable)" : "", d->def && *d->def ? "`" : "",
			d->def && !*d->def ? "empty" : def, d->def && *d->def ? "`" : "", d->doc);
	}
	return ferror(out) ? -EIO : 0;
}

size_t rw_config_key_count(void)
{
	return KEY_COUNT;
}

int rw_config_key_at(size_t i, const char **section, const char **key)
{
	if (i >= KEY_COUNT)
		return -ENOENT;
	*section = sec_names[keys[i].sec];
	*key = keys[i].name;
	return 0;
}
