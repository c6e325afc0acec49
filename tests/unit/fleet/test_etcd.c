/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/fleet against a fake etcd gateway (a thread in this test serving scripted HTTP replies
 * on 127.0.0.1): what each call sends (base64 keys and values, revisions and lease ids as
 * strings, the compare of a txn, the watch's leader-required header), what it makes of each
 * reply, and every error path: nothing listening, no answer in time, a connection cut in the
 * middle of a reply, HTTP errors with and without etcd's error body, replies that are no JSON,
 * lack the header, carry a non-number revision or bad base64; endpoint failover; a watch
 * stream split across writes, cancelled, compacted, ended, or sending garbage. The real etcd
 * is in tests/e2e/test_fleet.py.
 */

#include <setjmp.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"

#define STEPS_MAX 16
#define HDR	  "{\"header\":{\"cluster_id\":\"1\",\"revision\":\"%s\"}"

/* One scripted answer to one connection. */
struct step {
	char *chunk[4]; /* written in order, delay_ms apart; NULL ends */
	int delay_ms;
	bool hang; /* accept, read, never answer (until the test moves on) */
};

static struct {
	int lfd;
	uint16_t port;
	pthread_t th;
	pthread_mutex_t mu;
	struct step steps[STEPS_MAX];
	int nsteps, pos;
	char req[65536]; /* the last request, headers and body */
	volatile bool stop;
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void read_request(int fd)
{
	size_t len = 0;
	char *body;
	long need = -1;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = read(fd, srv.req + len, sizeof(srv.req) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		srv.req[len] = '\0';
		body = strstr(srv.req, "\r\n\r\n");
		if (body != NULL && need < 0) {
			char *cl = strcasestr(srv.req, "Content-Length:");

			need = cl != NULL && cl < body ? atol(cl + 15) : 0;
		}
		if (body != NULL && (long)(len - (size_t)(body + 4 - srv.req)) >= need)
			break;
	}
}

static void serve(int fd)
{
	struct step st = {0};

	pthread_mutex_lock(&srv.mu);
	read_request(fd);
	if (srv.pos < srv.nsteps) {
		st = srv.steps[srv.pos++];
		/* our own copies: the test may reset the script while we still write */
		for (int i = 0; i < 4; i++)
			st.chunk[i] = st.chunk[i] ? strdup(st.chunk[i]) : NULL;
	}
	pthread_mutex_unlock(&srv.mu);
	/* A hang lasts until the client gives up (closes) or 3 s pass. */
	for (int i = 0; st.hang && i < 300 && !srv.stop; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char c;

		if (poll(&p, 1, 10) > 0 && read(fd, &c, 1) <= 0)
			break;
	}
	for (int i = 0; i < 4 && st.chunk[i] != NULL; i++) {
		if (i > 0)
			sleep_ms(st.delay_ms);
		if (write(fd, st.chunk[i], strlen(st.chunk[i])) < 0)
			break;
	}
	for (int i = 0; i < 4; i++)
		free(st.chunk[i]);
	close(fd);
}

static void *server(void *arg)
{
	(void)arg;
	while (!srv.stop) {
		struct pollfd p = {.fd = srv.lfd, .events = POLLIN};
		int fd;

		if (poll(&p, 1, 50) <= 0)
			continue;
		fd = accept(srv.lfd, NULL, NULL);
		if (fd >= 0)
			serve(fd);
	}
	return NULL;
}

static uint16_t listen_any(int *fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(*fd >= 0);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(*fd, 16), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &alen), 0);
	return ntohs(a.sin_port);
}

static void script_reset(void)
{
	pthread_mutex_lock(&srv.mu);
	for (int i = 0; i < srv.nsteps; i++)
		for (int k = 0; k < 4; k++)
			free(srv.steps[i].chunk[k]);
	memset(srv.steps, 0, sizeof(srv.steps));
	srv.nsteps = srv.pos = 0;
	srv.req[0] = '\0';
	pthread_mutex_unlock(&srv.mu);
}

