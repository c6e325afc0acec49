#!/usr/bin/env python3
"""e2e: the Debian package installs and runs under a real systemd as PID 1.

A throwaway container boots this machine's own tree (`systemd-nspawn --volatile=yes -D /
--boot`: a tmpfs root, /usr from the host) with a private network. /usr and /var (for
/var/lib/dpkg: nspawn makes no mount point below a missing /var/lib) get writable overlays whose upper halves live in this test's scratch directory, so the
package goes in with the real `dpkg -i` (maintainer scripts included) and nothing reaches
the host's trees. Then, on a net_null port (no-rx: no traffic, no spinning):

  - postinst made /run/ringway and /run/dpdk (tmpfiles.d) and systemd knows the units;
  - ringway-hugepages.service: the shipped default (2M:512) in a container whose /sys is
    read-only fails with its clear error, and ringway.service refuses to start without it;
    a count the host already holds passes as a check; the empty list (--no-huge) passes;
  - systemctl start ringway: active, `ringwayctl epoch` answers on /run/ringway/ctl.sock;
  - Type=notify: its status line (sd_notify STATUS=) says serving, drained after
    `ringwayctl drain`, serving again after `undrain`;
  - a change (`add`), then systemctl stop: exit 0 and the exit identity in the journal;
  - start again: the change is back (state file /var/lib/ringway/state);
  - systemctl kill -s SIGKILL: Restart=on-failure brings a new main PID that answers;
  - ringway@a and ringway@b run side by side with ringway, each its own socket and state;
    stopping one leaves the others answering (/run/ringway is shared, not removed).

The container is stopped by its PID; its scratch directory (overlay upper halves) is
removed; no systemd-nspawn stays behind. The package: $RINGWAY_DEB if set, else built by
scripts/package.sh into BUILD/package (incremental after the first run).
Skipped (77) when not root or systemd-nspawn/dpkg are missing, or the container does not
boot for a reason of the host (no overlayfs, no cgroups).

Environment: RINGWAY_SOURCE_ROOT, RINGWAY_BUILD_ROOT, optionally RINGWAY_DEB.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import harness as h

SKIP = 77
BOOT_TIMEOUT = 120
EAL = "-l 0-1 --no-huge -m 128 --no-pci --vdev net_null0,no-rx=1 --log-level lib.*:notice"

CONF = """[router]
address = 198.18.0.1
listen_ports = 11211
allowed_clients = 198.18.0.0/24
idle = backoff

[tables]
mbufs = 2047
mbuf_cache = 32
multiget_inflight = 4
multiget_buffer_kb = 64

[control]
socket = {sock}
state_file = {state}

[node cache1]
address = 198.18.1.1:11211
mac = 02:00:c6:12:01:01

