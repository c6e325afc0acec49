/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loader for steer.bpf.c. Why the object is patched instead of the skeleton's rodata being
 * set: the AF_XDP PMD of DPDK 22.11 loads the program itself from a file (xdp_prog=),
 * with bpf_object__open_file + bpf_object__load, and only then inserts its sockets into
 * xsks_map. The configuration therefore has to be inside the file: we copy the object the
 * skeleton embeds, write struct steer_cfg over the initial value of the `steer_cfg`
 * symbol in .rodata, and hand the PMD a memory file with the result. No bpffs pinning,
 * nothing on disk to go stale after a crash.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "steer.h"
#include "steer.skel.h"

struct steer {
	unsigned int ifindex;
	int obj_fd;   /* memfd holding the patched object */
	int lock_fd;  /* flock'ed per-interface lock file */
	int stats_fd; /* steer_stats of the attached program, -1 until found */
	uint32_t prog_id;
	char path[32];	     /* /proc/self/fd/N */
	char lock_path[128]; /* STEER_LOCK_DIR/steer-<netns inode>-<ifindex>.lock */
};

static const char *const ctr_names[STEER_CTR_COUNT] = {
#define STEER_CTR_NAME_(id, name) [STEER_CTR_##id] = name,
	STEER_FOREACH_CTR(STEER_CTR_NAME_)
#undef STEER_CTR_NAME_
};

__attribute__((format(printf, 3, 4))) static void set_err(char *err, size_t errlen, const char *fmt,
							  ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *steer_ctr_name(unsigned int ctr)
{
	return ctr < STEER_CTR_COUNT ? ctr_names[ctr] : NULL;
}

static int config_check(const struct steer_config *cfg, char *err, size_t errlen)
{
	unsigned int i;

	if (cfg->router_ip == 0 && inet_is_zero(&cfg->router_ip6)) {
		set_err(err, errlen, "steer: router address is 0.0.0.0 and no IPv6 address is set");
		return -EINVAL;
	}
	if (inet_is_v4(&cfg->router_ip6)) {
		set_err(err, errlen, "steer: the IPv6 router address is an IPv4-mapped one");
		return -EINVAL;
	}
	if (cfg->n_listen_ports == 0 || cfg->n_listen_ports > STEER_MAX_LISTEN_PORTS) {
		set_err(err, errlen, "steer: %u listen ports, expected 1 to %d",
			cfg->n_listen_ports, STEER_MAX_LISTEN_PORTS);
		return -EINVAL;
	}
	for (i = 0; i < cfg->n_listen_ports; i++) {
		if (cfg->listen_ports[i] == 0) {
			set_err(err, errlen, "steer: listen port %u is 0", i);
			return -EINVAL;
		}
	}
	if (cfg->vlan_fixed && cfg->vlan_id > 4094) {
		set_err(err, errlen, "steer: VLAN %u is outside 0..4094", cfg->vlan_id);
		return -EINVAL;
	}
	if ((uint32_t)cfg->reply_port_base + cfg->reply_port_count > 65536 ||
	    (cfg->reply_port_count > 0 && cfg->reply_port_base == 0)) {
		set_err(err, errlen, "steer: reply ports %u + %u are outside 1..65535",
			cfg->reply_port_base, cfg->reply_port_count);
		return -EINVAL;
	}
	return 0;
}

static void config_to_abi(const struct steer_config *cfg, struct steer_cfg *abi)
{
	unsigned int i;

	memset(abi, 0, sizeof(*abi));
	abi->magic = STEER_CFG_MAGIC;
	abi->router_ip = cfg->router_ip;
	for (i = 0; i < cfg->n_listen_ports; i++)
		abi->listen_ports[i] = htobe16(cfg->listen_ports[i]);
	abi->n_listen_ports = (uint16_t)cfg->n_listen_ports;
	abi->reply_port_base = cfg->reply_port_base;
	abi->reply_port_count = cfg->reply_port_count;
	if (!inet_is_zero(&cfg->router_ip6)) {
		abi->flags |= STEER_CFG_IPV6;
		memcpy(abi->router_ip6, cfg->router_ip6.b, sizeof(abi->router_ip6));
	}
	if (cfg->vlan_fixed) {
		abi->flags |= STEER_CFG_VLAN;
		abi->vlan_id = cfg->vlan_id;
	}
}

/* Section header @i of the ELF image, or NULL when the table does not fit in @len. */
static const Elf64_Shdr *elf_section(const uint8_t *img, size_t len, unsigned int i)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);

	if (i >= eh->e_shnum || off > len || len - off < sizeof(Elf64_Shdr))
		return NULL;
	return (const Elf64_Shdr *)(img + off);
}

