"""End-to-end tests of panda-model.

Runs the built binary on histogram files and on pcap captures written here
with the struct module (Ethernet/VLAN/IPv4/IPv6/TCP, pure ACKs, UDP), and
checks the policy JSON, the action string and the error messages.

The binaries are looked up in $PANDA_BUILD_DIR (default
<repo>/_build): tools/panda-model and bench/panda-model-bench.
"""

import json
import math
import os
import struct
import subprocess

import pytest

from pandaovs import paths
from pandaovs.policy import Policy

BUILD = paths.BuildTree()
MODEL = BUILD.path("tools/panda-model")
BENCH = BUILD.path("bench/panda-model-bench")
WEB_SEARCH = paths.cdf("web-search.cdf")

# DCTCP web search in bytes (used when the load generator's copy is absent).
WEB_CDF = """\
8760 0
8760 0.15
18980 0.2
27740 0.3
48180 0.4
77380 0.53
194180 0.6
973820 0.7
1946180 0.8
4866180 0.9
9733820 0.97
29200000 1
"""

pytestmark = pytest.mark.skipif(
    not os.access(MODEL, os.X_OK),
    reason="%s not built (set PANDA_BUILD_DIR or run make)" % MODEL)


def run(*args, check=True):
    res = subprocess.run([MODEL] + [str(a) for a in args],
                         capture_output=True, text=True, timeout=120)
    if check and res.returncode != 0:
        raise AssertionError("panda-model %s failed (%d): %s" % (
            " ".join(map(str, args)), res.returncode, res.stderr))
    return res


def model_json(*args):
    return json.loads(run(*args, "--json").stdout)


def write(path, text):
    path.write_text(text)
    return path


@pytest.fixture
def cdf(tmp_path):
    return write(tmp_path / "web.cdf", WEB_CDF)


def hist(tmp_path, name, rows):
    return write(tmp_path / name,
                 "# size count [flow]\n"
                 + "".join(" ".join(str(x) for x in r) + "\n" for r in rows))


def parse_action(action):
    """Splits the panda(...) arguments into a dict of strings."""
    return dict(kv.split("=", 1) for kv in action.split(","))


def check_policy(doc, K):
    assert doc["version"] == 1
    assert isinstance(doc["id"], int)
    assert doc["kind"] in ("panda", "pias")
    th = doc["thresholds"]
    assert len(th) == K - 1
    # Positive, but for a first threshold of 0: level 0 of a credit
    # level (--flt-bound level) is the counters at or below 0.
    assert all(isinstance(a, int) and a >= (i > 0 or doc["kind"] == "pias")
               for i, a in enumerate(th))
    assert all(b > a for a, b in zip(th, th[1:])), th
    assert len(doc["dscp"]) == K and len(doc["queues"]) == K
    # The action string carries the same policy.
    act = parse_action(doc["action"])
    assert int(act["id"]) == doc["id"]
    if K > 1:
        assert [int(x) for x in act["thresholds"].split("/")] == th
    assert [int(x) for x in act["dscp"].split("/")] == doc["dscp"]
    assert [int(x) for x in act["queues"].split("/")] == doc["queues"]
    if doc["kind"] == "panda":
        assert int(act["threshold"]) == doc["threshold"]
    else:
        assert act["kind"] == "pias" and doc["threshold"] == 0
    if doc["weights"]:
        ws = [w.split(":") for w in act["weights"].split("/")]
        assert [[int(a), float(w)] for a, w in ws] == doc["weights"]
    else:
        assert "weights" not in act


# ---- pcap writing (no scapy). ----

def pcap_header(linktype=1):
    return struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 262144, linktype)


def tcp_segment(sport, dport, payload, flags=0x18, options=b"", ack=1):
    doff = (20 + len(options)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, 1, ack, doff << 4, flags,
                       65535, 0, 0) + options + b"x" * payload


def ipv4(src, dst, proto, body):
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 1, 0x4000,
                       64, proto, 0, bytes(src), bytes(dst)) + body


def ipv6(src, dst, proto, body):
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), proto, 64,
                       bytes(src), bytes(dst)) + body


def ether(ethertype, body, vlan=None):
    hdr = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01"
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    return hdr + struct.pack("!H", ethertype) + body


class Pcap:
    def __init__(self, linktype=1):
        self.frames = []
        self.linktype = linktype

    def add(self, frame, wirelen=None):
        self.frames.append((frame, wirelen or len(frame)))

    def tcp4(self, sport, dport, payload, n=1, vlan=None, flags=0x18,
             options=b"", ack=1):
        for _ in range(n):
            self.add(ether(0x0800, ipv4([10, 0, 0, 1], [10, 0, 0, 2], 6,
                                        tcp_segment(sport, dport, payload,
                                                    flags, options, ack)),
                           vlan))

    def tcp6(self, sport, dport, payload, n=1):
        src = [0x20, 1, 0xd, 0xb8] + [0] * 11 + [1]
        dst = [0x20, 1, 0xd, 0xb8] + [0] * 11 + [2]
        for _ in range(n):
            self.add(ether(0x86dd, ipv6(src, dst, 6,
                                        tcp_segment(sport, dport, payload))))

    def udp4(self, n=1):
        for _ in range(n):
            body = struct.pack("!HHHH", 53, 53, 8 + 20, 0) + b"u" * 20
            self.add(ether(0x0800, ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17,
                                        body)))

    def write(self, path):
        out = [pcap_header(self.linktype)]
        for i, (f, wirelen) in enumerate(self.frames):
            out.append(struct.pack("<IIII", i // 1000000, i % 1000000,
                                   len(f), wirelen))
            out.append(f)
        path.write_bytes(b"".join(out))
        return path

    def write_pcapng(self, path):
        out = [struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1,
                           28),
               struct.pack("<IIHHII", 1, 20, self.linktype, 0, 262144, 20)]
        for i, (f, wirelen) in enumerate(self.frames):
            pad = (-len(f)) % 4
            total = 32 + len(f) + pad
            out.append(struct.pack("<IIIIIII", 6, total, 0, 0, i, len(f),
                                   wirelen))
            out.append(f + b"\0" * pad + struct.pack("<I", total))
        path.write_bytes(b"".join(out))
        return path


TS_OPTION = b"\x01\x01\x08\x0a" + b"\x00" * 8     # NOP NOP timestamps


