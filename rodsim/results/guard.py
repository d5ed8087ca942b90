"""The one check every command that writes makes before it writes (docs/running.md,
"Outputs"): run, export, render, plot, schema, sweep and the Python API.

A path a command is asked to write is refused (CaseError, exit 2, naming the option and,
where there is one, the case) before anything is written where it

- names a file the command reads (the case, a mesh, the results file of initial.from, the
  results file exported from, ...): writing it would destroy the input;
- is a folder where a file is written, or a file where a folder is;
- exists and is not an earlier output of the same kind, recognised by its content (a rodsim
  results file by its attributes, a picture by its signature, a CSV table by rodsim's header,
  ...): a user's own file is never replaced, whatever its name.

Each kind of output is an entry of KINDS: what it is called in messages and how an earlier
one is recognised. A folder of outputs (a sweep's, a ParaView series') is checked by its
owner's recogniser (rodsim.sweep.summary.is_sweep_folder, rodsim.results.vtk.is_rodsim_pvd)
through ``check_folder``.
"""

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from rodsim.errors import CaseError
from rodsim.results.pvd import is_rodsim_pvd

HDF5 = b"\x89HDF\r\n\x1a\n"


def _starts(path: Path, n: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def _header(offset: int, *marks: bytes) -> Callable[[Path], bool]:
    """A recogniser: the file has one of marks at offset."""
    longest = max(len(m) for m in marks)
    return lambda path: any(
        _starts(path, offset + longest)[offset : offset + len(m)] == m for m in marks
    )


def _within(start: bytes, *marks: bytes) -> Callable[[Path], bool]:
    """A recogniser: the file starts with start and holds every mark in its first 1 kB."""

    def recognise(path: Path) -> bool:
        head = _starts(path, 1024)
        return head.startswith(start) and all(m in head for m in marks)

    return recognise


def is_results(path: Path) -> bool:
    """A results file of rodsim run: HDF5 with the layout attribute rodsim writes first. One
    that cannot be opened (another process writes it, holding HDF5's lock) counts as one:
    the results writer's own lock then says who writes it (rodsim.results.lock)."""
    if _starts(path, len(HDF5)) != HDF5:
        return False
    import h5py

    try:
        with h5py.File(path, "r", locking=False) as f:
            return "layout" in f.attrs and "rodsim_version" in f.attrs
    except OSError:
        return True


# a sweep's summary files (rodsim.sweep.summary writes them): the summary.h5's `kind`
# attribute, and summary.csv's columns: run, name, the parameters and collected values, then
# the rest
SWEEP_KIND = "rodsim sweep summary"
SWEEP_COLUMNS = ("run", "name", "status", "exit_code", "wall_time", "version", "reused",
                 "outdated", "error")  # fmt: skip


def is_sweep_csv(path) -> bool:
    """A summary.csv a sweep wrote: its header row begins run,name and ends with the
    summary's own columns."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f), [])
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    c = SWEEP_COLUMNS
    return header[:2] == list(c[:2]) and header[-len(c) + 2 :] == list(c[2:])


def is_sweep_summary(path) -> bool:
    """A summary.h5 a sweep wrote."""
    import h5py

    try:
        with h5py.File(path, "r") as f:
            return f.attrs.get("kind") == SWEEP_KIND
    except OSError:
        return False


class Kind(NamedTuple):
    what: str  # in messages: "exists and is not <what>"
    ours: Callable[[Path], bool]  # an existing file that is an earlier output of this kind


KINDS = {
    "results": Kind("a rodsim results file", is_results),
    "series": Kind("a rodsim series index", is_rodsim_pvd),
    "png": Kind("a PNG picture", _header(0, b"\x89PNG\r\n\x1a\n")),
    "gif": Kind("a GIF movie", _header(0, b"GIF87a", b"GIF89a")),
    "mp4": Kind("an MP4 movie", _header(4, b"ftyp")),
    "schema": Kind("a case schema of rodsim schema", _within(b"{", b'"rodsim"', b"schema")),
    "csv": Kind("a CSV table of rodsim export", _header(0, b"# rodsim export: ")),
    "xdmf": Kind("an XDMF index", _within(b"<?xml", b"<Xdmf")),
    "npz": Kind("a matrices file of rodsim export", _within(b"PK\x03\x04", b"K_data.npy")),
    "mtx": Kind("a matrix of rodsim export", _within(b"%%MatrixMarket", b"%rodsim ")),
    "dofs": Kind("a DOF map of rodsim export", _header(0, b"dof,node,component,free\n")),
    "validation report": Kind(
        "a rodsim validation report", _header(0, b"# rodsim validation report\n")
    ),
    "sweep table": Kind("a rodsim sweep's summary.csv", is_sweep_csv),
    "sweep summary": Kind("a rodsim sweep's summary.h5", is_sweep_summary),
}


def _side_files(mesh: Path, depth: int = 8) -> list[Path]:
    """The files a mesh file points to, and those they point to (rodsim.mesh.read.side_files),
    resolved; none where it cannot be read (reading the mesh will say why)."""
    from rodsim.mesh.read import POINTING, side_files

    found, todo = [], [(mesh, 0)]
    while todo:
        path, level = todo.pop()
        if path.suffix.lower() not in POINTING:  # no need to read a large mesh file through
            continue
        try:
            sides = side_files(path, path.read_bytes())
        except OSError:
            continue
        for side in (p.resolve() for p in sides):
            if side not in found and level < depth:
                found.append(side)
                todo.append((side, level + 1))
    return found


def reads_of(case) -> dict:
    """{resolved path: what it is} of every file a case reads: the case file, its mesh files
    and the data files they point to (an XDMF mesh's HDF5 heavy data, which may be a results
    file: rodsim export --format xdmf), the results files of initial.from and
    imperfection.from, initial.shape files."""
    from rodsim.case.settings import FilePart, ShapeFile

    found = {case.path.resolve(): "the case file"}
    s = case.settings
    for spec in s.mesh:
        if isinstance(spec, FilePart):
            mesh = case.resolve(spec.file).resolve()
            found[mesh] = f"the mesh file {spec.file}"
            for side in _side_files(mesh):
                found.setdefault(side, f"a data file of the mesh file {spec.file}")
    named = [("initial.from", s.initial.from_)]
    named += [("imperfection.from", s.imperfection.from_ if s.imperfection else None)]
    named += [("initial.shape", e.file) for e in s.initial.shape if isinstance(e, ShapeFile)]
    for key, name in named:
        if name is not None:
            found[case.resolve(name).resolve()] = f"the file {name} of {key}"
    return found


def check(
    path,
    kind: str,
    *,
    reads: dict | None = None,
    option: str = "-o",
    file: str | None = None,
    advice: str = "name a new file, or remove it first",
) -> Path:
    """path, when a command may write a file of this kind (a KINDS key) there; else
    CaseError naming option (and file, the case or results file the command works on).
    reads: {resolved path: what it is} of the files the command reads."""
    path = Path(path)
    target = path.resolve()
    if reads and target in reads:
        raise CaseError(
            f"{path} is {reads[target]}: writing it would destroy the input; name another file",
            file=file,
            key=option,
        )
    if path.is_dir():
        raise CaseError(f"{path} is a folder: name a file", file=file, key=option)
    known = KINDS[kind]
    if path.exists() and not known.ours(target):
        raise CaseError(
            f"{path} exists and is not {known.what}: rodsim replaces only its own "
            f"earlier outputs; {advice}",
            file=file,
            key=option,
        )
    return path


def check_folder(
    folder,
    ours: Callable[[Path], bool],
    what: str,
    *,
    reads: dict | None = None,
    option: str = "-o",
    file: str | None = None,
) -> Path:
    """folder, when a command may write into it: it does not exist, is empty, or ours(folder)
    says an earlier output of this kind is there (what: "a sweep's folder"); else CaseError."""
    folder = Path(folder)
    if reads and folder.resolve() in reads:
        raise CaseError(
            f"{folder} is {reads[folder.resolve()]}: name a folder", file=file, key=option
        )
    if folder.exists() and not folder.is_dir():
        raise CaseError(f"{folder} is a file: name a folder", file=file, key=option)
    try:
        empty = not folder.exists() or next(folder.iterdir(), None) is None
    except OSError as exc:
        why = exc.strerror or exc
        raise CaseError(f"cannot read {folder}: {why}", file=file, key=option) from None
    if not empty and not ours(folder):
        raise CaseError(
            f"{folder} holds files and is not {what}: rodsim writes only into a new or "
            "empty folder or its own; name another folder",
            file=file,
            key=option,
        )
    return folder
