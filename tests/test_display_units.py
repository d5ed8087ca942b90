"""The units a user reads (rodsim/post/display_units.py, docs/units.md "Units shown"): rodsim
plot, rodsim info and the units row of rodsim export --format csv, for cases with and without
a `units:` declaration."""

import math
import re
from typing import NamedTuple

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from rodsim import api
from rodsim.case import units
from rodsim.cli import main
from rodsim.post import display_units

CASE = """
rodsim: 1
{units}
title: {title}
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 8, up: [0, 0, 1], section: s}}
sections:
  s:
    type: rod
    material: {{E: {E}, nu: 0.3, rho: {rho}, allowable: {allowable}}}
    shape: {{circle: {r}}}
boundary:
  - {{set: beam.start, fix: all}}
loads:
  - {{set: beam.end, force: [0, 0, {P}]}}
solver: {solver}
output: {{vtk: false}}
"""
WRITTEN = dict(E="210 GPa", rho="7850 kg/m^3", allowable="235 MPa", r="20 mm", P="-1 kN")
NUMBERS = dict(E="2.1e11", rho="7850", allowable="2.35e8", r="0.02", P="-1000")
EQUILIBRIUM = "{analysis: equilibrium, equilibrium: {load_steps: 2}}"
PATH = (
    "{analysis: equilibrium, equilibrium: {path: {method: displacement, set: beam.end, "
    "component: uz, to: -0.05, steps: 3}}}"
)
MODAL = "{analysis: modal, modal: {modes: 2}}"


def _run(folder, name, declaration="units: SI", solver=EQUILIBRIUM, title="beam", numbers=WRITTEN):
    case = folder / f"{name}.yaml"
    text = CASE.format(units=declaration, title=title, solver=solver, **numbers)
    case.write_text(text)
    out = folder / f"{name}.h5"
    api.run_case(case, out, vtk=False)
    return out


@pytest.fixture(scope="module")
def si(tmp_path_factory):
    """A cantilever in SI with units written (units: SI), an equilibrium in two load steps."""
    return _run(tmp_path_factory.mktemp("si"), "si")


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """The same cantilever in SI numbers without a `units:` declaration."""
    return _run(tmp_path_factory.mktemp("bare"), "bare", "", numbers=NUMBERS)


class Drawn(NamedTuple):
    """What a saved matplotlib figure showed: texts and its curves' (x, y)."""

    title: str
    xlabel: str
    ylabel: str
    legend: list
    curves: list


