/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_DP_TX_H
#define RINGWAY_DP_TX_H

/*
 * The data plane's bottom layer, below the worker loop (dp_worker.c), the router's own answers
 * (dp_local.c) and the multi-gets (dp_mget.c), which all call it and none of which it calls:
 *   - TX buffering and accounting: dp_tx_push / dp_tx_flush (an outcome is counted when the
 *     NIC takes the packet), dp_count_drop (the one place a dropped packet is counted and
 *     freed);
 *   - request slots: dp_slot_take / dp_slot_free (and the reply parser a slot may hold), and
 *     the slots each client address holds (dp_client_take; dp_slot_free gives one back);
 *   - UDP headers: dp_udp_build (a whole new datagram), the checksum helpers (RFC 1624
 *     incremental updates) and dp_tx_cksum_offload (the NIC's share when it offloads).
 * What the per-packet path needs is inline here (dp_slot_take always: the single-key forward
 * path must not pay a call); the rest is in dp_tx.c. Worker lcore only, on its own dp_worker.
 */

#include <stdatomic.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "dataplane_priv.h"

/* ---- checksums -------------------------------------------------------------------------- */

/* Checksum helpers (RFC 1624): the ones-complement checksum @p csum (as stored on the wire)
 * after a 16/32-bit field changes from @p old to @p new (both as stored on the wire). */
static inline uint16_t dp_csum_fold(uint32_t sum)
{
	/* The upper half of sum + (sum rotated by 16) is hi + lo with the end-around carry: 0
	 * only for 0, as two rounds of (sum & 0xffff) + (sum >> 16) give, in three steps. */
	return (uint16_t)((sum + (sum >> 16 | sum << 16)) >> 16);
}

/* A 64-bit ones-complement sum folded to 32 bits (end-around carry): 0 only for 0. */
static inline uint32_t dp_csum_fold64(uint64_t sum)
{
	uint32_t hi = (uint32_t)(sum >> 32), s = (uint32_t)sum + hi;

	return s + (s < hi);
}

static inline uint16_t dp_csum_replace2(uint16_t csum, uint16_t old, uint16_t new)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t)~old;
	sum += new;
	return (uint16_t)~dp_csum_fold(sum);
}

static inline uint16_t dp_csum_replace4(uint16_t csum, uint32_t old, uint32_t new)
{
	uint32_t sum = (uint16_t)~csum;

	sum += (uint16_t) ~(old & 0xffff);
	sum += (uint16_t) ~(old >> 16);
	sum += new & 0xffff;
	sum += new >> 16;
	return (uint16_t)~dp_csum_fold(sum);
}

/* Add @p v to the 64-bit ones-complement sum @p sum (end-around carry). */
static inline uint64_t dp_csum_add64(uint64_t sum, uint64_t v)
{
	sum += v;
	return sum + (sum < v);
}

/* dp_csum_sum64() of fewer than 8 bytes: each piece at an even offset (an odd last byte is the
 * first of a zero-padded 16-bit word, RFC 1071). */
static inline uint64_t dp_csum_short(const uint8_t *b, uint32_t len, uint64_t sum)
{
	if (len & 4) {
		uint32_t x;

		memcpy(&x, b, 4);
		sum = dp_csum_add64(sum, x);
		b += 4;
	}
	if (len & 2) {
		uint16_t x;

		memcpy(&x, b, 2);
		sum = dp_csum_add64(sum, x);
		b += 2;
	}
	if (len & 1) {
		uint16_t x = 0;

		memcpy(&x, b, 1);
		sum = dp_csum_add64(sum, x);
	}
	return sum;
}

/* A ones-complement sum kept in 64 bits (end-around carry) folds to 0xffff, a checksum that
 * verifies, exactly when it is a non-zero multiple of 0xffff: 2^16 is 1 modulo 0xffff, and
 * folding never turns a non-zero sum into 0. One multiply (a divisibility test by a
 * constant) instead of the two folds. */
static inline bool dp_csum_verifies(uint64_t sum)
{
	return sum != 0 && sum % 0xffff == 0;
}

/*
 * The ones-complement sum of @p len bytes at @p p plus @p sum (a partial sum of native-order
 * words, e.g. a pseudo-header's), as rte_raw_cksum() sums: 64-bit words with end-around carry,
 * not folded (dp_csum_sum() folds it, dp_csum_verifies() judges it). For checking whole
 * datagrams per packet. Reads only bytes inside [p, p + len).
 */
