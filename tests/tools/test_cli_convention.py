"""Every program of the project follows one command-line convention
(docs/reference.md, "Command-line convention"; lib/cli/opt.h for the C
programs, pandaovs.cli for the Python ones): --version exits 0 naming the project's
version and git commit on stdout, --help exits 0 on stdout, and an unknown
option is a usage error: exit status 2, the message on stderr, nothing on
stdout.

The C programs come from the build tree ($PANDA_BUILD_DIR or <repo>/_build);
the Python ones are the launchers an operator runs."""

import os
import re
import subprocess
import sys

import pytest

import pandaovs
from pandaovs import cli, paths

BUILD = paths.BuildTree()

# (name --version prints, path relative to the build tree)
C_PROGRAMS = [
    ("panda-model", "tools/panda-model"),
    ("panda-bench", "tools/panda-bench"),
    ("panda-demo", "tools/panda-demo"),
    ("panda-sched-keys", "tools/panda-sched-keys"),
    ("panda-fg-server", "load_generator/panda-fg-server"),
    ("panda-fg-client", "load_generator/panda-fg-client"),
    ("panda-mc-client", "load_generator/panda-mc-client"),
    ("panda-adp-server", "load_generator/panda-adp-server"),
    ("panda-adp-client", "load_generator/panda-adp-client"),
    ("panda-cc", BUILD.BPF_CC_LOADER),
    ("panda-bpf", "bpf/panda-bpf"),
]

# (name --version prints, path relative to the source tree)
PY_PROGRAMS = [
    ("panda-qos", "tools/panda-qos"),
    ("panda-controller", "openflow/controller/panda_controller.py"),
    ("testbed/run.py", "testbed/run.py"),
    ("testbed/workload_switch.py", "testbed/workload_switch.py"),
    ("mininet/run.py", "mininet/run.py"),
    ("sim/run.py", "sim/run.py"),
    ("adps-experiments.py", "bench/adps-experiments.py"),
    ("bench-controller.py", "bench/bench-controller.py"),
    ("bench-qos.py", "bench/bench-qos.py"),
    ("bench-ingress.py", "bench/bench-ingress.py"),
    ("bench-ingress-split.py", "bench/bench-ingress-split.py"),
    ("bench-flood.py", "bench/bench-flood.py"),
    ("bench-forwarding.py", "bench/bench-forwarding.py"),
    ("bench-sched-forwarding.py", "bench/bench-sched-forwarding.py"),
    ("bench-catch-up.py", "bench/bench-catch-up.py"),
    ("bench-testbed-egress.py", "bench/bench-testbed-egress.py"),
    ("bench-bpf-forwarding.py", "bench/bench-bpf-forwarding.py"),
    ("bench-htb-top.py", "bench/bench-htb-top.py"),
]


def _c_command(rel):
    path = BUILD.path(rel)
    if not os.access(path, os.X_OK):
        if rel in (BUILD.BPF_CC_LOADER, "bpf/panda-bpf"):
            try:
                with open(BUILD.path("bpf/bpf-status")) as f:
                    why = f.read().strip()
            except OSError:
                why = "no bpf/bpf-status"
            pytest.skip("%s is not built: %s" % (rel, why))
        pytest.skip("%s is not built (run ./build.sh)" % path)
    return [path]


def _py_command(rel):
    return [paths.PY, os.path.join(paths.TOP, rel)]


PROGRAMS = ([pytest.param(name, lambda r=rel: _c_command(r), id=name)
             for name, rel in C_PROGRAMS]
            + [pytest.param(name, lambda r=rel: _py_command(r), id=rel)
               for name, rel in PY_PROGRAMS])


