/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The node emulator's EAL-free half (node.c has the mbufs and queues): which keys a node
 * holds, the reply memcached would send to parsed requests, the old datagram builder (every
 * byte, full checksums), and reply templates.
 *
 * Reply templates: the common request, one single-key read in one datagram (ASCII get, meta
 * mg without k or O, binary GET / GETK, not quiet), has a reply that depends only on its
 * shape (protocol, command, meta flags, key length, hit or miss) except for the echoed key
 * (ASCII VALUE, GETK) and the binary opaque. The first request of a shape builds its reply
 * body the general way and keeps it, with those fields zeroed and the body's ones' complement
 * sum; a later one copies it, writes its key and opaque, and adds their sums to the UDP
 * checksum instead of summing the whole body (the value) again. How it ends: a slot is
 * overwritten by the next shape that maps to it, and freed with the node (no other state).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "loadgen.h"

#define DGRAM_BODY LG_NODE_DGRAM_BODY
#define BODY_MAX   LG_NODE_BODY_MAX

/* ---------------------------------------------------------------- keys and values */

/* FNV-1a 64 of the key, mixed (murmur3's finaliser): which keys miss. */
bool lg_node_key_held(const struct lg_node_core *nd, const uint8_t *k, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (nd->hit_thresh >= (1ULL << 53))
		return true;
	for (uint32_t i = 0; i < len; i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (h >> 11) < nd->hit_thresh;
}

/* ---------------------------------------------------------------- reply bodies */

struct out {
	uint8_t *p;
	uint32_t len;
	bool full;
};

static void put(struct out *o, const void *s, uint32_t n)
{
	if (o->full || o->len + n > BODY_MAX) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
}

#define PUT_LIT(o, s) put((o), (s), sizeof(s) - 1)

/* Meta return flags for request @p r of @p p (key @p k): those memcached echoes. */
static void meta_flags(struct out *o, const uint8_t *p, const struct mc_request *r,
		       const struct mc_key *k, bool hit, uint32_t vlen)
{
	const uint8_t *a = p + r->args_off, *end = a + r->args_len;

	while (a < end) {
		const uint8_t *t = a;

		while (a < end && *a != ' ')
			a++;
		switch (*t) {
		case 'k':
			PUT_LIT(o, " k");
			put(o, p + k->off, k->len);
			break;
		case 'O':
			put(o, " ", 1);
			put(o, t, (uint32_t)(a - t));
			break;
		case 'f':
			if (hit)
				PUT_LIT(o, " f0");
			break;
		case 't':
			if (hit)
				PUT_LIT(o, " t-1");
			break;
		case 'c':
			if (hit)
				PUT_LIT(o, " c1");
			break;
		case 's':
			if (hit) {
				char b[16];
				int n = snprintf(b, sizeof(b), " s%u", vlen);

				put(o, b, (uint32_t)n);
			}
			break;
		default:
			break;
		}
		while (a < end && *a == ' ')
			a++;
	}
}

static bool meta_has(const uint8_t *p, const struct mc_request *r, char flag)
{
	const uint8_t *a = p + r->args_off;

	for (uint32_t i = 0; i < r->args_len; i++)
		if (a[i] == (uint8_t)flag && (i == 0 || a[i - 1] == ' '))
			return true;
	return false;
}

static void text_read(struct lg_node_core *nd, struct out *o, const uint8_t *p,
		      const struct mc_request *r, uint64_t *ctr)
{
	bool meta = r->proto == MC_PROTO_META;

	for (uint16_t i = 0; i < r->key_count; i++) {
		const struct mc_key *k = &nd->req->keys[r->key_first + i];
		bool hit = lg_node_key_held(nd, p + k->off, k->len);

		ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
		if (meta) {
			if (!hit && (r->flags & MC_REQ_F_QUIET))
				continue;
			if (hit && meta_has(p, r, 'v')) {
				PUT_LIT(o, "VA ");
				put(o, nd->value_len_text, nd->value_len_text_len);
			} else {
				put(o, hit ? "HD" : "EN", 2);
			}
			meta_flags(o, p, r, k, hit, nd->value_size);
			PUT_LIT(o, "\r\n");
			if (hit && meta_has(p, r, 'v')) {
				put(o, nd->value, nd->value_size);
				PUT_LIT(o, "\r\n");
			}
			continue;
		}
		if (!hit)
			continue;
		PUT_LIT(o, "VALUE ");
		put(o, p + k->off, k->len);
		PUT_LIT(o, " 0 ");
		put(o, nd->value_len_text, nd->value_len_text_len);
		if (r->cmd == MC_CMD_GETS || r->cmd == MC_CMD_GATS)
			PUT_LIT(o, " 1");
		PUT_LIT(o, "\r\n");
		put(o, nd->value, nd->value_size);
		PUT_LIT(o, "\r\n");
	}
	if (!meta)
		PUT_LIT(o, "END\r\n");
}

static void text_other(struct out *o, const uint8_t *p, const struct mc_request *r)
{
	bool meta = r->proto == MC_PROTO_META;

	if (r->cmd == MC_CMD_MN) {
		PUT_LIT(o, "MN\r\n");
		return;
	}
	if (r->flags & MC_REQ_F_QUIET)
		return;
	switch (r->kind) {
	case MC_KIND_WRITE:
		if (meta) {
			PUT_LIT(o, "HD");
			meta_flags(o, p, r, NULL, false, 0);
			PUT_LIT(o, "\r\n");
		} else {
			PUT_LIT(o, "STORED\r\n");
		}
		break;
	case MC_KIND_DELETE:
		PUT_LIT(o, "NOT_FOUND\r\n");
		break;
	default:
		PUT_LIT(o, "ERROR\r\n");
		break;
	}
}

/* A binary response: header, extras (flags 0 on a hit), key (GETK*), value. */
static void bin_one(struct lg_node_core *nd, struct out *o, const uint8_t *p, const struct mc_request *r,
		    uint64_t *ctr)
{
	uint8_t h[MC_BIN_HDR_LEN];
	static const uint8_t flags0[4] = {0, 0, 0, 0};
	bool quiet = (r->flags & MC_REQ_F_QUIET) != 0;

	if (r->kind == MC_KIND_READ) {
		const struct mc_key *k = &nd->req->keys[r->key_first];
		bool hit = lg_node_key_held(nd, p + k->off, k->len);
		bool with_key = (r->flags & MC_REQ_F_KEY_IN_REPLY) != 0;
		uint16_t klen = with_key ? k->len : 0;
		uint16_t klen_be = rte_cpu_to_be_16(klen);

		ctr[hit ? LG_CTR_NODE_HITS : LG_CTR_NODE_MISSES]++;
		if (!hit) {
			if (quiet)
				return;
			mc_bin_response_write(h, r->opcode, MC_BIN_STATUS_KEY_NOT_FOUND, 9,
					      r->opaque);
			put(o, h, sizeof(h));
			PUT_LIT(o, "Not found");
			return;
		}
		mc_bin_response_write(h, r->opcode, MC_BIN_STATUS_OK, 4u + klen + nd->value_size,
				      r->opaque);
		memcpy(h + 2, &klen_be, 2);
		h[4] = 4;
		put(o, h, sizeof(h));
		put(o, flags0, 4);
		if (with_key)
			put(o, p + k->off, k->len);
		put(o, nd->value, nd->value_size);
		return;
	}
	if (quiet && r->cmd != MC_CMD_NOOP)
		return;
	mc_bin_response_write(h, r->opcode,
			      r->kind == MC_KIND_WRITE || r->cmd == MC_CMD_NOOP
				      ? MC_BIN_STATUS_OK
				      : MC_BIN_STATUS_UNKNOWN_COMMAND,
			      0, r->opaque);
	put(o, h, sizeof(h));
}

/* The whole reply to the parsed requests of datagram payload @p p. */
static void build_body(struct lg_node_core *nd, struct out *o, const uint8_t *p, uint64_t *ctr)
{
	for (uint16_t i = 0; i < nd->req->nreq; i++) {
		const struct mc_request *r = &nd->req->req[i];

		if (r->kind == MC_KIND_WRITE)
			ctr[LG_CTR_NODE_SETS]++;
		if (r->proto == MC_PROTO_BINARY)
			bin_one(nd, o, p, r, ctr);
		else if (r->kind == MC_KIND_READ)
			text_read(nd, o, p, r, ctr);
		else
			text_other(o, p, r);
	}
}


bool lg_node_body(struct lg_node_core *nd, const uint8_t *payload, uint64_t *ctr, uint32_t *len)
{
	struct out o = {nd->body, 0, false};

	build_body(nd, &o, payload, ctr);
	*len = o.len;
	return !o.full;
}

/* ---------------------------------------------------------------- datagrams */

/* The Ethernet, IPv4 and UDP headers of the answer to request frame @p qe (addresses and
 * ports swapped, from @p src_mac, IP id @p ip_id, UDP length @p ulen) at @p eth; the UDP
 * checksum is left 0 for the caller. Both builders use it, so their headers cannot differ. */
static void reply_headers(const struct rte_ether_hdr *qe, const struct rte_ether_addr *src_mac,
			  uint16_t ip_id, uint16_t ulen, struct rte_ether_hdr *eth)
{
	const struct rte_ipv4_hdr *qi = (const struct rte_ipv4_hdr *)(qe + 1);
	const struct rte_udp_hdr *qu = (const struct rte_udp_hdr *)(qi + 1);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	rte_ether_addr_copy(&qe->src_addr, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->packet_id = rte_cpu_to_be_16(ip_id);
	ip->src_addr = qi->dst_addr;
	ip->dst_addr = qi->src_addr;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + ulen));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = qu->dst_port;
	udp->dst_port = qu->src_port;
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0;
}

