#!/usr/bin/python3
"""Fuzz target: the controller's configuration loader
(pandaovs.controller.config.load_checked), the Python side's entry for
untrusted files.  Whatever the bytes, it returns a Config or raises
ConfigError; any other exception is a crash (the controller used to print
a traceback at every poll for some of them).

With atheris (pip install atheris, for /usr/bin/python3; install-deps.sh
does) it is a coverage-guided fuzzer over the instrumented package;
without it, a seeded random driver: the corpus, then mutations of it.
Same options either way (those of tests/fuzz/driver.c):

    fuzz_controller_config.py [-max_total_time=S] [-runs=N] [-seed=N]
                              [-artifact_prefix=DIR/] CORPUS...
"""

import os
import random
import sys
import tempfile
import time

try:
    import pandaovs  # noqa: F401
except ImportError:     # run directly: again, with python/ on PYTHONPATH
    import runpy
    runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "..", "python", "launch.py"),
                   {"SCRIPT": os.path.realpath(__file__)})

try:
    import atheris
except ImportError:
    atheris = None

if atheris:
    with atheris.instrument_imports():
        from pandaovs.controller import config
else:
    from pandaovs.controller import config

WORK = tempfile.mkdtemp(prefix="fuzz-controller-")
PATH = os.path.join(WORK, "c.json")


def test_one_input(data):
    with open(PATH, "wb") as f:
        f.write(data)
    try:
        cfg = config.load_checked(PATH)
    except config.ConfigError as e:
        assert str(e), "empty ConfigError message"
        return
    # A configuration that loads can be summarised and described.
    cfg.summary()
    for r in cfg.rules:
        r.describe()


def _options(argv):
    opts = {"max_total_time": 0.0, "runs": 10000, "seed": 1,
            "artifact_prefix": ""}
    paths = []
    for a in argv:
        if a.startswith("-") and "=" in a:
            k, v = a[1:].split("=", 1)
            if k in opts:
                opts[k] = type(opts[k])(v)
        elif not a.startswith("-"):
            paths.append(a)
    return opts, paths


def _corpus(paths):
    inputs = []
    for p in paths:
        names = ([os.path.join(p, n) for n in sorted(os.listdir(p))]
                 if os.path.isdir(p) else [p])
        for n in names:
            with open(n, "rb") as f:
                inputs.append(f.read())
    return inputs or [b"{}"]


TOKENS = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"NaN", b"Infinity",
          b"1e999", b"-1", b"0x", b'"rules"', b'"policy"', b'"id"',
          b'"match"', b'"cookie"', b"null", b"true", b"\xff", b"\\u0000",
          b'"thresholds"', b'"weights"', b'"dpids"', b'"next"']


def _mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        pos = rng.randint(0, len(b))
        op = rng.randrange(5)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[pos:pos] = rng.choice(TOKENS)
        elif op == 2 and b:
            del b[pos:pos + rng.randint(1, 8)]
        elif op == 3 and b:
            start = rng.randrange(len(b))
            b[pos:pos] = b[start:start + rng.randint(1, 32)]
        else:
            b[pos:pos] = str(rng.choice([0, 1, 255, 65536, 2 ** 32,
                                         2 ** 64, -2 ** 63])).encode()
    return bytes(b)


def plain_driver(argv):
    opts, paths = _options(argv)
    corpus = _corpus(paths)
    rng = random.Random(opts["seed"])
    start, n = time.monotonic(), 0
    current = b""
    try:
        for current in corpus:
            test_one_input(current)
            n += 1
        while True:
            if opts["max_total_time"] > 0:
                if time.monotonic() - start >= opts["max_total_time"]:
                    break
            elif n - len(corpus) >= opts["runs"]:
                break
            current = _mutate(rng, rng.choice(corpus))
            test_one_input(current)
            n += 1
    except BaseException:
        name = "%scrash-controller-%d" % (opts["artifact_prefix"], n)
        with open(name, "wb") as f:
            f.write(current)
        print("fuzz_controller_config: crash on input saved as %s" % name,
              file=sys.stderr)
        raise
    print("fuzz_controller_config: plain driver (no coverage feedback): %d "
          "executions (%d corpus inputs, seed %d) in %.1f s, no crash"
          % (n, len(corpus), opts["seed"], time.monotonic() - start))


def main():
    if atheris and os.environ.get("PANDA_FUZZ_PLAIN") != "1":
        atheris.Setup(sys.argv, test_one_input)
        atheris.Fuzz()
    else:
        plain_driver(sys.argv[1:])


if __name__ == "__main__":
    main()
