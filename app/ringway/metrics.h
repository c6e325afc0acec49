/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_METRICS_H
#define RINGWAY_METRICS_H

/*
 * The router's Prometheus endpoint: GET /metrics answers dp_metrics_write()'s exposition
 * (text format 0.0.4), from a thread libmicrohttpd runs (never a worker lcore; the exposition
 * only reads the workers' counters). Any other path is 404, any other method 405.
 *
 * Meson builds metrics.c when libmicrohttpd is found, else metrics_none.c, whose start refuses
 * with -ENOTSUP and a reason. Start and stop run on the control lcore; nothing here prints or
 * exits: errors are a negative errno and one line of reason in @p err.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane.h"

struct rw_metrics;

/**
 * Serve @p dp's metrics on @p addr (IPv4, network order) : @p port (host order).
 * @return the server, or NULL with the reason in @p err.
 */
struct rw_metrics *rw_metrics_start(const struct dp *dp, uint32_t addr, uint16_t port, char *err,
				    size_t errlen);

/** Stop serving (waits for the thread) and free. NULL is fine. Call before dp_free(). */
void rw_metrics_stop(struct rw_metrics *m);

/**
 * The fleet side the exposition adds (`ringway_fleet_managed`, `ringway_fleet_refused_revision`
 * : the fleet revision this router could not apply, 0 when none), from the control lcore after
 * each poll; the metrics thread reads them. NULL is fine.
 */
void rw_metrics_fleet(struct rw_metrics *m, bool managed, uint64_t refused);

/** Scrapes answered so far. */
uint64_t rw_metrics_scrapes(const struct rw_metrics *m);

#endif /* RINGWAY_METRICS_H */
