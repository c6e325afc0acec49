/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control protocol's fleet side: `replace epoch E` (publish at the fleet's revision,
 * refused unless E is above the live epoch), the placement digest in `epoch`/`ring`/`fleet`
 * replies (equal for equal placements whatever the epoch, different for any member or
 * setting change), the fleet-managed mode (local changes refused with a clear ERROR), and the
 * text form the etcd key holds.
 */

#include <inttypes.h>

#include "ctl_test.h"

/* A standalone router's replies are as they were: no digest (every existing client and test
 * keeps working); a fleet-managed one adds `digest D fleet managed`. */
static void test_replies_by_mode(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	char *r;

	(void)state;
	test_ok(s, "epoch", "OK epoch 1\n");
	r = test_line(s, "ring");
	assert_null(strstr(r, "digest"));
	assert_non_null(strstr(r, " epoch 1\n"));
	free(r);
	test_ok(s, "fleet managed", "OK fleet managed epoch 1 digest ");
	r = test_line(s, "epoch");
	assert_int_equal(strlen(r), strlen("OK epoch 1 digest 0123456789abcdef fleet managed\n"));
	assert_int_equal(strncmp(r, "OK epoch 1 digest ", 18), 0);
	free(r);
	r = test_line(s, "ring");
	assert_non_null(strstr(r, " epoch 1 digest "));
	assert_non_null(strstr(r, " fleet managed\n"));
	free(r);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The 16 hex digits after "digest " in @p reply. */
static uint64_t digest_in(const char *reply)
{
	const char *p = strstr(reply, "digest ");

	if (p == NULL)
		fail_msg("no digest in '%s'", reply);
	return strtoull(p + 7, NULL, 16);
}

static uint64_t reply_digest(struct ctl_session *s, const char *line)
{
	char *r = test_expect(s, line, "OK ");
	uint64_t d = digest_in(r);

	free(r);
	return d;
}

static void test_replace_with_epoch(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *before;

	(void)state;
	test_ok(s, "replace epoch 40 a 198.18.3.1 ; b 198.18.3.2 weight 2", "OK epoch 40\n");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 40);
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 2);
	before = ctl_state_copy(ctl_engine_state(e));
	/* not above the live epoch: refused, nothing changes */
	test_ok(s, "replace epoch 40 a 198.18.3.1",
		"ERROR epoch is 40: replace epoch 40 must be "
		"above it; nothing changed\n");
	test_ok(s, "replace epoch 7 a 198.18.3.1", "ERROR epoch is 40");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	/* a block with an explicit epoch */
	assert_null(test_line(s, "replace epoch 41"));
	assert_null(test_line(s, "c 198.18.3.3"));
	test_ok(s, "end", "OK epoch 41\n");
	assert_null(test_line(s, "replace epoch 41"));
	assert_null(test_line(s, "d 198.18.3.4"));
	test_ok(s, "end", "ERROR epoch is 41");
	/* a bad member in the block: refused at end, the epoch stays */
	assert_null(test_line(s, "replace epoch 50"));
	assert_null(test_line(s, "d 198.18.3.400"));
	test_ok(s, "end", "ERROR replace line 1: bad address");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 41);
	/* a plain change after it moves the epoch by one, as always */
	test_ok(s, "add z 198.18.3.26", "OK epoch 42\n");
	/* malformed epoch numbers */
	test_ok(s, "replace epoch x1 a 198.18.3.1", "ERROR replace epoch E: E must be a number");
	test_ok(s, "replace epoch -1 a 198.18.3.1", "ERROR replace epoch E: E must be a number");
	test_ok(s, "replace epoch 99999999999999999999999 a 198.18.3.1",
		"ERROR replace epoch E: E must be a number");
	/* a member named epoch is still a member */
	test_ok(s, "replace epoch 198.18.3.5 ; b 198.18.3.6", "OK epoch 43\n");
	assert_string_equal(ctl_state_member(ctl_engine_state(e), 0)->pl.name, "epoch");
	/* if-epoch with an explicit epoch: both conditions hold */
	test_ok(s, "if-epoch 42 replace epoch 60 a 198.18.3.1", "ERROR epoch is 43\n");
	test_ok(s, "if-epoch 43 replace epoch 60 a 198.18.3.1", "OK epoch 60\n");
	/* never inside a transaction */
	test_ok(s, "begin", "OK transaction open");
	test_ok(s, "replace epoch 70 a 198.18.3.1", "ERROR replace epoch E cannot be queued");
	test_ok(s, "abort", "OK transaction aborted changes 0");
	/* plan with an explicit epoch describes, changes nothing */
	test_ok(s, "plan replace epoch 5 a 198.18.3.1 ; b 198.18.3.2", "OK lines 2 moved ");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 60);
	ctl_state_free(before);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_digest(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_engine *f = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e), *t = ctl_session_new(f);
	uint64_t d0, d1, d2;
	char *r;

	(void)state;
	ctl_engine_set_fleet_managed(e, true);
	ctl_engine_set_fleet_managed(f, true);
	/* the fleet's changes: replace epoch E (the digest does not depend on how we got here) */
	/* equal placements, equal digests, in every reply that carries one */
	d0 = reply_digest(s, "epoch");
	assert_true(d0 != 0);
	assert_int_equal(reply_digest(s, "ring"), d0);
	assert_int_equal(reply_digest(s, "fleet"), d0);
	assert_int_equal(reply_digest(t, "epoch"), d0);
	assert_int_equal(ctl_engine_digest(e), d0);
	assert_int_equal(ctl_state_digest(ctl_engine_state(e)), d0);
	/* the epoch is not part of it: the same members reached by another path */
	test_ok(s, "replace epoch 2 n1 198.18.1.1 ; n2 198.18.1.2 weight 3 ; n3 198.18.1.3",
		"OK epoch 2");
	d1 = reply_digest(s, "epoch");
	assert_true(d1 != d0);
	test_ok(s, "replace epoch 9 n1 198.18.1.1 ; n2 198.18.1.2 ; n3 198.18.1.3", "OK epoch 9");
	assert_int_equal(reply_digest(s, "epoch"), d0);
	/* every field of a member counts: address, port, MAC, order */
	test_ok(t,
		"replace epoch 2 n1 198.18.1.1:11211 ; n2 198.18.1.2:11211 ; n3 198.18.1.3:11212",
		"OK epoch 2");
	d2 = reply_digest(t, "epoch");
	assert_true(d2 != d0 && d2 != d1);
	test_ok(t,
		"replace epoch 3 n1 198.18.1.1 ; n2 198.18.1.2 ; n3 198.18.1.3 mac "
		"02:00:00:00:00:03",
		"OK epoch 3");
	assert_true(reply_digest(t, "epoch") != d0);
	test_ok(t, "replace epoch 4 n2 198.18.1.2 ; n1 198.18.1.1 ; n3 198.18.1.3", "OK epoch 4");
	assert_true(reply_digest(t, "epoch") != d0);
	test_ok(t, "replace epoch 5 n1 198.18.1.1 ; n2 198.18.1.2 ; n3 198.18.1.3", "OK epoch 5");
	assert_int_equal(reply_digest(t, "epoch"), d0);
	/* the pending ring inside a transaction has its own digest; the live one is unchanged */
	ctl_engine_set_fleet_managed(e, false);
	test_ok(s, "begin", "OK transaction open");
	test_ok(s, "remove n3", "OK queued 1");
	ctl_engine_set_fleet_managed(e, true);
	r = test_expect(s, "ring", "OK algo ring");
	assert_non_null(strstr(r, "pending yes"));
	assert_true(digest_in(r) != d0);
	free(r);
	test_ok(s, "abort", "OK transaction aborted");
	assert_int_equal(ctl_engine_digest(e), d0);
	ctl_session_free(s);
	ctl_session_free(t);
	ctl_engine_free(e);
	ctl_engine_free(f);
}

