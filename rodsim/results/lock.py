"""One run per output (docs/running.md, "One run per output").

``<results>.lock`` is created exclusively (O_CREAT | O_EXCL, which network filesystems honour
where fcntl and HDF5 file locking may not) before a run writes anything, and covers the
results file and the ParaView series. It holds JSON: host, pid, the process's start time
(Linux: /proc/<pid>/stat field 22, to tell a reused pid from the holder) and the start
date. A second run on the same output stops at once (ResourceError, exit 4). A lock whose
process is gone on this host is taken over with a warning; a lock from another host is never
guessed dead: the message says how to remove it.
"""

import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from rodsim.errors import ResourceError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lock:
    path: Path
    token: str  # this holder's content, to release only our own lock


def lock_path(results) -> Path:
    results = Path(results)
    return results.with_name(results.name + ".lock")


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' where /proc has no such)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19]  # field 22; the name may hold spaces


def _alive(holder: dict) -> bool:
    """Whether the process that wrote the lock (on this host) still runs."""
    pid = holder.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    started = holder.get("process_start", "")
    return not started or not _process_start(pid) or _process_start(pid) == started


def holder(results) -> dict | None:
    """The lock's content (with "alive": True/False/None for unknown) or None if unlocked."""
    try:
        data = json.loads(lock_path(results).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    same_host = data.get("host") == socket.gethostname()
    return {**data, "alive": _alive(data) if same_host else None}


def _describe(h: dict) -> str:
    return f"host {h.get('host', '?')}, pid {h.get('pid', '?')}, started {h.get('started', '?')}"


def _create(path: Path) -> str:
    content = json.dumps(
        {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "process_start": _process_start(os.getpid()),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        }
    )
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
    except BaseException:  # an empty lock would block every later run
        path.unlink(missing_ok=True)
        raise
    return content


def acquire(results) -> Lock:
    """Lock the output of a run; ResourceError if another run holds it."""
    path = lock_path(results)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(
            f"cannot write results to {results}: {exc.strerror or exc}", file=str(results)
        ) from None
    for _ in range(2):  # a second try after taking over a dead holder's lock
        try:
            return Lock(path, _create(path))
        except FileExistsError:
            pass
        except OSError as exc:
            raise ResourceError(
                f"cannot create the lock file: {exc.strerror or exc}", file=str(path)
            ) from None
        h = holder(results)
        if h is None:  # unreadable or half-written by a holder starting just now
            raise ResourceError(
                f"{Path(results).name} is locked by another run (the lock file cannot be "
                f"read); if no run writes it, delete {path}",
                file=str(results),
            )
        if h["alive"] is not False:
            where = (
                "on another host: if that run is dead, delete the lock file"
                if h["alive"] is None
                else "wait for it or give another -o"
            )
            raise ResourceError(
                f"another rodsim run writes these results ({_describe(h)}); {where} ({path.name})",
                file=str(results),
            )
        _take_over(path, h)
        log.warning("took over the lock of a run that is gone (%s): %s", _describe(h), path)
    raise ResourceError(f"another run took the lock first ({path.name})", file=str(results))


def _take_over(path: Path, dead: dict) -> None:
    """Move a dead holder's lock aside (rename is atomic: of two runs taking over, one
    wins; the other then finds the winner's fresh lock) and remove what it left behind."""
    stale = path.with_name(f"{path.name}.stale-{os.getpid()}")
    try:
        os.replace(path, stale)
    except FileNotFoundError:
        return
    try:
        moved = json.loads(stale.read_text())
    except (OSError, ValueError):
        moved = None
    if moved is not None and moved.get("pid") != dead.get("pid"):
        # a live run's fresh lock, taken in between: put it back unless a third run has
        # locked since (link fails if the name exists; then that run's lock stands)
        try:
            os.link(stale, path)
        except OSError:
            pass
        stale.unlink(missing_ok=True)
        return
    stale.unlink(missing_ok=True)
    name = path.name.removesuffix(".lock")
    for partial in path.parent.glob(f".{name}.*.partial"):  # its unfinished results file
        partial.unlink(missing_ok=True)


def release(lock: Lock) -> None:
    """Remove the lock if it is still ours."""
    try:
        if lock.path.read_text() == lock.token:
            lock.path.unlink()
    except OSError:
        pass
