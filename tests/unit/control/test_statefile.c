/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state file: round trip, atomic save, and every corrupt, truncated, foreign or
 * unreadable file refused with a reason and left byte-identical.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "ctl_test.h"

struct tmp {
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	strcpy(t->dir, "/tmp/ctl_state_XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/ringway.state", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	DIR *d = opendir(t->dir);
	struct dirent *de;
	char p[512];

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", t->dir, de->d_name);
		chmod(p, 0600);
		unlink(p);
	}
	if (d != NULL)
		closedir(d);
	rmdir(t->dir);
	free(t);
	return 0;
}

static struct ctl_state *rich_state(void)
{
	struct pl_config cfg = {.algo = PL_ALGO_KETAMA, .vnodes = 100, .hash_tag = "{}"};
	struct ctl_state *st = ctl_state_new(&cfg, 123456789012345ULL);
	static const char *const specs[] = {
		"alpha 198.18.0.1:11211 weight 3 mac 02:11:22:33:44:55",
		"beta 198.18.0.2:11212",
		"gamma-1.x_y 198.18.0.3:1 weight 0",
		"delta 198.18.0.1:11212 weight 1000 mac 0a:bb:cc:dd:ee:ff",
	};
	struct ctl_member m;
	char err[256];

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		assert_int_equal(ctl_member_parse(specs[i], strlen(specs[i]), &m, err, sizeof(err)),
				 0);
		assert_int_equal(ctl_state_add(st, &m, err, sizeof(err)), 0);
	}
	return st;
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	char *buf;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_int_equal(read(fd, buf, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	buf[*len] = '\0';
	return buf;
}

static void spit(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static unsigned count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	unsigned n = 0;

	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_round_trip(void **state)
{
	struct tmp *t = *state;
	struct ctl_state *st = rich_state(), *back = NULL;
	struct stat sb;
	char err[256];
	size_t len;
	char *text;

	assert_int_equal(ctl_state_save(st, t->path, err, sizeof(err)), 0);
	assert_int_equal(stat(t->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(count_entries(t->dir), 1); /* no temporary file left behind */
	assert_int_equal(ctl_state_load(t->path, &back, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(st, back));
	assert_int_equal(ctl_state_config(back)->algo, PL_ALGO_KETAMA);
	assert_memory_equal(ctl_state_config(back)->hash_tag, "{}", 2);
	assert_int_equal(ctl_state_epoch(back), 123456789012345ULL);

	/* the documented format, line by line */
	text = slurp(t->path, &len);
	assert_non_null(strstr(text,
			       "ringway-state 1\nepoch 123456789012345\nalgo ketama\n"
			       "vnodes 100\nmaglev_size 0\nkey_hash xxh3\nhash_tag {}\n"
			       "members 4\n"
			       "member alpha 198.18.0.1:11211 weight 3 mac 02:11:22:33:44:55\n"
			       "member beta 198.18.0.2:11212 weight 1\n"));
	/* the checksum is XXH64 (seed 0) of every byte before the checksum line */
	{
		char want[40];
		const char *cs = strstr(text, "checksum ");

		snprintf(want, sizeof(want), "checksum %016llx\n",
			 (unsigned long long)XXH64(text, (size_t)(cs - text), 0));
		assert_string_equal(cs, want);
	}

	/* saving again replaces the file atomically */
	ctl_state_set_epoch(st, 7);
	assert_int_equal(ctl_state_save(st, t->path, err, sizeof(err)), 0);
	ctl_state_free(back);
	assert_int_equal(ctl_state_load(t->path, &back, err, sizeof(err)), 0);
	assert_int_equal(ctl_state_epoch(back), 7);
	assert_int_equal(count_entries(t->dir), 1);
	free(text);
	ctl_state_free(back);
	ctl_state_free(st);
}

/* IPv6 members: written [IPV6]:PORT in RFC 5952 form, read back equal, beside IPv4 ones;
 * IPv4 lines are as before. */
static void test_round_trip_ipv6(void **state)
{
	struct tmp *t = *state;
	struct ctl_state *st = ctl_state_new(NULL, 5), *back = NULL;
	static const char *const specs[] = {
		"v6a [2001:2::1:1]:11211 weight 2",
		"v6b [2001:0002:0000:0000:0000:0000:0001:0002]:11300 mac 02:00:00:00:00:09",
		"v4c 198.18.1.3",
		"v6d [2001:2:2::ffff:1]",
	};
	struct ctl_member m;
	char err[256];
	size_t len;
	char *text;

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		assert_int_equal(ctl_member_parse(specs[i], strlen(specs[i]), &m, err, sizeof(err)),
				 0);
		assert_int_equal(ctl_state_add(st, &m, err, sizeof(err)), 0);
	}
	assert_string_equal(ctl_state_member(st, 1)->pl.addr, "2001:2::1:2");
	/* The same host and port under another spelling is a duplicate. */
	assert_int_equal(ctl_member_parse("dup [2001:2:0::1:1]:11211", 25, &m, err, sizeof(err)),
			 0);
	assert_int_equal(ctl_state_add(st, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(
		strstr(err, "duplicate address: [2001:2::1:1]:11211 is already member v6a"));
	assert_int_equal(ctl_state_save(st, t->path, err, sizeof(err)), 0);
	text = slurp(t->path, &len);
	assert_non_null(strstr(text,
			       "members 4\n"
			       "member v6a [2001:2::1:1]:11211 weight 2\n"
			       "member v6b [2001:2::1:2]:11300 weight 1 mac 02:00:00:00:00:09\n"
			       "member v4c 198.18.1.3:11211 weight 1\n"
			       "member v6d [2001:2:2::ffff:1]:11211 weight 1\n"));
	assert_int_equal(ctl_state_load(t->path, &back, err, sizeof(err)), 0);
	assert_true(ctl_state_equal(st, back));
	assert_int_equal(ctl_state_digest(st), ctl_state_digest(back));
	assert_string_equal(ctl_state_member(back, 3)->pl.addr, "2001:2:2::ffff:1");
	assert_int_equal(ctl_state_member(back, 1)->pl.port, 11300);
	free(text);
	ctl_state_free(back);
	ctl_state_free(st);
}

/* Load must refuse with @p reason and leave the file byte-identical. */
static void expect_refused(const char *path, const char *reason)
{
	struct ctl_state *st = (struct ctl_state *)1;
	struct stat a, b;
	size_t la, lb;
	char err[512] = "";
	char *before = slurp(path, &la), *after;

	assert_int_equal(stat(path, &a), 0);
	if (ctl_state_load(path, &st, err, sizeof(err)) != -EINVAL || strstr(err, reason) == NULL)
		fail_msg("load gave '%s', expected ...%s...", err, reason);
	assert_null(st);
	assert_non_null(strstr(err, path)); /* the reason names the file */
	after = slurp(path, &lb);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(before, after, la);
	assert_true(a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
	free(before);
	free(after);
}

static void test_corrupt_refused(void **state)
{
	struct tmp *t = *state;
	struct ctl_state *st = rich_state();
	char err[256], *text;
	size_t len;

	assert_int_equal(ctl_state_save(st, t->path, err, sizeof(err)), 0);
	text = slurp(t->path, &len);

	/* one flipped bit anywhere before the checksum line */
	for (size_t i = 0; i < len - 26; i += 7) {
		text[i] ^= 0x04;
		spit(t->path, text, len);
		expect_refused(t->path, "");
		text[i] ^= 0x04;
	}
	text[40] ^= 0x01;
	spit(t->path, text, len);
	expect_refused(t->path, "checksum mismatch");
	text[40] ^= 0x01;

	/* truncated at every length */
	for (size_t cut = 0; cut < len; cut++) {
		spit(t->path, text, cut);
		expect_refused(t->path, "");
	}
	spit(t->path, text, len - 1);
	expect_refused(t->path, "truncated");
	/* appended garbage */
	{
		char *more = malloc(len + 8);

		memcpy(more, text, len);
		memcpy(more + len, "member x", 8);
		spit(t->path, more, len + 8);
		expect_refused(t->path, "truncated");
		free(more);
	}
	/* a NUL byte */
	text[5] = '\0';
	spit(t->path, text, len);
	expect_refused(t->path, "NUL byte");
	free(text);
	ctl_state_free(st);
}

/* Well-formed checksum, wrong content: each refused with its line. */
static void write_with_sum(const char *path, const char *body)
{
	char *buf = malloc(strlen(body) + 64);
	int n = sprintf(buf, "%schecksum %016llx\n", body,
			(unsigned long long)XXH64(body, strlen(body), 0));

	spit(path, buf, (size_t)n);
	free(buf);
}

static void test_foreign_refused(void **state)
{
	struct tmp *t = *state;
	static const char head[] = "ringway-state 1\nepoch 3\nalgo ring\nvnodes 0\nmaglev_size 0\n"
				   "key_hash xxh3\nhash_tag none\n";
	static const struct {
		const char *body;
		const char *reason;
	} cases[] = {
		{"ringway-state 2\nepoch 3\n", "version 2"},
		{"hello world\n", "not a ringway state file"},
		{"ringway-state 1\nepoch x\n", "line 2: bad epoch"},
		{"ringway-state 1\nepoch 3\nalgo bogus\n", "line 3: unknown algorithm 'bogus'"},
		{"ringway-state 1\nepoch 3\nalgo ring\nvnodes -1\n", "line 4: bad vnodes"},
		{"ringway-state 1\nepoch 3\nalgo ring\nvnodes 0\nmaglev_size 0\nkey_hash md6\n",
		 "line 6: unknown key hash"},
		{"ringway-state 1\nepoch 3\n", "line 3: truncated"},
	};
	static const struct {
		const char *members;
		const char *reason;
	} mcases[] = {
		{"members 2\nmember a 198.18.0.1\n", "line 10: truncated: 1 of 2 members"},
		{"members 1\nmember a 198.18.0.1\nmember b 198.18.0.2\n",
		 "line 10: unexpected text after the members"},
		{"members 2\nmember a 198.18.0.1\nmember a 198.18.0.2\n",
		 "members: duplicate name: a"},
		{"members 1\nmember a 198.18.0.1 weight 50000\n", "line 9: weight must be"},
		{"members 1\nmember a 198.18.0.1 weight 0\n", "no member has a weight above 0"},
		{"members 0\n", "members: the member list is empty"},
		{"members 1\nnode a 198.18.0.1\n", "line 9: expected 'member ...'"},
		{"hash_tag {\n", "line 8: expected 'members VALUE'"},
	};
	char body[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_with_sum(t->path, cases[i].body);
		expect_refused(t->path, cases[i].reason);
	}
	for (size_t i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		snprintf(body, sizeof(body), "%s%s", head, mcases[i].members);
		write_with_sum(t->path, body);
		expect_refused(t->path, mcases[i].reason);
	}
	/* and the good one loads */
	{
		struct ctl_state *st;
		char err[256];

		snprintf(body, sizeof(body), "%smembers 1\nmember a 198.18.0.1\n", head);
		write_with_sum(t->path, body);
		assert_int_equal(ctl_state_load(t->path, &st, err, sizeof(err)), 0);
		assert_int_equal(ctl_state_count(st), 1);
		assert_int_equal(ctl_state_member(st, 0)->pl.port, 11211);
		ctl_state_free(st);
	}
}

static void test_missing_and_unreadable(void **state)
{
	struct tmp *t = *state;
	struct ctl_state *st;
	char err[256], path[160];

	assert_int_equal(ctl_state_load(t->path, &st, err, sizeof(err)), -ENOENT);
	assert_null(st);
	assert_non_null(strstr(err, "No such file"));

	/* a directory where the file should be */
	snprintf(path, sizeof(path), "%s/adir", t->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(ctl_state_load(path, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	rmdir(path);

	/* a symlink is not followed */
	snprintf(path, sizeof(path), "%s/link", t->dir);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_true(ctl_state_load(path, &st, err, sizeof(err)) < 0);
	unlink(path);

	/* unreadable: only meaningful when not root (root reads anything) */
	if (geteuid() != 0) {
		struct ctl_state *good = rich_state();

		assert_int_equal(ctl_state_save(good, t->path, err, sizeof(err)), 0);
		chmod(t->path, 0);
		assert_int_equal(ctl_state_load(t->path, &st, err, sizeof(err)), -EACCES);
		assert_non_null(strstr(err, "Permission denied"));
		ctl_state_free(good);
	}
}

/* A failed save leaves the previous file as it was and no temporary file. */
static void test_failed_save_keeps_old(void **state)
{
	struct tmp *t = *state;
	struct ctl_state *st = rich_state();
	char err[256], bad[160];

	snprintf(bad, sizeof(bad), "%s/missing/dir/state", t->dir);
	assert_true(ctl_state_save(st, bad, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot create"));
	assert_int_equal(count_entries(t->dir), 0);
	ctl_state_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_ipv6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_and_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_save_keeps_old, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
