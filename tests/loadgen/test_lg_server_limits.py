"""panda-fg-server's exposure limits: loopback by default,
a request size limit, a timeout for half-sent requests, and no busy loop
when the process runs out of file descriptors."""
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

MAGIC = 0x50464731


def request(size, flags=0, flow_id=1):
    """A 24-byte flow request (load_generator/README.md)."""
    return struct.pack("!IBBHQQ", MAGIC, flags, 0, 0, flow_id, size)


def recv_all(sock, n, timeout=60):
    """Reads until 'n' bytes or EOF; returns what came."""
    sock.settimeout(timeout)
    got = b""
    while len(got) < n:
        chunk = sock.recv(min(65536, n - len(got)))
        if not chunk:
            break
        got += chunk
    return got


def wait_closed(sock, timeout=60):
    """True once the server has closed 'sock' (EOF or reset); the timeout
    is a safety net."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def server(lg_bin, tmp_path, **opts):
    return FgServer(lg_bin.build, str(tmp_path), bind="127.0.0.1", **opts)


def test_default_bind_is_loopback(lg_bin, tmp_path):
    """Without --bind the server listens on 127.0.0.1 only."""
    port_file = tmp_path / "port"
    proc = subprocess.Popen([lg_bin.fg_server, "--port", "0", "--port-file",
                             str(port_file)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        out = wait_output(proc.stderr, "thread(s)")
        port = int(port_file.read_text())
        assert "listening on 127.0.0.1:%d " % port in out, out
    finally:
        end_process(proc)


def test_request_above_max_size_is_refused(lg_bin, tmp_path):
    s = server(lg_bin, tmp_path, max_size="1000")
    try:
        with socket.create_connection(("127.0.0.1", s.port)) as c:
            c.sendall(request(1000))
            assert len(recv_all(c, 1000)) == 1000
            c.sendall(request(1001))
            assert wait_closed(c)
        # The largest size the protocol allows is refused the same way.
        with socket.create_connection(("127.0.0.1", s.port)) as c:
            c.sendall(request(1 << 40))
            assert wait_closed(c)
    finally:
        counters = s.stop()
        err = s.proc.stderr.read()
    assert counters["requests"] == 1
    assert counters["responses_completed"] == 1
    assert counters["requests_too_large"] == 2
    assert "request for 1001 bytes is above --max-size (1000 bytes)" in err
    assert "dropping connection from 127.0.0.1:" in err


def test_half_sent_request_times_out(lg_bin, tmp_path):
    """A connection with part of a request is closed after
    --request-timeout; an idle connection between requests (a client's
    pool) is not."""
    s = server(lg_bin, tmp_path, request_timeout="200")
    try:
        idle = socket.create_connection(("127.0.0.1", s.port))
        idle.sendall(request(10))
        assert len(recv_all(idle, 10)) == 10
        half = socket.create_connection(("127.0.0.1", s.port))
        half.sendall(request(10)[:10])
        start = time.monotonic()
        assert wait_closed(half)
        assert time.monotonic() - start >= 0.2
        # The idle connection outlived the half-sent one's timeout and
        # still serves.
        idle.sendall(request(20))
        assert len(recv_all(idle, 20)) == 20
        idle.close()
        half.close()
    finally:
        counters = s.stop()
        err = s.proc.stderr.read()
    assert counters["request_timeouts"] == 1
    assert counters["responses_completed"] == 2
    assert "10 of 24 request bytes within --request-timeout (200 ms)" in err


def _cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_descriptors_pauses_accepting(lg_bin, tmp_path):
    """With its descriptors used up by connections that each have a
    request under way (a large answer they do not read: none idle to make
    room, test_lg_server_eof), the server stops accepting for a while
    (backing off) instead of spinning on the still-readable listener; when
    descriptors are free again it accepts the clients that waited."""
    limit = 24
    port_file = tmp_path / "port"
    json_path = tmp_path / "server.json"
    proc = subprocess.Popen(
        [lg_bin.fg_server, "--port", "0", "--port-file", str(port_file),
         "--json", str(json_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                              (limit, limit)))
    held = []
    try:
        wait_output(proc.stderr, "thread(s)")
        port = int(port_file.read_text())
        # More clients than the server has descriptors: the kernel
        # completes their handshakes, the server cannot accept them all.
        for _ in range(limit + 7):
            c = socket.create_connection(("127.0.0.1", port))
            c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.sendall(request(1 << 30))
            held.append(c)
        held.append(socket.create_connection(("127.0.0.1", port)))
        wait_output(proc.stderr, "not accepting")
        cpu0, t0 = _cpu_seconds(proc.pid), time.monotonic()
        # The measurement window: the server must stay (nearly) idle.
        time.sleep(1.0)
        cpu, wall = _cpu_seconds(proc.pid) - cpu0, time.monotonic() - t0
        # Free the descriptors; the last client, never accepted so far,
        # is served once the server accepts again.
        last = held.pop()
        for c in held:
            c.close()
        held = []
        last.sendall(request(100))
        assert len(recv_all(last, 100)) == 100
        last.close()
    finally:
        for c in held:
            c.close()
        end_process(proc)
    counters = json.loads(json_path.read_text())
    total_wall = time.monotonic() - t0
    # Pauses start at 50 ms and double to 1 s: a handful per second, where
    # the old busy loop failed accept() as fast as the CPU allowed.
    assert 1 <= counters["accept_pauses"] <= 3 + total_wall / 0.05, counters
    assert cpu < 0.5 * wall, (cpu, wall)
    assert counters["responses_completed"] == 1
