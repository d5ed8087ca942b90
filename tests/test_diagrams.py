"""rodsim plot QUANTITY@SET --along (rodsim/post/diagrams.py): a diagram along a rod, checked
against beam statics and looked at as a picture."""

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from matplotlib.image import imread

from rodsim import api
from rodsim.cli import main
from rodsim.errors import CaseError
from rodsim.post.diagrams import chain, plot_along

CANTILEVER = """
rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e6, GA: [1.0e6, 1.0e6], GJ: 100, EI: [100, 100], rhoA: 1,
      rhoI: [1.0e-3, 1.0e-3]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1]}
solver: {analysis: equilibrium, equilibrium: {load_steps: 2}}
output: {vtk: false}
"""
C0 = np.array([31, 119, 180]) / 255  # matplotlib's first two line colours
C1 = np.array([255, 127, 14]) / 255


@pytest.fixture(scope="module")
def cantilever(tmp_path_factory):
    folder = tmp_path_factory.mktemp("diagram")
    case = folder / "cant.yaml"
    case.write_text(CANTILEVER)
    out = folder / "cant.h5"
    api.run_case(case, out, vtk=False)
    return out


def _pixels_near(image, colour, tol=0.08) -> int:
    return int(np.sum(np.all(np.abs(image[:, :, :3] - colour) < tol, axis=2)))


def test_bending_moment_diagram_is_the_statics(cantilever, tmp_path):
    """A tip force P on a cantilever of length L: M(s) = P (L - s), at the elements'
    midpoints (2-node elements: one-point quadrature), to the geometric nonlinearity of the
    0.027 L tip deflection (the lever shortens by O(w^2/L): 4e-4 here)."""
    png, data = plot_along(cantilever, "moment.bending2@beam.all", tmp_path / "m.png")
    assert data.kind == "element" and data.components == ("bending2",)
    np.testing.assert_allclose(data.s, 0.25 * np.arange(8) + 0.125, rtol=1e-12)
    np.testing.assert_allclose(data.values[-1, :, 0], 2.0 - data.s, rtol=1e-3)
    np.testing.assert_allclose(data.values[1, :, 0], 0.5 * (2.0 - data.s), rtol=1e-3)
    with h5py.File(cantilever) as f:  # the elements' own values, in chain order
        assert np.array_equal(data.values[-1, :, 0], f["rods/moment"][-1][:, 1])


def test_nodal_quantities_sit_at_the_nodes(cantilever, tmp_path):
    _, data = plot_along(cantilever, "displacement.z@beam.all", tmp_path / "w.png")
    assert data.kind == "node"
    np.testing.assert_allclose(data.s, 0.25 * np.arange(9), rtol=1e-12)
    with h5py.File(cantilever) as f:
        w = f["nodes/position"][-1][:, 2] - f["mesh/points"][:, 2]
    assert np.array_equal(data.values[-1, :, 0], w)
    assert abs(w[0]) < 1e-12 and np.all(np.diff(w) < 0)  # from the clamp down to the tip


def test_the_picture_shows_the_frames_and_the_envelope(cantilever, tmp_path):
    png, _ = plot_along(
        cantilever, "moment.bending2@beam.all", tmp_path / "m.png", "1,-1", envelope=True
    )
    image = imread(png)
    assert image[:, :, :3].std() > 0.05  # not blank
    assert _pixels_near(image, C0) > 200  # the envelope band's outline and the first frame
    assert _pixels_near(image, C1) > 200  # the second frame
    one, _ = plot_along(cantilever, "moment.bending2@beam.all", tmp_path / "one.png", "1")
    other, _ = plot_along(cantilever, "moment.bending2@beam.all", tmp_path / "two.png", "2")
    assert not np.array_equal(imread(one), imread(other))  # another frame, another picture


def test_chain_walks_a_rod_from_an_end_and_a_ring_round():
    conn = np.array([[2, 3], [0, 1], [1, 2], [5, 6]])
    order, firsts, last = chain(conn, np.array([0, 1, 2]), "s")
    assert order.tolist() == [1, 2, 0] and firsts.tolist() == [0, 1, 2] and last == 3
    ring = np.array([[0, 1], [1, 2], [2, 0]])
    order, firsts, last = chain(ring, np.arange(3), "s")
    assert sorted(order.tolist()) == [0, 1, 2] and last == firsts[0]
    with pytest.raises(CaseError, match="do not form one chain"):
        chain(np.array([[0, 1], [1, 2], [1, 3]]), np.arange(3), "s")  # a branch
    with pytest.raises(CaseError, match="do not form one chain"):
        chain(conn, np.arange(4), "s")  # two pieces


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["moment@beam.all", "--frames", "0"], "--frames and --envelope are for --along"),
        (["moment@beam.all", "--along", "--against", "time"], "without --against"),
        (["membrane@beam.all", "--along"], "a nodal or rod quantity"),
        (["moment@beam.all", "--along", "--frames", "0,9"], "holds 3 frames"),
        (["moment.bend@beam.all", "--along"], "unknown component 'bend'"),
    ],
)
def test_cli_refuses_what_it_cannot_draw(cantilever, tmp_path, args, words):
    out = ["-o", str(tmp_path / "x.png")]
    result = CliRunner().invoke(main, ["plot", str(cantilever), *args, *out])
    assert result.exit_code == 2, result.output
    assert words in result.output