def flt_fht_pcaps(tmp_path):
    flt = Pcap()
    flt.tcp4(40000, 11211, 60, n=50)                # memcached GETs
    flt.tcp4(40000, 11211, 1460, n=2)               # an occasional big value
    flt.tcp4(40001, 11211, 60, n=30, vlan=5)        # tagged
    flt.tcp6(40002, 11211, 60, n=20)                # IPv6
    flt.tcp4(40000, 11211, 0, n=40, flags=0x10)     # pure ACKs
    flt.udp4(n=3)
    fht = Pcap()
    for port in (50001, 50002, 50003):
        fht.tcp4(port, 5001, 1448, n=100, options=TS_OPTION)
        fht.tcp4(port, 5001, 0, n=10, flags=0x10, options=TS_OPTION)
    return (flt.write(tmp_path / "flt.pcap"), fht.write(tmp_path / "fht.pcap"))


# ---- Tests. ----

def test_histograms_hand_optimum(tmp_path, cdf):
    """FLT all 100 B, FHT all 1500 B: t = 1 on (100, 1500], T = 1500."""
    flt = hist(tmp_path, "flt.hist", [(100, 1000)])
    fht = hist(tmp_path, "fht.hist", [(1500, 1000)])
    out = tmp_path / "policy.json"
    res = run("--flt", flt, "--fht", fht, "--cdf", cdf, "--load", 0.8,
              "-o", out)
    doc = json.loads(out.read_text())
    check_policy(doc, 8)
    m = doc["model"]
    assert m["T_model"] == 1500 and doc["threshold"] == 1460
    assert m["t"] == pytest.approx(1.0)
    assert m["t_plateau"] == [101, 1500]
    assert m["R_flt"] == pytest.approx(1.0) and m["R_fht"] == 0
    # FLT packets are all small: the compensating counter never grows.
    assert m["E_T"]["payload"]["comp_unbounded"] is True
    assert m["E_T"]["payload"]["comp"] is None
    assert "threshold=1460" in res.stdout and "t(T) = 1.0000" in res.stdout
    # Tie rules.
    low = model_json("--flt", flt, "--fht", fht, "--levels", 1, "--tie",
                     "low")
    assert low["model"]["T_model"] == 101 and low["threshold"] == 61
    mid = model_json("--flt", flt, "--fht", fht, "--levels", 1, "--tie",
                     "mid")
    assert mid["model"]["T_model"] == 800
    check_policy(low, 1)


def test_data_ratio_over_plateau(tmp_path):
    """E_T (eq. 3-20, payload units) grows with T along the plateau: at the
    low end the FLT counter still grows, at the high end it never does."""
    flt = hist(tmp_path, "flt.hist", [(100, 90), (1500, 10)])
    fht = hist(tmp_path, "fht.hist", [(1500, 100)])
    doc = model_json("--flt", flt, "--fht", fht, "--levels", 1)
    m = doc["model"]
    lo, mid, hi = m["E_T_plateau"]
    assert (lo["T_model"], hi["T_model"]) == (101, 1500)
    assert (lo["threshold"], hi["threshold"]) == (61, 1460)
    avg = 0.9 * 60 + 0.1 * 1460
    assert lo["payload"]["comp"] == pytest.approx(
        (avg / 1460) * (1460 / (avg - 61 * 0.9)))
    # At T_model = 800 (payload 760): 200 - 760 x 0.9 < 0 already.
    assert mid["T_model"] == 800
    assert mid["payload"]["comp_unbounded"] is True
    assert hi["payload"]["comp_unbounded"] is True
    assert m["E_T"]["payload"] == hi["payload"]
    # Non-compensating (eq. 3-13): the split is the same along the plateau.
    assert lo["payload"]["noncomp"] == pytest.approx(
        (avg / 1460) * (1460 / 1460) * (1.0 / 0.1))
    assert hi["payload"]["noncomp"] == pytest.approx(lo["payload"]["noncomp"])


def test_thesis_example_map(tmp_path):
    """§3.2.1: 95% 100 B, 4% MTU, 1% 10 MTU map to 95:4:10 segments."""
    flt = hist(tmp_path, "flt.hist", [(100, 95), (1500, 4), (15000, 1)])
    fht = hist(tmp_path, "fht.hist", [(1500, 100)])
    doc = model_json("--flt", flt, "--fht", fht, "--levels", 1,
                     "--header-len", 0, "--mss", 1500)
    assert doc["model"]["T_model"] == 1500
    assert doc["model"]["t"] == pytest.approx(95 / 109)
    assert doc["threshold"] == 1500          # header_len 0


def test_thesis_data_ratio_example(tmp_path):
    """§3.2.2: at T = 1200 the non-compensating data ratio is 12.7."""
    flt = hist(tmp_path, "flt.hist", [(1000, 95), (1500, 5)])
    fht = hist(tmp_path, "fht.hist", [(1000, 10), (1500, 90)])
    doc = model_json("--flt", flt, "--fht", fht, "--levels", 1,
                     "--header-len", 0, "--mss", 1500)
    m = doc["model"]
    assert m["T_model"] == 1500
    assert m["t_plateau"] == [1001, 1500]
    assert m["t"] == pytest.approx(0.95 - 0.10)
    # Eq. 3-13 depends only on which sizes are small; any T in (1000, 1500]
    # splits like T = 1200 does.
    assert m["E_T"]["packet"]["noncomp"] == pytest.approx(12.72, abs=0.01)


def test_pcap_fixture(tmp_path, cdf):
    flt, fht = flt_fht_pcaps(tmp_path)
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.6, "--levels", 4)
    check_policy(doc, 4)
    m = doc["model"]
    fi, hi = m["inputs"]["flt"], m["inputs"]["fht"]
    # Three FLT connections (IPv4, VLAN-tagged IPv4 with other port, IPv6).
    assert fi["flows"] == 3 and fi["per_flow"] is True
    assert fi["packets"] == 50 + 2 + 30 + 20
    assert fi["zero_payload"] == 40
    assert fi["non_tcp"] == 3
    assert fi["size_min"] == 100 and fi["size_max"] == 1500
    assert hi["flows"] == 3 and hi["packets"] == 300
    assert hi["zero_payload"] == 30
    # Sizes are payload + header_len, whatever the TCP options.
    assert hi["size_min"] == 1488 and hi["size_max"] == 1488
    assert m["T_model"] == 1488 and doc["threshold"] == 1448
    # R of the first flow is 50/52 (two 1500 B packets are large), the
    # others 1; weighted by packets: (50 + 30 + 20) / 102.  R_FHT = 0.
    assert m["t"] == pytest.approx(100 / 102)
    assert m["R_fht"] == 0

    # Keeping pure ACKs adds samples of size header_len.
    keep = model_json("--flt", flt, "--fht", fht, "--levels", 1,
                      "--keep-acks")
    assert keep["model"]["inputs"]["flt"]["size_min"] == 40
    assert keep["model"]["inputs"]["flt"]["packets"] == 142
    assert keep["model"]["keep_acks"] is True


