"""Helpers of the load generator tests (the fixtures lg_bin, fg_server and
memcached are in the root conftest.py)."""
import json
import math
import os
import select
import socket
import subprocess
import time

from pandaovs import paths


def cdf(name):
    return paths.cdf(name)


def run(cmd, timeout=120, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout, **kw)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_flows(path):
    """Parses a panda-fg-client --output file into dicts."""
    flows = []
    with open(path) as f:
        header = f.readline()
        assert header.startswith("# id size_bytes start_s end_s fct_us")
        for line in f:
            fid, size, start, end, fct, recv, done, note = line.split()
            flows.append({
                "id": int(fid), "size": int(size), "start": float(start),
                "end": None if end == "-" else float(end),
                "fct": None if fct == "-" else float(fct),
                "received": int(recv), "completed": done == "1",
                "note": note})
    return flows


def nearest_rank(values, p):
    """Reference percentile: the nearest-rank definition the tools use."""
    v = sorted(values)
    if not v:
        return None
    if p <= 0:
        return v[0]
    rank = max(1, math.ceil(p * len(v) / 100.0 - 1e-9))
    return v[min(rank, len(v)) - 1]


def wait_output(stream, text, timeout=60):
    """Reads from a subprocess pipe until 'text' appears (works with the
    '\\r'-terminated progress line); returns what was read."""
    fd = stream.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in got:
        left = deadline - time.monotonic()
        if left <= 0:
            raise RuntimeError("no %r in %r" % (text, got))
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("EOF before %r in %r" % (text, got))
            got += chunk
    return got.decode(errors="replace")



def memcached_gets(port):
    """memcached's own count of GETs served ('stats': cmd_get)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    for line in data.decode().splitlines():
        if line.startswith("STAT cmd_get "):
            return int(line.split()[2])
    raise RuntimeError("no cmd_get in memcached's stats: %r" % data[:200])


def wait_gets(port, n, client, timeout=60):
    """Waits until memcached has served 'n' GETs (of 'client', a Popen that
    must still run), so a test acts on the run's state, not on a guess of
    how fast it goes."""
    deadline = time.monotonic() + timeout
    while memcached_gets(port) < n:
        assert client.poll() is None, "the client ended first"
        assert time.monotonic() < deadline, "fewer than %d GETs" % n
        time.sleep(0.01)
