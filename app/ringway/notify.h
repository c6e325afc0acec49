/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_NOTIFY_H
#define RINGWAY_NOTIFY_H

/*
 * What the router tells its service manager (config/ringway.service is Type=notify): READY=1
 * once the control socket answers, a STATUS= line that `systemctl status` shows (serving,
 * draining N in flight, drained), STOPPING=1 at shutdown. Through libsystemd's sd_notify(3):
 * without $NOTIFY_SOCKET (not started by systemd) every call does nothing. Called on the
 * control lcore (the main thread) only, never from a worker: sd_notify is a syscall.
 */

#include "dataplane.h"

/** READY=1 and STATUS=serving: the router takes requests and commands. */
void rw_notify_ready(void);
/** STOPPING=1. */
void rw_notify_stopping(void);
/** STATUS= for the drain state @p ds (serving / draining N in flight / drained). */
void rw_notify_drain(const struct dp_drain_status *ds);

#endif /* RINGWAY_NOTIFY_H */
