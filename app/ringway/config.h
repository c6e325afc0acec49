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
 *   [placement]  algorithm, vnodes, hash tag, key hash, maglev table size, replicas
 *   [node NAME]  one section per initial cache node: address = IP[:PORT], weight, mac
 *   [gutter NAME] the same for a node of the gutter pool ([failover] mode = gutter)
 *   [timeouts]   request slot lifetime, ARP retries and entry lifetime
 *   [tables]     request slots, mbufs, burst size, descriptor and hand-off ring sizes
 *   [control]    management socket, state file, optional 127.0.0.1 TCP port
 *   [log]        log level
 *   [health]     node health: failure threshold and window, probe intervals, dirty-key bound
 *   [failover]   what a down node's keys get: next live member, the gutter pool, or an
 *                error at once
 *   [warmup]     warm-up window after membership changes, TTL of warm copies
 *   [route]      static routes and the default gateway towards nodes off the segment
 *
 * Comments start with '#' (anywhere on a line). A key may appear once per section, except
 * the list keys `listen_ports`, `allowed_clients` and `allowed_client_macs`, whose lines
 * accumulate. Unknown sections and keys are errors.
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

#include "dataplane.h"
#include "inet.h"
#include "placement.h"
#include "route.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Defaults, ranges and the meaning of every key live in one place: the key table
 * RW_CFG_FOREACH_KEY in config.c (rendered in docs/config.md). The comments below say what a
 * field holds and in which byte order, not which values it may take.
 */

/** Most UDP ports the router listens on for client requests: what the data plane holds. */
#define RW_CFG_LISTEN_PORTS_MAX DP_LISTEN_MAX
/** Most allowed-client prefixes: what the data plane holds. */
#define RW_CFG_PREFIXES_MAX DP_PREFIXES_MAX
/** Most allowed client MACs: what the data plane holds. */
#define RW_CFG_CLIENT_MACS_MAX DP_CLIENT_MACS_MAX
/** Most initial nodes in the config file (the control plane may add more later). */
#define RW_CFG_NODES_MAX 1024
/** Size of path buffers (with the NUL); socket paths are further limited to sun_path. */
#define RW_CFG_PATH_MAX 256
/** Longest node name: the section name "node NAME" must fit rte_cfgfile's 63 characters. */
#define RW_CFG_NODE_NAME_MAX 58
/** Longest line the loader accepts (rte_cfgfile's own limit is about this). */
#define RW_CFG_LINE_MAX 300

/** `reply_steering` in [router]. */
enum rw_reply_steering {
	RW_STEER_AUTO, /**< rte_flow rules where the port takes them */
	RW_STEER_OFF,  /**< none: the hand-off only */
};

/** An IPv4 prefix: the data plane's struct dp_prefix plus its length (for printing). A
 *  packet's source s is in it when (s & mask) == addr (all three in network byte order). */
struct rw_cfg_prefix {
	uint32_t addr; /**< network byte order, no host bits set */
	uint32_t mask; /**< network byte order; 0 for /0 */
	uint8_t len;   /**< prefix length (IPv6: 0..128) */
	bool v6;       /**< an IPv6 prefix: addr6 / len (addr, mask unused) */
	uint8_t addr6[16];
};

