/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket server, driven by real clients over a Unix socket in a temporary directory. The
 * server runs ctl_server_poll() on its own thread (as on the router's control lcore); the test
 * thread only talks through sockets, and reads the engine's counters after the server stops.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_test.h"

struct srv {
	char dir[64];
	char path[128];
	struct ctl_engine *e;
	struct ctl_server *s;
	pthread_t th;
	atomic_int stop;
	struct ctl_counters cnt; /* copied when stopped */
};

static void *serve(void *arg)
{
	struct srv *x = arg;

	while (!atomic_load(&x->stop))
		assert_true(ctl_server_poll(x->s, 20) >= 0);
	return NULL;
}

static void srv_dir(struct srv *x);

static void srv_start(struct srv *x, unsigned nodes, struct ctl_server_config *cfg)
{
	char err[256];

	srv_dir(x);
	cfg->unix_path = x->path;
	x->e = test_engine(nodes, NULL, NULL);
	x->s = ctl_server_open(x->e, cfg, err, sizeof(err));
	if (x->s == NULL)
		fail_msg("server: %s", err);
	atomic_store(&x->stop, 0);
	assert_int_equal(pthread_create(&x->th, NULL, serve, x), 0);
}

static void srv_stop(struct srv *x)
{
	atomic_store(&x->stop, 1);
	pthread_join(x->th, NULL);
	x->cnt = *ctl_engine_counters(x->e);
	ctl_server_close(x->s);
	ctl_engine_free(x->e);
}

static void srv_cleanup(struct srv *x)
{
	unlink(x->path);
	rmdir(x->dir);
}

struct cli {
	int fd;
	struct ctl_reader *rd;
};

static struct cli cli_open(const char *path)
{
	char err[256];
	struct cli c;

	c.fd = ctl_connect_unix(path, err, sizeof(err));
	if (c.fd < 0)
		fail_msg("connect: %s", err);
	c.rd = ctl_reader_new(c.fd);
	return c;
}

static void cli_close(struct cli *c)
{
	ctl_reader_free(c->rd);
	close(c->fd);
}

static void cli_send(struct cli *c, const char *text)
{
	size_t len = strlen(text);

	assert_int_equal(send(c->fd, text, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Next reply; its head must start with @p want ("OK epoch 2" matches "OK ..."). */
static void cli_expect(struct cli *c, const char *want, struct ctl_reply *out)
{
	struct ctl_reply r;
	char got[512];
	int rc = ctl_reader_next(c->rd, &r, 5000);

	if (rc < 0)
		fail_msg("no reply (%s), wanted '%s'", strerror(-rc), want);
	snprintf(got, sizeof(got), "%s %s", r.ok ? "OK" : "ERROR", r.head);
	if (strncmp(got, want, strlen(want)) != 0)
		fail_msg("got '%s', wanted '%s...'", got, want);
	if (out != NULL)
		*out = r;
	else
		ctl_reply_clear(&r);
}

static void cli_cmd(struct cli *c, const char *line, const char *want)
{
	cli_send(c, line);
	cli_send(c, "\n");
	cli_expect(c, want, NULL);
}

/* The server closed this connection: EOF within @p ms. */
static void cli_expect_eof(struct cli *c, int ms)
{
	struct ctl_reply r;
	int rc = ctl_reader_next(c->rd, &r, ms);

	if (rc != -EPIPE && rc != -ECONNRESET)
		fail_msg("expected the server to close, got %d", rc);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_lines_partial_pipelined(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct cli c;

	(void)state;
	srv_start(&x, 3, &cfg);
	c = cli_open(x.path);
	/* one command in three pieces */
	cli_send(&c, "ep");
	usleep(50000);
	cli_send(&c, "oc");
	usleep(50000);
	cli_send(&c, "h\r\n");
	cli_expect(&c, "OK epoch 1", NULL);
	/* several commands in one write: replies in order, one each */
	cli_send(&c, "weight n1 2\nepoch\n\nbogus\nlist\n");
	cli_expect(&c, "OK epoch 2", NULL);
	cli_expect(&c, "OK epoch 2", NULL);
	cli_expect(&c, "ERROR unknown command 'bogus'", NULL);
	{
		struct ctl_reply r;

		cli_expect(&c, "OK lines 3 members 3 epoch 2", &r);
		assert_int_equal(r.nlines, 3);
		assert_non_null(strstr(r.lines[0], "name n1 addr 198.18.1.1:11211 weight 2 "));
		ctl_reply_clear(&r);
	}
	/* a replace block: no reply until end */
	cli_send(&c, "replace\na 198.18.4.1\nb 198.18.4.2\nend\nepoch\n");
	cli_expect(&c, "OK epoch 3", NULL);
	cli_expect(&c, "OK epoch 3", NULL);
	/* a last line without newline, then EOF: still run, reply sent, then closed */
	cli_send(&c, "epoch");
	shutdown(c.fd, SHUT_WR);
	cli_expect(&c, "OK epoch 3", NULL);
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	srv_stop(&x);
	assert_int_equal(x.cnt.changes, 2);
	srv_cleanup(&x);
}

static void test_several_clients(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct cli c[6];
	char line[64], want[64];

	(void)state;
	srv_start(&x, 3, &cfg);
	for (int i = 0; i < 6; i++)
		c[i] = cli_open(x.path);
	/* interleaved: each client adds its node at the epoch it saw */
	for (int i = 0; i < 6; i++) {
		snprintf(line, sizeof(line), "if-epoch %d add c%d 198.18.5.%d", i + 1, i, i + 1);
		snprintf(want, sizeof(want), "OK epoch %d", i + 2);
		cli_cmd(&c[(i * 5) % 6], line, want);
	}
	/* a stale compare-and-set loses */
	cli_cmd(&c[2], "if-epoch 3 remove c0", "ERROR epoch is 7");
	/* transactions are per connection */
	cli_cmd(&c[0], "begin", "OK transaction open epoch 7");
	cli_cmd(&c[0], "remove c1", "OK queued 1");
	cli_cmd(&c[1], "list", "OK lines 9 members 9 epoch 7");
	cli_cmd(&c[1], "commit", "ERROR commit without begin");
	cli_cmd(&c[0], "commit", "OK epoch 8");
	cli_cmd(&c[3], "epoch", "OK epoch 8");
	/* a client with an open transaction leaves: nothing of it remains */
	cli_cmd(&c[4], "begin", "OK transaction open");
	cli_cmd(&c[4], "remove n1", "OK queued 1");
	cli_close(&c[4]);
	cli_cmd(&c[5], "list", "OK lines 8 members 8 epoch 8");
	for (int i = 0; i < 6; i++)
		if (i != 4)
			cli_close(&c[i]);
	srv_stop(&x);
	assert_int_equal(x.cnt.clients_accepted, 6);
	srv_cleanup(&x);
}

/* A 1 MB line is refused without being buffered, while another client is served. */
static void test_megabyte_line(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct cli big, other;
	char *chunk = malloc(64 << 10);
	char *exact = malloc(CTL_LINE_MAX + 2);
	int64_t t0;

	(void)state;
	srv_start(&x, 3, &cfg);
	big = cli_open(x.path);
	other = cli_open(x.path);
	memset(chunk, 'a', 64 << 10);
	for (int i = 0; i < 8; i++) /* 512 KiB so far */
		assert_int_equal(send(big.fd, chunk, 64 << 10, MSG_NOSIGNAL), 64 << 10);
	t0 = now_ms();
	cli_cmd(&other, "epoch", "OK epoch 1");
	assert_true(now_ms() - t0 < 3000);
	for (int i = 0; i < 8; i++) { /* the other 512 KiB; the server keeps draining */
		ssize_t n = send(big.fd, chunk, 64 << 10, MSG_NOSIGNAL);

		assert_true(n == 64 << 10 || (n < 0 && (errno == EPIPE || errno == ECONNRESET)));
	}
	cli_expect(&big, "ERROR line too long (limit 4096 bytes)", NULL);
	cli_expect_eof(&big, 3000);
	cli_close(&big);
	/* a line of exactly CTL_LINE_MAX bytes is fine */
	memset(exact, ' ', CTL_LINE_MAX);
	memcpy(exact, "epoch", 5);
	exact[CTL_LINE_MAX] = '\0';
	cli_cmd(&other, exact, "OK epoch 1");
	exact[CTL_LINE_MAX] = ' '; /* one more: refused */
	exact[CTL_LINE_MAX + 1] = '\0';
	cli_send(&other, exact);
	cli_send(&other, "\n");
	cli_expect(&other, "ERROR line too long", NULL);
	cli_expect_eof(&other, 3000);
	cli_close(&other);
	srv_stop(&x);
	assert_int_equal(x.cnt.long_lines, 2);
	assert_int_equal(x.cnt.changes, 0);
	free(chunk);
	free(exact);
	srv_cleanup(&x);
}

/* A client that says nothing is dropped after the idle timeout; a busy one is not. */
static void test_idle_client(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {.idle_ms = 500};
	struct cli silent, busy;
	struct pollfd p;
	int64_t t0, waited;
	char b;

	(void)state;
	srv_start(&x, 2, &cfg);
	silent = cli_open(x.path);
	busy = cli_open(x.path);
	t0 = now_ms();
	for (int i = 0; i < 10; i++) { /* 1 s of traffic on the other connection */
		cli_cmd(&busy, "epoch", "OK epoch 1");
		usleep(100000);
	}
	p = (struct pollfd){.fd = silent.fd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 2000), 1);
	assert_int_equal(recv(silent.fd, &b, 1, 0), 0); /* closed by the server */
	waited = now_ms() - t0;
	assert_true(waited >= 500);
	cli_cmd(&busy, "stats", "OK lines");
	cli_close(&silent);
	cli_close(&busy);
	srv_stop(&x);
	assert_int_equal(x.cnt.idle_disconnects, 1);
	srv_cleanup(&x);
}

/* A client that sends many big requests and reads nothing stalls nobody, loses nothing. */
static void test_slow_reader(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct cli slow, fast;
	struct ctl_reply r;
	int64_t t0;

	(void)state;
	srv_start(&x, 3000, &cfg); /* `list` is about 300 KB */
	slow = cli_open(x.path);
	fast = cli_open(x.path);
	for (int i = 0; i < 40; i++)
		cli_send(&slow, "list\n");
	usleep(200000);
	t0 = now_ms();
	cli_cmd(&fast, "weight n1 2", "OK epoch 2");
	cli_cmd(&fast, "epoch", "OK epoch 2");
	assert_true(now_ms() - t0 < 4000);
	for (int i = 0; i < 40; i++) {
		cli_expect(&slow, "OK lines 3000 members 3000", &r);
		assert_int_equal(r.nlines, 3000);
		assert_non_null(strstr(r.lines[2999], "name n3000 "));
		ctl_reply_clear(&r);
	}
	cli_close(&slow);
	cli_close(&fast);
	srv_stop(&x);
	assert_int_equal(x.cnt.output_overflows, 0);
	srv_cleanup(&x);
}

static void test_socket_file(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct stat sb;
	char sub[128];

	(void)state;
	strcpy(x.dir, "/tmp/ctl_srv_XXXXXX");
	assert_non_null(mkdtemp(x.dir));
	snprintf(x.path, sizeof(x.path), "%s/run/ringway/ctl.sock", x.dir);
	srv_start(&x, 2, &cfg);
	assert_int_equal(lstat(x.path, &sb), 0);
	assert_true(S_ISSOCK(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_uid, geteuid());
	snprintf(sub, sizeof(sub), "%s/run/ringway", x.dir);
	assert_int_equal(stat(sub, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700); /* created directories */
	srv_stop(&x);
	assert_int_equal(lstat(x.path, &sb), -1); /* removed on close */
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/run", x.dir);
	rmdir(sub);
	rmdir(x.dir);
}

static void test_stale_and_live_socket(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ctl_engine *e2;
	struct stat sb;
	char err[256];
	struct cli c;
	int fd;

	(void)state;
	strcpy(x.dir, "/tmp/ctl_srv_XXXXXX");
	assert_non_null(mkdtemp(x.dir));
	snprintf(x.path, sizeof(x.path), "%s/ctl.sock", x.dir);
	/* a crashed router's socket: bound, never unlinked, nobody listening */
	strcpy(sa.sun_path, x.path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(lstat(x.path, &sb), 0);
	srv_start(&x, 2, &cfg); /* replaces it */
	c = cli_open(x.path);
	cli_cmd(&c, "epoch", "OK epoch 1");

	/* a live one is not taken over */
	e2 = test_engine(2, NULL, NULL);
	cfg.unix_path = x.path;
	errno = 0;
	assert_null(ctl_server_open(e2, &cfg, err, sizeof(err)));
	assert_int_equal(errno, EADDRINUSE);
	assert_non_null(strstr(err, "served by another running process"));
	cli_cmd(&c, "epoch", "OK epoch 1"); /* the first still serves, same socket */
	{
		struct cli c2 = cli_open(x.path);

		cli_cmd(&c2, "epoch", "OK epoch 1");
		cli_close(&c2);
	}
	cli_close(&c);
	srv_stop(&x);

	/* a file that is not a socket is never replaced */
	fd = open(x.path, O_CREAT | O_WRONLY, 0600);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_null(ctl_server_open(e2, &cfg, err, sizeof(err)));
	assert_int_equal(errno, EEXIST);
	assert_non_null(strstr(err, "is not a socket"));
	assert_int_equal(stat(x.path, &sb), 0);
	assert_int_equal(sb.st_size, 4);
	ctl_engine_free(e2);
	srv_cleanup(&x);
}

static void test_too_many_clients(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {.max_clients = 2};
	struct cli a, b, c;

	(void)state;
	srv_start(&x, 2, &cfg);
	a = cli_open(x.path);
	b = cli_open(x.path);
	cli_cmd(&a, "epoch", "OK epoch 1");
	cli_cmd(&b, "epoch", "OK epoch 1");
	c = cli_open(x.path);
	cli_expect(&c, "ERROR too many clients (limit 2)", NULL);
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	cli_close(&a);
	usleep(100000);
	c = cli_open(x.path); /* a slot is free again */
	cli_cmd(&c, "epoch", "OK epoch 1");
	cli_close(&c);
	cli_close(&b);
	srv_stop(&x);
	assert_int_equal(x.cnt.clients_refused, 1);
	srv_cleanup(&x);
}

#define TOKEN "s3cret-token-0123456789abcdef"

/* The sandbox's directory, made before the server so a token file can live there. */
static void srv_dir(struct srv *x)
{
	if (x->dir[0] != '\0')
		return;
	strcpy(x->dir, "/tmp/ctl_srv_XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->path, sizeof(x->path), "%s/ctl.sock", x->dir);
}

/* Write @p text to the token file with @p mode; returns its path (static). */
static const char *token_file(struct srv *x, const char *text, mode_t mode)
{
	static char path[160];
	int fd;

	srv_dir(x);
	snprintf(path, sizeof(path), "%s/token", x->dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static struct cli tcp_open(struct srv *x)
{
	char err[256];
	struct cli c;

	c.fd = ctl_connect_tcp(ctl_server_tcp_port(x->s), err, sizeof(err));
	if (c.fd < 0)
		fail_msg("connect: %s", err);
	c.rd = ctl_reader_new(c.fd);
	return c;
}

/* The TCP listener exists only when asked, and only on 127.0.0.1. */
static void test_tcp_loopback_only(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {.tcp = true};
	char line[512], want[32];
	bool found = false;
	struct cli c;
	FILE *f;

	(void)state;
	cfg.tcp_token_file = token_file(&x, TOKEN "\n", 0600);
	srv_start(&x, 2, &cfg);
	assert_true(ctl_server_tcp_port(x.s) > 0);
	c = tcp_open(&x);
	cli_cmd(&c, "auth " TOKEN, "OK authenticated");
	cli_cmd(&c, "epoch", "OK epoch 1");
	cli_close(&c);
	/* the kernel's listening socket table: local address 127.0.0.1 (0100007F), state 0A */
	snprintf(want, sizeof(want), ":%04X ", ctl_server_tcp_port(x.s));
	f = fopen("/proc/net/tcp", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *p = strstr(line, want);

		if (p != NULL && strstr(line, " 0A ") != NULL) {
			assert_memory_equal(p - 8, "0100007F", 8);
			found = true;
		}
	}
	fclose(f);
	assert_true(found);
	srv_stop(&x);
	unlink(cfg.tcp_token_file);
	srv_cleanup(&x);
	/* off by default */
	{
		struct ctl_server_config none = {0};

		srv_start(&x, 2, &none);
		assert_int_equal(ctl_server_tcp_port(x.s), 0);
		srv_stop(&x);
		srv_cleanup(&x);
	}
}

/* No listener without a secret only its owner can read: no file, a file others may read, a
 * short or spaced token: the server does not start, and says why. */
static void test_tcp_token_file_rules(void **state)
{
	static const struct {
		const char *text;
		mode_t mode;
		const char *why;
	} bad[] = {
		{TOKEN "\n", 0640, "must be readable by its owner"},
		{TOKEN "\n", 0604, "must be readable by its owner"},
		{TOKEN "\n", 0620, "must be readable by its owner"},
		{"short\n", 0600, "16 to 256 characters"},
		{"two words in a token\n", 0600, "without spaces"},
		{"", 0600, "16 to 256 characters"},
	};
	struct srv x = {0};
	struct ctl_server_config cfg = {.tcp = true};
	char err[512];
	struct ctl_engine *e = test_engine(2, NULL, NULL);
	struct ctl_server *s;

	(void)state;
	srv_dir(&x);
	cfg.unix_path = x.path;
	s = ctl_server_open(e, &cfg, err, sizeof(err)); /* no token file named */
	assert_null(s);
	assert_non_null(strstr(err, "token file"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg.tcp_token_file = token_file(&x, bad[i].text, bad[i].mode);
		s = ctl_server_open(e, &cfg, err, sizeof(err));
		if (s != NULL)
			fail_msg("case %zu: a server started", i);
		if (strstr(err, bad[i].why) == NULL)
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].why);
		assert_int_equal(access(x.path, F_OK), -1); /* nothing left listening */
	}
	cfg.tcp_token_file = token_file(&x, TOKEN "\n", 0400);
	s = ctl_server_open(e, &cfg, err, sizeof(err));
	if (s == NULL)
		fail_msg("a good token file (0400) refused: %s", err);
	ctl_server_close(s);
	ctl_engine_free(e);
	unlink(cfg.tcp_token_file);
	srv_cleanup(&x);
}

/* Before `auth TOKEN` a TCP client runs nothing: a plain `add`, a browser's cross-protocol
 * POST whose body holds command lines, and a wrong token each get one ERROR and the
 * connection is closed, and the membership stays as it was; the right token works. */
static void test_tcp_auth(void **state)
{
	static const char post[] = "POST / HTTP/1.1\r\nHost: 127.0.0.1:7000\r\n"
				   "Content-Type: text/plain\r\nContent-Length: 60\r\n\r\n"
				   "add n9 198.18.1.9:11211\nadd n8 198.18.1.8:11211\nepoch\n";
	static const char get[] = "GET /list HTTP/1.1\r\nHost: localhost\r\n\r\n";
	struct srv x = {0};
	struct ctl_server_config cfg = {.tcp = true};
	struct cli c, u;

	(void)state;
	cfg.tcp_token_file = token_file(&x, TOKEN "\n", 0600);
	srv_start(&x, 2, &cfg);
	/* A command before auth. */
	c = tcp_open(&x);
	cli_cmd(&c, "add n9 198.18.1.9:11211", "ERROR authenticate first");
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	/* A browser's POST (and a GET), body lines included. */
	c = tcp_open(&x);
	cli_send(&c, post);
	cli_expect(&c, "ERROR authenticate first", NULL);
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	c = tcp_open(&x);
	cli_send(&c, get);
	cli_expect(&c, "ERROR authenticate first", NULL);
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	/* A wrong token, a prefix of the right one, one a byte longer. */
	c = tcp_open(&x);
	cli_cmd(&c, "auth s3cret-token-0123456789abcdeX", "ERROR authentication failed");
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	c = tcp_open(&x);
	cli_cmd(&c, "auth s3cret-token-0123456789abcde", "ERROR authentication failed");
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	c = tcp_open(&x);
	cli_cmd(&c, "auth " TOKEN "0", "ERROR authentication failed");
	cli_expect_eof(&c, 2000);
	cli_close(&c);
	/* Nothing changed (the Unix socket needs no token). */
	u = cli_open(x.path);
	cli_cmd(&u, "epoch", "OK epoch 1");
	cli_cmd(&u, "auth " TOKEN, "ERROR");
	/* The right token; a change is then made. */
	c = tcp_open(&x);
	cli_cmd(&c, "auth " TOKEN "\r", "OK authenticated");
	cli_cmd(&c, "add n9 198.18.1.9:11211", "OK epoch 2");
	cli_close(&c);
	cli_cmd(&u, "epoch", "OK epoch 2");
	cli_close(&u);
	srv_stop(&x);
	assert_int_equal(x.cnt.unauthenticated, 3);
	assert_int_equal(x.cnt.auth_failed, 3);
	assert_int_equal(x.cnt.auth_ok, 1);
	assert_int_equal(x.cnt.changes, 1);
	unlink(cfg.tcp_token_file);
	srv_cleanup(&x);
}

/* Fork, become nobody:nogroup, try to connect: 0 EACCES, 1 connected, 2 other. */
static int connect_as_nobody(const char *path)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256];
		int fd;

		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(3);
		fd = ctl_connect_unix(path, err, sizeof(err));
		_exit(fd >= 0 ? 1 : fd == -EACCES ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_non_root_cannot_connect(void **state)
{
	struct srv x = {0};
	struct ctl_server_config cfg = {0};

	(void)state;
	if (geteuid() != 0) {
		print_message("SKIP: not root, cannot switch to nobody to try the socket\n");
		skip();
	}
	srv_start(&x, 2, &cfg);
	chmod(x.dir, 0755); /* so that only the socket's own mode can stop nobody */
	assert_int_equal(connect_as_nobody(x.path), 0);
	/* control: with mode 0666 nobody does get in, so the check above can fail */
	chmod(x.path, 0666);
	assert_int_equal(connect_as_nobody(x.path), 1);
	chmod(x.path, 0600);
	srv_stop(&x);
	srv_cleanup(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_partial_pipelined),
		cmocka_unit_test(test_several_clients),
		cmocka_unit_test(test_megabyte_line),
		cmocka_unit_test(test_idle_client),
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_socket_file),
		cmocka_unit_test(test_stale_and_live_socket),
		cmocka_unit_test(test_too_many_clients),
		cmocka_unit_test(test_tcp_loopback_only),
		cmocka_unit_test(test_tcp_token_file_rules),
		cmocka_unit_test(test_tcp_auth),
		cmocka_unit_test(test_non_root_cannot_connect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