/* The placement settings are part of the digest. */
static void test_digest_settings(void **state)
{
	struct pl_config cfg = {0};
	struct ctl_state *a = test_state(4), *b;
	uint64_t d = ctl_state_digest(a);
	char err[256];

	(void)state;
	cfg.algo = PL_ALGO_RING;
	cfg.vnodes = 100;
	b = ctl_state_new(&cfg, 1);
	assert_int_equal(ctl_state_replace(b, ctl_state_member(a, 0), 1, err, sizeof(err)), 0);
	assert_int_equal(ctl_state_replace(a, ctl_state_member(a, 0), 1, err, sizeof(err)), 0);
	assert_true(ctl_state_digest(a) != d);
	assert_true(ctl_state_digest(a) != ctl_state_digest(b));
	cfg.vnodes = 0;
	ctl_state_free(b);
	b = ctl_state_new(&cfg, 99);
	assert_int_equal(ctl_state_replace(b, ctl_state_member(a, 0), 1, err, sizeof(err)), 0);
	assert_int_equal(ctl_state_digest(a), ctl_state_digest(b));
	memcpy(cfg.hash_tag, "{}", 2);
	ctl_state_free(b);
	b = ctl_state_new(&cfg, 1);
	assert_int_equal(ctl_state_replace(b, ctl_state_member(a, 0), 1, err, sizeof(err)), 0);
	assert_true(ctl_state_digest(a) != ctl_state_digest(b));
	ctl_state_free(a);
	ctl_state_free(b);
}