/** [router]: the router's own identity on the wire. */
struct rw_cfg_router {
	uint32_t port;	      /**< `port`: DPDK ethdev port id */
	uint32_t address;     /**< `address`: the router's IPv4, network byte order */
	uint8_t address6[16]; /**< `address6`: the router's IPv6; all zero = none */
	bool has_mac;	      /**< `mac` was given; when false, use the port's own MAC */
	uint8_t mac[6];	      /**< `mac`: source MAC for everything the router sends */
	/** `listen_ports`: UDP ports for client requests, host byte order, distinct. */
	uint16_t listen_ports[RW_CFG_LISTEN_PORTS_MAX];
	uint32_t n_listen_ports;  /**< entries in listen_ports, >= 1 */
	uint32_t reply_port_base; /**< `reply_port_base`: first UDP source port towards nodes */
	/** `reply_port_count`: ports in [base, base + count), which holds no listen port and
	 *  not the control tcp_port. */
	uint32_t reply_port_count;
	/** `reply_steering`: auto = rte_flow rules put replies on their worker's queue where
	 *  the port takes them; off = never (replies on another worker's queue are handed over). */
	enum rw_reply_steering reply_steering;
	/** `allowed_clients`: prefixes of the clients served, distinct. */
	struct rw_cfg_prefix allowed_clients[RW_CFG_PREFIXES_MAX];
	uint32_t n_allowed_clients; /**< entries in allowed_clients, >= 1 */
	/** `allowed_client_macs`: Ethernet sources client requests must come from, distinct,
	 *  unicast; none = any. */
	uint8_t allowed_client_macs[RW_CFG_CLIENT_MACS_MAX][6];
	uint32_t n_allowed_client_macs;
	enum dp_idle idle;	   /**< `idle`: what a worker does on an empty RX queue */
	uint32_t backoff_us;	   /**< `backoff_us` */
	uint32_t backoff_after;	   /**< `backoff_after` */
	uint32_t mtu;		   /**< `mtu`: IP MTU of the port */
	enum dp_drain_answer drain_answer; /**< `drain_answer`: what a draining router answers */
	bool has_vlan;		   /**< `vlan` was given: the port serves that VLAN only */
	uint32_t vlan;		   /**< `vlan`: 0 (untagged) .. 4094 */
	bool has_client_port;	   /**< `client_port` was given (two ports; `port` is set to it) */
	uint32_t client_port;	   /**< `client_port`: ethdev port facing the clients */
	bool has_node_port;	   /**< `node_port` was given: two ports */
	uint32_t node_port;	   /**< `node_port`: ethdev port facing the nodes */
	uint32_t node_address;	   /**< `node_address`: network byte order; 0 = unset */
	uint8_t node_address6[16]; /**< `node_address6`: all zero = unset */
	uint8_t node_mac[6];	   /**< the node port's own MAC (filled at start) */
	bool has_node_vlan;	   /**< `node_vlan` was given */
	uint32_t node_vlan;	   /**< `node_vlan` */
};

/** [node NAME]: one initial cache node. */
struct rw_cfg_node {
	/** name (from the section header), addr (dotted quad text), port (host order) and
	 *  weight: ready for pl_build(). No two nodes share address and port; none has the
	 *  router's address. */
	struct pl_member member;
	uint32_t ip;	       /**< the node's IPv4, network byte order; 0 for an IPv6 node */
	struct inet_addr addr; /**< the node's address, either family */
	bool has_mac;	       /**< `mac` was given: use it, no ARP for this node */
	uint8_t mac[6];	       /**< `mac`: static MAC of the node */
	bool gutter;	       /**< from a [gutter NAME] section: a node of the gutter pool */
};

/** Most [gutter NAME] nodes (the gutter pool of [failover] mode = gutter). */
#define RW_CFG_GUTTER_MAX 64

/** [timeouts]: each field is the key of the same name. */
struct rw_cfg_timeouts {
	uint32_t request_ms;
	uint32_t quiet_read_ms; /**< at most request_ms */
	uint32_t arp_retry_ms;
	uint32_t arp_attempts;
	uint32_t arp_lifetime_s;
	uint32_t fragment_ms;
};

/** [tables]: sizes fixed at start-up; each field is the key of the same name. */
struct rw_cfg_tables {
	uint32_t request_slots;
	uint32_t client_slots_max;
	uint32_t mbufs;
	uint32_t mbuf_cache;
	uint32_t burst;
	uint32_t rx_desc;
	uint32_t tx_desc;
	uint32_t handoff_ring;
	uint32_t neighbours;
	uint32_t multiget_inflight;
	uint32_t multiget_buffer_kb;
	uint32_t multiget_send_burst;
	uint32_t fragments;
	uint32_t mbuf_bytes;
};

