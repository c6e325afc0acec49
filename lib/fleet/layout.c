/* SPDX-License-Identifier: BSD-3-Clause */
/* The fleet's keys and the router report that agents register (JSON, one object). */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fleet.h"

static int key_of(const char *prefix, const char *cluster, const char *rest, const char *name,
		  char out[FL_KEY_MAX])
{
	int n;

	if (*prefix == '\0' || *cluster == '\0' || strchr(cluster, '/') != NULL ||
	    strchr(name, '/') != NULL)
		return -EINVAL;
	n = snprintf(out, FL_KEY_MAX, "%s/%s/%s%s", prefix, cluster, rest, name);
	return n < 0 || n >= FL_KEY_MAX ? -ENAMETOOLONG : 0;
}

int fl_key_membership(const char *prefix, const char *cluster, char out[FL_KEY_MAX])
{
	return key_of(prefix, cluster, "membership", "", out);
}

int fl_key_router(const char *prefix, const char *cluster, const char *name, char out[FL_KEY_MAX])
{
	return key_of(prefix, cluster, "routers/", name, out);
}

char *fl_report_format(const struct fl_report *r)
{
	char digest[17];
	json_t *o;
	char *s;

	snprintf(digest, sizeof(digest), "%016" PRIx64, r->digest);
	o = json_pack("{s:I,s:s,s:I}", "revision", (json_int_t)r->revision, "digest", digest,
		      "applied_ms", (json_int_t)r->applied_ms);
	if (o != NULL && r->error[0] != '\0') {
		json_object_set_new(o, "error", json_string(r->error));
		json_object_set_new(o, "error_revision", json_integer(r->error_revision));
	}
	s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

int fl_report_parse(const char *text, size_t len, struct fl_report *r)
{
	json_t *o = json_loadb(text, len, 0, NULL), *rev, *dig, *at, *err, *erev;
	const char *d;
	char *end;
	int rc = -EPROTO;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o))
		goto out;
	rev = json_object_get(o, "revision");
	dig = json_object_get(o, "digest");
	at = json_object_get(o, "applied_ms");
	err = json_object_get(o, "error");
	erev = json_object_get(o, "error_revision");
	if (!json_is_integer(rev) || !json_is_string(dig) || !json_is_integer(at) ||
	    (err != NULL && !json_is_string(err)) || (erev != NULL && !json_is_integer(erev)))
		goto out;
	d = json_string_value(dig);
	r->digest = strtoull(d, &end, 16);
	if (strlen(d) != 16 || *end != '\0')
		goto out;
	r->revision = json_integer_value(rev);
	r->applied_ms = json_integer_value(at);
	if (err != NULL)
		snprintf(r->error, sizeof(r->error), "%s", json_string_value(err));
	r->error_revision = erev != NULL ? json_integer_value(erev) : 0;
	rc = 0;
out:
	json_decref(o);
	return rc;
}
