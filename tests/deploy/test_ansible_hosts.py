"""Ansible on two hosts for real: the real-host inventory
(ansible/inventories/hosts.example.yml) against two "hypervisors" that
Ansible reaches over SSH.

Each host is
* a network namespace with its own sshd, listening on the inventory's
  management address (192.0.2.11 for pm1, 192.0.2.12 for pm2) on a NIC
  of its own (mgmt0) that also holds the default route;
* a private mount namespace whose root is an overlay of this machine's
  root: its own dpkg database, /opt, /etc and /var, so apt installs the
  packages into the host and never into this machine;
* the inventory's uplink, enp1s0f1, one end of a veth pair whose other
  end is pm2's enp1s0f1: the two hosts' experiment NICs, back to back.

The inventory is used as it is; a second inventory file (later sources
win) adds only what differs from two physical hypervisors: how SSH gets
into the namespace (a ProxyCommand through 'ip netns exec', the key and
the known host keys made here), panda_service_manager=pidfile (no
systemd in the namespaces), where the .deb files are, and a short
experiment.  Then: site.yml installs the packages of
packaging/build-debs.sh ($PANDA_DEB_DIR), configures bridge, QoS and
flows on both hosts and starts memcached and panda-fg-server on pm2; a
second run changes nothing; experiment.yml runs the hosts driver (pm1's
clients against pm2's servers across the link) and fetches the results.

Skips without root, Ansible, sshd or the packages (tests/run.sh builds
them first; by hand: packaging/build-debs.sh, then
PANDA_DEB_DIR=_build-deb pytest tests/deploy/test_ansible_hosts.py).
"""

import glob
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from test_ansible import (ANSIBLE, HOSTS_INV, TOP, ansible_env, changed_tasks,
                          need, recap, run, tail)

HOSTS = ("pm1", "pm2")
UPLINK = "enp1s0f1"
DEB_DIR = os.path.abspath(os.environ.get("PANDA_DEB_DIR",
                                         os.path.join(TOP, "_build-deb")))
PACKAGES = ("panda-openvswitch", "panda-ovs-tools")
REQUESTS = 300


def inventory():
    """The example inventory's host variables, as Ansible reads them."""
    res = run(["ansible-inventory", "-i", HOSTS_INV, "--list"], timeout=60)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)["_meta"]["hostvars"]


def deb_files():
    found = {}
    for p in PACKAGES:
        files = glob.glob(os.path.join(DEB_DIR, p + "_*.deb"))
        if len(files) != 1:
            return None
        found[p] = files[0]
    return found


def deb_version(path):
    return subprocess.run(["dpkg-deb", "-f", path, "Version"], check=True,
                          capture_output=True, text=True).stdout.strip()


