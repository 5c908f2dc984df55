"""panda-qos (tools/panda-qos, pandaovs.qos) against a running Open vSwitch:
both QoS types, the datapath's verdict, and nothing lost when it refuses.

One host on a sandboxed bridge (pandalab.lab); panda-qos runs as the
operator runs it (the tools/panda-qos launcher) in the switch's namespace.
Needs root and a build ($PANDA_BUILD_DIR, default <repo>/_build)."""

import os
import subprocess

import pytest

from pandaovs import paths
from pandalab.lab import Lab, wait_until

BUILD = paths.BuildTree()
TOOL = os.path.join(paths.TOP, "tools", "panda-qos")

pytestmark = pytest.mark.usefixtures("ovs_ready")


@pytest.fixture
def lab():
    with Lab(BUILD.root, [("h1", "10.0.0.1"), ("h2", "10.0.0.2")]) as lab:
        yield lab


def qos_tool(lab, *args):
    """(exit status, stdout, stderr) of tools/panda-qos ARGS."""
    cmd = lab.sb.ns.cmd(TOOL, *args, "--vsctl",
                        lab.sb.bin("utilities/ovs-vsctl"))
    r = subprocess.run(cmd, env=lab.sb.env, capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def records(lab):
    """How many QoS and Queue records the database holds."""
    return tuple(len(lab.sb.vsctl("--bare", "--columns=_uuid", "list",
                                  t).split())
                 for t in ("QoS", "Queue"))


def test_panda_sched_is_the_default_and_runs(lab):
    port = lab.h1.port
    rc, out, err = qos_tool(lab, "add", port, "--rate", "50M", "--levels",
                            "4", "--ecn-threshold", "30000", "--guard", "50",
                            "--set", "3.per-flow=false")
    assert rc == 0, err
    assert "panda-sched QoS, link rate 50000000 bit/s, 4 levels (active)" \
        in out
    st = lab.qos_status(port)
    assert st["state"] == "active"
    # The datapath's scheduler runs exactly this configuration.
    cfg = lab.sched_show(port)["config"]
    assert cfg == st["config"]
    for kv in ("levels=4", "max-rate=50000000", "ecn-threshold=30000",
               "guard=50", "3.per-flow=false"):
        assert kv in cfg.split(","), cfg
    assert len(lab.sched_show(port)["levels"]) == 4
    assert records(lab) == (1, 4)


def test_refused_configuration_keeps_the_previous_qos(lab):
    port = lab.h1.port
    assert qos_tool(lab, "add", port, "--rate", "50M")[0] == 0
    before = lab.sb.vsctl("get", "Port", port, "qos")
    cfg = lab.sched_show(port)["config"]
    for args, msg in (
            (["--ecn-threshold", "2000000"],
             "ecn-threshold: 2000000 not below limit-bytes (1000000)"),
            (["--guard", "600"], "guard: 600 out of range"),
            (["--set", "bogus=1"], "bogus: unknown key")):
        rc, out, err = qos_tool(lab, "add", port, "--rate", "50M", *args)
        assert rc == 1, out
        assert msg in err and "the port keeps its previous QoS" in err, err
        # The same record, still running the same scheduler; the refused
        # records are gone.
        assert lab.sb.vsctl("get", "Port", port, "qos") == before
        assert lab.qos_status(port)["state"] == "active"
        assert lab.sched_show(port)["config"] == cfg
        assert records(lab) == (1, 8)


def test_refused_without_previous_qos_leaves_none(lab):
    port = lab.h1.port
    rc, _, err = qos_tool(lab, "add", port, "--rate", "50M", "--set",
                          "limit-packets=0")
    assert rc == 1 and "limit-packets" in err and "keeps no QoS" in err
    assert lab.sb.vsctl("get", "Port", port, "qos").strip() == "[]"
    assert records(lab) == (0, 0)


def test_htb_as_first_qos_reports_active(lab):
    # A port's first QoS of a device type gets a status too (the bridge
    # publishes nothing for ports that never had QoS; the datapath QoS
    # types of ovs-patches/qos.series once left the first linux-htb out with them).
    port = lab.h1.port
    rc, out, err = qos_tool(lab, "add", port, "--type", "htb", "--rate",
                            "50M", "--levels", "2")
    assert rc == 0, err
    assert "linux-htb QoS, link rate 50000000 bit/s, 2 queues (active)" \
        in out, out
    assert lab.qos_status(port)["state"] == "active"
    assert {"1:1", "1:2"} <= set(lab.tc_classes(port))


def test_switch_between_types(lab):
    port = lab.h1.port
    assert qos_tool(lab, "add", port, "--rate", "50M")[0] == 0
    rc, out, err = qos_tool(lab, "add", port, "--type", "htb", "--rate",
                            "50M", "--levels", "2")
    assert rc == 0, err
    assert "linux-htb QoS" in out
    # The kernel classes come (OVS applies QoS asynchronously), the
    # datapath scheduler is gone, and so are the panda-sched records.
    wait_until(lambda: {"1:1", "1:2"} <= set(lab.tc_classes(port)), 30,
               "the HTB classes")
    with pytest.raises(RuntimeError, match="no panda-sched scheduler"):
        lab.sched_show(port)
    assert records(lab) == (1, 2)
    assert qos_tool(lab, "add", port, "--rate", "50M", "--levels", "3")[0] \
        == 0
    assert len(lab.sched_show(port)["levels"]) == 3
    assert not lab.tc_classes(port)
    assert records(lab) == (1, 3)
    rc, out, _ = qos_tool(lab, "del", port)
    assert rc == 0 and "removed QoS" in out
    assert records(lab) == (0, 0)


def test_foreign_qos_is_not_touched(lab):
    port = lab.h1.port
    lab.sb.vsctl("--", "set", "Port", port, "qos=@q", "--", "--id=@q",
                 "create", "QoS", "type=panda-sched",
                 "other_config:max-rate=10000000")
    for args in (["add", port, "--rate", "50M"], ["del", port]):
        rc, _, err = qos_tool(lab, *args)
        assert rc == 1 and "not created by panda-qos" in err, err
    qos = lab.sb.vsctl("get", "Port", port, "qos").strip()
    assert lab.sb.vsctl("get", "QoS", qos,
                        "other_config:max-rate").strip() == '"10000000"'
