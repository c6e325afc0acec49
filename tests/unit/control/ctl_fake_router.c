/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A stand-in for the router's control lcore: serves the control library on a socket with a
 * publish callback that records what it was given, so ringwayctl and the socket server can be
 * tested end to end without DPDK.
 *
 *   ctl_fake_router --socket PATH [--state FILE] [--nodes N] [--tcp --token-file FILE]
 *                   [--idle-ms MS] [--max-clients N] [--traffic]
 *
 * Starts from FILE when it exists, else from N nodes n1..nN at 198.18.(1 + i / 250).(i % 250)
 * port 11211. Publishing
 * fails with EIO when the new membership has a member named "failpublish" (to test how a
 * refused publish is reported). Prints "ready [tcp PORT]" once listening; exits 0 on SIGTERM.
 * --traffic: `list` and `stats` also carry data-plane counters that grow with time, as if
 * member i (0-based) took 1000 * (i + 1) requests/s and returned 90 % of them (p99 of
 * 100 us * (i + 1)), so `ringwayctl top` has rates to compute.
 */

#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"

static volatile sig_atomic_t stop;
static unsigned long publishes;
static bool traffic;
static double started_s;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --traffic: requests member @p idx was sent so far. */
static uint64_t fake_forwarded(uint32_t idx)
{
	return (uint64_t)((now_s() - started_s) * 1000.0 * (idx + 1));
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int fake_publish(void *ctx, const struct ctl_state *next, const struct pl_placement *pl)
{
	(void)ctx;
	for (uint32_t i = 0; i < ctl_state_count(next); i++)
		if (strcmp(ctl_state_member(next, i)->pl.name, "failpublish") == 0)
			return -EIO;
	if (pl_member_count(pl) != ctl_state_count(next))
		return -EINVAL;
	publishes++;
	return 0;
}

static int fake_stats(void *ctx, struct ctl_text *out)
{
	uint64_t fwd = 0;

	(void)ctx;
	if (traffic) {
		for (uint32_t i = 0; i < 4; i++)
			fwd += fake_forwarded(i);
		ctl_text_appendf(out,
				 "rx %" PRIu64 "\nforwarded %" PRIu64 "\nreturned %" PRIu64
				 "\ndropped %" PRIu64 "\nrtt_p99_ns 400000\nrouter_p99_ns 9000\n",
				 fwd + fwd / 100, fwd, fwd / 10 * 9, fwd / 100);
	}
	return ctl_text_appendf(out, "router.publishes %lu\nrouter.rx 0\n", publishes);
}

static void fake_status(void *ctx, uint32_t idx, const struct ctl_member *m, struct ctl_text *out)
{
	(void)ctx;
	ctl_text_appendf(out, " arp %s", m->has_mac ? "static" : idx % 2 ? "pending" : "resolved");
	if (traffic) {
		uint64_t fwd = fake_forwarded(idx);

		ctl_text_appendf(out,
				 " health %s forwarded %" PRIu64 " returned %" PRIu64
				 " rtt_p99_ns %u slow %d",
				 idx == 0 ? "suspect" : "up", fwd, fwd / 10 * 9, 100000 * (idx + 1),
				 idx == 3);
	}
}

static struct ctl_state *initial_state(const char *state_path, unsigned nodes)
{
	struct ctl_state *st = NULL;
	struct ctl_member *m;
	char err[512];
	int rc = state_path ? ctl_state_load(state_path, &st, err, sizeof(err)) : -ENOENT;

	if (rc == 0)
		return st;
	if (rc != -ENOENT) {
		fprintf(stderr, "ctl_fake_router: %s\n", err);
		return NULL;
	}
	st = ctl_state_new(NULL, 1);
	m = calloc(nodes + 1, sizeof(*m));
	for (unsigned i = 1; st != NULL && m != NULL && i <= nodes; i++) {
		char spec[64];

		snprintf(spec, sizeof(spec), "n%u 198.18.%u.%u:11211", i, 1 + i / 250, i % 250);
		if (ctl_member_parse(spec, strlen(spec), &m[i - 1], err, sizeof(err)) < 0)
			goto fail;
	}
	if (st == NULL || m == NULL || ctl_state_replace(st, m, nodes, err, sizeof(err)) < 0)
		goto fail;
	free(m);
	return st;
fail:
	fprintf(stderr, "ctl_fake_router: %s\n", st && m ? err : "out of memory");
	ctl_state_free(st);
	free(m);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"socket", required_argument, NULL, 's'},
		{"state", required_argument, NULL, 'f'},
		{"nodes", required_argument, NULL, 'n'},
		{"tcp", no_argument, NULL, 't'},
		{"token-file", required_argument, NULL, 'k'},
		{"idle-ms", required_argument, NULL, 'i'},
		{"max-clients", required_argument, NULL, 'm'},
		{"traffic", no_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	struct ctl_server_config cfg = {0};
	struct ctl_ops ops = {
		.publish = fake_publish, .stats = fake_stats, .member_status = fake_status};
	const char *state_path = NULL;
	struct ctl_state *st;
	struct ctl_engine *e;
	struct ctl_server *srv;
	unsigned nodes = 4;
	char err[512];
	int c;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			cfg.unix_path = optarg;
			break;
		case 'f':
			state_path = optarg;
			break;
		case 'n':
			nodes = (unsigned)atoi(optarg);
			break;
		case 't':
			cfg.tcp = true;
			break;
		case 'k':
			cfg.tcp_token_file = optarg;
			break;
		case 'i':
			cfg.idle_ms = (uint32_t)atoi(optarg);
			break;
		case 'm':
			cfg.max_clients = (uint32_t)atoi(optarg);
			break;
		case 'r':
			traffic = true;
			break;
		default:
			return 2;
		}
	}
	started_s = now_s();
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	st = initial_state(state_path, nodes);
	if (st == NULL)
		return 1;
	e = ctl_engine_new(st, state_path, &ops);
	if (e == NULL) {
		fprintf(stderr, "ctl_fake_router: initial membership refused: %s\n",
			strerror(errno));
		return 1;
	}
	srv = ctl_server_open(e, &cfg, err, sizeof(err));
	if (srv == NULL) {
		fprintf(stderr, "ctl_fake_router: %s\n", err);
		ctl_engine_free(e);
		return 1;
	}
	if (cfg.tcp)
		printf("ready tcp %u\n", ctl_server_tcp_port(srv));
	else
		printf("ready\n");
	fflush(stdout);
	while (!stop)
		if (ctl_server_poll(srv, 100) < 0)
			break;
	ctl_server_close(srv);
	ctl_engine_free(e);
	return 0;
}