static inline uint64_t dp_csum_sum64(const void *p, uint32_t len, uint64_t sum)
{
	const uint8_t *b = (const uint8_t *)p;
	uint64_t tail;

	if (unlikely(len < 8))
		return dp_csum_short(b, len, sum);
	/* The last 1..8 bytes as one load of the 8 bytes that end the buffer, shifted down so
	 * that only they remain, at the even offset where they start (a multiple of 8 from p):
	 * no branch per tail size, no byte read twice into the sum. What is left before them is
	 * whole 64-bit words. */
	memcpy(&tail, b + len - 8, 8);
	tail >>= (-len * 8) & 63;
	len = (len - 1) & ~7u;
#if defined(__x86_64__) && defined(__GNUC__)
	/* Add-with-carry chains (the carry flag is the end-around carry): 64 bytes a step down
	 * to at most 31 words, then those by a jump into a chain of 31 at the word count, the
	 * tail's add first: no branch per size (a request or reply is checked whole on every
	 * packet, nearly all under 256 bytes). The chain addresses its words from the end - 128
	 * (8-bit displacements, each adcq 4 bytes, as the .error checks). The memory operands
	 * tell the compiler which bytes are read (an array of unknown size: up to len). */
	struct dp_csum_64 {
		uint8_t b[64];
	};
	const uint8_t *end;
	uint64_t jmp;

	for (; unlikely(len > 248); b += 64, len -= 64)
		__asm__("addq (%[p]), %[s]\n\t"
			"adcq 8(%[p]), %[s]\n\t"
			"adcq 16(%[p]), %[s]\n\t"
			"adcq 24(%[p]), %[s]\n\t"
			"adcq 32(%[p]), %[s]\n\t"
			"adcq 40(%[p]), %[s]\n\t"
			"adcq 48(%[p]), %[s]\n\t"
			"adcq 56(%[p]), %[s]\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(sum)
			: [p] "r"(b), "m"(*(const struct dp_csum_64 *)(const void *)b)
			: "cc");
	end = b + len;
	__asm__("leaq 1f(%%rip), %[j]\n\t"
		"subq %[q], %[j]\n\t"
		"addq $-128, %[e]\n\t"
		"addq %[t], %[s]\n\t"
		"jmp *%[j]\n"
		"0:\n\t"
		"adcq -120(%[e]), %[s]\n\t"
		"adcq -112(%[e]), %[s]\n\t"
		"adcq -104(%[e]), %[s]\n\t"
		"adcq -96(%[e]), %[s]\n\t"
		"adcq -88(%[e]), %[s]\n\t"
		"adcq -80(%[e]), %[s]\n\t"
		"adcq -72(%[e]), %[s]\n\t"
		"adcq -64(%[e]), %[s]\n\t"
		"adcq -56(%[e]), %[s]\n\t"
		"adcq -48(%[e]), %[s]\n\t"
		"adcq -40(%[e]), %[s]\n\t"
		"adcq -32(%[e]), %[s]\n\t"
		"adcq -24(%[e]), %[s]\n\t"
		"adcq -16(%[e]), %[s]\n\t"
		"adcq -8(%[e]), %[s]\n\t"
		"%{disp8%} adcq 0(%[e]), %[s]\n\t"
		"adcq 8(%[e]), %[s]\n\t"
		"adcq 16(%[e]), %[s]\n\t"
		"adcq 24(%[e]), %[s]\n\t"
		"adcq 32(%[e]), %[s]\n\t"
		"adcq 40(%[e]), %[s]\n\t"
		"adcq 48(%[e]), %[s]\n\t"
		"adcq 56(%[e]), %[s]\n\t"
		"adcq 64(%[e]), %[s]\n\t"
		"adcq 72(%[e]), %[s]\n\t"
		"adcq 80(%[e]), %[s]\n\t"
		"adcq 88(%[e]), %[s]\n\t"
		"adcq 96(%[e]), %[s]\n\t"
		"adcq 104(%[e]), %[s]\n\t"
		"adcq 112(%[e]), %[s]\n\t"
		"adcq 120(%[e]), %[s]\n\t"
		"1:\n\t"
		".if 1b - 0b - 124\n\t"
		".error \"dp_csum_sum: an adcq is not 4 bytes\"\n\t"
		".endif\n\t"
		"adcq $0, %[s]"
		: [s] "+r"(sum), [j] "=&r"(jmp), [e] "+S"(end)
		: [q] "r"((uint64_t)len / 2), [t] "r"(tail), "m"(*(const uint8_t(*)[])b)
		: "cc");
	return sum;
#else
	uint64_t v0, v1;

	for (; len >= 16; b += 16, len -= 16) {
		memcpy(&v0, b, 8);
		memcpy(&v1, b + 8, 8);
		sum = dp_csum_add64(dp_csum_add64(sum, v0), v1);
	}
	if (len != 0) {
		memcpy(&v0, b, 8);
		sum = dp_csum_add64(sum, v0);
	}
#endif
	return dp_csum_add64(sum, tail);
}

