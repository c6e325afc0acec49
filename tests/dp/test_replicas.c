/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replicated pools (issue 31, replicas = 2): a set in each protocol reaches the owner and the
 * next distinct member of the replica walk byte for byte, the client gets the owner's one
 * answer and the replica's is consumed; writes whose result depends on the node (incr) are
 * applied at the owner and deleted at the replica; a down owner's keys are read from the
 * replica as they are (no delete first, no capped expiry: it holds them); a replica or an
 * owner that was down during writes is cleaned of those keys before it serves again.
 */

#include <stdio.h>
#include <string.h>

#include "dp_test.h"

#define PROBE_PORT (T_REPLY_BASE - 1)

static void two(struct dp_config *c)
{
	c->replicas = 2;
}

static const char *key_of(int32_t member)
{
	static char k[32];

	for (int i = 0;; i++) {
		snprintf(k, sizeof(k), "key%d", i);
		if (t_owner(k) == member)
			return k;
	}
}

/* The key's replica: the second distinct member of its walk. */
static int32_t replica_of(const char *key)
{
	uint32_t out[2];

	assert_int_equal(pl_replicas(rig.pl, pl_key_hash(rig.pl, key, strlen(key)), out, 2), 2);
	return (int32_t)out[1];
}

static uint32_t ip_of(int32_t member)
{
	char ip[24];

	snprintf(ip, sizeof(ip), "198.18.1.%d", member + 1);
	return t_ip(ip);
}

static void name_of(int32_t member, char name[16])
{
	snprintf(name, 16, "n%d", member + 1);
}

static enum hl_state health_of(int32_t member)
{
	struct dp_node_stats n;

	assert_int_equal(dp_member_node(rig.dp, (uint32_t)member, &n), 0);
	return n.health;
}

/* Send @p text (@p len bytes) as a client request; the packets that left, in order, into
 * @p out (at most @p max, each viewed in @p v). @return how many. */
static int ask(const void *text, size_t len, struct rte_mbuf **out, struct t_view *v, int max)
{
	int n = 0;
	struct rte_mbuf *m;

	t_inject(0, t_request(5000, 0x4242, text, len));
	t_poll(0);
	while ((m = t_sent(0)) != NULL) {
		assert_true(n < max);
		t_view_udp(m, &v[n], true);
		out[n++] = m;
	}
	return n;
}

/* A member answers on the port @p dport with request id @p id. */
static void node_says(int32_t member, uint16_t dport, uint16_t id, const char *body)
{
	char ip[24];

	snprintf(ip, sizeof(ip), "198.18.1.%d", member + 1);
	t_inject(0, t_reply(ip, 11211, dport, id, 0, 1, body, strlen(body)));
	t_poll(0);
}

/* One write in a protocol: the replica's copy (from the probe port) leaves first, the owner's
 * request from a reply port; both carry the client's bytes; only the owner's answer reaches
 * the client. */
static void one_write(const void *req, size_t len, const char *key, const char *answer)
{
	struct rte_mbuf *m[4];
	struct t_view v[4];
	int32_t owner = t_owner(key), rep = replica_of(key);
	uint64_t answers = t_stats().ctr[DP_CTR_REPL_ANSWERS];
	int n = ask(req, len, m, v, 4);

	assert_int_equal(n, 2);
	assert_int_equal(v[0].ip->dst_addr, ip_of(rep));
	assert_int_equal(rte_be_to_cpu_16(v[0].udp->src_port), PROBE_PORT);
	assert_int_equal(v[1].ip->dst_addr, ip_of(owner));
	assert_true(rte_be_to_cpu_16(v[1].udp->src_port) >= T_REPLY_BASE);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(v[i].plen, 8 + len);
		assert_memory_equal(v[i].payload + 8, req, len);
	}
	/* The replica's answer is consumed; the owner's is the client's one reply. */
	node_says(rep, PROBE_PORT, v[0].reqid, answer);
	assert_null(t_sent(0));
	assert_int_equal(t_stats().ctr[DP_CTR_REPL_ANSWERS], answers + 1);
	node_says(owner, rte_be_to_cpu_16(v[1].udp->src_port), v[1].reqid, answer);
	{
		struct rte_mbuf *r = t_sent(0);
		struct t_view rv;

		assert_non_null(r);
		t_view_udp(r, &rv, true);
		assert_int_equal(rv.ip->dst_addr, t_ip(T_CLIENT_IP));
		assert_int_equal(rv.reqid, 0x4242);
		assert_memory_equal(rv.payload + 8, answer, strlen(answer));
		rte_pktmbuf_free(r);
	}
	assert_null(t_sent(0));
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
}

