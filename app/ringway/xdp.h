/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_XDP_H
#define RINGWAY_XDP_H

/*
 * The router's AF_XDP mode. When an EAL --vdev names a net_af_xdp port, ringway loads its XDP
 * steering program (lib/steer) for the PMD to attach (xdp_prog=), so only memcached UDP to the
 * router reaches DPDK and the kernel keeps ARP, ICMP and everything else on the interface;
 * node MACs then come from the kernel's neighbour table (lib/neigh), not from our own ARP.
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
 * Before rte_eal_init(): find the AF_XDP --vdev among argv[1..argc), open the steering program
 * for its interface and rewrite that argument (in place; the new string lives in the handle)
 * so the PMD attaches our program. *@p out is NULL when no argument names an AF_XDP port.
 * @return 0; -EINVAL (a second AF_XDP port, iface= missing, xdp_prog= given, no such
 * interface, argument too long); -ENOTSUP (built without lib/steer); or the loader's error.
 */
int rw_xdp_prepare(int argc, char **argv, const struct rw_config *cfg, struct rw_xdp **out,
		   char *err, size_t errlen);

/** Id of a program an earlier ringway left attached and rw_xdp_prepare() removed, or 0. */
uint32_t rw_xdp_stale_removed(const struct rw_xdp *x);

/** Interface name of the AF_XDP port ("" for NULL). */
const char *rw_xdp_ifname(const struct rw_xdp *x);

/**
 * After the port started: check our program is the one attached, open the kernel's neighbour
 * table and register the /ringway/steer telemetry command. NULL: 0. @return 0 or -errno.
 */
int rw_xdp_started(struct rw_xdp *x, char *err, size_t errlen);

/**
 * Feed node MACs from the kernel's neighbour table into @p dp (dp_neigh_update) and ask the
 * kernel to resolve the missing ones; at most every 250 ms unless @p now. NULL: nothing.
 */
void rw_xdp_neigh_poll(struct rw_xdp *x, struct dp *dp, uint32_t max_nodes, bool now);

/** Close the neighbour table and remove our program if still attached. NULL is fine. */
void rw_xdp_close(struct rw_xdp *x);

#endif /* RINGWAY_XDP_H */