static void test_fleet_managed(void **state)
{
	struct ctl_engine *e = test_engine(3, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *before = ctl_state_copy(ctl_engine_state(e));

	(void)state;
	test_ok(s, "fleet", "OK fleet local epoch 1 digest ");
	test_ok(s, "fleet managed", "OK fleet managed epoch 1 digest ");
	assert_true(ctl_engine_fleet_managed(e));
	test_ok(s, "epoch", "OK epoch 1 digest ");
	/* every local change is refused, with the reason and the way out */
	test_ok(s, "add n9 198.18.1.9",
		"ERROR fleet-managed: this router's membership comes "
		"from the fleet's store (etcd)");
	test_ok(s, "remove n1", "ERROR fleet-managed");
	test_ok(s, "weight n1 4", "ERROR fleet-managed");
	test_ok(s, "replace a 198.18.3.1", "ERROR fleet-managed");
	test_ok(s, "if-epoch 1 replace a 198.18.3.1", "ERROR fleet-managed");
	assert_null(test_line(s, "replace"));
	assert_null(test_line(s, "a 198.18.3.1"));
	test_ok(s, "end", "ERROR fleet-managed");
	test_ok(s, "begin", "OK transaction open");
	test_ok(s, "add n9 198.18.1.9", "ERROR fleet-managed");
	test_ok(s, "commit", "OK epoch 1 changes 0");
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	/* plans and reads still work */
	test_ok(s, "plan add n9 198.18.1.9", "OK lines 4 moved ");
	test_ok(s, "list", "OK lines 3 members 3 epoch 1");
	/* the fleet's own change goes through */
	test_ok(s, "replace epoch 12 a 198.18.3.1 ; b 198.18.3.2", "OK epoch 12\n");
	/* an unknown mode is a usage error; leaving the fleet allows local changes again */
	test_ok(s, "fleet maybe", "ERROR usage: fleet [managed|local|state|refused R]");
	test_ok(s, "fleet local extra", "ERROR fleet: unexpected arguments");
	test_ok(s, "fleet local", "OK fleet local epoch 12 digest ");
	test_ok(s, "add n9 198.18.1.9", "OK epoch 13\n");
	ctl_engine_set_fleet_managed(e, true);
	test_ok(s, "remove n9", "ERROR fleet-managed");
	ctl_state_free(before);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The etcd key's text: the state-file format, parsed back to the same state and digest. */
static void test_text_form(void **state)
{
	struct ctl_state *a = test_state(5), *b = NULL;
	struct ctl_text t = {0};
	char err[256];

	(void)state;
	assert_int_equal(ctl_state_to_text(a, &t), 0);
	assert_int_equal(ctl_state_from_text(t.buf, t.len, &b, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(a, b));
	assert_int_equal(ctl_state_digest(a), ctl_state_digest(b));
	ctl_state_free(b);
	/* one byte changed: the checksum refuses it */
	t.buf[t.len / 2] ^= 1;
	assert_int_equal(ctl_state_from_text(t.buf, t.len, &b, err, sizeof(err)), -EINVAL);
	assert_null(b);
	assert_non_null(strstr(err, "checksum"));
	assert_int_equal(ctl_state_from_text("hello\n", 6, &b, err, sizeof(err)), -EINVAL);
	assert_int_equal(ctl_state_from_text(t.buf, CTL_STATE_TEXT_MAX + 1u, &b, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "above the limit"));
	ctl_text_release(&t);
	ctl_state_free(a);
}

/* Epochs the engine published, in order (the data plane tells placements apart by epoch). */
static struct {
	uint64_t epoch[16];
	uint64_t digest[16];
	int n;
} pubs;

static int record_publish(void *ctx, const struct ctl_state *next, const struct pl_placement *pl)
{
	(void)ctx;
	(void)pl;
	if (pubs.n < 16) {
		pubs.epoch[pubs.n] = ctl_state_epoch(next);
		pubs.digest[pubs.n] = ctl_state_digest(next);
	}
	pubs.n++;
	return 0;
}

/* `replace epoch E digest D` for members @p members: the line, in @p buf. */
static const char *fleet_line(char *buf, size_t n, uint64_t epoch, uint64_t digest,
			      const char *members)
{
	snprintf(buf, n, "replace epoch %" PRIu64 " digest %016" PRIx64 " %s", epoch, digest,
		 members);
	return buf;
}

/* The digest a state of @p members (one-line replace form) has under the default settings. */
static uint64_t digest_of(const char *members, const struct pl_config *cfg)
{
	struct ctl_state *st = ctl_state_new(cfg, 1);
	struct ctl_member m[8];
	char err[256], spec[128];
	uint32_t n = 0;
	uint64_t d;

	for (const char *p = members; *p != '\0' && n < 8;) {
		size_t len = strcspn(p, ";");

		snprintf(spec, sizeof(spec), "%.*s", (int)len, p);
		assert_int_equal(ctl_member_parse(spec, strlen(spec), &m[n++], err, sizeof(err)),
				 0);
		p += len + (p[len] == ';');
	}
	assert_int_equal(ctl_state_replace(st, m, n, err, sizeof(err)), 0);
	d = ctl_state_digest(st);
	ctl_state_free(st);
	return d;
}

/*
 * Issue 27 item 6: a router whose epoch is at or above the fleet's revision converges to the
 * fleet's membership (`replace epoch E digest D`), and a value whose result would not have the
 * fleet's digest (placement settings differ, e.g. hash_tag) changes nothing, epoch included.
 * Before the fix the `digest` form did not exist and `replace epoch E` at or below the live
 * epoch was refused: an ahead router kept its own ring while the agent reported agreement.
 */
static void test_converge(void **state)
{
	const char *fleet = "a 198.18.3.1 ; b 198.18.3.2 weight 2 ; c 198.18.3.3";
	const char *fleet2 = "a 198.18.3.1 ; b 198.18.3.2 ; c 198.18.3.3";
	struct ctl_ops ops = {.publish = record_publish};
	struct ctl_engine *e = test_engine(3, NULL, &ops);
	struct ctl_session *s = ctl_session_new(e);
	uint64_t d = digest_of(fleet, NULL), d2 = digest_of(fleet2, NULL);
	struct pl_config tagged = {.algo = PL_ALGO_RING};
	struct ctl_state *before;
	char line[256], *r;

	(void)state;
	memset(&pubs, 0, sizeof(pubs));
	ctl_engine_set_fleet_managed(e, true);
	/* a router ahead of the fleet: local epoch 40 (as from a state file) */
	test_ok(s, "replace epoch 40 n1 198.18.1.1 ; n2 198.18.1.2", "OK epoch 40\n");
	/* the plain form keeps its rule: never at or below the live epoch */
	test_ok(s, "replace epoch 7 a 198.18.3.1", "ERROR epoch is 40");
	/* the fleet's revision 7 with its digest: the router goes to 7 */
	r = test_expect(s, fleet_line(line, sizeof(line), 7, d, fleet), "OK epoch 7");
	assert_non_null(strstr(r, " rebased_from 40\n"));
	free(r);
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 7);
	assert_int_equal(ctl_engine_digest(e), d);
	assert_int_equal(pubs.n, 2);
	assert_int_equal(pubs.epoch[1], 7);
	/* the same revision again: nothing to do, nothing published */
	test_ok(s, fleet_line(line, sizeof(line), 7, d, fleet), "OK epoch 7 changes 0\n");
	assert_int_equal(pubs.n, 2);
	/* the same epoch with another membership (two routers once reported epoch 7 with
	 * different digests): converges, and no epoch ever names two placements */
	test_ok(s, fleet_line(line, sizeof(line), 7, d2, fleet2), "OK epoch 7\n");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 7);
	assert_int_equal(ctl_engine_digest(e), d2);
	assert_int_equal(pubs.n, 4);
	assert_int_equal(pubs.epoch[2], 8);
	assert_int_equal(pubs.digest[2], d); /* the live ring again, at a new epoch */
	assert_int_equal(pubs.epoch[3], 7);
	assert_int_equal(pubs.digest[3], d2);
	for (int i = 1; i < pubs.n; i++)
		assert_true(pubs.epoch[i] != pubs.epoch[i - 1]);
	/* a digest the result does not have (the fleet's hash_tag is "{}", this router has none):
	 * refused, nothing changes, the epoch included */
	memcpy(tagged.hash_tag, "{}", 2);
	before = ctl_state_copy(ctl_engine_state(e));
	r = test_expect(s, fleet_line(line, sizeof(line), 9, digest_of(fleet, &tagged), fleet),
			"ERROR the result's digest ");
	assert_non_null(strstr(r, "hash_tag none) differ from the fleet's; nothing changed\n"));
	free(r);
	r = test_expect(s, fleet_line(line, sizeof(line), 3, digest_of(fleet, &tagged), fleet),
			"ERROR the result's digest ");
	free(r);
	assert_true(ctl_state_equal(before, ctl_engine_state(e)));
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 7);
	assert_int_equal(pubs.n, 4);
	assert_int_equal(ctl_engine_fleet_refused(e), 9); /* the higher of the two */
	r = test_line(s, "fleet");
	assert_non_null(strstr(r, " refused 9\n"));
	free(r);
	/* the block form carries it too */
	snprintf(line, sizeof(line), "replace epoch 12 digest %016" PRIx64, d);
	assert_null(test_line(s, line));
	assert_null(test_line(s, "a 198.18.3.1"));
	assert_null(test_line(s, "b 198.18.3.2 weight 2"));
	assert_null(test_line(s, "c 198.18.3.3"));
	test_ok(s, "end", "OK epoch 12\n");
	assert_int_equal(ctl_engine_digest(e), d);
	/* a router that cannot apply a fleet revision says so in its own replies: the agent's
	 * word (`fleet refused R`) or a refused `replace epoch R digest D`; a fleet revision at
	 * or above it applied ends it, `fleet local` too */
	assert_int_equal(ctl_engine_fleet_refused(e), 0); /* 9 was refused, 12 applied */
	test_ok(s, "fleet refused 14", "OK fleet managed epoch 12 ");
	assert_int_equal(ctl_engine_fleet_refused(e), 14);
	test_ok(s, "fleet refused 0", "ERROR usage: fleet refused R");
	test_ok(s, "fleet refused", "ERROR usage: fleet refused R");
	test_ok(s, fleet_line(line, sizeof(line), 13, d2, fleet2), "OK epoch 13\n");
	assert_int_equal(ctl_engine_fleet_refused(e), 14); /* 13 is below the refused 14 */
	test_ok(s, fleet_line(line, sizeof(line), 15, d, fleet), "OK epoch 15\n");
	assert_int_equal(ctl_engine_fleet_refused(e), 0);
	r = test_line(s, "fleet");
	assert_null(strstr(r, "refused"));
	free(r);
	test_ok(s, "fleet refused 16", "OK fleet managed epoch 15 ");
	test_ok(s, "fleet local", "OK fleet local epoch 15 ");
	assert_int_equal(ctl_engine_fleet_refused(e), 0);
	ctl_engine_set_fleet_managed(e, true);
	/* malformed: epoch 0, a digest that is not 16 hex digits (read as a member) */
	test_ok(s, fleet_line(line, sizeof(line), 0, d, fleet), "ERROR replace epoch 0");
	test_ok(s, "replace epoch 17 digest 12345 a 198.18.3.1", "ERROR replace: member 1");
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 15);
	ctl_state_free(before);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* `fleet state`: the live membership as the text the fleet's store holds (issue 28 item 6:
 * `ringwayctl --etcd init --router SOCKET` needs no state file). */
