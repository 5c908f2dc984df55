"""The documentation's shape: a short README from which every guide is
reachable, guides that cite reasons rather than tickets."""

import os
import re
import subprocess

import pytest

from pandaovs import paths

TOP = paths.TOP
# Trees that are not the project's documentation: build outputs, results
# (indexed by docs/results/README.md, itself reachable), caches.
SKIP_DIRS = {".git", "results", ".pytest_cache", "__pycache__"}
LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)|`([\w./-]+\.md)`")
TICKET = re.compile(r"\bissues? #?\d+\b", re.IGNORECASE)


def _docs():
    found = set()
    for d, dirs, files in os.walk(TOP):
        rel = os.path.relpath(d, TOP)
        dirs[:] = [x for x in dirs
                   if x not in SKIP_DIRS and not x.startswith("_build")
                   and not (rel == "docs" and x == "results")]
        for f in files:
            if f.endswith(".md"):
                found.add(os.path.normpath(os.path.join(rel, f)))
    found.add("docs/results/README.md")
    return found


def _links(doc):
    """The .md files 'doc' names, as paths from the top: relative to the
    doc's own directory, else to the top (the docs name files both ways)."""
    text = open(os.path.join(TOP, doc), encoding="utf-8").read()
    out = set()
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        for base in (os.path.dirname(doc), ""):
            p = os.path.normpath(os.path.join(base, target))
            if os.path.exists(os.path.join(TOP, p)):
                out.add(p)
                break
    return out


def test_readme_is_short():
    with open(os.path.join(TOP, "README.md"), encoding="utf-8") as f:
        n = sum(1 for _ in f)
    assert n <= 150, "README.md has %d lines; the details go in docs/" % n


def test_every_guide_is_reachable_from_the_readme():
    seen, todo = set(), ["README.md"]
    while todo:
        doc = todo.pop()
        if doc in seen:
            continue
        seen.add(doc)
        todo.extend(_links(doc) - seen)
    missing = sorted(_docs() - seen)
    assert not missing, "not reachable from README.md: %s" % missing


def test_guides_cite_reasons_not_tickets():
    bad = []
    for doc in sorted(_docs()):
        if doc.startswith("docs/results/"):
            continue
        with open(os.path.join(TOP, doc), encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if TICKET.search(line):
                    bad.append("%s:%d: %s" % (doc, i, line.strip()))
    assert not bad, "\n".join(bad)


def test_code_cites_reasons_not_tickets():
    out = subprocess.run(
        ["git", "grep", "-nIE", r"\bissues? #?[0-9]+", "--", "*.c", "*.h",
         "*.py", "*.sh", "*.am", "*.mk", "*.at", "*.patch", "*.yml",
         "*.j2", "*.cc", ":!docs/results", ":!tests/python/test_docs.py"],
        cwd=TOP, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        pytest.skip("not a git checkout: %s" % out.stderr.strip())
    assert not out.stdout, out.stdout
