/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /metrics over libmicrohttpd: one internal thread on epoll, each scrape builds the
 * exposition into a buffer the response then owns.
 *
 * Why it cannot be starved by a few clients (issue 28 item 5): the thread never blocks on a
 * connection (epoll, non-blocking sockets), so an idle or slowly-sending connection costs a
 * file descriptor and its memory pool, not the thread's time. What it can run out of is
 * connection slots: at 16 of them, 16 idle connections left every scrape in the listen
 * backlog until the 10 s timeout freed one. Now: RW_METRICS_CONNECTIONS slots in all, at most
 * RW_METRICS_PER_IP of them from one address (a single host cannot take them all: its
 * further connections are closed at once), and RW_METRICS_TIMEOUT_S without a byte closes a
 * connection (Prometheus opens a new one per scrape if its keep-alive one was closed). A
 * client that trickles a byte per timeout keeps its slot: that is what the per-IP limit
 * bounds. Memory: at most RW_METRICS_CONNECTIONS pools of libmicrohttpd's default 32 KiB.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "metrics.h"
#include "observe.h"

#define RW_METRICS_CONNECTIONS 512
#define RW_METRICS_PER_IP      192
#define RW_METRICS_TIMEOUT_S   5

struct rw_metrics {
	struct MHD_Daemon *daemon;
	const struct dp *dp;
	_Atomic uint64_t scrapes;
	/* Written by the control lcore (rw_metrics_fleet), read by scrapes: each value on its
	 * own, relaxed (no other memory is published through them). */
	_Atomic uint64_t fleet_managed, fleet_refused;
};

void rw_metrics_fleet(struct rw_metrics *m, bool managed, uint64_t refused)
{
	if (m == NULL)
		return;
	atomic_store_explicit(&m->fleet_managed, managed, memory_order_relaxed);
	atomic_store_explicit(&m->fleet_refused, refused, memory_order_relaxed);
}

/* The fleet's part of the exposition: what the control plane knows, beside the data plane's. */
static void fleet_metrics(const struct rw_metrics *m, struct obs_text *t)
{
	obs_prom_family(t, "ringway_fleet_managed",
			"1 when the membership comes from a fleet's store (fleet managed).",
			OBS_PROM_GAUGE);
	obs_prom_sample(t, "ringway_fleet_managed", NULL, 0,
			atomic_load_explicit(&m->fleet_managed, memory_order_relaxed));
	obs_prom_family(t, "ringway_fleet_refused_revision",
			"The fleet revision this router could not apply (its agent reports why), "
			"0 when none.",
			OBS_PROM_GAUGE);
	obs_prom_sample(t, "ringway_fleet_refused_revision", NULL, 0,
			atomic_load_explicit(&m->fleet_refused, memory_order_relaxed));
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, char *body, size_t len,
			     enum MHD_ResponseMemoryMode mode, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result rc;

	if (r == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	static char not_found[] = "not found: the metrics are at /metrics\n";
	static char not_allowed[] = "method not allowed\n";
	struct rw_metrics *m = cls;
	struct obs_text t = {0};

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)state;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, strlen(not_allowed),
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, not_found, strlen(not_found),
			     MHD_RESPMEM_PERSISTENT, "text/plain");
	if (dp_metrics_write(m->dp, &t) != 0 || (fleet_metrics(m, &t), t.oom)) {
		obs_text_release(&t);
		return MHD_NO; /* out of memory: the connection is closed */
	}
	atomic_fetch_add_explicit(&m->scrapes, 1, memory_order_relaxed);
	return reply(c, MHD_HTTP_OK, t.buf, t.len, MHD_RESPMEM_MUST_FREE,
		     "text/plain; version=0.0.4; charset=utf-8");
}

struct rw_metrics *rw_metrics_start(const struct dp *dp, uint32_t addr, uint16_t port, char *err,
				    size_t errlen)
{
	struct rw_metrics *m = calloc(1, sizeof(*m));
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	char a[INET_ADDRSTRLEN];

	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->dp = dp;
	sin.sin_addr.s_addr = addr;
	m->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, port, NULL, NULL, on_request, m,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin, MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)RW_METRICS_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned int)RW_METRICS_PER_IP, MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)RW_METRICS_TIMEOUT_S, MHD_OPTION_END);
	if (m->daemon == NULL) {
		int e = errno;

		inet_ntop(AF_INET, &addr, a, sizeof(a));
		snprintf(err, errlen, "cannot listen on %s:%u: %s", a, port,
			 e ? strerror(e) : "libmicrohttpd refused");
		free(m);
		return NULL;
	}
	return m;
}

void rw_metrics_stop(struct rw_metrics *m)
{
	if (m == NULL)
		return;
	MHD_stop_daemon(m->daemon);
	free(m);
}

uint64_t rw_metrics_scrapes(const struct rw_metrics *m)
{
	return m ? atomic_load_explicit(&m->scrapes, memory_order_relaxed) : 0;
}
