"""The Ansible roles' guards and the source copy: each fails
closed, and the roles never touch what they do not own.

* panda_network's management-interface guard, with real facts gathered in
  a private network namespace: an uplink with the IPv6 default route, an
  uplink holding ansible_host's IPv6 address, facts not gathered, an uplink
  the facts do not know: all refused; a dedicated NIC passes.
* panda_ovs's distribution-OVS guard: an uplink enslaved to a Linux bridge,
  an uplink in a bridge of another OVS database, a database that cannot be
  asked (no ovs-vsctl, not a socket): refused; a database without the port
  passes.
* panda_apps's memcached guard: a memcached already listening on the
  experiment's address (or the wildcard) is refused, one on loopback only
  is no conflict.
* panda_build's source copy deletes only files it copied itself.

The playbook is tests/deploy/playbooks/role-tasks.yml (one task file of a
role); the namespace tests need root and skip otherwise.
"""

import json
import os
import secrets
import shutil
import subprocess
import time

import pytest

from pandaovs import paths
from pandalab.sandbox import OvsSandbox, is_root

from test_ansible import (ANSIBLE, ansible_env, changed_tasks, need, recap,
                          tail)

PLAYBOOK = os.path.join(paths.TOP, "tests", "deploy", "playbooks",
                        "role-tasks.yml")
BUILD = paths.build_dir()


def playbook(role, tasks, extra=None, netns=None, gather=True):
    """Runs 'tasks' of 'role' on localhost (in 'netns' if given)."""
    need("ansible-playbook")
    args = {"role_name": role, "role_tasks": tasks, "gather": gather,
            "ansible_python_interpreter": "/usr/bin/python3"}
    args.update(extra or {})
    cmd = ["ansible-playbook", "-i", "localhost,", "-c", "local", PLAYBOOK,
           "-e", json.dumps(args)]
    if netns:
        cmd = ["ip", "netns", "exec", netns] + cmd
    env = ansible_env(ANSIBLE_ROLES_PATH=os.path.join(ANSIBLE, "roles"))
    return subprocess.run(cmd, cwd=ANSIBLE, env=env, capture_output=True,
                          text=True, timeout=600)


class Netns:
    """A private network namespace with interfaces (veth pairs: this
    kernel has no dummy interfaces)."""

    def __init__(self):
        self.name = "hd2g%s" % secrets.token_hex(3)
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        self.ip("link", "set", "lo", "up")

    def ip(self, *args):
        subprocess.run(["ip", "-n", self.name] + list(args), check=True,
                       capture_output=True)

    def dummy(self, name, *addrs):
        """Interface 'name' (its veth peer is 'name'p), up, with
        'addrs'."""
        self.ip("link", "add", name, "type", "veth", "peer", "name",
                name + "p")
        for a in addrs:
            self.ip("addr", "add", a, "dev", name, "nodad") \
                if ":" in a else self.ip("addr", "add", a, "dev", name)
        self.ip("link", "set", name + "p", "up")
        self.ip("link", "set", name, "up")

    def delete(self):
        subprocess.run(["ip", "netns", "del", self.name], check=False)


@pytest.fixture
def netns():
    if not is_root():
        pytest.skip("needs root (network namespaces)")
    ns = Netns()
    yield ns
    ns.delete()


# pidfile: this machine runs no systemd, which panda_common would refuse
# for units; the guards are the same with either service manager.
SYSTEM = {"panda_deploy_mode": "system", "panda_bridge": "br-panda",
          "panda_uplink": "up0", "panda_bridge_address": "10.77.0.1/24",
          "panda_service_manager": "pidfile"}


def refused(res, *words):
    out = res.stdout + res.stderr
    assert res.returncode != 0, "accepted:\n" + tail(out)
    for w in words:
        assert w in out, "no %r in:\n%s" % (w, tail(out))


def accepted(res):
    assert res.returncode == 0, tail(res.stdout + res.stderr)
    assert recap(res.stdout)["localhost"]["failed"] == 0


# ---- The management interface. ------------------------------------------

def mgmt(netns, gather=True, **extra):
    return playbook("panda_network", "guard-mgmt.yml",
                    dict(SYSTEM, **extra), netns=netns.name, gather=gather)


def test_mgmt_guard_refuses_ipv6_default_route(netns):
    netns.dummy("up0", "fd00:77::1/64")
    netns.ip("-6", "route", "add", "default", "via", "fd00:77::2",
             "dev", "up0")
    refused(mgmt(netns), "it carries the default route (up0)")


def test_mgmt_guard_refuses_ipv6_management_address(netns):
    netns.dummy("up0", "fd00:77::1/64")
    netns.dummy("mgmt0", "10.88.0.1/24")
    netns.ip("route", "add", "default", "via", "10.88.0.2", "dev", "mgmt0")
    refused(mgmt(netns, ansible_host="fd00:77::1"),
            "the management address (fd00:77::1)")


def test_mgmt_guard_refuses_without_facts(netns):
    netns.dummy("up0", "10.77.0.1/24")
    refused(mgmt(netns, gather=False), "the host facts are missing")
    refused(mgmt(netns, panda_uplink="nosuch0"),
            "no interface named nosuch0")


def test_mgmt_guard_passes_a_dedicated_nic(netns):
    netns.dummy("up0", "10.77.0.1/24", "fd00:77::1/64")
    netns.dummy("mgmt0", "10.88.0.1/24", "fd00:88::1/64")
    netns.ip("route", "add", "default", "via", "10.88.0.2", "dev", "mgmt0")
    netns.ip("-6", "route", "add", "default", "via", "fd00:88::2",
             "dev", "mgmt0")
    accepted(mgmt(netns, ansible_host="10.88.0.1"))