/* dp_csum_sum64() folded to 16 bits. */
static inline uint16_t dp_csum_sum(const void *p, uint32_t len, uint64_t sum)
{
	return dp_csum_fold(dp_csum_fold64(dp_csum_sum64(p, len, sum)));
}

/* Partial sums for several field changes at once: accumulate dp_csum_delta*() of each change
 * (at most a few dozen: 32 bits do not overflow), then apply once with dp_csum_apply(). */
static inline uint32_t dp_csum_delta2(uint16_t old, uint16_t new)
{
	return (uint32_t)(uint16_t)~old + new;
}

static inline uint32_t dp_csum_delta4(uint32_t old, uint32_t new)
{
	return (uint32_t)(uint16_t) ~(old & 0xffff) + (uint16_t) ~(old >> 16) + (new & 0xffff) +
	       (new >> 16);
}

static inline uint16_t dp_csum_apply(uint16_t csum, uint32_t delta)
{
	return (uint16_t)~dp_csum_fold((uint32_t)(uint16_t)~csum + (delta & 0xffff) +
				       (delta >> 16));
}

/* dp_csum_apply() for a delta summed as whole 32-bit words in 64 bits (at most a few dozen
 * words: no overflow); folds to the same checksum as the 16-bit deltas would. */
static inline uint16_t dp_csum_apply64(uint16_t csum, uint64_t delta)
{
	return (uint16_t)~dp_csum_fold(dp_csum_fold64(delta + (uint16_t)~csum));
}

/* The 64-bit ones-complement sum of an IPv4 pseudo-header (RFC 768): addresses @p src / @p dst
 * and upper-layer length @p len_be as stored (network order), protocol @p proto, as native
 * words of the bytes in network order (add it to dp_csum_sum's start). */
static inline uint64_t dp_ip4_phdr_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len_be)
{
	/* The zero byte and the protocol as one word, whatever the host's byte order. */
	return (uint64_t)src + dst + rte_cpu_to_be_16((uint16_t)proto) + len_be;
}

/*
 * The pseudo-header sum of IPv4 datagram @p ip, whose header is @p l3_len bytes, as DPDK's
 * checksum offload wants it in the L4 checksum field: what rte_ipv4_phdr_cksum() gives without
 * TSO (addresses, protocol, total length less the header), summed in 64 bits and folded once.
 * rte_ipv4_phdr_cksum() copies the fields into a struct and sums its bytes in a loop: ~30
 * instructions of every offloaded packet.
 */
static inline uint16_t dp_ip4_phdr_cksum(const struct rte_ipv4_hdr *ip, uint16_t l3_len)
{
	uint16_t len = rte_cpu_to_be_16((uint16_t)(rte_be_to_cpu_16(ip->total_length) - l3_len));

	return dp_csum_fold(dp_csum_fold64(
		dp_ip4_phdr_sum(ip->src_addr, ip->dst_addr, ip->next_proto_id, len)));
}

/*
 * Leave the IPv4 header and UDP checksums of @p m to the NIC (w->tx_offload): the offsets it
 * needs (@p l2_len, @p l3_len), the flags, the IPv4 checksum field 0 and the UDP checksum field
 * seeded with the pseudo-header sum, as DPDK's checksum offload asks. Call it once the
 * addresses and lengths are final.
 */
