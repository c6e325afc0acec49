/* SPDX-License-Identifier: BSD-3-Clause */
/* Reply parsing: a streaming parser over the datagrams of one reply. */
#include "mcproto.h"

#include <string.h>

void mc_reply_init(struct mc_reply_parser *rp)
{
	memset(rp, 0, offsetof(struct mc_reply_parser, line));
}
