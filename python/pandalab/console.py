"""The long commands' console (testbed/run.py, mininet/run.py,
testbed/workload_switch.py): lines within WIDTH columns, and the progress
of a run
- on a terminal a live line at the bottom (python3-rich, when installed)
with the trials done, the time elapsed and the time left; elsewhere (a
log file, a pipe, CI) plain lines only, the progress in each trial's own
line.

    Console(stream)            line(text), status(text), progress(...),
                               close()
    wrap(text, width)          a line broken at spaces into lines of at
                               most 'width' columns, continuations
                               indented
    hms(seconds)               "1h02m", "4m05s", "38s"
"""

import sys
import textwrap
import time

WIDTH = 100


def wrap(text, width=WIDTH):
    """'text' (one line) as lines of at most 'width' columns, broken at
    spaces (or after commas inside a longer word); continuation lines are
    indented 4 more than the first.  A word without commas longer than the
    line (a path) stays whole."""
    if len(text) <= width:
        return [text]
    indent = text[:len(text) - len(text.lstrip(" "))]
    more = indent + "    "
    lines = textwrap.wrap(text, width=width, initial_indent="",
                          subsequent_indent=more, break_long_words=False,
                          break_on_hyphens=False,
                          drop_whitespace=True) or [text]
    # A word longer than the line (a policy's key=value list) breaks after
    # a comma; one without commas (a path) stays whole.
    out = []
    for line in lines:
        while len(line) > width and "," in line[len(more):width]:
            cut = line.rindex(",", len(more), width) + 1
            out.append(line[:cut])
            line = more + line[cut:]
        out.append(line)
    return out


def hms(seconds):
    """A duration for people: "1h02m", "4m05s", "38s"."""
    s = int(round(max(seconds, 0)))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def _rich():
    try:
        from rich.console import Console as RichConsole
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress,
                                   ProgressColumn, TextColumn)
        from rich.text import Text
    except ImportError:
        return None

    class Times(ProgressColumn):
        """Elapsed and left, ticking between the run's updates: the time
        left falls with the clock from the last estimate."""

        def render(self, task):
            f, now = task.fields, time.monotonic()
            text = "%s in" % hms(now - f["t0"])
            if f["left"] is not None:
                text += ", ~%s left" % hms(f["left"] - (now - f["at"]))
            return Text(text)

    return RichConsole, Progress, (TextColumn, BarColumn,
                                   MofNCompleteColumn, Times)


class Console:
    """Where a long command writes.  'live': a progress line at the bottom
    (default: when 'stream' is a terminal and python3-rich imports)."""

    def __init__(self, stream=None, live=None, width=WIDTH):
        self.stream = stream or sys.stdout
        self.width = width
        rich = _rich()
        if live is None:
            live = rich is not None and self.stream.isatty()
        self.live = bool(live and rich)
        self._progress = self._task = None
        if self.live:
            RichConsole, Progress, (TextColumn, BarColumn, MofN, Times) = rich
            rc = RichConsole(file=self.stream, highlight=False,
                             markup=False, emoji=False,
                             force_terminal=True if live is True else None)
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(bar_width=12),
                MofN(), Times(), TextColumn("{task.fields[note]}"),
                console=rc, transient=True, refresh_per_second=1)

    def line(self, text=""):
        """Prints 'text' (a line, or several separated by newlines), each
        line wrapped at the console's width."""
        for raw in str(text).split("\n"):
            for out in wrap(raw, self.width):
                if self._progress is not None:
                    self._progress.console.print(out, soft_wrap=True)
                else:
                    print(out, file=self.stream, flush=True)

    __call__ = line

    def status(self, text):
        """What the step under way is doing now: the live line's note on a
        terminal, else a line of its own."""
        if self._task is not None:
            # "      ... memcached running for 15 s" -> "memcached running
            # for 15 s": the live line is short of room.
            self._progress.update(self._task,
                                  note=text.strip().lstrip(". ").strip())
        else:
            self.line(text)

    def progress(self, done, total, elapsed_s, left_s, what=""):
        """The run's progress: 'done' of 'total' trials after 'elapsed_s',
        about 'left_s' to go (None: unknown); the live line only (a plain
        console says it in the trial's line)."""
        if self._progress is None:
            return
        now = time.monotonic()
        fields = dict(t0=now - elapsed_s, at=now, left=left_s, note=what)
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("trials", total=total,
                                                 **fields)
        self._progress.update(self._task, completed=done, total=total,
                              **fields)

    def close(self):
        """Removes the live line (the lines printed stay)."""
        if self._task is not None:
            self._progress.stop()
            self._task = None