static inline void dp_tx_cksum_offload(struct rte_mbuf *m, struct rte_ipv4_hdr *ip,
				       struct rte_udp_hdr *udp, uint16_t l2_len, uint16_t l3_len)
{
	ip->hdr_checksum = 0;
	m->l2_len = l2_len;
	m->l3_len = l3_len;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_UDP_CKSUM;
	udp->dgram_cksum = dp_ip4_phdr_cksum(ip, l3_len);
}

/* The 64-bit ones-complement sum of an IPv6 pseudo-header (RFC 8200 8.1): addresses
 * @p src / @p dst (16 bytes each), upper-layer length @p len and next header @p proto, as native
 * words of the bytes in network order (add it to dp_csum_sum's start). */
static inline uint64_t dp_ip6_phdr_sum(const uint8_t *src, const uint8_t *dst, uint32_t len,
				       uint8_t proto)
{
	/* Two 32-bit words: no carry out of 64 bits. */
	uint64_t sum = (uint64_t)rte_cpu_to_be_32(len) + rte_cpu_to_be_32((uint32_t)proto), v;

#if defined(__x86_64__) && defined(__GNUC__)
	/* The four address words as one add-with-carry chain, as dp_csum_sum() does (every
	 * IPv6 request and reply is checked under this pseudo-header). */
	struct dp_csum_16 {
		uint8_t b[16];
	};

	(void)v;
	__asm__("addq (%[s]), %[sum]\n\t"
		"adcq 8(%[s]), %[sum]\n\t"
		"adcq (%[d]), %[sum]\n\t"
		"adcq 8(%[d]), %[sum]\n\t"
		"adcq $0, %[sum]"
		: [sum] "+r"(sum)
		: [s] "r"(src), [d] "r"(dst), "m"(*(const struct dp_csum_16 *)(const void *)src),
		  "m"(*(const struct dp_csum_16 *)(const void *)dst)
		: "cc");
	return sum;
#endif
	for (int i = 0; i < 16; i += 8) {
		memcpy(&v, src + i, 8);
		sum = dp_csum_add64(sum, v);
		memcpy(&v, dst + i, 8);
		sum = dp_csum_add64(sum, v);
	}
	return sum;
}

/* The IPv6 upper-layer checksum field value for @p len bytes at @p l4 (its checksum field 0)
 * under the pseudo-header of @p src, @p dst and @p proto; UDP's 0 is sent as 0xffff. */
static inline uint16_t dp_ip6_l4_cksum(const uint8_t *src, const uint8_t *dst, const void *l4,
				       uint32_t len, uint8_t proto)
{
	uint16_t c = (uint16_t)~dp_csum_sum(l4, len, dp_ip6_phdr_sum(src, dst, len, proto));

	return c == 0 && proto == IPPROTO_UDP ? 0xffff : c;
}

/* The pseudo-header sum of IPv6 datagram @p ip6 as DPDK's checksum offload wants it in the L4
 * checksum field: rte_ipv6_phdr_cksum() without TSO (addresses, payload length, next header),
 * as dp_ip4_phdr_cksum() is for IPv4. */
static inline uint16_t dp_ip6_phdr_cksum(const struct rte_ipv6_hdr *ip6)
{
	return dp_csum_fold(dp_csum_fold64(dp_ip6_phdr_sum(
		ip6->src_addr, ip6->dst_addr, rte_be_to_cpu_16(ip6->payload_len), ip6->proto)));
}

/* Leave the UDP checksum of IPv6 datagram @p m to the NIC (w->tx_offload), as
 * dp_tx_cksum_offload() does for IPv4. */
static inline void dp_tx_cksum_offload6(struct rte_mbuf *m, struct rte_ipv6_hdr *ip6,
					struct rte_udp_hdr *udp, uint16_t l2_len)
{
	m->l2_len = l2_len;
	m->l3_len = sizeof(*ip6);
	m->ol_flags |= RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_UDP_CKSUM;
	udp->dgram_cksum = dp_ip6_phdr_cksum(ip6);
}

/*
 * Replace the L3 header of parsed UDP datagram @p pk in @p m (IPv4 with options, or IPv6 with
 * extension headers) by a plain one of the family @p v6 (IPv4: 20 bytes, no options; IPv6: 40
 * bytes, no extension headers), keeping the Ethernet (+VLAN) header in front and the UDP
 * datagram behind; the EtherType, pk->ip / ip6 / v6 / l3_len follow. Addresses, length,
 * TTL / hop limit and the checksums are the caller's (dp_l3_finish). false when the mbuf has
 * no headroom (nothing changed). For the mixed-family and extension-header paths only.
 */