static void test_set_each_protocol(void **state)
{
	char text[128];
	uint8_t bin[128] = {0x80, MC_BIN_SET, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0xca, 0xfe, 0, 1};
	const char *k;
	size_t kl;
	int n;

	(void)state;
	t_dp_start(1, 4, two);
	k = key_of(0);
	kl = strlen(k);
	n = snprintf(text, sizeof(text), "set %s 5 0 3\r\nabc\r\n", k);
	one_write(text, (size_t)n, k, "STORED\r\n");
	n = snprintf(text, sizeof(text), "ms %s 3 T0 F5\r\nabc\r\n", k);
	one_write(text, (size_t)n, k, "HD\r\n");
	/* binary SET: extras flags 5, exptime 0; key; value "abc" */
	bin[3] = (uint8_t)kl;
	bin[11] = (uint8_t)(8 + kl + 3);
	bin[24 + 3] = 5;
	memcpy(bin + 32, k, kl);
	memcpy(bin + 32 + kl, "abc", 3);
	/* The owner's answer: a binary response header's first bytes are enough here. */
	one_write(bin, 32 + kl + 3, k, "\x81\x01");
	assert_int_equal(t_stats().ctr[DP_CTR_REPL_COPIES], 3);
	{
		struct dp_stats s = t_stats();

		assert_true(dp_stats_identity(&s));
	}
	t_dp_stop();
}

/* incr depends on what the node holds: the owner applies it, the replica deletes the key. */
static void test_incr_deletes_at_replica(void **state)
{
	char text[64], want[64];
	struct rte_mbuf *m[4];
	struct t_view v[4];
	const char *k;
	int n, w;

	(void)state;
	t_dp_start(1, 4, two);
	k = key_of(1);
	n = snprintf(text, sizeof(text), "incr %s 1\r\n", k);
	assert_int_equal(ask(text, (size_t)n, m, v, 4), 2);
	assert_int_equal(v[0].ip->dst_addr, ip_of(replica_of(k)));
	w = snprintf(want, sizeof(want), "delete %s noreply\r\n", k);
	assert_int_equal(v[0].plen, 8 + (size_t)w);
	assert_memory_equal(v[0].payload + 8, want, (size_t)w);
	assert_int_equal(v[1].ip->dst_addr, ip_of(1));
	assert_memory_equal(v[1].payload + 8, text, (size_t)n);
	rte_pktmbuf_free(m[0]);
	rte_pktmbuf_free(m[1]);
	assert_int_equal(t_stats().ctr[DP_CTR_REPL_DELETES], 1);
	t_dp_stop();
}

/* The owner down: a read goes to the replica as it is (it holds the key: no delete first) and
 * its hit reaches the client; a write goes there too with its expiry untouched. */
static void test_owner_down_reads_replica(void **state)
{
	char text[64], name[16];
	struct rte_mbuf *m[4];
	struct t_view v[4];
	const char *k;
	int32_t rep;
	int n;

	(void)state;
	t_dp_start(1, 4, two);
	k = key_of(0);
	rep = replica_of(k);
	name_of(0, name);
	assert_int_equal(dp_health_admin(rig.dp, name, DP_HEALTH_DOWN), 0);
	n = snprintf(text, sizeof(text), "get %s\r\n", k);
	assert_int_equal(ask(text, (size_t)n, m, v, 4), 1);
	assert_int_equal(v[0].ip->dst_addr, ip_of(rep));
	assert_int_equal(v[0].plen, 8 + (size_t)n); /* old code: a delete first (a miss) */
	assert_memory_equal(v[0].payload + 8, text, (size_t)n);
	{
		char hit[80];
		int h = snprintf(hit, sizeof(hit), "VALUE %s 0 1\r\nx\r\nEND\r\n", k);
		struct rte_mbuf *r;
		struct t_view rv;

		node_says(rep, rte_be_to_cpu_16(v[0].udp->src_port), v[0].reqid, hit);
		r = t_sent(0);
		assert_non_null(r);
		t_view_udp(r, &rv, true);
		assert_int_equal(rv.ip->dst_addr, t_ip(T_CLIENT_IP));
		assert_memory_equal(rv.payload + 8, hit, (size_t)h);
		rte_pktmbuf_free(r);
	}
	rte_pktmbuf_free(m[0]);
	n = snprintf(text, sizeof(text), "set %s 0 0 1\r\ny\r\n", k);
	assert_int_equal(ask(text, (size_t)n, m, v, 4), 1);
	assert_int_equal(v[0].ip->dst_addr, ip_of(rep));
	assert_memory_equal(v[0].payload + 8, text, (size_t)n); /* not capped at failover_ttl_s */
	rte_pktmbuf_free(m[0]);
	{
		struct dp_stats s = t_stats();

		assert_int_equal(s.ctr[DP_CTR_REPL_FAILOVER], 2);
		assert_int_equal(s.ctr[DP_CTR_FAILOVER_UNKNOWN], 0);
		assert_int_equal(s.ctr[DP_CTR_FAILOVER_TTL], 0);
		assert_int_equal(s.ctr[DP_CTR_DIRTY_KEYS], 1); /* the owner's, for its return */
	}
	t_dp_stop();
}

