"""The ParaView series index (<stem>.pvd) as rodsim writes it: its marker, the names of its
frame files, and how an index rodsim wrote is recognised (the output guard and the series
writer both ask)."""

import re
from pathlib import Path

MARKER = "<!-- rodsim series -->"  # the second line of every index rodsim writes
HEADER = f'<?xml version="1.0"?>\n{MARKER}\n'


def frame_name(stem: str) -> re.Pattern:
    """The names of the frame files of the series <stem>.pvd (6 digits, more past 999999)."""
    return re.compile(rf"{re.escape(stem)}_\d{{6,}}\.vtu")


def is_rodsim_pvd(path) -> bool:
    """Whether path is a ParaView series index rodsim wrote, which a new series may replace:
    one with rodsim's marker (MARKER), or one of an older rodsim, a VTK Collection whose every
    DataSet (one at least) names <stem>_vtk/<stem>_NNNNNN.vtu (for <stem>.prev.pvd, the
    previous series: <stem>.prev_vtk/<stem>_NNNNNN.vtu)."""
    import xml.etree.ElementTree as ET

    path = Path(path)
    try:
        if not path.is_file() or path.is_symlink():
            return False
        with open(path, "rb") as f:
            if f.read(len(HEADER)).decode(errors="replace") == HEADER:
                return True
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return False
    base = path.stem.removesuffix(".prev")
    ref = re.compile(rf"{re.escape(path.stem)}_vtk/{frame_name(base).pattern}")
    files = [d.get("file") or "" for d in root.iter("DataSet")]
    return (
        root.tag == "VTKFile"
        and root.get("type") == "Collection"
        and bool(files)
        and all(ref.fullmatch(name) for name in files)
    )
