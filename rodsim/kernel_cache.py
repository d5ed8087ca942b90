"""Where compiled kernels are kept, and what compiling them costs (docs/running.md).

rodsim's kernels are compiled by numba on first use and kept on disk, so that later runs
load them in a fraction of a second. The folder, the first that applies:

1. ``RODSIM_CACHE_DIR``;
2. ``NUMBA_CACHE_DIR`` (numba's own variable, if the user set it);
3. the user cache folder: ``$XDG_CACHE_HOME/rodsim`` or ``~/.cache/rodsim``.

It works for read-only installs (nothing is written next to the package). Inside it numba
keeps one folder per source folder, so different installs never mix; a kernel whose source
changed is compiled again. If the folder cannot be created, numba's default is used (the
package's ``__pycache__``, else ``~/.cache/numba``) with a warning in the log.

Several processes may compile into one folder at once (a sweep, cluster workers sharing a
home folder). numba's own index update is a read-modify-write and numbers its data files in
order, so two processes compiling different specialisations of one kernel could each write
entry 1 and leave an index pointing at the other's code. `LockedCacheFile` holds an exclusive
lock on ``<index>.lock`` for the update and names each data file by a hash of its key.

`watch` reports compilations as they happen (the CLI's "compiling kernels (first run only)"
line) and counts their wall time, so that the step rate and the ETA can leave it out.
"""

import atexit
import contextlib
import fcntl
import hashlib
import logging
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numba
from numba.core import caching
from numba.core import event as numba_event

log = logging.getLogger(__name__)


def cache_dir(environ=os.environ) -> Path:
    """The folder rodsim's compiled kernels go to (see the module docstring)."""
    for name in ("RODSIM_CACHE_DIR", "NUMBA_CACHE_DIR"):
        if environ.get(name):
            return Path(environ[name]).expanduser()
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    return Path(base) / "rodsim"


_ACTIVE: list[Path | None] = [None]
_CONFIGURED = [False]


def configure() -> Path | None:
    """Point numba at cache_dir(); call before any kernel is defined (rodsim.jit does).
    Returns the folder, or None where it cannot be written (numba's default then). numba's
    setting is process-wide: the user's own cached numba functions defined after importing
    rodsim's kernels are kept there too."""
    _CONFIGURED[0] = True
    folder = cache_dir().resolve()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(f"{folder} is not writable")
    except OSError as exc:
        log.warning("kernel cache: cannot use %s (%s); using numba's default", folder, exc)
        _ACTIVE[0] = None
        return None
    numba.config.CACHE_DIR = str(folder)
    _ACTIVE[0] = folder
    return folder


def active_dir() -> str:
    """The folder in use, as configure() left it (for messages)."""
    if not _CONFIGURED[0]:  # no kernel module imported yet: rodsim.jit configures at import
        configure()
    folder = _ACTIVE[0]
    return str(folder) if folder else "numba's default (__pycache__ or ~/.cache/numba)"


class LockedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files, safe for processes compiling into one folder at once,
    and for an index written by another rodsim version."""

    def _load_index(self):
        # numba unpickles an index's signatures before it compares the source stamp, so an
        # index naming a type an older rodsim had (a NamedTuple since removed) raised instead
        # of counting as stale: read such an index as empty (it is rewritten on the next save)
        try:
            return super()._load_index()
        except (AttributeError, ImportError, EOFError, TypeError, ValueError) as exc:
            log.debug("kernel cache: stale index %s (%s)", self._index_path, exc)
            return {}
        except pickle.UnpicklingError as exc:
            log.debug("kernel cache: unreadable index %s (%s)", self._index_path, exc)
            return {}

    def save(self, key, data):
        try:
            lock = _locked(self._index_path + ".lock")
            lock.__enter__()
        except OSError as exc:  # a lock we may not open: save as numba would, unlocked
            log.debug("kernel cache: no lock (%s); saving unlocked", exc)
            return super().save(key, data)
        try:
            overloads = self._load_index()
            if not overloads:  # a new or stale index: its old data files are orphans
                self._remove_data_files()
            name = overloads.get(key)
            if name is None:
                digest = hashlib.sha256(self._dump(key)).hexdigest()[:16]
                name = self._data_name_pattern.replace("{number:d}", digest)
                overloads[key] = name
                self._save_index(overloads)
            self._save_data(name, data)
        finally:
            lock.__exit__(None, None, None)

    def _remove_data_files(self):
        prefix, suffix = self._data_name_pattern.split("{number:d}")
        with contextlib.suppress(OSError):
            for name in os.listdir(self._cache_path):
                if name.startswith(prefix) and name.endswith(suffix):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(self._cache_path, name))


@contextlib.contextmanager
def _locked(path: str):
    """An exclusive flock on path, created readable and writable by all (a shared cache);
    flock works on a read-only descriptor too, for a lock file another user made."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:
        fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def make_safe(dispatcher) -> None:
    """Give a cached numba dispatcher the locked index (LockedCacheFile) and a cache key that
    holds the fingerprint of rodsim's sources (source_fingerprint)."""
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(cache, "_cache_file", None)
    if isinstance(index, caching.IndexDataCacheFile):
        index.__class__ = LockedCacheFile
    plain = getattr(cache, "_index_key", None)
    if plain is not None:
        cache._index_key = lambda sig, codegen: (*plain(sig, codegen), source_fingerprint())


