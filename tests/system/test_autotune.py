"""The closed loop: TCP traffic with a known size mix through the
sandboxed, patched ovs-vswitchd; the controller with --auto-tune reads the
datapath's histograms over OpenFlow (NXST_PANDA_HISTOGRAM), runs the model
and pushes the policy; the pushed policy must equal what panda-model gives
for the histogram that ovs-appctl panda/histogram prints, under the same
policy id, with the connection counters kept.

Deterministic: the traffic runs while the controller (without auto-tune)
keeps the flows in place; then the controller restarts with --auto-tune,
so that its first window is the whole histogram, and no later window has
packets (no second push).  Needs root, os-ken, the patched OVS.
"""

import json
import os
import re
import subprocess

from pandaovs import paths, sizehist
from pandaovs.policy import Policy

# The controller test's sandbox (hosts a and b, a TCP sink) and helpers.
from test_controller import (BUILD, lab, policy, single_rule_config,  # noqa
                             text_of, wait_for, write_json)

MODEL = os.path.join(BUILD, "tools", "panda-model")
CDF = paths.cdf("web-search.cdf")


def model_of(text, pid, tmp, dscp, queues, levels):
    """panda-model on the histogram 'text' (appctl's) for policy 'pid':
    FLT = level 0, FHT = the other levels, sizes = lower edge + 40, written
    here from the text, not by the controller's code."""
    h = sizehist.parse(text)[pid]
    files = {}
    for name, lvls in (("flt", [0]), ("fht", range(1, 8))):
        sizes = {}
        for lv in lvls:
            for lo, c in h.payload.get(lv, {}).items():
                sizes[lo + 40] = sizes.get(lo + 40, 0) + c
        files[name] = os.path.join(tmp, "test-%s.txt" % name)
        with open(files[name], "w") as f:
            f.writelines("%d %d\n" % (s, sizes[s]) for s in sorted(sizes))
    out = os.path.join(tmp, "test-policy.json")
    subprocess.run([MODEL, "--id", str(pid), "--flt", files["flt"],
                    "--fht", files["fht"], "--cdf", CDF, "--load", "0.5",
                    "--levels", str(levels), "--dscp", dscp,
                    "--queues", queues, "-o", out],
                   check=True, capture_output=True, text=True)
    with open(out) as f:
        return Policy.from_json(json.load(f), out)[0]


