"""The load generator's servers against clients that stop half-way: a
request cut off by the client's FIN, a half-closed connection waiting for
its answer, a partial request held open, idle connections, and more
idle connections than the server has descriptors (panda-adp-server on
load_generator/lg-evloop.c, panda-fg-server on its own loop).

No busy loop is asserted as CPU time over a wall-clock window (a spinning
server uses the whole window, an idle one nearly none); timeouts are
asserted as "not before the timeout" and "within a generous bound"."""

import json
import os
import resource
import socket
import struct
import subprocess
import time

from pandalab.loadgen import FgServer
from pandalab.sandbox import end_process

from lg_helpers import wait_output
from test_adps import Server as AdpServer, connect, req
from test_lg_server_limits import _cpu_seconds, recv_all, request, \
    wait_closed


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def cpu_share(pid, seconds=1.0):
    """The share of one CPU that 'pid' used over 'seconds'."""
    cpu0, t0 = _cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (_cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)


def wait_for(cond, timeout=30, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError("timed out waiting for %s" % what)


# ---- panda-adp-server (lg-evloop). -------------------------------------------

def test_adp_cut_request_then_fin_is_closed(lg_bin):
    """One byte of a request, then the client's FIN: the server closes the
    connection (it can never complete) instead of polling the byte for
    ever (it spun at 97% CPU with the descriptor leaked)."""
    s = AdpServer(lg_bin, "--work", "sleep")
    try:
        base = open_fds(s.proc.pid)
        c = connect(s.port)
        c.sendall(b"L")
        c.shutdown(socket.SHUT_WR)
        assert wait_closed(c)
        c.close()
        wait_for(lambda: open_fds(s.proc.pid) == base, 10,
                 "the server to close its side")
        assert cpu_share(s.proc.pid) < 0.2
    finally:
        counters = s.stop()
    assert counters["incomplete_eof"] == 1, counters
    assert sum(counters["handled"]) == 0


def test_adp_half_closed_client_gets_its_answers(lg_bin):
    """Two requests, then the client shuts down its side and waits: both
    are answered, then the connection closes; no busy loop meanwhile."""
    s = AdpServer(lg_bin, "--work", "sleep")
    try:
        c = connect(s.port)
        c.sendall(req("LATS", 1000, 1) + req("LATS", 1000, 2))
        c.shutdown(socket.SHUT_WR)
        got = recv_all(c, 64)
        assert [struct.unpack("!4sIQ", got[i:i + 16])[2]
                for i in range(0, len(got), 16)] == [1, 2]
        c.close()
        assert cpu_share(s.proc.pid, 0.5) < 0.2
    finally:
        counters = s.stop()
    assert sum(counters["handled"]) == 2


def test_adp_partial_request_waits_without_spinning(lg_bin):
    """Part of a request: the loop waits for the rest without polling what
    is there (no CPU), answers once it comes, and closes a connection
    whose rest does not come within --request-timeout."""
    s = AdpServer(lg_bin, "--work", "sleep", "--request-timeout", "300")
    try:
        c = connect(s.port)
        r = req("LATS", 100, 7)
        c.sendall(r[:5])
        assert cpu_share(s.proc.pid, 0.2) < 0.2
        c.sendall(r[5:])
        assert struct.unpack("!4sIQ", recv_all(c, 16))[2] == 7
        held = connect(s.port)
        held.sendall(r[:3])
        t0 = time.monotonic()
        assert wait_closed(held)
        assert time.monotonic() - t0 >= 0.25
        # The connection that completed its request is still served.
        c.sendall(req("LATS", 100, 8))
        assert struct.unpack("!4sIQ", recv_all(c, 16))[2] == 8
        c.close()
        held.close()
    finally:
        counters = s.stop()
    assert counters["request_timeouts"] == 1, counters
    assert sum(counters["handled"]) == 2


def test_adp_idle_timeout_and_connection_limit(lg_bin):
    """--idle-timeout closes a connection with no request under way;
    --max-connections makes the one idle the longest give way to a new
    client."""
    s = AdpServer(lg_bin, "--work", "sleep", "--idle-timeout", "400",
                  "--max-connections", "3")
    try:
        idle = [connect(s.port) for _ in range(3)]
        time.sleep(0.1)
        # The limit: a fourth client is served; the oldest idle one goes.
        c = connect(s.port)
        c.sendall(req("LATS", 100, 1))
        assert struct.unpack("!4sIQ", recv_all(c, 16))[2] == 1
        assert wait_closed(idle[0])
        # The idle timeout: the other idle ones are closed after it...
        t0 = time.monotonic()
        assert wait_closed(idle[1]) and wait_closed(idle[2])
        # ...(at most 25% late: the loop checks every quarter of it).
        assert time.monotonic() - t0 < 5
        for x in idle + [c]:
            x.close()
    finally:
        counters = s.stop()
    assert counters["evicted"] >= 1, counters
    assert counters["idle_closed"] >= 2, counters


# ---- panda-fg-server. ---------------------------------------------------------

def fg(lg_bin, tmp_path, **opts):
    return FgServer(lg_bin.build, str(tmp_path), bind="127.0.0.1", **opts)


def test_fg_half_close(lg_bin, tmp_path):
    """A request then the client's FIN: the whole answer, then the
    server's FIN; part of a request then a FIN: closed at once; no busy
    loop meanwhile."""
    s = fg(lg_bin, tmp_path)
    try:
        c = socket.create_connection(("127.0.0.1", s.port))
        c.sendall(request(100000))
        c.shutdown(socket.SHUT_WR)
        assert len(recv_all(c, 200000)) == 100000       # then EOF
        c.close()
        cut = socket.create_connection(("127.0.0.1", s.port))
        cut.sendall(request(10)[:7])
        cut.shutdown(socket.SHUT_WR)
        assert wait_closed(cut, 10)
        cut.close()
        assert cpu_share(s.proc.pid, 0.5) < 0.2
    finally:
        counters = s.stop()
    assert counters["responses_completed"] == 1
    assert counters["connections_closed"] == 2


def test_fg_idle_timeout(lg_bin, tmp_path):
    """An idle connection (none of a request under way) is closed after
    --idle-timeout, also one between requests; a busy one is not."""
    s = fg(lg_bin, tmp_path, idle_timeout="400")
    try:
        idle = socket.create_connection(("127.0.0.1", s.port))
        pooled = socket.create_connection(("127.0.0.1", s.port))
        pooled.sendall(request(10))
        assert len(recv_all(pooled, 10)) == 10
        t0 = time.monotonic()
        assert wait_closed(idle) and wait_closed(pooled)
        assert 0.35 <= time.monotonic() - t0 < 10
        idle.close()
        pooled.close()
        # A client that keeps asking is never idle that long.
        busy = socket.create_connection(("127.0.0.1", s.port))
        for _ in range(8):
            busy.sendall(request(10))
            assert len(recv_all(busy, 10)) == 10
            time.sleep(0.1)
        busy.close()
    finally:
        counters = s.stop()
    assert counters["idle_closed"] == 2, counters
    assert counters["responses_completed"] == 9


def test_fg_idle_connections_do_not_starve_a_client(lg_bin, tmp_path):
    """The attack: 100 idle connections against a server with 64
    descriptors.  Before, they held every descriptor until they went away
    and a real client waited in the listen queue; now the ones idle the
    longest make room, and the client is served at once."""
    limit = 64
    port_file = tmp_path / "port"
    json_path = tmp_path / "server.json"
    proc = subprocess.Popen(
        [lg_bin.fg_server, "--port", "0", "--port-file", str(port_file),
         "--json", str(json_path), "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                              (limit, limit)))
    held = []
    try:
        wait_for(lambda: port_file.exists() and port_file.read_text(), 30,
                 "the port file")
        port = int(port_file.read_text())
        for _ in range(100):
            held.append(socket.create_connection(("127.0.0.1", port)))
        t0 = time.monotonic()
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(request(1000))
        assert len(recv_all(c, 1000, timeout=30)) == 1000
        served = time.monotonic() - t0
        c.close()
    finally:
        for x in held:
            x.close()
        end_process(proc)
    counters = json.loads(json_path.read_text())
    assert counters["evicted"] >= 1, counters
    assert counters["responses_completed"] == 1
    print("fg-server, 100 idle connections, 64 descriptors: a new client "
          "served after %.3f s, %d idle connections evicted"
          % (served, counters["evicted"]))
