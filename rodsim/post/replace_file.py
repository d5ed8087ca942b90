"""Writing an export file in one piece: to a temporary file beside it, renamed over it when
complete, so that a failed write (a full disk, a read-only folder) leaves what was there.
Whether the file may be written at all is rodsim.results.guard's to say, before."""

from pathlib import Path

from rodsim.errors import ResourceError


def write_through(path: Path, write) -> None:
    """write(part) into a temporary file beside path, renamed onto path; ResourceError (exit
    4) naming the path if that fails, the temporary file removed."""
    part = path.with_name(f".{path.name}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(part)
        part.replace(path)
    except OSError as exc:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass  # nothing was made (the folder cannot hold it)
        raise ResourceError(f"cannot write {path}: {exc.strerror or exc}") from None


def save_picture(fig, path, dpi: int, source) -> Path:
    """A matplotlib figure as the PNG path, in one piece, where rodsim.results.guard allows:
    path is not the results file `source` it was drawn from nor a file other than a PNG
    (the default names of rodsim plot could be a user's file). Returns the path."""
    from rodsim.results import guard as output_guard

    path, source = Path(path), Path(source)
    reads = {source.resolve(): "the file the picture is drawn from"}
    output_guard.check(path, "png", reads=reads, file=str(source))
    write_through(path, lambda part: fig.savefig(part, dpi=dpi, format="png"))
    return path


def write_whole(path: Path, text_parts) -> None:
    """Write the strings of text_parts to path through a temporary file; ResourceError
    (exit 4) naming the path if that fails."""

    def write(part):
        with open(part, "w", newline="") as out:
            for text in text_parts:
                out.write(text)

    write_through(path, write)
