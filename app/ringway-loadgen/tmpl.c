/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request frames from prebuilt templates. At start-up (and again when ARP changes the peer's
 * MAC) each request kind (GET, SET) is built once as a whole frame with key 0 (every digit
 * '0'), request id 0, opaque 0, source port 0 and IP id 0, and the ones' complement sums of
 * its IPv4 header and of its UDP pseudo-header + datagram are kept. Keys have a fixed length,
 * so a kind's frame length never changes. Per request only the request id, the binary opaque,
 * the key digits, the source port and the IP id are written, and both checksums are updated
 * by adding what changed (RFC 1624, eqn. 3: every changed field was 0 in the template, so
 * ~m + m' is just m'; a digit goes from '0' to '0' + d, adding d at its byte's place).
 *
 * lg_frame_build_ref() is the builder this replaced (every byte written, both checksums
 * computed over the whole frame): the unit test holds the two byte for byte equal, and the
 * per-packet instruction counts of both are in docs/loadgen.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "loadgen.h"

#define IP_OFF	RTE_ETHER_HDR_LEN
#define UDP_OFF (IP_OFF + sizeof(struct rte_ipv4_hdr))

void lg_frame_hdr_init(uint8_t *hdr, const struct rte_ether_addr *src_mac,
		       const struct rte_ether_addr *dst_mac, const struct lg_opts *o)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memset(hdr, 0, LG_HDR_LEN);
	rte_ether_addr_copy(dst_mac, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = o->src_ip;
	ip->dst_addr = o->dst_ip;
	udp->dst_port = rte_cpu_to_be_16(o->dst_port);
}

uint32_t lg_frame_build_ref(const struct lg_req *q, const uint8_t *hdr, enum lg_op op,
			    uint32_t key, uint32_t n, uint16_t sport, uint16_t ip_id, uint8_t *p)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + IP_OFF);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct mc_frame f = {.request_id = (uint16_t)n, .seq = 0, .total = 1, .reserved = 0};
	uint32_t len;

	memcpy(p, hdr, LG_HDR_LEN);
	mc_frame_write(p + LG_HDR_LEN, &f);
	len = MC_FRAME_HDR_LEN + lg_req_write(q, op, key, (uint16_t)n, p + LG_HDR_LEN + MC_FRAME_HDR_LEN);
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*udp) + len));
	ip->packet_id = rte_cpu_to_be_16(ip_id);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + len));
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	return LG_HDR_LEN + len;
}

/* The 16-bit ones' complement sum of @p s (any size up to 2^16 words), folded. */
static inline uint16_t fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

uint16_t lg_cksum_fold(uint32_t s)
{
	return fold(s);
}

/* Where a byte at frame offset @p off lands in the native 16-bit words the sums add (the IP
 * and UDP headers start at even offsets, so the parity of the frame offset decides). */
static inline unsigned int byte_shift(uint32_t off)
{
#if RTE_BYTE_ORDER == RTE_LITTLE_ENDIAN
	return (off & 1) ? 8 : 0;
#else
	return (off & 1) ? 0 : 8;
#endif
}

int lg_tmpl_init(struct lg_tmpl *t, const struct lg_req *q, enum lg_op op, const uint8_t *hdr)
{
	const struct lg_keys *k = q->keys;
	uint32_t max = LG_HDR_LEN + MC_FRAME_HDR_LEN + lg_req_max_len(q, op);
	uint8_t *p = malloc(max);
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t len;

	memset(t, 0, sizeof(*t));
	if (p == NULL)
		return -ENOMEM;
	/* Key 0 (digits all '0'), request 0, opaque 0, source port 0, IP id 0. */
	len = lg_frame_build_ref(q, hdr, op, 0, 0, 0, 0, p);
	ip = (struct rte_ipv4_hdr *)(p + IP_OFF);
	udp = (struct rte_udp_hdr *)(ip + 1);
	ip->hdr_checksum = 0;
	udp->dgram_cksum = 0;
	t->frame = p;
	t->len = (uint16_t)len;
	t->opaque_off = q->proto == MC_PROTO_BINARY ? LG_HDR_LEN + MC_FRAME_HDR_LEN + 12 : 0;
	t->digits = k->digits;
	/* Where each key's last digit is: keys follow "get "/"mg "/"set "/"ms " (binary: the
	 * header and extras), a multi-get's one byte apart. */
	t->nkeys = op == LG_OP_GET ? (uint16_t)q->multiget : 1;
	{
		uint32_t off = LG_HDR_LEN + MC_FRAME_HDR_LEN;

		if (q->proto == MC_PROTO_BINARY)
			off += MC_BIN_HDR_LEN + (op == LG_OP_SET ? 8 : 0);
		else if (q->proto == MC_PROTO_META)
			off += 3;
		else
			off += 4;
		for (uint16_t j = 0; j < t->nkeys; j++) {
			t->key_end[j] = (uint16_t)(off + k->key_len);
			off += k->key_len + 1u;
		}
	}
	t->key_n = k->n;
	/* A multi-get's other keys were written for key 0's neighbours: every digit '0' too. */
	for (uint16_t j = 0; j < t->nkeys; j++)
		memset(p + t->key_end[j] - k->digits, '0', k->digits);
	t->ip_sum = fold(rte_raw_cksum(ip, sizeof(*ip)));
	t->udp_sum = fold((uint32_t)rte_raw_cksum(udp, len - UDP_OFF) + rte_ipv4_phdr_cksum(ip, 0));
	return 0;
}

