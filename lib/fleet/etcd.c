/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The etcd v3 JSON gateway over libcurl: unary calls (range, put, txn, lease grant and
 * keepalive) on one reused easy handle, and the watch stream on a multi handle so that the
 * caller can wait on it with a timeout. Replies are parsed with jansson and checked field by
 * field: anything etcd would not send is -EPROTO, never a guess.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "fleet.h"

/* Largest reply body kept: a membership of 65536 members is a few MiB, base64 4/3 of it. */
#define BODY_MAX (128u << 20)
/* Most endpoints in a list. */
#define ENDPOINTS_MAX 16

struct buf {
	char *p;
	size_t len, cap;
	bool overflow;
};

struct fl_client {
	char *ep[ENDPOINTS_MAX];
	unsigned nep, cur;
	int timeout_ms;
	CURL *easy;
	struct buf body;
};

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

int fl_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

static size_t buf_write(char *data, size_t size, size_t n, void *ctx)
{
	struct buf *b = ctx;
	size_t len = size * n, cap;
	char *p;

	if (b->len + len + 1 > BODY_MAX) {
		b->overflow = true;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	if (b->len + len + 1 > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (p == NULL)
			return 0;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return len;
}

struct fl_client *fl_client_new(const char *endpoints, int timeout_ms)
{
	struct fl_client *c = calloc(1, sizeof(*c));
	const char *p = endpoints;

	if (c == NULL)
		return NULL;
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
	while (endpoints != NULL && *p != '\0' && c->nep < ENDPOINTS_MAX) {
		size_t n = strcspn(p, ",");

		while (n > 0 && p[n - 1] == '/')
			n--; /* "http://h:p/" and "http://h:p" are the same base */
		if (n > 0 && (c->ep[c->nep] = strndup(p, n)) != NULL)
			c->nep++;
		p += strcspn(p, ",");
		p += *p == ',';
	}
	c->easy = curl_easy_init();
	if (c->nep == 0 || c->easy == NULL || (endpoints != NULL && *p != '\0')) {
		fl_client_free(c);
		errno = EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < c->nep; i++)
		if (strncmp(c->ep[i], "http://", 7) != 0 && strncmp(c->ep[i], "https://", 8) != 0) {
			fl_client_free(c);
			errno = EINVAL;
			return NULL;
		}
	return c;
}

void fl_client_free(struct fl_client *c)
{
	if (c == NULL)
		return;
	for (unsigned i = 0; i < c->nep; i++)
		free(c->ep[i]);
	if (c->easy != NULL)
		curl_easy_cleanup(c->easy);
	free(c->body.p);
	free(c);
}

const char *fl_client_endpoint(const struct fl_client *c)
{
	return c->ep[c->cur];
}

/* A transport failure: the next endpoint may do better. */
static bool unreachable(CURLcode cc)
{
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	       cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR ||
	       cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE;
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return -ECONNREFUSED;
	default:
		return -EPROTO;
	}
}

/* An etcd error body: {"error": "...", "message": "...", "code": N}. */
static int etcd_error(json_t *root, long status, char *err, size_t errlen)
{
	json_t *msg = json_object_get(root, "message");
	const char *m = json_is_string(msg) ? json_string_value(msg) : "";

	if (strstr(m, "lease not found") != NULL)
		return fail(err, errlen, -ENOENT, "etcd: %s", m);
	return fail(err, errlen, -EIO, "etcd: %s (HTTP %ld)", *m ? m : "error", status);
}

/* One POST of @p req to @p path on the current endpoint: the parsed reply, or < 0. */
static int post_once(struct fl_client *c, const char *url, const char *body, json_t **out,
		     CURLcode *cc, char *err, size_t errlen)
{
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	json_error_t je;
	long status = 0;

	c->body.len = 0;
	c->body.overflow = false;
	curl_easy_reset(c->easy);
	curl_easy_setopt(c->easy, CURLOPT_URL, url);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, &c->body);
	curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
	curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)c->timeout_ms);
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	*cc = curl_easy_perform(c->easy);
	curl_slist_free_all(hdr);
	if (*cc != CURLE_OK)
		return fail(
			err, errlen, c->body.overflow ? -EPROTO : curl_errno(*cc), "%s: %s", url,
			c->body.overflow ? "reply above the size limit" : curl_easy_strerror(*cc));
	curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
	*out = json_loadb(c->body.p ? c->body.p : "", c->body.len, 0, &je);
	if (*out == NULL || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		if (status != 200)
			return fail(err, errlen, -EIO, "%s: HTTP %ld", url, status);
		return fail(err, errlen, -EPROTO, "%s: reply is no JSON object: %s", url, je.text);
	}
	if (status != 200 || json_object_get(*out, "error") != NULL) {
		int rc = etcd_error(*out, status, err, errlen);

		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

/* POST @p req (taken) to @p path, trying each endpoint once from the current one. */
static int call(struct fl_client *c, const char *path, json_t *req, json_t **out, char *err,
		size_t errlen)
{
	char *body = json_dumps(req, JSON_COMPACT);
	int rc = -ENOMEM;

	json_decref(req);
	*out = NULL;
	if (body == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	for (unsigned k = 0; k < c->nep; k++) {
		char url[512];
		CURLcode cc = CURLE_OK;

		snprintf(url, sizeof(url), "%s%s", c->ep[c->cur], path);
		rc = post_once(c, url, body, out, &cc, err, errlen);
		if (rc == 0 || !unreachable(cc))
			break;
		c->cur = (c->cur + 1) % c->nep;
	}
	free(body);
	return rc;
}

/* ---- JSON fields ---- */

/* A revision, id or count: etcd sends int64 as a decimal string; absent means 0. */
static int get_i64(json_t *o, const char *key, int64_t *v)
{
	json_t *j = json_object_get(o, key);
	const char *s;
	char *end;

	*v = 0;
	if (j == NULL)
		return 0;
	if (json_is_integer(j)) {
		*v = json_integer_value(j);
		return 0;
	}
	if (!json_is_string(j))
		return -EPROTO;
	s = json_string_value(j);
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *s == '\0' || *end != '\0' || errno != 0 ? -EPROTO : 0;
}

static int get_b64(json_t *o, const char *key, char **out, size_t *len)
{
	json_t *j = json_object_get(o, key);
	int rc;

	if (j == NULL)
		return fl_base64_decode("", 0, out, len);
	if (!json_is_string(j))
		return -EPROTO;
	rc = fl_base64_decode(json_string_value(j), json_string_length(j), out, len);
	return rc == -EINVAL ? -EPROTO : rc;
}

static void kv_clear(struct fl_kv *kv)
{
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

static int parse_kv(json_t *o, struct fl_kv *kv)
{
	size_t klen;
	int rc;

	memset(kv, 0, sizeof(*kv));
	if (!json_is_object(o))
		return -EPROTO;
	if ((rc = get_b64(o, "key", &kv->key, &klen)) < 0 ||
	    (rc = get_b64(o, "value", &kv->value, &kv->value_len)) < 0 ||
	    (rc = get_i64(o, "mod_revision", &kv->mod_revision)) < 0 ||
	    (rc = get_i64(o, "create_revision", &kv->create_revision)) < 0 ||
	    (rc = get_i64(o, "lease", &kv->lease)) < 0) {
		kv_clear(kv);
		return rc;
	}
	if (strlen(kv->key) != klen) {
		kv_clear(kv);
		return -EPROTO;
	}
	return 0;
}

static int header_revision(json_t *root, int64_t *rev)
{
	json_t *h = json_object_get(root, "header");

	if (!json_is_object(h) || get_i64(h, "revision", rev) < 0)
		return -EPROTO;
	return 0;
}

/* A base64 JSON string of @p len bytes at @p p. */
static json_t *b64(const void *p, size_t len)
{
	char *s = malloc(fl_base64_encoded_size(len));
	json_t *j;

	if (s == NULL)
		return NULL;
	fl_base64_encode(p, len, s);
	j = json_string(s);
	free(s);
	return j;
}

static json_t *i64(int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return json_string(s);
}

/* The first key after every key starting with @p key (etcd's prefix range_end). */
static json_t *prefix_end(const char *key)
{
	size_t n = strlen(key);
	char *e = strdup(key);
	json_t *j;

	if (e == NULL)
		return NULL;
	while (n > 0 && (unsigned char)e[n - 1] == 0xff)
		n--;
	if (n == 0) {
		free(e);
		return b64("\0", 1); /* every key */
	}
	e[n - 1] = (char)((unsigned char)e[n - 1] + 1);
	j = b64(e, n);
	free(e);
	return j;
}

/* ---- calls ---- */

void fl_range_clear(struct fl_range *r)
{
	for (uint32_t i = 0; i < r->count; i++)
		kv_clear(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

static int fill_range(json_t *root, struct fl_range *out, char *err, size_t errlen)
{
	json_t *kvs = json_object_get(root, "kvs");
	size_t n = json_is_array(kvs) ? json_array_size(kvs) : 0;
	int rc;

	if (header_revision(root, &out->revision) < 0 || (kvs != NULL && !json_is_array(kvs)))
		return fail(err, errlen, -EPROTO, "range: malformed reply");
	out->kvs = calloc(n + 1, sizeof(*out->kvs));
	if (out->kvs == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if ((rc = parse_kv(json_array_get(kvs, i), &out->kvs[i])) < 0)
			return fail(err, errlen, rc, "range: malformed key-value %zu", i);
		out->count++;
	}
	return 0;
}

int fl_range(struct fl_client *c, const char *key, bool prefix, struct fl_range *out, char *err,
	     size_t errlen)
{
	json_t *req = json_pack("{s:o}", "key", b64(key, strlen(key))), *root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (req != NULL && prefix)
		json_object_set_new(req, "range_end", prefix_end(key));
	if (req == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if ((rc = call(c, "/v3/kv/range", req, &root, err, errlen)) < 0)
		return rc;
	rc = fill_range(root, out, err, errlen);
	if (rc < 0)
		fl_range_clear(out);
	json_decref(root);
	return rc;
}

int fl_put(struct fl_client *c, const char *key, const void *value, size_t len, int64_t lease,
	   int64_t *revision, char *err, size_t errlen)
{
	json_t *req =
		json_pack("{s:o,s:o}", "key", b64(key, strlen(key)), "value", b64(value, len));
	json_t *root;
	int64_t rev;
	int rc;

	if (req != NULL && lease != 0)
		json_object_set_new(req, "lease", i64(lease));
	if (req == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if ((rc = call(c, "/v3/kv/put", req, &root, err, errlen)) < 0)
		return rc;
	rc = header_revision(root, &rev);
	json_decref(root);
	if (rc < 0)
		return fail(err, errlen, -EPROTO, "put: malformed reply");
	if (revision != NULL)
		*revision = rev;
	return 0;
}

int fl_txn_put(struct fl_client *c, const char *key, int64_t expect, const void *value, size_t len,
	       int64_t *revision, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:[{s:o,s:s,s:s,s:o}],s:[{s:{s:o,s:o}}]}", "compare", "key",
				b64(key, strlen(key)), "target", "MOD", "result", "EQUAL",
				"mod_revision", i64(expect), "success", "request_put", "key",
				b64(key, strlen(key)), "value", b64(value, len));
	json_t *root, *ok;
	int64_t rev;
	int rc;

	if (req == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if ((rc = call(c, "/v3/kv/txn", req, &root, err, errlen)) < 0)
		return rc;
	ok = json_object_get(root, "succeeded");
	rc = header_revision(root, &rev) < 0 || (ok != NULL && !json_is_boolean(ok)) ? -EPROTO
	     : json_is_true(ok)							     ? 1
										     : 0;
	json_decref(root);
	if (rc < 0)
		return fail(err, errlen, -EPROTO, "txn: malformed reply");
	if (revision != NULL)
		*revision = rev;
	return rc;
}

int fl_lease_grant(struct fl_client *c, int ttl_s, int64_t *id, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:I}", "TTL", (json_int_t)ttl_s), *root;
	int rc;

	if (req == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if ((rc = call(c, "/v3/lease/grant", req, &root, err, errlen)) < 0)
		return rc;
	rc = get_i64(root, "ID", id);
	if (rc == 0 && *id == 0)
		rc = -EPROTO;
	json_decref(root);
	return rc < 0 ? fail(err, errlen, -EPROTO, "lease grant: malformed reply") : 0;
}

int fl_lease_keepalive(struct fl_client *c, int64_t id, int *ttl_s, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:o}", "ID", i64(id)), *root, *res;
	int64_t ttl = 0;
	int rc;

	if (req == NULL)
		return fail(err, errlen, -ENOMEM, "out of memory");
	if ((rc = call(c, "/v3/lease/keepalive", req, &root, err, errlen)) < 0)
		return rc;
	/* A stream of one message: {"result": {..., "TTL": "N"}}; TTL absent or 0: expired. */
	res = json_object_get(root, "result");
	rc = json_is_object(res) ? get_i64(res, "TTL", &ttl) : -EPROTO;
	json_decref(root);
	if (rc < 0)
		return fail(err, errlen, -EPROTO, "lease keepalive: malformed reply");
	if (ttl <= 0)
		return fail(err, errlen, -ENOENT, "lease %" PRId64 " expired", id);
	*ttl_s = (int)ttl;
	return 0;
}

/* ---- watch ---- */

struct fl_watch {
	struct fl_client *c;
	CURLM *multi;
	CURL *easy;
	struct curl_slist *hdr;
	char *req;
	struct buf in;	/* bytes received, not yet parsed */
	size_t off;	/* parsed up to here */
	json_t *events; /* the current message's events */
	size_t next;	/* its next event */
	bool done;	/* the transfer ended */
	CURLcode result;
};

void fl_event_clear(struct fl_event *ev)
{
	kv_clear(&ev->kv);
	memset(ev, 0, sizeof(*ev));
}

struct fl_watch *fl_watch_open(struct fl_client *c, const char *key, int64_t start)
{
	struct fl_watch *w = calloc(1, sizeof(*w));
	json_t *req;
	char url[512];

	if (w == NULL)
		return NULL;
	w->c = c;
	req = json_pack("{s:{s:o,s:o}}", "create_request", "key", b64(key, strlen(key)),
			"start_revision", i64(start));
	w->req = req != NULL ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	w->hdr = curl_slist_append(NULL, "Content-Type: application/json");
	/* gRPC metadata through the gateway: end the stream when this member has no leader. */
	w->hdr = w->hdr ? curl_slist_append(w->hdr, "Grpc-Metadata-hasleader: true") : NULL;
	w->multi = curl_multi_init();
	w->easy = curl_easy_init();
	if (w->req == NULL || w->hdr == NULL || w->multi == NULL || w->easy == NULL) {
		fl_watch_close(w);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(url, sizeof(url), "%s/v3/watch", c->ep[c->cur]);
	curl_easy_setopt(w->easy, CURLOPT_URL, url);
	curl_easy_setopt(w->easy, CURLOPT_POSTFIELDS, w->req);
	curl_easy_setopt(w->easy, CURLOPT_HTTPHEADER, w->hdr);
	curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, &w->in);
	curl_easy_setopt(w->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)c->timeout_ms);
	curl_easy_setopt(w->easy, CURLOPT_NOSIGNAL, 1L);
	curl_multi_add_handle(w->multi, w->easy);
	return w;
}

void fl_watch_close(struct fl_watch *w)
{
	if (w == NULL)
		return;
	if (w->multi != NULL && w->easy != NULL)
		curl_multi_remove_handle(w->multi, w->easy);
	if (w->easy != NULL)
		curl_easy_cleanup(w->easy);
	if (w->multi != NULL)
		curl_multi_cleanup(w->multi);
	curl_slist_free_all(w->hdr);
	json_decref(w->events);
	free(w->req);
	free(w->in.p);
	free(w);
}

/* The next event of the current message into @p ev: 1, or 0 when it has none left. */
static int pop_event(struct fl_watch *w, struct fl_event *ev)
{
	json_t *e, *type;
	int rc;

	while (w->events != NULL && w->next < json_array_size(w->events)) {
		e = json_array_get(w->events, w->next++);
		type = json_object_get(e, "type");
		memset(ev, 0, sizeof(*ev));
		if (type != NULL && !json_is_string(type))
			return -EPROTO;
		ev->type = type == NULL || strcmp(json_string_value(type), "PUT") == 0 ? FL_EV_PUT
			   : strcmp(json_string_value(type), "DELETE") == 0 ? FL_EV_DELETE
									    : -1;
		if ((int)ev->type < 0)
			return -EPROTO;
		if ((rc = parse_kv(json_object_get(e, "kv"), &ev->kv)) < 0)
			return rc;
		return 1;
	}
	json_decref(w->events);
	w->events = NULL;
	w->next = 0;
	return 0;
}

/* One whole message (a line) of the stream. 1 event ready, 0 nothing to report, < 0. */
static int take_message(struct fl_watch *w, const char *line, size_t len, struct fl_event *ev,
			char *err, size_t errlen)
{
	json_t *root = json_loadb(line, len, 0, NULL), *res, *events;
	int64_t compact = 0;
	int rc = 0;

	if (!json_is_object(root)) {
		json_decref(root);
		return fail(err, errlen, -EPROTO, "watch: a message is no JSON object");
	}
	res = json_object_get(root, "result");
	if (!json_is_object(res)) {
		rc = json_object_get(root, "error") != NULL
			     ? etcd_error(root, 200, err, errlen)
			     : fail(err, errlen, -EPROTO, "watch: message without result");
	} else if (json_is_true(json_object_get(res, "canceled"))) {
		if (get_i64(res, "compact_revision", &compact) == 0 && compact > 0) {
			memset(ev, 0, sizeof(*ev));
			ev->type = FL_EV_COMPACTED;
			ev->compact_revision = compact;
			rc = 1;
		} else {
			json_t *why = json_object_get(res, "cancel_reason");

			rc = fail(err, errlen, -ECANCELED, "watch cancelled by etcd: %s",
				  json_is_string(why) ? json_string_value(why) : "no reason given");
		}
	} else if ((events = json_object_get(res, "events")) != NULL) {
		if (!json_is_array(events))
			rc = fail(err, errlen, -EPROTO, "watch: events is no array");
		else {
			w->events = json_incref(events);
			w->next = 0;
		}
	}
	json_decref(root);
	return rc;
}

/* Parse complete lines already received. */
static int parse_pending(struct fl_watch *w, struct fl_event *ev, char *err, size_t errlen)
{
	int rc;

	for (;;) {
		char *start, *nl;

		if ((rc = pop_event(w, ev)) != 0)
			return rc < 0 ? fail(err, errlen, rc, "watch: malformed event") : rc;
		if (w->in.p == NULL)
			return 0;
		start = w->in.p + w->off;
		if (w->in.len <= w->off || (nl = memchr(start, '\n', w->in.len - w->off)) == NULL)
			break;
		w->off = (size_t)(nl - w->in.p) + 1;
		if (nl > start &&
		    (rc = take_message(w, start, (size_t)(nl - start), ev, err, errlen)) != 0)
			return rc;
	}
	/* Keep the unparsed tail at the front of the buffer. */
	if (w->off > 0) {
		memmove(w->in.p, w->in.p + w->off, w->in.len - w->off);
		w->in.len -= w->off;
		w->off = 0;
		w->in.p[w->in.len] = '\0';
	}
	return 0;
}

static int transfer_end(struct fl_watch *w, char *err, size_t errlen)
{
	struct fl_client *c = w->c;
	long status = 0;

	curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &status);
	c->cur = (c->cur + 1) % c->nep;
	if (w->result != CURLE_OK)
		return fail(err, errlen,
			    curl_errno(w->result) == -EPROTO ? -EPIPE : curl_errno(w->result),
			    "watch: %s", curl_easy_strerror(w->result));
	if (status != 200)
		return fail(err, errlen, -EIO, "watch: HTTP %ld", status);
	return fail(err, errlen, -EPIPE, "watch: the server ended the stream");
}

/* Drive the transfer without waiting; note when it ended. */
static int pump(struct fl_watch *w, char *err, size_t errlen)
{
	int running, left;
	CURLMsg *m;

	if (curl_multi_perform(w->multi, &running) != CURLM_OK)
		return fail(err, errlen, -EIO, "watch: curl multi failed");
	while ((m = curl_multi_info_read(w->multi, &left)) != NULL)
		if (m->msg == CURLMSG_DONE) {
			w->done = true;
			w->result = m->data.result;
		}
	if (w->in.overflow)
		return fail(err, errlen, -EPROTO, "watch: message above the size limit");
	return 0;
}

int fl_watch_next(struct fl_watch *w, int timeout_ms, struct fl_event *ev, char *err, size_t errlen)
{
	int rc;

	memset(ev, 0, sizeof(*ev));
	for (int round = 0; round < 2; round++) {
		if (!w->done && (rc = pump(w, err, errlen)) < 0)
			return rc;
		if ((rc = parse_pending(w, ev, err, errlen)) != 0)
			return rc;
		if (w->done)
			return transfer_end(w, err, errlen);
		if (round == 0 && timeout_ms != 0 &&
		    curl_multi_poll(w->multi, NULL, 0, timeout_ms < 0 ? 1000 : timeout_ms, NULL) !=
			    CURLM_OK)
			return fail(err, errlen, -EIO, "watch: curl multi failed");
	}
	return 0;
}
