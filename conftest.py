"""pytest configuration shared by every test directory.

Makes tests/pylib importable (ovs_sandbox) and provides 'build_dir': the
build tree named by PANDA_BUILD_DIR (tests/run.sh sets it), else ./_build.
"""
import os
import sys

import pytest

TOP = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(TOP, "tests", "pylib"))


@pytest.fixture(scope="session")
def build_dir():
    d = os.environ.get("PANDA_BUILD_DIR") or os.path.join(TOP, "_build")
    if not os.path.isdir(d):
        pytest.skip("build tree %s not found (run ./build.sh)" % d)
    return d


@pytest.fixture(scope="session")
def top_dir():
    return TOP
