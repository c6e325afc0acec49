/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command parser: every command's accepted forms, and every malformed form refused with
 * a reason while the membership and epoch stay exactly as they were.
 */

#include "ctl_test.h"

static struct ctl_cmd parse_ok(const char *line)
{
	struct ctl_cmd cmd;
	char err[256] = "";

	if (ctl_cmd_parse(line, strlen(line), &cmd, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", line, err);
	return cmd;
}

static void test_add_forms(void **state)
{
	struct ctl_cmd c;
	char mac[18];

	(void)state;
	c = parse_ok("add n5 198.18.1.5:11311");
	assert_int_equal(c.type, CTL_CMD_ADD);
	assert_string_equal(c.member.pl.name, "n5");
	assert_string_equal(c.member.pl.addr, "198.18.1.5");
	assert_int_equal(c.member.pl.port, 11311);
	assert_int_equal(c.member.pl.weight, 1);
	assert_false(c.member.has_mac);
	assert_false(c.plan || c.if_epoch);

	c = parse_ok("  add\tnode-5.a_b   198.18.1.5   mac 02:AA:bb:cc:dd:ee  weight 3 ");
	assert_string_equal(c.member.pl.name, "node-5.a_b");
	assert_int_equal(c.member.pl.port, 11211); /* default port */
	assert_int_equal(c.member.pl.weight, 3);
	assert_true(c.member.has_mac);
	ctl_mac_format(c.member.mac, mac);
	assert_string_equal(mac, "02:aa:bb:cc:dd:ee");

	c = parse_ok("add x 198.18.1.5:1 weight 10000");
	assert_int_equal(c.member.pl.weight, CTL_WEIGHT_MAX);
	c = parse_ok("add x 198.18.1.5:65535");
	assert_int_equal(c.member.pl.port, 65535);

	/* IPv6 in brackets, stored without them in RFC 5952 form. */
	c = parse_ok("add n6 [2001:0002::0:1:6]:11311 weight 2");
	assert_string_equal(c.member.pl.addr, "2001:2::1:6");
	assert_int_equal(c.member.pl.port, 11311);
	assert_int_equal(c.member.pl.weight, 2);
	c = parse_ok("add n6 [2001:2::1:6]");
	assert_string_equal(c.member.pl.addr, "2001:2::1:6");
	assert_int_equal(c.member.pl.port, 11211);
	c = parse_ok("replace a [2001:2::1:1]:1 ; b 198.18.1.2 ; c [2001:2:2::3]");
	assert_int_equal(c.nmembers, 3);
	assert_string_equal(c.members[0].pl.addr, "2001:2::1:1");
	assert_string_equal(c.members[2].pl.addr, "2001:2:2::3");
	ctl_cmd_release(&c);
}

static void test_other_forms(void **state)
{
	struct ctl_cmd c;

	(void)state;
	c = parse_ok("remove n1");
	assert_int_equal(c.type, CTL_CMD_REMOVE);
	assert_string_equal(c.name, "n1");

	c = parse_ok("weight n2 0");
	assert_int_equal(c.type, CTL_CMD_WEIGHT);
	assert_string_equal(c.name, "n2");
	assert_int_equal(c.weight, 0);

	static const struct {
		const char *line;
		enum ctl_cmd_type type;
	} bare[] = {{"list", CTL_CMD_LIST},   {"ring", CTL_CMD_RING},	 {"stats", CTL_CMD_STATS},
		    {"epoch", CTL_CMD_EPOCH}, {"begin", CTL_CMD_BEGIN},	 {"commit", CTL_CMD_COMMIT},
		    {"abort", CTL_CMD_ABORT}, {"  list  ", CTL_CMD_LIST}};
	for (size_t i = 0; i < sizeof(bare) / sizeof(bare[0]); i++) {
		c = parse_ok(bare[i].line);
		assert_int_equal(c.type, bare[i].type);
		assert_false(ctl_cmd_changes(c.type));
	}

	c = parse_ok("if-epoch 18446744073709551615 weight n1 2");
	assert_true(c.if_epoch);
	assert_true(c.epoch == UINT64_MAX);
	assert_int_equal(c.type, CTL_CMD_WEIGHT);

	c = parse_ok("plan remove n3");
	assert_true(c.plan);
	assert_int_equal(c.type, CTL_CMD_REMOVE);

	c = parse_ok("if-epoch 4 plan add n9 198.18.1.9:11211 weight 2");
	assert_true(c.plan && c.if_epoch);
	assert_int_equal(c.epoch, 4);
	assert_int_equal(c.member.pl.weight, 2);

	c = parse_ok("replace");
	assert_int_equal(c.type, CTL_CMD_REPLACE);
	assert_true(c.block);

	c = parse_ok("replace a 198.18.1.1:1 weight 2;b 198.18.1.2:1 mac 02:00:00:00:00:01 ; c "
		     "198.18.1.3");
	assert_false(c.block);
	assert_int_equal(c.nmembers, 3);
	assert_string_equal(c.members[1].pl.name, "b");
	assert_true(c.members[1].has_mac);
	assert_int_equal(c.members[0].pl.weight, 2);
	assert_int_equal(c.members[2].pl.port, 11211);
	ctl_cmd_release(&c);
}

/* Malformed or refused lines, the words their reason must hold. */
static const struct {
	const char *line;
	const char *reason;
} bad[] = {
	{"frobnicate", "unknown command 'frobnicate'"},
	{"ADD n5 198.18.1.5:11211", "unknown command"},
	{"add", "expected NAME ADDR:PORT"},
	{"add n5", "missing ADDR:PORT"},
	{"add n5 198.18.1", "bad address"},
	{"add n5 198.18.1.256:11211", "bad address"},
	{"add n5 ::1", "bad address"},
	{"add n5 cache.example:11211", "bad address"},
	{"add n5 :11211", "bad address"},
	{"add n5 2001:2::5", "an IPv6 address goes in brackets"},
	{"add n5 2001:2::5:11211", "bad address"},
	{"add n5 [2001:2::5", "bad address"},
	{"add n5 [2001:2::5]11211", "bad address"},
	{"add n5 [198.18.1.5]:11211", "bad address"},
	{"add n5 [::ffff:198.18.1.5]:11211", "bad address"},
	{"add n5 [fe80::1%eth0]:11211", "bad address"},
	{"add n5 [::1]:11211", "address ::1 is no unicast node address"},
	{"add n5 [::]:11211", "no unicast node address"},
	{"add n5 [ff02::1]:11211", "no unicast node address"},
	{"add n5 [2001:2::5]:0", "bad port"},
	{"add n5 [2001:2::5]:65536", "bad port"},
	{"add n5 [2001:2::5]:", "bad port"},
	{"add n5 198.18.1.5:0", "bad port"},
	{"add n5 198.18.1.5:65536", "bad port"},
	{"add n5 198.18.1.5:", "bad port"},
	{"add n5 198.18.1.5:http", "bad port"},
	{"add n5 198.18.1.5:-1", "bad port"},
	{"add n/5 198.18.1.5:11211", "bad name"},
	{"add n;5 198.18.1.5:11211", "bad name"},
	{"add aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 198.18.1.5",
	 "name longer than 63"},
	{"add n5 198.18.1.5:11211 weight", "weight must be an integer"},
	{"add n5 198.18.1.5:11211 weight -1", "weight must be an integer"},
	{"add n5 198.18.1.5:11211 weight 10001", "weight must be an integer 0..10000"},
	{"add n5 198.18.1.5:11211 weight 1.5", "weight must be an integer"},
	{"add n5 198.18.1.5:11211 weight 99999999999999999999999", "weight must be"},
	{"add n5 198.18.1.5:11211 weight 0", "weight 0 refused for add"},
	{"add n5 198.18.1.5:11211 weight 1 weight 2", "'weight' given twice"},
	{"add n5 198.18.1.5:11211 mac 02:00:00:00:00:01 mac 02:00:00:00:00:02", "given twice"},
	{"add n5 198.18.1.5:11211 mac", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac 01:00:5e:00:00:01", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac ff:ff:ff:ff:ff:ff", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac 00:00:00:00:00:00", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac 02:00:00:00:00", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac 02-00-00-00-00-01", "bad MAC"},
	{"add n5 198.18.1.5:11211 mac 02:00:00:00:00:0g", "bad MAC"},
	{"add n5 198.18.1.5:11211 color red", "unexpected 'color'"},
	{"add n1 198.18.1.99:11211", "duplicate name: n1"},
	{"add n5 198.18.1.1:11211", "duplicate address: 198.18.1.1:11211 is already member n1"},
	{"remove", "usage: remove NAME"},
	{"remove n9", "unknown node n9"},
	{"remove n1 n2", "remove: unexpected arguments"},
	{"remove n/1", "bad name"},
	{"weight", "usage: weight NAME W"},
	{"weight n1", "usage: weight NAME W"},
	{"weight n1 x", "weight must be an integer"},
	{"weight n1 10001", "weight must be an integer"},
	{"weight n1 2 3", "unexpected arguments"},
	{"weight n9 2", "unknown node n9"},
	{"list all", "list: unexpected arguments"},
	{"ring 1", "ring: unexpected arguments"},
	{"stats now", "stats: unexpected arguments"},
	{"epoch 3", "epoch: unexpected arguments"},
	{"begin now", "begin: unexpected arguments"},
	{"commit", "commit without begin"},
	{"abort", "abort without begin"},
	{"plan", "usage: plan"},
	{"plan list", "plan takes add, remove, weight or replace, not list"},
	{"plan frob", "unknown command 'frob'"},
	{"plan remove n9", "unknown node n9"},
	{"plan add n1 198.18.1.99", "duplicate name"},
	{"if-epoch", "usage: if-epoch E COMMAND"},
	{"if-epoch x list", "usage: if-epoch E COMMAND"},
	{"if-epoch -1 list", "usage: if-epoch E COMMAND"},
	{"if-epoch 1", "missing command"},
	{"if-epoch 1 if-epoch 1 list", "cannot be nested"},
	{"if-epoch 7 add n5 198.18.1.5:11211", "epoch is 1"},
	{"if-epoch 0 remove n1", "epoch is 1"},
	{"replace ;", "member 1 is empty"},
	{"replace n1 198.18.1.1 ;", "member 2 is empty"},
	{"replace n1 198.18.1.1 ;; n2 198.18.1.2", "member 2 is empty"},
	{"replace n1 198.18.1.1 ; n1 198.18.1.2", "duplicate name: n1"},
	{"replace n1 198.18.1.1 ; n2 198.18.1.1:11211", "duplicate address"},
	{"replace n1 198.18.1.1 weight 0", "no member has a weight above 0"},
	{"replace n1 198.18.1.1 weight 0 ; n2 198.18.1.2 weight 0", "no member has a weight"},
	{"replace n1 198.18.1.1 ; n2 bogus", "member 2: bad address"},
	{"add n5 198.18.1.5:11211\x01", "byte 0x01 at column 24"},
	{"add n5 198.18.1.5:11211 \xc3\xa9", "byte 0xc3"},
	{"list\x7f", "byte 0x7f"},
	{"epoch\r\r", "byte 0x0d"},
};

static void test_malformed_changes_nothing(void **state)
{
	struct ctl_engine *e = test_engine(4, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_state *before = ctl_state_copy(ctl_engine_state(e));

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *r = test_line(s, bad[i].line);

		if (r == NULL || strncmp(r, "ERROR ", 6) != 0 || strstr(r, bad[i].reason) == NULL)
			fail_msg("'%s' replied '%s', expected ERROR ...%s...", bad[i].line,
				 r ? r : "(nothing)", bad[i].reason);
		assert_non_null(strchr(r, '\n'));
		assert_ptr_equal(strchr(r, '\n'), r + strlen(r) - 1); /* one line */
		assert_true(ctl_state_equal(before, ctl_engine_state(e)));
		free(r);
	}
	ctl_state_free(before);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_long_line(void **state)
{
	struct ctl_engine *e = test_engine(2, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);
	char *line = malloc(CTL_LINE_MAX + 2);
	struct ctl_cmd cmd;
	char err[128];

	(void)state;
	memset(line, ' ', CTL_LINE_MAX + 1);
	memcpy(line, "epoch", 5);
	line[CTL_LINE_MAX] = '\0'; /* exactly the limit: accepted */
	test_ok(s, line, "OK epoch 1");
	line[CTL_LINE_MAX] = ' ';
	line[CTL_LINE_MAX + 1] = '\0';
	assert_int_equal(ctl_cmd_parse(line, CTL_LINE_MAX + 1, &cmd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line too long"));
	free(test_expect(s, line, "ERROR line too long (limit 4096 bytes)"));
	free(line);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void test_blank_and_crlf(void **state)
{
	struct ctl_engine *e = test_engine(2, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	assert_null(test_line(s, ""));
	assert_null(test_line(s, "   \t "));
	assert_null(test_line(s, "\r"));
	test_ok(s, "epoch\r", "OK epoch 1\n");
	test_ok(s, "weight n1 3\r", "OK epoch 2\n");
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* The membership rules that depend on the state: last node, weight 0. */
static void test_last_node_and_weight_zero(void **state)
{
	struct ctl_engine *e = test_engine(1, NULL, NULL);
	struct ctl_session *s = ctl_session_new(e);

	(void)state;
	free(test_expect(s, "remove n1", "ERROR cannot remove n1: it is the last member"));
	free(test_expect(s, "weight n1 0", "ERROR weight 0 for n1 would leave no member"));
	assert_int_equal(ctl_state_epoch(ctl_engine_state(e)), 1);
	test_ok(s, "add n2 198.18.1.2", "OK epoch 2");
	test_ok(s, "weight n1 0", "OK epoch 3"); /* drain one of two: allowed */
	free(test_expect(s, "weight n2 0", "ERROR weight 0 for n2 would leave no member"));
	free(test_expect(s, "remove n2", "ERROR cannot remove n2: no member with a weight"));
	test_ok(s, "remove n1", "OK epoch 4"); /* the drained one may go */
	assert_int_equal(ctl_state_count(ctl_engine_state(e)), 1);
	ctl_session_free(s);
	ctl_engine_free(e);
}

/* One row of CTL_FOREACH_CMD is the whole of a command's listing: the parser knows its name,
 * the "unknown command" reason and the usage text name it, `plan` accepts exactly the rows
 * flagged as changes. */
static void test_command_table(void **state)
{
	struct ctl_text usage = {0};
	char err[512], line[64], want[128];
	struct ctl_cmd c;

	(void)state;
	assert_int_equal(ctl_commands_usage(&usage), 0);
	assert_int_equal(ctl_cmd_parse("frob", 4, &c, err, sizeof(err)), -EINVAL);
	for (int t = 0; t < CTL_CMD_COUNT; t++) {
		const char *name = ctl_cmd_name((enum ctl_cmd_type)t);
		char *at = strstr(err, "(commands: ");

		snprintf(want, sizeof(want), " %s%s", name, *ctl_cmd_args(t) ? " " : "\n");
		if (strstr(usage.buf, want) == NULL)
			fail_msg("usage lacks '%s': %s", want, usage.buf);
		snprintf(want, sizeof(want), " %s", name);
		assert_non_null(at);
		if (strstr(at + 10, want) == NULL)
			fail_msg("unknown-command reason lacks '%s': %s", name, err);
		/* `plan NAME` parses (or fails on arguments) exactly for the changes */
		snprintf(line, sizeof(line), "plan %s", name);
		ctl_cmd_parse(line, strlen(line), &c, err + 256, 256);
		assert_int_equal(strstr(err + 256, "plan takes") == NULL,
				 ctl_cmd_changes((enum ctl_cmd_type)t));
		ctl_cmd_release(&c);
	}
	assert_non_null(strstr(usage.buf, "  plan "));
	assert_non_null(strstr(usage.buf, "  if-epoch "));
	assert_non_null(strstr(err, "prefixes: if-epoch plan"));
	assert_true(ctl_cmd_changes(CTL_CMD_ADD) && ctl_cmd_changes(CTL_CMD_REPLACE));
	assert_false(ctl_cmd_changes(CTL_CMD_LIST) || ctl_cmd_changes(CTL_CMD_COUNT));
	ctl_text_release(&usage);
}

static void test_reply_head(void **state)
{
	bool ok;
	uint32_t n;

	(void)state;
	assert_int_equal(ctl_reply_head("OK", &ok, &n), 0);
	assert_true(ok);
	assert_int_equal(n, 0);
	assert_int_equal(ctl_reply_head("OK epoch 3", &ok, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ctl_reply_head("OK lines 12 members 12", &ok, &n), 0);
	assert_int_equal(n, 12);
	assert_int_equal(ctl_reply_head("OK lines 0", &ok, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ctl_reply_head("ERROR unknown node x", &ok, &n), 0);
	assert_false(ok);
	assert_int_equal(ctl_reply_head("OK lines x", &ok, &n), -EPROTO);
	assert_int_equal(ctl_reply_head("OK lines 99999999", &ok, &n), -EPROTO);
	assert_int_equal(ctl_reply_head("OKAY", &ok, &n), -EPROTO);
	assert_int_equal(ctl_reply_head("ERRORS", &ok, &n), -EPROTO);
	assert_int_equal(ctl_reply_head("", &ok, &n), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_forms),
		cmocka_unit_test(test_other_forms),
		cmocka_unit_test(test_malformed_changes_nothing),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_blank_and_crlf),
		cmocka_unit_test(test_last_node_and_weight_zero),
		cmocka_unit_test(test_command_table),
		cmocka_unit_test(test_reply_head),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
