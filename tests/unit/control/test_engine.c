/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine: epochs (+1 per applied change, never for reads or refusals), if-epoch,
 * transactions, replace, plan against the placement library, publish and its failure,
 * list/ring/stats replies.
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl_test.h"

/* When set, fsync of a directory fails with EIO. The control library is linked statically,
 * so this definition is the fsync it calls. */
static bool fail_dir_fsync;

int fsync(int fd)
{
	struct stat sb;

	if (fail_dir_fsync && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

struct recorder {
	unsigned calls;
	uint64_t last_epoch;
	uint32_t last_members;
	int fail;	  /* negative errno to return */
	uint32_t keeps;	  /* members of the last publication marked --keep */
	char kept[64];	  /* the last of them */
};

static int rec_publish(void *ctx, const struct ctl_state *next, const struct pl_placement *pl)
{
	struct recorder *r = ctx;

	assert_int_equal(pl_member_count(pl), ctl_state_count(next));
	for (uint32_t i = 0; i < ctl_state_count(next); i++)
		assert_string_equal(pl_member_at(pl, i)->name, ctl_state_member(next, i)->pl.name);
	if (r->fail)
		return r->fail;
	r->calls++;
	r->last_epoch = ctl_state_epoch(next);
	r->last_members = ctl_state_count(next);
	r->keeps = 0;
	for (uint32_t i = 0; i < ctl_state_count(next); i++)
		if (ctl_state_member(next, i)->keep) {
			r->keeps++;
			snprintf(r->kept, sizeof(r->kept), "%s", ctl_state_member(next, i)->pl.name);
		}
	return 0;
}

/* `--keep` reaches the publish hook on the member it was said of (the router flushes the
 * others when they join); said twice it is refused with the state unchanged; it is not part of
 * the digest, and a gutter node cannot have it. */
static void test_keep(void **state)
{
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	uint64_t digest;

	(void)state;
	test_ok(s, "add n4 198.18.1.4:11211", "OK epoch 2\n");
	assert_int_equal(rec.keeps, 0);
	digest = ctl_state_digest(ctl_engine_state(e));
	test_ok(s, "remove n4", "OK epoch 3\n");
	test_ok(s, "add n4 198.18.1.4:11211 --keep", "OK epoch 4\n");
	assert_int_equal(rec.keeps, 1);
	assert_string_equal(rec.kept, "n4");
	assert_int_equal(ctl_state_digest(ctl_engine_state(e)), digest);
	test_ok(s, "add n5 198.18.1.5 --keep weight 2 --keep", "ERROR add: '--keep' given twice");
	test_ok(s, "add n5 198.18.1.5 weight", "ERROR add: weight must be");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 4);
	assert_int_equal(rec.calls, 3);
	test_ok(s, "replace n1 198.18.1.1 ; n6 198.18.1.6 weight 3 --keep", "OK epoch 5\n");
	assert_int_equal(rec.keeps, 1);
	assert_string_equal(rec.kept, "n6");
	assert_int_equal(ctl_state_member(ctl_engine_state(e), 1)->pl.weight, 3);
	test_ok(s, "gutter add g1 198.18.2.1 --keep", "ERROR gutter add: --keep is for members");
	ctl_session_free(s);
	ctl_engine_free(e);
}

static uint64_t epoch_of(struct ctl_engine *e)
{
	return ctl_state_epoch(ctl_engine_state(e));
}

static void test_epoch_per_change(void **state)
{
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	test_ok(s, "epoch", "OK epoch 1\n");
	test_ok(s, "add n4 198.18.1.4:11211 weight 2 mac 02:00:00:00:00:04", "OK epoch 2\n");
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.last_epoch, 2);
	assert_int_equal(rec.last_members, 4);
	test_ok(s, "weight n4 5", "OK epoch 3\n");
	assert_int_equal(ctl_state_member(ctl_engine_state(e), 3)->pl.weight, 5);
	test_ok(s, "remove n2", "OK epoch 4\n");
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 3);
	assert_int_equal(ctl_state_find(ctl_engine_state(e), "n2"), -ENOENT);
	/* order of the others is kept: member i of the state is member i of the placement */
	assert_string_equal(ctl_state_member(ctl_engine_state(e), 1)->pl.name, "n3");
	test_ok(s, "replace a 198.18.2.1 ; b 198.18.2.2 weight 3", "OK epoch 5\n");
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 2);
	/* reads, plans and refusals never move the epoch */
	test_ok(s, "list", "OK lines 2 ");
	test_ok(s, "ring", "OK algo ring ");
	test_ok(s, "stats", "OK lines ");
	test_ok(s, "plan add c 198.18.2.3", "OK lines 3 moved ");
	test_ok(s, "remove zz", "ERROR unknown node zz");
	test_ok(s, "epoch", "OK epoch 5\n");
	assert_int_equal(rec.calls, 4);
	/* the same weight again is still an applied change */
	test_ok(s, "weight a 1", "OK epoch 6\n");
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The socket refuses the node addresses the config refuses, and changes nothing. */
static void test_refused_addresses(void **state)
{
	static const char *const bad[] = {
		"add x 0.0.0.0",
		"add x 0.1.2.3:11211",
		"add x 127.0.0.1",
		"add x 224.0.0.1",
		"add x 239.1.1.1",
		"add x 240.0.0.1",
		"add x 255.255.255.255",
		"plan add x 127.0.0.2",
		"replace a 198.18.2.1 ; b 127.0.0.1",
	};
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	char *before = test_line(s, "list");

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		test_ok(s, bad[i], "ERROR ");
	test_ok(s, "replace a 198.18.2.1 ; b 255.255.255.255", "ERROR replace: member 2: address");
	/* the router's own address, once the router names it (canonical forms compared) */
	assert_int_equal(ctl_engine_set_router_address(e, "198.18.0.1"), 0);
	assert_int_equal(ctl_engine_set_router_address(e, "no.such"), -EINVAL);
	assert_int_equal(ctl_engine_set_router_address(e, "198.18.0.1"), 0);
	test_ok(s, "add x 198.18.0.1:11311", "ERROR node x: 198.18.0.1 is the router's own");
	test_ok(s, "plan add x 198.18.0.1", "ERROR node x: 198.18.0.1 is the router's own");
	test_ok(s, "replace a 198.18.2.1 ; r 198.18.0.1", "ERROR node r: 198.18.0.1 is the");
	test_ok(s, "begin", "OK transaction open");
	test_ok(s, "add x 198.18.0.1",
		"ERROR node x: 198.18.0.1 is the router's own address "
		"(transaction still open)");
	test_ok(s, "commit", "OK epoch 1 changes 0");
	test_ok(s, "epoch", "OK epoch 1\n");
	assert_int_equal(rec.calls, 0);
	char *after = test_line(s, "list");
	assert_string_equal(before, after);
	/* other addresses are still fine */
	test_ok(s, "add x 198.18.0.2", "OK epoch 2\n");
	/* an IPv4-only router (no address6) cannot reach an IPv6 node: refused, nothing moves */
	test_ok(s, "add y [2001:2::9]",
		"ERROR node y: 2001:2::9 is IPv6 and the router has no IPv6 address (set [router] "
		"address6)");
	test_ok(s, "epoch", "OK epoch 2\n");
	assert_int_equal(ctl_engine_set_router_address(e, "2001:2::1"), 0);
	test_ok(s, "add y [2001:2::9]", "OK epoch 3\n");
	free(before);
	free(after);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The state file was renamed into place but its directory could not be synced: the change
 * is made (file, workers and reply agree), and the reply says it may not be durable. */
static void test_dir_fsync_failure(void **state)
{
	char dir[] = "/tmp/ctl_engine_XXXXXX", path[64], err[256];
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	struct ctl_state *loaded = NULL;
	struct ctl_engine *e;
	struct ctl_session *s;
	char *stats;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	e = test_engine(3, path, &ops);
	s = ctl_session_new(e);
	fail_dir_fsync = true;
	test_ok(s, "add n4 198.18.1.4", "OK epoch 2 durable no\n");
	fail_dir_fsync = false;
	assert_int_equal(rec.calls, 1);
	assert_int_equal(rec.last_epoch, 2);
	assert_int_equal(epoch_of(e), 2);
	assert_int_equal(ctl_state_load(path, &loaded, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(loaded, ctl_engine_state(e)));
	stats = test_line(s, "stats");
	assert_non_null(strstr(stats, "\nctl.save_not_durable 1\n"));
	assert_non_null(strstr(stats, "\nctl.save_failed 0\n"));
	test_ok(s, "add n5 198.18.1.5", "OK epoch 3\n");
	free(stats);
	ctl_state_free(loaded);
	ctl_session_free(s);
	ctl_engine_free(e);
	unlink(path);
	rmdir(dir);
}

static void test_if_epoch(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_session *other = ctl_session_new(e);

	(void)state;
	test_ok(s, "if-epoch 1 weight n1 2", "OK epoch 2\n");
	test_ok(s, "if-epoch 1 weight n1 3", "ERROR epoch is 2\n");
	assert_int_equal(ctl_state_member(ctl_engine_state(e), 0)->pl.weight, 2);
	test_ok(other, "remove n3", "OK epoch 3");
	test_ok(s, "if-epoch 2 add n9 198.18.1.9", "ERROR epoch is 3\n");
	test_ok(s, "if-epoch 3 add n9 198.18.1.9", "OK epoch 4\n");
	test_ok(s, "if-epoch 4 list", "OK lines 3 ");
	test_ok(s, "if-epoch 5 list", "ERROR epoch is 4\n");
	test_ok(s, "if-epoch 4 plan remove n9", "OK lines 3 moved ");
	assert_int_equal(epoch_of(e), 4);
	ctl_session_free(other);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_transaction(void **state)
{
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_session *other = ctl_session_new(e);

	(void)state;
	test_ok(s, "begin", "OK transaction open epoch 1\n");
	test_ok(s, "begin", "ERROR a transaction is already open (nested begin)");
	test_ok(s, "add n4 198.18.1.4", "OK queued 1\n");
	test_ok(s, "weight n1 7", "OK queued 2\n");
	test_ok(s, "remove n2", "OK queued 3\n");
	/* a refused change leaves the pending membership and the transaction as they were */
	test_ok(s, "add n5 198.18.1.4", "ERROR duplicate address");
	test_ok(s, "remove n2", "ERROR unknown node n2 (transaction still open)");
	/* inside: list shows the pending membership; the live one is untouched */
	test_ok(s, "list", "OK lines 3 members 3 epoch 1 pending yes\n");
	test_ok(s, "epoch", "OK epoch 1\n");
	test_ok(other, "list", "OK lines 3 members 3 epoch 1\n");
	assert_int_equal(ctl_state_find(ctl_engine_state(e), "n4"), -ENOENT);
	assert_int_equal(rec.calls, 0);
	test_ok(s, "commit", "OK epoch 2\n");
	assert_int_equal(rec.calls, 1); /* one publication for three changes */
	assert_int_equal(epoch_of(e), 2);
	assert_true(ctl_state_find(ctl_engine_state(e), "n4") >= 0);
	assert_int_equal(ctl_state_find(ctl_engine_state(e), "n2"), -ENOENT);
	assert_int_equal(ctl_state_member(ctl_engine_state(e), 0)->pl.weight, 7);
	test_ok(s, "commit", "ERROR commit without begin");

	/* abort drops everything */
	test_ok(s, "begin", "OK transaction open epoch 2");
	test_ok(s, "remove n1", "OK queued 1");
	test_ok(s, "abort", "OK transaction aborted changes 1\n");
	assert_true(ctl_state_find(ctl_engine_state(e), "n1") >= 0);
	test_ok(s, "abort", "ERROR abort without begin");

	/* an empty transaction commits nothing */
	test_ok(s, "begin", "OK transaction open epoch 2");
	test_ok(s, "commit", "OK epoch 2 changes 0\n");
	assert_int_equal(rec.calls, 1);

	/* somebody else changed the membership meanwhile: the commit is refused */
	test_ok(s, "begin", "OK transaction open epoch 2");
	test_ok(s, "add n8 198.18.1.8", "OK queued 1");
	test_ok(other, "weight n3 4", "OK epoch 3");
	test_ok(s, "commit", "ERROR epoch is 3, the transaction began at 2: transaction discarded");
	assert_int_equal(ctl_state_find(ctl_engine_state(e), "n8"), -ENOENT);
	assert_int_equal(epoch_of(e), 3);

	/* if-epoch on commit */
	test_ok(s, "begin", "OK transaction open epoch 3");
	test_ok(s, "weight n1 1", "OK queued 1");
	test_ok(s, "if-epoch 2 commit", "ERROR epoch is 3\n");
	test_ok(s, "if-epoch 3 commit", "OK epoch 4\n");

	/* a session that goes away with an open transaction changes nothing */
	test_ok(other, "begin", "OK transaction open epoch 4");
	test_ok(other, "remove n1", "OK queued 1");
	ctl_session_free(other);
	assert_true(ctl_state_find(ctl_engine_state(e), "n1") >= 0);
	assert_int_equal(epoch_of(e), 4);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_replace_block(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *before;

	(void)state;
	assert_null(test_line(s, "replace"));
	assert_null(test_line(s, "a 198.18.3.1:11211 weight 2"));
	assert_null(test_line(s, ""));
	assert_null(test_line(s, "b 198.18.3.2 mac 02:00:00:00:00:02"));
	test_ok(s, "end", "OK epoch 2\n");
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 2);
	assert_true(ctl_state_member(ctl_engine_state(e), 1)->has_mac);

	/* a bad member line: reported at end with its line number, nothing changes */
	before = ctl_state_copy(ctl_engine_state(e));
	assert_null(test_line(s, "replace"));
	assert_null(test_line(s, "a 198.18.3.1"));
	assert_null(test_line(s, "b 198.18.3.300"));
	assert_null(test_line(s, "c 198.18.3.3"));
	test_ok(s, "end", "ERROR replace line 2: bad address '198.18.3.300'");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	/* duplicates across lines */
	assert_null(test_line(s, "replace"));
	assert_null(test_line(s, "a 198.18.3.1"));
	assert_null(test_line(s, "a 198.18.3.2"));
	test_ok(s, "end", "ERROR duplicate name: a");
	/* an empty block */
	assert_null(test_line(s, "replace"));
	test_ok(s, "end", "ERROR the member list is empty");
	/* if-epoch is checked at end */
	assert_null(test_line(s, "if-epoch 1 replace"));
	assert_null(test_line(s, "z 198.18.3.9"));
	test_ok(s, "end", "ERROR epoch is 2\n");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	/* plan replace as a block */
	assert_null(test_line(s, "plan replace"));
	assert_null(test_line(s, "a 198.18.3.1 weight 2"));
	test_ok(s, "end", "OK lines 2 moved ");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	/* after a block the session is back to commands */
	test_ok(s, "epoch", "OK epoch 2\n");
	ctl_state_free(before);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* 10,000 members through one replace block: one epoch, every member kept in order. */
static void test_replace_large(void **state)
{
	struct ctl_engine *e = test_engine(2, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	char line[128];

	(void)state;
	assert_null(test_line(s, "replace"));
	for (unsigned i = 0; i < 10000; i++) {
		snprintf(line, sizeof(line), "m%u 198.%u.%u.%u:11211", i, 18 + i / 65536,
			 (i / 256) % 256, i % 256);
		assert_null(test_line(s, line));
	}
	test_ok(s, "end", "OK epoch 2\n");
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 10000);
	assert_string_equal(ctl_state_member(ctl_engine_state(e), 9999)->pl.name, "m9999");
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* Parse "key value" out of a reply head. */
static double head_value(const char *reply, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s ", key);
	p = strstr(reply, pat);
	assert_non_null(p);
	return strtod(p + strlen(pat), NULL);
}

static void test_plan_matches_placement(void **state)
{
	struct ctl_engine *e = test_engine(4, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *after = ctl_state_copy(ctl_engine_state(e));
	struct pl_placement *pa, *pb;
	struct ctl_member m;
	double want, shares[5], sum = 0;
	char err[128], *r, *line;

	(void)state;
	assert_int_equal(ctl_member_parse("n5 198.18.1.5:11211 weight 2", 28, &m, err, sizeof(err)),
			 0);
	assert_int_equal(ctl_state_add(after, &m, err, sizeof(err)), 0);
	pa = ctl_state_build(ctl_engine_state(e), err, sizeof(err));
	pb = ctl_state_build(after, err, sizeof(err));
	assert_int_equal(pl_moved_fraction(pa, pb, &want), 0);
	assert_int_equal(pl_shares(pb, shares), 0);

	r = test_expect(s, "plan add n5 198.18.1.5:11211 weight 2", "OK lines 5 moved ");
	assert_true(fabs(head_value(r, "moved") - want) < 1e-6);
	assert_true(want > 0.2 && want < 0.5); /* weight 2 of 6: about a third */
	/* on a ring only keys that go to the new member move: moved == its new share */
	line = strstr(r, "name n5 ");
	assert_non_null(line);
	assert_true(fabs(strtod(strstr(line, "share_after ") + 12, NULL) - shares[4]) < 1e-6);
	assert_true(fabs(shares[4] - want) < 1e-6);
	assert_non_null(strstr(line, "change added"));
	assert_non_null(strstr(r, "name n1 share_before "));
	assert_non_null(strstr(r, "change kept"));
	assert_int_equal(epoch_of(e), 1);
	free(r);

	/* remove: what n2 owned moves, nothing else */
	r = test_expect(s, "plan remove n2", "OK lines 4 moved ");
	line = strstr(r, "name n2 share_before ");
	assert_non_null(line);
	assert_true(fabs(head_value(r, "moved") - strtod(line + 21, NULL)) < 1e-6);
	assert_non_null(strstr(line, "share_after 0.000000 change removed"));
	free(r);
	r = test_expect(s, "plan weight n3 3", "OK lines 4 moved ");
	assert_non_null(strstr(r, "change reweighted"));
	free(r);

	/* list: shares of the live placement, summing to 1 */
	r = test_expect(s, "list", "OK lines 4 members 4 epoch 1\n");
	for (const char *p = strstr(r, " share "); p; p = strstr(p + 1, " share "))
		sum += strtod(p + 7, NULL);
	assert_true(fabs(sum - 1.0) < 1e-5);
	assert_non_null(strstr(r, "name n1 addr 198.18.1.1:11211 weight 1 state active share "));
	assert_non_null(strstr(r, " mac arp\n"));
	free(r);
	pl_free(pa);
	pl_free(pb);
	ctl_state_free(after);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static int stats_cb(void *ctx, struct ctl_text *out)
{
	(void)ctx;
	return ctl_text_appendf(out, "rx 10\nforwarded 7\ndropped.bad_udp 3"); /* no last \n */
}

static void status_cb(void *ctx, uint32_t idx, const struct ctl_member *m, struct ctl_text *out)
{
	(void)ctx;
	ctl_text_appendf(out, " idx %u neigh %s", idx, m->has_mac ? "static" : "resolving");
}

static void test_list_ring_stats(void **state)
{
	struct ctl_ops ops = {.stats = stats_cb, .member_status = status_cb};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	char *r, want[32];

	(void)state;
	test_ok(s, "weight n2 0", "OK epoch 2");
	test_ok(s, "add n4 198.18.1.4 mac 02:00:00:00:00:44", "OK epoch 3");
	r = test_expect(s, "list", "OK lines 4 members 4 epoch 3\n");
	assert_non_null(strstr(r, "name n2 addr 198.18.1.2:11211 weight 0 state drained "
				  "share 0.000000 mac arp idx 1 neigh resolving\n"));
	assert_non_null(strstr(r, "mac 02:00:00:00:00:44 idx 3 neigh static\n"));
	free(r);
	r = test_expect(s, "ring",
			"OK algo ring vnodes 160 points 480 members 4 weighted 3 "
			"hash_tag none memory ");
	assert_non_null(strstr(r, " epoch 3\n"));
	free(r);
	/* one line per CTL_FOREACH_COUNTER row, then ctl.epoch, ctl.members, the router's 3 */
	snprintf(want, sizeof(want), "OK lines %zu\n",
		 sizeof(struct ctl_counters) / sizeof(uint64_t) + 2 + 3);
	r = test_expect(s, "stats", want);
	assert_non_null(strstr(r, "\nctl.changes 2\n"));
	/* Publish latency of the last change, and the largest (microseconds). */
	assert_non_null(strstr(r, "\nctl.change_last_us "));
	assert_non_null(strstr(r, "\nctl.change_max_us "));
	assert_non_null(strstr(r, "\nctl.epoch 3\n"));
	assert_non_null(strstr(r, "\nrx 10\nforwarded 7\ndropped.bad_udp 3\n"));
	free(r);
	ctl_session_free(s);
	ctl_engine_free(e);
}

struct health_rec {
	char name[PL_NAME_MAX + 1];
	enum ctl_health what;
	int calls;
};

static int health_cb(void *ctx, const char *name, enum ctl_health what, char *err, size_t errlen)
{
	struct health_rec *h = ctx;

	if (strcmp(name, "n3") == 0) {
		snprintf(err, errlen, "n3: keys were lost");
		return -ESTALE;
	}
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->what = what;
	h->calls++;
	return 0;
}

/* `health NAME down|up [--flush|--accept-stale]` reaches the router's hook and never changes
 * the membership or its epoch; malformed forms and unknown nodes are refused before it. */
static void test_health(void **state)
{
	struct health_rec h = {0};
	struct ctl_ops ops = {.health = health_cb, .ctx = &h};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	test_ok(s, "health n1 down", "OK health n1 down epoch 1");
	assert_string_equal(h.name, "n1");
	assert_int_equal(h.what, CTL_HEALTH_DOWN);
	test_ok(s, "health n2 up", "OK health n2 up epoch 1");
	assert_int_equal(h.what, CTL_HEALTH_UP);
	test_ok(s, "health n2 up --flush", "OK health n2 up flushed epoch 1");
	assert_int_equal(h.what, CTL_HEALTH_UP_FLUSH);
	test_ok(s, "health n2 up --accept-stale", "OK health n2 up stale accepted epoch 1");
	assert_int_equal(h.what, CTL_HEALTH_UP_ACCEPT_STALE);
	assert_int_equal(h.calls, 4);
	free(test_expect(s, "health n3 up", "ERROR n3: keys were lost\n"));
	free(test_expect(s, "health n9 down", "ERROR unknown node n9\n"));
	free(test_expect(s, "health n1 sideways", "ERROR usage: health NAME down|up"));
	free(test_expect(s, "health n1 down --flush", "ERROR health: unexpected arguments"));
	free(test_expect(s, "health n1 up --later", "ERROR usage: health NAME down|up"));
	free(test_expect(s, "health", "ERROR usage: health NAME down|up"));
	assert_int_equal(h.calls, 4);
	test_ok(s, "epoch", "OK epoch 1");
	ctl_session_free(s);
	ctl_engine_free(e);
}

static int warmup_cb(void *ctx, bool end, struct ctl_text *out, char *err, size_t errlen)
{
	int *ends = ctx;

	if (end && (*ends)++ > 0) {
		snprintf(err, errlen, "no warm-up window open");
		return -ENOENT;
	}
	ctl_text_appendf(out, "OK warmup %s\n", end ? "ended" : "open");
	return 0;
}

/* `warmup [end]` reaches the router's hook, membership untouched; other words are refused. */
static void test_warmup(void **state)
{
	int ends = 0;
	struct ctl_ops ops = {.warmup = warmup_cb, .ctx = &ends};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	test_ok(s, "warmup", "OK warmup open");
	test_ok(s, "warmup end", "OK warmup ended");
	free(test_expect(s, "warmup end", "ERROR no warm-up window open\n"));
	free(test_expect(s, "warmup later", "ERROR usage: warmup [end]"));
	assert_int_equal(ends, 2);
	test_ok(s, "epoch", "OK epoch 1");
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* A fake router's drain: what each op was, whether it drains. */
struct drain_rec {
	enum ctl_drain ops[8];
	int n;
	bool draining;
};

static int drain_cb(void *ctx, enum ctl_drain op, struct ctl_text *out, char *err, size_t errlen)
{
	static const char *const answer[] = {"config", "error", "silent"};
	struct drain_rec *d = ctx;

	d->ops[d->n++ & 7] = op;
	if (op == CTL_DRAIN_STOP && !d->draining) {
		snprintf(err, errlen, "not draining");
		return -ENOENT;
	}
	if (op <= CTL_DRAIN_START_SILENT)
		d->draining = true;
	if (op == CTL_DRAIN_STOP)
		d->draining = false;
	ctl_text_appendf(out, "OK drain %s", d->draining ? "draining" : "serving");
	if (op <= CTL_DRAIN_START_SILENT)
		ctl_text_appendf(out, " answer %s", answer[op]);
	ctl_text_appendf(out, "\n");
	return 0;
}

/* `drain [error|silent|status]` and `undrain` reach the router's hook with what was asked;
 * bad forms are refused before it (state unchanged), its refusal is the client's ERROR, the
 * membership is never touched; without a data plane the command is refused. */
static void test_drain(void **state)
{
	struct drain_rec d = {0};
	struct ctl_ops ops = {.drain = drain_cb, .ctx = &d};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	test_ok(s, "drain status", "OK drain serving");
	free(test_expect(s, "undrain", "ERROR not draining\n"));
	free(test_expect(s, "drain later", "ERROR usage: drain [error|silent|status]"));
	free(test_expect(s, "drain error now", "ERROR drain: unexpected arguments"));
	free(test_expect(s, "undrain now", "ERROR undrain: unexpected arguments"));
	assert_int_equal(d.n, 2); /* the refused forms never reached the router */
	assert_false(d.draining);
	test_ok(s, "drain", "OK drain draining answer config");
	test_ok(s, "drain silent", "OK drain draining answer silent");
	test_ok(s, "drain error", "OK drain draining answer error");
	test_ok(s, "undrain", "OK drain serving");
	assert_int_equal(d.n, 6);
	assert_int_equal(d.ops[0], CTL_DRAIN_STATUS);
	assert_int_equal(d.ops[1], CTL_DRAIN_STOP);
	assert_int_equal(d.ops[2], CTL_DRAIN_START);
	assert_int_equal(d.ops[3], CTL_DRAIN_START_SILENT);
	assert_int_equal(d.ops[4], CTL_DRAIN_START_ERROR);
	assert_int_equal(d.ops[5], CTL_DRAIN_STOP);
	test_ok(s, "epoch", "OK epoch 1");
	ctl_session_free(s);
	ctl_engine_free(e);

	e = test_engine(3, NULL, NULL);
	s = ctl_session_new(e);
	free(test_expect(s, "drain", "ERROR no data plane to drain"));
	free(test_expect(s, "undrain", "ERROR no data plane to drain"));
	ctl_session_free(s);
	ctl_engine_free(e);
}

struct gutter_rec {
	char names[4][PL_NAME_MAX + 1];
	uint32_t n;
	int calls;
};

/* A pool of at most 4 nodes, listed as `name N addr A:P`. */
static int gutter_cb(void *ctx, enum ctl_gutter op, const struct ctl_member *m,
		     struct ctl_text *out, char *err, size_t errlen)
{
	struct gutter_rec *g = ctx;

	g->calls++;
	if (op == CTL_GUTTER_LIST) {
		for (uint32_t i = 0; i < g->n; i++)
			ctl_text_appendf(out, "name %s\n", g->names[i]);
		return (int)g->n;
	}
	if (op == CTL_GUTTER_ADD) {
		if (g->n == 4) {
			snprintf(err, errlen, "gutter pool full");
			return -ENOSPC;
		}
		snprintf(g->names[g->n++], PL_NAME_MAX + 1, "%s", m->pl.name);
		return 0;
	}
	for (uint32_t i = 0; i < g->n; i++)
		if (strcmp(g->names[i], m->pl.name) == 0) {
			memmove(g->names[i], g->names[i + 1], (g->n - i - 1) * sizeof(g->names[0]));
			g->n--;
			return 0;
		}
	snprintf(err, errlen, "no gutter node %s", m->pl.name);
	return -ENOENT;
}

/* `gutter add|remove|list` reaches the router's hook with the parsed node, never changes the
 * membership or its epoch, and refuses a member's name and malformed forms before the hook. */
static void test_gutter(void **state)
{
	struct gutter_rec g = {0};
	struct ctl_ops ops = {.gutter = gutter_cb, .ctx = &g};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	char *r;

	(void)state;
	test_ok(s, "gutter add g1 10.0.0.50:11211", "OK gutter add g1 epoch 1");
	test_ok(s, "gutter add g2 10.0.0.51 weight 2", "OK gutter add g2 epoch 1");
	r = test_expect(s, "gutter list", "OK lines 2 gutter 2 epoch 1\nname g1\nname g2\n");
	free(r);
	test_ok(s, "gutter remove g1", "OK gutter remove g1 epoch 1");
	free(test_expect(s, "gutter remove g1", "ERROR no gutter node g1\n"));
	assert_int_equal(g.calls, 5);
	free(test_expect(s, "gutter add n1 10.0.0.60", "ERROR n1 is a member, not a gutter node"));
	free(test_expect(s, "gutter add g3", "ERROR gutter add: "));
	free(test_expect(s, "gutter sideways", "ERROR usage: gutter add NAME"));
	free(test_expect(s, "gutter", "ERROR usage: gutter add NAME"));
	free(test_expect(s, "gutter list now", "ERROR gutter: unexpected arguments"));
	assert_int_equal(g.calls, 5);
	test_ok(s, "epoch", "OK epoch 1");
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The router's hot-key callback: the count asked for, pairs on the head, a line a key. */
static int hotkeys_cb(void *ctx, uint32_t n, struct ctl_text *head, struct ctl_text *lines)
{
	*(uint32_t *)ctx = n;
	ctl_text_appendf(head, " sampled 90 bound_rate 12");
	for (uint32_t i = 0; i < n && i < 3; i++)
		ctl_text_appendf(lines, "rank %u key k%u rate %u owner n1\n", i + 1, i, 300 - i);
	return 0;
}

/* `hotkeys [N]`: N (default 10) reaches the router, its lines are framed; bad N refused;
 * a router without the callback answers an error. */
static void test_hotkeys(void **state)
{
	uint32_t asked = 0;
	struct ctl_ops ops = {.hotkeys = hotkeys_cb, .ctx = &asked};
	struct ctl_engine *e = test_engine(3, NULL, &ops), *bare = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e), *sb = ctl_session_new(bare);
	char *r;

	(void)state;
	r = test_expect(s, "hotkeys",
			"OK lines 3 sampled 90 bound_rate 12\n"
			"rank 1 key k0 rate 300 owner n1\n"
			"rank 2 key k1 rate 299 owner n1\n"
			"rank 3 key k2 rate 298 owner n1\n");
	free(r);
	assert_int_equal(asked, 10);
	r = test_expect(s, "hotkeys 2", "OK lines 2 sampled 90 bound_rate 12\n");
	free(r);
	assert_int_equal(asked, 2);
	r = test_expect(s, "hotkeys 0", "ERROR hotkeys: N must be an integer 1..4096\n");
	free(r);
	r = test_expect(s, "hotkeys x", "ERROR hotkeys: N must be an integer 1..4096\n");
	free(r);
	r = test_expect(s, "hotkeys 3 4", "ERROR hotkeys: unexpected arguments\n");
	free(r);
	r = test_expect(sb, "hotkeys", "ERROR hotkeys: this router has no hot-key detection\n");
	free(r);
	ctl_session_free(s);
	ctl_session_free(sb);
	ctl_engine_free(e);
	ctl_engine_free(bare);
}

/* The router's pin callback: records the last call; "busy" is refused. */
static char pinned_key[64];
static int pin_cb(void *ctx, bool pin, const char *key, size_t len, char *err, size_t errlen)
{
	(void)ctx;
	if (len == 4 && memcmp(key, "busy", 4) == 0) {
		snprintf(err, errlen, "too many hot keys");
		return -ENOSPC;
	}
	snprintf(pinned_key, sizeof(pinned_key), "%s %.*s", pin ? "+" : "-", (int)len, key);
	return 0;
}

/* `hot add|remove KEY`: the key reaches the router; usage errors; the router's refusal. */
static void test_hot_pin(void **state)
{
	struct ctl_ops ops = {.hot_pin = pin_cb};
	struct ctl_engine *e = test_engine(3, NULL, &ops), *bare = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e), *sb = ctl_session_new(bare);

	(void)state;
	test_ok(s, "hot add user:42", "OK pinned user:42");
	assert_string_equal(pinned_key, "+ user:42");
	test_ok(s, "hot remove user:42", "OK unpinned user:42");
	assert_string_equal(pinned_key, "- user:42");
	free(test_expect(s, "hot", "ERROR usage: hot add|remove KEY\n"));
	free(test_expect(s, "hot pin k", "ERROR usage: hot add|remove KEY\n"));
	free(test_expect(s, "hot add", "ERROR usage: hot add|remove KEY\n"));
	free(test_expect(s, "hot add a b", "ERROR hot: unexpected arguments\n"));
	free(test_expect(s, "hot add busy", "ERROR hot add busy: too many hot keys\n"));
	free(test_expect(sb, "hot add k", "ERROR hot: this router has no hot-key spreading\n"));
	ctl_session_free(s);
	ctl_session_free(sb);
	ctl_engine_free(e);
	ctl_engine_free(bare);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

/* A change is on disk before it is acknowledged; a failed publish puts the file back. */
static void test_persist_and_publish_failure(void **state)
{
	struct recorder rec = {0};
	struct ctl_ops ops = {.publish = rec_publish, .ctx = &rec};
	char dir[] = "/tmp/ctl_engine_XXXXXX", path[64], err[256];
	struct ctl_engine *e;
	struct ctl_session *s;
	struct ctl_state *loaded, *before;
	size_t l1, l2;
	char *b1, *b2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	e = test_engine(3, path, &ops);
	s = ctl_session_new(e);
	test_ok(s, "add n4 198.18.1.4 weight 3", "OK epoch 2");
	assert_int_equal(ctl_state_load(path, &loaded, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(loaded, ctl_engine_state(e)));
	ctl_state_free(loaded);

	b1 = slurp(path, &l1);
	before = ctl_state_copy(ctl_engine_state(e));
	rec.fail = -EIO;
	test_ok(s, "remove n1", "ERROR publish failed: Input/output error; nothing changed");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	b2 = slurp(path, &l2);
	assert_int_equal(l1, l2);
	assert_memory_equal(b1, b2, l1);
	free(b2);
	rec.fail = 0;

	/* the state file cannot be written: refused before publishing */
	chmod(dir, 0500);
	if (geteuid() != 0) {
		unsigned calls = rec.calls;

		test_ok(s, "remove n1", "ERROR state file ");
		assert_int_equal(rec.calls, calls);
		assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	}
	chmod(dir, 0700);
	ctl_session_free(s);
	ctl_engine_free(e);

	/* a directory that does not exist: same refusal, also as root */
	e = test_engine(2, "/nonexistent-ringway-dir/state", &ops);
	s = ctl_session_new(e);
	rec.calls = 0;
	test_ok(s, "weight n1 2", "ERROR state file /nonexistent-ringway-dir/state: cannot create");
	assert_int_equal(rec.calls, 0);
	assert_int_equal(epoch_of(e), 1);
	test_ok(s, "stats", "OK lines");
	ctl_session_free(s);
	ctl_engine_free(e);

	free(b1);
	ctl_state_free(before);
	unlink(path);
	rmdir(dir);
}

static void test_engine_refuses_bad_initial(void **state)
{
	(void)state;
	errno = 0;
	assert_null(ctl_engine_new(ctl_state_new(NULL, 1), NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

/* Every placement algorithm works through the control plane; plan says "unknown" only where
 * the placement library has no exact moved fraction. */
static void test_every_algorithm(void **state)
{
	(void)state;
	for (int a = 0; a < PL_ALGO_COUNT; a++) {
		struct pl_config cfg = {.algo = (enum pl_algo)a, .vnodes = 40};
		struct ctl_state *st = ctl_state_new(&cfg, 1);
		struct ctl_engine *e;
		struct ctl_session *s;
		struct ctl_member m;
		char spec[64], err[256], want[64], *r;

		for (int i = 1; i <= 4; i++) {
			snprintf(spec, sizeof(spec), "n%d 198.18.1.%d:11211", i, i);
			assert_int_equal(ctl_member_parse(spec, strlen(spec), &m, err, sizeof(err)),
					 0);
			assert_int_equal(ctl_state_add(st, &m, err, sizeof(err)), 0);
		}
		e = ctl_engine_new(st, NULL, NULL);
		assert_non_null(e);
		s = ctl_session_new(e);
		snprintf(want, sizeof(want), "OK algo %s ", pl_algo_name((enum pl_algo)a));
		test_ok(s, "ring", want);
		r = test_expect(s, "plan remove n2", "OK lines 4 moved ");
		if (strncmp(r, "OK lines 4 moved unknown", 24) != 0) {
			double f = strtod(r + 17, NULL);

			assert_true(f > 0.0 && f <= 1.0);
		} else {
			assert_true(a == PL_ALGO_RENDEZVOUS || a == PL_ALGO_MODULO);
		}
		free(r);
		test_ok(s, "add n5 198.18.1.5 weight 2", "OK epoch 2");
		test_ok(s, "remove n1", "OK epoch 3");
		test_ok(s, "weight n3 0", "OK epoch 4");
		test_ok(s, "list", "OK lines 4 members 4 epoch 4");
		ctl_session_free(s);
		ctl_engine_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_epoch_per_change),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_refused_addresses),
		cmocka_unit_test(test_dir_fsync_failure),
		cmocka_unit_test(test_if_epoch),
		cmocka_unit_test(test_transaction),
		cmocka_unit_test(test_replace_block),
		cmocka_unit_test(test_replace_large),
		cmocka_unit_test(test_plan_matches_placement),
		cmocka_unit_test(test_list_ring_stats),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_gutter),
		cmocka_unit_test(test_persist_and_publish_failure),
		cmocka_unit_test(test_hotkeys),
		cmocka_unit_test(test_hot_pin),
		cmocka_unit_test(test_engine_refuses_bad_initial),
		cmocka_unit_test(test_every_algorithm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
