"""Writing an export file in one piece: to a temporary file beside it, renamed over it when
complete, so that a failed write (a full disk, a read-only folder) leaves what was there.
Whether the file may be written at all is rodsim.output_guard's to say, before."""

from pathlib import Path

from rodsim.errors import ResourceError


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