static bool elf_range_ok(const Elf64_Shdr *sh, size_t len)
{
	return sh->sh_offset <= len && sh->sh_size <= len - sh->sh_offset;
}

/* NUL-terminated string @off of string section @strtab, or NULL. */
static const char *elf_str(const uint8_t *img, size_t len, const Elf64_Shdr *strtab, uint32_t off)
{
	const char *s = (const char *)img + strtab->sh_offset;

	if (!elf_range_ok(strtab, len) || off >= strtab->sh_size ||
	    memchr(s + off, '\0', strtab->sh_size - off) == NULL)
		return NULL;
	return s + off;
}

/* Index of the section called @name, or -1. */
static int elf_find_section(const uint8_t *img, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *names = elf_section(img, len, eh->e_shstrndx);
	unsigned int i;

	for (i = 0; names != NULL && i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = elf_section(img, len, i);
		const char *n = sh ? elf_str(img, len, names, sh->sh_name) : NULL;

		if (n != NULL && strcmp(n, name) == 0)
			return (int)i;
	}
	return -1;
}

/* File offset of the initial value of the `steer_cfg` symbol in .rodata, or -1. */
static long elf_cfg_offset(const uint8_t *img, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	int ro = elf_find_section(img, len, ".rodata");
	const Elf64_Shdr *rosh = ro >= 0 ? elf_section(img, len, (unsigned int)ro) : NULL;
	unsigned int i;

	if (rosh == NULL || rosh->sh_type != SHT_PROGBITS || !elf_range_ok(rosh, len))
		return -1;
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *symtab = elf_section(img, len, i);
		const Elf64_Shdr *strtab;
		uint64_t k;

		if (symtab == NULL || symtab->sh_type != SHT_SYMTAB || !elf_range_ok(symtab, len))
			continue;
		strtab = elf_section(img, len, symtab->sh_link);
		if (strtab == NULL)
			return -1;
		for (k = 0; k < symtab->sh_size / sizeof(Elf64_Sym); k++) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(img + symtab->sh_offset) + k;
			const char *n = elf_str(img, len, strtab, sym->st_name);

			if (n == NULL || strcmp(n, STEER_CFG_SYMBOL) != 0)
				continue;
			if (sym->st_shndx != (unsigned int)ro ||
			    sym->st_size != sizeof(struct steer_cfg) ||
			    sym->st_value > rosh->sh_size ||
			    rosh->sh_size - sym->st_value < sizeof(struct steer_cfg))
				return -1;
			return (long)(rosh->sh_offset + sym->st_value);
		}
	}
	return -1;
}

static bool elf_header_ok(const uint8_t *img, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	return len >= sizeof(*eh) && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
	       eh->e_ident[EI_CLASS] == ELFCLASS64 &&
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	       eh->e_ident[EI_DATA] == ELFDATA2LSB &&
#else
	       eh->e_ident[EI_DATA] == ELFDATA2MSB &&
#endif
	       eh->e_machine == EM_BPF && eh->e_shentsize == sizeof(Elf64_Shdr);
}

int steer_object_build(const struct steer_config *cfg, void **obj, size_t *len, char *err,
		       size_t errlen)
{
	struct steer_cfg abi, cur;
	const void *elf;
	uint8_t *img;
	size_t sz;
	long off;
	int rc;

	rc = config_check(cfg, err, errlen);
	if (rc < 0)
		return rc;
	elf = steer_bpf__elf_bytes(&sz);
	img = malloc(sz);
	if (img == NULL) {
		set_err(err, errlen, "steer: out of memory");
		return -ENOMEM;
	}
	memcpy(img, elf, sz);
	off = elf_header_ok(img, sz) ? elf_cfg_offset(img, sz) : -1;
	if (off >= 0)
		memcpy(&cur, img + off, sizeof(cur));
	if (off < 0 || cur.magic != STEER_CFG_MAGIC) {
		free(img);
		set_err(err, errlen, "steer: embedded object has no %s of %zu bytes in .rodata",
			STEER_CFG_SYMBOL, sizeof(struct steer_cfg));
		return -ENOEXEC;
	}
	config_to_abi(cfg, &abi);
	memcpy(img + off, &abi, sizeof(abi));
	*obj = img;
	*len = sz;
	return 0;
}

