/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The management socket server: one thread, poll(), non-blocking sockets. Every client has
 * a bounded input buffer (one line) and an output buffer; a client's lines are run only while
 * its unread replies are small, so a client that does not read stops being read (and is
 * dropped when idle), and nobody can make the server buffer without bound.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_priv.h"

/* Input buffer: a whole line of CTL_LINE_MAX bytes plus "\r\n". */
#define IN_MAX (CTL_LINE_MAX + 2)
/* Lines of one client are run only while fewer unread reply bytes than this are queued. */
#define OUT_RUN_BELOW (64u << 10)
/* Lines run per client per poll round, so that one client cannot hog a round. */
#define LINES_PER_ROUND 64
/* After refusing a long line, input discarded before the connection is closed anyway. */
#define DRAIN_MAX (64u << 20)

struct client {
	int fd; /* -1: free slot */
	struct ctl_session *sess;
	char in[IN_MAX];
	size_t in_len;
	struct ctl_text out;
	size_t out_off;
	bool eof;     /* the peer will send no more */
	bool closing; /* refused: flush the reply, then drain and close */
	bool shut;    /* our side shut down for writing (closing, reply flushed) */
	bool authed;  /* may run commands: Unix clients at once, TCP ones after `auth` */
	size_t drained;
	int64_t last_ms; /* last byte in or out */
};