class Host:
    """One hypervisor: namespace, overlay root, sshd."""

    def __init__(self, name, ns, tmp, mgmt):
        self.name, self.ns, self.mgmt = name, ns, mgmt
        self.dir = os.path.join(tmp, name)
        self.root = os.path.join(self.dir, "root")
        self.sshd = None
        for d in ("upper", "work", "root"):
            os.makedirs(os.path.join(self.dir, d))

    def start(self, authorized_keys):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "",
                        "-f", os.path.join(self.dir, "hostkey")], check=True)
        conf = os.path.join(self.dir, "sshd_config")
        with open(conf, "w") as f:
            f.write("ListenAddress %s\nPort 22\nHostKey %s/hostkey\n"
                    "AuthorizedKeysFile %s\nPermitRootLogin prohibit-password\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                    "UsePAM no\nStrictModes no\nPidFile none\n"
                    "Subsystem sftp internal-sftp\n"
                    % (self.mgmt, self.dir, authorized_keys))
        # 'ip netns exec' gives the command a mount namespace of its own;
        # the overlay and the chroot live there, and the process is sshd
        # itself (each step execs the next).
        script = (
            "set -e; d=%s; mount -t overlay overlay -o lowerdir=/,"
            "upperdir=$d/upper,workdir=$d/work $d/root; "
            "for m in proc sys dev; do mount --rbind /$m $d/root/$m; done; "
            "mount -t tmpfs -o mode=755 tmpfs $d/root/run; "
            "mkdir -p $d/root/run/sshd; "
            "exec chroot $d/root /usr/sbin/sshd -D -e -f %s"
            % (self.dir, conf))
        self.log = open(os.path.join(self.dir, "sshd.log"), "w")
        self.sshd = subprocess.Popen(["ip", "netns", "exec", self.ns, "sh",
                                      "-c", script], stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def host_key(self):
        with open(os.path.join(self.dir, "hostkey.pub")) as f:
            return " ".join(f.read().split()[:2])

    def run(self, *cmd, check=True):
        """A command inside the host (its namespaces and root)."""
        return subprocess.run(["nsenter", "-t", str(self.sshd.pid), "-m",
                               "-n", "-r", "-w"] + list(cmd), check=check,
                              capture_output=True, text=True, timeout=120)

    def wait_ssh(self):
        deadline = time.monotonic() + 60
        while True:
            res = subprocess.run(["ip", "netns", "exec", self.ns, "ss",
                                  "-Hltn", "src", self.mgmt + ":22"],
                                 capture_output=True, text=True)
            if res.stdout.strip():
                return
            assert self.sshd.poll() is None, open(self.log.name).read()
            assert time.monotonic() < deadline, "sshd did not listen"
            time.sleep(0.1)

    def stop(self):
        """Ends every process in the host's namespace: all of them were
        started by this test (sshd, and through Ansible the OVS daemons,
        memcached, panda-fg-server), by pid."""
        for _ in range(50):
            pids = subprocess.run(["ip", "netns", "pids", self.ns],
                                  capture_output=True, text=True).stdout.split()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGTERM if _ < 30 else signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        if self.sshd is not None:
            self.sshd.wait(timeout=10)
            self.log.close()


class TwoHosts:
    def __init__(self):
        self.id = secrets.token_hex(2)
        self.tmp = tempfile.mkdtemp(prefix="pk-hosts-")
        self.results = os.path.join(self.tmp, "results")
        hv = inventory()
        self.hosts = {h: Host(h, "pk%s-%s" % (self.id, h), self.tmp,
                              hv[h]["ansible_host"]) for h in HOSTS}
        self.bridge_addr = {h: hv[h]["panda_bridge_address"] for h in HOSTS}
        assert all(hv[h]["panda_uplink"] == UPLINK for h in HOSTS), hv

    def ip(self, *args):
        subprocess.run(["ip"] + list(args), check=True)

    def setup(self):
        key = os.path.join(self.tmp, "id_ed25519")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        key], check=True)
        shutil.copy(key + ".pub", os.path.join(self.tmp, "authorized_keys"))
        for h in self.hosts.values():
            self.ip("netns", "add", h.ns)
            self.ip("-n", h.ns, "link", "set", "lo", "up")
            # Management NIC: the address Ansible connects to and the
            # default route (what the roles' management guard looks at).
            # A veth pair inside the host (this kernel has no dummy
            # devices); mgmt1 is its unused far end.
            self.ip("-n", h.ns, "link", "add", "mgmt0", "type", "veth",
                    "peer", "name", "mgmt1")
            self.ip("-n", h.ns, "addr", "add", h.mgmt + "/24", "dev", "mgmt0")
            for dev in ("mgmt0", "mgmt1"):
                self.ip("-n", h.ns, "link", "set", dev, "up")
            self.ip("-n", h.ns, "route", "add", "default", "dev", "mgmt0")
        pm1, pm2 = self.hosts["pm1"], self.hosts["pm2"]
        # The uplinks, back to back, left down and unaddressed as on a
        # fresh hypervisor (the roles bring them up).
        self.ip("-n", pm1.ns, "link", "add", UPLINK, "type", "veth", "peer",
                "name", UPLINK, "netns", pm2.ns)
        for h in self.hosts.values():
            h.start(os.path.join(self.tmp, "authorized_keys"))
        known = os.path.join(self.tmp, "known_hosts")
        with open(known, "w") as f:
            for h in self.hosts.values():
                f.write("%s %s\n" % (h.mgmt, h.host_key()))
        for h in self.hosts.values():
            h.wait_ssh()
        # What differs from two physical hypervisors.
        local = {
            "all": {
                "vars": {
                    "ansible_ssh_private_key_file": key,
                    "panda_service_manager": "pidfile",
                    "panda_packages_dir": DEB_DIR,
                    "panda_results_dir": self.results,
                    "panda_experiment_schemes": ["panda"],
                    "panda_experiment_reps": 1,
                    "panda_experiment_requests": REQUESTS,
                    "panda_experiment_flows": 2,
                    "panda_experiment_fg_duration": 3,
                },
                "hosts": {
                    h.name: {"ansible_ssh_common_args": (
                        "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes"
                        " -o ProxyCommand='ip netns exec %s nc %%h %%p'"
                        % (known, h.ns))}
                    for h in self.hosts.values()},
            }
        }
        self.local_inv = os.path.join(self.tmp, "namespaces.yml")
        with open(self.local_inv, "w") as f:
            json.dump(local, f)
        self.env = ansible_env(
            ANSIBLE_SSH_CONTROL_PATH_DIR=os.path.join(self.tmp, "cp"))

    def playbook(self, name, *extra, timeout=900):
        start = time.monotonic()
        res = run(["ansible-playbook", "-i", HOSTS_INV, "-i", self.local_inv,
                   name] + list(extra), timeout=timeout, env=self.env)
        res.seconds = time.monotonic() - start
        print("%s: %.1f s, recap %s" % (name, res.seconds,
                                        recap(res.stdout)))
        return res

    def vsctl(self, host, *args):
        return self.hosts[host].run(
            "/opt/panda-ovs/bin/ovs-vsctl", "--timeout=20",
            *args).stdout.strip()

    def teardown(self):
        for h in self.hosts.values():
            h.stop()
        for h in self.hosts.values():
            subprocess.run(["ip", "netns", "del", h.ns], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def hosts():
    if os.geteuid() != 0:
        pytest.skip("needs root (namespaces, mounts)")
    need("ansible-playbook")
    if not os.access("/usr/sbin/sshd", os.X_OK):
        pytest.skip("sshd is not installed (openssh-server; "
                    "./install-deps.sh installs it)")
    if deb_files() is None:
        pytest.skip("no packages in %s (packaging/build-debs.sh makes them; "
                    "set PANDA_DEB_DIR)" % DEB_DIR)
    t = TwoHosts()
    try:
        t.setup()
        t.first = t.playbook("site.yml", timeout=1800)
        yield t
    finally:
        t.teardown()
    for h in t.hosts.values():
        assert not os.path.exists("/run/netns/" + h.ns)


def test_hosts_site_installs_packages(hosts):
    res = hosts.first
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    r = recap(res.stdout)
    assert set(r) == set(HOSTS), r
    for h in HOSTS:
        assert r[h]["failed"] == 0 and r[h]["unreachable"] == 0, r
    # Each host has the packages' versions; this machine has none of them.
    for pkg, path in deb_files().items():
        for h in hosts.hosts.values():
            got = h.run("dpkg-query", "-W", "-f=${Version} ${Status}",
                        pkg).stdout
            assert got == deb_version(path) + " install ok installed", (h.name, got)
        mine = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                              capture_output=True, text=True)
        assert "ok installed" not in mine.stdout, \
            "%s leaked onto this machine" % pkg


