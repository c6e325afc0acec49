/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtnetlink neighbour queries. Every message from the kernel is length-checked before it
 * is read (NLMSG_OK / RTA_OK plus attribute sizes); replies of other sequences or other
 * senders are ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "neigh.h"

#define NEIGH_RECV_BUF 32768

struct neigh {
	int fd;
	unsigned int ifindex;
	uint32_t seq;
	uint8_t buf[NEIGH_RECV_BUF];
};

static const char *const state_names[] = {
	[NEIGH_ABSENT] = "absent",
	[NEIGH_PENDING] = "pending",
	[NEIGH_FAILED] = "failed",
	[NEIGH_KNOWN] = "known",
};

const char *neigh_state_name(unsigned int state)
{
	return state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state] : NULL;
}

struct neigh *neigh_open(unsigned int ifindex, char *err, size_t errlen)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 1};
	struct neigh *n;
	int one = 1, e;

	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		snprintf(err, errlen, "neigh: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	n->ifindex = ifindex;
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0 || bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(n->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		e = errno;
		snprintf(err, errlen, "neigh: netlink socket: %s", strerror(e));
		neigh_close(n);
		errno = e;
		return NULL;
	}
	/* Lets the kernel filter the dump by interface; older kernels ignore it. */
	(void)setsockopt(n->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	return n;
}

void neigh_close(struct neigh *n)
{
	if (n == NULL)
		return;
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}

static int send_req(struct neigh *n, struct nlmsghdr *h)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	ssize_t rc;

	h->nlmsg_seq = ++n->seq;
	do
		rc = sendto(n->fd, h, h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc == (ssize_t)h->nlmsg_len ? 0 : -EIO;
}

static uint8_t map_state(uint16_t nud)
{
	if (nud & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP))
		return NEIGH_KNOWN;
	if (nud & NUD_FAILED)
		return NEIGH_FAILED;
	return NEIGH_PENDING; /* NUD_INCOMPLETE, NUD_NONE */
}

/* Apply one RTM_NEWNEIGH to the entries it names. */
static void apply_neigh(struct neigh *n, const struct nlmsghdr *h, struct neigh_entry *e,
			size_t count)
{
	const struct ndmsg *nd = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*nd));
	const struct rtattr *a =
		(const struct rtattr *)((const uint8_t *)nd + NLMSG_ALIGN(sizeof(*nd)));
	const uint8_t *mac = NULL;
	uint32_t ip = 0;
	bool has_ip = false;
	uint8_t st;
	size_t i;

	if (len < 0 || nd->ndm_family != AF_INET || nd->ndm_ifindex != (int)n->ifindex)
		return;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 4) {
			memcpy(&ip, RTA_DATA(a), 4);
			has_ip = true;
		} else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			mac = RTA_DATA(a);
		}
	}
	if (!has_ip)
		return;
	st = map_state(nd->ndm_state);
	if (st == NEIGH_KNOWN && mac == NULL)
		st = NEIGH_PENDING; /* no usable address yet */
	for (i = 0; i < count; i++) {
		if (e[i].ip != ip)
			continue;
		e[i].state = st;
		if (st == NEIGH_KNOWN)
			memcpy(e[i].mac, mac, 6);
	}
}

/*
 * Read replies to sequence n->seq until NLMSG_DONE (dump) or the ACK (request). Returns 0,
 * the kernel's negative errno, or -EAGAIN on timeout.
 */
static int recv_replies(struct neigh *n, struct neigh_entry *e, size_t count, bool dump)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof(from);
		ssize_t got =
			recvfrom(n->fd, n->buf, sizeof(n->buf), 0, (struct sockaddr *)&from, &fl);
		struct nlmsghdr *h;
		size_t off;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		if (from.nl_pid != 0)
			continue; /* not from the kernel */
		/* NLMSG_OK/NEXT by hand, in size_t: each header and length checked before use. */
		for (off = 0; off + sizeof(*h) <= (size_t)got; off += NLMSG_ALIGN(h->nlmsg_len)) {
			h = (struct nlmsghdr *)(n->buf + off);
			if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > (size_t)got - off)
				break;
			if (h->nlmsg_seq != n->seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				int derr = 0;

				/* A dump the kernel refused ends with its error. */
				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(derr)))
					memcpy(&derr, NLMSG_DATA(h), sizeof(derr));
				return derr < 0 ? derr : 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *me = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*me)))
					return -EIO;
				if (me->error != 0 || !dump)
					return me->error;
				continue;
			}
			if (h->nlmsg_type == RTM_NEWNEIGH && dump)
				apply_neigh(n, h, e, count);
		}
	}
}

int neigh_lookup(struct neigh *n, struct neigh_entry *e, size_t count)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		struct rtattr ifa;
		uint32_t ifindex;
	} req;
	size_t i;
	int rc;

	for (i = 0; i < count; i++) {
		e[i].state = NEIGH_ABSENT;
		memset(e[i].mac, 0, sizeof(e[i].mac));
	}
	/* Strict dump checking wants the filter as NDA_IFINDEX and a zero header ifindex. */
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_GETNEIGH;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nd.ndm_family = AF_INET;
	req.ifa.rta_type = NDA_IFINDEX;
	req.ifa.rta_len = RTA_LENGTH(sizeof(req.ifindex));
	req.ifindex = n->ifindex;
	rc = send_req(n, &req.h);
	return rc < 0 ? rc : recv_replies(n, e, count, true);
}

int neigh_resolve(struct neigh *n, uint32_t ip)
{
	struct {
		struct nlmsghdr h;
		struct ndmsg nd;
		struct rtattr dst;
		uint32_t addr;
	} req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = RTM_NEWNEIGH;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	req.nd.ndm_family = AF_INET;
	req.nd.ndm_ifindex = (int)n->ifindex;
	req.nd.ndm_state = NUD_NONE;
	req.nd.ndm_flags = NTF_USE;
	req.dst.rta_type = NDA_DST;
	req.dst.rta_len = RTA_LENGTH(sizeof(req.addr));
	req.addr = ip;
	rc = send_req(n, &req.h);
	return rc < 0 ? rc : recv_replies(n, NULL, 0, false);
}
