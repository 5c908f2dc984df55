"""The product and the lab (docs/design.md, "Product and lab"): the
installed commands' modules are in pandaovs, and pandaovs imports nothing
of pandalab, directly or through another module."""

import ast
import os
import re

from pandaovs import paths

PY = os.path.join(paths.TOP, "python")


def _module_file(name):
    base = os.path.join(PY, *name.split("."))
    for f in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(f):
            return f
    return None


def _imports(name):
    """The pandaovs/pandalab modules module 'name' imports (absolute
    names; a name imported from a package counts as its submodule when
    there is one), and those it names in strings (a module run by name:
    'python3 -m pandaovs.X', os-ken's application)."""
    path = _module_file(name)
    pkg = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
    out = set()
    if path.endswith("__init__.py") and _module_file(name + ".__main__"):
        out.add(name + ".__main__")
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.update(m for m in re.findall(
                r"\b(panda(?:ovs|lab)(?:\.\w+)+)\b", node.value)
                if _module_file(m))
            continue
        if isinstance(node, ast.Import):
            bases = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = pkg.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module
                                         else []))
            else:
                base = node.module or ""
            bases = [(base, [a.name for a in node.names])]
        else:
            continue
        for base, names in bases:
            if base.split(".")[0] not in ("pandaovs", "pandalab"):
                continue
            out.add(base)
            out.update(base + "." + n for n in names
                       if _module_file(base + "." + n))
    return out


def _product_modules():
    return sorted(
        os.path.relpath(os.path.join(d, f), PY)[:-3].replace(os.sep, ".")
        .replace(".__init__", "")
        for d, _, files in os.walk(os.path.join(PY, "pandaovs"))
        for f in files if f.endswith(".py"))


def test_product_imports_no_lab():
    bad = ["%s imports %s" % (m, i) for m in _product_modules()
           for i in sorted(_imports(m)) if i.startswith("pandalab")]
    assert _product_modules(), "no product modules found"
    assert not bad, "\n".join(bad)


def test_installed_commands_reach_only_the_product():
    """Every module an installed command's launcher runs (python/automake.mk,
    PANDAOVS_COMMANDS), and every module those import in turn, is in the
    installed package."""
    text = open(os.path.join(PY, "automake.mk")).read()
    m = re.search(r"^PANDAOVS_COMMANDS\s*=\s*(.+)$", text, re.M)
    commands = dict(c.split(":") for c in m.group(1).split())
    assert {"panda-qos", "panda-controller"} <= set(commands), commands
    seen, todo = set(), ["pandaovs." + mod for mod in commands.values()]
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        assert mod.split(".")[0] == "pandaovs", \
            "an installed command reaches %s" % mod
        if _module_file(mod) is None:
            assert mod == "pandaovs.install_paths", mod   # made at install
            continue
        todo.extend(_imports(mod) - seen)
    # The controller's modules come in through its package's __main__,
    # the application os-ken runs by name.
    assert {"pandaovs.qos", "pandaovs.controller.cli",
            "pandaovs.controller.app", "pandaovs.policy"} <= seen, \
        sorted(seen)


def test_the_lab_is_not_installed():
    """python/automake.mk installs pandaovs/ only (the lab runs from a
    checkout; tests/build/test_debs.py checks the packages themselves)."""
    text = open(os.path.join(PY, "automake.mk")).read()
    m = re.search(r"^PANDAOVS_PY\s*=\s*(.+)$", text, re.M)
    assert "find pandaovs " in m.group(1), m.group(1)
    recipe = text[text.index("\ninstall-pandaovs-python:"):]
    recipe = recipe[:recipe.index("\n\n")]
    assert "$(PANDAOVS_PY)" in recipe and "PANDALAB" not in recipe, recipe
