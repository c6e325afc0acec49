/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAY_TEST_RUNDIR_H
#define RINGWAY_TEST_RUNDIR_H

/*
 * Tests and benchmarks leave no DPDK runtime folder behind: each uses its own --file-prefix,
 * and rw_rundir_remove_at_exit(prefix), called before rte_eal_init(), removes the folder EAL
 * makes for it (/var/run/dpdk/<prefix> for root, $XDG_RUNTIME_DIR/dpdk/<prefix> or
 * /tmp/dpdk/<prefix> otherwise, as EAL names it) when the process exits: after main returns
 * (so after rte_eal_cleanup()), on exit() from any failure path, and on SIGTERM / SIGINT
 * (meson's timeout), where only rmdir() runs (async-signal-safe; the folder is empty with
 * --no-shconf --no-telemetry). A crash (SIGSEGV, abort) can still leave it; scripts/test.sh
 * reports any folder left.
 */

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char rw_rundir_path[PATH_MAX];

/* Remove the files in the folder, then the folder. */
static void rw_rundir_remove(void)
{
	char file[PATH_MAX + 256];
	struct dirent *de;
	DIR *d;

	if (rw_rundir_path[0] == '\0')
		return;
	d = opendir(rw_rundir_path);
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(file, sizeof(file), "%s/%s", rw_rundir_path, de->d_name);
		unlink(file);
	}
	if (d != NULL)
		closedir(d);
	rmdir(rw_rundir_path);
}

static void rw_rundir_on_signal(int sig)
{
	rmdir(rw_rundir_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void rw_rundir_remove_at_exit(const char *prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (geteuid() == 0)
		snprintf(rw_rundir_path, sizeof(rw_rundir_path), "/var/run/dpdk/%s", prefix);
	else
		snprintf(rw_rundir_path, sizeof(rw_rundir_path), "%s/dpdk/%s",
			 xdg != NULL ? xdg : "/tmp", prefix);
	atexit(rw_rundir_remove);
	signal(SIGTERM, rw_rundir_on_signal);
	signal(SIGINT, rw_rundir_on_signal);
}

#endif /* RINGWAY_TEST_RUNDIR_H */
