"""Fixtures for the load generator tests; they live in lg_helpers.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lg_helpers import fg_server, lg_bin, memcached  # noqa: E402,F401