static void test_fleet_state(void **state)
{
	struct ctl_engine *e = test_engine(4, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *back = NULL;
	char *r, *body, err[256], head[128];

	(void)state;
	test_ok(s, "weight n2 3", "OK epoch 2\n");
	r = test_expect(s, "fleet state", "OK lines ");
	snprintf(head, sizeof(head), " fleet local epoch 2 digest %016" PRIx64 "\n",
		 ctl_engine_digest(e));
	body = strchr(r, '\n') + 1;
	assert_non_null(strstr(r, head));
	assert_true(strstr(r, head) < body);
	assert_int_equal(ctl_state_from_text(body, strlen(body), &back, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(back, ctl_engine_state(e)));
	assert_int_equal(ctl_state_digest(back), ctl_engine_digest(e));
	free(r);
	ctl_state_free(back);
	test_ok(s, "fleet state x", "ERROR fleet: unexpected arguments");
	ctl_session_free(s);
	ctl_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replies_by_mode), cmocka_unit_test(test_replace_with_epoch),
		cmocka_unit_test(test_digest),		cmocka_unit_test(test_digest_settings),
		cmocka_unit_test(test_fleet_managed),	cmocka_unit_test(test_text_form),
		cmocka_unit_test(test_converge),	cmocka_unit_test(test_fleet_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
