/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_XDP_H
#define RINGWAY_XDP_H

/*
 * The router's AF_XDP mode. When an EAL --vdev names a net_af_xdp port, ringway loads its XDP
 * steering program (lib/steer) for the PMD to attach (xdp_prog=), so only memcached UDP to the
 * router reaches DPDK and the kernel keeps ARP, ND, ICMP and everything else on the interface;
 * node MACs then come from the kernel's neighbour table (lib/neigh), not from our own ARP.
 * Two AF_XDP ports at most: [router] port and node_port (either may also be another PMD's).
 * Each gets a program of its own: the client port steers requests to `address`/`address6`,
 * the node port replies (and probe answers) to `node_address`/`node_address6`, one port both;
 * with a VLAN, only frames on the port's VLAN. The nodes are resolved by the kernel of the
 * node-facing port when it is AF_XDP: on its VLAN interface when it has a VLAN and the kernel
 * holds one (/proc/net/vlan/config), else on its own interface.
 *
 * Meson builds xdp.c when lib/steer is found, else xdp_none.c, which refuses an AF_XDP port
 * with -ENOTSUP and a reason (every other call is then a no-op on a NULL handle).
 * Every call runs on the control lcore (the main thread). Nothing here prints or exits:
 * errors are a negative errno and one line of reason in @p err.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dataplane.h"

struct rw_xdp;

/**
 * Before rte_eal_init(): find the AF_XDP --vdevs among argv[1..argc), open a steering program
 * for each one's interface and rewrite those arguments (in place; the new strings live in the
 * handle) so the PMD attaches our programs. *@p out is NULL when no argument names an AF_XDP
 * port.
 * @return 0; -EINVAL (a third AF_XDP port, iface= missing, xdp_prog= given, no such
 * interface, argument too long); -ENOTSUP (built without lib/steer); or the loader's error.
 */
int rw_xdp_prepare(int argc, char **argv, const struct rw_config *cfg, struct rw_xdp **out,
		   char *err, size_t errlen);

/**
 * After rte_eal_init(), before the ports are configured: match each AF_XDP port to the DPDK
 * port id EAL gave it, set its program up for its role ([router] port, node_port or both) and
 * pick the interface whose neighbour table names the nodes. NULL: 0.
 * @return 0; -EINVAL (an AF_XDP port that is neither port nor node_port), -ENODEV, or the
 * loader's error.
 */
int rw_xdp_bind(struct rw_xdp *x, const struct rw_config *cfg, char *err, size_t errlen);

/** Number of AF_XDP ports (0 for NULL). */
unsigned int rw_xdp_ports(const struct rw_xdp *x);

/** Interface name of AF_XDP port @p i ("" when out of range). */
const char *rw_xdp_port_ifname(const struct rw_xdp *x, unsigned int i);

/** Id of a program an earlier ringway left attached on AF_XDP port @p i and rw_xdp_prepare()
 *  removed, or 0. */
uint32_t rw_xdp_stale_removed(const struct rw_xdp *x, unsigned int i);

/** Interface names of the AF_XDP ports ("veth0" or "veth0, veth1"; "" for NULL). */
const char *rw_xdp_ifname(const struct rw_xdp *x);

/** True when the node-facing port is AF_XDP: its kernel owns ARP and ND, the data plane sends
 *  none and learns MACs from rw_xdp_neigh_poll(). Valid after rw_xdp_bind(). */
bool rw_xdp_kernel_neigh(const struct rw_xdp *x);

/** The interface whose neighbour table is read ("" when none). Valid after rw_xdp_bind(). */
const char *rw_xdp_neigh_ifname(const struct rw_xdp *x);

/**
 * After the ports started: check our programs are the ones attached, open the kernel's
 * neighbour table and register the /ringway/steer telemetry command. NULL: 0.
 * @return 0 or -errno.
 */
int rw_xdp_started(struct rw_xdp *x, char *err, size_t errlen);

/**
 * Feed node MACs from the kernel's neighbour table into @p dp (dp_neigh_update) and ask the
 * kernel to resolve the missing ones; at most every 250 ms unless @p now. NULL: nothing.
 */
void rw_xdp_neigh_poll(struct rw_xdp *x, struct dp *dp, uint32_t max_nodes, bool now);

/** Close the neighbour table and remove our programs if still attached. NULL is fine. */
void rw_xdp_close(struct rw_xdp *x);

#endif /* RINGWAY_XDP_H */
