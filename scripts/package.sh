#!/usr/bin/env bash
# Build the Debian binary package of ringway from `meson install` (docs/install.md):
#   scripts/package.sh [--out DIR] [--build DIR]
# A build of its own (--prefix=/usr, Debian's hardening flags, no tests), installed with
# --strip into a staging tree, plus what a Debian package needs around it: DEBIAN/control
# (Depends from the binaries' shared libraries, through dpkg-shlibdeps, and the DPDK drivers
# the router loads at run time), conffiles, maintainer scripts, /usr/share/doc/ringway. No
# debian/ folder in the tree: dpkg-shlibdeps gets a two-line control file in a scratch
# directory. Then lintian on the result (when installed): its findings are fixed, or
# overridden below with the reason. The last line of output is the package's path.
# Default --out build-package, --build build-package/build (reused when present).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/build-package
build=
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	-h | --help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "package: unknown argument '$1' (--out DIR, --build DIR)" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${build:-$out/build}
for tool in meson ninja dpkg-deb dpkg-shlibdeps dpkg-buildflags; do
	command -v "$tool" >/dev/null || { echo "package: $tool is missing (scripts/setup-deps.sh)" >&2; exit 1; }
done

# Debian's hardening: fortify, stack protector, relro and bind-now, PIE.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS=$(dpkg-buildflags --get LDFLAGS)
export CFLAGS LDFLAGS
# The man pages' date (docs/man/mkman.py): the commit's, so a rebuild makes the same pages.
SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$src" --prefix=/usr --buildtype=debugoptimized -Db_pie=true \
		-Dtests=disabled -Dbench=false -Dfuzz=disabled -Ddpdk=enabled >"$out/setup.log" ||
		{ cat "$out/setup.log" >&2; exit 1; }
fi
ninja -C "$build" -j2 >"$out/build.log" || { tail -40 "$out/build.log" >&2; exit 1; }

stage=$out/stage
rm -rf "$stage"
DESTDIR=$stage meson install -C "$build" --no-rebuild --quiet
# As dh_strip does: no debug symbols, no .comment (compiler versions) or .note sections.
find "$stage" -type f -perm -u+x -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; \
	-exec strip --remove-section=.comment --remove-section=.note --strip-unneeded {} \;
# As dh_compress does: man pages gzipped, without a timestamp.
[ ! -d "$stage/usr/share/man" ] || find "$stage/usr/share/man" -type f -name '*.[0-9]' -exec gzip -9n {} +