MINING_CDF = "1460 0\n1460 0.5\n2920 0.6\n4380 0.7\n10220 0.8\n389820 0.9\n" \
    "3076220 0.95\n97333820 0.99\n973333820 1\n"


def flt_with_bursts(tmp_path):
    """95 rounds of one small response, then one round of a 3-segment
    response: with T = 1448 payload bytes the counter (floor 0) climbs to
    3 x 1448 = 4344 and each small packet takes T - 60 = 1388 off."""
    flt = Pcap()
    for i in range(100):
        if i % 20 == 19:
            flt.tcp4(11211, 40000, 1448, n=3)
        else:
            flt.tcp4(11211, 40000, 60)
    fht = Pcap()
    fht.tcp4(5001, 50001, 1448, n=100, options=TS_OPTION)
    return flt.write(tmp_path / "flt.pcap"), fht.write(tmp_path / "fht.pcap")


def test_flt_excursions_bounded_by_a_floor(tmp_path):
    """Issue 19: on a data-mining CDF alpha_1 is 1460 bytes, below what
    the FLT's large responses add up to.  panda-model replays Algorithm 2
    over the FLT capture in order and gives the counter the credit that
    keeps 99% of the FLT packets at level 0 (floor = -(4344 - 1460)), the
    thresholds staying Appendix B's."""
    mining = write(tmp_path / "mining.cdf", MINING_CDF)
    flt, fht = flt_with_bursts(tmp_path)
    pias = model_json("--pias", "--cdf", mining, "--load", 0.8)
    assert pias["thresholds"][0] == 1460
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-bound", "floor")
    check_policy(doc, 8)
    assert doc["threshold"] == 1448
    assert doc["thresholds"] == pias["thresholds"]
    b = doc["model"]["alpha"]["flt_bound"]
    # 95 small packets at counter 0 and 15 large ones at 1448, 2896, 4344
    # (5 each): 99% of 110 is 109 packets, the 109th smallest is 4344.
    assert b["bound"] == "floor" and b["flt_level0"] == 0.99
    assert b["packets"] == 110 and b["flows"] == 1
    assert b["counter_max"] == 4344 and b["counter_quantile"] == 4344
    assert b["active"] is True and b["floor"] == -2884
    assert parse_action(doc["action"])["floor"] == "-2884"
    assert doc["floor"] == -2884        # the structured field too
    assert Policy.from_json(doc)[0].text() == doc["action"]
    # Free: after 1448 the counter stays above 1460 for two large packets
    # (2896, 4344) and two small ones (2956, 1568): 4 per burst, 2 for the
    # last one, which ends the capture.  With the floor the counter sits
    # at -2884 before every burst (the first comes after 19 small
    # packets) and tops out at 1460: all at level 0.
    assert b["flt_level0_share_free"] == pytest.approx(92 / 110)
    assert b["flt_level0_share"] == 1.0
    assert any("counter floor set to -2884" in n
               for n in doc["model"]["notes"])
    # A lower share asks for less: 80% of the packets (83 at 0, 4 at 180,
    # then 1448) are at <= 1448, below alpha_1 already.
    lower = model_json("--flt", flt, "--fht", fht, "--cdf", mining,
                       "--load", 0.8, "--flt-level0", 0.8,
                       "--flt-bound", "floor")
    lb = lower["model"]["alpha"]["flt_bound"]
    assert lb["counter_quantile"] == 1448 and lb["active"] is False
    assert lb["floor"] == 0 and "floor" not in parse_action(lower["action"])
    assert "floor" not in lower
    # Off: the free policy, no record.
    off = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-level0", 0)
    assert off["thresholds"] == pias["thresholds"]
    assert "flt_bound" not in off["model"]["alpha"]
    assert "floor" not in parse_action(off["action"])
    # On the web-search CDF alpha_1 (21415) is above these excursions.
    web = model_json("--flt", flt, "--fht", fht, "--cdf", WEB_SEARCH,
                     "--load", 0.8, "--flt-bound", "floor")
    assert web["model"]["alpha"]["flt_bound"]["active"] is False
    assert "floor" not in parse_action(web["action"])
    # Histograms carry no order: no bound, and a note says why.
    h = model_json("--flt", hist(tmp_path, "flt.hist", [(100, 10)]),
                   "--fht", fht, "--cdf", mining, "--load", 0.8)
    assert "flt_bound" not in h["model"]["alpha"]
    assert any("carry no packet order" in n for n in h["model"]["notes"])
    for args, msg in ((["--flt-level0", 1.5], "--flt-level0"),
                      (["--flt-bound", "ceiling"], "floor, alpha1 or level")):
        res = run("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                  0.8, *args, check=False)
        assert res.returncode == 2 and msg in res.stderr    # usage


def test_flt_excursions_on_a_level_of_their_own(tmp_path):
    """--flt-bound level: level 0 is the counters at or below 0 (alpha_1
    = 0), the floor is the whole excursion, and Appendix B's thresholds
    move one level down (the two lowest levels merge), so the FLT never
    shares a level with a flow's first bytes and every flow is ordered as
    under PIAS's thresholds."""
    mining = write(tmp_path / "mining.cdf", MINING_CDF)
    flt, fht = flt_with_bursts(tmp_path)
    pias = model_json("--pias", "--cdf", mining, "--load", 0.8)
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-bound", "level")
    check_policy(doc, 8)
    assert doc["thresholds"] == [0] + pias["thresholds"][:-1]
    a = doc["model"]["alpha"]
    assert a["levels_solved"] == 8
    assert a["thresholds_bytes"] == [0] + pias["thresholds"][:-1]
    assert a["numeric"]["thresholds_bytes"] == pias["thresholds"]
    b = a["flt_bound"]
    assert b["bound"] == "level" and b["active"] is True
    assert b["counter_quantile"] == 4344 and b["floor"] == -4344
    assert doc["floor"] == -4344
    assert parse_action(doc["action"])["floor"] == "-4344"
    # Free (floor 0): each burst lifts the counter above 0 for its three
    # large packets and the three small ones after (2956, 1568, 180): 6
    # per burst, 3 for the last.  With the floor the counter sits at
    # -4344 before every burst and tops out at 0: all at level 0.
    assert b["flt_level0_share_free"] == pytest.approx(83 / 110)
    assert b["flt_level0_share"] == 1.0
    assert any("level 0 for the connections with credit" in n
               for n in doc["model"]["notes"])
    # Without a bound asked for, the policy of the CDF alone: K levels.
    off = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-bound", "level", "--flt-level0", 0)
    assert off["thresholds"] == pias["thresholds"]
    assert "floor" not in parse_action(off["action"])
    # Two levels: the credit's and the flows'.
    two = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-bound", "level", "--levels", 2)
    check_policy(two, 2)
    assert two["thresholds"] == [0] and two["floor"] == -4344
    # Histograms carry no order: the level all the same, no credit (the
    # FLT's small packets hold its counter at 0, level 0, between large
    # ones); a note says why.
    h = model_json("--flt", hist(tmp_path, "flt.hist", [(100, 10)]),
                   "--fht", fht, "--cdf", mining, "--load", 0.8,
                   "--flt-bound", "level")
    assert h["thresholds"] == [0] + pias["thresholds"][:-1]
    assert "floor" not in h
    assert any("carry no packet order" in n for n in h["model"]["notes"])


def test_flt_excursions_bounded_by_alpha1(tmp_path):
    """--flt-bound alpha1: alpha_1 raised to the excursion instead, the
    other thresholds re-optimised above it (lib/panda/solver.c)."""
    mining = write(tmp_path / "mining.cdf", MINING_CDF)
    flt, fht = flt_with_bursts(tmp_path)
    pias = model_json("--pias", "--cdf", mining, "--load", 0.8)
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", mining, "--load",
                     0.8, "--flt-bound", "alpha1")
    check_policy(doc, 8)
    b = doc["model"]["alpha"]["flt_bound"]
    assert b["bound"] == "alpha1" and b["active"] is True
    assert b["alpha1_min"] == 4344 and doc["thresholds"][0] == 4344
    assert b["free_thresholds_bytes"] == pias["thresholds"]
    assert b["free_objective"] < doc["model"]["alpha"]["numeric"][
        "objective"] + 1e-12
    assert b["flt_level0_share"] == 1.0
    assert b["flt_level0_share_free"] == pytest.approx(92 / 110)
    assert "floor" not in parse_action(doc["action"])
    assert any("alpha_1 raised to its lower bound 4344" in n
               for n in doc["model"]["notes"])


