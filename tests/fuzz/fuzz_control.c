/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the control plane: the input is a stream of command lines run through
 * one session on a small engine (the same path the socket server takes), and also a state-file
 * text. Invariants checked after every line:
 *   - a reply is framed as the protocol says (head line, `lines N` body lines, nothing else),
 *     printable ASCII only;
 *   - an ERROR reply leaves the membership and epoch exactly as they were;
 *   - the epoch never goes back and moves by at most one per line, and only with "OK epoch N";
 *   - the live membership always passes ctl_state_check.
 * A state-file text that parses must format back to a text that parses to the same state.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ctl_engine *small_engine(void)
{
	/* few vnodes: members of weight 1000 stay cheap to place */
	struct pl_config cfg = {.algo = PL_ALGO_RING, .vnodes = 4};
	struct ctl_state *st = ctl_state_new(&cfg, 1);
	static const char *const specs[] = {"n1 198.18.1.1:11211", "n2 198.18.1.2:11211 weight 2",
					    "n3 198.18.1.3:11211 mac 02:00:00:00:00:03"};
	struct ctl_member m;

	for (size_t i = 0; i < 3; i++)
		if (ctl_member_parse(specs[i], strlen(specs[i]), &m, NULL, 0) < 0 ||
		    ctl_state_add(st, &m, NULL, 0) < 0)
			abort();
	return ctl_engine_new(st, NULL, NULL);
}

static void check_reply(const char *r, size_t len)
{
	uint32_t nlines, seen = 0;
	const char *nl = memchr(r, '\n', len);
	char head[CTL_LINE_MAX + 512];
	bool ok;

	if (len == 0 || nl == NULL || r[len - 1] != '\n' || (size_t)(nl - r) >= sizeof(head))
		abort();
	for (size_t i = 0; i < len; i++)
		if ((r[i] < 0x20 || r[i] > 0x7e) && r[i] != '\n')
			abort();
	memcpy(head, r, (size_t)(nl - r));
	head[nl - r] = '\0';
	if (ctl_reply_head(head, &ok, &nlines) < 0)
		abort();
	for (const char *p = nl + 1; p < r + len; p = memchr(p, '\n', (size_t)(r + len - p)) + 1) {
		if (*p == '\n')
			abort(); /* empty body line */
		seen++;
	}
	if (seen != nlines)
		abort();
}

static void run_lines(const uint8_t *data, size_t size)
{
	struct ctl_engine *e = small_engine();
	struct ctl_session *s = ctl_session_new(e);
	struct ctl_text reply = {0};
	const char *p = (const char *)data, *end = p + size;
	unsigned lines = 0;

	if (e == NULL || s == NULL)
		abort();
	while (p < end && lines++ < 512) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct ctl_state *before = ctl_state_copy(ctl_engine_state(e));
		uint64_t was = ctl_state_epoch(before), now;
		int rc;

		ctl_text_reset(&reply);
		rc = ctl_session_line(s, p, len, &reply);
		now = ctl_state_epoch(ctl_engine_state(e));
		if (rc < 0 || (rc == 0 && reply.len != 0))
			abort();
		if (rc == 1)
			check_reply(reply.buf, reply.len);
		if (rc == 0 || strncmp(reply.buf, "ERROR", 5) == 0) {
			if (!ctl_state_equal(before, ctl_engine_state(e)))
				abort();
		} else if (now != was) {
			char want[48];

			snprintf(want, sizeof(want), "OK epoch %llu\n", (unsigned long long)now);
			if (now != was + 1 || strcmp(reply.buf, want) != 0)
				abort();
		}
		if (ctl_state_check(ctl_engine_state(e), NULL, 0) < 0)
			abort();
		ctl_state_free(before);
		p += len + (nl != NULL);
	}
	ctl_text_release(&reply);
	ctl_session_free(s);
	ctl_engine_free(e);
}

static void run_state_file(const uint8_t *data, size_t size)
{
	struct ctl_state *st, *back;
	struct ctl_text text = {0};
	char err[256];

	if (ctl_state_parse((const char *)data, size, &st, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* a refusal always says why */
		return;
	}
	if (ctl_state_format(st, &text) < 0 ||
	    ctl_state_parse(text.buf, text.len, &back, err, sizeof(err)) < 0 ||
	    !ctl_state_equal(st, back))
		abort();
	ctl_state_free(back);
	ctl_state_free(st);
	ctl_text_release(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run_lines(data, size);
	run_state_file(data, size);
	return 0;
}
