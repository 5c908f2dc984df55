"""panda/classifier.h's per-packet core compiles for BPF: a tc eBPF
classifier can include it and decide a packet's level as the datapath
does.  Compiles a program that calls panda_cls_level() (rules, Algorithm 2,
the level of a counter) with clang -target bpf, and checks that it calls
nothing: no libc, no function of libpanda.a (a BPF program has neither).
Under a second; skips, saying so, where there is no clang.
"""
import glob
import os
import shutil
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PROGRAM = r"""
#include <panda/classifier.h>

struct ctx {
    struct panda_policy policy;
    struct panda_pkt pkt;
    int64_t counter;
};

__attribute__((section("tc"), used)) int
classify(struct ctx *c)
{
    return panda_cls_level(&c->policy, &c->counter, &c->pkt)
           + panda_cls_level(&c->policy, 0, &c->pkt);
}
"""


def tool(*names):
    for name in names:
        for cand in [name] + sorted(glob.glob("/usr/bin/%s-[0-9]*" % name),
                                    reverse=True):
            path = shutil.which(cand)
            if path:
                return path
    return None


@pytest.fixture(scope="module")
def clang():
    path = tool("clang")
    if not path:
        pytest.skip("no clang: the BPF target needs it (apt install clang)")
    return path


def compile_bpf(clang, tmp_path, program):
    src, obj = tmp_path / "prog.c", tmp_path / "prog.o"
    src.write_text(program)
    # -ffreestanding: clang's own stdint.h and stdbool.h, as a BPF
    # program's build has no target libc headers.
    res = subprocess.run([clang, "-target", "bpf", "-O2", "-ffreestanding",
                          "-Wall", "-Werror", "-I", os.path.join(TOP, "lib"),
                          "-c", str(src), "-o", str(obj)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return obj


def undefined_symbols(obj):
    nm = tool("llvm-nm")
    if not nm:
        pytest.skip("no llvm-nm to read the BPF object")
    out = subprocess.run([nm, "--undefined-only", str(obj)],
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def test_level_compiles_for_bpf_without_calls(clang, tmp_path):
    obj = compile_bpf(clang, tmp_path, PROGRAM)
    assert undefined_symbols(obj) == []


def test_a_call_out_is_seen(clang, tmp_path):
    """The check can fail: a program that calls a function of libpanda.a
    leaves it undefined."""
    obj = compile_bpf(clang, tmp_path, PROGRAM.replace(
        "+ panda_cls_level(&c->policy, 0, &c->pkt)",
        "+ (int) panda_policy_kind_name(c->policy.kind)[0]"))
    assert undefined_symbols(obj) == ["panda_policy_kind_name"]