def test_pcap_filters(tmp_path):
    """One capture holding both classes, split with BPF filters."""
    both = Pcap()
    both.tcp4(40000, 11211, 60, n=50)
    both.tcp4(50001, 5001, 1448, n=80)
    both.tcp4(50002, 5001, 1448, n=80)
    path = both.write(tmp_path / "both.pcap")
    doc = model_json("--flt", path, "--flt-filter", "tcp port 11211",
                     "--fht", path, "--fht-filter", "tcp port 5001",
                     "--levels", 1)
    assert doc["model"]["inputs"]["flt"]["flows"] == 1
    assert doc["model"]["inputs"]["fht"]["flows"] == 2
    assert doc["model"]["T_model"] == 1488
    assert doc["model"]["t"] == pytest.approx(1.0)
    bad = run("--flt", path, "--flt-filter", "tcp port nonsense(",
              "--fht", path, "--levels", 1, check=False)
    assert bad.returncode == 1 and "bad filter" in bad.stderr


def test_pcapng_cooked_and_tso(tmp_path):
    """pcapng, Linux cooked (v1 and v2) captures and TSO super-packets whose
    IPv4 total length reads 0 (sizes before segmentation)."""
    def sll(frame):         # Ethernet frame -> Linux cooked v1
        return struct.pack("!HHH8sH", 4, 1, 6, b"\0" * 8, 0x0800) + frame[14:]

    def sll2(frame):        # -> Linux cooked v2
        return struct.pack("!HHIHBB8s", 0x0800, 0, 2, 1, 4, 6,
                           b"\0" * 8) + frame[14:]

    flt = Pcap()
    flt.tcp4(40000, 11211, 60, n=20)
    fht = Pcap()
    for port in (50001, 50002):
        for _ in range(10):
            seg = tcp_segment(port, 5001, 0)
            ip = bytearray(ipv4([10, 0, 0, 1], [10, 0, 0, 2], 6, seg))
            ip[2:4] = b"\0\0"                  # total length 0 (TSO)
            frame = ether(0x0800, bytes(ip))
            fht.add(frame, wirelen=len(frame) + 64000)
    ng = model_json("--flt", flt.write_pcapng(tmp_path / "flt.pcapng"),
                    "--fht", fht.write_pcapng(tmp_path / "fht.pcapng"),
                    "--levels", 1)
    assert ng["model"]["inputs"]["fht"]["size_max"] == 64040
    assert ng["model"]["inputs"]["fht"]["flows"] == 2
    assert ng["model"]["T_model"] == 64040
    assert ng["threshold"] == 64000
    def raw(frame):         # -> raw IP (LINKTYPE_RAW)
        return frame[14:]

    def null(frame):        # -> BSD loopback, host-order AF_INET
        return struct.pack("=I", 2) + frame[14:]

    for linktype, conv in ((113, sll), (276, sll2), (101, raw), (0, null)):
        c = Pcap(linktype)
        for f, w in flt.frames:
            c.add(conv(f), w + len(conv(f)) - len(f))
        path = c.write(tmp_path / ("cooked%d.pcap" % linktype))
        doc = model_json("--flt", path, "--fht",
                         fht.write(tmp_path / "fht.pcap"), "--levels", 1)
        assert doc["model"]["inputs"]["flt"]["packets"] == 20
        assert doc["model"]["inputs"]["flt"]["size_max"] == 100


def labelled_fht(tmp_path):
    rows = []
    for i in range(3):
        rows += [(200, 2, "s%d" % i), (1500, 50, "s%d" % i)]
        rows += [(1500, 5, "m%d" % i), (8000, 200, "m%d" % i)]
        rows += [(8000, 3, "l%d" % i), (65000, 500, "l%d" % i)]
    return hist(tmp_path, "fht-flows.hist", rows)


