"""pandalab.cc without root or BPF: who unregisters a shared BPF
registration (the sessions' lock and marker, against a fake panda-cc), the
figures drawn from the BPF DCTCP's counters, and the names results carry.
tests/system/test_bpf_dctcp.py runs the real thing."""

import pytest

from pandalab import cc


class FakeLoader:
    """panda-cc as _Users sees it: registered or not, and what it did."""

    def __init__(self, loaded=False):
        self.registered = loaded
        self.calls = []

    def loaded(self):
        return self.registered

    def load(self):
        self.calls.append("load")
        was = self.registered
        self.registered = True
        return not was

    def unload(self):
        self.calls.append("unload")
        self.registered = False


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(cc, "LOCK_DIR", str(tmp_path / "run"))
    return tmp_path / "run"


def test_last_session_out_unregisters(lock_dir):
    loader = FakeLoader()
    a, b = cc._Users(cc.BPF_DCTCP), cc._Users(cc.BPF_DCTCP)
    assert a.enter(loader) is True          # a registers it...
    assert b.enter(loader) is False         # ...b finds it registered
    assert loader.calls == ["load"]
    assert a.leave(loader) is False         # b still runs: it stays
    assert loader.registered
    assert b.leave(loader) is True          # the last one out: gone
    assert loader.calls == ["load", "unload"] and not loader.registered
    assert not (lock_dir / (cc.BPF_DCTCP + ".session-loaded")).exists()
    assert b.leave(loader) is False         # leaving twice is harmless


def test_operators_registration_is_left_alone(lock_dir):
    loader = FakeLoader(loaded=True)        # panda-cc load, Ansible
    users = cc._Users(cc.BPF_DCTCP)
    assert users.enter(loader) is False
    assert users.leave(loader) is False
    assert loader.registered and loader.calls == []


def test_a_killed_sessions_registration_goes_with_the_next(lock_dir):
    loader = FakeLoader()
    killed = cc._Users(cc.BPF_DCTCP)
    killed.enter(loader)
    # SIGKILL: its lock goes with its file descriptor, the marker stays.
    import os
    os.close(killed.fd)
    nxt = cc._Users(cc.BPF_DCTCP)
    assert nxt.enter(loader) is False
    assert nxt.leave(loader) is True and not loader.registered


def test_reaction_of_two_snapshots():
    one = 1 << 20
    before = {"reductions": 10, "reduction_factor_sum": 9 * one,
              "reduction_alpha_sum": 2 * one, "reduction_cwnd_sum": 300,
              "windows": 40}
    after = {"reductions": 30, "reduction_factor_sum": 9 * one + 18 * one,
             "reduction_alpha_sum": 2 * one + 4 * one,
             "reduction_cwnd_sum": 300 + 600, "windows": 100,
             "ce_changes": 7}
    r = cc.reaction(before, after)
    assert r["reductions"] == 20
    assert r["mean_reduction_factor"] == pytest.approx(0.9)
    assert r["mean_alpha"] == pytest.approx(0.2)
    assert r["mean_cwnd_before"] == pytest.approx(30)
    assert r["counters"]["windows"] == 60
    assert r["counters"]["ce_changes"] == 7       # absent before: 0
    none = cc.reaction(after, after)
    assert none["reductions"] == 0 and none["mean_alpha"] is None


def test_labels_say_which_implementation_ran():
    bpf = cc.Implementation("dctcp", cc.BPF_DCTCP, "bpf",
                            bpf={"object": "x.bpf.o"})
    assert bpf.label == "dctcp (bpf)"
    assert bpf.record()["algorithm"] == "panda_dctcp"
    assert bpf.record()["bpf"] == {"object": "x.bpf.o"}
    assert cc.Implementation("dctcp", "dctcp", "kernel").label \
        == "dctcp (kernel)"
    # The BPF one is never registered under the kernel module's name.
    assert cc.BPF_IMPLEMENTATIONS["dctcp"] != "dctcp"


def test_session_without_bpf_says_why(monkeypatch):
    monkeypatch.setattr(cc, "kernel_unavailable",
                        lambda name: "kernel has no %s" % name)
    with pytest.raises(cc.CcUnavailable, match="kernel has no vegas$"):
        with cc.session("vegas"):
            pass

    class NoBuild:
        BPF_CC_LOADER = "bpf/panda-cc"
        BPF_DCTCP = "bpf/panda-dctcp.bpf.o"

        def bpf_missing(self):
            return "the BPF programs are not built: no bpftool"

        def path(self, rel):
            return "/nonexistent/" + rel
    with pytest.raises(cc.CcUnavailable, match="kernel has no dctcp; BPF "
                       "panda_dctcp: the BPF programs are not built: no "
                       "bpftool"):
        with cc.session("dctcp", build=NoBuild()):
            pass
