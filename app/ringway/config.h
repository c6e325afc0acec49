/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_CONFIG_H
#define RINGWAY_CONFIG_H

/**
 * @file
 * ringway's configuration: an INI file read with DPDK's rte_cfgfile, validated key by key.
 *
 * Sections (every key, its type, range and default: docs/config.md, generated from the same
 * key table as the parser; the commented sample is config/ringway.conf):
 *   [router]     the router's own address, MAC, listen ports, reply port range, clients
 *   [placement]  algorithm, vnodes, hash tag, key hash, maglev table size
 *   [node NAME]  one section per initial cache node: address = IP[:PORT], weight, mac
 *   [timeouts]   request slot lifetime, ARP retries and entry lifetime
 *   [tables]     request slots, mbufs, burst size, descriptor and hand-off ring sizes
 *   [control]    management socket, state file, optional 127.0.0.1 TCP port
 *   [log]        log level
 *
 * Comments start with '#' (anywhere on a line). A key may appear once per section, except
 * the list keys `listen_ports` and `allowed_clients`, whose lines accumulate. Unknown
 * sections and keys are errors.
 *
 * The loader needs no EAL (rte_cfgfile is plain C); it never prints and never exits: it
 * returns an error and one line of text naming the file, line, section and key.
 * Addresses and ports in the struct are in network byte order where noted, so the data path
 * can compare them with packet fields directly.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "placement.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most UDP ports the router listens on for client requests. */
#define RW_CFG_LISTEN_PORTS_MAX 16
/** Most allowed-client prefixes. */
#define RW_CFG_PREFIXES_MAX 256
/** Most initial nodes in the config file (the control plane may add more later). */
#define RW_CFG_NODES_MAX 1024
/** Size of path buffers (with the NUL); socket paths are further limited to sun_path. */
#define RW_CFG_PATH_MAX 256
/** Longest node name: the section name "node NAME" must fit rte_cfgfile's 63 characters. */
#define RW_CFG_NODE_NAME_MAX 58
/** Longest line the loader accepts (rte_cfgfile's own limit is about this). */
#define RW_CFG_LINE_MAX 300

/** What a worker does when its RX queue is empty. */
enum rw_idle {
	RW_IDLE_POLL = 0, /**< spin: lowest latency, one full core per worker */
	RW_IDLE_BACKOFF,  /**< after backoff_after empty polls, sleep backoff_us per empty poll */
};

/** An IPv4 prefix; addr has no host bits set. A packet's source s is in it when
 *  (s & mask) == addr (all three in network byte order). */
struct rw_cfg_prefix {
	uint32_t addr; /**< network byte order */
	uint32_t mask; /**< network byte order; 0 for /0 */
	uint8_t len;   /**< prefix length, 0..32 */
};

/** [router]: the router's own identity on the wire. */
struct rw_cfg_router {
	/** `port`: DPDK ethdev port id to use; default 0. */
	uint32_t port;
	/** `address`: the router's IPv4, network byte order; required. */
	uint32_t address;
	/** `mac` was given; when false, use the port's own MAC. */
	bool has_mac;
	/** `mac`: source MAC for everything the router sends. */
	uint8_t mac[6];
	/** `listen_ports`: UDP ports for client requests, host byte order, distinct;
	 *  default {11211}. */
	uint16_t listen_ports[RW_CFG_LISTEN_PORTS_MAX];
	/** Entries in listen_ports, >= 1. */
	uint32_t n_listen_ports;
	/** `reply_port_base`: first UDP source port towards nodes; 1024..65535, default 32768. */
	uint32_t reply_port_base;
	/** `reply_port_count`: ports in the reply range [base, base + count), a power of two
	 *  1..32768; the range ends at 65535 at the latest and contains no listen port and not
	 *  the control tcp_port; default 16384. */
	uint32_t reply_port_count;
	/** `allowed_clients`: prefixes of the clients served, distinct; required. */
	struct rw_cfg_prefix allowed_clients[RW_CFG_PREFIXES_MAX];
	/** Entries in allowed_clients, >= 1. */
	uint32_t n_allowed_clients;
	/** `idle`: poll | backoff; default poll. */
	enum rw_idle idle;
	/** `backoff_us`: sleep per empty poll in backoff mode; 1..100000, default 100. */
	uint32_t backoff_us;
	/** `backoff_after`: empty polls in a row before backing off; 1..1000000, default 1024. */
	uint32_t backoff_after;
	/** `mtu`: IP MTU of the port; 576..9000, default 1500. */
	uint32_t mtu;
};

/** [node NAME]: one initial cache node. */
struct rw_cfg_node {
	/** name (from the section header), addr (dotted quad text), port (host order, from
	 *  `address`, default 11211) and weight (`weight`, 1..10000, default 1): ready for
	 *  pl_build(). No two nodes share address and port; none has the router's address. */
	struct pl_member member;
	/** The node's IPv4, network byte order. */
	uint32_t ip;
	/** `mac` was given: use it, no ARP for this node. */
	bool has_mac;
	/** `mac`: static MAC of the node. */
	uint8_t mac[6];
};