def test_subthresholds_and_weights(tmp_path, cdf):
    flt = hist(tmp_path, "flt.hist", [(100, 1000), (1500, 10)])
    fht = labelled_fht(tmp_path)
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8)
    sub = doc["model"]["subthresholds"]
    assert sub["flows_per_class"] == [3, 3, 3]
    assert [d["size"] for d in sub["d"]] == [8000, 65000]
    assert sub["weights_applied"] is False and doc["weights"] == []

    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "2,4")
    check_policy(doc, 8)
    assert doc["weights"] == [[7959, 2], [64959, 4]]
    m = doc["model"]
    eta = m["subthresholds"]["eta"]
    assert eta[0] == pytest.approx(1.0) and eta[1] < 1 and eta[2] < eta[1]
    # Counter thresholds: bytes / eta of the class the byte value is in.
    bytes_ = m["alpha"]["thresholds_bytes"]
    bounds = m["subthresholds"]["class_bounds"]
    for b, a in zip(bytes_, doc["thresholds"]):
        c = sum(1 for x in bounds if b >= x)
        assert a == pytest.approx(b / eta[c], abs=1)


def test_pias_baseline(tmp_path, cdf):
    flt = hist(tmp_path, "flt.hist", [(100, 1000)])
    fht = hist(tmp_path, "fht.hist", [(1500, 1000)])
    panda = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                       0.7, "--levels", 6)
    pias = model_json("--pias", "--cdf", cdf, "--load", 0.7, "--levels", 6,
                      "--id", 2)
    check_policy(pias, 6)
    assert pias["kind"] == "pias" and pias["threshold"] == 0
    assert pias["weights"] == [] and pias["id"] == 2
    assert "kind=pias" in pias["action"]
    assert "T_model" not in pias["model"]
    # Same CDF and load: the same byte thresholds as Panda's (no weights),
    # or one level down below a credit level (--flt-bound level).
    assert pias["thresholds"] == panda["model"]["alpha"]["thresholds_bytes"]
    assert pias["thresholds"] == panda["thresholds"]
    level = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                       0.7, "--levels", 6, "--flt-bound", "level")
    assert level["thresholds"] == [0] + pias["thresholds"][:-1]
    # --kind pias is the same.
    assert model_json("--kind", "pias", "--cdf", cdf, "--load", 0.7,
                      "--levels", 6, "--id", 2)["action"] == pias["action"]


def test_rules_make_compose(tmp_path, cdf):
    """--rules puts rules in front of the computed Panda policy;
    the JSON is what the controller reads (pandaovs.policy), and the
    thresholds are the model's."""
    from pandaovs.policy import Policy
    flt = hist(tmp_path, "flt.hist", [(100, 1000)])
    fht = hist(tmp_path, "fht.hist", [(1500, 1000)])
    args = ["--flt", flt, "--fht", fht, "--cdf", cdf, "--load", 0.7,
            "--levels", 4]
    panda = model_json(*args)
    comp = model_json(*args, "--rules", "match=get\\x20:0,app=46:1")
    assert comp["kind"] == "compose"
    assert comp["thresholds"] == panda["thresholds"]
    assert comp["priority_rules"] == [{"match": "get\\x20", "level": 0},
                                      {"app": 46, "level": 1}]
    p, warnings = Policy.from_json(comp, "model.json")
    assert not warnings and p.text() == comp["action"]
    assert p.rule_level(data=b"get k") == 0
    res = run(*args, "--rules", "match=a:9", check=False)
    assert res.returncode != 0
    assert "--rules: match: 9 out of range (max 7)" in res.stderr
    res = run("--pias", "--cdf", cdf, "--load", 0.7, "--levels", 4,
              "--rules", "app=1:0", check=False)
    assert res.returncode != 0 and "not with --pias" in res.stderr


def test_switches_make_a_controller_configuration(tmp_path, cdf):
    """--switches writes the bridges a controller serves the file to
    ("controller": {"switches"}), each form of datapath id as the
    controller's canonical hex; the controller's reader then takes the
    file alone as its configuration, which it refuses without them (its
    one rule is for every bridge)."""
    from pandaovs.controller import config
    base = ["--pias", "--cdf", cdf, "--load", 0.5, "--levels", 4, "-q"]
    out = tmp_path / "policy.json"
    run(*base, "--switches", "0xb1,00:00:00:00:00:00:01:0A,3", "-o", out)
    doc = json.loads(out.read_text())
    assert doc["controller"] == {"switches": [
        "0x00000000000000b1", "0x000000000000010a", "0x0000000000000003"]}
    cfg = config.load(str(out))
    assert sorted(cfg.switches.switches) == [3, 0xb1, 0x10a]
    assert not cfg.switches.any and cfg.rules[0].dpids is None
    run(*base, "--switches", "*", "-o", out)
    assert json.loads(out.read_text())["controller"] == {"switches": "*"}
    assert config.load(str(out)).switches.any
    run(*base, "-o", out)
    assert "controller" not in json.loads(out.read_text())
    with pytest.raises(config.ConfigError, match="switches: missing"):
        config.load(str(out))


def test_cdf_in_packets(tmp_path):
    pk = write(tmp_path / "pk.cdf", "0 0\n1000 1\n")
    by = write(tmp_path / "by.cdf", "0 0\n1460000 1\n")
    a = model_json("--pias", "--cdf", pk, "--cdf-unit", "packets",
                   "--load", 0.5, "--levels", 3)
    b = model_json("--pias", "--cdf", by, "--load", 0.5, "--levels", 3)
    assert a["thresholds"] == b["thresholds"]


def test_web_search_closed_form_vs_numeric(tmp_path):
    path = WEB_SEARCH if os.path.exists(WEB_SEARCH) else \
        write(tmp_path / "web.cdf", WEB_CDF)
    doc = model_json("--pias", "--cdf", path, "--load", 0.8, "--levels", 8)
    check_policy(doc, 8)
    a = doc["model"]["alpha"]
    cf, num = a["closed_form"], a["numeric"]
    assert num["objective"] <= cf["objective"]
    # The closed form is the optimum of the continuous problem.
    assert cf["objective_continuous"] == pytest.approx(cf["objective"],
                                                       rel=1e-6)
    assert num["objective"] >= cf["objective_continuous"] - 1e-12
    # B = 1 - (1 - rho) J.
    assert cf["objective"] == pytest.approx(1 - 0.2 * cf["J"])
    chosen = num if a["chosen"] == "numeric" else cf
    assert a["thresholds_bytes"] == chosen["thresholds_bytes"]
    # S_l = (1 - r^l) / rho with r = (1 - rho)^(1/K).
    r = 0.2 ** (1 / 8)
    for l, s in enumerate(cf["S"], 1):
        assert s == pytest.approx((1 - r ** l) / 0.8)