def test_hosts_site_is_idempotent(hosts):
    assert hosts.first.returncode == 0, "first run failed"
    res = hosts.playbook("site.yml", timeout=1800)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    r = recap(res.stdout)
    for h in HOSTS:
        assert r[h]["changed"] == 0, (
            "second site.yml run changed on %s: %s"
            % (h, changed_tasks(res.stdout)))


def test_hosts_switch_configuration(hosts):
    """Each host's patched OVS (from the package) has the bridge, QoS and
    flows, and the bridges reach each other over the uplinks."""
    assert hosts.first.returncode == 0, "first run failed"
    for name, h in hosts.hosts.items():
        assert hosts.vsctl(name, "get", "Bridge", "br-panda",
                           "datapath_type") == "netdev"
        assert hosts.vsctl(name, "get", "Interface", UPLINK, "ofport") == "1"
        qos = hosts.vsctl(name, "get", "Port", UPLINK, "qos")
        assert hosts.vsctl(name, "get", "QoS", qos, "type") == "linux-htb"
        assert hosts.vsctl(name, "get", "QoS", qos,
                           "other_config:max-rate") == '"1000000000"'
        flows = h.run("/opt/panda-ovs/bin/ovs-ofctl", "dump-flows",
                      "br-panda").stdout
        assert re.search(r"priority=100,tcp,in_port=LOCAL "
                         r"actions=panda\(id=1[,)].*NORMAL", flows), flows
        addr = h.run("ip", "-4", "-o", "addr", "show", "dev",
                     "br-panda").stdout
        assert hosts.bridge_addr[name] in addr, addr
        # The daemon is the package's binary.
        pid = h.run("cat", "/var/opt/panda-ovs/run/openvswitch/"
                    "ovs-vswitchd.pid").stdout.strip()
        exe = os.readlink("/proc/%s/exe" % pid)
        assert exe.endswith("/opt/panda-ovs/sbin/ovs-vswitchd"), exe
    ping = hosts.hosts["pm1"].run(
        "ping", "-c", "2", "-W", "5",
        hosts.bridge_addr["pm2"].split("/")[0], check=False)
    assert ping.returncode == 0, ping.stdout + ping.stderr