bool dp_l3_rebuild(struct rte_mbuf *m, struct dp_pkt *pk, bool v6);

/*
 * Set the addresses of the plain L3 header of @p pk (as dp_l3_rebuild leaves it, or as
 * received without options): IPv4 @p sip4 / @p dip4, or IPv6 @p sip6 / @p dip6 (pk->v6), the
 * total / payload length, TTL / hop limit 64, then both checksums from scratch (or the NIC's
 * share). The UDP header (ports, length) and payload are final.
 */
void dp_l3_finish(struct dp_worker *w, struct rte_mbuf *m, struct dp_pkt *pk, uint32_t sip4,
		  uint32_t dip4, const uint8_t *sip6, const uint8_t *dip6);

/*
 * Write Ethernet (+VLAN), IPv4 (no options) and UDP headers in front of the frame header and
 * body already in @p m at offset l2 + 28 (data_len covers them), from the router to @p dst_mac
 * / @p dip, with valid checksums (or left to the NIC). Ports as stored on the wire.
 */
void dp_udp_build(struct dp_worker *w, struct rte_mbuf *m, bool to_node, const uint8_t dst_mac[6],
		  bool vlan, uint16_t vlan_tci, uint32_t dip, uint16_t sport, uint16_t dport);

/* dp_udp_build() towards IPv6 address @p dip6 (from the router's address6 on that side): the
 * payload stays where the IPv4 layout put it (l2 + 28), the 20 bytes more come from the
 * headroom. false when there is none (nothing changed). */
bool dp_udp_build6(struct dp_worker *w, struct rte_mbuf *m, bool to_node, const uint8_t dst_mac[6],
		   bool vlan, uint16_t vlan_tci, const uint8_t *dip6, uint16_t sport,
		   uint16_t dport);

/* dp_udp_build() towards node endpoint @p ep, in its family: an IPv6 node gets Ethernet, IPv6
 * and UDP headers (the mbuf gives 20 bytes of headroom; the payload stays where the IPv4
 * layout put it). false when there is no headroom (nothing sent, the caller frees @p m). */
bool dp_udp_build_ep(struct dp_worker *w, struct rte_mbuf *m, const uint8_t dst_mac[6], bool vlan,
		     uint16_t vlan_tci, uint32_t ep, uint16_t sport, uint16_t dport);

/* A datagram the router sends on its own to endpoint @p ep: frame header (@p reqid, 0, 1)
 * then @p body (@p len bytes), from source port @p sport (wire order), tagged like a client's
 * packet (@p vlan, @p tci) unless the node port's VLAN is fixed. NULL when the pool is empty,
 * the MAC is unknown or it would pass one datagram (nothing to free). */
struct rte_mbuf *dp_tx_datagram(struct dp_worker *w, uint32_t ep, bool vlan, uint16_t tci,
				uint16_t sport, uint16_t reqid, const uint8_t *body, uint32_t len);

/* ---- TX buffer and accounting ----------------------------------------------------------- */

/* Send the buffered packets and count each one's outcome (by its tag); what the queue refuses
 * is dropped (tx_full), the only place a buffered packet is freed. */
void dp_tx_flush(struct dp_worker *w);

/* Offer merged multi-get datagrams @p pkts[0..n) (built, DP_TX_MGET_OUT) to the TX queue once,
 * after the buffered packets; @return how many it took (counted), the first ones: the
 * caller keeps the rest. */
uint16_t dp_tx_offer(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n);

/* Free TX entry @p m (tag @p tag, endpoint @p ep, slot @p slot) that cannot be sent: counted as
 * flush refusals are (a forwarded request: tx_full, its slot freed at once). */
void dp_tx_refuse(struct dp_worker *w, struct rte_mbuf *m, uint8_t tag, uint32_t ep,
		  uint32_t slot);

/* Count a drop for @p why and free @p m. */
void dp_count_drop(struct dp_worker *w, struct rte_mbuf *m, enum dp_drop why);

/* Buffer @p m for the next dp_tx_flush() (flushing first when the buffer is full); the
 * worker owns it no more. @p ep: the endpoint counted per node for FORWARDED, RETURNED and
 * MGET_SUB. */
