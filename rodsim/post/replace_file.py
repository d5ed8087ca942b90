"""Writing an export file in one piece: to a temporary file beside it, renamed over it when
complete, so that a failed write (a full disk, a read-only folder) leaves what was there.
An existing file is replaced only when it is an earlier export of that kind (it starts with
`header`): `-o` naming a case, results or other file is refused."""

from pathlib import Path

from rodsim.errors import CaseError, ResourceError


def check_target(path: Path, results: Path | None, header: str, what: str) -> None:
    """CaseError where path is the results file or an existing file other than an earlier
    export (one that does not start with header); results None: an export of no results
    file (rodsim schema)."""
    if not path.exists():
        return
    if results is not None and path.resolve() == results.resolve():
        raise CaseError(
            f"-o {path} is the results file itself: name another file", file=str(results)
        )
    if path.is_file():
        try:
            with open(path, "rb") as existing:
                start = existing.read(len(header.encode()))
        except OSError:
            return  # the write will say what is wrong
        if start != header.encode():
            raise CaseError(
                f"-o {path} exists and is not {what}: name a new file, or remove it first",
                file=str(results or path),
            )


def write_whole(path: Path, text_parts) -> None:
    """Write the strings of text_parts to path through a temporary file; ResourceError
    (exit 4) naming the path if that fails."""
    part = path.with_name(f".{path.name}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(part, "w", newline="") as out:
            for text in text_parts:
                out.write(text)
        part.replace(path)
    except OSError as exc:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass  # nothing was made (the folder cannot hold it)
        raise ResourceError(f"cannot write {path}: {exc.strerror or exc}") from None
