/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drain (dp_drain_start / dp_drain_stop / dp_drain_get): a draining router answers new
 * requests with the protocol's error (or drops them, counted), still proxies the replies of
 * the requests in flight (a single get, a split multi-get), reports drained once no slot and
 * no multi-get is left on any worker, and serves again after dp_drain_stop.
 */
#include <stdio.h>
#include <string.h>

#include "dp_test.h"
#include "mcproto.h"

/* A key owned by member @p idx (k-<idx>-<n>, the first that is). */
static const char *key_of(int32_t idx, int nth)
{
	static char buf[4][32];
	static int next;
	char *k = buf[next++ & 3];

	for (int i = 0;; i++) {
		snprintf(k, 32, "k-%d-%d", nth, i);
		if (t_owner(k) == idx)
			return k;
	}
}

/* Send @p text from client port @p sport as request @p reqid, poll; the one packet that left
 * (NULL: none) and its view. */
static struct rte_mbuf *ask(uint16_t sport, uint16_t reqid, const void *text, size_t len,
			    struct t_view *v)
{
	struct rte_mbuf *m;

	t_inject(0, t_request(sport, reqid, text, len));
	t_poll(0);
	m = t_sent(0);
	if (m != NULL)
		t_view_udp(m, v, true);
	return m;
}

/* A forwarded request (viewed in @p f) answered by its node with @p body. */
static void answer(const struct t_view *f, const char *body)
{
	char ip[INET_ADDRSTRLEN];
	uint32_t a = f->ip->dst_addr;

	snprintf(ip, sizeof(ip), "%u.%u.%u.%u", a & 0xff, a >> 8 & 0xff, a >> 16 & 0xff, a >> 24);
	t_inject(0, t_reply(ip, 11211, rte_be_to_cpu_16(f->udp->src_port), f->reqid, 0, 1, body,
			    strlen(body)));
	t_poll(0);
}

static struct dp_drain_status drain_now(void)
{
	struct dp_drain_status ds;

	assert_int_equal(dp_drain_get(rig.dp, &ds), 0);
	return ds;
}

/* The answer a drained router gives @p text: the client's own request id, one datagram,
 * @p want as its body. */
static void expect_drain_answer(const void *text, size_t len, const void *want, size_t wlen)
{
	struct t_view v;
	struct rte_mbuf *m = ask(5001, 0x5151, text, len, &v);

	assert_non_null(m);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(rte_be_to_cpu_16(v.udp->dst_port), 5001);
	assert_int_equal(v.reqid, 0x5151);
	assert_int_equal(v.total, 1);
	assert_int_equal(v.plen, 8 + wlen);
	assert_memory_equal(v.payload + 8, want, wlen);
	rte_pktmbuf_free(m);
	assert_null(t_sent(0));
}

/*
 * Error mode: a get and a two-node multi-get in flight at the drain; new requests of every
 * protocol (and version) get the drain error at once; the in-flight replies still reach the
 * client; drained only once the last sub-reply merged; undrain serves again.
 */