static inline void dp_tx_push(struct dp_worker *w, struct rte_mbuf *m, enum dp_tx_tag tag,
			      uint32_t ep)
{
	if (unlikely(w->ntx == DP_TX_CAP))
		dp_tx_flush(w);
	w->tx[w->ntx] = m;
	w->tx_tag[w->ntx] = (uint8_t)tag;
	w->tx_ep[w->ntx] = ep;
	w->ntx++;
}

/* Buffer request @p m forwarded to endpoint @p ep for slot @p s (DP_NO_SLOT: it keeps none),
 * tagged FORWARDED (or WARM_GET, dp_warm.c): the one way to push those, so that a request the TX
 * queue refuses frees its slot at once instead of pinning it until the timeout. */
static inline void dp_tx_push_fwd_tag(struct dp_worker *w, struct rte_mbuf *m, uint32_t ep,
				      uint32_t s, enum dp_tx_tag tag)
{
	if (unlikely(w->ntx == DP_TX_CAP))
		dp_tx_flush(w);
	w->tx[w->ntx] = m;
	w->tx_tag[w->ntx] = (uint8_t)tag;
	w->tx_ep[w->ntx] = ep;
	w->tx_slot[w->ntx] = s;
	w->ntx++;
}

static inline void dp_tx_push_fwd(struct dp_worker *w, struct rte_mbuf *m, uint32_t ep, uint32_t s)
{
	dp_tx_push_fwd_tag(w, m, ep, s, DP_TX_FORWARDED);
}

/* ---- slots per client address ----------------------------------------------------------- */

/* Index of @p ip's entry in w->clients, or of the empty entry where it would go. */
static inline uint32_t dp_client_find(const struct dp_worker *w, uint32_t ip)
{
	uint32_t i = (uint32_t)(((uint64_t)ip * w->client_seed) >> 32) & w->client_mask;

	while (w->clients[i].n != 0 && w->clients[i].ip != ip)
		i = (i + 1) & w->client_mask;
	return i;
}

/* Count @p n more slots held by client @p ip (network order): false, nothing counted, when
 * that would pass client_max. Every slot freed by dp_slot_free() must have been counted. */
static inline bool dp_client_take(struct dp_worker *w, uint32_t ip, uint32_t n)
{
	struct dp_client *c;

	if (w->client_max == 0)
		return true;
	c = &w->clients[dp_client_find(w, ip)];
	if (unlikely(c->n + n > w->client_max))
		return false;
	c->ip = ip;
	c->n += n;
	return true;
}

/* Remove entry @p i (its count reached 0): dp_tx.c. */
void dp_client_remove(struct dp_worker *w, uint32_t i);

/* One slot of client @p ip is given back. */
static inline void dp_client_give(struct dp_worker *w, uint32_t ip)
{
	uint32_t i;

	if (w->client_max == 0)
		return;
	i = dp_client_find(w, ip);
	if (unlikely(w->clients[i].n == 0))
		return; /* not counted: cannot happen, but never underflow */
	if (--w->clients[i].n == 0)
		dp_client_remove(w, i);
}

/* ---- request slots ---------------------------------------------------------------------- */

/* Slot @p s's request goes to endpoint @p ep now (a hot key's owner, a warm-up's previous
 * owner): its address, port and family. */
static inline void dp_slot_set_node(struct dp_worker *w, uint32_t s, uint32_t ep)
{
	struct dp_slot *sl = &w->slots[s];

	sl->ep = ep;
	sl->node_ip = atomic_load_explicit(&w->eps[ep].ip, memory_order_relaxed);
	sl->node_port = rte_cpu_to_be_16(w->eps[ep].port);
	sl->fam = (uint8_t)(sl->fam & ~DP_FAM_NODE6);
	if (w->eps[ep].v6) {
		sl->fam |= DP_FAM_NODE6;
		memcpy(w->slot6[s].node, w->eps[ep].ip6, 16);
	}
}

/* Give back the reply parser slot @p sl holds, if any. */
static inline void dp_parser_release(struct dp_worker *w, struct dp_slot *sl)
{
	if (sl->parser != DP_NO_PARSER) {
		w->parser_free[w->n_parser_free++] = sl->parser;
		sl->parser = DP_NO_PARSER;
	}
}

/* Put live slot @p s (and its parser) back without giving back its client's count: the tail of
 * the FIFO, reused as late as possible. For a slot taken only to name a request that keeps
 * none (noreply / quiet writes); every other slot is freed with dp_slot_free(). */
