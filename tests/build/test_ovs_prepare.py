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


# The files the series adds (ovs-ext/): copied after the patches, each
# named by a patch's build glue.
GLUE_PATCH = ("--- a/lib/automake.mk\n+++ b/lib/automake.mk\n@@ -1 +1,2 @@\n"
              " SOURCES = lib/a.c\n+SOURCES += lib/new.c\n")


@pytest.fixture
def ext_setup(tmp_path):
    src = tmp_path / "upstream" / "openvswitch"
    (src / "lib").mkdir(parents=True)
    (src / "lib" / "a.c").write_text("int a;\n")
    (src / "lib" / "automake.mk").write_text("SOURCES = lib/a.c\n")
    tb = tmp_path / "ovs.tar.gz"
    with tarfile.open(tb, "w:gz") as t:
        t.add(src, arcname="openvswitch")
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "series").write_text("0001-glue.patch\n")
    (patches / "0001-glue.patch").write_text(GLUE_PATCH)
    ext = tmp_path / "ext"
    (ext / "lib").mkdir(parents=True)
    (ext / "lib" / "new.c").write_text("int n;\n")
    (ext / "README.md").write_text("not an OVS file\n")
    return tb, patches, ext, tmp_path / "out"


def prepare_ext(tb, patches, out, ext, check=True):
    # autoreconf is not wanted here: the fixture's glue is no real
    # automake input, so stub it out through PATH.
    stub = out.parent / "stub"
    stub.mkdir(exist_ok=True)
    (stub / "autoreconf").write_text("#!/bin/sh\nexit 0\n")
    (stub / "autoreconf").chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (stub, os.environ["PATH"]))
    return subprocess.run(["sh", SCRIPT, str(tb), str(patches), str(out),
                           str(ext)], capture_output=True, text=True,
                          check=check, env=env)


def test_ext_files_are_added_after_the_patches(ext_setup):
    tb, patches, ext, out = ext_setup
    prepare_ext(tb, patches, out, ext)
    assert (out / "src" / "lib" / "new.c").read_text() == "int n;\n"
    assert "lib/new.c" in (out / "src" / "lib" / "automake.mk").read_text()
    # The directory's README describes it; it is no OVS file.
    assert not (out / "src" / "README.md").exists()


def test_ext_change_copies_only_that_file(ext_setup):
    tb, patches, ext, out = ext_setup
    prepare_ext(tb, patches, out, ext)
    new, a = out / "src" / "lib" / "new.c", out / "src" / "lib" / "a.c"
    old = 10**18
    for p in (new, a):
        os.utime(p, ns=(old, old))
    (ext / "lib" / "new.c").write_text("int n = 1;\n")
    res = prepare_ext(tb, patches, out, ext)
    assert "1 file(s) changed" in res.stdout
    assert new.read_text() == "int n = 1;\n"
    assert new.stat().st_mtime_ns > old
    assert a.stat().st_mtime_ns == old
    # Removed from ovs-ext/ (and from the glue): gone from the tree too.
    (ext / "lib" / "new.c").unlink()
    (patches / "series").write_text("")
    prepare_ext(tb, patches, out, ext)
    assert not new.exists()


def test_ext_file_that_ovs_has_is_refused(ext_setup):
    tb, patches, ext, out = ext_setup
    (ext / "lib" / "a.c").write_text("int a = 2;\n")
    res = prepare_ext(tb, patches, out, ext, check=False)
    assert res.returncode != 0
    assert "already has lib/a.c; change it with a patch instead" in res.stderr


def test_ext_file_no_glue_names_is_refused(ext_setup):
    tb, patches, ext, out = ext_setup
    (patches / "series").write_text("")
    res = prepare_ext(tb, patches, out, ext, check=False)
    assert res.returncode != 0
    assert ("no automake.mk or Makefile.am of the patched tree names "
            "lib/new.c") in res.stderr