static void test_error_answer(void **state)
{
	static const uint8_t want_bin[24] = {0x81, MC_BIN_GET, 0, 0, 0, 0, 0x00, 0x86,
					     0,	   0,	       0, 8, 0,	   0, 0,    0};
	uint8_t bin[64] = {0x80, MC_BIN_GET, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	const char *k0, *k1, *k2;
	struct t_view g, s1, s2, v;
	struct rte_mbuf *m, *fwd, *sub[2];
	struct dp_drain_status ds;
	struct dp_stats st;
	char text[128];
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	k0 = key_of(0, 0);
	k1 = key_of(1, 1);
	k2 = key_of(2, 2);
	assert_int_equal(drain_now().state, DP_DRAIN_SERVING);
	assert_int_equal(dp_drain_stop(rig.dp), -ENOENT); /* undrain of a serving router */
	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_ANSWER_COUNT), -EINVAL);
	assert_int_equal(drain_now().state, DP_DRAIN_SERVING);

	/* In flight: get k0, and get k1 k2 split over two nodes. */
	n = snprintf(text, sizeof(text), "get %s\r\n", k0);
	fwd = ask(5000, 0x4242, text, (size_t)n, &g);
	assert_non_null(fwd);
	n = snprintf(text, sizeof(text), "get %s %s\r\n", k1, k2);
	t_inject(0, t_request(5000, 0x4343, text, (size_t)n));
	t_poll(0);
	sub[0] = t_sent(0);
	sub[1] = t_sent(0);
	assert_non_null(sub[0]);
	assert_non_null(sub[1]);
	assert_null(t_sent(0));
	t_view_udp(sub[0], &s1, true);
	t_view_udp(sub[1], &s2, true);
	assert_int_equal(t_stats().slots_live, 3);

	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_ERROR), 0);
	ds = drain_now();
	assert_int_equal(ds.state, DP_DRAIN_DRAINING);
	assert_int_equal(ds.in_flight, 3);
	assert_int_equal(ds.in_flight_at_start, 3);
	assert_int_equal(ds.mget_live, 1);
	assert_int_equal(ds.answer, DP_DRAIN_ERROR);

	/* New requests: ASCII, meta, binary, version. */
	n = snprintf(text, sizeof(text), "get %s\r\n", k0);
	expect_drain_answer(text, (size_t)n, "SERVER_ERROR draining\r\n", 23);
	n = snprintf(text, sizeof(text), "mg %s v\r\n", k0);
	expect_drain_answer(text, (size_t)n, "SERVER_ERROR draining\r\n", 23);
	bin[3] = (uint8_t)strlen(k0);
	bin[11] = (uint8_t)strlen(k0);
	memcpy(bin + 24, k0, strlen(k0));
	t_inject(0, t_request(5001, 0x5151, bin, 24 + strlen(k0)));
	t_poll(0);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.plen, 8 + 24 + 8);
	assert_memory_equal(v.payload + 8, want_bin, 24);
	assert_memory_equal(v.payload + 32, "draining", 8);
	rte_pktmbuf_free(m);
	expect_drain_answer("version\r\n", 9, "SERVER_ERROR draining\r\n", 23);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING); /* polled, still in flight */

	/* The get's reply is proxied to its client, byte for byte. */
	answer(&g, "VALUE a 0 1\r\nx\r\nEND\r\n");
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.ip->dst_addr, t_ip(T_CLIENT_IP));
	assert_int_equal(v.reqid, 0x4242);
	assert_memory_equal(v.payload + 8, "VALUE a 0 1\r\nx\r\nEND\r\n", 21);
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(fwd);
	ds = drain_now();
	assert_int_equal(ds.state, DP_DRAIN_DRAINING);
	assert_int_equal(ds.in_flight, 2);

	/* One sub-reply: still draining; the second: the merged reply leaves, drained. */
	n = snprintf(text, sizeof(text), "VALUE %s 0 1\r\ny\r\nEND\r\n",
		     s1.ip->dst_addr == t_ip("198.18.1.2") ? k1 : k2);
	answer(&s1, text);
	assert_null(t_sent(0));
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING);
	n = snprintf(text, sizeof(text), "VALUE %s 0 1\r\nz\r\nEND\r\n",
		     s2.ip->dst_addr == t_ip("198.18.1.2") ? k1 : k2);
	answer(&s2, text);
	m = t_sent(0);
	assert_non_null(m);
	t_view_udp(m, &v, true);
	assert_int_equal(v.reqid, 0x4343);
	assert_non_null(memmem(v.payload + 8, v.plen - 8, "END\r\n", 5));
	rte_pktmbuf_free(m);
	t_poll(0);
	ds = drain_now();
	assert_int_equal(ds.state, DP_DRAIN_DRAINED);
	assert_int_equal(ds.in_flight, 0);
	assert_int_equal(ds.mget_live, 0);
	assert_int_equal(ds.in_flight_at_start, 3);

	st = t_stats();
	assert_int_equal(st.ctr[DP_CTR_DRAIN_ANSWERED], 4);
	assert_int_equal(st.drop[DP_DROP_DRAINING], 0);
	assert_int_equal(st.ctr[DP_CTR_FORWARDED], 2); /* the get and the multi-get */
	assert_int_equal(st.drain_state, DP_DRAIN_DRAINED);

	/* Undrain: served again. */
	assert_int_equal(dp_drain_stop(rig.dp), 0);
	assert_int_equal(drain_now().state, DP_DRAIN_SERVING);
	assert_int_equal(t_stats().drain_state, DP_DRAIN_SERVING);
	n = snprintf(text, sizeof(text), "get %s\r\n", k0);
	m = ask(5000, 0x4444, text, (size_t)n, &v);
	assert_non_null(m);
	assert_int_equal(v.ip->dst_addr, t_ip("198.18.1.1"));
	rte_pktmbuf_free(m);
	rte_pktmbuf_free(sub[0]);
	rte_pktmbuf_free(sub[1]);
	assert_int_equal(t_stats().ctr[DP_CTR_DRAIN_ANSWERED], 4);
	t_dp_stop();
}