@pytest.fixture
def drawn(monkeypatch):
    """The figures rodsim plot saves, as Drawn, in order (from matplotlib itself, so the test
    reads what any version of the plotting code drew)."""
    from matplotlib.figure import Figure

    seen, save = [], Figure.savefig

    def savefig(fig, *args, **kwargs):
        ax = fig.axes[0]
        legend = ax.get_legend()
        seen.append(
            Drawn(
                ax.get_title(),
                ax.get_xlabel(),
                ax.get_ylabel(),
                [t.get_text() for t in legend.get_texts()] if legend else [],
                [(line.get_xdata(), line.get_ydata()) for line in ax.get_lines()],
            )
        )
        return save(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return seen


def _cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_along_in_a_case_with_units_draws_the_diagram(si, tmp_path, drawn):
    """It was an internal error (KeyError: 'length'): the arc length's unit."""
    png = tmp_path / "m.png"
    _cli("plot", si, "moment.bending2@beam.all", "--along", "-o", png)
    assert png.is_file()
    (fig,) = drawn
    assert fig.xlabel == "arc length along the rod [m]"
    assert fig.ylabel == "moment.bending2 [N m]"


def test_a_path_in_a_case_with_units_plots(tmp_path, drawn):
    """The path's horizontal axis (its arc length, a length) crashed the same way."""
    h5 = _run(tmp_path, "path", solver=PATH)
    _cli("plot", h5, "displacement.z@beam.end", "-o", tmp_path / "p.png")
    assert drawn[0].xlabel == "arc length of the path [m]"
    assert drawn[0].ylabel == "displacement.z [m]"


def test_equilibrium_frames_are_load_factors(bare, tmp_path, drawn):
    """An equilibrium's frames are at load multipliers (docs/path_following.md's load factor),
    not times: the --along legend and the time plot's axis say so (with or without units)."""
    with h5py.File(bare) as f:
        factors = f["load_factor"][()]
    _cli("plot", bare, "moment.bending2@beam.all", "--along", "--frames", "1,-1", "-o",
         tmp_path / "m.png")  # fmt: skip
    assert drawn[0].legend == [f"bending2 load factor = {factors[k]:.6g}" for k in (1, -1)]
    _cli("plot", bare, "displacement.z@beam.end", "-o", tmp_path / "w.png")
    assert drawn[1].xlabel == "load factor"
    assert not any(re.search(r"\bt = ", text) for text in drawn[0].legend)


def test_stresses_are_drawn_in_mpa(si, tmp_path, drawn):
    """SI's Pa shown as MPa: the numbers divided by 1e6 (one multiplication by pint's factor,
    exactly 1e-6: rtol 1e-15, an ulp or two); the file keeps Pa."""
    _cli("plot", si, "von_mises_max@beam.all", "-o", tmp_path / "vm.png")
    (fig,) = drawn
    assert fig.ylabel == "von_mises_max [MPa]"
    with h5py.File(si) as f:
        stored = f["rods/von_mises_max"][()]
    shown = np.stack([y for _, y in fig.curves[: stored.shape[1]]], axis=1)
    np.testing.assert_allclose(shown, stored * 1e-6, rtol=1e-15)
    assert 100 < shown.max() < 1000  # hundreds of MPa (a 20 mm bar, 1 kN at 2 m), not 1e8


def test_against_a_stress_is_in_mpa(si, tmp_path, drawn):
    _cli("plot", si, "load_factor", "--against", "von_mises_max@beam.all", "-o",
         tmp_path / "a.png")  # fmt: skip
    assert drawn[0].xlabel == "mean of 8 von_mises_max@beam.all [MPa]"


def test_info_shows_stresses_in_mpa_at_a_load_factor(si):
    with h5py.File(si) as f:
        vm = f["rods/von_mises_max"][()]
        factor = f["load_factor"][-1]
    out = _cli("info", si)
    k, e = np.unravel_index(np.argmax(vm), vm.shape)
    expected = f"largest von Mises {vm[k, e] * 1e-6:.6g} MPa at rod element {e}, frame {k} "
    assert expected + f"(load factor = {factor:.6g})" in out
    assert "units     SI: length m, mass kg, time s" in out
    assert "frames    3, load factor 0 to 1\n" in out  # an equilibrium's `time`
    assert "final     energy [J] kinetic 0, internal " in out
    assert "          momentum linear [kg m/s] [0. 0. 0.], angular [kg m^2/s] [0. 0. 0.]" in out


def test_the_csv_units_row_names_units(si, tmp_path):
    """The declared system's unit of each column, the numbers as the file holds them."""
    rods = tmp_path / "rods.csv"
    _cli("export", si, "--format", "csv", "--table", "rods", "-o", rods)
    row = dict(_units_row(rods))
    assert row["von_mises_max"] == "Pa"
    assert row["force.axial"] == "N"
    assert row["moment.bending2"] == "N m"
    assert row["curvature.1"] == "1/m"
    assert row["utilisation"] == "1"
    assert row["rod"] == "index"
    history = tmp_path / "tip.csv"
    _cli("export", si, "--format", "csv", "--history", "beam.end", "-o", history)
    row = dict(_units_row(history))
    assert row["angular_velocity.x"] == "rad/s"  # an angular velocity, not a frequency
    assert row["velocity.x"] == "m/s"
    assert row["energy.internal"] == "J"
    assert row["reaction_moment.y"] == "N m"
    assert row["momentum.linear.x"] == "kg m/s"
    assert row["time"] == "1"  # an equilibrium's time is its load multiplier
    with h5py.File(si) as f:
        stored = f["rods/von_mises_max"][-1]
    table = np.genfromtxt(rods, delimiter=",", names=True, skip_header=2)
    assert np.array_equal(table["von_mises_max"], stored)  # Pa, bit for bit


def _units_row(path):
    lines = path.read_text().splitlines()
    units_row = lines[1].removeprefix("# units: ").split(",")
    return zip(lines[2].split(","), units_row, strict=True)


def test_without_a_declaration_nothing_is_converted(bare, tmp_path, drawn):
    """No `units:`: rodsim cannot tell Pa from MPa, so numbers are shown as they are,
    unlabelled, and the CSV row names dimensions."""
    _cli("plot", bare, "von_mises_max@beam.all", "-o", tmp_path / "vm.png")
    assert drawn[0].ylabel == "von_mises_max"
    with h5py.File(bare) as f:
        vm = f["rods/von_mises_max"][()]
    assert np.array_equal(drawn[0].curves[0][1], vm[:, 0])
    out = _cli("info", bare)
    assert f"largest von Mises {vm.max():.6g} at rod element" in out
    assert "final     energy kinetic 0, internal " in out
    rods = tmp_path / "rods.csv"
    _cli("export", bare, "--format", "csv", "--table", "rods", "-o", rods)
    assert dict(_units_row(rods))["von_mises_max"] == "force/length^2"


def test_modal_frequencies_are_in_hz(tmp_path):
    """The same bar in SI and in m-kg-ms: the file's frequencies are cycles per s and per ms,
    rodsim info shows both in Hz, the same to the 6 digits printed (rel 1e-5: rounding 5e-6 of
    each, the eigen solves of two scalings of one problem agree far closer)."""
    rows = []
    for name, declaration in (("s", "units: SI"), ("ms", "units: {length: m, mass: kg, time: ms}")):
        h5 = _run(tmp_path, name, declaration, solver=MODAL)
        out = _cli("info", h5)
        assert "mode  frequency [Hz]  damping ratio" in out
        table = re.findall(r"^ {10}\s*(\d+)\s+(\S+)\s", out, flags=re.M)
        rows.append([float(freq) for _, freq in table])
        with h5py.File(h5) as f:
            stored = f["modes/frequency"][()]
        scale = 1.0 if name == "s" else 1000.0  # cycles per ms are 1000 Hz
        np.testing.assert_allclose(rows[-1], stored * scale, rtol=1e-5)
    assert len(rows[0]) == 2 and rows[0][0] > 1.0
    np.testing.assert_allclose(rows[1], rows[0], rtol=1e-5)


LONG = "Cantilever of a 20 mm round steel bar under a tip load of one kilonewton, first checks"


# inputs/cantilever_tip's title: its first line, centred over axes that the y label pushes
# right, ran into the picture's right edge while it was fitted to the figure's width
SHORTER = "Cantilever under a tip load, static large deflection"


@pytest.mark.parametrize("title", [LONG, SHORTER])
def test_a_long_title_fits_the_picture(tmp_path, drawn, title):
    """The --along title (case title, QUANTITY@SET, 'along the rod') ran off both edges of
    the 960-pixel picture: it is broken onto lines that fit, none of its ink in the picture's
    outer columns."""
    h5 = _run(tmp_path, "long", "", title=f'"{title}"', numbers=NUMBERS)
    png = tmp_path / "m.png"
    _cli("plot", h5, "moment.bending2@beam.all", "--along", "-o", png)
    assert drawn[0].title.replace("\n", " ") == f"{title}: moment.bending2@beam.all along the rod"
    image = imread(png)[:, :, :3]
    dark = (image < 0.5).any(axis=2)
    spine = int(np.argmax(dark.mean(axis=1) > 0.5))  # the axes' top edge: a line across
    top = image[: spine - 2]  # the title's band, above the axes (and its antialiased edge)
    assert (top < 0.5).any(axis=2).sum() > 100  # the title is there
    # its lines keep out of the figure's 2% margins (plots.fit_title): 19 of 960 pixels; 10
    # leave room for the glyphs' antialiasing
    edges = np.concatenate([top[:, :10], top[:, -10:]], axis=1)
    assert not (edges < 0.9).any(), "the title runs off the picture"


@pytest.mark.parametrize(
    ("name", "dim", "expected"),
    [
        ("SI", "force/length^2", ("MPa", 1e-6)),
        ("mm-t-s", "force/length^2", ("MPa", 1.0)),
        ("SI", display_units.FREQUENCY, ("Hz", 1.0)),
        ("SI", display_units.ANGULAR, ("rad/s", 1.0)),
        ("mm-t-s", "force*length", ("mJ", 1.0)),
        ("mm-t-s", "length", ("mm", 1.0)),
    ],
)
def test_the_rule(name, dim, expected):
    """pint's factors are exact powers of ten here: rel 1e-15."""
    unit, factor = display_units.shown(dim, units.system(name))
    assert unit == expected[0] and math.isclose(factor, expected[1], rel_tol=1e-15)


def test_stored_units_of_the_csv():
    mm = units.system("mm-t-s")
    assert display_units.stored("force/length^2", mm) == "MPa"
    assert display_units.stored("force/length", mm) == "N/mm"
    assert display_units.stored("mass length/time", mm) == "t mm/s"
    assert display_units.stored("force length", mm, moment=True) == "N mm"
    ms = units.system({"length": "m", "mass": "kg", "time": "ms"})
    assert display_units.stored(display_units.FREQUENCY, ms) == "1/ms"
    assert display_units.shown(display_units.FREQUENCY, ms).factor == pytest.approx(1000.0)
    assert display_units.stored("force/length^2", None) == "force/length^2"