uint32_t lg_node_dgram_ref(const uint8_t *req_hdr, const struct rte_ether_addr *src_mac,
			   uint16_t ip_id, uint16_t reqid, uint16_t seq, uint16_t total,
			   const uint8_t *body, uint32_t len, uint8_t *p)
{
	const struct rte_ether_hdr *qe = (const struct rte_ether_hdr *)req_hdr;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct mc_frame f = {reqid, seq, total, 0};
	uint16_t ulen = (uint16_t)(sizeof(*udp) + MC_FRAME_HDR_LEN + len);

	reply_headers(qe, src_mac, ip_id, ulen, eth);
	mc_frame_write((uint8_t *)(udp + 1), &f);
	memcpy((uint8_t *)(udp + 1) + MC_FRAME_HDR_LEN, body, len);
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	return LG_HDR_LEN + MC_FRAME_HDR_LEN + len;
}

/* ---------------------------------------------------------------- reply templates */

#define NO_OFF 0xffff

/* The ones' complement sum of @p n bytes that start at an offset of parity @p odd. */
static inline uint32_t sum_at(const void *s, uint32_t n, bool odd)
{
	uint16_t v = rte_raw_cksum(s, n);

	return odd ? (uint32_t)rte_bswap16(v) : v;
}

/* The request's shape, when it may take a template: one single-key, non-quiet read. */
static bool shape_of(const struct lg_node_core *nd, const uint8_t *p, bool hit,
		     struct lg_reply_shape *sh)
{
	const struct mc_request *r;
	const struct mc_key *k;

