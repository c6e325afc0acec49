/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IP fragments, both ways (dp_frag.c): a worker reassembles the IPv4 and IPv6 fragments it
 * receives with DPDK's rte_ip_frag (a table per worker, made at set-up, bounded, with a
 * timeout), so that a request or reply larger than the MTU takes the same path as any other;
 * and it fragments again, in its TX buffer, every datagram that leaves larger than the MTU (a
 * reassembled one, or one the port received whole because af_packet's kernel socket
 * reassembled it). Off the hot path: check_ipv4() sends here only frames whose flags/offset
 * word says fragment or whose length passes the MTU.
 *
 * Accounting: a fragment the table holds is counted in the gauge ip_fragments_held; when its
 * datagram completes, the datagram carries the outcome of the fragment that completed it and
 * the others are counted as ip_fragments_merged; a fragment that never completes is dropped
 * (ip_fragment_timeout, ip_fragment_table_full, ip_fragment_invalid). Nothing here takes a
 * slot or touches a node's counters: the datagram goes on through the request or reply path
 * like any other packet, or is dropped before it (ip_too_big).
 *
 * Lcore: the worker's own (dp_frag_create / dp_frag_free: the control lcore, at set-up and
 * tear-down).
 */
#ifndef RINGWAY_DP_FRAG_H
#define RINGWAY_DP_FRAG_H

#include <stdint.h>

#include <rte_mbuf.h>

struct dp_worker;

/* Fragments one datagram may have (DPDK's RTE_LIBRTE_IP_FRAG_MAX_FRAG) and the most a
 * reassembled datagram may be: what fits in the reassembly's own mbufs. */
#define DP_FRAG_DATAGRAM_MAX 12288u

/* Mbufs per worker for reassembled datagrams larger than the port's pool's mbufs: they live
 * from reassembly until the datagram is fragmented again for TX, within one burst. */
#define DP_FRAG_BIG_MBUFS 64u

/* TX entries a datagram may add while its handling is watched for fragmenting (a multi-get
 * split adds one per node): the buffer is flushed before when fewer are left. */
#define DP_FRAG_TX_ROOM 256u

/* Set up w's reassembly: a table of @p entries datagrams in flight (0: none, fragments are
 * dropped as ip_fragment), each given @p timeout_ms to complete, and its pool of big mbufs.
 * @return 0, -ENOMEM. */
int dp_frag_create(struct dp_worker *w, uint32_t entries, uint32_t timeout_ms, int socket);
void dp_frag_free(struct dp_worker *w);

/* Fragment @p m of an IPv4 (@p frag6 NULL; @p iph its header) or IPv6 datagram (@p frag6 its
 * fragment header, right after the IPv6 header), @p l2 / @p l3 bytes of L2 and L3 headers (IPv6:
 * with the fragment header). @return the datagram once complete, in one segment (IP header
 * checksum set, no RX checksum verdicts), or NULL: held, or dropped and counted. */
struct rte_mbuf *dp_frag_in(struct dp_worker *w, struct rte_mbuf *m, uint16_t l2, uint16_t l3,
			    void *iph, void *frag6);

/* Drop (ip_fragment_timeout) what waited past the timeout; each poll while anything is held. */
void dp_frag_expire(struct dp_worker *w);

/* Fragment every datagram of TX entries [@p from, w->ntx) larger than the MTU, in place and in
 * order: its last fragment keeps the entry's tag, endpoint and slot (it is counted when the
 * NIC takes it, after the others), the others are tagged DP_TX_FRAG_* (ip_fragments_sent).
 * The UDP checksum is made whole first (a checksum offload cannot span fragments). */
void dp_frag_tx(struct dp_worker *w, uint16_t from);

#endif /* RINGWAY_DP_FRAG_H */
