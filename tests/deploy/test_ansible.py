"""Tests of the Ansible deployment in ansible/.

* ansible-lint over ansible/ (no root needed);
* syntax check of every playbook against both inventories, and the
  example real-host inventory's groups;
* the localhost inventory for real (root): site.yml builds (incrementally)
  the tree in $PANDA_BUILD_DIR (default <repo>/_build), starts
  the namespace OVS sandbox and configures bridge, QoS and panda flows; a
  second site.yml run must change nothing; the configuration is then
  checked on the switch and with traffic; experiment.yml runs a quick
  one-scheme testbed experiment and fetches its results; teardown.yml
  removes the sandbox.

Each sandbox uses its own namespaces and state directory (random id), so
the test never meets a sandbox started by hand.
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from pandaovs import paths

TOP = paths.TOP
ANSIBLE = os.path.join(TOP, "ansible")
BUILD = paths.build_dir()
PLAYBOOKS = ["site.yml", "experiment.yml", "teardown.yml", "bpf-hosts.yml"]
LOCAL_INV = "inventories/localhost/hosts.yml"
HOSTS_INV = "inventories/hosts.example.yml"


def ansible_env(**extra):
    env = dict(os.environ)
    env.update(ANSIBLE_CONFIG=os.path.join(ANSIBLE, "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_RETRY_FILES_ENABLED="0", PY_COLORS="0")
    # Debian's ansible runs on /usr/bin/python3, never pyenv's python3.
    env["PATH"] = "/usr/bin:/usr/sbin:/bin:/sbin:" + env.get("PATH", "")
    env.update(extra)
    return env


def run(cmd, timeout=600, env=None, cwd=ANSIBLE):
    return subprocess.run(cmd, cwd=cwd, env=env or ansible_env(),
                          capture_output=True, text=True, timeout=timeout)


def need(tool):
    if shutil.which(tool, path="/usr/bin:/usr/sbin:/bin:/sbin") is None:
        pytest.skip("%s is not installed (run ./install-deps.sh)" % tool)


RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)"
                   r"\s+failed=(\d+)\s+skipped=(\d+)\s+rescued=(\d+)"
                   r"\s+ignored=(\d+)", re.M)


def recap(out):
    """{host: {'ok': n, 'changed': n, ...}} from ansible-playbook output."""
    keys = ("ok", "changed", "unreachable", "failed", "skipped", "rescued",
            "ignored")
    res = {}
    for m in RECAP.finditer(out):
        res[m.group(1)] = dict(zip(keys, map(int, m.groups()[1:])))
    return res


def changed_tasks(out):
    """Names of the tasks that reported 'changed' (for failure messages)."""
    names, task = [], None
    for line in out.splitlines():
        m = re.match(r"TASK \[(.*)\]", line)
        if m:
            task = m.group(1)
        elif line.startswith("changed:") and task and task not in names:
            names.append(task)
    return names


def tail(text, n=60):
    return "\n".join(text.splitlines()[-n:])


# ---------------------------------------------------------------------------
# No root needed.
# ---------------------------------------------------------------------------

def test_ansible_lint_clean():
    need("ansible-lint")
    res = run(["ansible-lint", "--offline", "--nocolor"], timeout=300)
    assert res.returncode == 0, (
        "ansible-lint reports problems:\n%s\n%s" % (tail(res.stdout),
                                                    tail(res.stderr)))


@pytest.mark.parametrize("inventory", [LOCAL_INV, HOSTS_INV])
def test_playbooks_syntax(inventory):
    need("ansible-playbook")
    res = run(["ansible-playbook", "-i", inventory, "--syntax-check"]
              + PLAYBOOKS, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_example_inventory_groups():
    need("ansible-inventory")
    res = run(["ansible-inventory", "-i", HOSTS_INV, "--list"], timeout=60)
    assert res.returncode == 0, res.stderr
    inv = json.loads(res.stdout)
    assert inv["panda_servers"]["hosts"] == ["pm2"]
    assert inv["panda_clients"]["hosts"] == ["pm1"]
    assert set(inv["hypervisors"]["children"]) == {"panda_servers",
                                                   "panda_clients"}
    hv = inv["_meta"]["hostvars"]
    for h in ("pm1", "pm2"):
        assert hv[h]["panda_deploy_mode"] == "system"
        assert hv[h]["panda_uplink"]
        assert re.match(r"^\d+\.\d+\.\d+\.\d+/\d+$",
                        hv[h]["panda_bridge_address"])
    assert (hv["pm1"]["panda_bridge_address"]
            != hv["pm2"]["panda_bridge_address"])


def test_bad_mode_is_refused():
    """A wrong panda_deploy_mode stops the play with a message naming it
    (check mode: nothing is touched)."""
    need("ansible-playbook")
    res = run(["ansible-playbook", "-i", LOCAL_INV, "site.yml", "--check",
               "--tags", "always", "-e", "panda_deploy_mode=bogus"],
              timeout=120)
    assert res.returncode != 0
    assert "panda_deploy_mode must be 'system' or 'sandbox'" in res.stdout
    assert "bogus" in res.stdout


# ---------------------------------------------------------------------------
# The localhost inventory, for real.
# ---------------------------------------------------------------------------

class Sandbox:
    """Runs the playbooks against the localhost inventory with a private
    set of names (namespaces, state and result directories)."""

    def __init__(self):
        self.id = secrets.token_hex(3)
        self.tmp = tempfile.mkdtemp(prefix="panda-ans-test-")
        self.dir = os.path.join(self.tmp, "sandbox")
        self.results = os.path.join(self.tmp, "results")
        self.hv = "pat%s-hv" % self.id
        self.peer = "pat%s-pr" % self.id
        self.vars = {
            "panda_build_dir": os.path.abspath(BUILD),
            "panda_sandbox_dir": self.dir,
            "panda_sandbox_netns": self.hv,
            "panda_sandbox_peer_netns": self.peer,
            "panda_results_dir": self.results,
            "panda_experiment_remote_dir": os.path.join(self.tmp, "remote"),
        }
        self.varfile = os.path.join(self.tmp, "vars.json")
        with open(self.varfile, "w") as f:
            json.dump(self.vars, f)
        self.ovs = os.path.join(os.path.abspath(BUILD), "ovs", "build")
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir)

    def playbook(self, name, *extra, timeout=900):
        start = time.monotonic()
        res = run(["ansible-playbook", "-i", LOCAL_INV, name,
                   "-e", "@" + self.varfile] + list(extra), timeout=timeout)
        res.seconds = time.monotonic() - start
        print("%s: %.1f s, recap %s" % (name, res.seconds,
                                        recap(res.stdout)))
        return res

    def vsctl(self, *args):
        return subprocess.run(
            [os.path.join(self.ovs, "utilities", "ovs-vsctl"),
             "--db=unix:%s/db.sock" % self.dir, "--timeout=20"]
            + list(args), capture_output=True, text=True, check=True,
            env=self.env).stdout.strip()

    def ofctl(self, *args):
        return subprocess.run(
            [os.path.join(self.ovs, "utilities", "ovs-ofctl")] + list(args),
            capture_output=True, text=True, check=True,
            env=self.env).stdout

    def ns(self, name, *cmd, **kw):
        return subprocess.run(["ip", "netns", "exec", name] + list(cmd),
                              capture_output=True, text=True, **kw)

    def cleanup(self):
        res = self.playbook("teardown.yml", timeout=300)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return res


def sandbox_session():
    """Skips without root, Ansible or a build; else runs site.yml once in
    a new Sandbox (its result in .first), yields it and tears it down (the
    body of a module's sandbox fixture)."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, OVS sandbox)")
    need("ansible-playbook")
    vswitchd = os.path.join(BUILD, "ovs", "build", "vswitchd",
                            "ovs-vswitchd")
    if not os.access(vswitchd, os.X_OK):
        pytest.skip("no build at %s (build it: BUILD_DIR=%s ./build.sh, or "
                    "set PANDA_BUILD_DIR)" % (BUILD, BUILD))
    sb = Sandbox()
    sb.first = sb.playbook("site.yml", timeout=3600)
    yield sb
    res = sb.cleanup()
    assert res.returncode == 0, tail(res.stdout)
    for ns in (sb.hv, sb.peer):
        assert not os.path.exists("/run/netns/" + ns), \
            "teardown.yml left namespace %s" % ns


@pytest.fixture(scope="module")
def sandbox():
    yield from sandbox_session()


def send_from_host(sb, nbytes, port=5099):
    """nbytes of TCP from the host (the bridge's port, 10.99.0.1) to a sink
    in the peer namespace; returns the bytes the sink received."""
    server = subprocess.Popen(
        ["ip", "netns", "exec", sb.peer, sys.executable, "-c",
         "import socket\n"
         "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
         "socket.SO_REUSEADDR, 1)\n"
         "s.bind(('10.99.0.2', %d)); s.listen(1)\n"
         "print('listening', flush=True); c, _ = s.accept()\n"
         "n = 0\n"
         "while True:\n"
         "    b = c.recv(65536)\n"
         "    if not b: break\n"
         "    n += len(b)\n"
         "print(n)\n" % port],
        stdout=subprocess.PIPE, text=True)
    try:
        # The sink listens (it says so), then the flow goes.
        assert server.stdout.readline().strip() == "listening"
        client = sb.ns(sb.hv, sys.executable, "-c",
                       "import socket\n"
                       "s = socket.create_connection(('10.99.0.2', %d),"
                       " timeout=60)\n"
                       "s.sendall(b'x' * %d); s.close()\n" % (port, nbytes),
                       timeout=300)
        assert client.returncode == 0, (
            "TCP from the host through the bridge failed:\n" + client.stderr)
        out, _ = server.communicate(timeout=300)
        return int(out.strip())
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_localhost_site_runs(sandbox):
    res = sandbox.first
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    r = recap(res.stdout)
    assert r["localhost"]["failed"] == 0


def test_localhost_site_is_idempotent(sandbox):
    assert sandbox.first.returncode == 0, "first run failed"
    res = sandbox.playbook("site.yml", timeout=1800)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    r = recap(res.stdout)["localhost"]
    assert r["changed"] == 0, (
        "second site.yml run changed: %s" % changed_tasks(res.stdout))
    assert r["failed"] == 0


def test_localhost_switch_configuration(sandbox):
    """The bridge, QoS and flows that site.yml made are in the switch."""
    assert sandbox.first.returncode == 0, "first run failed"
    sb = sandbox
    assert sb.vsctl("get", "Bridge", "br-panda", "datapath_type") == "netdev"
    assert sb.vsctl("get", "Bridge", "br-panda", "fail_mode") == "secure"
    assert sb.vsctl("get", "Interface", "pans-up0", "ofport") == "1"
    assert sb.vsctl("port-to-br", "pans-up0") == "br-panda"
    qos = sb.vsctl("get", "Port", "pans-up0", "qos")
    assert qos != "[]"
    assert sb.vsctl("get", "QoS", qos, "type") == "linux-htb"
    assert sb.vsctl("get", "QoS", qos,
                    "other_config:max-rate") == '"100000000"'
    queues = sb.vsctl("get", "QoS", qos, "queues")
    assert len(re.findall(r"\d+=", queues)) == 8, queues
    flows = sb.ofctl("dump-flows", "br-panda")
    assert re.search(r"priority=0 actions=NORMAL", flows), flows
    assert re.search(r"priority=100,tcp,in_port=LOCAL "
                     r"actions=panda\(id=1[,)].*NORMAL", flows), flows
    # The host address is on the bridge's local port in the switch's
    # namespace.
    addr = sb.ns(sb.hv, "ip", "-4", "-o", "addr", "show", "dev", "br-panda",
                 check=True).stdout
    assert "10.99.0.1/24" in addr


def test_localhost_traffic_takes_the_panda_flow(sandbox):
    """TCP from the host (bridge port) to the peer crosses OVS, hits the
    panda flow and leaves through the uplink's HTB class of its level."""
    assert sandbox.first.returncode == 0, "first run failed"
    sb = sandbox
    ping = sb.ns(sb.peer, "ping", "-c", "2", "-W", "2", "10.99.0.1")
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert send_from_host(sb, 2000000) == 2000000
    # Flow statistics reach OpenFlow when the revalidators next run (the
    # deadline is only a safety net).
    deadline = time.monotonic() + 120
    while True:
        flows = sb.ofctl("dump-flows", "br-panda")
        m = re.search(r"n_packets=(\d+).*priority=100,tcp,in_port=LOCAL",
                      flows)
        if (m and int(m.group(1)) > 100) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert m and int(m.group(1)) > 100, flows
    classes = sb.ns(sb.hv, "tc", "-s", "class", "show", "dev", "pans-up0",
                    check=True).stdout
    sent = {}
    for cls, nbytes in re.findall(r"class htb (1:[0-9a-f]+) .*?\n\s*Sent "
                                  r"(\d+) bytes", classes, re.S):
        sent[cls] = int(nbytes)
    # The default policy's thresholds are 100 kB / 1 MB / 10 MB: the first
    # 100 kB of the 2 MB flow leave at level 0 (queue 0, class 1:1), the
    # next 900 kB at level 1 (class 1:2), the rest at level 2 (class 1:3).
    assert sent.get("1:2", 0) > 700000, classes
    assert sent.get("1:3", 0) > 700000, classes
    assert sent.get("1:4", 0) < 100000, classes


def test_localhost_experiment_fetches_results(sandbox):
    """experiment.yml: one quick testbed run of one scheme, fetched."""
    assert sandbox.first.returncode == 0, "first run failed"
    sb = sandbox
    res = sb.playbook("experiment.yml", "-e", "panda_experiment_run_id=t1",
                      timeout=1800)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    base = os.path.join(sb.results, "localhost", "t1")
    found = []
    for root, _, files in os.walk(base):
        found += [os.path.join(root, f) for f in files]
    names = {os.path.basename(f) for f in found}
    assert "result.json" in names and "result.csv" in names, found
    assert any(n.endswith(".png") for n in names), found
    assert not any(n.endswith(".pcap") for n in names), \
        "packet captures should stay on the host"
    with open(os.path.join(base, "result.json")) as f:
        result = json.load(f)
    assert result["metadata"]["run_id"] == "t1"
    assert result["metadata"]["schemes"] == ["panda"]
    panda = [t for t in result["trials"] if t["scheme"] == "panda"]
    assert panda, result["trials"]
    for t in panda:
        assert t["status"] == "ok", t
        assert t["memcached"]["requests_ok"] > 0, t


def flows_recap(sb, *extra):
    res = sb.playbook("site.yml", "--tags", "flows", *extra, timeout=600)
    assert res.returncode == 0, tail(res.stdout + res.stderr, 80)
    return recap(res.stdout)["localhost"]["changed"], res


def test_localhost_policy_file_and_scheme_switch(sandbox):
    """The flows follow panda_scheme and a panda-model policy file (the one
    the experiment derived), changing the switch only when needed."""
    assert sandbox.first.returncode == 0, "first run failed"
    sb = sandbox
    policy = None
    for root, _, files in os.walk(os.path.join(sb.results, "localhost")):
        if "panda-policy.json" in files:
            policy = os.path.join(root, "panda-policy.json")
    if policy is None:
        pytest.skip("needs the panda-policy.json that the experiment test "
                    "fetches (run the whole module)")
    with open(policy) as f:
        action = json.load(f)["action"]
    files = json.dumps({"panda_policy_files": {"panda": policy}})

    changed, res = flows_recap(sb, "-e", files)
    assert changed > 0, "a new policy did not change the flows"
    flows = sb.ofctl("dump-flows", "br-panda")
    got = re.search(r"actions=panda\((.*)\),NORMAL", flows).group(1)
    assert got == action, (got, action)
    changed, res = flows_recap(sb, "-e", files)
    assert changed == 0, changed_tasks(res.stdout)

    # fifo: no classification, only the NORMAL flow.
    changed, res = flows_recap(sb, "-e", "panda_scheme=fifo")
    assert changed > 0
    flows = sb.ofctl("dump-flows", "br-panda")
    assert "panda(" not in flows and "actions=NORMAL" in flows, flows
    changed, res = flows_recap(sb, "-e", "panda_scheme=fifo")
    assert changed == 0, changed_tasks(res.stdout)

    # A bad scheme is refused with a message naming it.
    res = sb.playbook("site.yml", "--tags", "flows", "-e",
                      "panda_scheme=wfq", timeout=600)
    assert res.returncode != 0
    assert "panda_scheme must be fifo, pias or panda" in res.stdout
    assert "wfq" in res.stdout

    # Back to the inventory's configuration.
    changed, res = flows_recap(sb)
    assert changed > 0
    assert "actions=panda(id=1," in sb.ofctl("dump-flows", "br-panda")
