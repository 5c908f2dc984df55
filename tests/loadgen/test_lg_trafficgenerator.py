"""panda-fg-client's compatibility with HKUST-SING/TrafficGenerator's
client: its CDFs in packets (--cdf-unit packets), its client configuration
(--config: server, req_size_dist, dscp, rate, fanout, load, num_reqs) and
its per-flow output (--output-format trafficgenerator), on loopback."""

import pytest

from lg_helpers import cdf, load_json, run

WEB = cdf("web-search.cdf")
MSS = 1460          # the shipped CDFs were converted at 1460 B per packet


def packet_cdf(path):
    """TrafficGenerator's conf/CDF_dctcp.txt, web search in packets: the
    shipped bytes CDF divided by the MSS it was converted at."""
    lines = []
    with open(WEB) as f:
        for line in f:
            line = line.split("#")[0].split()
            if line:
                size, p = int(line[0]), line[1]
                assert size % MSS == 0 or size == 29200000
                lines.append("%g %s" % (size / MSS, p))
    path.write_text("\n".join(lines) + "\n")
    return path


def dry_sizes(lg_bin, *args):
    r = run([lg_bin.fg_client, "--dry-run"] + list(args))
    assert r.returncode == 0, r.stderr
    return [int(x.split()[1]) for x in r.stdout.splitlines()
            if not x.startswith("#")]


def test_packet_cdf_gives_the_bytes_mean(lg_bin, tmp_path):
    """TrafficGenerator's CDF in packets with --cdf-unit packets: the same
    flows as the bytes CDF, with its mean (1.67 MB); read as bytes, the
    "flows" would be 1460 times smaller."""
    pkts = str(packet_cdf(tmp_path / "CDF_dctcp.txt"))
    n = "100000"
    as_packets = dry_sizes(lg_bin, "--cdf", pkts, "--cdf-unit", "packets",
                           "-n", n)
    as_bytes = dry_sizes(lg_bin, "--cdf", WEB, "-n", n)
    # The same flows, to the byte (interpolation rounds either way).
    assert len(as_packets) == len(as_bytes)
    assert all(abs(a - b) <= 1 for a, b in zip(as_packets, as_bytes))
    mean = sum(as_packets) / len(as_packets)
    assert mean == pytest.approx(1665830.8, rel=0.03)
    misread = dry_sizes(lg_bin, "--cdf", pkts, "-n", n)
    assert sum(misread) / len(misread) == pytest.approx(mean / MSS, rel=0.01)
    # Another packet size.
    big = dry_sizes(lg_bin, "--cdf", pkts, "--cdf-unit", "packets",
                    "--mss", "9000", "-n", "1000")
    assert all(abs(a - s * 9000 / MSS) <= 7
               for a, s in zip(big, as_bytes[:1000]))


def test_trafficgenerator_config_and_output(lg_bin, fg_server, tmp_path):
    """A TrafficGenerator client configuration: flows spread over its two
    servers, DSCP drawn by weight, its per-flow columns written."""
    servers = [fg_server(), fg_server()]
    pkts = packet_cdf(tmp_path / "CDF_dctcp.txt")
    conf = tmp_path / "client_config.txt"
    conf.write_text("# two servers, two classes\n"
                    "server 127.0.0.1 %d\nserver 127.0.0.1 %d\n"
                    "req_size_dist %s\n"
                    "dscp 0 25\ndscp 10 75\n"
                    "rate 0Mbps 100\nfanout 1 100\n" % (
                        servers[0].port, servers[1].port, pkts))
    out, js = tmp_path / "flows.txt", tmp_path / "fct.json"
    r = run([lg_bin.fg_client, "--config", str(conf), "--cdf-unit",
             "packets", "-n", "60", "-c", "4", "--output", str(out),
             "--output-format", "trafficgenerator", "--json", str(js),
             "--seed", "3", "-q"])
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in out.read_text().splitlines()]
    assert len(rows) == 60 and all(len(x) == 5 for x in rows)
    sizes = dry_sizes(lg_bin, "--cdf", WEB, "-n", "60", "--seed", "3")
    # size, FCT (us), DSCP, rate (0: none), goodput (Mbit/s)
    assert all(abs(a - b) <= 1 for a, b in zip(
        sorted(int(x[0]) for x in rows), sorted(sizes)))
    assert {x[2] for x in rows} == {"0", "10"}
    assert sum(x[2] == "10" for x in rows) > sum(x[2] == "0" for x in rows)
    assert all(x[3] == "0" and int(x[1]) > 0 for x in rows)
    for x in rows:      # goodput from the FCT before it was rounded
        size, fct, goodput = int(x[0]), int(x[1]), int(x[4])
        assert size * 8 / (fct + 0.5) - 1 <= goodput \
            <= size * 8 / (fct - 0.5)
    j = load_json(js)
    assert j["flows_completed"] == 60 and j["cdf_unit"] == "packets"
    assert j["dscp_weights"] == [[0, 25], [10, 75]]
    assert len(j["servers"]) == 2
    done = [s.stop()["responses_completed"] for s in servers]
    assert sum(done) == 60 and min(done) > 0


@pytest.mark.parametrize("line, message", [
    ("rate 500Mbps 10", "a per-flow sending rate limit is not implemented"),
    ("fanout 8 20", "(incast) are not implemented here; fanout 1 only"),
    ("colour blue", "unknown key"),
    ("dscp 64 1", "64 is not a DSCP"),
    ("server 127.0.0.1", 'expected "server HOST PORT"'),
])
def test_config_keys_it_cannot_honour_are_refused(lg_bin, tmp_path, line,
                                                   message):
    conf = tmp_path / "c.txt"
    conf.write_text("server 127.0.0.1 5001\nreq_size_dist %s\n%s\n"
                    % (WEB, line))
    r = run([lg_bin.fg_client, "--config", str(conf), "-n", "1"])
    assert r.returncode == 1
    assert "--config: %s:3:" % conf in r.stderr and message in r.stderr
