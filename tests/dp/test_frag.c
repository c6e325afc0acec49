/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IP fragments through the router (issue 27, defect 11): a request that arrives as IPv4 or
 * IPv6 fragments (in order, out of order, duplicated, one missing) or as one datagram over the
 * MTU (af_packet's socket reassembled it) reaches its node as fragments no larger than the MTU
 * that reassemble to the same bytes; what cannot complete is dropped and counted, never takes
 * a slot and never counts against the node; replies over the MTU reach the client fragmented.
 * Frames are built and reassembled here, byte by byte, independently of the router's code.
 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dp_test.h"

#define MTU 1500

/* ---- building ----------------------------------------------------------------------------- */

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The UDP checksum over @p udp (@p ulen bytes, its field included) with the pseudo-header of
 * addresses @p src / @p dst of @p alen bytes (4 or 16): 0xffff when right. */
static uint16_t udp_sum(const uint8_t *src, const uint8_t *dst, size_t alen, const uint8_t *udp,
			size_t ulen)
{
	uint32_t s = sum16(src, alen, 0);

	s = sum16(dst, alen, s);
	s += IPPROTO_UDP + (uint32_t)ulen;
	return fold(sum16(udp, ulen, s));
}

/* A UDP datagram (header + memcached frame + @p text) into @p udp; its length. The checksum
 * is computed with addresses @p src / @p dst (@p alen bytes). */
static size_t udp_build(uint8_t *udp, const uint8_t *src, const uint8_t *dst, size_t alen,
			uint16_t sport, uint16_t dport, uint16_t reqid, uint16_t seq,
			uint16_t total, const void *text, size_t len)
{
	size_t ulen = 8 + 8 + len;
	uint8_t *f = udp + 8;

	udp[0] = (uint8_t)(sport >> 8), udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8), udp[3] = (uint8_t)dport;
	udp[4] = (uint8_t)(ulen >> 8), udp[5] = (uint8_t)ulen;
	udp[6] = udp[7] = 0;
	f[0] = (uint8_t)(reqid >> 8), f[1] = (uint8_t)reqid;
	f[2] = (uint8_t)(seq >> 8), f[3] = (uint8_t)seq;
	f[4] = (uint8_t)(total >> 8), f[5] = (uint8_t)total;
	f[6] = f[7] = 0;
	memcpy(f + 8, text, len);
	uint16_t c = (uint16_t)~udp_sum(src, dst, alen, udp, ulen);

	c = c == 0 ? 0xffff : c;
	udp[6] = (uint8_t)(c >> 8), udp[7] = (uint8_t)c;
	return ulen;
}

struct dgram {
	bool v6;
	uint8_t src[16], dst[16];
	const uint8_t *smac, *dmac;
	uint8_t udp[16384]; /* the IP payload: UDP header and data */
	size_t ulen;
	uint32_t id;
};

static struct rte_mbuf *alloc_frame(size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(rig.pool);

	assert_non_null(m);
	assert_true(len <= rte_pktmbuf_tailroom(m));
	assert_non_null(rte_pktmbuf_append(m, (uint16_t)len));
	return m;
}

/* The frame of bytes [@p off, @p off + @p len) of @p d's IP payload: a fragment when @p frag
 * (offset @p off, more to come when @p more), else the whole datagram (off 0, len all). */