struct ctl_server {
	struct ctl_engine *e;
	struct ctl_counters *cnt;
	int ufd, tfd;
	uint16_t tport;
	char token[CTL_TOKEN_MAX + 1]; /* TCP clients' shared secret */
	char *path;
	dev_t dev;
	ino_t ino;
	uint32_t idle_ms;
	size_t max_output;
	uint32_t max_clients;
	struct client *c;
	struct pollfd *pfd;
	uint32_t *map; /* pfd index -> client slot */
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail_errno(int rc, char *err, size_t errlen, const char *fmt, const char *arg)
{
	char what[512];

	snprintf(what, sizeof(what), fmt, arg);
	ctl_fail(err, errlen, "%s: %s", what, strerror(-rc));
	return rc;
}

/* mkdir -p of the directory part of @p path; created directories get mode 0700. */
static int make_parents(const char *path, char *err, size_t errlen)
{
	char *dir = strdup(path);
	int rc = 0;

	if (dir == NULL)
		return -ENOMEM;
	for (char *p = dir + 1; *p != '\0' && rc == 0; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			rc = fail_errno(-errno, err, errlen, "cannot create directory %s", dir);
		*p = '/';
	}
	free(dir);
	return rc;
}

static int unix_addr(const char *path, struct sockaddr_un *sa, char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return fail_errno(-ENAMETOOLONG, err, errlen, "socket path %s", path);
	strcpy(sa->sun_path, path);
	return 0;
}

/* A socket file at @p path: replace it when nobody listens, refuse when somebody does. */
static int clear_stale(const char *path, const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat sb;
	int fd, rc;

	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : fail_errno(-errno, err, errlen, "stat %s", path);
	if (!S_ISSOCK(sb.st_mode)) {
		ctl_fail(err, errlen, "%s exists and is not a socket: refusing to replace it",
			 path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail_errno(-errno, err, errlen, "socket for %s", path);
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ? 0 : -errno;
	close(fd);
	if (rc == 0) {
		ctl_fail(err, errlen,
			 "%s is served by another running process: refusing to "
			 "take it over",
			 path);
		return -EADDRINUSE;
	}
	if (rc != -ECONNREFUSED)
		return fail_errno(rc, err, errlen, "probing the existing socket %s", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return fail_errno(-errno, err, errlen, "removing the stale socket %s", path);
	return 0;
}

static int open_unix(struct ctl_server *srv, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct stat sb;
	mode_t old;
	int rc;

	if ((rc = unix_addr(path, &sa, err, errlen)) < 0 ||
	    (rc = make_parents(path, err, errlen)) < 0 ||
	    (rc = clear_stale(path, &sa, err, errlen)) < 0)
		return rc;
	srv->ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->ufd < 0)
		return fail_errno(-errno, err, errlen, "socket for %s", path);
	old = umask(0177); /* the file is born 0600: no window where others may connect */
	rc = bind(srv->ufd, (const struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : -errno;
	umask(old);
	if (rc < 0)
		return fail_errno(rc, err, errlen, "bind %s", path);
	if (chmod(path, 0600) < 0 || lstat(path, &sb) < 0) {
		rc = fail_errno(-errno, err, errlen, "chmod 0600 %s", path);
		unlink(path);
		return rc;
	}
	srv->dev = sb.st_dev;
	srv->ino = sb.st_ino;
	if (listen(srv->ufd, 16) < 0) {
		rc = fail_errno(-errno, err, errlen, "listen %s", path);
		unlink(path);
		return rc;
	}
	return 0;
}

int ctl_token_load(const char *path, char token[CTL_TOKEN_MAX + 1], char *err, size_t errlen)
{
	char buf[CTL_TOKEN_MAX + 2];
	struct stat sb;
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	if (path == NULL || path[0] == '\0')
		return ctl_fail(err, errlen, "the TCP listener needs a token file");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return fail_errno(-errno, err, errlen, "token file %s", path);
	if (fstat(fd, &sb) < 0)
		rc = fail_errno(-errno, err, errlen, "token file %s", path);
	else if (!S_ISREG(sb.st_mode))
		rc = ctl_fail(err, errlen, "token file %s: not a regular file", path);
	else if (sb.st_uid != geteuid() || (sb.st_mode & 077) != 0)
		rc = ctl_fail(err, errlen,
			      "token file %s: mode %04o owner %u: must be readable by its owner "
			      "(uid %u) only (chmod 600): refusing a secret others can read",
			      path, (unsigned int)(sb.st_mode & 07777), (unsigned int)sb.st_uid,
			      (unsigned int)geteuid());
	while (rc == 0 && len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0 && errno != EINTR)
			rc = fail_errno(-errno, err, errlen, "reading token file %s", path);
		else if (n > 0)
			len += (size_t)n;
	}
	close(fd);
	if (rc != 0)
		return rc;
	for (n = 0; (size_t)n < len && buf[n] != '\n' && buf[n] != '\r'; n++)
		if (buf[n] <= ' ' || buf[n] > '~')
			return ctl_fail(err, errlen,
					"token file %s: the token must be printable ASCII "
					"without spaces",
					path);
	if (n < CTL_TOKEN_MIN || n > CTL_TOKEN_MAX)
		return ctl_fail(err, errlen,
				"token file %s: the token (its first line) must be %d to %d "
				"characters, not %zd",
				path, CTL_TOKEN_MIN, CTL_TOKEN_MAX, n);
	memcpy(token, buf, (size_t)n);
	token[n] = '\0';
	return 0;
}

static int open_tcp(struct ctl_server *srv, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	socklen_t len = sizeof(sa);
	int one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv->tfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->tfd < 0)
		return fail_errno(-errno, err, errlen, "%s", "tcp socket");
	setsockopt(srv->tfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->tfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(srv->tfd, 16) < 0 ||
	    getsockname(srv->tfd, (struct sockaddr *)&sa, &len) < 0)
		return fail_errno(-errno, err, errlen, "%s", "tcp listener on 127.0.0.1");
	srv->tport = ntohs(sa.sin_port);
	return 0;
}

struct ctl_server *ctl_server_open(struct ctl_engine *e, const struct ctl_server_config *cfg,
				   char *err, size_t errlen)
{
	static const struct ctl_server_config defaults;
	struct ctl_server *srv = calloc(1, sizeof(*srv));
	int rc = -ENOMEM;

	if (cfg == NULL)
		cfg = &defaults;
	if (srv == NULL)
		goto fail;
	srv->e = e;
	srv->cnt = ctl_engine_counters(e);
	srv->ufd = srv->tfd = -1;
	srv->idle_ms = cfg->idle_ms ? cfg->idle_ms : CTL_DEFAULT_IDLE_MS;
	srv->max_clients = cfg->max_clients ? cfg->max_clients : 16;
	srv->max_output = cfg->max_output ? cfg->max_output : (64u << 20);
	srv->path = strdup(cfg->unix_path ? cfg->unix_path : CTL_DEFAULT_SOCKET);
	srv->c = calloc(srv->max_clients, sizeof(*srv->c));
	srv->pfd = calloc((size_t)srv->max_clients + 2, sizeof(*srv->pfd));
	srv->map = calloc((size_t)srv->max_clients + 2, sizeof(*srv->map));
	if (srv->path == NULL || srv->c == NULL || srv->pfd == NULL || srv->map == NULL)
		goto fail;
	for (uint32_t i = 0; i < srv->max_clients; i++)
		srv->c[i].fd = -1;
	if ((rc = open_unix(srv, srv->path, err, errlen)) < 0) {
		free(srv->path); /* not ours: close must not unlink it */
		srv->path = NULL;
		goto fail;
	}
	if (cfg->tcp && ((rc = ctl_token_load(cfg->tcp_token_file, srv->token, err, errlen)) < 0 ||
			 (rc = open_tcp(srv, cfg->tcp_port, err, errlen)) < 0))
		goto fail;
	return srv;
fail:
	if (rc == -ENOMEM)
		ctl_fail(err, errlen, "out of memory");
	ctl_server_close(srv);
	errno = -rc;
	return NULL;
}

uint16_t ctl_server_tcp_port(const struct ctl_server *srv)
{
	return srv->tport;
}

uint32_t ctl_server_clients(const struct ctl_server *srv)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < srv->max_clients; i++)
		n += srv->c[i].fd >= 0;
	return n;
}

static void client_close(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	ctl_session_free(c->sess);
	c->sess = NULL;
	ctl_text_release(&c->out);
}

void ctl_server_close(struct ctl_server *srv)
{
	struct stat sb;

	if (srv == NULL)
		return;
	for (uint32_t i = 0; srv->c != NULL && i < srv->max_clients; i++)
		if (srv->c[i].fd >= 0)
			client_close(&srv->c[i]);
	if (srv->ufd >= 0)
		close(srv->ufd);
	if (srv->tfd >= 0)
		close(srv->tfd);
	/* Remove the socket file only if it is still the one we made. */
	if (srv->path != NULL && srv->ufd >= 0 && lstat(srv->path, &sb) == 0 &&
	    sb.st_dev == srv->dev && sb.st_ino == srv->ino)
		unlink(srv->path);
	free(srv->path);
	free(srv->c);
	free(srv->pfd);
	free(srv->map);
	memset(srv->token, 0, sizeof(srv->token));
	free(srv);
}

static void accept_all(struct ctl_server *srv, int lfd, int64_t now)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct client *c = NULL;
		char msg[64];