/* Name and type of program @id; -ENOENT when it went away meanwhile. */
static int prog_is_ours(uint32_t id, bool *ours)
{
	struct bpf_prog_info info;
	uint32_t info_len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	int rc;

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	rc = rc < 0 ? -errno : 0;
	close(fd);
	if (rc == 0)
		*ours = info.type == BPF_PROG_TYPE_XDP &&
			strncmp(info.name, STEER_PROG_NAME, sizeof(info.name)) == 0;
	return rc;
}

int steer_query(unsigned int ifindex, uint32_t *prog_id, bool *ours)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	bool mine = false;
	uint32_t id;
	int rc;

	rc = bpf_xdp_query((int)ifindex, 0, &q);
	if (rc < 0)
		return rc;
	id = q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id);
	if (id != 0) {
		rc = prog_is_ours(id, &mine);
		if (rc < 0)
			return rc;
	}
	if (prog_id)
		*prog_id = id;
	if (ours)
		*ours = mine;
	return 0;
}

/* Detach program @id from @ifindex in mode @mode_flag, only if it is still that program. */
static int detach_id(unsigned int ifindex, uint32_t id, uint32_t mode_flag)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o);
	int fd = bpf_prog_get_fd_by_id(id);
	int rc;

	if (fd < 0)
		return -errno;
	o.old_prog_fd = fd;
	rc = bpf_xdp_detach((int)ifindex, mode_flag | XDP_FLAGS_REPLACE, &o);
	close(fd);
	return rc;
}

int steer_detach_ours(unsigned int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	static const uint32_t modes[2] = {XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
	uint32_t ids[2];
	int detached = 0, rc;
	unsigned int i;
	bool ours;

	rc = bpf_xdp_query((int)ifindex, 0, &q);
	if (rc < 0)
		return rc;
	ids[0] = q.drv_prog_id;
	ids[1] = q.skb_prog_id;
	for (i = 0; i < 2; i++) {
		if (ids[i] == 0)
			continue;
		rc = prog_is_ours(ids[i], &ours);
		if (rc == -ENOENT)
			continue;
		if (rc < 0)
			return rc;
		if (!ours)
			return -EBUSY;
		rc = detach_id(ifindex, ids[i], modes[i]);
		if (rc < 0)
			return rc;
		detached = 1;
	}
	return detached;
}

/*
 * Hold an exclusive lock on (network namespace, ifindex) for the life of @s. The holder
 * unlinks the file when it is done; a locker that finds its file unlinked meanwhile (its
 * inode no longer at the path) starts over, so two holders never coexist.
 */
static int lock_interface(struct steer *s, char *err, size_t errlen)
{
	struct stat ns, held, now;
	int fd, e, tries;

	if (stat("/proc/self/ns/net", &ns) < 0)
		ns.st_ino = 0;
	if (mkdir(STEER_LOCK_DIR, 0755) < 0 && errno != EEXIST) {
		e = errno;
		set_err(err, errlen, "steer: cannot create %s: %s", STEER_LOCK_DIR, strerror(e));
		return -e;
	}
	snprintf(s->lock_path, sizeof(s->lock_path), STEER_LOCK_DIR "/steer-%lu-%u.lock",
		 (unsigned long)ns.st_ino, s->ifindex);
	for (tries = 0; tries < 10; tries++) {
		fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			e = errno;
			set_err(err, errlen, "steer: cannot open %s: %s", s->lock_path,
				strerror(e));
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			e = errno;
			close(fd);
			set_err(err, errlen,
				"steer: interface %u is in use by another ringway (lock %s)",
				s->ifindex, s->lock_path);
			return e == EWOULDBLOCK ? -EBUSY : -e;
		}
		if (fstat(fd, &held) == 0 && stat(s->lock_path, &now) == 0 &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev) {
			s->lock_fd = fd;
			return 0;
		}
		close(fd); /* unlinked by the previous holder: take the new file */
	}
	set_err(err, errlen, "steer: cannot take the lock %s", s->lock_path);
	return -EAGAIN;
}

