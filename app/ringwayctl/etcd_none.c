/* SPDX-License-Identifier: BSD-3-Clause */
/* ringwayctl built without libcurl/jansson: no etcd mode. */

#include <stdio.h>

#include "etcd_cli.h"

int ctl_etcd_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ringwayctl: built without etcd support (libcurl and jansson needed)\n");
	return 2;
}
