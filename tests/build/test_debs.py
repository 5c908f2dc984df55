"""The Debian packages of packaging/build-debs.sh.

Needs the .deb files: tests/run.sh builds them into $PANDA_DEB_DIR before
pytest; by hand, packaging/build-debs.sh (default output _build-deb/).
Checks lintian, the contents (everything under the project's own
prefix directories but for the OVS units and bash completion, the programs
an operator needs present and runnable, their manual pages built by
help2man), the dependencies (dh-python's, os-ken for the controller), that
no maintainer script enables or starts a service, the versions, and that
the packages unpack beside Debian's openvswitch-common with no shared file
(a real dpkg unpack into a scratch root) and share no path with
openvswitch-switch.
"""

import glob
import os
import re
import subprocess

import pytest

from pandaovs import paths

DEB_DIR = os.environ.get("PANDA_DEB_DIR", os.path.join(paths.TOP,
                                                       "_build-deb"))
PACKAGES = ("panda-openvswitch", "panda-ovs-tools", "panda-controller")
# Where the packages may put files: the add-on prefix and its /etc and /var
# directories (FHS 3.13), the OVS units (named panda-*) and OVS's bash
# completion where systemd and bash-completion look, and Debian's
# per-package files (documentation, lintian overrides, dh_python3's hook),
# checked below to be named after their package.
ALLOWED = ("/opt/panda-ovs/", "/etc/opt/panda-ovs/", "/var/opt/panda-ovs/",
           "/lib/systemd/system/panda-",
           "/usr/share/bash-completion/completions/ovs-",
           "/usr/share/python3/runtime.d/",
           "/usr/share/doc/", "/usr/share/lintian/overrides/")
# The manual page (help2man, man/automake.mk) of every program of a
# package, compressed (debian/rules: dh_compress).
MAN1 = "/opt/panda-ovs/share/man/man1/%s.1.gz"
EXPECTED = {
    "panda-openvswitch": [
        "/opt/panda-ovs/sbin/ovs-vswitchd", "/opt/panda-ovs/sbin/ovsdb-server",
        "/opt/panda-ovs/bin/ovs-vsctl", "/opt/panda-ovs/bin/ovs-ofctl",
        "/opt/panda-ovs/bin/ovs-appctl", "/opt/panda-ovs/bin/ovsdb-tool",
        "/opt/panda-ovs/share/openvswitch/vswitch.ovsschema",
        "/lib/systemd/system/panda-ovsdb-server.service",
        "/lib/systemd/system/panda-ovs-vswitchd.service",
        "/opt/panda-ovs/libexec/panda-ovs/db-prepare",
        "/usr/share/bash-completion/completions/ovs-appctl",
        "/usr/share/bash-completion/completions/ovs-vsctl",
    ],
    "panda-controller": [
        "/opt/panda-ovs/bin/panda-controller", MAN1 % "panda-controller",
    ],
    "panda-ovs-tools": [
        "/opt/panda-ovs/bin/panda-model", "/opt/panda-ovs/bin/panda-qos",
        "/opt/panda-ovs/bin/panda-fg-server",
        "/opt/panda-ovs/bin/panda-fg-client",
        "/opt/panda-ovs/bin/panda-mc-client",
        "/opt/panda-ovs/lib/panda-ovs/python/pandaovs/qos.py",
        "/opt/panda-ovs/lib/panda-ovs/python/pandaovs/install_paths.py",
        "/opt/panda-ovs/lib/panda-ovs/libpanda-policy.so.1",
        "/opt/panda-ovs/share/panda-ovs/cdf/web-search.cdf",
        "/opt/panda-ovs/share/panda-ovs/cdf/memcached-values.cdf",
        "/opt/panda-ovs/bin/panda-cc",
        "/opt/panda-ovs/lib/panda-ovs/bpf/panda-dctcp.bpf.o",
    ],
}


@pytest.fixture(scope="module")
def debs():
    found = {}
    for p in PACKAGES:
        files = glob.glob(os.path.join(DEB_DIR, p + "_*.deb"))
        if len(files) != 1:
            pytest.skip("no single %s package in %s (packaging/build-debs.sh "
                        "makes them; set PANDA_DEB_DIR)" % (p, DEB_DIR))
        found[p] = files[0]
    return found


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", deb, name], check=True,
                          capture_output=True, text=True).stdout.strip()


