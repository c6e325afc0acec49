/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a fleet of routers shares: the placement digest (which routers compare to prove they
 * hold the same ring) and the membership's text form (the state-file format, which the etcd
 * key holds).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "control_priv.h"

/* Hash one formatted piece of the canonical text; false when it did not fit @p buf. */
static bool digest_part(XXH64_state_t *h, char *buf, size_t size, int n)
{
	if (n < 0 || (size_t)n >= size)
		return false;
	XXH64_update(h, buf, (size_t)n);
	return true;
}

/*
 * The canonical text is the state-file body without its magic, epoch and checksum lines:
 * the placement settings, then one `member NAME ADDR:PORT weight W[ mac MAC]` line per member
 * in placement order ([IPV6]:PORT for IPv6; IPv4 lines as before). Streamed through XXH64 so that
 * 65536 members need no big buffer.
 */
uint64_t ctl_state_digest(const struct ctl_state *st)
{
	const struct pl_config *cfg = ctl_state_config(st);
	const char *algo = pl_algo_name(cfg->algo), *hash = pl_hash_name(cfg->key_hash);
	XXH64_state_t *h = XXH64_createState();
	char line[PL_NAME_MAX + PL_ADDR_MAX + 96], mac[18], tag[5] = "none", ep[PL_ENDPOINT_MAX];
	bool ok;
	uint64_t d;

	if (h == NULL)
		return 0;
	XXH64_reset(h, 0);
	if (cfg->hash_tag[0] != '\0')
		snprintf(tag, sizeof(tag), "%c%c", cfg->hash_tag[0], cfg->hash_tag[1]);
	ok = digest_part(h, line, sizeof(line),
			 snprintf(line, sizeof(line),
				  "algo %s\nvnodes %u\nmaglev_size %u\nkey_hash %s\nhash_tag %s\n"
				  "members %u\n",
				  algo ? algo : "?", cfg->vnodes, cfg->maglev_size,
				  hash ? hash : "?", tag, ctl_state_count(st)));
	for (uint32_t i = 0; ok && i < ctl_state_count(st); i++) {
		const struct ctl_member *m = ctl_state_member(st, i);

		if (m->has_mac)
			ctl_mac_format(m->mac, mac);
		pl_member_endpoint(&m->pl, ep);
		ok = digest_part(h, line, sizeof(line),
				 snprintf(line, sizeof(line), "member %s %s weight %u%s%s\n",
					  m->pl.name, ep, m->pl.weight, m->has_mac ? " mac " : "",
					  m->has_mac ? mac : ""));
	}
	d = ok ? (uint64_t)XXH64_digest(h) : 0;
	XXH64_freeState(h);
	return d;
}

int ctl_state_to_text(const struct ctl_state *st, struct ctl_text *out)
{
	return ctl_state_format(st, out);
}

int ctl_state_from_text(const char *text, size_t len, struct ctl_state **out, char *err,
			size_t errlen)
{
	*out = NULL;
	if (len > CTL_STATE_TEXT_MAX)
		return ctl_fail(err, errlen, "%zu bytes: above the limit of %u", len,
				CTL_STATE_TEXT_MAX);
	return ctl_state_parse(text, len, out, err, errlen);
}