def test_atom_cdf_collisions(tmp_path):
    atom = write(tmp_path / "atom.cdf", "1000 0.5\n2000 0.6\n100000 1\n")
    doc = model_json("--pias", "--cdf", atom, "--load", 0.8)
    check_policy(doc, 8)
    a = doc["model"]["alpha"]
    assert a["closed_form"]["adjusted"] > 0
    assert any("collide" in n for n in doc["model"]["notes"])
    assert a["numeric"]["objective"] < a["closed_form"]["objective"]
    assert a["chosen"] == "numeric"


def test_ids_and_maps(tmp_path, cdf):
    doc = model_json("--pias", "--cdf", cdf, "--load", 0.5, "--levels", 4,
                     "--id", 42, "--dscp", "46/26/10/0", "--queues",
                     "3,2,1,0")
    check_policy(doc, 4)
    assert doc["id"] == 42
    assert doc["dscp"] == [46, 26, 10, 0] and doc["queues"] == [3, 2, 1, 0]
    act = run("--pias", "--cdf", cdf, "--load", 0.5, "--levels", 4,
              "--id", 42, "--action").stdout.strip()
    assert act.startswith("id=42,kind=pias,thresholds=")
    assert "\n" not in act


# A bad file is a failure (exit status 1), a bad option a usage error (2).
@pytest.mark.parametrize("args,cdf_text,message,status", [
    (["--pias", "--load", 0.5], "", "no data points", 1),
    (["--pias", "--load", 0.5], "# only a comment\n", "no data points", 1),
    (["--pias", "--load", 0.5], "10 0.5\n5 1\n", "not sorted", 1),
    (["--pias", "--load", 0.5], "10 0.5\n20 0.9\n", "not 1", 1),
    (["--pias", "--load", 0], None, "outside (0, 1)", 2),
    (["--pias", "--load", 1], None, "outside (0, 1)", 2),
    (["--pias", "--load", 1.5], None, "outside (0, 1)", 2),
    (["--pias", "--load", -0.2], None, "outside (0, 1)", 2),
    (["--pias", "--load", 0.5, "--levels", 0], None, "out of range", 2),
    (["--pias", "--load", 0.5, "--levels", 9], None, "out of range", 2),
    (["--pias"], None, "--load", 2),
    (["--pias", "--load", 0.5, "--dscp", "1/2"], None, "2 values", 2),
    (["--pias", "--load", 0.5, "--switches", ""], None, "datapath ids", 2),
    (["--pias", "--load", 0.5, "--switches", "0x"], None, "not a datapath",
     2),
    (["--pias", "--load", 0.5, "--switches", "00:00:b1"], None,
     "\"00:00:b1\" is not a datapath id", 2),
    (["--pias", "--load", 0.5, "--switches", "*,0xb1"], None,
     "is not a non-negative integer", 2),
])
def test_bad_cdf_and_parameters(tmp_path, cdf, args, cdf_text, message,
                                status):
    path = cdf if cdf_text is None else write(tmp_path / "x.cdf", cdf_text)
    res = run(*args, "--cdf", path, check=False)
    assert res.returncode == status, res.stdout
    assert message in res.stderr, res.stderr
    assert res.stderr.startswith("panda-model: ")


def test_bad_samples(tmp_path, cdf):
    fht = hist(tmp_path, "fht.hist", [(1500, 10)])
    acks = hist(tmp_path, "acks.hist", [(40, 100)])
    cases = [
        (["--fht", fht], "no FLT samples"),
        (["--flt", acks, "--fht", fht], "no FLT samples"),
        (["--flt", tmp_path / "missing.hist", "--fht", fht],
         "cannot open"),
        (["--flt", write(tmp_path / "b1", "100 x\n"), "--fht", fht],
         "b1:1: missing or invalid count"),
        (["--flt", write(tmp_path / "b2", "100 1\n200\n"), "--fht", fht],
         "b2:2:"),
        (["--flt", write(tmp_path / "b3", "100 1 a\n200 1\n"), "--fht", fht],
         "missing flow label"),
        (["--flt", write(tmp_path / "b4", "70000 1\n"), "--fht", fht],
         "out of range"),
        (["--flt", write(tmp_path / "b5", "-3 1\n"), "--fht", fht],
         "negative"),
    ]
    trunc = tmp_path / "trunc.pcap"
    trunc.write_bytes(pcap_header() + b"\x00\x00")
    cases.append((["--flt", trunc, "--fht", fht], "trunc.pcap"))
    for args, message in cases:
        res = run(*args, "--cdf", cdf, "--load", 0.5, check=False)
        # No --flt at all is a usage error; unusable inputs a failure.
        assert res.returncode == (2 if "--flt" not in args else 1), \
            (args, res.stdout)
        assert message in res.stderr, (args, res.stderr)


