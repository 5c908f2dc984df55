"""build-aux/ovs-prepare.sh: patched tree, incremental sync, clear errors."""
import os
import subprocess
import tarfile

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(TOP, "build-aux", "ovs-prepare.sh")


def make_tarball(tmp_path):
    src = tmp_path / "upstream" / "openvswitch"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "a.c").write_text("int a;\n")
    (src / "lib" / "b.c").write_text("int b;\n")
    (src / "README").write_text("upstream\n")
    tb = tmp_path / "ovs.tar.gz"
    with tarfile.open(tb, "w:gz") as t:
        t.add(src, arcname="openvswitch")
    return tb


def patch_text(old, new, path="lib/a.c"):
    return ("--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-%s\n+%s\n"
            % (path, path, old, new))


def prepare(tb, patches, out, check=True):
    return subprocess.run(["sh", SCRIPT, str(tb), str(patches), str(out)],
                          capture_output=True, text=True, check=check)


@pytest.fixture
def setup(tmp_path):
    tb = make_tarball(tmp_path)
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "series").write_text("# comment\n0001-a.patch\ntopic.series\n")
    (patches / "topic.series").write_text("0002-b.patch  # trailing\n")
    (patches / "0001-a.patch").write_text(patch_text("int a;", "int a = 1;"))
    (patches / "0002-b.patch").write_text(
        patch_text("int b;", "int b = 2;", "lib/b.c"))
    return tb, patches, tmp_path / "out"


def test_applies_series_and_includes(setup):
    tb, patches, out = setup
    prepare(tb, patches, out)
    assert (out / "src" / "lib" / "a.c").read_text() == "int a = 1;\n"
    assert (out / "src" / "lib" / "b.c").read_text() == "int b = 2;\n"
    assert (out / "src" / "README").read_text() == "upstream\n"


def test_incremental_copies_only_changed_files(setup):
    tb, patches, out = setup
    prepare(tb, patches, out)
    a, b, readme = (out / "src" / "lib" / "a.c", out / "src" / "lib" / "b.c",
                    out / "src" / "README")
    # Date the copies back (rsync -c compares contents, not times), so a
    # rewritten file is seen whatever the clock's granularity.
    old = 10**18
    for p in (a, b, readme):
        os.utime(p, ns=(old, old))
    before = {p: old for p in (a, b, readme)}
    (patches / "0001-a.patch").write_text(patch_text("int a;", "int a = 3;"))
    res = prepare(tb, patches, out)
    assert "1 file(s) changed" in res.stdout
    assert a.read_text() == "int a = 3;\n"
    assert a.stat().st_mtime_ns > before[a]
    assert b.stat().st_mtime_ns == before[b]
    assert readme.stat().st_mtime_ns == before[readme]
    res = prepare(tb, patches, out)
    assert "up to date" in res.stdout


def test_removed_patch_restores_upstream_file(setup):
    tb, patches, out = setup
    prepare(tb, patches, out)
    (patches / "topic.series").write_text("")
    prepare(tb, patches, out)
    assert (out / "src" / "lib" / "b.c").read_text() == "int b;\n"


def test_patch_that_does_not_apply(setup):
    tb, patches, out = setup
    (patches / "0002-b.patch").write_text(
        patch_text("int zzz;", "int b = 2;", "lib/b.c"))
    res = prepare(tb, patches, out, check=False)
    assert res.returncode != 0
    assert "patch 0002-b.patch does not apply" in res.stderr


def test_missing_patch_and_tarball(setup, tmp_path):
    tb, patches, out = setup
    (patches / "series").write_text("0009-missing.patch\n")
    res = prepare(tb, patches, out, check=False)
    assert res.returncode != 0
    assert "0009-missing.patch, which does not exist" in res.stderr
    res = prepare(tmp_path / "nope.tar.gz", patches, out, check=False)
    assert res.returncode != 0
    assert "cannot read" in res.stderr