	if (nd->req->nreq != 1)
		return false;
	r = &nd->req->req[0];
	if (r->kind != MC_KIND_READ || r->key_count != 1 || (r->flags & MC_REQ_F_QUIET))
		return false;
	k = &nd->req->keys[r->key_first];
	memset(sh, 0, sizeof(*sh));
	sh->proto = (uint8_t)r->proto;
	sh->cmd = (uint8_t)r->cmd;
	sh->opcode = r->opcode;
	sh->flags = r->flags;
	sh->hit = hit;
	sh->key_len = (uint16_t)k->len;
	switch (r->proto) {
	case MC_PROTO_ASCII:
		if (r->cmd != MC_CMD_GET)
			return false;
		sh->key_off = hit ? 6 : NO_OFF; /* "VALUE <key> ..." */
		sh->opaque_off = NO_OFF;
		break;
	case MC_PROTO_META:
		/* k and O echo what varies per request; b changes the key's form. */
		if (r->cmd != MC_CMD_MG || (r->flags & (MC_REQ_F_KEY_IN_REPLY | MC_REQ_F_OPAQUE |
							MC_REQ_F_BASE64)) ||
		    r->args_len > sizeof(sh->args))
			return false;
		sh->args_len = (uint8_t)r->args_len;
		memcpy(sh->args, p + r->args_off, r->args_len);
		sh->key_off = sh->opaque_off = NO_OFF;
		break;
	case MC_PROTO_BINARY:
		if (r->cmd != MC_CMD_GET)
			return false;
		sh->key_off = hit && (r->flags & MC_REQ_F_KEY_IN_REPLY) ? MC_BIN_HDR_LEN + 4 : NO_OFF;
		sh->opaque_off = 12;
		break;
	default:
		return false;
	}
	return true;
}

