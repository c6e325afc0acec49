/* SPDX-License-Identifier: BSD-3-Clause */
/* Built without libmicrohttpd: a configured [metrics] listen is refused at start. */

#include <errno.h>
#include <stdio.h>

#include "metrics.h"

struct rw_metrics *rw_metrics_start(const struct dp *dp, uint32_t addr, uint16_t port, char *err,
				    size_t errlen)
{
	(void)dp;
	(void)addr;
	(void)port;
	snprintf(err, errlen,
		 "built without libmicrohttpd (scripts/setup-deps.sh installs libmicrohttpd-dev): "
		 "no /metrics; leave [metrics] listen empty");
	errno = ENOTSUP;
	return NULL;
}

void rw_metrics_stop(struct rw_metrics *m)
{
	(void)m;
}

void rw_metrics_fleet(struct rw_metrics *m, bool managed, uint64_t refused)
{
	(void)m;
	(void)managed;
	(void)refused;
}

uint64_t rw_metrics_scrapes(const struct rw_metrics *m)
{
	(void)m;
	return 0;
}