version=$(meson introspect "$build" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
pkg=ringway
doc=$stage/usr/share/doc/$pkg
mkdir -p "$doc"

# copyright (machine-readable format) and a native package's changelog.gz.
cat >"$doc/copyright" <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ringway
Source: https://github.com/ringway/ringway

Files: *
Copyright: @YEARS@ the ringway authors
License: BSD-3-Clause

License: BSD-3-Clause
 Redistribution and use in source and binary forms, with or without
 modification, are permitted provided that the following conditions are met:
 .
 1. Redistributions of source code must retain the above copyright notice,
    this list of conditions and the following disclaimer.
 2. Redistributions in binary form must reproduce the above copyright notice,
    this list of conditions and the following disclaimer in the documentation
    and/or other materials provided with the distribution.
 3. Neither the name of the copyright holder nor the names of its
    contributors may be used to endorse or promote products derived from this
    software without specific prior written permission.
 .
 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
 AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
 ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR CONTRIBUTORS BE
 LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
 SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
 INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
 CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
 ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 POSSIBILITY OF SUCH DAMAGE.
EOF
first=$(git -C "$src" log --max-parents=0 --format=%cd --date=format:%Y 2>/dev/null | tail -1)
last=$(git -C "$src" log -1 --format=%cd --date=format:%Y 2>/dev/null || date +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years=$years-$last
sed -i "s/@YEARS@/$years/" "$doc/copyright"
date=$(date -R -d "@$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)")
printf '%s (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- %s  %s\n' \
	"$pkg" "$version" "$commit" "ringway maintainers <maintainers@ringway.invalid>" "$date" |
	gzip -9n >"$doc/changelog.gz"

# Depends: the shared libraries of every ELF file, then the DPDK drivers EAL loads as
# plugins (not linked, so invisible to dpkg-shlibdeps): the mempool ops every pool needs,
# the PCI and vdev buses, and the two kernel-facing PMDs the router has modes for. NIC
# drivers come with Recommends: dpdk (it recommends them, and brings dpdk-devbind.py).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$pkg" "$pkg" >"$scratch/debian/control"
mapfile -t elves < <(find "$stage" -type f -perm -u+x -exec sh -c 'head -c4 "$1" | grep -q "ELF"' _ {} \; -print)
shlibs=$(cd "$scratch" && dpkg-shlibdeps -O "${elves[@]/#/-e}" 2>"$out/shlibdeps.log" |
	sed -n 's/^shlibs:Depends=//p') || { cat "$out/shlibdeps.log" >&2; exit 1; }
eal=$(ldd "$build/app/ringway/ringway" | awk '/librte_eal\.so/ {print $3}')
abi=${eal##*.so.}
abi=${abi%%.*}
plugins=
for drv in mempool_ring bus_pci bus_vdev net_af_packet net_af_xdp; do
	lib=librte_$drv.so.$abi
	p=$(dpkg-query -S "*/$lib" 2>/dev/null | cut -d: -f1 | head -1 || true)
	[ -n "$p" ] || { echo "package: no Debian package holds $lib" >&2; exit 1; }
	plugins="$plugins, $p"
done

mkdir -p "$stage/DEBIAN"
find "$stage/etc" -type f | sed "s|^$stage||" | sort >"$stage/DEBIAN/conffiles"
cat >"$stage/DEBIAN/control" <<EOF
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: ringway maintainers <maintainers@ringway.invalid>
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $shlibs$plugins
Recommends: dpdk
Suggests: etcd-server
Section: net
Priority: optional
Description: kernel-bypass memcached UDP shard router (DPDK)
 ringway receives memcached requests over UDP (ASCII, meta and binary
 protocols) on DPDK poll-mode worker cores, hashes each key onto a placement
 of the cache nodes (ring, ketama, twemproxy, jump, rendezvous, maglev or
 modulo), forwards the request to the owning node and proxies the reply back.
 Membership changes are made live through a control socket (ringwayctl) and
 kept in a state file; ringway-sync follows a fleet's membership in etcd.
 .
 This package holds the router, ringwayctl, ringway-sync, the offline planner
 ringway-plan, the load generator ringway-loadgen, systemd units (none is
 enabled on installation), a hugepage reservation unit and a sample
 configuration in /etc/ringway.
EOF

# Maintainer scripts: make systemd see the units and tmpfiles.d create /run/ringway and
# /run/dpdk; stop the routers when the package is removed (their binary goes away). Nothing
# is enabled or started: that is the operator's `systemctl enable --now ringway`.
cat >"$stage/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
	if [ -x "$(command -v systemd-tmpfiles)" ]; then
		systemd-tmpfiles ${DPKG_ROOT:+--root="$DPKG_ROOT"} --create ringway.conf || true
	fi
	if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
	fi
fi
exit 0
EOF
cat >"$stage/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	deb-systemd-invoke stop ringway.service 'ringway@*.service' >/dev/null || true
fi
exit 0
EOF
cat >"$stage/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
exit 0
EOF
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

# Lintian overrides, each with its reason.
mkdir -p "$stage/usr/share/lintian/overrides"
cat >"$stage/usr/share/lintian/overrides/$pkg" <<'EOF'
# systemd only: the router's sandbox (capability set, ProtectSystem=strict, runtime and state
# directories) and the hugepage unit ordering are the units' own; a sysvinit script would
# run it as unconfined root.
ringway: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/ringway.service]
ringway: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/ringway-hugepages.service]
EOF
(cd "$stage" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$stage/DEBIAN/md5sums"

deb=$out/${pkg}_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
if command -v lintian >/dev/null; then
	echo "package: lintian $deb"
	lintian --info --display-info --pedantic --tag-display-limit 0 "$deb" | tee "$out/lintian.log" || true
else
	echo "package: lintian not installed (scripts/setup-deps.sh): not checked" >&2
fi
echo "$deb"
