/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_UNMAP_GUARD_H
#define RINGWAY_UNMAP_GUARD_H

/*
 * A guard for PMDs that unmap queue memory under running workers (DPDK 22.11's net_memif:
 * memif_disconnect() clears its connected flag and unmaps the peer's regions from the EAL
 * interrupt thread at once, while a worker may be inside rte_eth_rx_burst() on those rings;
 * docs/performance.md, "Router deaths"). The ringway binary defines munmap(): while a guard
 * is set, a call from any thread but a worker first waits until every worker has finished the
 * poll it was in
 * (dp_quiesce), so a burst that passed the PMD's flag check ends before the memory goes.
 * Unguarded (every other port), munmap() is the system call and nothing else. The connect
 * side of the same PMD (a ring computed from a region not mapped yet) is closed by
 * dp_config.link_gated: workers touch the port only while its link is up.
 */

#include "dataplane.h"

/* Guard @p dp's workers from now on. Lcore: main, after the workers launched. */
void rw_unmap_guard_set(const struct dp *dp);
/* No guard: returns once no munmap() uses the one set (so the dp may be freed). Lcore: main. */
void rw_unmap_guard_clear(void);

#endif /* RINGWAY_UNMAP_GUARD_H */