/* Silent mode: new requests vanish, each counted as drop reason draining; with nothing in
 * flight the router is drained after one poll; `drain error` while drained changes only the
 * answer. */
static void test_silent(void **state)
{
	struct dp_drain_status ds;
	struct t_view v;
	struct rte_mbuf *m;
	char text[64];
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	n = snprintf(text, sizeof(text), "get %s\r\n", key_of(0, 3));
	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_SILENT), 0);
	/* Not drained before a worker has seen the drain. */
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING);
	for (int i = 0; i < 5; i++)
		assert_null(ask(5000, (uint16_t)(0x100 + i), text, (size_t)n, &v));
	assert_int_equal(t_drop(DP_DROP_DRAINING), 5);
	ds = drain_now();
	assert_int_equal(ds.state, DP_DRAIN_DRAINED);
	assert_int_equal(ds.answer, DP_DRAIN_SILENT);
	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_ERROR), 0);
	ds = drain_now();
	assert_int_equal(ds.state, DP_DRAIN_DRAINED);
	assert_int_equal(ds.answer, DP_DRAIN_ERROR);
	expect_drain_answer(text, (size_t)n, "SERVER_ERROR draining\r\n", 23);
	assert_int_equal(t_stats().ctr[DP_CTR_DRAIN_ANSWERED], 1);
	assert_int_equal(t_drop(DP_DROP_DRAINING), 5);
	assert_int_equal(t_stats().ctr[DP_CTR_FORWARDED], 0);
	assert_int_equal(dp_drain_stop(rig.dp), 0);
	m = ask(5000, 0x200, text, (size_t)n, &v);
	assert_non_null(m);
	rte_pktmbuf_free(m);
	t_dp_stop();
}

/* Drained means every worker: one that has not polled since the drain keeps it draining. */
static void test_every_worker(void **state)
{
	(void)state;
	t_dp_start(2, 4, NULL);
	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_ERROR), 0);
	t_poll(0);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING);
	t_poll(1);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINED);
	/* A second drain after undrain is judged afresh: the old acknowledgements do not count. */
	assert_int_equal(dp_drain_stop(rig.dp), 0);
	t_poll(0);
	t_poll(1);
	assert_int_equal(dp_drain_start(rig.dp, DP_DRAIN_SILENT), 0);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING);
	t_poll(1);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINING);
	t_poll(0);
	assert_int_equal(drain_now().state, DP_DRAIN_DRAINED);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_answer),
		cmocka_unit_test(test_silent),
		cmocka_unit_test(test_every_worker),
	};

	t_eal_setup("dp_drain", "0", 2);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