/* Run the health tick and send what it queued. */
static struct rte_mbuf *tick(struct t_view *v)
{
	struct rte_mbuf *m;

	dp_health_poll(rig.dp);
	t_poll(0);
	m = t_sent(0);
	if (m != NULL)
		t_view_udp(m, v, true);
	return m;
}

/* The replica down during a write: the write goes to the owner alone, its key is recorded for
 * the replica and deleted there (the batch ending in version) before the replica serves;
 * until then a read with the owner down does not reach it. */
static void test_returning_replica_cleaned(void **state)
{
	char text[64], want[64], rname[16];
	struct rte_mbuf *m[4];
	struct t_view v[4], tv;
	const char *k;
	int32_t rep;
	int n;

	(void)state;
	t_dp_start(1, 4, two);
	k = key_of(2);
	rep = replica_of(k);
	name_of(rep, rname);
	assert_int_equal(dp_health_admin(rig.dp, rname, DP_HEALTH_DOWN), 0);
	n = snprintf(text, sizeof(text), "set %s 0 0 1\r\nz\r\n", k);
	assert_int_equal(ask(text, (size_t)n, m, v, 4), 1);
	assert_int_equal(v[0].ip->dst_addr, ip_of(2));
	rte_pktmbuf_free(m[0]);
	assert_int_equal(t_stats().ctr[DP_CTR_REPL_MISSED], 1);
	assert_int_equal(t_stats().ctr[DP_CTR_DIRTY_KEYS], 1);
	/* Back: the key it missed is deleted there first, from the probe port. */
	assert_null(tick(&tv)); /* held down by the operator: no probe */
	assert_int_equal(dp_health_admin(rig.dp, rname, DP_HEALTH_UP), 0);
	m[0] = tick(&tv);
	assert_non_null(m[0]);
	assert_int_equal(tv.ip->dst_addr, ip_of(rep));
	assert_int_equal(rte_be_to_cpu_16(tv.udp->src_port), PROBE_PORT);
	n = snprintf(want, sizeof(want), "delete %s noreply\r\nversion\r\n", k);
	assert_int_equal(tv.plen, 8 + (size_t)n);
	assert_memory_equal(tv.payload + 8, want, (size_t)n);
	rte_pktmbuf_free(m[0]);
	assert_int_equal(health_of(rep), HL_PROBING);
	node_says(rep, PROBE_PORT, tv.reqid, "VERSION 1.6.21\r\n");
	assert_null(tick(&tv));
	assert_int_equal(health_of(rep), HL_UP);
	assert_int_equal(t_stats().ctr[DP_CTR_PROBE_REPLIES], 1);
	t_dp_stop();
}

/* replicas = 1 (the default): a write reaches the owner alone. */
static void test_one_replica_unchanged(void **state)
{
	char text[64];
	struct rte_mbuf *m[4];
	struct t_view v[4];
	const char *k;
	int n;

	(void)state;
	t_dp_start(1, 4, NULL);
	k = key_of(3);
	n = snprintf(text, sizeof(text), "set %s 0 0 1\r\nz\r\n", k);
	assert_int_equal(ask(text, (size_t)n, m, v, 4), 1);
	assert_int_equal(v[0].ip->dst_addr, ip_of(3));
	rte_pktmbuf_free(m[0]);
	assert_int_equal(t_stats().ctr[DP_CTR_REPL_COPIES], 0);
	t_dp_stop();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_each_protocol),
		cmocka_unit_test(test_incr_deletes_at_replica),
		cmocka_unit_test(test_owner_down_reads_replica),
		cmocka_unit_test(test_returning_replica_cleaned),
		cmocka_unit_test(test_one_replica_unchanged),
	};

	t_eal_setup("dp_replicas", "0", 1);
	return t_eal_teardown(cmocka_run_group_tests(tests, NULL, NULL));
}