		if (fd < 0)
			return; /* EAGAIN, or a client that went away: nothing to do */
		for (uint32_t i = 0; i < srv->max_clients && c == NULL; i++)
			if (srv->c[i].fd < 0)
				c = &srv->c[i];
		if (c != NULL)
			c->sess = ctl_session_new(srv->e);
		if (c == NULL || c->sess == NULL) {
			int n = snprintf(msg, sizeof(msg), "ERROR too many clients (limit %u)\n",
					 srv->max_clients);

			srv->cnt->clients_refused++;
			(void)!send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		srv->cnt->clients_accepted++;
		c->fd = fd;
		c->in_len = c->out_off = c->drained = 0;
		c->eof = c->closing = c->shut = false;
		c->authed = lfd != srv->tfd;
		c->last_ms = now;
	}
}

static size_t pending_out(const struct client *c)
{
	return c->out.len - c->out_off;
}

/* Send what is queued; false when the connection is dead. */
static bool client_flush(struct client *c, int64_t now)
{
	while (pending_out(c) > 0) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off, pending_out(c),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		c->out_off += (size_t)n;
		c->last_ms = now;
	}
	ctl_text_reset(&c->out);
	c->out_off = 0;
	return true;
}

static void refuse_long_line(struct ctl_server *srv, struct client *c)
{
	srv->cnt->long_lines++;
	srv->cnt->errors++;
	srv->cnt->commands++;
	ctl_text_appendf(&c->out, "ERROR line too long (limit %d bytes): closing the connection\n",
			 CTL_LINE_MAX);
	c->closing = true;
	c->in_len = 0;
}

/* Equal in time that does not depend on where @p a and the secret @p b differ (only on the
 * secret's length). */
static bool ct_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	volatile unsigned char d = (unsigned char)(alen != blen);

	for (size_t i = 0; i < blen; i++)
		d |= (unsigned char)((i < alen ? a[i] : 0) ^ b[i]);
	return d == 0;
}

