"""The OVS patch series and the files it adds (ovs-ext/) follow OVS's
coding style: OVS's own utilities/checkpatch.py passes on every patch of
ovs-patches/ and on every C file of ovs-ext/ (-f).  Seconds; the long
proof that each patch builds on its own is build-aux/check-patch-series.sh.
"""
import glob
import os
import subprocess
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCHES = sorted(glob.glob(os.path.join(TOP, "ovs-patches", "*.patch")))
EXT_C = sorted(glob.glob(os.path.join(TOP, "ovs-ext", "**", "*.[ch]"),
                         recursive=True))


@pytest.fixture(scope="module")
def checkpatch(build):
    path = build.path("ovs/pristine/utilities/checkpatch.py")
    if not os.path.exists(path):
        pytest.skip("%s not found (./build.sh unpacks OVS there)" % path)
    return path


def run(checkpatch, *args):
    res = subprocess.run([sys.executable, checkpatch] + list(args),
                         capture_output=True, text=True)
    return res.returncode, res.stdout + res.stderr


def test_there_is_something_to_check():
    assert PATCHES and EXT_C


@pytest.mark.parametrize("patch", PATCHES, ids=os.path.basename)
def test_patch_passes_checkpatch(checkpatch, patch):
    rc, out = run(checkpatch, patch)
    assert rc == 0, out


def test_ext_files_pass_checkpatch(checkpatch):
    rc, out = run(checkpatch, "-f", *EXT_C)
    assert rc == 0, out
    assert out.count("no obvious problems found") == len(EXT_C), out


def test_checkpatch_catches_a_violation(checkpatch, tmp_path):
    """The check can fail: a C file with a line over 79 columns and a
    missing space after 'if' does not pass."""
    bad = tmp_path / "bad.c"
    bad.write_text("int\nf(int x)\n{\n    if(x) {\n        return 1;\n"
                   "    }\n    return %s;\n}\n" % ("x + " * 20 + "x"))
    rc, out = run(checkpatch, "-f", str(bad))
    assert rc != 0, out

