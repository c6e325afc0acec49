/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef RINGWAYCTL_ETCD_CLI_H
#define RINGWAYCTL_ETCD_CLI_H

/* ringwayctl's etcd mode (etcd.c): the whole command line; returns the exit status. */
int ctl_etcd_main(int argc, char **argv);

#endif
