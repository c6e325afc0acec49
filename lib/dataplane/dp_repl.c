/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replicated pools ([placement] replicas = R > 1; docs/pools.md "Replicated pools"), on the
 * worker lcore. Called by dp_worker.c and dp_mget.c; calls dp_tx.c (packets, the dirty-key
 * record) and the placement library.
 *
 * A key's replica set is the first R distinct members of its replica walk (pl_replicas: the
 * order [failover] next walks), [0] its owner. The rules:
 *  - Writes (set add replace append prepend cas delete touch incr decr; ms md ma; their
 *    binary opcodes, quiet or not) go to the owner as before, which answers the client: the
 *    client gets exactly one answer, the owner's. Every other replica gets, before the
 *    owner's packet leaves, either the client's datagram itself (frame request id aside, byte
 *    for byte: dp_repl_write) when its effect does not depend on what the node holds (set,
 *    delete, touch; ms in set mode and md without C or I; binary SET / DELETE with CAS 0,
 *    TOUCH), or `delete KEY noreply` for each key written (add, replace, append, prepend,
 *    cas, incr, decr, ma, ms/md with C or I, binary with a CAS): those are applied at the
 *    owner alone and the other replicas miss the key until its next plain write. cas uniques
 *    differ per node (each memcached counts its own), so a cas is only ever checked at the
 *    node that answers; incr/decr results are never computed twice.
 *  - Copies leave from probe_port: the replicas' answers land on the probe path and are
 *    consumed there (repl_answers, in the probe_replies term of the accounting identity),
 *    never reaching a client and holding no slot.
 *  - Down owner: the key's request goes to the first live replica of the set (dp_repl_target;
 *    before [failover], whatever its mode), which holds it: no delete first, no capped
 *    expiry, and its answer is the client's. Past the R replicas, [failover] as before.
 *  - A replica that misses a write (down, MAC unknown, no mbuf, the datagram too big to copy,
 *    the TX queue refused the copy: dp_tx.c) has the write's keys recorded for it in the
 *    dirty-key record the owner's outages use (dp_fo_dirty): dp_health.c deletes them there
 *    at once while it serves, and before it serves again when it is down. So a replica read
 *    through a down owner holds every acknowledged write of the key since it last came back,
 *    or misses. The record ends where issue 27's does: drained into the node's set, deleted,
 *    forgotten when the node serves again (or lost past dirty_keys_max: the node is held).
 *  - The owner's outage: its own keys written meanwhile are recorded for it by the failover
 *    path (dp_worker.c) and deleted before it serves: they miss once at the owner after it
 *    returns (the replica's copy is not copied back); every other key hits.
 * Not covered (docs/pools.md says so): a copy lost after the NIC took it (no acknowledgement
 * is awaited: on the wire, or in the socket buffer of a replica that hangs before it is
 * marked down and overflows it), and a membership change, which gives keys new replica sets
 * whose new members may hold a copy from an earlier membership (as the stand-ins' copies
 * are the membership flips' concern, dp_failover.c).
 */

#include <stdatomic.h>
#include <string.h>

#include "dp_tx.h"

static inline bool usable(const struct dp_worker *w, uint32_t ep)
{
	return dp_ep_serving(w, ep) &&
	       (atomic_load_explicit(&w->eps[ep].mac, memory_order_relaxed) & DP_MAC_VALID);
}

/* The replica set of the key hashed @p hash (the placement's hash) as endpoints, [0] the
 * owner. @return its size (fewer than R when the placement has fewer weighted members). */
static int repl_set(const struct dp_worker *w, uint64_t hash, uint32_t *ep)
{
	uint32_t idx[PL_REPLICAS_MAX];
	int n = pl_replicas(w->cur->pl, hash, idx, w->replicas);

	for (int i = 0; i < n; i++)
		ep[i] = w->cur->ep[idx[i]];
	return n;
}

bool dp_repl_holds(const struct dp_worker *w, uint64_t hash, uint32_t ep)
{
	uint32_t set[PL_REPLICAS_MAX];
	int n = w->replicas > 1 ? repl_set(w, hash, set) : 0;

	for (int i = 1; i < n; i++)
		if (set[i] == ep)
			return true;
	return false;
}

int32_t dp_repl_target(const struct dp_worker *w, uint64_t hash)
{
	uint32_t set[PL_REPLICAS_MAX];
	int n = w->replicas > 1 ? repl_set(w, hash, set) : 0;

	for (int i = 1; i < n; i++)
		if (usable(w, set[i]))
			return (int32_t)set[i];
	return -1;
}

/* Meta flags @p a (@p n bytes) of ms / md: none that makes the write depend on what the node
 * holds (C: compare CAS; I: invalidate; M: a mode other than set). */
static bool meta_plain(const uint8_t *a, uint32_t n)
{
	uint32_t i = 0;

	while (i < n) {
		uint8_t f;

		while (i < n && a[i] == ' ')
			i++;
		if (i >= n || a[i] == '\r')
			break;
		f = a[i];
		if (f == 'C' || f == 'I')
			return false;
		if (f == 'M' && !(i + 1 < n && (a[i + 1] == 'S' || a[i + 1] == 's')))
			return false;
		while (i < n && a[i] != ' ' && a[i] != '\r')
			i++;
	}
	return true;
}

/* A binary request's CAS (header bytes 16..23) is 0: not compare-and-swap. */
static bool bin_no_cas(const uint8_t *p, const struct mc_request *rq)
{
	static const uint8_t zero[8];

	return rq->line_len >= 24 && memcmp(p + rq->off + 16, zero, 8) == 0;
}

/* Write @p rq (of payload @p p) leaves every node that takes it in the same state whatever
 * the node held before: it may be copied byte for byte. */
static bool copyable(const uint8_t *p, const struct mc_request *rq)
{
	switch (rq->cmd) {
	case MC_CMD_SET:
	case MC_CMD_DELETE:
		return rq->proto != MC_PROTO_BINARY || bin_no_cas(p, rq);
	case MC_CMD_TOUCH:
		return true;
	case MC_CMD_MS:
	case MC_CMD_MD:
		return meta_plain(p + rq->args_off, rq->args_len);
	default:
		return false;
	}
}

/* Replica @p ep missed the writes of @p r: their keys recorded for it (dp_health.c deletes
 * them there before it is read). */
static void missed(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		   uint32_t ep)
{
	uint8_t key[MC_KEY_MAX];

	for (uint16_t k = 0; k < r->nkeys; k++)
		if (r->req[r->keys[k].req].kind != MC_KIND_READ) {
			w->ctr[DP_CTR_REPL_MISSED]++;
			dp_fo_dirty(w, ep, UINT32_MAX, key,
				    mc_key_decode(pk->payload, &r->keys[k], key));
		}
}

static inline uint16_t pkt_tci(const struct dp_pkt *pk)
{
	return pk->vlan ? ((const struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci : 0;
}

/* The client's datagram @p pk to replica @p ep (usable), or its keys recorded. */
static void send_copy(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		      uint32_t ep)
{
	struct rte_mbuf *o = dp_tx_datagram(w, ep, pk->vlan, pkt_tci(pk),
					    rte_cpu_to_be_16(w->probe_port), 0,
					    pk->payload + MC_FRAME_HDR_LEN,
					    pk->plen - MC_FRAME_HDR_LEN);

	if (o == NULL)
		return missed(w, pk, r, ep);
	dp_tx_push(w, o, DP_TX_REPL_COPY, ep);
}

/* `delete KEY noreply` (meta md for keys text cannot carry) to replica @p ep, or the key
 * recorded for it. */
static void send_delete(struct dp_worker *w, const struct dp_pkt *pk, uint32_t ep,
			const uint8_t *key, size_t len)
{
	char line[MC_DELETE_LINE_MAX];
	size_t l = usable(w, ep) ? mc_delete_line(key, len, line, sizeof(line)) : 0;
	struct rte_mbuf *o = NULL;

	if (l != 0)
		o = dp_tx_datagram(w, ep, pk->vlan, pkt_tci(pk), rte_cpu_to_be_16(w->probe_port),
				   0, (const uint8_t *)line, (uint32_t)l);
	if (o == NULL) {
		w->ctr[DP_CTR_REPL_MISSED]++;
		return dp_fo_dirty(w, ep, UINT32_MAX, key, len);
	}
	dp_tx_push(w, o, DP_TX_REPL_DELETE, ep);
}

void dp_repl_write(struct dp_worker *w, const struct dp_pkt *pk, const struct mc_requests *r,
		   uint32_t sent, uint32_t skip)
{
	const struct pl_placement *pl = w->cur->pl;
	uint32_t set[PL_REPLICAS_MAX], other[PL_REPLICAS_MAX];
	uint8_t key[MC_KEY_MAX];
	bool copy = true;
	int n = -1;

	/* Copied whole when every write may be and every written key has one replica set. */
	for (uint16_t k = 0; k < r->nkeys; k++) {
		const struct mc_request *rq = &r->req[r->keys[k].req];
		size_t len;
		uint64_t h;
		int m;

		if (rq->kind == MC_KIND_READ)
			continue;
		copy = copy && copyable(pk->payload, rq);
		len = mc_key_decode(pk->payload, &r->keys[k], key);
		h = pl_key_hash(pl, key, len);
		if (n < 0) {
			n = repl_set(w, h, set);
		} else if (copy) {
			m = repl_set(w, h, other);
			copy = m == n && memcmp(set, other, (size_t)n * sizeof(set[0])) == 0;
		}
	}
	if (n < 0)
		return; /* reads only */
	if (copy) {
		for (int i = 0; i < n; i++) {
			if (set[i] == sent || set[i] == skip)
				continue;
			if (usable(w, set[i]))
				send_copy(w, pk, r, set[i]);
			else
				missed(w, pk, r, set[i]);
		}
		return;
	}
	for (uint16_t k = 0; k < r->nkeys; k++) {
		size_t len;

		if (r->req[r->keys[k].req].kind == MC_KIND_READ)
			continue;
		len = mc_key_decode(pk->payload, &r->keys[k], key);
		n = repl_set(w, pl_key_hash(pl, key, len), set);
		for (int i = 0; i < n; i++)
			if (set[i] != sent && set[i] != skip)
				send_delete(w, pk, set[i], key, len);
	}
}