static unsigned int shape_slot(const struct lg_reply_shape *sh)
{
	return ((unsigned int)sh->cmd * 7u + sh->proto * 3u + sh->hit + sh->opcode) %
	       LG_REPLY_TMPLS;
}

/* The template's reply headers (as reply_headers() writes them, addresses, ports, IP id and
 * request id 0) and the sums both checksums start from. */
static void tmpl_sums(struct lg_reply_tmpl *t)
{
	uint8_t f[LG_HDR_LEN + MC_FRAME_HDR_LEN] = {0};
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	struct rte_ether_addr zero = {{0}};
	struct mc_frame fr = {0, 0, 1, 0};
	uint16_t ulen = (uint16_t)(sizeof(*udp) + MC_FRAME_HDR_LEN + t->len);

	reply_headers(eth, &zero, 0, ulen, eth); /* the request's fields are all 0 here */
	ip->hdr_checksum = 0;
	mc_frame_write((uint8_t *)(udp + 1), &fr);
	memcpy(t->ip_hdr, ip, sizeof(t->ip_hdr));
	t->ip_sum0 = rte_raw_cksum(ip, sizeof(*ip));
	t->udp_sum0 = lg_cksum_fold((uint32_t)rte_ipv4_phdr_cksum(ip, 0) +
				    rte_raw_cksum(udp, sizeof(*udp) + MC_FRAME_HDR_LEN) + t->sum);
}

static inline uint16_t fold(uint32_t v)
{
	v = (v & 0xffff) + (v >> 16);
	v = (v & 0xffff) + (v >> 16);
	return (uint16_t)v;
}

/* The 32-bit sum of the two 16-bit words of @p v (as they lie in memory). */
static inline uint32_t sum32(uint32_t v)
{
	return (v & 0xffff) + (v >> 16);
}

/* The reply frame from template @p t for request id @p reqid_raw, key @p key (when the reply
 * echoes it) and opaque @p opaque_raw (binary; both as they lie in the request), the request's
 * headers @p req_hdr turned round. @p out may be @p req_hdr: everything the reply takes from
 * the request is read before the first byte is written. Both checksums are the template's
 * sums plus what the request's fields add (each was 0 in the template). */