[node cache2]
address = 198.18.1.2:11211
mac = 02:00:c6:12:01:02
"""


class Container:
    def __init__(self, scratch, debdir):
        self.scratch = scratch
        self.name = "rwboot%d" % os.getpid()
        up = os.path.join(scratch, "usr-upper")
        var = os.path.join(scratch, "var-upper")
        os.makedirs(up)
        os.makedirs(var)
        self.log = open(os.path.join(scratch, "console.log"), "wb")
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "--volatile=yes", "-D", "/", "--boot", "--register=no",
             "--keep-unit", "--private-network", "--console=pipe", "-M", self.name,
             "--overlay=/usr:%s:/usr" % up,
             "--overlay=/var:%s:/var" % var,
             "--bind-ro=%s:/mnt/ringway-deb" % debdir,
             "--bind-ro=/etc/passwd:/mnt/host-passwd", "--bind-ro=/etc/group:/mnt/host-group",
             # No first-boot wizard; a private network has no link to wait for (the unit
             # orders after network-online.target, which would then wait 2 minutes).
             "--", "systemd.firstboot=off",
             "systemd.mask=systemd-networkd-wait-online.service"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.leader = None

    def find_leader(self):
        """The container's PID 1: systemd-nspawn's child running systemd."""
        deadline = time.time() + 30
        while time.time() < deadline and self.proc.poll() is None:
            for t in glob.glob("/proc/%d/task/*/children" % self.proc.pid):
                for pid in open(t).read().split():
                    try:
                        if "systemd" in open("/proc/%s/comm" % pid).read():
                            self.leader = int(pid)
                            return True
                    except OSError:
                        pass
            time.sleep(0.2)
        return False

    def sh(self, cmd, timeout=60, check=False):
        """Run a shell command inside the container; (exit status, stdout+stderr)."""
        r = subprocess.run(["nsenter", "-t", str(self.leader), "-m", "-u", "-i", "-n", "-p",
                            "--", "/bin/sh", "-c", cmd],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out = r.stdout.decode(errors="replace")
        if check and r.returncode != 0:
            raise RuntimeError("in the container: %s: exit %d\n%s" % (cmd, r.returncode, out))
        return r.returncode, out

    def wait_booted(self):
        deadline = time.time() + BOOT_TIMEOUT
        state = ""
        while time.time() < deadline and self.proc.poll() is None:
            rc, state = self.sh("systemctl is-system-running 2>&1", timeout=20)
            state = state.strip()
            if state in ("running", "degraded"):
                return state
            time.sleep(1)
        return state

    def stop(self):
        """Power off by the container's PID (SIGTERM to systemd-nspawn makes it ask PID 1 to
        halt); SIGKILL if it has not ended within 60 s. Never leaves it running."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.log.close()


def wait_for(fn, timeout, step=0.5):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() >= deadline:
            return v
        time.sleep(step)


