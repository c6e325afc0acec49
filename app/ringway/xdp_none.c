/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AF_XDP mode when lib/steer did not build (no clang BPF target, bpftool or libbpf): an AF_XDP
 * port is refused before EAL starts, so it never runs without the steering program that keeps
 * the kernel's traffic off the workers. Every other call sees a NULL handle.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xdp.h"

int rw_xdp_prepare(int argc, char **argv, const struct rw_config *cfg, struct rw_xdp **out,
		   char *err, size_t errlen)
{
	(void)cfg;
	*out = NULL;
	for (int i = 1; i < argc; i++) {
		if (strstr(argv[i], "net_af_xdp") == NULL)
			continue;
		snprintf(err, errlen,
			 "%s: built without AF_XDP steering (lib/steer needs clang, bpftool and "
			 "libbpf); use net_af_packet or a vfio-pci port",
			 argv[i]);
		return -ENOTSUP;
	}
	return 0;
}

int rw_xdp_bind(struct rw_xdp *x, const struct rw_config *cfg, char *err, size_t errlen)
{
	(void)x;
	(void)cfg;
	(void)err;
	(void)errlen;
	return 0;
}

unsigned int rw_xdp_ports(const struct rw_xdp *x)
{
	(void)x;
	return 0;
}

const char *rw_xdp_port_ifname(const struct rw_xdp *x, unsigned int i)
{
	(void)x;
	(void)i;
	return "";
}

uint32_t rw_xdp_stale_removed(const struct rw_xdp *x, unsigned int i)
{
	(void)x;
	(void)i;
	return 0;
}

const char *rw_xdp_ifname(const struct rw_xdp *x)
{
	(void)x;
	return "";
}

bool rw_xdp_kernel_neigh(const struct rw_xdp *x)
{
	(void)x;
	return false;
}

const char *rw_xdp_neigh_ifname(const struct rw_xdp *x)
{
	(void)x;
	return "";
}

int rw_xdp_started(struct rw_xdp *x, char *err, size_t errlen)
{
	(void)x;
	(void)err;
	(void)errlen;
	return 0;
}

void rw_xdp_neigh_poll(struct rw_xdp *x, struct dp *dp, uint32_t max_nodes, bool now)
{
	(void)x;
	(void)dp;
	(void)max_nodes;
	(void)now;
}

void rw_xdp_close(struct rw_xdp *x)
{
	(void)x;
}