def test_benchmark_runs():
    if not os.access(BENCH, os.X_OK):
        pytest.skip("%s not built" % BENCH)
    res = subprocess.run([BENCH, "--samples", "200000", "--pcap-packets",
                          "20000"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    for what in ("ingest", "T search", "alpha", "pcap read",
                 "alpha on a refined CDF"):
        assert what in res.stdout
    assert "same thresholds" in res.stdout


def counter_at(weights, seq, b):
    """C(b) of lib/panda/model.h, written out: each byte weighs its
    packet's weight, the last size repeating."""
    def weight(size):
        return next((w for above, w in reversed(weights) if size > above),
                    1)
    c, i = 0.0, 0
    while b > 0:
        s = seq[min(i, len(seq) - 1)]
        take = min(b, s)
        c += weight(s) * take
        b -= take
        i += 1
    return c


def check_counter_thresholds(flt, fht, cdf):
    """--counter-thresholds: alpha below the large class's bound is the
    counter a TSO flow reaches after alpha bytes (window 10 x 1460
    doubling up to the FHT's largest payload, 64960 here); recorded."""
    args = ["--flt", flt, "--fht", fht, "--cdf", cdf, "--load", 0.8,
            "--weight-values", "auto", "--flt-bound", "floor"]
    doc = model_json(*args, "--counter-thresholds")
    check_policy(doc, 8)
    # With a credit level, the same mapping one level down.
    level = model_json(*args[:-1], "level", "--counter-thresholds")
    assert level["thresholds"] == [0] + doc["thresholds"][:-1]
    assert level["model"]["alpha"]["counter_thresholds"][
        "counter_per_byte"][1:] == doc["model"]["alpha"][
            "counter_thresholds"]["counter_per_byte"][:-1]
    alpha = doc["model"]["alpha"]
    cm = alpha["counter_thresholds"]
    assert doc["model"]["subthresholds"]["thresholds"].startswith(
        "counter")
    assert cm["initial_window"] == 14600 and cm["tso_max"] == 64960
    assert cm["raw_from_bytes"] == 10000000
    seq = [14600, 29200, 58400, 64960]
    byte_th = alpha["thresholds_bytes"]
    want = [math.ceil(counter_at(doc["weights"], seq, b) - 1e-9)
            for b in byte_th]
    assert all(b < 10000000 for b in byte_th)
    assert doc["thresholds"] == want == cm["thresholds_counter"]
    # Every mapped threshold is above the byte one (weights > 1 on the
    # model's packets), and the ratio grows as the window does.
    ratios = cm["counter_per_byte"]
    assert all(t > b for t, b in zip(doc["thresholds"], byte_th))
    assert all(b >= a for a, b in zip(ratios, ratios[1:]))
    # The large class's thresholds stay bytes, raised to stay ascending.
    doc = model_json(*args, "--counter-thresholds", "--class-bounds",
                     "100000,1000000")
    th, k = doc["thresholds"], sum(b < 1000000 for b in byte_th)
    assert th[:k] == [math.ceil(counter_at(doc["weights"], seq, b) - 1e-9)
                      for b in byte_th[:k]]
    assert all(t == max(b, th[k - 1] + 1 + i)
               for i, (t, b) in enumerate(zip(th[k:], byte_th[k:])))
    # Measured (--counter-fht): three connections, each 10 x 1460 bytes
    # then 20000-byte packets (weight w_1) up to 14600 + 50 x 20000 bytes.
    cap = Pcap()
    for port in (40001, 40002, 40003):
        cap.tcp4(5001, port, 1460, n=10)
        cap.tcp4(5001, port, 20000, n=50)
    path = cap.write(fht.parent / "w1.pcap")
    doc = model_json(*args, "--counter-thresholds", "--counter-fht", path)
    cm = doc["model"]["alpha"]["counter_thresholds"]
    w1 = doc["weights"][0][1]
    sent = 14600 + 50 * 20000
    assert cm["source"] == "measured"
    assert cm["flows"] == [3 if b <= sent else 0 for b in byte_th]
    ratio = None
    for b, t, r in zip(byte_th, doc["thresholds"], cm["counter_per_byte"]):
        if b <= sent:
            c = b if b <= 14600 else 14600 + w1 * (b - 14600)
            ratio = c / b
        else:
            c = ratio * b       # the last measured ratio carries on
        assert r == pytest.approx(c / b, rel=1e-9)
        assert t == math.ceil(c - 1e-9)
    assert any("--counter-fht: fewer than 3 connections" in n
               for n in doc["model"]["notes"])
    res = run(*args, "--counter-fht", path, check=False)
    assert res.returncode == 2 and "--counter-fht: only with " \
        "--counter-thresholds" in res.stderr
    res = run(*args, "--counter-thresholds", "--counter-fht", fht,
              check=False)
    assert res.returncode == 1 and "--counter-fht: give captures" \
        in res.stderr, res.stderr
    # Errors name the option.
    for extra, msg in [
            ([], "--counter-thresholds: needs size-interval weights"),
            (["--weight-values", "auto", "--byte-thresholds"],
             "--counter-thresholds and --byte-thresholds"),
            (["--pias"], "--counter-thresholds: PIAS has no weights")]:
        res = run("--flt", flt, "--fht", fht, "--cdf", cdf, "--load", 0.8,
                  "--counter-thresholds", *extra, check=False)
        assert res.returncode == 2 and msg in res.stderr, res.stderr


def test_weight_values_auto(tmp_path, cdf):
    """--weight-values auto: each interval's mean FHT payload over that
    of [T, d_1) (lib/panda/model.h), in hundredths; the rule is recorded."""
    flt = hist(tmp_path, "flt.hist", [(100, 1000), (1500, 10)])
    fht = labelled_fht(tmp_path)
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "auto")
    check_policy(doc, 8)
    T = doc["threshold"]
    # FHT payloads (size - 40) with their counts over the three flows.
    rows = {160: 6, 1460: 165, 7960: 609, 64960: 1500}
    base = [(p, n) for p, n in rows.items() if T <= p <= 7959]
    mean = sum(p * n for p, n in base) / sum(n for _, n in base)
    assert [w[0] for w in doc["weights"]] == [7959, 64959]
    assert doc["weights"][0][1] == pytest.approx(7960 / mean, abs=0.006)
    assert doc["weights"][1][1] == pytest.approx(min(600, 64960 / mean),
                                                 abs=0.006)
    sub = doc["model"]["subthresholds"]
    assert sub["weight_rule"] == "auto" and sub["thresholds"] == "bytes / eta"
    mapped = doc["thresholds"]
    assert mapped != doc["model"]["alpha"]["thresholds_bytes"]
    # --byte-thresholds: alpha stays the CDF's bytes, the weights apply.
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "auto", "--byte-thresholds")
    assert doc["thresholds"] == doc["model"]["alpha"]["thresholds_bytes"]
    assert len(doc["weights"]) == 2
    assert doc["model"]["subthresholds"]["thresholds"].startswith("bytes (")
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "2,4")
    assert doc["model"]["subthresholds"]["weight_rule"] == "given"
    check_counter_thresholds(flt, fht, cdf)
    # An FLT packet above d_1 (a TSO packet of several responses): the
    # weights start above it, so every FLT packet weighs 1.
    flt = hist(tmp_path, "flt2.hist", [(100, 1000), (10000, 1)])
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "auto")
    assert [w[0] for w in doc["weights"]] == [9960, 64959]
    assert any("largest packet or message, payload 9960" in n
               for n in doc["model"]["notes"])
    # From a capture, the FLT's largest response counts, not only its
    # largest packet: 4000 + 4500 bytes sent with no request in between
    # (the same acknowledgment number) may leave as one 8500-byte TSO
    # packet another time.
    cap = Pcap()
    for ack in range(1, 1001):
        cap.tcp4(11211, 40000, 100, ack=ack)
    cap.tcp4(11211, 40000, 4000, ack=1001)
    cap.tcp4(11211, 40000, 4500, ack=1001)
    cap.tcp4(11211, 40000, 100, ack=1002)
    flt = cap.write(tmp_path / "flt.pcap")
    doc = model_json("--flt", flt, "--fht", fht, "--cdf", cdf, "--load",
                     0.8, "--weight-values", "auto")
    assert doc["model"]["inputs"]["flt"]["max_message"] == 8500
    assert doc["model"]["inputs"]["flt"]["size_max"] == 4540
    assert [w[0] for w in doc["weights"]] == [8500, 64959]
    assert any("largest packet or message, payload 8500" in n
               for n in doc["model"]["notes"]), doc["model"]["notes"]