def source_fingerprint() -> str:
    """A hash of every rodsim source file's content. numba's cache checks a kernel's own file
    only, yet a cached kernel holds the code of every kernel it calls: after a change to a
    callee's module (an upgrade of rodsim, an edit) it ran the old callee, on data laid out
    for the new one (a crash, or wrong numbers). With this hash in every kernel's cache key, a
    change to any source compiles everything again."""
    if not _FINGERPRINT:
        digest = hashlib.sha256()
        root = Path(__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        _FINGERPRINT.append(digest.hexdigest()[:16])
    return _FINGERPRINT[0]


_FINGERPRINT: list[str] = []


# --- compile watch ---------------------------------------------------------------------------


@dataclass
class Compiling:
    """Compilations seen in this process: kernels compiled, and the wall time of the
    outermost compilations (nested ones are inside it). active: a compilation is under way."""

    kernels: int = 0
    seconds: float = 0.0
    active: bool = False
    started: float = 0.0

    def elapsed(self) -> float:
        """Compile wall time so far, the compilation under way included."""
        return self.seconds + (time.perf_counter() - self.started if self.active else 0.0)


class _Listener(numba_event.Listener):
    def __init__(self):
        self.depth = 0
        self.stats = Compiling()
        self.callbacks: list[Callable[[Compiling], None]] = []

    def on_start(self, event):
        self.depth += 1  # first: a callback interrupted below must not unbalance it
        if self.depth == 1:
            self.stats.active = True
            self.stats.started = time.perf_counter()
            self._tell()

    def on_end(self, event):
        self.depth -= 1
        self.stats.kernels += 1
        if self.depth == 0:
            self.stats.seconds += time.perf_counter() - self.stats.started
            self.stats.active = False
        self._tell()

    def _tell(self):
        for callback in list(self.callbacks):
            try:
                callback(self.stats)
            except Exception:  # a display must never break a compilation
                log.debug("compile callback failed", exc_info=True)


_LISTENER = _Listener()
numba_event.register("numba:compile", _LISTENER)


def compiling() -> Compiling:
    """What this process has compiled so far (a live object)."""
    return _LISTENER.stats


@contextlib.contextmanager
def watch(callback: Callable[[Compiling], None]):
    """Call callback(compiling()) when a compilation starts and after each kernel compiled,
    while the block runs."""
    _LISTENER.callbacks.append(callback)
    try:
        yield _LISTENER.stats
    finally:
        _LISTENER.callbacks.remove(callback)


# --- compiling ahead ---------------------------------------------------------------------------

AHEAD_LIMIT = 900.0  # s: a child compiling longer than this is stopped, the parent compiles


@dataclass
class Ahead:
    """Kernels being compiled into the cache by a forked process (compile_ahead)."""

    pid: int
    done: bool = False

    def finished(self) -> bool:
        """Whether the child has ended (reaped then; wait returns at once)."""
        if not self.done:
            try:
                self.done = os.waitpid(self.pid, os.WNOHANG)[0] != 0
            except ChildProcessError:
                self.done = True
        return self.done

    def wait(self) -> None:
        """Return when the child has finished (its kernels are then in the cache); one that
        is still at work after AHEAD_LIMIT, or when this process is interrupted, is stopped
        (the caller then compiles what it needs itself)."""
        if self.done:
            return
        self.done = True
        end = time.monotonic() + AHEAD_LIMIT
        try:
            while time.monotonic() < end:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    return
                time.sleep(0.01)
            log.warning("compiling ahead took over %.0f s: stopped", AHEAD_LIMIT)
        except ChildProcessError:  # already reaped: nothing to wait for
            return
        except BaseException:
            _stop(self.pid)
            raise
        _stop(self.pid)


_AHEAD: list[Ahead] = []  # the children compiling ahead (at most one runs)


@atexit.register
def _stop_unfinished() -> None:
    # a child this process never waited for (rodsim.integrators.adaptive_batch compiles its
    # kernel while the steps go on; a short run ends first) must not outlive the run
    for ahead in _AHEAD:
        if not ahead.finished():
            _stop(ahead.pid)


def _stop(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def cached(dispatcher, types: tuple) -> bool:
    """Whether dispatcher has an overload for types in memory or in the cache folder."""
    if types in dispatcher.overloads:
        return True
    try:  # the index alone (Cache.load_overload's first look): loading the code to see it
        # is there cost a warm run 0.7 s (it is loaded again where it is called)
        cache = dispatcher._cache
        key = cache._index_key(types, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # an internal that moved: compile ahead anyway
        return False


def compile_ahead(jobs: list[tuple]) -> Ahead | None:
    """Compile the kernels `jobs` ((dispatcher, argument types) pairs) in a forked process
    into the cache while this one compiles the rest: a first run's kernel families then
    compile on two cores. Call Ahead.wait() before calling one of them (or poll
    Ahead.finished(); a child still at work when this process exits is stopped). None (nothing
    forked) where every job is cached already, off Linux (fork is unsafe on macOS and absent
    on Windows), where another Python thread runs (it could hold a lock the child needs: a
    Dask worker), on one CPU, or with RODSIM_COMPILE_AHEAD=0."""
    if os.environ.get("RODSIM_COMPILE_AHEAD", "1") == "0" or not sys.platform.startswith("linux"):
        return None  # macOS: a fork after system frameworks have started is unsafe
    if len(os.sched_getaffinity(0)) < 2:
        return None
    if threading.current_thread() is not threading.main_thread() or threading.active_count() > 1:
        return None
    # one child at a time: a run that never called its kernel (a test, an aborted start)
    # must not leave a second compiling the same kernel beside it
    _AHEAD[:] = [a for a in _AHEAD if not a.finished()]
    if _AHEAD:
        return None
    jobs = [(d, tuple(t)) for d, t in jobs if not cached(d, tuple(t))]
    if not jobs:
        return None
    pid = os.fork()
    if pid:
        log.debug("compiling %d kernels ahead in process %d", len(jobs), pid)
        _AHEAD.append(Ahead(pid))
        return _AHEAD[-1]
    status = 0  # the child: compile, then leave without the parent's exit handlers
    try:
        _LISTENER.callbacks.clear()  # the parent's display is not the child's
        for dispatcher, types in jobs:
            dispatcher.compile(types)
    except BaseException:
        status = 1
    finally:
        os._exit(status)
