/* SPDX-License-Identifier: BSD-3-Clause */
#include <inttypes.h>
#include <systemd/sd-daemon.h>

#include "notify.h"

void rw_notify_ready(void)
{
	(void)sd_notify(0, "READY=1\nSTATUS=serving");
}

void rw_notify_stopping(void)
{
	(void)sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

void rw_notify_drain(const struct dp_drain_status *ds)
{
	const char *answer = dp_drain_answer_name(ds->answer);

	switch (ds->state) {
	case DP_DRAIN_SERVING:
		(void)sd_notify(0, "STATUS=serving");
		break;
	case DP_DRAIN_DRAINING:
		(void)sd_notifyf(0, "STATUS=draining: %u in flight (new requests: %s)",
				 ds->in_flight, answer);
		break;
	case DP_DRAIN_DRAINED:
		(void)sd_notifyf(0,
				 "STATUS=drained: 0 in flight after %" PRIu64
				 " ms (new requests: %s); `ringwayctl undrain` serves again",
				 ds->drained_after_ms, answer);
		break;
	}
}