def contents(deb):
    """{path: type char} of a .deb ('d' directory, '-' file, 'l' link)."""
    out = subprocess.run(["dpkg-deb", "-c", deb], check=True,
                         capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split(None, 5)
        name = parts[5].split(" -> ")[0]
        res[name[1:].rstrip("/") or "/"] = parts[0][0]
    return res


def test_lintian_clean(debs):
    if not os.access("/usr/bin/lintian", os.X_OK):
        pytest.skip("lintian is not installed (./install-deps.sh)")
    res = subprocess.run(["lintian", "--fail-on", "error,warning",
                          "--no-tag-display-limit"] + list(debs.values()),
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


def test_versions_come_from_git(debs):
    tools = field(debs["panda-ovs-tools"], "Version")
    m = re.fullmatch(r"(\d+\.\d+\.\d+)\+git(\d+)\.g([0-9a-f]{12})"
                     r"(\.dirty[0-9a-f]{8})?", tools)
    assert m, tools
    with open(os.path.join(paths.TOP, "configure.ac")) as f:
        assert "[%s]" % m.group(1) in f.read()
    # The commit exists in this repository and its count matches.
    count = subprocess.run(["git", "-C", paths.TOP, "rev-list", "--count",
                            m.group(3)], capture_output=True, text=True)
    if count.returncode == 0:
        assert count.stdout.strip() == m.group(2)
    assert field(debs["panda-openvswitch"], "Version") == "3.1.0+panda" + tools


def test_contents_stay_in_their_prefix(debs):
    for pkg, deb in debs.items():
        files = contents(deb)
        stray = [p for p, t in files.items() if t != "d"
                 and not p.startswith(ALLOWED)]
        assert not stray, "%s installs outside its prefix: %s" % (pkg, stray)
        missing = [p for p in EXPECTED[pkg] if p not in files]
        assert not missing, "%s lacks %s" % (pkg, missing)
        for d in ("/usr/share/doc/", "/usr/share/lintian/overrides/",
                  "/usr/share/python3/runtime.d/"):
            assert not [p for p in files if p.startswith(d) and files[p] != "d"
                        and not p.startswith(d + pkg)], pkg
    # Every program has its manual page, in the program's package.
    for pkg, deb in debs.items():
        files = contents(deb)
        for prog in [p for p in files if p.startswith("/opt/panda-ovs/bin/"
                                                      "panda-")]:
            assert MAN1 % os.path.basename(prog) in files, (pkg, prog)


def test_maintainer_scripts_start_nothing(debs, tmp_path):
    """The units are installed inert (dh_installsystemd --no-enable
    --no-start --no-stop-on-upgrade): no maintainer script starts, stops
    or enables a service (an administrator's enabling is kept across an
    upgrade, debhelper's was-enabled check); what they do is debhelper's
    bookkeeping, dh_python3's byte-compiling and panda-openvswitch's purge
    cleanup."""
    for pkg, deb in debs.items():
        d = tmp_path / pkg
        subprocess.run(["dpkg-deb", "-e", deb, str(d)], check=True)
        for name in ("preinst", "postinst", "prerm", "postrm"):
            path = d / name
            if not path.exists():
                continue
            text = path.read_text()
            # deb-systemd-invoke and invoke-rc.d only start, stop or
            # restart; of systemctl, only daemon-reload (reading the units'
            # files anew, no unit started) may be there.
            for bad in ("deb-systemd-invoke", "invoke-rc.d"):
                assert bad not in text, (pkg, name, bad)
            assert not re.findall(r"systemctl(?![^\n]*daemon-reload)[^\n]*",
                                  text), (pkg, name)
            lines = text.splitlines()
            for i, line in enumerate(lines):
                if "deb-systemd-helper enable" in line:
                    assert "was-enabled" in "".join(lines[max(0, i - 3):i]), \
                        (pkg, name, line)


def test_units_start_packaged_programs(debs, tmp_path):
    """Each OVS unit's commands are programs of the packages, at the
    paths the units name, and the vswitchd unit needs the database's."""
    subprocess.run(["dpkg-deb", "-x", debs["panda-openvswitch"],
                    str(tmp_path)], check=True)
    units = sorted((tmp_path / "lib/systemd/system").glob("panda-*.service"))
    assert [u.name for u in units] == ["panda-ovs-vswitchd.service",
                                       "panda-ovsdb-server.service"]
    for unit in units:
        text = unit.read_text().replace("\\\n", " ")
        cmds = re.findall(r"^Exec\w*=[-@+!:]*(\S+)", text, re.M)
        assert cmds, unit.name
        for cmd in cmds:
            path = tmp_path / cmd.lstrip("/")
            assert path.is_file() and os.access(path, os.X_OK), (unit, cmd)
        assert re.search(r"^WantedBy=multi-user.target$", text, re.M), unit
    vswitchd = units[0].read_text()
    assert re.search(r"^Requires=panda-ovsdb-server.service$", vswitchd, re.M)


def test_dependencies(debs, tmp_path):
    """dh-python's interpreter dependency and byte-compiling for the
    Python of both packages that carry some (pandaovs, OVS's library),
    os-ken for the controller only."""
    tools = field(debs["panda-ovs-tools"], "Depends")
    assert re.search(r"\bpython3(:any)?\b", tools), tools
    for pkg, pydir in (("panda-ovs-tools", "/opt/panda-ovs/lib/panda-ovs/"
                        "python"),
                       ("panda-openvswitch", "/opt/panda-ovs/share/"
                        "openvswitch/python")):
        assert re.search(r"\bpython3(:any)?\b",
                         field(debs[pkg], "Depends")), pkg
        d = tmp_path / pkg
        subprocess.run(["dpkg-deb", "-e", debs[pkg], str(d)], check=True)
        postinst = (d / "postinst").read_text()
        assert re.search(r"py3compile .*%s" % re.escape(pydir), postinst), \
            (pkg, postinst)
    assert "os-ken" not in tools
    ctl = field(debs["panda-controller"], "Depends")
    assert "python3-os-ken" in ctl and "panda-ovs-tools" in ctl, ctl


def test_programs_run_from_the_package(debs, tmp_path):
    """Unpacked, the programs start: OVS reports the patched 3.1.0 and
    knows the panda action, panda-model its usage, the pandaovs package
    imports (panda-qos's module)."""
    for deb in debs.values():
        subprocess.run(["dpkg-deb", "-x", deb, str(tmp_path)], check=True)
    root = str(tmp_path)
    out = subprocess.run([root + "/opt/panda-ovs/sbin/ovs-vswitchd",
                          "--version"], capture_output=True, text=True,
                         check=True).stdout
    assert "3.1.0" in out, out
    # The panda action is in this ovs-ofctl's parser: a bad policy is
    # refused by name, which a stock ovs-ofctl cannot do.
    ofctl = root + "/opt/panda-ovs/bin/ovs-ofctl"
    res = subprocess.run([ofctl, "parse-flow",
                          "actions=panda(id=1,thresholds=300/100)"],
                         capture_output=True, text=True)
    assert res.returncode != 0 and "thresholds" in res.stderr, res
    res = subprocess.run([ofctl, "parse-flow",
                          "actions=panda(id=1,thresholds=100/300)"],
                         capture_output=True, text=True)
    assert res.returncode == 0 and "panda(id=1" in res.stdout, res
    res = subprocess.run([root + "/opt/panda-ovs/bin/panda-model", "--help"],
                         capture_output=True, text=True)
    assert res.returncode == 0 and "panda-model" in res.stdout, res
    pyroot = root + "/opt/panda-ovs/lib/panda-ovs/python"
    res = subprocess.run(["/usr/bin/python3", "-m", "pandaovs.qos", "add", "--help"],
                         capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=pyroot), cwd=root)
    assert res.returncode == 0 and "--levels" in res.stdout, res
    with open(root + "/opt/panda-ovs/bin/panda-qos") as f:
        assert "PYTHONPATH=/opt/panda-ovs/lib/panda-ovs/python" in f.read()


def test_installed_tree_needs_no_checkout(debs, tmp_path):
    """Unpacked into a scratch root, with no checkout anywhere on the path
    (an empty working directory, no PYTHONPATH, no PANDA_BUILD_DIR): the
    package binds its own policy library, panda-controller checks a
    configuration written by its own panda-model with a CDF it ships, and
    --auto-tune's default model is the packaged panda-model."""
    for deb in debs.values():
        subprocess.run(["dpkg-deb", "-x", deb, str(tmp_path)], check=True)
    prefix = str(tmp_path / "opt" / "panda-ovs")
    pyroot = prefix + "/lib/panda-ovs/python"
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PANDA_BUILD_DIR")}
    env["PATH"] = "/usr/bin:/bin"

    def py(code):
        res = subprocess.run(["/usr/bin/python3", "-c", code],
                             env=dict(env, PYTHONPATH=pyroot),
                             cwd=str(work), capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0, res.stderr
        return res.stdout.split("\n")

    lib, cdf, model, top, text = py(
        "from pandaovs import paths, policy\n"
        "p = policy.Policy.from_text('id=3,thresholds=10/20')\n"
        "print(paths.policy_library()); print(paths.cdf('web-search.cdf'))\n"
        "print(paths.tool('panda-model')); print(paths.INSTALLED)\n"
        "print(p.text())")[:5]
    assert lib == prefix + "/lib/panda-ovs/libpanda-policy.so.1"
    assert cdf == prefix + "/share/panda-ovs/cdf/web-search.cdf"
    assert model == prefix + "/bin/panda-model"
    assert top == "True" and text.startswith("id=3,threshold=0,")
    assert os.path.isfile(cdf) and os.access(model, os.X_OK)

    # The product only (docs/design.md, "Product and lab"): no lab package
    # installed, and every installed module imports without a checkout,
    # so none of them needs the lab.
    assert os.listdir(pyroot) == ["pandaovs"], os.listdir(pyroot)
    mods = sorted(
        os.path.relpath(os.path.join(d, f), pyroot)[:-3]
        .replace(os.sep, ".").replace(".__init__", "")
        for d, _, files in os.walk(pyroot) for f in files
        if f.endswith(".py") and f != "__main__.py")
    assert "pandaovs.controller.app" in mods and "pandaovs.qos" in mods, mods
    imported = py("import importlib\n"
                  "for m in %r:\n"
                  "    importlib.import_module(m); print(m)" % mods)
    assert imported[:-1] == mods, imported

    # A policy from the packaged panda-model on a packaged CDF, checked by
    # the packaged controller (through its launcher): with the bridges it
    # is for, the file alone is the controller's configuration; without
    # them it is refused, naming what is missing.
    policy = work / "policy.json"

    def model_then_check(*extra):
        res = subprocess.run([model, "--pias", "--id", "2", "--cdf", cdf,
                              "--load", "0.5", "--levels", "4", "-q",
                              "-o", str(policy)] + list(extra), env=env,
                             cwd=str(work), capture_output=True, text=True,
                             timeout=120)
        assert res.returncode == 0, res.stderr
        return subprocess.run([prefix + "/bin/panda-controller", "check",
                               "--config", str(policy)], env=env,
                              cwd=str(work), capture_output=True, text=True,
                              timeout=120)

    res = model_then_check()
    assert res.returncode == 1 and "switches: missing" in res.stderr, res
    res = model_then_check("--switches", "0xb1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "panda(id=2,kind=pias," in res.stdout, res.stdout

    # --auto-tune's model path without --auto-tune-model: the packaged
    # panda-model, accepted by the settings check (an executable).
    settings = py(
        "from pandaovs.controller import cli\n"
        "def show(args):\n"
        "    s = cli._autotune_settings(args)\n"
        "    print(s.model if s else 'refused')\n"
        "cli.cmd_run = show\n"
        "cli.main(['run', '--config', %r, '--auto-tune',\n"
        "          '--auto-tune-load', '0.5', '--auto-tune-cdf', %r])"
        % (str(policy), cdf))[0]
    assert settings == model


def debian_ovs(tmp_path, name):
    """Debian's package NAME, fetched with apt (skip when apt cannot)."""
    res = subprocess.run(["apt-get", "download", name], cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=300)
    files = glob.glob(str(tmp_path / (name + "_*.deb")))
    if res.returncode != 0 or not files:
        pytest.skip("cannot fetch Debian's %s: %s" % (name, res.stderr[-300:]))
    return files[0]


def test_coinstalls_with_debian_openvswitch(debs, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("dpkg --root unpacks as root")
    common = debian_ovs(tmp_path, "openvswitch-common")
    switch = debian_ovs(tmp_path, "openvswitch-switch")
    ours = set()
    for deb in debs.values():
        ours |= {p for p, t in contents(deb).items() if t != "d"}
    for deb in (common, switch):
        theirs = {p for p, t in contents(deb).items() if t != "d"}
        assert not ours & theirs, sorted(ours & theirs)[:20]
    # A real unpack of openvswitch-common and ours into an empty dpkg
    # root: dpkg refuses a file another package owns ("trying to
    # overwrite").
    root = tmp_path / "root"
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates",
              "var/lib/dpkg/triggers"):
        (root / d).mkdir(parents=True)
    for f in ("status", "available"):
        (root / "var/lib/dpkg" / f).touch()
    res = subprocess.run(["dpkg", "--root=" + str(root), "--force-depends",
                          "--unpack", common] + list(debs.values()),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    status = (root / "var/lib/dpkg/status").read_text()
    for pkg in ("openvswitch-common",) + PACKAGES:
        assert re.search(r"Package: %s\n(.+\n)*?Status: install ok unpacked"
                         % re.escape(pkg), status), pkg
    # Both ovs-ofctl: Debian's and the patched one.
    assert (root / "usr/bin/ovs-ofctl").exists()
    assert (root / "opt/panda-ovs/bin/ovs-ofctl").exists()