static struct rte_mbuf *frame_of(const struct dgram *d, size_t off, size_t len, bool frag,
				 bool more)
{
	size_t hl = d->v6 ? 40 + (frag ? 8 : 0) : 20;
	struct rte_mbuf *m = alloc_frame(14 + hl + len);
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *), *ip = p + 14;

	memcpy(p, d->dmac, 6);
	memcpy(p + 6, d->smac, 6);
	p[12] = d->v6 ? 0x86 : 0x08;
	p[13] = d->v6 ? 0xdd : 0x00;
	memset(ip, 0, hl);
	if (d->v6) {
		size_t pl = hl - 40 + len;

		ip[0] = 0x60;
		ip[4] = (uint8_t)(pl >> 8), ip[5] = (uint8_t)pl;
		ip[6] = frag ? IPPROTO_FRAGMENT : IPPROTO_UDP;
		ip[7] = 64;
		memcpy(ip + 8, d->src, 16);
		memcpy(ip + 24, d->dst, 16);
		if (frag) {
			uint16_t fd = (uint16_t)(off | (more ? 1 : 0));

			ip[40] = IPPROTO_UDP;
			ip[42] = (uint8_t)(fd >> 8), ip[43] = (uint8_t)fd;
			ip[44] = (uint8_t)(d->id >> 24), ip[45] = (uint8_t)(d->id >> 16);
			ip[46] = (uint8_t)(d->id >> 8), ip[47] = (uint8_t)d->id;
		}
	} else {
		size_t tot = 20 + len;
		uint16_t fo = (uint16_t)(off / 8 | (more ? RTE_IPV4_HDR_MF_FLAG : 0));

		ip[0] = 0x45;
		ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
		ip[4] = (uint8_t)(d->id >> 8), ip[5] = (uint8_t)d->id;
		ip[6] = (uint8_t)(fo >> 8), ip[7] = (uint8_t)fo;
		ip[8] = 64;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, d->src, 4);
		memcpy(ip + 16, d->dst, 4);
		uint16_t c = (uint16_t)~fold(sum16(ip, 20, 0));

		ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
	}
	memcpy(ip + hl, d->udp + off, len);
	return m;
}

/* The request "set <key> 0 0 <n>" with a value of @p n bytes derived from @p seed, from the
 * client (IPv4 or IPv6) to the router's listen port. */
static void request_dgram(struct dgram *d, bool v6, const char *key, size_t n, uint8_t seed,
			  uint16_t reqid)
{
	static uint8_t text[16384];
	int h = snprintf((char *)text, sizeof(text), "set %s 0 0 %zu\r\n", key, n);

	for (size_t i = 0; i < n; i++)
		text[h + i] = (uint8_t)('a' + (i * 7 + seed) % 26);
	memcpy(text + h + n, "\r\n", 2);
	memset(d, 0, sizeof(*d));
	d->v6 = v6;
	d->smac = t_client_mac;
	d->dmac = t_router_mac;
	d->id = 0x4242u + reqid;
	if (v6) {
		t_ip6(T_CLIENT_IP6, d->src);
		t_ip6(T_ROUTER_IP6, d->dst);
	} else {
		uint32_t s = t_ip(T_CLIENT_IP), r = t_ip(T_ROUTER_IP);

		memcpy(d->src, &s, 4);
		memcpy(d->dst, &r, 4);
	}
	d->ulen = udp_build(d->udp, d->src, d->dst, v6 ? 16 : 4, 5555, T_LISTEN, reqid, 0, 1, text,
			    (size_t)h + n + 2);
}

/* The fragment boundaries of @p d for an MTU of @p mtu: @p n fragments, fragment k at
 * offs[k] .. offs[k + 1]. */
static int split(const struct dgram *d, size_t mtu, size_t offs[])
{
	size_t chunk = (mtu - (d->v6 ? 48 : 20)) & ~(size_t)7;
	int n = 0;

	for (size_t o = 0; o < d->ulen; o += chunk)
		offs[n++] = o;
	offs[n] = d->ulen;
	return n;
}

static struct rte_mbuf *frag_k(const struct dgram *d, const size_t offs[], int n, int k)
{
	return frame_of(d, offs[k], offs[k + 1] - offs[k], true, k + 1 < n);
}

/* ---- receiving ---------------------------------------------------------------------------- */

/* Everything queue 0 sent, reassembled as one datagram (checked: every frame within the
 * MTU, IPv4 header checksums, offsets without holes or overlaps, one id): its IP payload into
 * @p out (UDP header on), its addresses; @return its length and how many frames in *frames. */