void lg_tmpl_free(struct lg_tmpl *t)
{
	free(t->frame);
	t->frame = NULL;
}

/* The decimal digits of @p idx, written backwards from @p end over the template's '0's (the
 * leading zeros are already there), two at a time while two are left (one division by 100
 * instead of two by 10), exactly as many as @p idx has; returns what they add to the sum. */
static inline uint32_t put_digits(uint8_t *end, uint32_t idx, unsigned int sh)
{
	uint32_t sum = 0;

	while (idx >= 10) {
		uint32_t two = idx % 100, hi = two / 10, lo = two - hi * 10;

		idx /= 100;
		end -= 2;
		end[0] = (uint8_t)('0' + hi);
		end[1] = (uint8_t)('0' + lo);
		sum += (lo << sh) + (hi << (sh ^ 8)); /* two bytes: sh is back where it was */
	}
	if (idx != 0) {
		*--end = (uint8_t)('0' + idx);
		sum += idx << sh;
	}
	return sum;
}

uint32_t lg_tmpl_write(const struct lg_tmpl *t, uint32_t key, uint32_t n, uint16_t sport,
		       uint16_t ip_id, uint8_t *p)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + IP_OFF);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t id_be = rte_cpu_to_be_16((uint16_t)n), sport_be = rte_cpu_to_be_16(sport);
	uint16_t ipid_be = rte_cpu_to_be_16(ip_id), ck;
	uint32_t sum = t->udp_sum + sport_be + id_be;

	memcpy(p, t->frame, t->len);
	memcpy(p + LG_HDR_LEN, &id_be, 2); /* the frame header's request id */
	if (t->opaque_off != 0) {	   /* binary: opaque = (uint16_t)n, its high half 0 */
		memcpy(p + t->opaque_off + 2, &id_be, 2);
		sum += id_be;
	}
	sum += put_digits(p + t->key_end[0], key, byte_shift(t->key_end[0] - 1u));
	/* A multi-get's other keys: spread over the key space from the first (as req.c). */
	for (uint16_t j = 1; j < t->nkeys; j++) {
		uint32_t kj = (uint32_t)(((uint64_t)key + (uint64_t)j * 7919u) % t->key_n);

		sum += put_digits(p + t->key_end[j], kj, byte_shift(t->key_end[j] - 1u));
	}
	ip->packet_id = ipid_be;
	ip->hdr_checksum = (uint16_t)~fold(t->ip_sum + ipid_be);
	udp->src_port = sport_be;
	ck = (uint16_t)~fold(sum);
	udp->dgram_cksum = ck == 0 ? 0xffff : ck;
	return t->len;
}

/* ---------------------------------------------------------------- expected replies */

void lg_expect_learn(struct lg_expect *x, enum mc_proto proto, const uint8_t *p, uint32_t len,
		     uint16_t key_len)
{
	x->valid = false;
	if (len > sizeof(x->b))
		return;
	switch (proto) {
	case MC_PROTO_ASCII: /* "VALUE <key> <flags> <bytes>\r\n": the key is not compared */
		if (len < 6u + key_len + 1u || memcmp(p, "VALUE ", 6) != 0 || p[6 + key_len] != ' ')
			return;
		x->skip_off = 6;
		x->skip_len = key_len;
		x->key_chars = true;
		break;
	case MC_PROTO_BINARY: /* the opaque echoed */
		if (len < MC_BIN_HDR_LEN)
			return;
		x->skip_off = 12;
		x->skip_len = 4;
		x->key_chars = false;
		break;
	default:
		x->skip_off = 0;
		x->skip_len = 0;
		x->key_chars = false;
		break;
	}
	memcpy(x->b, p, len);
	x->len = (uint16_t)len;
	x->valid = true;
}

bool lg_expect_match(const struct lg_expect *x, const uint8_t *p, uint32_t len)
{
	uint32_t end = (uint32_t)x->skip_off + x->skip_len;

	if (!x->valid || len != x->len || memcmp(p, x->b, x->skip_off) != 0 ||
	    memcmp(p + end, x->b + end, len - end) != 0)
		return false;
	/* A key has no space, control byte or DEL (memcached's rule), as the parser requires. */
	return !x->key_chars || !lg_key_special(p + x->skip_off, x->skip_len);
}
