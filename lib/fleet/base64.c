/* SPDX-License-Identifier: BSD-3-Clause */
/* base64 (RFC 4648, standard alphabet, with padding), for the etcd gateway's keys and values. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t fl_base64_encoded_size(size_t len)
{
	return (len + 2) / 3 * 4 + 1;
}

size_t fl_base64_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;

		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

static int sextet(char c)
{
	const char *p = c != '\0' ? strchr(alphabet, c) : NULL;

	return p != NULL ? (int)(p - alphabet) : -1;
}

int fl_base64_decode(const char *in, size_t len, char **out, size_t *outlen)
{
	size_t pad = 0, o = 0;
	char *buf;

	*out = NULL;
	*outlen = 0;
	if (len % 4 != 0)
		return -EINVAL;
	if (len > 0 && in[len - 1] == '=')
		pad = len > 1 && in[len - 2] == '=' ? 2 : 1;
	buf = malloc(len / 4 * 3 + 1);
	if (buf == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int s[4];
		unsigned v = 0;

		for (int k = 0; k < 4; k++) {
			s[k] = last && k >= 4 - (int)pad ? 0 : sextet(in[i + (size_t)k]);
			if (s[k] < 0) {
				free(buf);
				return -EINVAL;
			}
			v = v << 6 | (unsigned)s[k];
		}
		buf[o++] = (char)(v >> 16);
		if (!last || pad < 2)
			buf[o++] = (char)(v >> 8 & 0xff);
		if (!last || pad < 1)
			buf[o++] = (char)(v & 0xff);
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	return 0;
}