static size_t receive(bool v6, uint8_t *out, uint8_t src[16], uint8_t dst[16], int *frames,
		      uint8_t mac[6])
{
	struct rte_mbuf *m;
	size_t total = 0, have = 0;
	bool last = false;
	int n = 0;

	while ((m = t_sent(0)) != NULL) {
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *), *ip = p + 14;
		size_t off, len, hl;
		bool more;

		assert_true(rte_pktmbuf_pkt_len(m) <= 14 + MTU);
		assert_int_equal(m->nb_segs, 1);
		memcpy(mac, p, 6);
		if (v6) {
			assert_int_equal(p[12] << 8 | p[13], RTE_ETHER_TYPE_IPV6);
			len = (size_t)(ip[4] << 8 | ip[5]);
			memcpy(src, ip + 8, 16);
			memcpy(dst, ip + 24, 16);
			if (ip[6] == IPPROTO_FRAGMENT) {
				uint16_t fd = (uint16_t)(ip[42] << 8 | ip[43]);

				assert_int_equal(ip[40], IPPROTO_UDP);
				off = fd & 0xfff8;
				more = fd & 1;
				hl = 48;
				len -= 8;
			} else {
				assert_int_equal(ip[6], IPPROTO_UDP);
				off = 0, more = false, hl = 40;
			}
		} else {
			uint16_t fo = (uint16_t)(ip[6] << 8 | ip[7]);

			assert_int_equal(p[12] << 8 | p[13], RTE_ETHER_TYPE_IPV4);
			assert_int_equal(ip[0], 0x45);
			assert_int_equal(fold(sum16(ip, 20, 0)), 0xffff);
			hl = 20;
			len = (size_t)(ip[2] << 8 | ip[3]) - 20;
			off = (size_t)(fo & RTE_IPV4_HDR_OFFSET_MASK) * 8;
			more = fo & RTE_IPV4_HDR_MF_FLAG;
			memcpy(src, ip + 12, 4);
			memcpy(dst, ip + 16, 4);
		}
		assert_true(off + len <= 16384);
		/* In order, as the router sends them: each starts where the last ended. */
		assert_int_equal(off, have);
		memcpy(out + off, ip + hl, len);
		have = off + len;
		if (!more) {
			last = true;
			total = have;
		}
		n++;
		rte_pktmbuf_free(m);
	}
	assert_true(last);
	*frames = n;
	return total;
}

/* What the node got for request @p d: the same UDP payload but its request id, a valid UDP
 * checksum from the router to the node, within the MTU in @p want_frames frames; the router's
 * reply port and request id in *port / *reqid. */
static void expect_at_node(const struct dgram *d, int want_frames, uint16_t *port, uint16_t *reqid)
{
	static uint8_t got[16384];
	uint8_t src[16], dst[16], mac[6];
	int frames;
	size_t n = receive(d->v6, got, src, dst, &frames, mac);

	assert_int_equal(frames, want_frames);
	assert_int_equal(n, d->ulen);
	assert_int_equal(udp_sum(src, dst, d->v6 ? 16 : 4, got, n), 0xffff);
	/* Past the UDP header and the frame's request id, byte for byte. */
	assert_memory_equal(got + 10, d->udp + 10, n - 10);
	*port = (uint16_t)(got[0] << 8 | got[1]);
	*reqid = (uint16_t)(got[8] << 8 | got[9]);
}

static struct dp_node_stats node_of(const char *key)
{
	struct dp_node_stats ns;

	assert_int_equal(dp_member_node(rig.dp, (uint32_t)t_owner(key), &ns), 0);
	return ns;
}

static void short_timeout(struct dp_config *c)
{
	c->frag_timeout_ms = 20;
	c->request_timeout_ms = 50;
}

static void with_offload(struct dp_config *c)
{
	c->tx_cksum_offload = true;
}

/* The address of @p key's owner (member i is 198.18.1.i+1). */
static const char *owner_sip(const char *key)
{
	static char sip[32];

	snprintf(sip, sizeof(sip), "198.18.1.%d", t_owner(key) + 1);
	return sip;
}

/* Node answers the request it got (port, reqid) with STORED; the client gets it. */
static void node_answers(const char *key, uint16_t port, uint16_t reqid)
{
	const char *sip = owner_sip(key);
	struct t_view v;
	struct rte_mbuf *m;

	t_inject(0, t_reply(sip, 11211, port, reqid, 0, 1, "STORED\r\n", 8));
	t_poll(0);
	m = t_sent(0);
	t_view_udp(m, &v, false);
	assert_int_equal(v.plen, 16); /* frame header and the line */
	assert_memory_equal(v.payload + 8, "STORED\r\n", 8);
	rte_pktmbuf_free(m);
}