static uint32_t tmpl_put(const struct lg_reply_tmpl *t, const uint8_t *req_hdr, uint16_t reqid_raw,
			 const uint8_t *key, uint32_t opaque_raw,
			 const struct rte_ether_addr *src_mac, uint16_t ip_id, uint8_t *out)
{
	const struct rte_ether_hdr *qe = (const struct rte_ether_hdr *)req_hdr;
	const struct rte_ipv4_hdr *qi = (const struct rte_ipv4_hdr *)(qe + 1);
	const struct rte_udp_hdr *qu = (const struct rte_udp_hdr *)(qi + 1);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)out;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *frame = (uint8_t *)(udp + 1), *body = frame + MC_FRAME_HDR_LEN;
	struct rte_ether_addr peer = qe->src_addr;
	uint32_t saddr = qi->src_addr, daddr = qi->dst_addr;
	uint16_t sport = qu->src_port, dport = qu->dst_port, ck;
	uint16_t id_be = rte_cpu_to_be_16(ip_id);
	uint16_t ulen_be = rte_cpu_to_be_16((uint16_t)(sizeof(*udp) + MC_FRAME_HDR_LEN + t->len));
	uint8_t keybuf[MC_KEY_MAX];
	uint32_t a = sum32(saddr) + sum32(daddr), sum;

	if (t->shape.key_off != NO_OFF) {
		memcpy(keybuf, key, t->shape.key_len); /* the body may overwrite it */
		key = keybuf;
	}
	rte_ether_addr_copy(&peer, &eth->dst_addr);
	rte_ether_addr_copy(src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memcpy(ip, t->ip_hdr, sizeof(t->ip_hdr));
	ip->packet_id = id_be;
	ip->src_addr = daddr;
	ip->dst_addr = saddr;
	ip->hdr_checksum = (uint16_t)~fold(t->ip_sum0 + a + id_be);
	udp->src_port = dport;
	udp->dst_port = sport;
	udp->dgram_len = ulen_be;
	memset(frame, 0, MC_FRAME_HDR_LEN);
	memcpy(frame, &reqid_raw, 2);
	frame[5] = 1; /* datagram 0 of 1 */
	memcpy(body, t->body, t->len);
	sum = t->udp_sum0 + a + sport + dport + reqid_raw;
	if (t->shape.key_off != NO_OFF) {
		memcpy(body + t->shape.key_off, key, t->shape.key_len);
		sum += sum_at(key, t->shape.key_len, t->shape.key_off & 1);
	}
	if (t->shape.opaque_off != NO_OFF) {
		memcpy(body + t->shape.opaque_off, &opaque_raw, 4);
		sum += sum_at(&opaque_raw, 4, t->shape.opaque_off & 1);
	}
	ck = (uint16_t)~fold(sum);
	udp->dgram_cksum = ck == 0 ? 0xffff : ck;
	return LG_HDR_LEN + MC_FRAME_HDR_LEN + t->len;
}

const struct lg_reply_tmpl *lg_node_tmpl(struct lg_node_core *nd, const uint8_t *p, bool hit)
{
	struct lg_reply_shape sh;
	struct lg_reply_tmpl *t;
	uint64_t scratch[LG_CTR_COUNT] = {0};
	uint32_t len;

	if (!shape_of(nd, p, hit, &sh))
		return NULL;
	t = &nd->tmpl[shape_slot(&sh)];
	if ((t->valid || t->general) && memcmp(&t->shape, &sh, sizeof(sh)) == 0)
		return t->valid ? t : NULL;
	/* Learn it: the general reply, then the varying fields checked and zeroed. A shape whose
	 * reply needs more than one datagram stays general (remembered, so it is built once). */
	t->valid = false;
	t->general = true;
	t->shape = sh;
	if (!lg_node_body(nd, p, scratch, &len) || len == 0 || len > DGRAM_BODY)
		return NULL;
	if (sh.key_off != NO_OFF &&
	    (sh.key_off + sh.key_len > len ||
	     memcmp(nd->body + sh.key_off, p + nd->req->keys[nd->req->req[0].key_first].off,
		    sh.key_len) != 0))
		return NULL;
	t->general = false;
	memcpy(t->body, nd->body, len);
	if (sh.key_off != NO_OFF)
		memset(t->body + sh.key_off, 0, sh.key_len);
	if (sh.opaque_off != NO_OFF)
		memset(t->body + sh.opaque_off, 0, 4);
	t->shape = sh;
	t->len = (uint16_t)len;
	t->sum = rte_raw_cksum(t->body, len);
	tmpl_sums(t);
	t->valid = true;
	return t;
}

uint32_t lg_node_tmpl_write(const struct lg_node_core *nd, const struct lg_reply_tmpl *t,
			    const uint8_t *req_hdr, const uint8_t *p,
			    const struct rte_ether_addr *src_mac, uint16_t ip_id, uint8_t *out)
{
	const struct mc_request *r = &nd->req->req[0];
	uint16_t reqid = rte_cpu_to_be_16(nd->req->frame.request_id);
	uint32_t opaque = rte_cpu_to_be_32(r->opaque);

	return tmpl_put(t, req_hdr, reqid, p + nd->req->keys[r->key_first].off, opaque, src_mac,
			ip_id, out);
}