# ---- Inputs that must not make panda-model read (or work) without end. ----

def test_inputs_bounded_and_regular(tmp_path, cdf):
    """Inputs are regular files within a size limit: a file over
    --max-input-size, a CDF file over 64 MiB (a sparse file: no disk
    used), a FIFO (refused without blocking on it) and a character
    device are refused with a message naming the file.  /dev/null, not
    /dev/zero: if the check failed, the test would read nothing rather
    than for ever."""
    flt = hist(tmp_path, "flt.hist", [(100, 10)])
    fht = hist(tmp_path, "fht.hist", [(1500, 10)])
    big = tmp_path / "big.hist"
    big.write_text("100 1\n" * 200)                 # 1200 bytes
    fifo = tmp_path / "fifo"
    os.mkfifo(str(fifo))
    huge_cdf = tmp_path / "huge.cdf"
    with open(huge_cdf, "wb") as f:
        f.truncate((64 << 20) + 1)
    cases = [
        (["--flt", big, "--fht", fht, "--max-input-size", "1000"],
         "%s: 1200 bytes, above the limit of 1000 bytes "
         "(--max-input-size)" % big),
        (["--flt", fifo, "--fht", fht],
         "%s: not a regular file (a FIFO): refused" % fifo),
        (["--flt", "/dev/null", "--fht", fht],
         "/dev/null: not a regular file (a character device): refused"),
        (["--flt", flt, "--fht", fht, "--cdf", huge_cdf],
         "%s: 67108865 bytes, above the limit of 67108864 bytes" % huge_cdf),
        (["--flt", flt, "--fht", fht, "--cdf", fifo],
         "%s: not a regular file (a FIFO)" % fifo),
    ]
    for args, message in cases:
        if "--cdf" not in args:
            args = args + ["--cdf", cdf]
        res = run(*args, "--load", 0.5, check=False)
        assert res.returncode == 1, (args, res.stdout)
        assert message in res.stderr, (args, res.stderr)
    # Within the limit: read.
    assert run("--flt", big, "--fht", fht, "--cdf", cdf, "--load", 0.5,
               "--max-input-size", "1200", "-q").returncode == 0


@pytest.mark.parametrize("rows, message", [
    ("100 inf\n", "missing or invalid count after size 100 (need a "
     "finite number >= 0)"),
    ("100 nan\n", "missing or invalid count"),
    ("100 5e15\n200 5e15\n", "flt.hist:2: count 5e+15 after size 200: "
     "the counts add up to more than 2^53 packets"),
    ("100 1e308\n200 1e308\n", "flt.hist:1: count 1e+308 after size 100: "
     "the counts add up to more than 2^53 packets"),
])
def test_non_finite_counts_refused(tmp_path, cdf, rows, message):
    """Counts must be finite numbers whose sum is one too: before, two
    counts of 1e308 made "FLT inf packets"."""
    flt = write(tmp_path / "flt.hist", rows)
    fht = hist(tmp_path, "fht.hist", [(1500, 10)])
    res = run("--flt", flt, "--fht", fht, "--cdf", cdf, "--load", 0.5,
              check=False)
    assert res.returncode == 1, res.stdout
    assert message in res.stderr, res.stderr
    assert "inf" not in res.stdout


def _refine(points, n):
    """The piecewise-linear CDF 'points' ([(value, prob)]) with about 'n'
    points: extra points on its segments, so the same distribution."""
    segs = [(a, b) for a, b in zip(points, points[1:]) if b[0] > a[0]]
    span = sum(b[0] - a[0] for a, b in segs)
    out = [points[0]]
    for (v0, p0), (v1, p1) in segs:
        k = max(1, int(round(n * (v1 - v0) / span)))
        for i in range(1, k + 1):
            v = v0 + (v1 - v0) * i / k
            out.append((v, p0 + (p1 - p0) * i / k))
    return out


def test_many_cdf_points(tmp_path):
    """50,000 CDF points: the thresholds of the same distribution as the
    12-point web-search CDF, found in well under a second where it took
    minutes (the solver evaluated the CDF point by point for every
    candidate: O(n^2); now a binary search, and only the candidates
    between a threshold's neighbours).  The time is printed, not
    asserted (a shared machine)."""
    import time
    pts = [tuple(map(float, l.split())) for l in WEB_CDF.splitlines()]
    fine = write(tmp_path / "fine.cdf", "".join(
        "%.6f %.12f\n" % p for p in _refine(pts, 50000)))
    coarse = write(tmp_path / "web.cdf", WEB_CDF)
    flt = hist(tmp_path, "flt.hist", [(100, 1000), (200, 500)])
    fht = hist(tmp_path, "fht.hist", [(1448, 5000)])
    out = {}
    for name, path in (("coarse", coarse), ("fine", fine)):
        t0 = time.monotonic()
        out[name] = model_json("--flt", flt, "--fht", fht, "--cdf", path,
                               "--load", 0.8, "--levels", 8)
        out[name + "_s"] = time.monotonic() - t0
    assert out["fine"]["model"]["alpha"]["cdf_points"] > 49000
    a, b = out["coarse"]["thresholds"], out["fine"]["thresholds"]
    assert len(a) == len(b) == 7
    # The same distribution: the same thresholds, to the rounding of the
    # refined points' decimals.
    for x, y in zip(a, b):
        assert abs(x - y) <= max(2, 1e-6 * x), (a, b)
    assert out["coarse"]["threshold"] == out["fine"]["threshold"]
    print("panda-model: 50k CDF points %.3f s (12 points %.3f s)"
          % (out["fine_s"], out["coarse_s"]))