/* ---- tests -------------------------------------------------------------------------------- */

/* In order and out of order: the node gets the request, fragmented for its MTU, byte for
 * byte; the reply comes back; fragments are counted merged and the identity holds. */
static void test_v4_fragments_in_and_out_of_order(void **state)
{
	static struct dgram d;
	static const int orders[2][3] = {{0, 1, 2}, {2, 0, 1}};
	size_t offs[16];
	uint16_t port, reqid;
	struct dp_stats st;

	(void)state;
	t_dp_start(1, 4, NULL);
	for (int o = 0; o < 2; o++) {
		request_dgram(&d, false, "big", 4000, (uint8_t)o, (uint16_t)(7 + o));
		int n = split(&d, MTU, offs);

		assert_int_equal(n, 3);
		for (int k = 0; k < n; k++)
			t_inject(0, frag_k(&d, offs, n, orders[o][k]));
		t_poll(0);
		expect_at_node(&d, 3, &port, &reqid);
		node_answers("big", port, reqid);
	}
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_IP_REASSEMBLED], 2);
	assert_int_equal(st.ctr[DP_CTR_IP_FRAG_MERGED], 4);
	assert_int_equal(st.ctr[DP_CTR_IP_FRAG_SENT], 4);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 2);
	assert_int_equal(st.ctr[DP_CTR_SLOTS_COMPLETED], 2);
	assert_int_equal(st.frag_held, 0);
	assert_int_equal(st.slots_live, 0);
	t_dp_stop();
}

/* A duplicated fragment (overlapping its twin) spoils the whole datagram: all its fragments
 * are dropped as ip_fragment_invalid, nothing reaches a node, no slot is taken. */
static void test_v4_duplicate_fragment(void **state)
{
	static struct dgram d;
	size_t offs[16];
	struct dp_stats st;
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	request_dgram(&d, false, "big", 4000, 1, 9);
	n = split(&d, MTU, offs);
	t_inject(0, frag_k(&d, offs, n, 0));
	t_inject(0, frag_k(&d, offs, n, 1));
	t_inject(0, frag_k(&d, offs, n, 1));
	t_inject(0, frag_k(&d, offs, n, 2));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 0);
	/* And a first fragment twice. */
	d.id++;
	t_inject(0, frag_k(&d, offs, n, 0));
	t_inject(0, frag_k(&d, offs, n, 0));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 0);
	st = t_stats();
	assert_int_equal(st.drop[DP_DROP_IP_FRAG_INVALID], 6);
	assert_int_equal(st.ctr[DP_CTR_IP_REASSEMBLED], 0);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 0);
	assert_int_equal(st.frag_held, 0);
	assert_int_equal(st.slots_live, 0);
	assert_int_equal(node_of("big").forwarded, 0);
	t_dp_stop();
}

/* One fragment missing: the others wait, holding no slot, and are dropped as
 * ip_fragment_timeout after [timeouts] fragment_ms; the node's counters never move. */
static void test_v4_missing_fragment_times_out(void **state)
{
	static struct dgram d;
	size_t offs[16];
	struct dp_stats st;
	struct dp_node_stats ns;
	uint64_t until;
	int n;

	(void)state;
	t_dp_start(1, 4, short_timeout);
	request_dgram(&d, false, "big", 4000, 2, 11);
	n = split(&d, MTU, offs);
	t_inject(0, frag_k(&d, offs, n, 0));
	t_inject(0, frag_k(&d, offs, n, 2));
	t_poll(0);
	st = t_stats(); /* the identity holds with the two held */
	assert_int_equal(st.frag_held, 2);
	assert_int_equal(st.slots_live, 0);
	/* Past both timeouts (fragments 20 ms, requests 50 ms): polled until the drop shows. */
	until = rte_get_tsc_cycles() + 5 * rte_get_tsc_hz();
	do {
		usleep(10000);
		t_poll(0);
		st = t_stats();
	} while (st.drop[DP_DROP_IP_FRAG_TIMEOUT] < 2 && rte_get_tsc_cycles() < until);
	usleep(60000);
	t_poll(0);
	st = t_stats();
	assert_int_equal(st.drop[DP_DROP_IP_FRAG_TIMEOUT], 2);
	assert_int_equal(st.frag_held, 0);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 0);
	assert_int_equal(st.ctr[DP_CTR_SLOTS_EXPIRED], 0);
	assert_int_equal(t_sent_count(0), 0);
	ns = node_of("big");
	assert_int_equal(ns.forwarded, 0);
	assert_int_equal(ns.timeouts, 0);
	assert_int_equal(ns.failures, 0);
	t_dp_stop();
}