static inline void dp_slot_put(struct dp_worker *w, uint32_t s)
{
	dp_parser_release(w, &w->slots[s]);
	w->slots[s].tsc = 0;
	w->free_fifo[w->free_tail++ & w->slot_mask] = s;
}

/* Free live slot @p s, counted against its client by dp_client_take(). */
static inline void dp_slot_free(struct dp_worker *w, uint32_t s)
{
	dp_client_give(w, w->slots[s].client_ip);
	dp_slot_put(w, s);
}

/* The request id after @p reqid on the same slot: the next generation. A 16-bit add steps
 * the generation above the slot's low bits and wraps it. */
static inline uint16_t dp_reqid_next(const struct dp_worker *w, uint16_t reqid)
{
	return (uint16_t)(reqid + w->gen_step);
}

/* The request id of slot @p sl's next use, recorded in it: the next generation, from a
 * random start per slot (set-up), so that who has not seen a slot's traffic cannot guess its
 * next request id. */
static inline uint16_t dp_slot_next_reqid(const struct dp_worker *w, struct dp_slot *sl)
{
	sl->reqid = dp_reqid_next(w, sl->reqid);
	return sl->reqid;
}

/*
 * Take a free slot (the caller checked there is one) for a request to endpoint @p ep from the
 * client of @p pk, whose payload starts with the frame header the parse accepted; @return its
 * index, and in *port_be / *reqid what names it on the wire (port in network order, request
 * id in host order). The caller sets multi and parser. Always inlined: the single-key forward
 * path is its main caller. dp_slot_take_as(): the same with the client's word (its IPv4
 * address, or dp_fold6() of its IPv6 one) known already, so that an IPv6 client's address is
 * folded once.
 */
static __rte_always_inline uint32_t dp_slot_take_as(struct dp_worker *w, const struct dp_pkt *pk,
						    uint32_t ep, uint32_t client_word,
						    uint16_t *port_be, uint16_t *reqid)
{
	uint32_t s = w->free_fifo[w->free_head++ & w->slot_mask];
	struct dp_slot *sl = &w->slots[s];
	uint16_t client_reqid;

	/* The FIFO names the next request's slot already: bring it in while this one works. */
	rte_prefetch0(&w->slots[w->free_fifo[w->free_head & w->slot_mask]]);
	*port_be = sl->port_be;
	*reqid = dp_slot_next_reqid(w, sl);
	sl->tsc = w->now | 1; /* never 0 while live */
	sl->fam = 0;
	if (unlikely(pk->v6)) {
		sl->fam = DP_FAM_CLIENT6;
		memcpy(w->slot6[s].client, &pk->ip6->src_addr, 16);
	}
	sl->client_ip = client_word;
	sl->client_port = pk->udp->src_port;
	memcpy(&client_reqid, pk->payload, 2); /* the frame header's request id */
	sl->client_reqid = rte_be_to_cpu_16(client_reqid);
	sl->listen_port = pk->udp->dst_port;
	sl->node_ip = atomic_load_explicit(&w->eps[ep].ip, memory_order_relaxed);
	sl->node_port = rte_cpu_to_be_16(w->eps[ep].port);
	if (unlikely(w->eps[ep].v6)) {
		sl->fam |= DP_FAM_NODE6;
		memcpy(w->slot6[s].node, w->eps[ep].ip6, 16);
	}
	sl->total = 0;
	sl->seq_base = 0;
	sl->seq_seen = 0;
	sl->quiet = 0;
	sl->ep = ep;
	memcpy(sl->client_mac, &pk->eth->src_addr, 6);
	sl->has_vlan = pk->vlan;
	if (pk->vlan)
		sl->vlan_tci = ((struct rte_vlan_hdr *)(pk->eth + 1))->vlan_tci;
	return s;
}

static __rte_always_inline uint32_t dp_slot_take(struct dp_worker *w, const struct dp_pkt *pk,
						 uint32_t ep, uint16_t *port_be, uint16_t *reqid)
{
	return dp_slot_take_as(w, pk, ep,
			       likely(!pk->v6) ? pk->ip->src_addr
					       : dp_fold6((const uint8_t *)&pk->ip6->src_addr),
			       port_be, reqid);
}

#endif /* RINGWAY_DP_TX_H */