static struct step *add_step(void)
{
	assert_true(srv.nsteps < STEPS_MAX);
	return &srv.steps[srv.nsteps++];
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	assert_true(vasprintf(&s, f, ap) >= 0);
	va_end(ap);
	return s;
}

/* Script an HTTP reply with @p status and @p body. */
static void reply(int status, const char *body)
{
	add_step()->chunk[0] = fmt("HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
				   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				   status, strlen(body), body);
}

static int setup(void **state)
{
	(void)state;
	srv.port = listen_any(&srv.lfd);
	srv.stop = false;
	assert_int_equal(pthread_create(&srv.th, NULL, server, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	srv.stop = true;
	pthread_join(srv.th, NULL);
	close(srv.lfd);
	script_reset();
	return 0;
}

static struct fl_client *client(int timeout_ms)
{
	char url[64];
	struct fl_client *c;

	script_reset();
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", srv.port);
	c = fl_client_new(url, timeout_ms);
	assert_non_null(c);
	return c;
}

static void request_has(const char *what)
{
	if (strstr(srv.req, what) == NULL)
		fail_msg("request '%s' lacks '%s'", srv.req, what);
}

/* ---- base64 ---- */

static void test_base64(void **state)
{
	static const char *vec[][2] = {{"", ""},
				       {"f", "Zg=="},
				       {"fo", "Zm8="},
				       {"foo", "Zm9v"},
				       {"foob", "Zm9vYg=="},
				       {"fooba", "Zm9vYmE="},
				       {"foobar", "Zm9vYmFy"}};
	unsigned char bin[256];
	char enc[400], *dec;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		assert_int_equal(fl_base64_encode(vec[i][0], strlen(vec[i][0]), enc),
				 strlen(vec[i][1]));
		assert_string_equal(enc, vec[i][1]);
		assert_int_equal(fl_base64_encoded_size(strlen(vec[i][0])), strlen(vec[i][1]) + 1);
		assert_int_equal(fl_base64_decode(vec[i][1], strlen(vec[i][1]), &dec, &n), 0);
		assert_int_equal(n, strlen(vec[i][0]));
		assert_memory_equal(dec, vec[i][0], n);
		free(dec);
	}
	for (int i = 0; i < 256; i++)
		bin[i] = (unsigned char)(255 - i);
	for (size_t len = 0; len <= 256; len += 37) {
		fl_base64_encode(bin, len, enc);
		assert_int_equal(fl_base64_decode(enc, strlen(enc), &dec, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(dec, bin, len);
		free(dec);
	}
	/* refused: bad length, a character outside the alphabet, padding in the middle */
	assert_int_equal(fl_base64_decode("Zm9", 3, &dec, &n), -EINVAL);
	assert_null(dec);
	assert_int_equal(fl_base64_decode("Zm9*", 4, &dec, &n), -EINVAL);
	assert_int_equal(fl_base64_decode("Zg==Zm9v", 8, &dec, &n), -EINVAL);
	assert_int_equal(fl_base64_decode("Z===", 4, &dec, &n), -EINVAL);
	assert_int_equal(fl_base64_decode("Zm9v\n", 5, &dec, &n), -EINVAL);
}

/* ---- unary calls ---- */

static void test_range(void **state)
{
	struct fl_client *c = client(2000);
	struct fl_range r;
	char err[256];

	(void)state;
	/* key "rw/c/membership" = "members 2\n\0x" (a NUL inside stays), rev 7 */
	reply(200, "{\"header\":{\"cluster_id\":\"1\",\"revision\":\"9\"},\"kvs\":[{\"key\":"
		   "\"cncvYy9tZW1iZXJzaGlw\",\"create_revision\":\"3\",\"mod_revision\":\"7\","
		   "\"version\":\"2\",\"value\":\"bWVtYmVycyAyCgB4\",\"lease\":\"42\"}],"
		   "\"count\":\"1\"}");
	assert_int_equal(fl_range(c, "rw/c/membership", false, &r, err, sizeof(err)), 0);
	request_has("POST /v3/kv/range ");
	request_has("{\"key\":\"cncvYy9tZW1iZXJzaGlw\"}");
	assert_int_equal(r.revision, 9);
	assert_int_equal(r.count, 1);
	assert_string_equal(r.kvs[0].key, "rw/c/membership");
	assert_int_equal(r.kvs[0].value_len, 12);
	assert_memory_equal(r.kvs[0].value, "members 2\n\0x", 12);
	assert_int_equal(r.kvs[0].mod_revision, 7);
	assert_int_equal(r.kvs[0].create_revision, 3);
	assert_int_equal(r.kvs[0].lease, 42);
	fl_range_clear(&r);
	/* no such key: count 0; a prefix read sends range_end = the prefix + 1 */
	reply(200, "{\"header\":{\"revision\":\"9\"}}");
	assert_int_equal(fl_range(c, "rw/c/routers/", true, &r, err, sizeof(err)), 0);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.revision, 9);
	request_has("\"range_end\":\"cncvYy9yb3V0ZXJzMA==\""); /* "rw/c/routers0" */
	fl_range_clear(&r);
	fl_client_free(c);
}

static void test_put_txn_lease(void **state)
{
	struct fl_client *c = client(2000);
	int64_t rev = 0, id = 0;
	char err[256];
	int ttl = 0;

	(void)state;
	reply(200, "{\"header\":{\"revision\":\"12\"}}");
	assert_int_equal(fl_put(c, "k", "v1", 2, 77, &rev, err, sizeof(err)), 0);
	assert_int_equal(rev, 12);
	request_has("POST /v3/kv/put ");
	request_has("\"key\":\"aw==\"");
	request_has("\"value\":\"djE=\"");
	request_has("\"lease\":\"77\"");
	/* txn: success, then refused (etcd omits "succeeded" when false) */
	reply(200, "{\"header\":{\"revision\":\"13\"},\"succeeded\":true,\"responses\":[]}");
	assert_int_equal(fl_txn_put(c, "k", 12, "v2", 2, &rev, err, sizeof(err)), 1);
	assert_int_equal(rev, 13);
	request_has("POST /v3/kv/txn ");
	request_has("\"compare\":[{\"key\":\"aw==\",\"target\":\"MOD\",\"result\":\"EQUAL\","
		    "\"mod_revision\":\"12\"}]");
	request_has("\"success\":[{\"request_put\":{\"key\":\"aw==\",\"value\":\"djI=\"}}]");
	reply(200, "{\"header\":{\"revision\":\"14\"}}");
	assert_int_equal(fl_txn_put(c, "k", 12, "v3", 2, &rev, err, sizeof(err)), 0);
	assert_int_equal(rev, 14);
	reply(200, "{\"header\":{\"revision\":\"14\"},\"succeeded\":\"yes\"}");
	assert_int_equal(fl_txn_put(c, "k", 12, "v3", 2, &rev, err, sizeof(err)), -EPROTO);
	/* leases */
	reply(200,
	      "{\"header\":{\"revision\":\"14\"},\"ID\":\"4111120370390128390\",\"TTL\":\"5\"}");
	assert_int_equal(fl_lease_grant(c, 5, &id, err, sizeof(err)), 0);
	assert_int_equal(id, 4111120370390128390LL);
	request_has("{\"TTL\":5}");
	reply(200, "{\"header\":{\"revision\":\"14\"},\"TTL\":\"5\"}");
	assert_int_equal(fl_lease_grant(c, 5, &id, err, sizeof(err)), -EPROTO);
	reply(200, "{\"result\":{\"header\":{\"revision\":\"14\"},\"ID\":\"4111120370390128390\","
		   "\"TTL\":\"5\"}}");
	assert_int_equal(fl_lease_keepalive(c, 4111120370390128390LL, &ttl, err, sizeof(err)), 0);
	assert_int_equal(ttl, 5);
	request_has("{\"ID\":\"4111120370390128390\"}");
	/* an expired lease: TTL absent in the keepalive reply, or etcd's "lease not found" */
	reply(200, "{\"result\":{\"header\":{\"revision\":\"14\"},\"ID\":\"1\"}}");
	assert_int_equal(fl_lease_keepalive(c, 1, &ttl, err, sizeof(err)), -ENOENT);
	reply(404, "{\"error\":\"etcdserver: requested lease not found\",\"message\":"
		   "\"etcdserver: requested lease not found\",\"code\":5}");
	assert_int_equal(fl_put(c, "k", "v", 1, 123, &rev, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "lease not found"));
	reply(200, "{\"error\":{\"grpc_code\":14},\"message\":\"no leader\"}");
	assert_int_equal(fl_lease_keepalive(c, 1, &ttl, err, sizeof(err)), -EIO);
	fl_client_free(c);
}

static void test_error_paths(void **state)
{
	struct fl_client *c = client(500);
	struct fl_range r;
	char err[256];
	int64_t rev;
	int fd;
	uint16_t dead;

	(void)state;
	/* etcd's error body with an HTTP error status: -EIO and its message */
	reply(400, "{\"error\":\"invalid character\",\"message\":\"invalid character 'g'\","
		   "\"code\":3}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "invalid character 'g'"));
	assert_non_null(strstr(err, "HTTP 400"));
	/* an HTTP error without JSON */
	reply(503, "Service Unavailable");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "HTTP 503"));
	/* 200 but no JSON object, no header, a revision that is no number, bad base64 */
	reply(200, "not json");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	reply(200, "[1,2]");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	reply(200, "{\"kvs\":[]}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	reply(200, "{\"header\":{\"revision\":\"9x\"}}");
	assert_int_equal(fl_put(c, "k", "v", 1, 0, &rev, err, sizeof(err)), -EPROTO);
	reply(200,
	      "{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"aw==\",\"value\":\"%%%\"}]}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	assert_int_equal(r.count, 0);
	assert_null(r.kvs);
	reply(200, "{\"header\":{\"revision\":\"9\"},\"kvs\":{}}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	reply(200, "{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"aw==\","
		   "\"mod_revision\":[]}]}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	/* a key with a NUL inside is refused (keys are text here) */
	reply(200, "{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"YQBi\"}]}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EPROTO);
	/* the connection cut in the middle of a reply */
	add_step()->chunk[0] = fmt("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: "
				   "close\r\n\r\n{\"header\":");
	assert_true(fl_range(c, "k", false, &r, err, sizeof(err)) < 0);
	/* closed without a byte */
	add_step()->chunk[0] = NULL;
	assert_true(fl_range(c, "k", false, &r, err, sizeof(err)) < 0);
	/* no answer within the timeout (500 ms) */
	add_step()->hang = true;
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -ETIMEDOUT);
	fl_client_free(c);
	/* nothing listening */
	dead = listen_any(&fd);
	close(fd);
	{
		char url[64];

		snprintf(url, sizeof(url), "http://127.0.0.1:%u", dead);
		c = fl_client_new(url, 500);
		assert_non_null(c);
		assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -ECONNREFUSED);
		assert_non_null(strstr(err, url));
		fl_client_free(c);
	}
	/* bad endpoint lists */
	assert_null(fl_client_new("", 100));
	assert_null(fl_client_new(NULL, 100));
	assert_null(fl_client_new("ftp://x", 100));
	assert_null(fl_client_new("127.0.0.1:2379", 100));
}

/* The first endpoint refuses connections: the call goes to the second, which stays current. */
static void test_failover(void **state)
{
	char urls[128], err[256];
	struct fl_client *c;
	struct fl_range r;
	int fd;
	uint16_t dead = listen_any(&fd);

	(void)state;
	close(fd);
	script_reset();
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%u/,http://127.0.0.1:%u", dead, srv.port);
	c = fl_client_new(urls, 1000);
	assert_non_null(c);
	assert_non_null(strstr(fl_client_endpoint(c), ":"));
	reply(200, "{\"header\":{\"revision\":\"5\"}}");
	reply(200, "{\"header\":{\"revision\":\"6\"}}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), 0);
	assert_int_equal(r.revision, 5);
	fl_range_clear(&r);
	{
		char want[64];

		snprintf(want, sizeof(want), "http://127.0.0.1:%u", srv.port);
		assert_string_equal(fl_client_endpoint(c), want);
	}
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), 0);
	assert_int_equal(r.revision, 6);
	fl_range_clear(&r);
	/* an etcd error is not a reason to move on */
	reply(500, "{\"error\":\"x\",\"message\":\"etcdserver: leader changed\",\"code\":14}");
	assert_int_equal(fl_range(c, "k", false, &r, err, sizeof(err)), -EIO);
	assert_non_null(strstr(fl_client_endpoint(c), "127.0.0.1"));
	fl_client_free(c);
}

/* ---- watch ---- */

#define STREAM_HEAD "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"

static void test_watch(void **state)
{
	struct fl_client *c = client(1000);
	struct fl_event ev;
	struct fl_watch *w;
	struct step *st;
	char err[256];

	(void)state;
	st = add_step();
	st->delay_ms = 100;
	st->chunk[0] = fmt(STREAM_HEAD
			   "{\"result\":{\"header\":{\"revision\":\"3\"},"
			   "\"created\":true}}\n{\"result\":{\"header\":{\"revision\":"
			   "\"4\"},\"events\":[{\"kv\":{\"key\":\"aw==\",\"mod_revision\":\"3\","
			   "\"value\":\"YQ==\"}},{\"type\":\"DELETE\",\"kv\":{\"key\":\"aw==\",");
	/* the rest of that message arrives later, then a second message */
	st->chunk[1] = fmt("\"mod_revision\":\"4\"}}]}}\n{\"result\":{\"header\":{\"revision\":"
			   "\"5\"},\"events\":[{\"type\":\"PUT\",\"kv\":{\"key\":\"aw==\","
			   "\"mod_revision\":\"5\",\"value\":\"Yg==\"}}]}}\n");
	st->chunk[2] = fmt("{\"result\":{\"header\":{\"revision\":\"5\"},\"canceled\":true,"
			   "\"compact_revision\":\"4\"}}\n");
	w = fl_watch_open(c, "k", 3);
	assert_non_null(w);
	{
		int got = 0, rc;
		int64_t revs[3] = {0};
		enum fl_event_type types[3];

		for (int i = 0; i < 100 && got < 3; i++) {
			rc = fl_watch_next(w, 100, &ev, err, sizeof(err));
			assert_true(rc >= 0);
			if (rc == 1) {
				revs[got] = ev.kv.mod_revision;
				types[got++] = ev.type;
				if (ev.type == FL_EV_PUT)
					assert_string_equal(ev.kv.value, got == 1 ? "a" : "b");
				assert_string_equal(ev.kv.key, "k");
				fl_event_clear(&ev);
			}
		}
		assert_int_equal(got, 3);
		assert_int_equal(revs[0], 3);
		assert_int_equal(types[0], FL_EV_PUT);
		assert_int_equal(revs[1], 4);
		assert_int_equal(types[1], FL_EV_DELETE);
		assert_int_equal(revs[2], 5);
		assert_int_equal(types[2], FL_EV_PUT);
		for (int i = 0; i < 100; i++)
			if ((rc = fl_watch_next(w, 100, &ev, err, sizeof(err))) != 0)
				break;
		assert_int_equal(rc, 1);
		assert_int_equal(ev.type, FL_EV_COMPACTED);
		assert_int_equal(ev.compact_revision, 4);
		/* then the server closes the stream */
		for (int i = 0; i < 100; i++)
			if ((rc = fl_watch_next(w, 100, &ev, err, sizeof(err))) != 0)
				break;
		assert_int_equal(rc, -EPIPE);
	}
	request_has("POST /v3/watch ");
	request_has("Grpc-Metadata-hasleader: true");
	request_has("{\"create_request\":{\"key\":\"aw==\",\"start_revision\":\"3\"}}");
	fl_watch_close(w);
	fl_client_free(c);
}

/* One stream per case; @p body after the head; the first non-zero result of fl_watch_next. */
static int watch_result(const char *body, bool hang, char *err, size_t errlen)
{
	struct fl_client *c = client(1000);
	struct fl_event ev;
	struct fl_watch *w;
	struct step *st = add_step();
	int rc = 0;

	st->chunk[0] = fmt(STREAM_HEAD "%s", body);
	st->hang = hang;
	w = fl_watch_open(c, "k", 0);
	assert_non_null(w);
	for (int i = 0; i < 30 && rc == 0; i++)
		rc = fl_watch_next(w, 100, &ev, err, errlen);
	fl_event_clear(&ev);
	fl_watch_close(w);
	fl_client_free(c);
	return rc;
}

static void test_watch_errors(void **state)
{
	char err[256];
	int fd;

	(void)state;
	assert_int_equal(watch_result("{\"result\":{\"canceled\":true,\"cancel_reason\":"
				      "\"no leader\"}}\n",
				      false, err, sizeof(err)),
			 -ECANCELED);
	assert_non_null(strstr(err, "no leader"));
	assert_int_equal(watch_result("{\"error\":{\"grpc_code\":14,\"http_code\":503,"
				      "\"message\":\"etcdserver: no leader\"},\"message\":"
				      "\"etcdserver: no leader\"}\n",
				      false, err, sizeof(err)),
			 -EIO);
	assert_non_null(strstr(err, "no leader"));
	assert_int_equal(watch_result("garbage\n", false, err, sizeof(err)), -EPROTO);
	assert_int_equal(watch_result("{\"other\":1}\n", false, err, sizeof(err)), -EPROTO);
	assert_int_equal(watch_result("{\"result\":{\"events\":{}}}\n", false, err, sizeof(err)),
			 -EPROTO);
	assert_int_equal(watch_result("{\"result\":{\"events\":[{\"type\":\"MOVE\",\"kv\":{}}]}}\n",
				      false, err, sizeof(err)),
			 -EPROTO);
	assert_int_equal(watch_result("{\"result\":{\"events\":[{\"kv\":{\"key\":\"!!!!\"}}]}}\n",
				      false, err, sizeof(err)),
			 -EPROTO);
	/* a quiet stream: nothing (0) for as long as the caller waits */
	{
		struct fl_client *c = client(1000);
		struct fl_watch *w;
		struct fl_event ev;
		struct step *st = add_step();

		st->chunk[0] = fmt(STREAM_HEAD "{\"result\":{\"created\":true}}\n");
		st->hang = true;
		w = fl_watch_open(c, "k", 0);
		for (int i = 0; i < 5; i++)
			assert_int_equal(fl_watch_next(w, 50, &ev, err, sizeof(err)), 0);
		fl_watch_close(w);
		fl_client_free(c);
	}
	/* an HTTP error status */
	script_reset();
	reply(404, "{\"error\":\"Not Found\"}");
	{
		char url[64];
		struct fl_client *c;
		struct fl_watch *w;
		struct fl_event ev;
		int rc = 0;

		snprintf(url, sizeof(url), "http://127.0.0.1:%u", srv.port);
		c = fl_client_new(url, 1000);
		w = fl_watch_open(c, "k", 0);
		for (int i = 0; i < 30 && rc == 0; i++)
			rc = fl_watch_next(w, 100, &ev, err, sizeof(err));
		assert_int_equal(rc, -EIO);
		fl_watch_close(w);
		fl_client_free(c);
	}
	/* nothing listening */
	{
		char url[64];
		struct fl_client *c;
		struct fl_watch *w;
		struct fl_event ev;
		uint16_t dead = listen_any(&fd);
		int rc = 0;

		close(fd);
		snprintf(url, sizeof(url), "http://127.0.0.1:%u", dead);
		c = fl_client_new(url, 1000);
		w = fl_watch_open(c, "k", 0);
		for (int i = 0; i < 30 && rc == 0; i++)
			rc = fl_watch_next(w, 100, &ev, err, sizeof(err));
		assert_int_equal(rc, -ECONNREFUSED);
		fl_watch_close(w);
		fl_client_free(c);
	}
}

/* ---- layout ---- */

static void test_layout(void **state)
{
	struct fl_report r = {.revision = 42, .digest = 0x00ab, .applied_ms = 1700000000123}, back;
	char key[FL_KEY_MAX], *v, big[FL_KEY_MAX + 8];

	(void)state;
	assert_int_equal(fl_key_membership("/ringway", "prod", key), 0);
	assert_string_equal(key, "/ringway/prod/membership");
	assert_int_equal(fl_key_router("/ringway", "prod", "r1", key), 0);
	assert_string_equal(key, "/ringway/prod/routers/r1");
	assert_int_equal(fl_key_router("/ringway", "prod", "", key), 0);
	assert_string_equal(key, "/ringway/prod/routers/");
	assert_int_equal(fl_key_membership("/ringway", "a/b", key), -EINVAL);
	assert_int_equal(fl_key_membership("", "a", key), -EINVAL);
	assert_int_equal(fl_key_router("/r", "a", "x/y", key), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(fl_key_membership("/r", big, key), -ENAMETOOLONG);
	v = fl_report_format(&r);
	assert_string_equal(v, "{\"revision\":42,\"digest\":\"00000000000000ab\","
			       "\"applied_ms\":1700000000123}");
	assert_int_equal(fl_report_parse(v, strlen(v), &back), 0);
	assert_int_equal(back.revision, 42);
	assert_int_equal(back.digest, 0xab);
	assert_int_equal(back.applied_ms, 1700000000123LL);
	assert_string_equal(back.error, "");
	free(v);
	r.error_revision = 43;
	snprintf(r.error, sizeof(r.error), "the router refused it: \"x\"");
	v = fl_report_format(&r);
	assert_int_equal(fl_report_parse(v, strlen(v), &back), 0);
	assert_int_equal(back.error_revision, 43);
	assert_string_equal(back.error, "the router refused it: \"x\"");
	free(v);
	assert_int_equal(fl_report_parse("{}", 2, &back), -EPROTO);
	assert_int_equal(fl_report_parse("nope", 4, &back), -EPROTO);
	v = "{\"revision\":1,\"digest\":\"abc\",\"applied_ms\":1}";
	assert_int_equal(fl_report_parse(v, strlen(v), &back), -EPROTO);
	v = "{\"revision\":\"1\",\"digest\":\"00000000000000ab\",\"applied_ms\":1}";
	assert_int_equal(fl_report_parse(v, strlen(v), &back), -EPROTO);
	v = "{\"revision\":1,\"digest\":\"00000000000000ab\",\"applied_ms\":1,\"error\":3}";
	assert_int_equal(fl_report_parse(v, strlen(v), &back), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64),	      cmocka_unit_test(test_range),
		cmocka_unit_test(test_put_txn_lease), cmocka_unit_test(test_error_paths),
		cmocka_unit_test(test_failover),      cmocka_unit_test(test_watch),
		cmocka_unit_test(test_watch_errors),  cmocka_unit_test(test_layout),
	};

	if (fl_global_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, setup, teardown);
}