# ---- A distribution Open vSwitch. ----------------------------------------

def distro(netns, **extra):
    return playbook("panda_ovs", "guard-distro.yml", dict(SYSTEM, **extra),
                    netns=netns.name)


def test_distro_guard_refuses_an_enslaved_uplink(netns):
    netns.dummy("up0")
    netns.ip("link", "add", "brx", "type", "bridge")
    netns.ip("link", "set", "up0", "master", "brx")
    refused(distro(netns, panda_ovs_distro_db="/nonexistent/db.sock"),
            "up0 belongs to brx")


def test_distro_guard_asks_the_other_database(netns, tmp_path):
    vsctl = os.path.join(BUILD, "ovs", "build", "utilities", "ovs-vsctl")
    if not os.access(vsctl, os.X_OK):
        pytest.skip("no OVS build at %s" % BUILD)
    netns.dummy("up0")
    with OvsSandbox(BUILD) as other:
        db = os.path.join(other.dir, "db.sock")
        other.add_bridge("brd")
        # No port named up0 there: the only answer that passes.
        accepted(distro(netns, panda_ovs_distro_db=db,
                        panda_ovs_distro_vsctl=vsctl))
        other.vsctl("add-port", "brd", "up0")
        refused(distro(netns, panda_ovs_distro_db=db,
                       panda_ovs_distro_vsctl=vsctl),
                "has up0 in bridge brd")
        # Cannot ask: no ovs-vsctl, or no server behind the path.
        refused(distro(netns, panda_ovs_distro_db=db,
                       panda_ovs_distro_vsctl="/nonexistent/ovs-vsctl"),
                "Cannot tell whether the distribution Open vSwitch")
    notsock = tmp_path / "db.sock"
    notsock.write_text("")
    refused(distro(netns, panda_ovs_distro_db=str(notsock),
                   panda_ovs_distro_vsctl=vsctl),
            "Cannot tell whether the distribution Open vSwitch")


# ---- A memcached that is not ours. ----------------------------------------

def start_memcached(netns, addr, port):
    path = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.access(path, os.X_OK):
        pytest.skip("memcached not installed")
    p = subprocess.Popen(["ip", "netns", "exec", netns.name, path, "-l",
                          addr, "-p", str(port), "-U", "0", "-u", "nobody"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while subprocess.run(["ip", "netns", "exec", netns.name, "ss", "-Hltn",
                          "sport = :%d" % port], capture_output=True,
                         text=True).stdout.strip() == "":
        assert p.poll() is None, p.stderr.read()
        assert time.monotonic() < deadline, "memcached did not listen"
        time.sleep(0.05)
    return p


def test_memcached_guard(netns, free_port):
    netns.dummy("up0", "10.77.0.1/24")
    port = free_port()
    extra = {"panda_memcached_port": port}
    accepted(playbook("panda_apps", "guard-memcached.yml",
                      dict(SYSTEM, **extra), netns=netns.name))
    for addr, conflict in (("127.0.0.1", False), ("0.0.0.0", True),
                           ("10.77.0.1", True)):
        mc = start_memcached(netns, addr, port)
        try:
            res = playbook("panda_apps", "guard-memcached.yml",
                           dict(SYSTEM, **extra), netns=netns.name)
        finally:
            mc.kill()
            mc.wait()
        if conflict:
            refused(res, "is taken by a process that is not "
                    "panda-memcached.service", "memcached")
        else:
            accepted(res)


# ---- The source copy. ----------------------------------------------------

def sync(src, dst):
    res = playbook("panda_build", "sync.yml",
                   dict(SYSTEM, panda_src_local=str(src),
                        panda_src_dir=str(dst)), gather=False)
    assert res.returncode == 0, tail(res.stdout + res.stderr)
    sync.changed_tasks = changed_tasks(res.stdout)
    return recap(res.stdout)["localhost"]["changed"]


def test_source_copy_deletes_only_its_own_files(tmp_path):
    if shutil.which("rsync") is None:
        pytest.skip("rsync not installed")
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    for f in ("a.txt", "sub/b.txt", "sub/c.txt"):
        (src / f).write_text(f)
    (src / "_build").mkdir()
    (src / "_build" / "x.o").write_text("excluded")
    dst.mkdir()
    (dst / "operator-notes.txt").write_text("not ours")
    sync(src, dst)
    assert (dst / "sub" / "c.txt").read_text() == "sub/c.txt"
    assert not (dst / "_build").exists()
    assert (dst / "operator-notes.txt").exists()
    owned = (dst / ".panda-ansible-files").read_text().split()
    assert {"a.txt", "sub/", "sub/b.txt", "sub/c.txt"} <= set(owned)
    assert "operator-notes.txt" not in owned

    # Gone from the checkout: deleted; someone's file in our directory and
    # next to it: kept.
    (src / "sub" / "c.txt").unlink()
    (dst / "sub" / "mine.txt").write_text("not ours either")
    assert sync(src, dst) > 0
    assert not (dst / "sub" / "c.txt").exists()
    assert (dst / "sub" / "mine.txt").exists()
    assert (dst / "operator-notes.txt").exists()

    # A whole directory gone: its files go, the directory stays while it
    # holds a file that is not ours.
    shutil.rmtree(src / "sub")
    sync(src, dst)
    assert not (dst / "sub" / "b.txt").exists()
    assert (dst / "sub" / "mine.txt").exists()
    assert sorted(os.listdir(dst)) == [".panda-ansible-files", "a.txt",
                                       "operator-notes.txt", "sub"]
    # Idempotent.
    assert sync(src, dst) == 0, sync.changed_tasks
