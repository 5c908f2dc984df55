"""pandaovs.cli: sizes, rates and durations read as the C programs read
them (tests/vectors/cli-units.txt is shared with tests/unit/test-cli.c),
the argparse types' errors, --version and the exit statuses."""

import argparse
import re
import os

import pytest

from pandaovs import cli, paths


def vectors():
    with open(os.path.join(paths.TOP, "tests", "vectors",
                           "cli-units.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                kind, text, want = line.split()
                yield pytest.param(kind, text, want, id="%s-%s" % (kind,
                                                                   text))


@pytest.mark.parametrize("kind, text, want", list(vectors()))
def test_unit_vectors(kind, text, want):
    parse = {"size": cli.parse_size, "rate": cli.parse_rate,
             "duration": cli.parse_duration}[kind]
    if want == "error":
        with pytest.raises(ValueError):
            parse(text)
    else:
        assert parse(text) == pytest.approx(float(want), rel=1e-9, abs=0)
        if kind == "size":
            assert isinstance(parse(text), int)


def test_bare_numbers_take_the_option_s_unit():
    assert cli.parse_rate("50", bare=1e6) == 50e6
    assert cli.parse_rate("50M", bare=1e6) == 50e6
    assert cli.parse_duration("90", bare=60) == 5400
    assert cli.parse_duration("90s", bare=60) == 90


def test_argparse_types():
    p = cli.ArgumentParser(prog="x")
    p.add_argument("--burst", type=cli.size(1514, 10**6))
    p.add_argument("--rate", type=cli.rate(bare=1e6, lo=1))
    p.add_argument("--wait", type=cli.duration(hi=60))
    a = p.parse_args(["--burst", "3Ki", "--rate", "50", "--wait", "500ms"])
    assert (a.burst, a.rate, a.wait) == (3072, 50e6, 0.5)
    for args, msg in ((["--burst", "1k"], "1k is out of range [1514, "
                       "1000000] bytes"),
                      (["--burst", "ten"], "'ten' is not a size"),
                      (["--wait", "2m"], "2m is out of range [0, 60] s")):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(msg)):
            p._option_string_actions[args[0]].type(args[1])


def test_version_and_usage_exit(capsys):
    p = cli.ArgumentParser(prog="testbed/run.py")
    with pytest.raises(SystemExit) as e:
        p.parse_args(["--version"])
    assert e.value.code == cli.EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("testbed/run.py (Panda-OVS) %s (git "
                          % cli.__version__)
    with pytest.raises(SystemExit) as e:
        p.parse_args(["--bogus"])
    assert e.value.code == cli.EXIT_USAGE
    assert "--bogus" in capsys.readouterr().err