/* Load @img into the kernel once and unload it: verifier or privilege problems surface here. */
static int try_load(const void *img, size_t len, char *err, size_t errlen)
{
	char log[4096];
	LIBBPF_OPTS(bpf_object_open_opts, o, .object_name = STEER_PROG_NAME, .kernel_log_buf = log,
		    .kernel_log_size = sizeof(log));
	struct bpf_object *obj;
	int rc;

	log[0] = '\0';
	obj = bpf_object__open_mem(img, len, &o);
	if (obj == NULL) {
		rc = -errno;
		set_err(err, errlen, "steer: cannot open the program object: %s", strerror(-rc));
		return rc;
	}
	rc = bpf_object__load(obj);
	if (rc < 0) {
		size_t n = strlen(log);
		const char *tail = n > 200 ? log + n - 200 : log;

		set_err(err, errlen, "steer: the kernel refused the XDP program: %s%s%s",
			strerror(-rc), rc == -EPERM ? " (needs root: CAP_BPF, CAP_NET_ADMIN)" : "",
			tail[0] ? tail : "");
	}
	bpf_object__close(obj);
	return rc;
}

/* The object file's content becomes @img (the memfd is created on first use). */
static int write_memfd(struct steer *s, const void *img, size_t len, char *err, size_t errlen)
{
	const uint8_t *p = img;
	size_t done = 0;

	if (s->obj_fd < 0)
		s->obj_fd = memfd_create(STEER_PROG_NAME ".o", MFD_CLOEXEC);
	if (s->obj_fd < 0) {
		set_err(err, errlen, "steer: memfd_create: %s", strerror(errno));
		return -errno;
	}
	if (ftruncate(s->obj_fd, 0) < 0) {
		set_err(err, errlen, "steer: truncating the object: %s", strerror(errno));
		return -errno;
	}
	while (done < len) {
		ssize_t n = pwrite(s->obj_fd, p + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_err(err, errlen, "steer: writing the object: %s", strerror(errno));
			return n < 0 ? -errno : -EIO;
		}
		done += (size_t)n;
	}
	snprintf(s->path, sizeof(s->path), "/proc/self/fd/%d", s->obj_fd);
	return 0;
}

/* A ringway program left on the interface by a run that did not exit cleanly goes. */
static int clear_stale(struct steer *s, char *err, size_t errlen)
{
	int rc = steer_detach_ours(s->ifindex);

	if (rc == -EBUSY)
		set_err(err, errlen,
			"steer: interface %u has an XDP program that is not ringway's; "
			"remove it first (ip link set dev IFACE xdp off)",
			s->ifindex);
	else if (rc < 0)
		set_err(err, errlen, "steer: querying XDP on interface %u: %s", s->ifindex,
			strerror(-rc));
	return rc < 0 ? rc : 0;
}

struct steer *steer_open(unsigned int ifindex, const struct steer_config *cfg, char *err,
			 size_t errlen)
{
	struct steer *s;
	void *img = NULL;
	size_t len = 0;
	int rc;

	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		set_err(err, errlen, "steer: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->ifindex = ifindex;
	s->obj_fd = s->lock_fd = s->stats_fd = -1;
	if (ifindex == 0) {
		set_err(err, errlen, "steer: interface index 0");
		rc = -EINVAL;
		goto fail;
	}
	rc = steer_object_build(cfg, &img, &len, err, errlen);
	if (rc == 0)
		rc = lock_interface(s, err, errlen);
	if (rc == 0)
		rc = clear_stale(s, err, errlen);
	if (rc == 0)
		rc = try_load(img, len, err, errlen);
	if (rc == 0)
		rc = write_memfd(s, img, len, err, errlen);
	free(img);
	if (rc == 0)
		return s;
fail:
	steer_close(s);
	errno = -rc;
	return NULL;
}

int steer_reconfigure(struct steer *s, const struct steer_config *cfg, char *err, size_t errlen)
{
	void *img = NULL;
	size_t len = 0;
	int rc = steer_object_build(cfg, &img, &len, err, errlen);

	if (rc == 0)
		rc = try_load(img, len, err, errlen);
	if (rc == 0)
		rc = write_memfd(s, img, len, err, errlen);
	free(img);
	return rc;
}

const char *steer_object_path(const struct steer *s)
{
	return s->path;
}

/* Value of key @key in comma-separated devargs @args (after the device name), or NULL. */
static const char *devarg(const char *args, const char *key, size_t *vlen)
{
	size_t kl = strlen(key);
	const char *p = strchr(args, ',');

	while (p != NULL) {
		p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			*vlen = strcspn(p + kl + 1, ",");
			return p + kl + 1;
		}
		p = strchr(p, ',');
	}
	return NULL;
}