/* Refuse and close: flush @p why, run nothing more. */
static void refuse_and_close(struct client *c, const char *why)
{
	ctl_text_appendf(&c->out, "ERROR %s: closing the connection\n", why);
	c->closing = true;
	c->in_len = 0;
}

/* A TCP client's line before it authenticated: `auth TOKEN` or the end of the connection
 * (whatever else it is: an unknown command, a browser's `POST / HTTP/1.1` or `Host:` line).
 * Blank lines are ignored, as everywhere. */
static void client_auth(struct ctl_server *srv, struct client *c, const char *line, size_t len)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return;
	srv->cnt->commands++;
	if (len > 5 && memcmp(line, "auth ", 5) == 0 &&
	    ct_equal(line + 5, len - 5, srv->token, strlen(srv->token))) {
		srv->cnt->auth_ok++;
		c->authed = true;
		ctl_text_appendf(&c->out, "OK authenticated\n");
		return;
	}
	srv->cnt->errors++;
	if (len >= 5 && memcmp(line, "auth ", 5) == 0) {
		srv->cnt->auth_failed++;
		refuse_and_close(c, "authentication failed");
	} else {
		srv->cnt->unauthenticated++;
		refuse_and_close(c, "authenticate first with `auth TOKEN`");
	}
}

/* Run complete lines (and a final unterminated one at EOF) while replies are drained. */
static int client_run(struct ctl_server *srv, struct client *c)
{
	size_t start = 0;
	int ran = 0;

	while (!c->closing && ran < LINES_PER_ROUND && pending_out(c) < OUT_RUN_BELOW) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);
		size_t len = nl ? (size_t)(nl - (c->in + start)) : c->in_len - start;

		if (nl == NULL && !(c->eof && len > 0))
			break;
		if (len > (size_t)CTL_LINE_MAX + (len > 0 && c->in[start + len - 1] == '\r')) {
			refuse_long_line(srv, c);
			return ran;
		}
		if (!c->authed) {
			client_auth(srv, c, c->in + start, len);
			if (c->closing)
				return ran;
		} else if (ctl_session_line(c->sess, c->in + start, len, &c->out) == 1) {
			ran++;
		}
		start += len + (nl != NULL);
	}
	if (c->closing)
		return ran;
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (c->in_len == IN_MAX && memchr(c->in, '\n', c->in_len) == NULL)
		refuse_long_line(srv, c);
	return ran;
}

