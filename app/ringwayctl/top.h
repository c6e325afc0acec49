/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAYCTL_TOP_H
#define RINGWAYCTL_TOP_H

struct ctl_reader;

/* `ringwayctl top` on a connected (and authenticated) control connection @p fd read through
 * @p rd; @p argv[0] is "top". Returns the exit status: 0, or 2 on a usage or connection error
 * (the reason printed). Restores the terminal on every exit path, SIGINT included. */
int ctl_top_main(int fd, struct ctl_reader *rd, int timeout_ms, int argc, char **argv);

#endif
