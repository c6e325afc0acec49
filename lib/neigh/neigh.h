/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_NEIGH_H
#define RINGWAY_NEIGH_H

/**
 * @file
 * Node MACs from the kernel's neighbour tables (rtnetlink; IPv4 ARP and IPv6 neighbour
 * discovery), for AF_XDP mode: there the kernel shares the NIC with ringway and owns ARP and
 * ND for the router's addresses, so ringway asks the kernel instead of running its own.
 *
 * Use from one thread off the data path (the control lcore), every second or so:
 *   n = neigh_open(ifindex, err, sizeof(err));
 *   fill e[i].addr with the nodes' (or their gateways') addresses, IPv4 or IPv6;
 *   neigh_lookup(n, e, count);
 *   for each e[i]: NEIGH_KNOWN -> feed e[i].mac to the router's neighbour table;
 *                  NEIGH_ABSENT or NEIGH_FAILED -> neigh_resolve(n, &e[i].addr) (the kernel
 *                  sends ARP requests or neighbour solicitations; a later lookup sees the
 *                  answer)
 *   neigh_close(n);
 * The interface needs an address of the family in the nodes' subnet (the kernel's ARP or ND
 * source; for IPv6 its link-local address serves too).
 * The netlink socket belongs to the network namespace current at neigh_open().
 *
 * Errors: neigh_open returns NULL and sets errno (reason in @p err); the others return 0
 * or a negative errno. Nothing here prints or exits; every receive has a 1 s timeout.
 */

#include <stddef.h>
#include <stdint.h>

#include "inet.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the kernel knows about one address. */
enum neigh_state {
	NEIGH_ABSENT = 0, /**< no entry on this interface */
	NEIGH_PENDING,	  /**< resolution under way (NUD_INCOMPLETE / NUD_NONE) */
	NEIGH_FAILED,	  /**< the last resolution got no answer (NUD_FAILED) */
	NEIGH_KNOWN,	  /**< MAC valid (reachable, stale, delay, probe, permanent) */
};

/** One address to look up: addr is input, mac and state output. */
struct neigh_entry {
	struct inet_addr addr; /**< IPv4 (mapped) or IPv6 */
	uint8_t mac[6];	       /**< valid when state == NEIGH_KNOWN */
	uint8_t state;	       /**< enum neigh_state */
};

struct neigh;

/** Open a route netlink socket for interface @p ifindex. */
struct neigh *neigh_open(unsigned int ifindex, char *err, size_t errlen);

/** Fill mac and state of @p e[0 .. count-1] from one dump of the kernel's table of each family
 *  present in @p e (IPv4, IPv6 or both). */
int neigh_lookup(struct neigh *n, struct neigh_entry *e, size_t count);

/**
 * Ask the kernel to resolve @p addr on the interface without sending any data to it: an
 * RTM_NEWNEIGH with NTF_USE creates the entry if needed and starts ARP (IPv4) or neighbour
 * discovery (IPv6).
 */
int neigh_resolve(struct neigh *n, const struct inet_addr *addr);

/** Close the socket. NULL is allowed. */
void neigh_close(struct neigh *n);

/** "absent", "pending", "failed", "known"; NULL when out of range. */
const char *neigh_state_name(unsigned int state);

#ifdef __cplusplus
}
#endif

#endif /* RINGWAY_NEIGH_H */