/** [control] */
struct rw_cfg_control {
	char socket[RW_CFG_PATH_MAX];	      /**< `socket`: absolute path, fits sun_path */
	char state_file[RW_CFG_PATH_MAX];     /**< `state_file`: absolute path */
	uint32_t tcp_port;		      /**< `tcp_port`: 0 = no TCP listener */
	char tcp_token_file[RW_CFG_PATH_MAX]; /**< `tcp_token_file`: required with tcp_port */
};

/** [log] */
struct rw_cfg_log {
	uint32_t level; /**< `level` as DPDK's RTE_LOG_EMERG (1) .. RTE_LOG_DEBUG (8) */
};

/** [hotkeys]: hot-key detection (the data plane's hot_* settings). */
struct rw_cfg_hotkeys {
	uint32_t sample_every;
	uint32_t sketch_keys;
	uint32_t interval_ms;
	uint32_t threshold_pct;
	uint32_t replicas;
	uint32_t load_pct;
	uint32_t fill_ttl_s;
};

/** [metrics] */
struct rw_cfg_metrics {
	uint32_t address; /**< `listen`'s IPv4, network byte order */
	uint32_t port;	  /**< `listen`'s port; 0 = no /metrics endpoint */
};

/** [health]: each field is the key of the same name (lib/health's thresholds, the data
 *  plane's probe port and dirty-key bound, its slow_* settings for slow-node detection). */
struct rw_cfg_health {
	uint32_t slow_factor_pct;
	uint32_t slow_window_ms;
	uint32_t slow_min_replies;
	uint32_t fail_down;
	uint32_t window_ms;
	uint32_t probe_min_ms;
	uint32_t probe_max_ms; /**< at least probe_min_ms */
	uint32_t probe_timeout_ms;
	uint32_t up_successes;
	uint32_t flap_ms;
	uint32_t dirty_keys_max;
	uint32_t probe_port; /**< 0: one below the reply range; else no listen port, outside it */
};

/** [warmup]: `window_s` (0 = off), `ttl_s`. */
struct rw_cfg_warmup {
	uint32_t window_s;
	uint32_t ttl_s;
};

/** [failover]: `mode`, `failover_ttl_s`. */
struct rw_cfg_failover {
	enum dp_failover mode;
	uint32_t ttl_s;
};

/** [route]: how nodes off the router's segment are reached (see route.h). */
struct rw_cfg_route {
	uint32_t default_gw;	 /**< `default_gateway`, network order; 0 = none */
	uint8_t default_gw6[16]; /**< `default_gateway6`; all zero = none */
	struct rt_table table;	 /**< `static`, in file order (the default gateway apart) */
};

/** The whole configuration. About 150 KB: keep it static or on the heap, not the stack. */
struct rw_config {
	struct rw_cfg_router router;
	/** [placement]: `algorithm`, `vnodes`, `hash_tag`, `key_hash`, `maglev_size`,
	 *  `replicas`; ready for pl_build(). */
	struct pl_config placement;
	struct rw_cfg_node nodes[RW_CFG_NODES_MAX]; /**< in file order */
	uint32_t n_nodes;			    /**< >= 1 after a successful load */
	/** [gutter NAME]: the gutter pool, same keys as [node NAME], in file order; placed by
	 *  the [placement] settings; no address is also a node's. */
	struct rw_cfg_node gutter[RW_CFG_GUTTER_MAX];
	uint32_t n_gutter;
	struct rw_cfg_timeouts timeouts;
	struct rw_cfg_tables tables;
	struct rw_cfg_control control;
	struct rw_cfg_log log;
	struct rw_cfg_health health;
	struct rw_cfg_hotkeys hotkeys;
	struct rw_cfg_metrics metrics;
	struct rw_cfg_failover failover;
	struct rw_cfg_warmup warmup;
	struct rw_cfg_route route;
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

/** The routes of @p cfg: `static` plus `default_gateway` as `default via GW`. */
void rw_config_routes(const struct rw_config *cfg, struct rt_table *out);

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
