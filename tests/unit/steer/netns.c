/* SPDX-License-Identifier: BSD-3-Clause */
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns.h"

static struct netns_pair *registered;

static int run(bool loud, const char *fmt, va_list ap)
{
	char cmd[1024];
	int rc;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	rc = system(cmd);
	rc = rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	if (rc != 0 && loud)
		fprintf(stderr, "# exit %d: %s\n", rc, cmd);
	return rc;
}

int netns_sh(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = run(true, fmt, ap);
	va_end(ap);
	return rc;
}

int netns_test(const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = run(false, fmt, ap);
	va_end(ap);
	return rc;
}

void netns_down(struct netns_pair *p)
{
	if (p == NULL || p->a[0] == '\0')
		return;
	if (p->home_fd >= 0) {
		(void)setns(p->home_fd, CLONE_NEWNET);
		close(p->home_fd);
		p->home_fd = -1;
	}
	netns_sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; true", p->a, p->b);
	p->a[0] = '\0';
}

static void down_at_exit(void)
{
	netns_down(registered);
}

int netns_up(struct netns_pair *p, const char *tag, int net)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->a, sizeof(p->a), "rw%s%da", tag, (int)getpid());
	snprintf(p->b, sizeof(p->b), "rw%s%db", tag, (int)getpid());
	snprintf(p->if_a, sizeof(p->if_a), "rw%s%d", tag, (int)getpid() % 100000);
	snprintf(p->if_b, sizeof(p->if_b), "rw%s%dp", tag, (int)getpid() % 100000);
	snprintf(p->ip_a, sizeof(p->ip_a), "198.18.%d.1", net);
	snprintf(p->ip_b, sizeof(p->ip_b), "198.18.%d.2", net);
	snprintf(p->mac_b, sizeof(p->mac_b), "02:00:c6:12:%02x:02", net & 0xff);
	p->net = net;
	p->home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	registered = p;
	atexit(down_at_exit);
	if (p->home_fd < 0 || netns_sh("ip netns add %s && ip netns add %s", p->a, p->b) != 0 ||
	    netns_sh("ip link add %s netns %s type veth peer name %s netns %s address %s", p->if_a,
		     p->a, p->if_b, p->b, p->mac_b) != 0 ||
	    netns_sh("ip -n %s addr add %s/24 dev %s && ip -n %s link set %s up && "
		     "ip -n %s link set lo up",
		     p->a, p->ip_a, p->if_a, p->a, p->if_a, p->a) != 0 ||
	    netns_sh("ip -n %s addr add %s/24 dev %s && ip -n %s link set %s up && "
		     "ip -n %s link set lo up",
		     p->b, p->ip_b, p->if_b, p->b, p->if_b, p->b) != 0) {
		netns_down(p);
		return -1;
	}
	return 0;
}

int netns_enter(struct netns_pair *p, const char *name)
{
	char path[128];
	int fd, rc;

	(void)p;
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

int netns_leave(struct netns_pair *p)
{
	return setns(p->home_fd, CLONE_NEWNET);
}