/* A datagram of 1,501..2,000 bytes arriving whole (af_packet's socket reassembled it) leaves
 * for the node as two fragments within the MTU, with and without TX checksum offload: the
 * checksum is made whole before fragmenting. */
static void test_whole_over_mtu_is_fragmented(void **state)
{
	static struct dgram d;
	uint16_t port, reqid;
	struct dp_stats st;

	(void)state;
	for (int off = 0; off < 2; off++) {
		t_dp_start(1, 4, off ? with_offload : NULL);
		request_dgram(&d, false, "mid", 1800, 3, 13);
		assert_true(20 + d.ulen > MTU && 20 + d.ulen <= 2000);
		t_inject(0, frame_of(&d, 0, d.ulen, false, false));
		t_poll(0);
		expect_at_node(&d, 2, &port, &reqid);
		if (!off) {
			node_answers("mid", port, reqid);
		} else { /* its small reply leaves its checksum to the NIC: not checked here */
			t_inject(0, t_reply(owner_sip("mid"), 11211, port, reqid, 0, 1,
					    "STORED\r\n", 8));
			t_poll(0);
			rte_pktmbuf_free(t_sent(0));
		}
		st = t_stats();
		assert_int_equal(st.ctr[DP_CTR_IP_FRAG_SENT], 1);
		assert_int_equal(st.ctr[DP_CTR_FORWARDED], 1);
		assert_int_equal(st.ctr[DP_CTR_SLOTS_COMPLETED], 1);
		t_dp_stop();
	}
}

/* A datagram the port cut short because it was larger than its frames (af_packet: the
 * socket reassembled 4 KB into a 2 KB frame) is ip_too_big, before any slot, and the node
 * never hears of it; a datagram of more than 8 fragments is ip_fragment_invalid. */
static void test_too_big_is_dropped_before_a_slot(void **state)
{
	static struct dgram d;
	struct rte_mbuf *m;
	size_t offs[32];
	struct dp_stats st;
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	request_dgram(&d, false, "big", 4000, 4, 15);
	m = frame_of(&d, 0, 1980, false, false);
	/* Its IP header says what the sender sent: 4 KB. */
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);
	size_t tot = 20 + d.ulen;

	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	ip[10] = ip[11] = 0;
	uint16_t c = (uint16_t)~fold(sum16(ip, 20, 0));

	ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
	for (int i = 0; i < 3; i++)
		t_inject(0, rte_pktmbuf_copy(m, rig.pool, 0, UINT32_MAX));
	rte_pktmbuf_free(m);
	t_poll(0);
	/* Nine fragments of 1,000-byte pieces. */
	request_dgram(&d, false, "big", 8800, 5, 16);
	n = split(&d, 1020, offs);
	assert_true(n > 8);
	for (int k = 0; k < n; k++)
		t_inject(0, frag_k(&d, offs, n, k));
	t_poll(0);
	assert_int_equal(t_sent_count(0), 0);
	st = t_stats();
	assert_int_equal(st.drop[DP_DROP_IP_TOO_BIG], 3);
	/* The first eight spoil the datagram; the ninth starts anew and waits (in vain). */
	assert_int_equal(st.drop[DP_DROP_IP_FRAG_INVALID], (uint64_t)n - 1);
	assert_int_equal(st.frag_held, 1);
	assert_int_equal(st.drop[DP_DROP_BAD_IP], 0);
	assert_int_equal(st.slots_live, 0);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 0);
	assert_int_equal(node_of("big").forwarded, 0);
	assert_int_equal(node_of("big").timeouts, 0);
	t_dp_stop();
}