/* Read what the kernel holds for us; false when the connection is dead. */
static bool client_read(struct client *c, int64_t now)
{
	char sink[16384];

	for (;;) {
		char *dst = c->closing ? sink : c->in + c->in_len;
		size_t room = c->closing ? sizeof(sink) : IN_MAX - c->in_len;
		ssize_t n;

		if (room == 0)
			return true;
		n = recv(c->fd, dst, room, MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (n == 0) {
			c->eof = true;
			return true;
		}
		c->last_ms = now;
		if (c->closing)
			c->drained += (size_t)n;
		else
			c->in_len += (size_t)n;
		if (c->drained > DRAIN_MAX)
			return false;
	}
}

static bool wants_input(const struct client *c)
{
	if (c->eof)
		return false;
	if (c->closing)
		return true; /* drain what a refused client still sends */
	return c->in_len < IN_MAX && pending_out(c) < OUT_RUN_BELOW;
}

/* Has complete lines it could run now (so the next poll must not sleep). */
static bool runnable(const struct client *c)
{
	return !c->closing && pending_out(c) < OUT_RUN_BELOW &&
	       (memchr(c->in, '\n', c->in_len) != NULL || (c->eof && c->in_len > 0));
}

/* After I/O: run lines, flush, decide whether the client stays. Returns commands run. */
static int client_step(struct ctl_server *srv, struct client *c, int64_t now)
{
	int ran = client_run(srv, c);
	bool alive = client_flush(c, now);

	if (alive && pending_out(c) > srv->max_output) {
		srv->cnt->output_overflows++;
		alive = false;
	}
	if (alive && c->closing && pending_out(c) == 0 && !c->shut) {
		shutdown(c->fd, SHUT_WR); /* the refusal is out; wait for the peer to go */
		c->shut = true;
	}
	if (alive && c->eof && pending_out(c) == 0 && (c->closing || !runnable(c)))
		alive = false;
	if (alive && now - c->last_ms >= (int64_t)srv->idle_ms) {
		srv->cnt->idle_disconnects++;
		alive = false;
	}
	if (!alive)
		client_close(c);
	return ran;
}

static int poll_timeout(const struct ctl_server *srv, int timeout_ms, int64_t now)
{
	int64_t t = timeout_ms < 0 ? INT32_MAX : timeout_ms;

	for (uint32_t i = 0; i < srv->max_clients; i++) {
		const struct client *c = &srv->c[i];
		int64_t left;

		if (c->fd < 0)
			continue;
		if (runnable(c))
			return 0;
		left = c->last_ms + srv->idle_ms - now;
		if (left < t)
			t = left > 0 ? left : 0;
	}
	return (int)t;
}

int ctl_server_poll(struct ctl_server *srv, int timeout_ms)
{
	int64_t now = now_ms();
	uint32_t n = 0, *map = srv->map;
	int rc, ran = 0;

	if (srv->ufd >= 0)
		srv->pfd[n++] = (struct pollfd){.fd = srv->ufd, .events = POLLIN};
	if (srv->tfd >= 0)
		srv->pfd[n++] = (struct pollfd){.fd = srv->tfd, .events = POLLIN};
	for (uint32_t i = 0; i < srv->max_clients; i++) {
		struct client *c = &srv->c[i];

		if (c->fd < 0)
			continue;
		map[n] = i;
		srv->pfd[n++] = (struct pollfd){
			.fd = c->fd,
			.events = (short)((wants_input(c) ? POLLIN : 0) |
					  (pending_out(c) > 0 ? POLLOUT : 0)),
		};
	}
	rc = poll(srv->pfd, n, poll_timeout(srv, timeout_ms, now));
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	now = now_ms();
	for (uint32_t k = 0; k < n; k++) {
		struct pollfd *p = &srv->pfd[k];

		if (p->fd == srv->ufd || p->fd == srv->tfd) {
			if (p->revents & POLLIN)
				accept_all(srv, p->fd, now);
			continue;
		}
		struct client *c = &srv->c[map[k]];

		if ((p->revents & (POLLIN | POLLHUP | POLLERR)) && !client_read(c, now)) {
			client_close(c);
			continue;
		}
		ran += client_step(srv, c, now);
	}
	return ran;
}

/* ---- client side ---- */

int ctl_connect_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	int fd, rc;

	if ((rc = unix_addr(path, &sa, err, errlen)) < 0)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail_errno(-errno, err, errlen, "socket for %s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	rc = -errno;
	close(fd);
	if (rc == -ENOENT)
		ctl_fail(err, errlen, "no control socket at %s (is ringway running?)", path);
	else if (rc == -ECONNREFUSED)
		ctl_fail(err, errlen, "nobody serves %s (a stale socket?)", path);
	else
		fail_errno(rc, err, errlen, "connect %s", path);
	return rc;
}

int ctl_auth(int fd, const char *token, int timeout_ms, char *err, size_t errlen)
{
	struct ctl_reader *rd;
	struct ctl_reply r = {0};
	char line[CTL_TOKEN_MAX + 8];
	int n = snprintf(line, sizeof(line), "auth %s\n", token);
	int rc;

	if (n < 0 || (size_t)n >= sizeof(line))
		return ctl_fail(err, errlen, "token too long");
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		return fail_errno(-errno, err, errlen, "%s", "sending auth");
	memset(line, 0, sizeof(line));
	rd = ctl_reader_new(fd);
	if (rd == NULL)
		return -ENOMEM;
	rc = ctl_reader_next(rd, &r, timeout_ms);
	if (rc == 0 && !r.ok) {
		ctl_fail(err, errlen, "%s", r.head);
		rc = -EACCES;
	} else if (rc < 0) {
		fail_errno(rc, err, errlen, "%s", "authentication reply");
	}
	ctl_reply_clear(&r);
	ctl_reader_free(rd);
	return rc;
}

int ctl_connect_tcp(uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	char what[32];
	int fd, rc;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(what, sizeof(what), "127.0.0.1:%u", port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail_errno(-errno, err, errlen, "socket for %s", what);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	rc = -errno;
	close(fd);
	return fail_errno(rc, err, errlen, "connect %s", what);
}