def test_auto_tune_pushes_the_model_of_the_histogram(lab, tmp_path):
    p1 = policy(pid=7, threshold=1000)
    write_json(lab.policy_file, p1)
    single_rule_config(lab)
    lab.start_controller()
    lab.wait_synced()
    assert [f["panda"] for f in lab.flows()] == [text_of(p1)]

    # Known mix: a request/response-like connection of small messages
    # (stays at level 0) and a bulk one that sinks past 50000 bytes.
    stop = lab.capture()
    small, bulk = lab.client(), lab.client()
    lab.send(small, 200, 100)
    lab.send(bulk, 200, 1448)
    lab.send(small, 100, 60)
    # Every byte has crossed the datapath (and was counted on the way).
    stop(200 * 100 + 200 * 1448 + 100 * 60)
    text = lab.sb.appctl("panda/histogram", "br0", "7")
    h = sizehist.parse(text)[7]
    # Segments may carry several messages (the sender's queue coalesces
    # them), so the counts are not fixed; the shape is: small payloads at
    # level 0, the bulk flow's full-sized ones past 50000 bytes below it.
    small_top = sum(c for lo, c in h.payload.get(0, {}).items() if lo < 1000)
    assert small_top > 0 and h.packets(range(1, 8)) > 0, text
    # The same text over OpenFlow as through ovs-appctl.
    of_text = lab.sb.ofctl("dump-panda-histogram", "br0", "7")
    assert of_text == "\n".join(text.splitlines()[1:]) + "\n"
    conns_before, _ = lab.connections()
    assert len(conns_before) == 2

    want = model_of(text, 7, str(tmp_path), "46/26/10", "0/1/2", 3)
    assert want.threshold != p1["threshold"]

    # The pipeline alone: no trimming, a step and bounds wide enough for
    # any proposal (tests/python/test_autotune_attacks.py tests those).
    lab.kill_controller()
    lab.start_controller(
        "--auto-tune", "--auto-tune-cdf", CDF, "--auto-tune-load", "0.5",
        "--auto-tune-interval", "0.3", "--auto-tune-min-interval", "0",
        "--auto-tune-confirm", "1", "--auto-tune-min-packets", "1",
        "--auto-tune-margin", "0.1", "--auto-tune-model", MODEL,
        "--auto-tune-trim", "0", "--auto-tune-max-step", "100",
        "--auto-tune-bound-factor", "1000")

    def pushed():
        fl = lab.flows()
        return fl if fl and fl[0]["panda"] != text_of(p1) else None
    flows = wait_for(pushed, 60, "auto-tune to push a policy")
    assert [f["panda"] for f in flows] == [want.text()]
    assert want.id == 7
    # Same id: the connections kept their counters.
    conns_after, _ = lab.connections()
    assert conns_after == conns_before

    # The decision is logged with its inputs, and nothing more is pushed
    # while no new packets come (the windows wait).
    def waited():
        st = lab.status()
        d = st and st["auto_tune"]["decisions"]
        return d if d and d[-1]["action"] == "wait" else None
    decisions = wait_for(waited, 30, "a window without packets")
    pushes = [d for d in decisions if d["action"] == "push"]
    assert len(pushes) == 1
    d = pushes[0]
    assert d["policy_id"] == 7 and d["proposed"] == want.text()
    assert d["limited"] == [] and d["model_proposed"] == want.text()
    assert d["sources"] == {"0x%016x" % int(
        lab.status()["switches"][0]["dpid"], 16): {
        "flt_packets": h.packets((0,)), "fht_packets": h.packets(range(1, 8)),
        "flows": h.flows()}}
    assert d["policy"] == text_of(p1)
    assert d["flt_packets"] == h.packets((0,))
    assert d["fht_packets"] == h.packets(range(1, 8))
    assert "--flt" in d["model_command"]
    assert re.search(r"auto-tune policy 7: push", lab.log())
    st = lab.status()
    assert st["auto_tune"]["tuned"] == {"7": want.text()}


def test_auto_tune_options_checked(tmp_path):
    """Bad --auto-tune options are refused before the controller starts."""
    cfg = tmp_path / "c.json"
    write_json(str(tmp_path / "policy.json"), policy())
    write_json(str(cfg), {"switches": "*",
                          "rules": [{"name": "r", "priority": 0,
                                     "policy": "policy.json"}]})
    launcher = os.path.join(paths.TOP, "openflow", "controller",
                            "panda_controller.py")
    for extra, msg in [
            ([], "--auto-tune needs --auto-tune-load RHO"),
            (["--auto-tune-load", "0.5", "--auto-tune-min-flows", "0"],
             "--auto-tune-cdf: none, and min-flows 0"),
            (["--auto-tune-cdf", CDF, "--auto-tune-load", "1.5"],
             "--auto-tune-load: 1.5 must be in (0, 1)"),
            (["--auto-tune-cdf", CDF, "--auto-tune-load", "0.5",
              "--auto-tune-margin", "-1"], "--auto-tune-margin: -1"),
            (["--auto-tune-cdf", "/nonexistent", "--auto-tune-load", "0.5"],
             "--auto-tune-cdf: /nonexistent: no such file"),
            (["--auto-tune-cdf", CDF, "--auto-tune-load", "0.5",
              "--auto-tune-flt-levels", "x"],
             "--auto-tune-flt-levels x: expected levels"),
    ]:
        r = subprocess.run([paths.PY, launcher, "run", "--config", str(cfg),
                            "--auto-tune", "--auto-tune-model", MODEL]
                           + extra, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2, (extra, r.stderr)  # a usage error
        assert msg in r.stderr, (extra, r.stderr)
