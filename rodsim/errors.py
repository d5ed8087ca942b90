"""The exception hierarchy: every error rodsim raises on purpose is a RodsimError.

The CLI maps them to exit codes: CaseError (bad input) -> 2, NumericalError (instability,
non-finite values, Newton divergence) -> 3, ResourceError (I/O, disk, memory, a results file
in use) -> 4, Interrupted (a signal) -> 128 + the signal number.
"""


class RodsimError(Exception):
    """Base class of every deliberate rodsim error."""

    exit_code = 1


class CaseError(RodsimError):
    """Invalid input: a case file, mesh or argument that cannot be used as given."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None):
        self.file = file
        self.key = key
        self.reason = message
        where = ": ".join(x for x in (file, key) if x)
        super().__init__(f"{where}: {message}" if where else message)


class NumericalError(RodsimError):
    """The numerical solution failed (non-finite state, blow-up, Newton divergence)."""

    exit_code = 3

    def __init__(self, message: str, *, time: float | None = None, step: int | None = None):
        self.time = time
        self.step = step
        super().__init__(message)


class ResourceError(RodsimError):
    """The machine cannot do what the input asks: a write fails (disk full, permissions), the
    model needs more memory than the limit, or another run holds the output."""

    exit_code = 4

    def __init__(self, message: str, *, file: str | None = None):
        self.file = file
        super().__init__(f"{file}: {message}" if file else message)


class Interrupted(RodsimError):
    """The run was stopped by a signal (SIGINT, SIGTERM, SIGHUP); exit code 128 + signal."""

    def __init__(self, message: str, *, signal: int):
        self.signal = signal
        self.exit_code = 128 + signal
        super().__init__(message)


class ArgumentError(CaseError, ValueError, TypeError):
    """An argument of a Python API call that cannot be used (a count that is not an integer, a
    time or load that is not finite). A CaseError (exit code 2) that is also a ValueError and a
    TypeError, so that callers catching the built-in exceptions still catch it."""
