/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the nodes-file parser. Besides "no crash, no leak, no UB" it checks the
 * parser's contract: errors leave *out NULL and say "line L: "; accepted members are valid,
 * uniquely named (an address with a ':' is IPv6 in RFC 5952 form, held without brackets), and
 * survive a print-and-reparse round trip (pl_member_endpoint's text) unchanged.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inet.h"
#include "placement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_member(const struct pl_member *m)
{
	size_t len = strnlen(m->name, sizeof(m->name));

	if (len == 0 || len > PL_NAME_MAX || strnlen(m->addr, sizeof(m->addr)) == 0 ||
	    strnlen(m->addr, sizeof(m->addr)) > PL_ADDR_MAX || m->port == 0)
		abort();
	if (strpbrk(m->name, " \t\r\n#:") != NULL || strpbrk(m->addr, " \t\r\n#[]") != NULL)
		abort();
	if (strchr(m->addr, ':') != NULL) {
		struct inet_addr a;
		char canon[INET_TEXT_MAX];

		if (inet_parse(m->addr, strlen(m->addr), &a) != 0 || inet_is_v4(&a))
			abort();
		inet_format(&a, canon);
		if (strcmp(canon, m->addr) != 0)
			abort();
	}
}

/* Print the members back as a nodes file and parse it again: it must give the same array. */
static void round_trip(const struct pl_member *m, uint32_t n)
{
	size_t cap = (size_t)n * (PL_NAME_MAX + PL_ADDR_MAX + 32) + 1, len = 0;
	char *text = malloc(cap), err[128];
	struct pl_member *again = NULL;
	uint32_t i, n2 = 0;

	if (text == NULL)
		abort();
	for (i = 0; i < n; i++) {
		char ep[PL_ENDPOINT_MAX];

		pl_member_endpoint(&m[i], ep);
		len += (size_t)snprintf(text + len, cap - len, "%s\t%s %u # member %u\n", m[i].name,
					ep, m[i].weight, i);
	}
	if (pl_members_parse(text, len, &again, &n2, err, sizeof(err)) != 0 || n2 != n)
		abort();
	for (i = 0; i < n; i++)
		if (strcmp(again[i].name, m[i].name) != 0 ||
		    strcmp(again[i].addr, m[i].addr) != 0 || again[i].port != m[i].port ||
		    again[i].weight != m[i].weight)
			abort();
	free(again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_member *m = (struct pl_member *)(uintptr_t)1; /* must be overwritten */
	char err[160], tiny[6];
	uint32_t n = 12345, i, j;
	int rc;

	rc = pl_members_parse((const char *)data, size, &m, &n, err, sizeof(err));
	if (rc != 0) {
		if (rc != -EINVAL && rc != -ENOMEM)
			abort();
		if (m != NULL || n != 0 || strncmp(err, "line ", 5) != 0 ||
		    memchr(err, '\0', sizeof(err)) == NULL)
			abort();
		/* the same input with a tiny error buffer: still terminated, same outcome */
		if (pl_members_parse((const char *)data, size, &m, &n, tiny, sizeof(tiny)) != rc ||
		    memchr(tiny, '\0', sizeof(tiny)) == NULL || m != NULL)
			abort();
		return 0;
	}
	if (m == NULL || n == 0 || n > PL_MEMBERS_MAX || err[0] != '\0')
		abort();
	for (i = 0; i < n; i++) {
		check_member(&m[i]);
		for (j = 0; j < i && n <= 512; j++)
			if (strcmp(m[i].name, m[j].name) == 0)
				abort();
	}
	round_trip(m, n);
	free(m);
	return 0;
}
