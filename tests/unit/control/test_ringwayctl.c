/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ringwayctl end to end against ctl_fake_router (the control library served with a fake
 * publish callback): exit codes, human and --json output, stdin scripts and transactions,
 * replace from stdin, persistence across a restart, a corrupt state file refusing the start,
 * a non-root user refused by the socket's mode, and --tcp with --token-file (the fake router
 * also listens on TCP with a token), and `top -b` (the fake router's --traffic counters).
 *
 * argv[1] = ringwayctl, argv[2] = ctl_fake_router (paths from meson).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_test.h"

static const char *ctl_bin, *router_bin;
static char dir[64], sock[128], statef[128], tokenf[128];
static unsigned int tcp_port;

#define TOKEN "ringwayctl-test-token-42"

static pid_t router = -1;
static bool traffic; /* start the fake router with --traffic */

struct run {
	int status; /* exit code, or -1 when killed */
	char out[1 << 16];
	char err[4096];
};

static void read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* Run @p argv (NULL-terminated) with @p input on stdin; wait; collect output. */
static void run_argv(char *const argv[], const char *input, struct run *r)
{
	char in[160], out[160], err[160];
	pid_t pid;
	int status, fd;

	snprintf(in, sizeof(in), "%s/stdin", dir);
	snprintf(out, sizeof(out), "%s/stdout", dir);
	snprintf(err, sizeof(err), "%s/stderr", dir);
	fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	if (input != NULL)
		assert_int_equal(write(fd, input, strlen(input)), (ssize_t)strlen(input));
	close(fd);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
		    e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	read_file(out, r->out, sizeof(r->out));
	read_file(err, r->err, sizeof(r->err));
}

/* ringwayctl --socket SOCK ARGS... (NULL-terminated) with @p input on stdin. */
static void ctl(struct run *r, const char *input, ...)
{
	char *argv[16] = {(char *)ctl_bin, (char *)"--socket", sock};
	const char *a;
	int n = 3;
	va_list ap;

	va_start(ap, input);
	while ((a = va_arg(ap, const char *)) != NULL && n < 15)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	run_argv(argv, input, r);
}

#define CTL(r, ...)	   ctl(r, NULL, __VA_ARGS__, (const char *)NULL)
#define CTL_IN(r, in, ...) ctl(r, in, __VA_ARGS__, (const char *)NULL)

static void expect(const struct run *r, int status, const char *out, const char *err)
{
	if (r->status != status || (out && strstr(r->out, out) == NULL) ||
	    (err && strstr(r->err, err) == NULL))
		fail_msg("exit %d stdout '%s' stderr '%s'; wanted exit %d, '%s', '%s'", r->status,
			 r->out, r->err, status, out ? out : "", err ? err : "");
}

/* Start the fake router; returns its exit code if it stops at once, else 0 when ready. */
static int router_start(void)
{
	int p[2], status;
	char buf[64] = "";
	struct pollfd pf;

	assert_int_equal(pipe(p), 0);
	router = fork();
	assert_true(router >= 0);
	if (router == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(router_bin, router_bin, "--socket", sock, "--state", statef, "--nodes", "4",
		      "--tcp", "--token-file", tokenf, traffic ? "--traffic" : (char *)NULL,
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	pf = (struct pollfd){.fd = p[0], .events = POLLIN};
	assert_int_equal(poll(&pf, 1, 10000), 1);
	if (read(p[0], buf, sizeof(buf) - 1) <= 0 || sscanf(buf, "ready tcp %u", &tcp_port) != 1) {
		close(p[0]);
		assert_int_equal(waitpid(router, &status, 0), router);
		router = -1;
		return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	}
	close(p[0]);
	return 0;
}

static void router_stop(void)
{
	int status;

	if (router <= 0)
		return;
	kill(router, SIGTERM);
	assert_int_equal(waitpid(router, &status, 0), router);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	router = -1;
}

static void write_token(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ctl_cli_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock, sizeof(sock), "%s/run/ctl.sock", dir);
	snprintf(statef, sizeof(statef), "%s/state", dir);
	snprintf(tokenf, sizeof(tokenf), "%s/token", dir);
	write_token(tokenf, TOKEN "\n");
	return router_start() == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	router_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_exit_codes_and_human_output(void **state)
{
	struct run r;

	(void)state;
	CTL(&r, "epoch");
	expect(&r, 0, "epoch 1\n", NULL);
	CTL(&r, "remove", "nope");
	expect(&r, 1, NULL, "ERROR unknown node nope\n");
	assert_string_equal(r.out, "");
	CTL(&r, "frobnicate");
	expect(&r, 1, NULL, "ERROR unknown command 'frobnicate'");
	CTL(&r, "add", "n5", "198.18.1.5:11211", "weight", "2");
	expect(&r, 0, "epoch 2\n", NULL);
	CTL(&r, "list");
	expect(&r, 0,
	       "members 5 epoch 2\nname n1 addr 198.18.1.1:11211 weight 1 state active share ",
	       NULL);
	assert_non_null(strstr(r.out, "name n5 addr 198.18.1.5:11211 weight 2 state active "));
	CTL(&r, "ring");
	expect(&r, 0, "algo ring vnodes 160 points 960 members 5", NULL);
	CTL(&r, "stats");
	expect(&r, 0, "ctl.changes 1\n", NULL);
	assert_non_null(strstr(r.out, "router.publishes 1\n"));
	/* a publish the router refuses: ERROR, nothing changed */
	CTL(&r, "add", "failpublish", "198.18.9.9");
	expect(&r, 1, NULL, "ERROR publish failed: Input/output error; nothing changed");
	CTL(&r, "epoch");
	expect(&r, 0, "epoch 2\n", NULL);

	/* usage and connection errors: 2 */
	{
		char *argv[] = {(char *)ctl_bin, NULL};

		run_argv(argv, NULL, &r);
		expect(&r, 2, NULL, "usage: ringwayctl");
	}
	CTL(&r, "--bogus", "epoch");
	expect(&r, 2, NULL, "usage");
	CTL(&r, "--timeout", "x", "epoch");
	expect(&r, 2, NULL, "bad --timeout 'x'");
	{
		char *argv[] = {(char *)ctl_bin, (char *)"--socket",
				(char *)"/nonexistent/ctl.sock", (char *)"epoch", NULL};

		run_argv(argv, NULL, &r);
		expect(&r, 2, NULL, "no control socket at /nonexistent/ctl.sock");
	}
	{
		char *argv[] = {(char *)ctl_bin, (char *)"--socket", sock,
				(char *)"add",	 (char *)"a\nb",     NULL};

		run_argv(argv, NULL, &r);
		expect(&r, 2, NULL, "must be one line");
	}
}

/* Check @p json with Python's parser and an assertion over each line's object `d`. */
static void check_json(const char *json, const char *assertion)
{
	char path[160], script[160], cmd[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/json", dir);
	snprintf(script, sizeof(script), "%s/check.py", dir);
	f = fopen(path, "w");
	fputs(json, f);
	fclose(f);
	f = fopen(script, "w");
	fprintf(f,
		"import json, sys\nfor l in open(sys.argv[1]):\n    d = json.loads(l)\n"
		"    assert %s, d\n",
		assertion);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s'", script, path);
	if (system(cmd) != 0)
		fail_msg("JSON check failed: %s on %s", assertion, json);
}

static void test_json(void **state)
{
	struct run r;

	(void)state;
	CTL(&r, "--json", "epoch");
	expect(&r, 0, NULL, NULL);
	assert_string_equal(r.out, "{\"ok\":true,\"epoch\":1}\n");
	CTL(&r, "--json", "remove", "nope");
	expect(&r, 1, NULL, NULL);
	assert_string_equal(r.out, "{\"ok\":false,\"error\":\"unknown node nope\"}\n");
	assert_string_equal(r.err, "");
	if (system("python3 -c 'import json' 2>/dev/null") != 0) {
		print_message("python3 missing: JSON structure checks skipped\n");
		return;
	}
	CTL(&r, "--json", "list");
	expect(&r, 0, NULL, NULL);
	check_json(r.out, "d['ok'] and d['members']==4 and d['epoch']==1 and len(d['items'])==4 "
			  "and d['items'][0]['name']=='n1' and d['items'][0]['addr']=="
			  "'198.18.1.1:11211' and d['items'][0]['weight']==1 and "
			  "abs(sum(i['share'] for i in d['items'])-1)<1e-5");
	CTL(&r, "--json", "plan", "add", "n5", "198.18.1.5");
	expect(&r, 0, NULL, NULL);
	check_json(r.out, "0.1<d['moved']<0.3 and d['epoch']==1 and d['items'][4]['change']=="
			  "'added' and abs(d['items'][4]['share_after']-d['moved'])<1e-6");
	CTL(&r, "--json", "stats");
	check_json(r.out, "{'ctl.commands'} <= set(k for i in d['items'] for k in i)");
	CTL(&r, "--json", "ring");
	check_json(r.out, "d['algo']=='ring' and d['points']==640 and d['hash_tag']=='none'");
	CTL_IN(&r, "epoch\nbogus\nweight n1 2\n", "--json", "-");
	expect(&r, 1, NULL, NULL);
	check_json(r.out, "'ok' in d");
	assert_non_null(strstr(r.out, "{\"ok\":true,\"epoch\":1}\n{\"ok\":false,\"error\":"
				      "\"unknown command 'bogus'"));
	assert_non_null(strstr(r.out, "}\n{\"ok\":true,\"epoch\":2}\n"));
}

static void test_stdin_script_and_replace(void **state)
{
	struct run r;

	(void)state;
	/* a transaction in one connection */
	CTL_IN(&r, "begin\nadd t1 198.18.6.1\n\nweight n1 3\ncommit\nepoch\n", "-");
	expect(&r, 0, "transaction open epoch 1\nqueued 1\nqueued 2\nepoch 2\nepoch 2\n", NULL);
	/* an error in the middle: the rest still runs, exit 1 */
	CTL_IN(&r, "remove zz\nremove t1\n", "-");
	expect(&r, 1, "epoch 3\n", "ERROR unknown node zz");
	/* a replace block inside a script */
	CTL_IN(&r, "replace\na 198.18.7.1\nb 198.18.7.2 weight 2\nend\nlist\n", "-");
	expect(&r, 0, "epoch 4\nmembers 2 epoch 4\nname a ", NULL);
	/* replace reading the members from stdin */
	CTL_IN(&r, "x 198.18.8.1\n# not a member\n", "replace");
	expect(&r, 1, NULL, "ERROR replace line 2: bad name '#'");
	CTL_IN(&r, "x 198.18.8.1\ny 198.18.8.2 mac 02:00:00:00:00:02\nz 198.18.8.3\n", "replace");
	expect(&r, 0, "epoch 5\n", NULL);
	CTL_IN(&r, "x 198.18.8.1\n", "if-epoch", "4", "replace");
	expect(&r, 1, NULL, "ERROR epoch is 5");
	CTL(&r, "list");
	expect(&r, 0, "members 3 epoch 5\n", NULL);
	assert_non_null(strstr(r.out, "name y addr 198.18.8.2:11211 weight 1 state active share "));
	assert_non_null(strstr(r.out, " mac 02:00:00:00:00:02 arp static\n"));
	CTL(&r, "if-epoch", "5", "remove", "z");
	expect(&r, 0, "epoch 6\n", NULL);
}

/* The membership survives a restart; a corrupt state file stops the start and is kept. */
static void test_restart_and_corrupt_state(void **state)
{
	struct run before, after, ep;
	char a[4096], b[4096];
	int fd;

	(void)state;
	CTL(&before, "add", "n9", "198.18.1.9:11300", "weight", "3", "mac");
	expect(&before, 1, NULL, "bad MAC");
	CTL(&before, "add", "n9", "198.18.1.9:11300", "weight", "3");
	expect(&before, 0, "epoch 2", NULL);
	CTL(&before, "weight", "n2", "0");
	expect(&before, 0, "epoch 3", NULL);
	CTL(&before, "list");
	router_stop();
	assert_int_equal(router_start(), 0);
	CTL(&after, "list");
	assert_string_equal(before.out, after.out);
	CTL(&ep, "epoch");
	expect(&ep, 0, "epoch 3\n", NULL);

	router_stop();
	read_file(statef, a, sizeof(a));
	a[strlen(a) / 2] ^= 0x01; /* one bit */
	fd = open(statef, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, a, strlen(a)), (ssize_t)strlen(a));
	close(fd);
	assert_int_equal(router_start(), 1);
	read_file(statef, b, sizeof(b));
	assert_string_equal(a, b); /* left as it was */
	CTL(&ep, "epoch");
	expect(&ep, 2, NULL, NULL); /* nobody serves */
}

/* An IPv6 member through the real client: `add NAME [v6]:port`, listed bracketed (text and
 * JSON), kept in the state file across a restart. */
static void test_ipv6_member(void **state)
{
	struct run before, after;

	(void)state;
	CTL(&before, "add", "v6", "2001:2::1:9");
	expect(&before, 1, NULL,
	       "ERROR add: bad address '2001:2::1:9': an IPv6 address goes in "
	       "brackets");
	CTL(&before, "add", "v6", "[2001:0002::1:9]:11300", "weight", "2");
	expect(&before, 0, "epoch 2\n", NULL);
	CTL(&before, "list");
	expect(&before, 0, "members 5 epoch 2\n", NULL);
	assert_non_null(strstr(before.out, "name v6 addr [2001:2::1:9]:11300 weight 2 state "));
	router_stop();
	assert_int_equal(router_start(), 0);
	CTL(&after, "list");
	assert_string_equal(before.out, after.out);
	if (system("python3 -c 'import json' 2>/dev/null") != 0)
		return;
	CTL(&after, "--json", "list");
	check_json(after.out, "d['items'][4]['name']=='v6' and d['items'][4]['addr']=="
			      "'[2001:2::1:9]:11300'");
}

static void test_non_root_refused(void **state)
{
	char copy[160], cmd[512];
	struct run r;

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: not root, cannot run ringwayctl as nobody\n");
		skip();
	}
	/* a copy nobody can execute, in directories nobody can enter: only the mode stops it */
	snprintf(copy, sizeof(copy), "%s/ringwayctl", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s' '%s' '%s/run'", ctl_bin, copy,
		 copy, dir, dir);
	assert_int_equal(system(cmd), 0);
	{
		char *argv[] = {(char *)"/usr/bin/setpriv",
				(char *)"--reuid=nobody",
				(char *)"--regid=nogroup",
				(char *)"--clear-groups",
				copy,
				(char *)"--socket",
				sock,
				(char *)"epoch",
				NULL};

		run_argv(argv, NULL, &r);
		expect(&r, 2, NULL, "Permission denied");
		chmod(sock, 0666); /* control: the same command gets through when the mode allows */
		run_argv(argv, NULL, &r);
		chmod(sock, 0600);
		expect(&r, 0, "epoch 1\n", NULL);
	}
}

/* --tcp authenticates with --token-file: without it ringwayctl refuses to start, with a wrong
 * token the router refuses it (exit 2, nothing changed), with the right one commands run. */
static void test_tcp_token(void **state)
{
	char port[16], wrong[160], open_file[160];
	char *const argv_none[] = {(char *)ctl_bin, (char *)"--tcp", port, (char *)"epoch", NULL};
	char *const argv_wrong[] = {(char *)ctl_bin,
				    (char *)"--tcp",
				    port,
				    (char *)"--token-file",
				    wrong,
				    (char *)"add",
				    (char *)"n9",
				    (char *)"198.18.1.9:11211",
				    NULL};
	char *const argv_open[] = {(char *)ctl_bin, (char *)"--tcp", port, (char *)"--token-file",
				   open_file,	    (char *)"epoch", NULL};
	char *const argv_good[] = {(char *)ctl_bin,
				   (char *)"--tcp",
				   port,
				   (char *)"--token-file",
				   tokenf,
				   (char *)"add",
				   (char *)"n9",
				   (char *)"198.18.1.9:11211",
				   NULL};
	struct run r;

	(void)state;
	snprintf(port, sizeof(port), "%u", tcp_port);
	snprintf(wrong, sizeof(wrong), "%s/wrong", dir);
	write_token(wrong, "not-the-routers-token\n");
	snprintf(open_file, sizeof(open_file), "%s/open", dir);
	write_token(open_file, TOKEN "\n");
	assert_int_equal(chmod(open_file, 0644), 0);
	run_argv(argv_none, NULL, &r);
	expect(&r, 2, NULL, "--tcp needs --token-file");
	run_argv(argv_wrong, NULL, &r);
	expect(&r, 2, NULL, "authentication failed");
	run_argv(argv_open, NULL, &r);
	expect(&r, 2, NULL, "must be readable by its owner");
	CTL(&r, "epoch");
	expect(&r, 0, "epoch 1\n", NULL);
	run_argv(argv_good, NULL, &r);
	expect(&r, 0, "epoch 2\n", NULL);
	CTL(&r, "stats");
	expect(&r, 0, "ctl.auth_ok 1\n", NULL);
	assert_non_null(strstr(r.out, "ctl.auth_failed 1\n"));
}

/* A `top -b` node row: NODE STATE HEALTH REQ/S RET/REQ P99(us) SLOW FORWARDED. */
struct top_row {
	char name[32], state[16], health[16], slow[8];
	double req, ratio, p99;
	unsigned long fwd;
};

static void top_row(const char *frame, const char *name, struct top_row *row)
{
	char start[40];
	const char *l;

	snprintf(start, sizeof(start), "\n%s ", name);
	l = strstr(frame, start);
	if (l == NULL ||
	    sscanf(l + 1, "%31s %15s %15s %lf %lf%% %lf %7s %lu", row->name, row->state,
		   row->health, &row->req, &row->ratio, &row->p99, row->slow, &row->fwd) != 8)
		fail_msg("no row for %s in '%s'", name, frame);
}

/* `top -b -n 2 -d 0.2`: two frames, each from two samples 0.2 s apart, with the columns the
 * docs/operations.md shows, rows sorted by request rate, and rates the fake router's counters imply
 * (member i gains 1000 * (i + 1) requests/s, 90 % returned; a router computing the rate from
 * one sample, or dividing by the wrong time, is far off). */
static void test_top_batch(void **state)
{
	struct timespec t0, t1;
	const char *frame[3];
	struct top_row row;
	double router_fwd;
	struct run r;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CTL(&r, "top", "-b", "-n", "2", "-d", "0.2");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect(&r, 0, "NODE             STATE    HEALTH            REQ/S  RET/REQ    P99(us) SLOW",
	       NULL);
	assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9 >= 0.39);
	frame[0] = strstr(r.out, "ringwayctl top - ");
	assert_non_null(frame[0]);
	frame[1] = strstr(frame[0] + 1, "ringwayctl top - ");
	assert_non_null(frame[1]);
	assert_null(strstr(frame[1] + 1, "ringwayctl top - ")); /* exactly -n 2 frames */
	for (int f = 0; f < 2; f++) {
		assert_non_null(strstr(frame[f], "  epoch 1  members 4  every 0.2 s\n"));
		assert_int_equal(sscanf(strstr(frame[f], "\nrouter: "),
					"\nrouter: rx %*f/s  fwd %lf", &router_fwd),
				 1);
		if (router_fwd < 7000 || router_fwd > 13000)
			fail_msg("router fwd %.0f/s, wanted about 10000: '%s'", router_fwd, r.out);
		assert_non_null(strstr(frame[f], "router p99 9.0 us\n"));
		/* the busiest node first: n4's row follows the column line directly */
		assert_non_null(strstr(frame[f], "FORWARDED\nn4 "));
		top_row(frame[f], "n4", &row);
		if (row.req < 2800 || row.req > 5200 || row.ratio < 85 || row.ratio > 95)
			fail_msg("n4 %.0f/s %.1f%%, wanted about 4000/s 90%%: '%s'", row.req,
				 row.ratio, r.out);
		assert_true(row.p99 == 400.0 && strcmp(row.slow, "yes") == 0 &&
			    strcmp(row.health, "up") == 0 && strcmp(row.state, "active") == 0);
		top_row(frame[f], "n1", &row);
		if (row.req < 700 || row.req > 1300)
			fail_msg("n1 %.0f/s, wanted about 1000: '%s'", row.req, r.out);
		assert_string_equal(row.health, "suspect");
		assert_string_equal(row.slow, "no");
	}
	CTL(&r, "top", "-b", "-d", "0");
	expect(&r, 2, NULL, "bad -d '0'");
	CTL(&r, "top", "-n", "x");
	expect(&r, 2, NULL, "bad -n 'x'");
	CTL(&r, "--json", "top");
	expect(&r, 2, NULL, "top has no --json");
}

static int setup_traffic(void **state)
{
	traffic = true;
	return setup(state);
}

static int teardown_traffic(void **state)
{
	traffic = false;
	return teardown(state);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit_codes_and_human_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_script_and_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_and_corrupt_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_member, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_root_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_top_batch, setup_traffic, teardown_traffic),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s RINGWAYCTL CTL_FAKE_ROUTER\n", argv[0]);
		return 2;
	}
	ctl_bin = argv[1];
	router_bin = argv[2];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