def build_package(src, build):
    deb = os.environ.get("RINGWAY_DEB")
    if deb:
        return deb
    out = os.path.join(build, "package")
    r = subprocess.run([os.path.join(src, "scripts", "package.sh"), "--out", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        h.log(text)
        raise RuntimeError("scripts/package.sh failed")
    return text.strip().splitlines()[-1]


def main():
    if os.geteuid() != 0:
        h.log("SKIP: needs root (systemd-nspawn)")
        return SKIP
    for tool in ("systemd-nspawn", "nsenter", "dpkg"):
        if shutil.which(tool) is None:
            h.log("SKIP: %s not installed (scripts/setup-deps.sh: systemd-container)" % tool)
            return SKIP
    src = os.environ.get("RINGWAY_SOURCE_ROOT",
                         os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    build = os.environ.get("RINGWAY_BUILD_ROOT", os.path.join(src, "build"))
    t0 = time.time()
    deb = build_package(src, build)
    h.log("package: %s (%.0f s)" % (deb, time.time() - t0))

    c = h.Checker("e2e-systemd-boot")
    scratch = tempfile.mkdtemp(prefix="ringway-boot-")
    debdir = os.path.join(scratch, "deb")
    os.makedirs(debdir)
    shutil.copy(deb, debdir)
    ct = Container(scratch, debdir)
    journal = ""
    try:
        if not ct.find_leader():
            h.log(open(os.path.join(scratch, "console.log"), errors="replace").read())
            h.log("SKIP: systemd-nspawn did not start a container here")
            return SKIP
        state = ct.wait_booted()
        if state not in ("running", "degraded"):
            h.log(open(os.path.join(scratch, "console.log"), errors="replace").read())
            h.log("SKIP: the container did not finish booting (%r)" % state)
            return SKIP
        h.log("booted: %s (%.0f s)" % (state, time.time() - t0))
        journal = run_checks(ct, c, os.path.basename(deb))
    finally:
        ct.stop()
        left = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], stdout=subprocess.PIPE)
        mounts = [m for m in left.stdout.decode().split("\n") if m.startswith(scratch)]
        shutil.rmtree(scratch, ignore_errors=True)
    c.ok(ct.proc.poll() is not None, "systemd-nspawn has ended")
    c.ok(not mounts and not os.path.exists(scratch),
             "nothing of the container is left (%s)" % mounts)
    h.log("journal excerpt:\n" + journal)
    h.log("total %.0f s" % (time.time() - t0))
    return c.finish()


# The tmpfs /etc holds only systemd's base users and groups, and dpkg refuses to run while
# its statoverride file names one the system lacks (ssl-cert, messagebus here): copy the
# host's entries for those names, and only those.
FIX_STATOVERRIDE = r"""
while read -r user group mode path; do
	getent passwd "$user" >/dev/null || grep "^$user:" /mnt/host-passwd >>/etc/passwd
	getent group "$group" >/dev/null || grep "^$group:" /mnt/host-group >>/etc/group
done </var/lib/dpkg/statoverride
"""


# With a private network, systemd-nspawn gives the container a /sys of its own made of the
# sysfs subtrees block, bus, class, dev, devices, kernel only; DPDK's EAL stats /sys/module
# to tell whether VFIO is there and fails without it ("Cannot init VFIO"). A router host has
# it: bind it in, read-only like the rest, in the container's mount namespace.
SYS_MODULE = r"""
set -e
[ -d /sys/module ] && exit 0
mount -o remount,bind,rw /sys
mkdir /sys/module
mkdir /run/sysfull
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs /run/sysfull
mount --bind /run/sysfull/module /sys/module
umount /run/sysfull
rmdir /run/sysfull
mount -o remount,bind,ro /sys
"""


def run_checks(ct, c, debname):
    sh = ct.sh
    sh(FIX_STATOVERRIDE, check=True)
    sh(SYS_MODULE, check=True)
    rc, out = sh("dpkg -i /mnt/ringway-deb/%s 2>&1" % debname, timeout=120)
    c.ok(rc == 0, "dpkg -i installs the package: %s" % out.strip()[-500:])
    if rc != 0:
        return ""
    rc, out = sh("dpkg-query -W -f='${Status}' ringway")
    c.ok(out.strip() == "install ok installed", "dpkg knows it installed: %r" % out)
    rc, out = sh("dpkg -L ringway | grep -c '^/usr/share/man/man[158]/.*gz$'; "
                 "man -l /usr/share/man/man8/ringway.8.gz 2>&1 | grep -c 'ringway - kernel'")
    c.ok(out.split() == ["6", "1"], "the six man pages are installed and render: %s" % out.split())
    rc, out = sh("stat -c '%n %a' /run/ringway /run/dpdk")
    c.ok(rc == 0, "postinst: tmpfiles.d made /run/ringway and /run/dpdk: %s" % out.strip())
    rc, out = sh("systemctl is-enabled ringway.service ringway-hugepages.service 2>&1")
    c.ok("enabled" not in out.split(), "nothing enabled by the package: %s" % out.split())
    rc, out = sh("systemctl is-active ringway.service")
    c.ok(out.strip() == "inactive", "nothing started by the package: %s" % out.strip())

    # Hugepages. A count above what the host holds, on a read-only /sys: a clear error, and
    # no router start. Only on a read-only /sys: this test never changes the host's
    # reservation. A count the host holds passes as a check.
    rc, have = sh("cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
    have = int(have.strip() or 0)
    rc, ro = sh("findmnt -no OPTIONS /sys")
    if "ro" in ro.strip().split(","):
        sh("echo 'RINGWAY_HUGEPAGES=\"2M:%d\"' >/etc/default/ringway-hugepages" % (have + 1))
        rc, out = sh("systemctl start ringway.service 2>&1")
        c.ok(rc != 0, "without the hugepages the unit requires, ringway does not start: %s"
             % out.strip())
        rc, out = sh("systemctl is-active ringway.service")
        c.ok(out.strip() != "active", "ringway.service is not running: %s" % out.strip())
        rc, out = sh("journalctl -b -o cat -u ringway-hugepages.service")
        want = "only %d of %d pages reserved" % (have, have + 1)
        c.ok(want in out and "Read-only file system" in out and "kernel command line" in out,
             "ringway-hugepages names what is missing, why, and the way out: %s"
             % out.strip().splitlines()[-2:])
    else:
        h.log("/sys is writable in this container: the failing write is not exercised "
              "(nothing is written to the host's reservation)")
    # Other work on this host may reserve or give back pages meanwhile: ask for one page, and
    # read again before each of three tries.
    held = False
    for _ in range(3):
        rc, have = sh("cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
        if int(have.strip() or 0) < 1:
            continue
        sh("echo 'RINGWAY_HUGEPAGES=\"2M:1\"' >/etc/default/ringway-hugepages")
        rc, out = sh("systemctl restart ringway-hugepages.service 2>&1; "
                     "systemctl is-active ringway-hugepages.service")
        if out.strip() == "active":
            held = True
            break
    if int(have.strip() or 0) >= 1:
        c.ok(held, "a count the host already holds passes as a check: %s" % out.strip())
    else:
        h.log("the host holds no 2 MiB pages: the passing check is not exercised")
    sh("echo 'RINGWAY_HUGEPAGES=' >/etc/default/ringway-hugepages", check=True)
    rc, out = sh("systemctl restart ringway-hugepages.service 2>&1; "
                 "systemctl is-active ringway-hugepages.service")
    c.ok(out.strip() == "active", "the empty list (--no-huge) passes: %s" % out.strip())

    # One router, the package's unit as shipped: config and EAL line only.
    sh("cat >/etc/ringway/ringway.conf <<'EOF'\n%s\nEOF" %
       CONF.format(sock="/run/ringway/ctl.sock", state="/var/lib/ringway/state"), check=True)
    sh("echo 'RINGWAY_EAL_ARGS=\"%s --file-prefix ringway\"' >/etc/default/ringway" % EAL,
       check=True)

    def epoch(sock="/run/ringway/ctl.sock"):
        rc, out = sh("ringwayctl --socket %s epoch 2>&1" % sock, timeout=20)
        m = re.search(r"epoch (\d+)", out)
        return int(m.group(1)) if rc == 0 and m else None

    def main_pid(unit="ringway.service"):
        rc, out = sh("systemctl show -p MainPID --value %s" % unit)
        return int(out.strip() or 0)

    rc, out = sh("systemctl start ringway.service 2>&1")
    c.ok(rc == 0, "systemctl start ringway: %s" % out.strip())
    e0 = wait_for(epoch, 60)
    c.ok(e0 is not None, "ringwayctl epoch answers on /run/ringway/ctl.sock")
    if e0 is None:
        h.log(sh("journalctl -b -o cat -u ringway.service --no-pager | tail -30")[1])
    rc, out = sh("test -S /run/dpdk/ringway/dpdk_telemetry.v2 && echo yes")
    c.ok(out.strip() == "yes", "the EAL's runtime files are in /run/dpdk/ringway (telemetry)")
    # Type=notify: the unit was active only once READY=1 came, and its status line follows
    # the drain (issue 31): serving, drained (no traffic: nothing in flight), serving again.
    def status_text():
        return sh("systemctl show -p StatusText --value ringway.service")[1].strip()

    c.ok(status_text() == "serving", "Type=notify: status line %r" % status_text())
    rc, out = sh("ringwayctl drain 2>&1")
    c.ok(rc == 0 and "drain" in out, "ringwayctl drain: %s" % out.strip())
    st = wait_for(lambda: status_text() if status_text().startswith("drained") else None, 20)
    c.ok(st is not None, "the unit's status says drained: %r" % (st or status_text()))
    rc, out = sh("ringwayctl undrain 2>&1")
    st = wait_for(lambda: status_text() if status_text() == "serving" else None, 20)
    c.ok(rc == 0 and st == "serving", "undrain: the status says serving again: %r (%s)"
         % (status_text(), out.strip()))
    rc, out = sh("ringwayctl add cache3 198.18.1.3:11211 mac 02:00:c6:12:01:03 2>&1")
    c.ok(rc == 0, "a change: add cache3: %s" % out.strip())
    e1 = epoch()
    c.ok(e0 is not None and e1 == e0 + 1, "the change moved the epoch %s -> %s" % (e0, e1))
    pid1 = main_pid()
    rc, out = sh("systemctl stop ringway.service 2>&1; systemctl show -p Result -p "
                 "ExecMainStatus -p ActiveState ringway.service")
    c.ok("Result=success" in out and "ExecMainStatus=0" in out and
             "ActiveState=inactive" in out, "stop: a clean exit: %s" % out.split())
    rc, jout = sh("journalctl -b -o cat _PID=%d" % pid1)
    ident = [l for l in jout.splitlines() if l.startswith("identity ")]
    c.ok(len(ident) == 1 and ident[0].startswith("identity ok"),
             "the exit identity is in the journal: %s" % ident)
    rc, out = sh("test -s /var/lib/ringway/state && echo yes")
    c.ok(out.strip() == "yes", "the state file is kept")

    rc, out = sh("systemctl start ringway.service 2>&1")
    c.ok(rc == 0, "start again: %s" % out.strip())
    e2 = wait_for(epoch, 60)
    rc, lst = sh("ringwayctl list 2>&1")
    c.ok(e2 == e1 and "cache3" in lst,
             "restart restores the state: epoch %s (was %s), cache3 listed" % (e2, e1))

    pid2 = main_pid()
    rc, out = sh("systemctl kill -s SIGKILL ringway.service 2>&1")
    c.ok(rc == 0, "systemctl kill -s SIGKILL: %s" % out.strip())
    back = wait_for(lambda: (main_pid() not in (0, pid2)) and epoch() == e1, 60)
    rc, out = sh("systemctl show -p NRestarts --value ringway.service")
    c.ok(back and out.strip() == "1",
             "Restart=on-failure brought it back: new main PID %d (was %d), NRestarts %s, "
             "epoch %s" % (main_pid(), pid2, out.strip(), epoch()))

    # Two instances beside it.
    for name in ("a", "b"):
        sh("cat >/etc/ringway/%s.conf <<'EOF'\n%s\nEOF" %
           (name, CONF.format(sock="/run/ringway/%s/ctl.sock" % name,
                              state="/var/lib/ringway/%s/state" % name)), check=True)
        sh("echo 'RINGWAY_EAL_ARGS=\"%s --file-prefix ringway-%s\"' >/etc/default/ringway-%s"
           % (EAL, name, name), check=True)
    rc, out = sh("systemctl start ringway@a.service ringway@b.service 2>&1")
    c.ok(rc == 0, "systemctl start ringway@a ringway@b: %s" % out.strip())
    ea = wait_for(lambda: epoch("/run/ringway/a/ctl.sock"), 60)
    eb = wait_for(lambda: epoch("/run/ringway/b/ctl.sock"), 60)
    c.ok(ea is not None and eb is not None, "both instances answer (%s, %s)" % (ea, eb))
    sh("ringwayctl --socket /run/ringway/a/ctl.sock add only-a 198.18.1.9:11211 "
       "mac 02:00:c6:12:01:09")
    rc, la = sh("ringwayctl --socket /run/ringway/a/ctl.sock list")
    rc, lb = sh("ringwayctl --socket /run/ringway/b/ctl.sock list")
    c.ok("only-a" in la and "only-a" not in lb, "each instance has its own membership")
    rc, out = sh("systemctl is-active ringway.service ringway@a.service ringway@b.service")
    c.ok(out.split() == ["active"] * 3, "three routers side by side: %s" % out.split())
    rc, out = sh("systemctl stop ringway@a.service 2>&1")
    c.ok(epoch() == e1 and epoch("/run/ringway/b/ctl.sock") == eb,
             "stopping ringway@a leaves ringway and ringway@b answering")
    rc, out = sh("test -s /var/lib/ringway/a/state && test -d /run/ringway/b && echo yes")
    c.ok(out.strip() == "yes", "ringway@a's state kept, ringway@b's runtime dir intact")
    sh("systemctl stop ringway@b.service ringway.service")

    rc, j = sh("journalctl -b -o short-monotonic -u ringway-hugepages.service -u ringway.service "
               "-u ringway@a.service -u ringway@b.service --no-pager | "
               "grep -E 'ringway-hugepages:|Started|Stopped|identity|stopping|serving on|"
               "Main process exited|Scheduled restart|Failed|Dependency'")
    return j


if __name__ == "__main__":
    sys.exit(main())
