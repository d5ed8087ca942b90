"""What a run computes, as a name (docs/sweeps.md, "Runs and their files"): a hash of the
canonical resolved case and of the content of every file it reads.

The canonical case is the case as written with the run's overrides applied (Case.to_dict), as
JSON with sorted keys and every number a float in its shortest exact form (repr), so that
two runs with the same resolved case and the same input files share a name whatever the
order of their keys or the spelling of their numbers (700, 700.0, 7e2). The files read are
the values of every ``file`` and ``from`` key (mesh files, imperfections, initial states,
shape files), relative to the case file's folder, and the files those point to in turn: the
heavy data of an XDMF mesh (``DataItem Format="HDF"``: ``data.h5:/path``, relative to the
.xdmf; ``Format="Binary"``: a file as meshio opens it) and the ``*INCLUDE, INPUT=`` files of
an Abaqus .inp (as meshio looks for them: from the current folder, else the .inp's).
"""

import functools
import hashlib
import json
from pathlib import Path

from rodsim.mesh.read import side_files

DIGITS = 16  # hex digits of the name: 64 bits
DEPTH = 8  # side files of side files (an .inp including an .inp ...): more is a loop


def _numbers(node):
    """Every number as a float: -700 and -700.0 are one value to the case."""
    if isinstance(node, dict):
        return {k: _numbers(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_numbers(v) for v in node]
    if isinstance(node, int) and not isinstance(node, bool):
        return float(node)
    return node


def canonical(data) -> str:
    """JSON of a case dict: sorted keys, no spaces, every number a float in its exact shortest
    form (repr), non-finite as text."""
    return json.dumps(_numbers(data), sort_keys=True, separators=(",", ":"), allow_nan=True)


def files_read(data, folder: Path) -> list[tuple[str, Path]]:
    """The files a case names: (as written, path) of every string under a `file` or `from`
    key, from folder (side_files adds what those point to)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("file", "from") and isinstance(value, str):
                    p = Path(value).expanduser()
                    found.append((value, p if p.is_absolute() else folder / p))
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return sorted(set(found))


def run_hash(case) -> tuple[str, str]:
    """(name, canonical JSON) of a rodsim.case.load.Case: DIGITS hex digits of the sha256 of
    the canonical case and of each file it reads (its name as written and its bytes)."""
    return data_hash(case.to_dict(), case.folder)


def data_hash(data, folder: Path) -> tuple[str, str]:
    """run_hash of the case's resolved data (Case.to_dict) read from folder: a sweep has it at
    hand and need not parse the case again for each run."""
    text = canonical(data)
    digest = hashlib.sha256(text.encode())
    for written, path in files_read(data, folder):
        digest.update(b"\0" + written.encode() + b"\0" + _content(path))
    return digest.hexdigest()[:DIGITS], text


def _content(path: Path) -> bytes:
    """The SHA-256 of a file's bytes and of every side file it points to (side_files), read
    once while they are unchanged (a sweep's runs share their mesh files); b"missing" where
    one cannot be read (its run will say why)."""
    return _tree(path, 0)


def _tree(path: Path, depth: int) -> bytes:
    try:
        stat = path.stat()
    except OSError:
        return b"missing"
    # ctime and inode too: rewriting a file's numbers in place and setting its mtime back
    # (os.utime) keeps its size and mtime but not its ctime
    own, sides = _digest(str(path), stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_size)
    if not sides or depth >= DEPTH:
        return own
    digest = hashlib.sha256(own)
    for side in sides:
        digest.update(b"\0" + str(side).encode() + b"\0" + _tree(side, depth + 1))
    return digest.digest()


@functools.lru_cache(maxsize=256)
def _digest(path: str, mtime: int, ctime: int, inode: int, size: int) -> tuple[bytes, tuple]:
    """(sha256 of the file's bytes, the side files it points to)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return b"missing", ()
    return hashlib.sha256(data).digest(), tuple(side_files(Path(path), data))
