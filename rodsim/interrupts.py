"""Signals that stop a run cleanly (docs/running.md, "Signals").

While a run writes results, SIGINT, SIGTERM and SIGHUP only record that a stop was asked
for: the time loop polls ``Watch.requested`` between compiled chunks of bounded wall time
(rodsim.run), writes the current state as a final off-schedule frame and ends with exit code
128 + the signal. A second signal while the first is being handled stops at once
(KeyboardInterrupt), for a user who does not want to wait, but never inside the writing of a
frame or of the status (``Watch.deferred``). SIGXFSZ (a file-size limit) is
ignored so that an oversized write fails with EFBIG, which rodsim reports, instead of killing
the process without a word.

Compiled work called from Python (rodsim.Simulation.advance) runs in the same chunks under
``deferred_sigint``: Ctrl-C is recorded and acted on, as KeyboardInterrupt, at the end of the
chunk, a step boundary; each chunk runs in ``Watch.deferred`` so that a second Ctrl-C, too,
waits for the solver's step counters to catch up with its state.
"""

import signal
import threading
from contextlib import contextmanager

SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class StopRequested(Exception):  # noqa: N818 - control flow, not an error
    """Raised inside a long solver loop (equilibrium) when a stop was asked for."""


class Watch:
    """The first stop signal received (0: none)."""

    def __init__(self):
        self.signal = 0
        self.critical = 0  # > 0 while a frame or the status is being written

    @contextmanager
    def deferred(self):
        """A block that a second signal does not interrupt (it is acted on after)."""
        self.critical += 1
        try:
            yield
        finally:
            self.critical -= 1
        if self.signal and self.second and not self.critical:
            raise KeyboardInterrupt

    def requested(self) -> bool:
        return self.signal != 0

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name if self.signal else ""

    second = False

    def _handler(self, signum, _frame) -> None:
        if not self.signal:
            self.signal = signum
            return
        self.second = True  # stop now, without the final frame (after a write in progress)
        if not self.critical:
            raise KeyboardInterrupt


@contextmanager
def watch(enabled: bool = True):
    """Record stop signals for the duration; the previous handlers are restored after.
    Outside the main thread (where Python cannot install handlers) nothing is recorded."""
    w = Watch()
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield w
        return
    names = [*SIGNALS, *([signal.SIGXFSZ] if hasattr(signal, "SIGXFSZ") else [])]
    previous = {s: signal.getsignal(s) for s in names}
    try:
        for s in SIGNALS:
            signal.signal(s, w._handler)
        if hasattr(signal, "SIGXFSZ"):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        yield w
    finally:
        for s, handler in previous.items():
            # None: a handler installed outside Python, which cannot be restored from here
            signal.signal(s, signal.SIG_DFL if handler is None else handler)


@contextmanager
def deferred_sigint():
    """For compiled work called from Python in chunks (rodsim.Simulation.advance): while the
    block runs, a SIGINT (Ctrl-C) is only recorded (``Watch.requested``), for the caller to
    raise KeyboardInterrupt at its next step boundary; a second SIGINT raises at once, or, in
    a ``Watch.deferred`` block (a compiled chunk and its bookkeeping), at its end. Only
    where Python's own SIGINT handler is installed, in the main thread: a handler of the
    user's is left alone, and elsewhere nothing is recorded (Python then raises
    KeyboardInterrupt itself when the compiled call returns)."""
    w = Watch()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield w
        return
    signal.signal(signal.SIGINT, w._handler)
    try:
        yield w
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