/* IPv6: a request as fragments (out of order) to an IPv6 node; the node gets IPv6 fragments
 * that reassemble to the same bytes. */
static void test_v6_fragments(void **state)
{
	static struct dgram d;
	size_t offs[16];
	uint16_t port, reqid;
	struct dp_stats st;
	int n;

	(void)state;
	t_dp_start6(1, 0xf, NULL);
	request_dgram(&d, true, "big6", 4000, 6, 17);
	n = split(&d, MTU, offs);
	assert_int_equal(n, 3);
	t_inject(0, frag_k(&d, offs, n, 1));
	t_inject(0, frag_k(&d, offs, n, 2));
	t_inject(0, frag_k(&d, offs, n, 0));
	t_poll(0);
	expect_at_node(&d, 3, &port, &reqid);
	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_IP_REASSEMBLED], 1);
	assert_int_equal(st.ctr[DP_CTR_IP_FRAG_MERGED], 2);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 1);
	t_dp_stop();
}

/* A node's reply that arrives as fragments is reassembled and reaches the client fragmented
 * again, byte for byte (memcached itself keeps datagrams at 1400 bytes; another server, or a
 * kernel that reassembled, may not). */
static void test_reply_fragments_back_to_client(void **state)
{
	static struct dgram d, r;
	static uint8_t got[16384], body[3000];
	uint8_t src[16], dst[16], mac[6];
	size_t offs[16], n;
	uint16_t port, reqid;
	int k, frames;
	uint32_t rip, nip;

	(void)state;
	t_dp_start(1, 4, NULL);
	request_dgram(&d, false, "v", 10, 7, 19);
	t_inject(0, frame_of(&d, 0, d.ulen, false, false));
	t_poll(0);
	expect_at_node(&d, 1, &port, &reqid);
	/* VALUE v 0 2978\r\n<2978 bytes>\r\nEND\r\n in one 3000-byte datagram. */
	int h = snprintf((char *)body, sizeof(body), "VALUE v 0 %d\r\n", 3000 - 17 - 7);

	for (size_t i = (size_t)h; i < sizeof(body) - 7; i++)
		body[i] = (uint8_t)('A' + i % 26);
	memcpy(body + sizeof(body) - 7, "\r\nEND\r\n", 7);
	memset(&r, 0, sizeof(r));
	rip = t_ip(T_ROUTER_IP);
	nip = t_ip(owner_sip("v"));
	memcpy(r.src, &nip, 4);
	memcpy(r.dst, &rip, 4);
	static uint8_t nmac[6];

	t_node_mac(owner_sip("v"), nmac);
	r.smac = nmac;
	r.dmac = t_router_mac;
	r.id = 77;
	r.ulen = udp_build(r.udp, r.src, r.dst, 4, 11211, port, reqid, 0, 1, body, sizeof(body));
	int nf = split(&r, MTU, offs);

	for (k = nf - 1; k >= 0; k--)
		t_inject(0, frag_k(&r, offs, nf, k));
	t_poll(0);
	n = receive(false, got, src, dst, &frames, mac);
	assert_int_equal(frames, 3);
	assert_int_equal(n, r.ulen);
	assert_memory_equal(mac, t_client_mac, 6);
	assert_int_equal(udp_sum(src, dst, 4, got, n), 0xffff);
	assert_int_equal(got[8] << 8 | got[9], 19); /* the client's request id */
	assert_memory_equal(got + 16, body, sizeof(body));
	assert_int_equal(t_stats().ctr[DP_CTR_SLOTS_COMPLETED], 1);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_fragments_in_and_out_of_order),
		cmocka_unit_test(test_v4_duplicate_fragment),
		cmocka_unit_test(test_v4_missing_fragment_times_out),
		cmocka_unit_test(test_whole_over_mtu_is_fragmented),
		cmocka_unit_test(test_too_big_is_dropped_before_a_slot),
		cmocka_unit_test(test_v6_fragments),
		cmocka_unit_test(test_reply_fragments_back_to_client),
	};

	t_eal_setup("dp_frag", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