/* ---------------------------------------------------------------- learnt requests */

/* Payload @p p against pattern @p pt: same length, same bytes outside the masked spans. */
static inline bool pat_match(const struct lg_req_pat *pt, const uint8_t *p, uint32_t len)
{
	uint64_t diff = 0;

	if (pt->len != len)
		return false;
	for (uint8_t w = 0; w < pt->nw; w++) {
		uint64_t x;

		memcpy(&x, p + pt->woff[w], 8);
		diff |= (x ^ pt->want[w]) & pt->mask[w];
	}
	return diff == 0;
}

void lg_node_pat_learn(struct lg_node_core *nd, const uint8_t *p, uint32_t len, bool hit,
		       const struct lg_reply_tmpl *t)
{
	const struct mc_request *r = &nd->req->req[0];
	const struct mc_key *k = &nd->req->keys[r->key_first];
	uint8_t m[8 * LG_REQ_PAT_WORDS];
	struct lg_req_pat *pt;

	if (len < 16 || len > sizeof(m) || t == NULL || !t->valid)
		return;
	for (uint8_t i = 0; i < nd->npat; i++) {
		pt = &nd->pat[i];
		if (pat_match(pt, p, len) && pt->key_off == k->off) {
			if (!pt->have[hit]) {
				pt->rt[hit] = *t;
				pt->have[hit] = true;
			}
			return;
		}
	}
	pt = &nd->pat[nd->pat_next];
	nd->pat_next = (uint8_t)((nd->pat_next + 1) % LG_REQ_PATS);
	if (nd->npat < LG_REQ_PATS)
		nd->npat++;
	memset(pt, 0, sizeof(*pt));
	pt->key_off = (uint16_t)k->off;
	pt->key_len = (uint16_t)k->len;
	pt->opaque_off = r->proto == MC_PROTO_BINARY ? MC_FRAME_HDR_LEN + 12 : NO_OFF;
	/* Compared: everything but the request id, the key and the opaque. */
	memset(m, 0xff, len);
	memset(m, 0, 2);
	memset(m + k->off, 0, k->len);
	if (pt->opaque_off != NO_OFF)
		memset(m + pt->opaque_off, 0, 4);
	for (uint32_t off = 0;; off += 8) {
		uint64_t x, mk;

		if (off + 8 > len)
			off = len - 8;
		memcpy(&x, p + off, 8);
		memcpy(&mk, m + off, 8);
		if (mk != 0) {
			pt->woff[pt->nw] = (uint16_t)off;
			pt->want[pt->nw] = x & mk;
			pt->mask[pt->nw] = mk;
			pt->nw++;
		}
		if (off + 8 == len)
			break;
	}
	pt->rt[hit] = *t;
	pt->have[hit] = true;
	pt->len = (uint16_t)len; /* last: the slot is whole */
}

uint32_t lg_node_fast(const struct lg_node_core *nd, const uint8_t *req_hdr,
		      const uint8_t *payload, uint32_t len, const struct rte_ether_addr *src_mac,
		      uint16_t ip_id, uint32_t room, uint8_t *out, bool *hit)
{
	for (uint8_t i = 0; i < nd->npat; i++) {
		const struct lg_req_pat *pt = &nd->pat[i];
		const uint8_t *key = payload + pt->key_off;
		uint16_t reqid;
		uint32_t opaque = 0;
		bool h;

		if (!pat_match(pt, payload, len))
			continue;
		if (lg_key_special(key, pt->key_len))
			return 0;
		h = lg_node_key_held(nd, key, pt->key_len);
		if (!pt->have[h] ||
		    room < LG_HDR_LEN + MC_FRAME_HDR_LEN + (uint32_t)pt->rt[h].len)
			return 0;
		memcpy(&reqid, payload, 2);
		if (pt->opaque_off != NO_OFF)
			memcpy(&opaque, payload + pt->opaque_off, 4);
		*hit = h;
		return tmpl_put(&pt->rt[h], req_hdr, reqid, key, opaque, src_mac, ip_id, out);
	}
	return 0;
}