/** [timeouts] */
struct rw_cfg_timeouts {
	/** `request_ms`: a request slot without a complete reply is freed after this;
	 *  1..60000, default 1000. */
	uint32_t request_ms;
	/** `arp_retry_ms`: between ARP requests for one node; 10..60000, default 1000. */
	uint32_t arp_retry_ms;
	/** `arp_attempts`: ARP requests before the node counts as unresolved; 1..100,
	 *  default 5. */
	uint32_t arp_attempts;
	/** `arp_lifetime_s`: a learned node MAC is refreshed after this; 1..86400,
	 *  default 300. */
	uint32_t arp_lifetime_s;
};

/** [tables]: sizes fixed at start-up. */
struct rw_cfg_tables {
	/** `request_slots`: per worker, power of two, 64..65536, default 4096. */
	uint32_t request_slots;
	/** `mbufs`: mbufs per packet pool, 1024..4194304, default 16383. */
	uint32_t mbufs;
	/** `mbuf_cache`: per-lcore mempool cache, 0..512, default 256. */
	uint32_t mbuf_cache;
	/** `burst`: packets per RX/TX burst, 1..256, at most rx_desc and tx_desc; default 32. */
	uint32_t burst;
	/** `rx_desc`: RX descriptors per queue, power of two, 64..16384, default 1024. */
	uint32_t rx_desc;
	/** `tx_desc`: TX descriptors per queue, power of two, 64..16384, default 1024. */
	uint32_t tx_desc;
	/** `handoff_ring`: per-worker ring for replies that arrive on another worker, power
	 *  of two, 64..65536, default 1024. */
	uint32_t handoff_ring;
	/** `neighbours`: neighbour (ARP) table entries, 16..65536, at least the number of
	 *  nodes; default 1024. */
	uint32_t neighbours;
	/** `multiget_inflight`: multi-gets over several nodes being merged per worker,
	 *  0..65534 (0 = never split: refused), default 128. */
	uint32_t multiget_inflight;
	/** `multiget_buffer_kb`: KiB of merged multi-get replies one worker buffers,
	 *  16..65536, default 2048. */
	uint32_t multiget_buffer_kb;
};

/** [control] */
struct rw_cfg_control {
	/** `socket`: absolute path of at most 107 bytes (sun_path); default
	 *  /run/ringway/ringway.sock. */
	char socket[RW_CFG_PATH_MAX];
	/** `state_file`: absolute path; default /var/lib/ringway/state. */
	char state_file[RW_CFG_PATH_MAX];
	/** `tcp_port`: also listen on 127.0.0.1:tcp_port; 0 = off (default). */
	uint32_t tcp_port;
};

/** [log] */
struct rw_cfg_log {
	/** `level`: emerg|alert|crit|err|warning|notice|info|debug as DPDK's RTE_LOG_EMERG (1)
	 *  .. RTE_LOG_DEBUG (8); default info (7). */
	uint32_t level;
};

/** The whole configuration. About 150 KB: keep it static or on the heap, not the stack. */
struct rw_config {
	struct rw_cfg_router router;
	/** [placement]: `algorithm` (default ring), `vnodes` (1..10000, default 160),
	 *  `hash_tag` (two characters, e.g. {}, or empty = off; default off), `key_hash`
	 *  (twemproxy's hash; default fnv1a_64 there), `maglev_size` (prime, default 65537).
	 *  Ready for pl_build(). */
	struct pl_config placement;
	struct rw_cfg_node nodes[RW_CFG_NODES_MAX]; /**< in file order */
	uint32_t n_nodes;			    /**< >= 1 after a successful load */
	struct rw_cfg_timeouts timeouts;
	struct rw_cfg_tables tables;
	struct rw_cfg_control control;
	struct rw_cfg_log log;
};

/** Fill @p cfg with every default; required values (router address, allowed clients,
 *  nodes) are left empty. */
void rw_config_defaults(struct rw_config *cfg);

/**
 * Load and validate @p path into @p cfg (defaults first, then the file).
 * Every key is checked where it is read (type, range, format), then across keys (listen
 * ports vs the reply range, duplicate node addresses, ...). On failure @p cfg is
 * unspecified and @p err (always NUL-terminated when errlen > 0) holds one line such as
 *   "ringway.conf:12: key 'weight' in [node cache1]: expected an integer 1..10000, got '0'"
 * @return 0; -EINVAL on bad content; -ENOENT, -EACCES, ... when the file cannot be read;
 *         -ENOMEM.
 */
int rw_config_load(const char *path, struct rw_config *cfg, char *err, size_t errlen);

/**
 * Write @p cfg as a complete INI file (every key, defaults included) that loads back to the
 * same configuration; for `ringway --check`.
 * @return 0, or -EIO when writing failed.
 */
int rw_config_dump(const struct rw_config *cfg, FILE *out);

/**
 * Copy the nodes' placement members into @p out (cfg->n_nodes entries), for pl_build().
 */
void rw_config_members(const struct rw_config *cfg, struct pl_member *out);

/**
 * Write the key reference (a Markdown table: section, key, type, default, meaning) that
 * docs/config.md contains; a unit test checks the two are identical.
 * @return 0, or -EIO.
 */
int rw_config_write_reference(FILE *out);

/** Number of keys the loader knows, and the i-th as "section", "key" (for tests; the node
 *  keys are reported with section "node"). @return 0, or -ENOENT when i is out of range. */
size_t rw_config_key_count(void);
int rw_config_key_at(size_t i, const char **section, const char **key);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_CONFIG_H */