def run(cmd, *args):
    # A terminal-free environment: no colours, no completion requests.
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ARGC")}
    return subprocess.run(cmd + list(args), capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name, command", PROGRAMS)
def test_version(name, command):
    r = run(command(), "--version")
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(
        r"%s \(Panda-OVS\) %s \(git ([0-9a-f]{12}(-dirty)?|unknown)\)\n"
        % (re.escape(name), re.escape(pandaovs.__version__)),
        r.stdout), r.stdout
    assert r.stderr == ""


@pytest.mark.parametrize("name, command", PROGRAMS)
def test_help(name, command):
    r = run(command(), "--help")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert "usage" in r.stdout.lower() and "--version" in r.stdout


@pytest.mark.parametrize("name, command", PROGRAMS)
def test_bad_option(name, command):
    r = run(command(), "--no-such-option")
    assert r.returncode == cli.EXIT_USAGE, (r.stdout, r.stderr)
    assert r.stdout == ""
    # argparse names a missing subcommand or required option before an
    # unknown one; every program names the problem.
    assert "--no-such-option" in r.stderr or "required" in r.stderr, \
        r.stderr


def test_version_matches_configure():
    """The Python package's version is configure.ac's (AC_INIT)."""
    with open(os.path.join(paths.TOP, "configure.ac")) as f:
        m = re.search(r"^AC_INIT\(\[[^]]*\], *\[([^]]*)\]", f.read(), re.M)
    assert m and m.group(1) == pandaovs.__version__


def test_git_commit_header(tmp_path):
    """build-aux/git-commit.sh, which gives the C programs their commit:
    the tree's HEAD (and -dirty as git says), else a snapshot's
    .git-commit file, else "unknown"; the header is rewritten only when
    its content changes (so that make relinks only then)."""
    script = os.path.join(paths.TOP, "build-aux", "git-commit.sh")
    out = tmp_path / "git-commit.h"
    head = subprocess.run(["git", "-C", paths.TOP, "rev-parse",
                           "--short=12", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    subprocess.run([script, paths.TOP, str(out)], check=True)
    dirty = subprocess.run(["git", "-C", paths.TOP, "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    assert out.read_text() == '#define CLI_GIT_COMMIT "%s%s"\n' % (
        head.stdout.strip(), "-dirty" if dirty else "")
    os.utime(out, (1, 1))
    subprocess.run([script, paths.TOP, str(out)], check=True)
    assert os.stat(out).st_mtime == 1
    snap = tmp_path / "snapshot"
    snap.mkdir()
    subprocess.run([script, str(snap), str(out)], check=True)
    assert out.read_text() == '#define CLI_GIT_COMMIT "unknown"\n'
    (snap / ".git-commit").write_text("0123456789ab\n")
    subprocess.run([script, str(snap), str(out)], check=True)
    assert out.read_text() == '#define CLI_GIT_COMMIT "0123456789ab"\n'


@pytest.mark.parametrize("rel, line, want", [
    ("tools/panda-qos", "panda-qos add p1 --bur", {"--burst", "--burst-bits"}),
    ("testbed/run.py", "run.py --sch", {"--schemes"}),
    ("sim/run.py", "run.py qu", {"quick"}),
])
def test_shell_completion(rel, line, want):
    """Tab completion through python3-argcomplete (bash: eval "$(register-
    python-argcomplete panda-qos)"): the launchers answer the shell's
    request on file descriptor 8."""
    pytest.importorskip("argcomplete", reason="python3-argcomplete is not "
                        "installed (install-deps.sh installs it)")
    r, w = os.pipe()
    env = dict(os.environ, _ARGCOMPLETE="1", COMP_LINE=line,
               COMP_POINT=str(len(line)), _ARGCOMPLETE_IFS="\n")
    # bash hands the command descriptor 8 for the words, 9 for debugging.
    p = subprocess.Popen(
        ["bash", "-c", 'exec "$@" 8>&%d 9>/dev/null' % w, "complete",
         paths.PY, os.path.join(paths.TOP, rel)],
        env=env, pass_fds=(w,), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        out = f.read()
    assert p.wait(timeout=60) == 0
    assert set(out.split()) == want, out
