"""Progress of the long commands on standard error (docs/running.md, "Progress of long
commands"): `rodsim sweep`, `render`, `export` and `validate`. One line, rewritten in place, on
a terminal; nothing where standard error is not a terminal or the environment has CI set (a
log file or a CI job keeps only what the command prints for good). Standard output is never
touched: piped output stays clean.
"""

import math
import os
import sys
import time

EVERY = 0.2  # s between two redraws: often enough to look alive, rarely enough to cost nothing
WIDTH = 30  # characters of the bar


def on_terminal() -> bool:
    """Whether progress is shown: standard error is a terminal and CI is not set."""
    try:
        return sys.stderr.isatty() and not os.environ.get("CI")
    except (AttributeError, ValueError):  # replaced or closed
        return False


def bar(fraction: float, width: int = WIDTH) -> str:
    """[#####.....] of a fraction in [0, 1]."""
    full = int(width * min(max(fraction, 0.0), 1.0))
    return f"[{'#' * full}{'.' * (width - full)}]"


def left(seconds: float | None) -> str:
    """', about 12 s left' (', about 3 min left' from 100 s on); '' when not known."""
    if seconds is None or not math.isfinite(seconds):
        return ""
    if seconds < 100:
        return f", about {seconds:.0f} s left"
    return f", about {seconds / 60:.0f} min left"


class Line:
    """One line of progress on standard error, redrawn at most every EVERY seconds (always
    when forced); nothing unless enabled and on_terminal(). A terminal that went away (SIGHUP)
    ends the display, not the command."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled and on_terminal()
        self.last = -math.inf  # when it was last drawn
        self.text = ""

    def show(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < EVERY):
            return
        self.last = now
        pad = " " * max(0, len(self.text) - len(text))  # cover the end of a longer line
        self.text = text
        self._write(f"\r{text}{pad}")

    def say(self, line: str) -> None:
        """Print a line for good (on a terminal, above the progress line, which is drawn
        again below it)."""
        if self.enabled and self.text:
            self._write(f"\r{' ' * len(self.text)}\r{line}\n{self.text}")
        else:
            try:
                sys.stderr.write(f"{line}\n")
                sys.stderr.flush()
            except OSError:
                pass

    def close(self) -> None:
        """End the line (the next output starts on a line of its own)."""
        if self.enabled and self.text:
            self._write("\n")
        self.text = ""

    def _write(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except OSError:  # the terminal is gone
            self.enabled = False


class Count(Line):
    """Things done of a total, with the time left from the pace so far:
    `[######........] 12/40 frames, about 9 s left`. Call it with (done, total)."""

    def __init__(self, what: str, enabled: bool = True):
        super().__init__(enabled)
        self.what = what
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if done == 0:  # the clock starts at the first report: setting up is not the pace
            self.start = time.monotonic()
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done and done < total else None
        text = f"{bar(done / max(total, 1))} {done}/{total} {self.what}{left(eta)}"
        self.show(text, force=done in (0, total))
