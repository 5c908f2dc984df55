"""pandalab.console: the long commands' lines within 100 columns, and the
progress line (a live one on a terminal through python3-rich, plain lines
elsewhere)."""

import io

import pytest

from pandalab import console


def test_wrap_within_the_width():
    text = "  target p99_order NOT met " + " ".join(["word"] * 40)
    lines = console.wrap(text)
    assert len(lines) > 1 and all(len(x) <= console.WIDTH for x in lines)
    assert lines[0].startswith("  target") and lines[1].startswith("      ")
    assert " ".join(x.strip() for x in lines) == text.strip()
    path = "/" + "x" * 150
    assert console.wrap("results in " + path) == ["results in",
                                                  "    " + path]
    assert console.wrap("short") == ["short"]
    policy = "  panda policy: " + ",".join("key%d=%d" % (i, i * 1000)
                                           for i in range(20))
    lines = console.wrap(policy)
    assert all(len(x) <= 100 for x in lines) and len(lines) == 4
    assert "".join(x.strip() for x in lines) == policy.replace(
        "panda policy: ", "panda policy:").strip()


def test_hms():
    assert [console.hms(s) for s in (0, 38.4, 245, 3720, -5)] == [
        "0s", "38s", "4m05s", "1h02m", "0s"]


def test_plain_console():
    out = io.StringIO()
    c = console.Console(out, live=False)
    c.line("a\n" + "b " * 80)
    c.progress(1, 4, 65, 120, "cubic pias")     # plain: nothing
    c.status("      ... memcached running for 15 s")
    c.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "a" and len(lines) == 4
    assert all(len(x) <= 100 for x in lines)
    assert lines[-1] == "      ... memcached running for 15 s"


def test_live_console_on_a_terminal():
    pytest.importorskip("rich", reason="python3-rich is not installed "
                        "(optional: plain lines without it)")
    out = io.StringIO()
    c = console.Console(out, live=True)
    assert c.live
    c.progress(2, 8, 125, 600, "dctcp panda")
    c.line("[3/8] dctcp panda flows 14 requests 10000 rep 1 ...")
    c.status("      ... memcached running for 15 s")
    c.close()
    text = out.getvalue()
    # The lines are printed as they are (no markup: "[3/8]" stays).
    assert "[3/8] dctcp panda flows 14" in text
    assert "2/8" in text and "2m05s in, ~10m00s left" in text
