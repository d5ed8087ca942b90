"""The output settings of a case file (`output:`, docs/case_reference.md): frames, the
ParaView series, compression, stresses and the datasets written. Checked into
rodsim.case.settings.Output."""

from dataclasses import dataclass

from rodsim.case import settings
from rodsim.case.fields import COUNT, at_most_one, positive
from rodsim.case.schema import Boolean, Field, ListOf, Path, Record, Text, fail, show
from rodsim.results.layout import FIELD_NAMES


@dataclass(frozen=True)
class Compression:
    """output.compression: none, gzip, gzip:LEVEL or lzf (rodsim.results.storage)."""

    def expected(self) -> str:
        return "one of none, gzip, gzip:1 to gzip:9 (the level; gzip is gzip:4), lzf"

    def check(self, value, path: Path):
        name, colon, level = value.partition(":") if isinstance(value, str) else ("", "", "")
        if value in ("none", "gzip", "lzf") or (
            name == "gzip" and colon and level in tuple("123456789")
        ):
            return value
        raise fail(path, f"expected {self.expected()}, got {show(value)}")


def _unique_fields(names: tuple, path: Path) -> None:
    """output.fields names each dataset once (a repeat is most likely a typo for another)."""
    for i, name in enumerate(names):
        if name in names[:i]:
            raise fail((*path, i), f"{name} is listed twice")


# the per-point rod stresses, which only output.stresses: points computes
POINT_STRESS_FIELDS = ("rods/stress", "rods/von_mises")


def _point_stress_fields(values: dict, path: Path) -> None:
    """a per-point rod stress in output.fields needs output.stresses: points"""
    for name in values.get("fields") or ():
        if name in POINT_STRESS_FIELDS and values.get("stresses") != "points":
            raise fail(
                (*path, "fields"),
                f"{name} is written with output.stresses: points only (it is "
                f"{values.get('stresses')}): set it, or leave {name} out",
            )


OUTPUT = Record(
    (
        Field("every", COUNT, "steps between frames", optional=True),
        Field(
            "interval",
            positive("time"),
            "simulated time between frames (default: t_end / 100)",
            optional=True,
        ),
        Field("vtk", Boolean(), "also write the ParaView series", default=True),
        Field(
            "compression",
            Compression(),
            "compression of the results file's frames: gzip "
            "(any HDF5 reader) or lzf (faster, h5py only); docs/results.md",
            default="none",
        ),
        Field(
            "stresses",
            Text(choices=("max", "points")),
            "rod stresses written (docs/stresses.md): max, the largest von Mises stress and the "
            "utilisation of each element; points, also the stress at every recovery point",
            default="max",
        ),
        Field(
            "fields",
            ListOf(Text(choices=FIELD_NAMES), rule=_unique_fields),
            "the per-frame datasets written besides those always written (nodes/position, "
            "nodes/rotation, time, energies, momenta, solver counters): dataset names of "
            "docs/results.md, or nodes/*, rods/*, plates/* for a group's; [] for none. "
            "Stresses left out are not computed (default: every dataset; docs/results.md)",
            optional=True,
        ),
    ),
    rules=(at_most_one("every", "interval"), _point_stress_fields),
    into=settings.Output,
)