int steer_vdev_iface(const char *vdev, char *ifname, size_t len)
{
	static const char drv[] = "net_af_xdp";
	const char *v;
	size_t vl;

	if (strncmp(vdev, drv, sizeof(drv) - 1) != 0)
		return 0;
	v = devarg(vdev, "iface", &vl);
	if (v == NULL || vl == 0 || vl >= len || devarg(vdev, "xdp_prog", &vl) != NULL) {
		if (len > 0)
			ifname[0] = '\0';
		return -EINVAL;
	}
	memcpy(ifname, v, vl);
	ifname[vl] = '\0';
	return 1;
}

int steer_vdev_with_prog(const char *vdev, const struct steer *s, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s,xdp_prog=%s", vdev, s->path);

	return n < 0 || (size_t)n >= outlen ? -ENOSPC : 0;
}

/* fd of the map called @name used by program @prog_fd, or a negative errno. */
static int prog_map_fd(int prog_fd, const char *name)
{
	struct bpf_prog_info info;
	uint32_t ids[16], info_len = sizeof(info), i;

	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 16;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len) < 0)
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 16; i++) {
		struct bpf_map_info mi;
		uint32_t mi_len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &mi_len) == 0 &&
		    strncmp(mi.name, name, sizeof(mi.name)) == 0)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int steer_check_attached(struct steer *s, char *err, size_t errlen)
{
	uint32_t id;
	bool ours;
	int rc, pfd;

	rc = steer_query(s->ifindex, &id, &ours);
	if (rc < 0) {
		set_err(err, errlen, "steer: querying XDP on interface %u: %s", s->ifindex,
			strerror(-rc));
		return rc;
	}
	if (id == 0 || !ours) {
		set_err(err, errlen,
			id ? "steer: interface %u runs XDP program %u, not ringway's"
			   : "steer: no XDP program on interface %u",
			s->ifindex, id);
		return id ? -EBUSY : -ENOENT;
	}
	if (id == s->prog_id && s->stats_fd >= 0)
		return 0;
	pfd = bpf_prog_get_fd_by_id(id);
	if (pfd < 0)
		return -errno;
	rc = prog_map_fd(pfd, STEER_STATS_MAP_NAME);
	close(pfd);
	if (rc < 0) {
		set_err(err, errlen, "steer: program %u has no %s map", id, STEER_STATS_MAP_NAME);
		return rc;
	}
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	s->stats_fd = rc;
	s->prog_id = id;
	return 0;
}

int steer_read_stats(struct steer *s, uint64_t out[STEER_CTR_COUNT])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	uint32_t k;
	int rc = 0, i;

	if (s->stats_fd < 0 && (rc = steer_check_attached(s, NULL, 0)) < 0)
		return rc;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (vals == NULL)
		return -ENOMEM;
	for (k = 0; k < STEER_CTR_COUNT; k++) {
		if (bpf_map_lookup_elem(s->stats_fd, &k, vals) < 0) {
			rc = -errno;
			break;
		}
		out[k] = 0;
		for (i = 0; i < ncpu; i++)
			out[k] += vals[i];
	}
	free(vals);
	return rc;
}

void steer_close(struct steer *s)
{
	if (s == NULL)
		return;
	/* Only while we hold the lock is a ringway program on the interface ours to remove. */
	if (s->lock_fd >= 0 && s->obj_fd >= 0)
		(void)steer_detach_ours(s->ifindex);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->obj_fd >= 0)
		close(s->obj_fd);
	if (s->lock_fd >= 0) {
		(void)unlink(s->lock_path); /* still holding it: see lock_interface */
		close(s->lock_fd);
	}
	free(s);
}
