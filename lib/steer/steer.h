/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_STEER_H
#define RINGWAY_STEER_H

/**
 * @file
 * Loader for the XDP steering program of ringway's AF_XDP mode (libbpf, no DPDK).
 *
 * Ownership: the AF_XDP PMD attaches the program (devarg `xdp_prog=`), because in
 * DPDK 22.11 only the PMD can put its AF_XDP sockets into the program's `xsks_map`. This
 * library prepares what the PMD loads: a copy of the program object with the router's
 * address and ports written into its read-only data, in a memory file whose path is
 * steer_object_path(). It also clears a program left attached by a crashed run, checks
 * that the PMD attached ours, reads the counters, and detaches on exit if the PMD did not.
 *
 * Wiring in the router (one thread, before and after the port's life):
 *   for the EAL argument `--vdev net_af_xdp0,iface=IF,...` (before rte_eal_init):
 *     steer_vdev_iface(vdev, ifname, sizeof(ifname)) == 1 -> ifindex = if_nametoindex()
 *     s = steer_open(ifindex, &cfg, err, sizeof(err));
 *     steer_vdev_with_prog(vdev, s, buf, sizeof(buf)); replace the argument with buf
 *   rte_eal_init; optionally steer_reconfigure(s, &cfg2, ...) (e.g. the port turned out to
 *   be the node-facing one of two)
 *   rte_eth_dev_configure / rx_queue_setup (the PMD loads and attaches here) / start
 *   steer_check_attached(s, err, sizeof(err));               ours is now on the interface
 *   telemetry: steer_read_stats(s, counters)                 any thread, not per packet
 *   at exit (also after SIGINT/SIGTERM): rte_eth_dev_stop + rte_eth_dev_close (the PMD
 *   detaches), then steer_close(s) (detaches ours if it is still there).
 *
 * Errors: constructors return NULL and set errno; other calls return 0 or a negative
 * errno. Where a call takes @p err it writes a reason there (NUL-terminated when
 * errlen > 0). Nothing here prints or exits. Needs root (CAP_BPF, CAP_NET_ADMIN) except
 * steer_object_build().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inet.h"
#include "steer_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the program steers to the AF_XDP sockets (everything else goes to the kernel). */
struct steer_config {
	uint32_t router_ip; /**< network order; 0 = no IPv4 (then router_ip6 is needed) */
	/** The router's IPv6 address (not an IPv4-mapped one); all zero = IPv6 not steered
	 *  (every IPv6 frame passes to the kernel as pass_not_ipv4). */
	struct inet_addr router_ip6;
	uint16_t listen_ports[STEER_MAX_LISTEN_PORTS]; /**< host order, not 0 */
	unsigned int n_listen_ports;		       /**< 1 .. STEER_MAX_LISTEN_PORTS */
	uint16_t reply_port_base;		       /**< host order, first reply port */
	uint16_t reply_port_count;		       /**< 0 = no reply range */
	/** Only frames on VLAN vlan_id are steered (0: untagged or a priority tag); false =
	 *  untagged or any one 802.1Q tag. */
	bool vlan_fixed;
	uint16_t vlan_id; /**< 0 .. 4094, with vlan_fixed */
};

/** Directory of the per-interface lock files that keep two routers off one interface. */
#define STEER_LOCK_DIR "/run/ringway"

struct steer;

/**
 * Build the program object for @p cfg: a malloc'ed copy of the compiled object with
 * @p cfg written into its read-only data. Pure (no syscalls beyond malloc); the caller
 * frees *obj. -EINVAL for a bad config, -ENOEXEC if the embedded object is not laid out
 * as steer_abi.h says, -ENOMEM.
 */
int steer_object_build(const struct steer_config *cfg, void **obj, size_t *len, char *err,
		       size_t errlen);

/**
 * Prepare steering on interface @p ifindex (of the caller's network namespace): lock the
 * interface, detach a ringway program a crashed run left on it, build the object for
 * @p cfg, check that the kernel accepts it (load, then unload) and keep it in a memory
 * file for the PMD. Refuses (-EBUSY) when another live ringway holds the interface or a
 * program that is not ringway's is attached (ringway never removes someone else's).
 */
struct steer *steer_open(unsigned int ifindex, const struct steer_config *cfg, char *err,
			 size_t errlen);

/**
 * Replace the configuration of the object in steer_object_path() by @p cfg (checked and
 * test-loaded as in steer_open()), for a router that learns what a port is for only after
 * rte_eal_init() (which port id the PMD gave it). Only before the PMD loads the file (port
 * configuration); the program already attached keeps its configuration. A configuration
 * refused (checked, test-loaded) leaves the object unchanged.
 */
int steer_reconfigure(struct steer *s, const struct steer_config *cfg, char *err, size_t errlen);

/** Path of the object for the PMD's `xdp_prog=` devarg; valid until steer_close(). */
const char *steer_object_path(const struct steer *s);

/**
 * Is @p vdev (the value of an EAL `--vdev`) an AF_XDP port? 1 with its `iface=` copied to
 * @p ifname, 0 when it is another device, -EINVAL when it has no iface (or one that does
 * not fit @p len) or already names an `xdp_prog=` (ringway decides which program runs).
 * Pure string handling.
 */
int steer_vdev_iface(const char *vdev, char *ifname, size_t len);

/**
 * Write @p vdev with `,xdp_prog=<steer_object_path(s)>` appended to @p out. -ENOSPC when
 * it does not fit.
 */
int steer_vdev_with_prog(const char *vdev, const struct steer *s, char *out, size_t outlen);

/**
 * After the PMD set up its RX queues: 0 when ringway's program is attached to the
 * interface, -ENOENT when none is, -EBUSY when another program is.
 */
int steer_check_attached(struct steer *s, char *err, size_t errlen);

/** Sum the attached program's per-CPU counters into @p out (STEER_CTR_COUNT slots). */
int steer_read_stats(struct steer *s, uint64_t out[STEER_CTR_COUNT]);

/** Detach ringway's program if still attached, release the lock and the memory file. */
void steer_close(struct steer *s);

/** Telemetry key of counter @p ctr ("to_xsk_request", ...); NULL when out of range. */
const char *steer_ctr_name(unsigned int ctr);

/**
 * What is attached to @p ifindex: *prog_id 0 when nothing; *ours true when the program is
 * ringway's (by name). Either pointer may be NULL. 0 or a negative errno.
 */
int steer_query(unsigned int ifindex, uint32_t *prog_id, bool *ours);

/**
 * Detach ringway's program from @p ifindex (native and generic mode): 1 when one was
 * detached, 0 when none was attached, -EBUSY when the attached program is not ringway's.
 */
int steer_detach_ours(unsigned int ifindex);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_STEER_H */
