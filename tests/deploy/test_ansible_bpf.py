"""The Ansible role panda_bpf (ansible/bpf-hosts.yml) for real, on this
machine (root): against a veth pair in a namespace of its own, with the
tools from the build tree under a private prefix, a private BPF filesystem
and no systemd (panda_service_manager: pidfile):

  - the first run makes the htb classes, writes the policy and attaches
    the classifier; a second run changes nothing;
  - a new policy, a panda-model JSON file this time (copied to the host
    and read there by panda-bpf with lib/panda's reader), replaces the
    running one (generation 2, same program: counters kept), and only that
    changes;
  - panda_scheme fifo detaches it.

Skips, saying why, without root, Ansible or panda-bpf, or where the kernel
cannot run the classifier.  About 40 s (four playbook runs).
"""
import json
import os
import secrets
import shutil
import subprocess
import tempfile

import pytest

from pandaovs import bpfcls, paths

from test_ansible import ANSIBLE, need, recap, run, tail

POLICY1 = "id=1,threshold=1000,thresholds=20000/200000/2000000"
POLICY2 = {"version": 1, "id": 1, "kind": "panda", "threshold": 1000,
           "thresholds": [10000, 100000, 1000000]}


@pytest.fixture(scope="module")
def host():
    if os.geteuid() != 0:
        pytest.skip("needs root (BPF, network namespaces)")
    need("ansible-playbook")
    build = paths.BuildTree()
    why = bpfcls.missing(build)
    if why:
        pytest.skip(why)
    why = bpfcls.Classifier(build).probe()
    if why:
        pytest.skip("panda-bpf probe: %s" % why)
    h = {"id": secrets.token_hex(3)}
    h["tmp"] = tempfile.mkdtemp(prefix="panda-ans-bpf-")
    h["ns"] = "pab%s" % h["id"]
    h["dev"] = "pab%s0" % h["id"]
    prefix = os.path.join(h["tmp"], "prefix")
    os.makedirs(os.path.join(prefix, "bin"))
    os.makedirs(os.path.join(prefix, "lib", "panda-ovs"))
    os.symlink(build.bin(bpfcls.LOADER),
               os.path.join(prefix, "bin", "panda-bpf"))
    os.symlink(os.path.join(paths.TOP, "python"),
               os.path.join(prefix, "lib", "panda-ovs", "python"))
    bpffs = os.path.join(h["tmp"], "bpffs")
    os.mkdir(bpffs)
    subprocess.run(["mount", "-t", "bpf", "bpf", bpffs], check=True)
    subprocess.run(["ip", "netns", "add", h["ns"]], check=True)
    subprocess.run(["ip", "-n", h["ns"], "link", "add", h["dev"], "type",
                    "veth", "peer", "name", h["dev"] + "p"], check=True)
    for d in (h["dev"], h["dev"] + "p"):
        subprocess.run(["ip", "-n", h["ns"], "link", "set", d, "up"],
                       check=True)
    h["pin"] = os.path.join(bpffs, "panda")
    h["inv"] = os.path.join(h["tmp"], "hosts.yml")
    with open(h["inv"], "w") as f:
        f.write("all:\n  children:\n    bpf_hosts:\n      hosts:\n"
                "        localhost:\n          ansible_connection: local\n"
                "          ansible_python_interpreter: /usr/bin/python3\n")
    h["vars"] = {
        "panda_prefix": prefix,
        "panda_ovs_sysconfdir": os.path.join(h["tmp"], "etc"),
        "panda_service_manager": "pidfile",
        "panda_bpf_interfaces": [h["dev"]],
        "panda_bpf_netns": h["ns"],
        "panda_bpf_pin_dir": h["pin"],
        "panda_bpf_capacity": 4096,
        "panda_bpf_htb_levels": 4,
        "panda_bpf_htb_rate_mbit": 100,
        "panda_scheme": "panda",
        "panda_policy_actions": {"panda": POLICY1},
    }
    h["cls"] = bpfcls.Classifier(build, pin_dir=h["pin"])
    yield h
    h["cls"].run("detach", "--all", check=False)
    subprocess.run(["ip", "netns", "del", h["ns"]], check=False)
    subprocess.run(["umount", bpffs], check=False)
    shutil.rmtree(h["tmp"], ignore_errors=True)


def playbook(h, **overrides):
    varfile = os.path.join(h["tmp"], "vars.json")
    with open(varfile, "w") as f:
        json.dump(dict(h["vars"], **overrides), f)
    res = run(["ansible-playbook", "-i", h["inv"],
               os.path.join(ANSIBLE, "bpf-hosts.yml"), "-e", "@" + varfile],
              timeout=300)
    assert res.returncode == 0, tail(res.stdout) + tail(res.stderr)
    return recap(res.stdout)["localhost"]


def test_role_attaches_replaces_and_detaches(host):
    first = playbook(host)
    assert first["changed"] > 0
    show = host["cls"].show()
    assert show["policy"]["generation"] == 1
    assert show["policy"]["text"].startswith("id=1,threshold=1000,")
    assert [i["attached"] for i in show["interfaces"]] == [True]
    classes = subprocess.run(["ip", "netns", "exec", host["ns"], "tc",
                              "class", "show", "dev", host["dev"]],
                             capture_output=True, text=True).stdout
    assert all("class htb 1:%d " % (q + 1) in classes for q in range(4))
    prog = show["program_id"]

    again = playbook(host)
    assert again["changed"] == 0, again

    path = os.path.join(host["tmp"], "panda-policy.json")
    with open(path, "w") as f:
        json.dump(POLICY2, f)
    new = playbook(host, panda_policy_files={"panda": path})
    assert new["changed"] == 2, new     # the file, and set-policy
    show = host["cls"].show()
    assert show["program_id"] == prog
    assert show["policy"]["generation"] == 2
    assert "thresholds=10000/100000/1000000" in show["policy"]["text"]

    playbook(host, panda_scheme="fifo")
    assert not host["cls"].loaded()