def htb_bytes(host):
    out = host.run("tc", "-s", "class", "show", "dev", UPLINK).stdout
    return {cls: int(n) for cls, n in re.findall(
        r"class htb (1:[0-9a-f]+) .*?\n\s*Sent (\d+) bytes", out, re.S)}


def test_hosts_experiment_fetches_results(hosts):
    """experiment.yml: pm1's clients against pm2's memcached and
    panda-fg-server across the link, through both switches' panda flows;
    the results come back to the controller."""
    assert hosts.first.returncode == 0, "first run failed"
    before = htb_bytes(hosts.hosts["pm2"])
    res = hosts.playbook("experiment.yml", "-e",
                         "panda_experiment_run_id=t1", timeout=1200)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    rep = os.path.join(hosts.results, "pm1", "t1", "panda", "rep1")
    with open(os.path.join(rep, "mc.json")) as f:
        mc = json.load(f)
    assert mc["requests_ok"] == REQUESTS, mc
    with open(os.path.join(rep, "fg.json")) as f:
        fg = json.load(f)
    assert fg["flows_completed"] > 0, fg
    assert not os.path.exists(os.path.join(hosts.results, "pm2")), \
        "only the client host has results"
    # The servers' data left pm2 through its panda flow: memcached's
    # replies and the flows' first bytes at level 0 (HTB class 1:1), the
    # bulk of the web-search flows demoted below it (queue N is class
    # 1:N+1; 1:fffe is the root, which counts everything).
    sent = htb_bytes(hosts.hosts["pm2"])
    grew = {c: sent.get(c, 0) - before.get(c, 0) for c in sent}
    assert grew.get("1:1", 0) > 0, grew
    assert sum(grew.get("1:%d" % n, 0) for n in range(2, 9)) > 0, grew
