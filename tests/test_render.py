"""rodsim render (rodsim/post/render.py, docs/render.md): the surfaces it draws, checked as
geometry, and its pictures and movies, looked at pixel by pixel.

VTK renders off-screen through EGL (or OSMesa); where neither works on the machine the picture
tests skip, saying so (the geometry and refusal tests still run)."""

import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import cmdline

from rodsim import api
from rodsim.cli import main
from rodsim.model import outlines
from rodsim.post import render_scene as scene

CANTILEVER = """
rodsim: 1
title: cantilever
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [2, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, material: {E: 1.0e7, nu: 0.3, rho: 1000}, shape: {rectangle: [0.1, 0.1]}}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -10]}
solver: {analysis: equilibrium, equilibrium: {load_steps: 3}}
output: {vtk: false}
"""
PLATE = """
rodsim: 1
title: plate
mesh:
  - rectangle: {name: p, origin: [0, 0, 0], size: [1, 1], elements: [4, 4], section: s}
sections:
  s: {type: plate, material: {E: 1.0e6, nu: 0.3, rho: 1.0}, thickness: 0.02}
boundary:
  - {set: p.x0, fix: all}
loads:
  - {set: p.all, pressure: 1.0}
solver: {analysis: equilibrium}
output: {vtk: false}
"""
# a free rod flying and turning in the plane through the origin normal to (1, -1, 1): its
# reference (-1, 1, 2), its velocity (3, 3, 0) and its spin about (1, -1, 1) all in that plane
FLYING = """
rodsim: 1
title: flying rod
mesh:
  - rod: {name: r, from: [0, 0, 0], to: [-1, 1, 2], elements: 6, up: [1, -1, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [50, 50], rhoA: 1,
      rhoI: [1.0e-3, 1.0e-3]}
initial: {velocity: [3, 3, 0], angular_velocity: [0.5, -0.5, 0.5], center: [-0.5, 0.5, 1]}
solver: {scheme: explicit, t_end: 4.0}
output: {interval: 0.1, vtk: false}
"""
VIRIDIS_LOW, VIRIDIS_HIGH = np.array([68, 1, 84]), np.array([253, 231, 37])


def _run(folder, text, name, *overrides):
    case = folder / f"{name}.yaml"
    case.write_text(text)
    out = folder / f"{name}.h5"
    api.run_case(api.load_case(case, list(overrides)), out, vtk=False)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("render")
    return {
        "cantilever": _run(folder, CANTILEVER, "cant"),
        "modal": _run(folder, CANTILEVER, "modal", "solver.analysis=modal", "loads=[]"),
        "plate": _run(folder, PLATE, "plate"),
    }


def _volume(points: np.ndarray, faces: np.ndarray) -> float:
    """The volume a closed, outward-oriented surface encloses (divergence theorem): the sum
    over its faces, fanned into triangles, of p0 . (p1 x p2) / 6."""
    total, i = 0.0, 0
    while i < len(faces):
        n, ids = faces[i], faces[i + 1 : i + 1 + faces[i]]
        for k in range(1, n - 1):
            p0, p1, p2 = points[ids[0]], points[ids[k]], points[ids[k + 1]]
            total += p0 @ np.cross(p1, p2) / 6.0
        i += n + 1
    return total


# --- geometry ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["rectangle", "i_section", "channel", "angle"])
def test_a_rod_is_the_closed_prism_of_its_section(kind):
    """Two straight elements of length 0.5: the surface encloses A L (caps cut into triangles,
    outward: positive), turned rigidly it turns with the rod (a rotation R of every node
    and the positions gives R p)."""
    size = {"rectangle": [0.1, 0.2], "i_section": [0.3, 0.2, 0.01, 0.02]}.get(kind)
    size = size or {"channel": [0.3, 0.1, 0.01, 0.015], "angle": [0.12, 0.08, 0.01]}[kind]
    o = outlines.outline({kind: size})
    area = 0.5 * np.sum(o[:, 0] * np.roll(o[:, 1], -1) - np.roll(o[:, 0], -1) * o[:, 1])
    x = np.array([[0.0, 0, 0], [0.5, 0, 0], [1.0, 0, 0]])
    conn = np.array([[0, 1], [1, 2]])
    ends = np.broadcast_to(np.eye(3), (2, 2, 3, 3))
    surface = scene.rod_surface(conn, np.zeros(2, int), o[None], 1.0)
    p = scene.rods_at(surface, x, np.broadcast_to(np.eye(3), (3, 3, 3)), ends, conn)
    assert _volume(p, surface.faces) == pytest.approx(area * 1.0, rel=1e-12)
    q = np.array([[0.9, 0.1, -0.3, 0.2]])
    turn = scene.matrices(q / np.linalg.norm(q))
    moved = scene.rods_at(surface, x @ turn[0].T, np.repeat(turn, 3, axis=0), ends, conn)
    np.testing.assert_allclose(moved, p @ turn[0].T, atol=1e-15)
    assert surface.element.max() == 1 and set(surface.node) == {0, 1, 2}


def test_rods_meeting_at_a_corner_each_show_their_own_section():
    """A column and a beam meeting at a right angle at node 1, whose nodal frame is the
    column's: each section is drawn across its own rod (mesh/rod_frames), not the node's."""
    x = np.array([[0.0, 0, 0], [0, 0, 1], [1, 0, 1]])
    conn = np.array([[0, 1], [1, 2]])
    column = np.column_stack([[0, 0, 1], [1, 0, 0], [0, 1, 0]]).astype(float)
    beam = np.column_stack([[1, 0, 0], [0, 0, -1], [0, 1, 0]]).astype(float)
    ends = np.array([[column, column], [beam, beam]])
    o = outlines.outline({"rectangle": [0.1, 0.1]})
    surface = scene.rod_surface(conn, np.zeros(2, int), o[None], 1.0)
    p = scene.rods_at(surface, x, np.broadcast_to(np.eye(3), (3, 3, 3)), ends, conn)
    b = len(o)
    at_corner_column, at_corner_beam = p[b : 2 * b], p[2 * b : 3 * b]
    np.testing.assert_allclose(at_corner_column[:, 2], 1.0)  # across the column (along z)
    np.testing.assert_allclose(at_corner_beam[:, 0], 0.0)  # across the beam (along x)


def test_a_plate_is_the_solid_of_its_thickness():
    """Two quads and a triangle of thickness 0.1 and 0.2: volume sum(area h); a plate of no
    thickness is its mid surface."""
    x = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0]])
    plates = np.array([[0, 1, 2, 3], [1, 4, 5, 2], [4, 5, 2, 2]])
    h = np.array([0.1, 0.2, 0.2])
    normals = np.tile([0.0, 0, 1], (6, 1))
    surface = scene.plate_surface(plates, h)
    p = scene.plates_at(surface, x, normals, plates)
    assert _volume(p, surface.faces) == pytest.approx(0.1 + 0.2 + 0.5 * 0.2, rel=1e-12)
    flat = scene.plate_surface(plates[:1], np.array([np.nan]))
    assert np.array_equal(flat.faces, [4, 0, 1, 2, 3])


def test_concave_outlines_are_cut_into_triangles_that_cover_them():
    for shape in ({"i_section": [0.3, 0.2, 0.01, 0.02]}, {"channel": [0.3, 0.1, 0.01, 0.02]}):
        o = outlines.outline(shape)
        tri = scene.triangles(o)
        a, b, c = o[tri[:, 0]], o[tri[:, 1]], o[tri[:, 2]]
        u, v = b - a, c - a
        areas = 0.5 * (u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])
        assert len(tri) == len(o) - 2 and np.all(areas > 0)
        whole = 0.5 * np.sum(o[:, 0] * np.roll(o[:, 1], -1) - np.roll(o[:, 0], -1) * o[:, 1])
        assert areas.sum() == pytest.approx(whole, rel=1e-12)


def test_the_results_file_holds_what_render_draws(runs):
    """mesh/section_outline is the section's outline; mesh/rod_frames the elements' frames;
    mesh/plate_thickness the plates' (layout 1.6)."""
    with h5py.File(runs["cantilever"]) as f:
        o = f["mesh/section_outline"][0]
        np.testing.assert_array_equal(o, outlines.outline({"rectangle": [0.1, 0.1]}))
        np.testing.assert_allclose(f["mesh/rod_frames"][:, 0], f["mesh/frames"][:-1], atol=1e-15)
    with h5py.File(runs["plate"]) as f:
        np.testing.assert_array_equal(f["mesh/plate_thickness"][()], 0.02)


# --- pictures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def headless():
    """Skip where VTK cannot render off-screen here (no EGL nor OSMesa): tried in a child
    process, since a missing GL library can abort the process that tries."""
    pytest.importorskip("pyvista", reason="rodsim render needs rodsim[render]")
    probe = (
        "from rodsim.post.render import pyvista; pv = pyvista(); p = pv.Plotter(off_screen=True,"
        " window_size=[64, 64]); p.add_mesh(pv.Sphere()); print(p.screenshot(return_img=True)"
        ".std() > 0)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if done.returncode != 0 or "True" not in done.stdout:
        pytest.skip(f"VTK cannot render off-screen on this machine: {done.stderr[-300:]}")


def _image(path) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _drawing(img: np.ndarray) -> np.ndarray:
    """The picture above the colour bar (its bottom 15%) and below the label (top 8%)."""
    h = img.shape[0]
    return img[int(0.08 * h) : int(0.85 * h)]


def _chroma(colour) -> np.ndarray:
    return np.asarray(colour, dtype=float) / max(colour)


def _tolerance() -> float:
    """Two thirds of the chroma distance from each end of viridis to the colour 10% along the
    map: a pixel counted as an end colour is within the map's first or last tenth."""
    from matplotlib import colormaps

    m = colormaps["viridis"]
    ends = [(m(0.0)[:3], m(0.1)[:3]), (m(1.0)[:3], m(0.9)[:3])]
    return 2 / 3 * min(np.abs(_chroma(a) - _chroma(b)).max() for a, b in ends)


TOL = _tolerance()


def _near(img, colour, tol=TOL) -> int:
    """Pixels of the colour, whatever the light on them: those whose RGB over its largest
    channel is the colour's within tol (shading scales a face's colour, and VTK's lights
    change its chroma by up to 0.07)."""
    top = img.max(axis=2, keepdims=True)
    shade = img / np.maximum(top, 1)
    target = _chroma(colour)
    return int(np.sum((np.abs(shade - target).max(axis=2) < tol) & (top[:, :, 0] > 40)))


def test_a_picture_shows_the_field_over_its_range(runs, headless, tmp_path):
    """The cantilever coloured by displacement: the drawing is not blank and holds both ends
    of the colour map (the clamp at 0, the tip at the largest); by the bending moment it is
    another picture; with --range twice the largest displacement the tip is mid-map, and
    with --field none there are no map colours at all."""
    result = CliRunner().invoke(
        main, ["render", str(runs["cantilever"]), "-o", str(tmp_path / "u.png")]
    )
    assert result.exit_code == 0, result.output
    u = _drawing(_image(tmp_path / "u.png"))
    assert (np.abs(u - 255).sum(axis=2) > 30).mean() > 0.01
    assert _near(u, VIRIDIS_LOW) > 100 and _near(u, VIRIDIS_HIGH) > 100
    from rodsim import render

    m = _drawing(_image(render(runs["cantilever"], tmp_path / "m.png", field="moment.bending2")))
    assert (np.abs(m - u).max(axis=2) > 30).sum() > 1000
    with h5py.File(runs["cantilever"]) as f:
        top = np.linalg.norm(f["nodes/position"][-1] - f["mesh/points"][()], axis=1).max()
    half = _drawing(_image(render(runs["cantilever"], tmp_path / "r.png", clim=(0.0, 2 * top))))
    assert _near(half, VIRIDIS_HIGH) == 0 and _near(half, VIRIDIS_LOW) > 100
    plain = _drawing(_image(render(runs["cantilever"], tmp_path / "n.png", field="none")))
    assert _near(plain, VIRIDIS_LOW) == 0 and _near(plain, VIRIDIS_HIGH) == 0


def test_a_gif_and_an_mp4_hold_every_frame(runs, headless, tmp_path):
    """Four frames (load multipliers 0 to 1): four pictures, the first (the reference, no
    displacement anywhere: one colour) unlike the last."""
    from PIL import Image

    from rodsim import render

    gif = render(runs["cantilever"], tmp_path / "c.gif")
    with Image.open(gif) as im:
        assert im.n_frames == 4 and im.size == (640, 480)
        first = np.asarray(im.convert("RGB")).astype(int)
        im.seek(3)
        last = np.asarray(im.convert("RGB")).astype(int)
    assert (np.abs(first - last).max(axis=2) > 30).sum() > 1000
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg", reason="an .mp4 needs rodsim[movie]")
    mp4 = render(runs["cantilever"], tmp_path / "c.mp4", size=(321, 240))
    reader = imageio_ffmpeg.read_frames(str(mp4))
    meta = next(reader)
    frames = [np.frombuffer(b, np.uint8) for b in reader]
    assert meta["size"] == (320, 240) and len(frames) == 4
    assert frames[-1].std() > 10


def test_a_mode_animates_over_one_period(runs, headless, tmp_path):
    """24 frames of a sin(2 pi j / 24) times the mode: j = 6 and j = 18 bend opposite ways,
    j = 0 and 12 are the state itself."""
    from PIL import Image

    from rodsim import render

    gif = render(runs["modal"], None, mode=1)
    assert gif.name == "modal_mode1.gif"
    with Image.open(gif) as im:
        assert im.n_frames == 24
        pictures = []
        for j in (0, 6, 12, 18):
            im.seek(j)
            pictures.append(np.asarray(im.convert("RGB")).astype(int))
    assert (np.abs(pictures[1] - pictures[3]).max(axis=2) > 30).sum() > 500
    assert (np.abs(pictures[0] - pictures[2]).max(axis=2) > 30).sum() < 50


def test_plates_are_drawn_with_their_field(runs, headless, tmp_path):
    from rodsim import render

    img = _drawing(_image(render(runs["plate"], tmp_path / "p.png", field="bending.M11")))
    assert _near(img, VIRIDIS_LOW) > 100 and _near(img, VIRIDIS_HIGH) > 100
    rods_only = _drawing(_image(render(runs["plate"], tmp_path / "q.png", field="displacement.z")))
    assert (np.abs(img - rods_only).max(axis=2) > 30).sum() > 1000


def test_a_file_from_before_layout_1_6_is_drawn_with_a_default_tube(runs, headless, tmp_path):
    old = tmp_path / "old.h5"
    old.write_bytes(runs["cantilever"].read_bytes())
    with h5py.File(old, "a") as f:
        for name in ("mesh/rod_frames", "mesh/section_outline"):
            del f[name]
        f.attrs["layout_minor"] = 5
    result = CliRunner().invoke(main, ["render", str(old)])
    assert result.exit_code == 0, result.output
    assert _near(_drawing(_image(tmp_path / "old_displacement.png")), VIRIDIS_LOW) > 50


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, says",
    [
        (
            ["--field", "stress"],
            "unknown field 'stress'; expected one of displacement, position, rotation",
        ),
        (["--field", "force.x"], "force has components axial, shear2, shear3"),
        (["-o", "x.jpg"], "expected a .png (one frame), .gif or .mp4"),
        (["--frames", "9"], "the file holds 4 frames (0 to 3, or -4 to -1); got 9"),
        (["--frames", "0:2"], "a .png is one frame"),
        (["--mode", "1"], "no modes/ or buckling/ group"),
        (["--cmap", "nope"], "unknown colour map 'nope'"),
        (["--size", "10x10"], "expected 16 to 8192 pixels a side, got 10x10"),
        (["--size", "100000x100000"], "expected 16 to 8192 pixels a side"),
        (["--range", "2,1"], "expected LOW < HIGH"),
        (["--range", "-inf,1"], "expected LOW,HIGH"),
        (["--scale", "inf"], "expected a finite scale > 0"),
        (["--time", "nan"], "expected a finite time"),
        (["--camera", "1,2/3"], "expected px,py,pz/fx,fy,fz/ux,uy,uz"),
        (["--camera", "1,2,3/0,0,0/0,0,0"], "the view-up vector is zero or along the line"),
        (["--camera", "0,0,5/0,0,0/0,0,1"], "the view-up vector is zero or along the line"),
        (["--camera", "1,2,3/1,2,3/0,0,1"], "the camera's position is its focal point"),
        (["--camera", "1,2,3/0,0,0/0,0,1", "--view", "iso"], "give it without --view"),
        (["--camera", "1,2,3/0,0,0/0,0,1", "--fit", "all"], "give it without --fit"),
        (["--mode", "0"], "modes count from 1; got 0"),
        (["--field", "displacement."], "expected QUANTITY or QUANTITY.COMPONENT"),
    ],
)
def test_bad_options_exit_2_with_what_was_expected(runs, args, says, tmp_path):
    result = CliRunner().invoke(main, ["render", str(runs["cantilever"]), *args])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output


def test_an_existing_file_of_another_kind_is_not_overwritten(runs, tmp_path):
    target = tmp_path / "notes.png"
    target.write_text("my notes")
    result = CliRunner().invoke(main, ["render", str(runs["cantilever"]), "-o", str(target)])
    assert result.exit_code == 2 and "is not a PNG picture" in result.output
    assert target.read_text() == "my notes"


def test_without_pyvista_render_names_the_extra(runs, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyvista", None)  # import pyvista raises ImportError
    result = CliRunner().invoke(main, ["render", str(runs["cantilever"])])
    assert result.exit_code == 2
    assert 'pip install "rodsim[render]"' in result.output


def test_without_ffmpeg_an_mp4_names_the_extra(runs, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)
    monkeypatch.setattr("shutil.which", lambda name: None)
    result = CliRunner().invoke(
        main, ["render", str(runs["cantilever"]), "-o", str(tmp_path / "a.mp4")]
    )
    assert result.exit_code == 2 and 'pip install "rodsim[movie]"' in result.output
    assert not (tmp_path / "a.mp4").exists()


def test_a_mode_takes_no_frames(runs):
    result = CliRunner().invoke(main, ["render", str(runs["modal"]), "--mode", "1", "--time", "0"])
    assert result.exit_code == 2 and "give it without --frames or --time" in result.output


def test_python_options_are_checked_as_the_command_checks_them(runs, tmp_path):
    from rodsim import CaseError, render

    with pytest.raises(CaseError, match="unknown option colour; expected field, frames"):
        render(runs["cantilever"], tmp_path / "a.png", colour="red")
    with pytest.raises(CaseError, match="expected WIDTHxHEIGHT"):
        render(runs["cantilever"], tmp_path / "a.png", size="big")
    with pytest.raises(CaseError, match="expected LOW,HIGH"):
        render(runs["cantilever"], tmp_path / "a.png", clim=(0, 1, 2))


def test_a_long_run_shows_300_frames_from_the_first_to_the_last():
    from rodsim.post.render_options import frames

    for n in (301, 1349, 5000):
        picked = frames(None, n, movie=True)
        assert len(picked) == 300 and picked[0] == 0 and picked[-1] == n - 1
        assert np.all(np.diff(picked) > 0)
    assert frames(None, 40, movie=True) == list(range(40))


# --- the camera --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flying(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("flying"), FLYING, "flying")


def _on_screen(camera, x: np.ndarray, aspect: float) -> tuple:
    """Where the points x (N,3) fall in the picture of camera (render_camera.Shot, VTK's view
    angle of 30 degrees, vertical): (N,2) across and up, in picture heights from the centre
    (the picture spans -aspect/2 to aspect/2 across, -1/2 to 1/2 up), and the view direction
    (from the focal point to the camera)."""
    position, focal, up = (np.asarray(v, dtype=float) for v in camera)
    back = (position - focal) / np.linalg.norm(position - focal)
    up = up - (up @ back) * back
    up /= np.linalg.norm(up)
    across = np.cross(up, back)
    r = x - position
    depth = -(r @ back)  # in front of the camera: positive
    height = 2 * np.tan(np.radians(15.0))  # the picture's height at depth 1
    return np.column_stack([r @ across, r @ up]) / depth[:, None] / height, back


def test_a_movie_follows_a_flying_rod_seen_across_its_flight(flying, tmp_path):
    """The flying rod travels about 5 times its length. The movie's camera (the default
    --view auto, --fit each) looks along the normal of the plane of the rod and its flight,
    across the flight, and follows the rod: in every frame the rod is whole in the picture,
    and its projected length is over half the picture's height (0.59 measured). The camera
    before, one iso view fitted to the whole flight, showed it 0.05 to 0.15 of the height,
    from 35 degrees off its flight."""
    pytest.importorskip("pyvista", reason="rodsim render needs rodsim[render]")
    from rodsim.post.render import camera_path

    with h5py.File(flying) as f:
        x = f["nodes/position"][()]
    cameras = camera_path(flying, tmp_path / "fly.gif")
    assert len(cameras) == len(x)
    normal = np.array([1.0, -1.0, 1.0]) / np.sqrt(3.0)
    flight = x[-1].mean(axis=0) - x[0].mean(axis=0)
    assert np.linalg.norm(flight) > 4 * np.sqrt(6.0)  # the rod's length is sqrt(6)
    for camera, nodes in zip(cameras, x, strict=True):
        seen, back = _on_screen(camera, nodes, 640 / 480)
        # the smallest principal axis of a plane motion is the plane's normal: exactly, up
        # to the rounding of the covariance (1e-9 leaves a millionth of a degree)
        assert abs(back @ normal) > 1 - 1e-9
        assert abs(back @ flight) < 1e-6 * np.linalg.norm(flight)
        assert np.all(np.abs(seen[:, 0]) <= 640 / 480 / 2) and np.all(np.abs(seen[:, 1]) <= 0.5)
        # a straight rod facing the camera, the sphere of its box spanning 0.7 of the height
        # (render_camera.FOLLOW_FILL), spans 0.7 cos 15 degrees = 0.68 of it; the section's
        # size in the box and the smoothing's margin take some, bending shortens its chord:
        # half of the height is what a follower must keep
        assert np.all(np.abs(seen[:, 1]) <= 0.35)  # clear of the label and the colour bar
        span = np.linalg.norm(seen[:, None, :] - seen[None, :, :], axis=2).max()
        assert span > 0.5


def test_fit_all_keeps_one_camera_that_holds_every_frame(flying, tmp_path):
    """--fit all: one camera for the movie (the rod small in it), every frame whole."""
    pytest.importorskip("pyvista", reason="rodsim render needs rodsim[render]")
    from rodsim.post.render import camera_path

    with h5py.File(flying) as f:
        x = f["nodes/position"][()]
    cameras = camera_path(flying, tmp_path / "fly.gif", fit="all")
    assert len(set(cameras)) == 1
    seen = np.concatenate([_on_screen(cameras[0], nodes, 640 / 480)[0] for nodes in x])
    assert np.all(np.abs(seen[:, 0]) <= 640 / 480 / 2) and np.all(np.abs(seen[:, 1]) <= 0.5)
    assert len(camera_path(flying, tmp_path / "one.png", frames="5")) == 1


def test_a_movie_reports_its_frames_as_it_draws(flying, headless, tmp_path):
    from rodsim import render

    calls = []
    render(flying, tmp_path / "f.gif", frames="::10", size=(64, 48),
           progress=lambda done, total: calls.append((done, total)))  # fmt: skip
    assert calls == [(k, 5) for k in range(6)]


def test_rods_and_plates_in_one_file(headless, tmp_path):
    """A plate with a stiffener along its edge: both drawn; a rod field leaves the plates
    grey, a plate field the rods."""
    from rodsim import render

    text = PLATE.replace(
        "sections:",
        "  - rod: {name: r, from: [0, 1, 0], to: [1, 1, 0], elements: 4, up: [0, 0, 1], "
        "section: b}\nsections:\n  b: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 1, "
        "EI: [1, 1], rhoA: 1, rhoI: [1.0e-3, 1.0e-3]}",
    )
    out = _run(tmp_path, text, "both")

    def greys(img) -> int:  # the NaN colour, lightgrey, lit: not white, not a map colour
        mean = img.mean(axis=2)
        return int(np.sum((np.ptp(img, axis=2) < 20) & (mean > 100) & (mean < 235)))

    counts = {}
    for field in ("displacement", "moment.bending2", "membrane.N11"):
        img = _drawing(_image(render(out, tmp_path / f"{field}.png", field=field)))
        assert _near(img, VIRIDIS_LOW) + _near(img, VIRIDIS_HIGH) > 100, field
        counts[field] = greys(img)
    # the nodal field colours everything: its few grey-ish pixels are edges and anti-aliasing
    # (1077 measured); grey plates (147244) or grey rods (9883) are many times more
    assert counts["moment.bending2"] > 4 * counts["displacement"]
    assert counts["membrane.N11"] > 4 * counts["displacement"]


def test_a_picture_that_cannot_be_written_is_exit_4(runs, headless, tmp_path):
    """A folder under a file; nothing is left behind. A folder that is not there is made."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(
        main, ["render", str(runs["cantilever"]), "-o", str(blocker / "a.png")]
    )
    assert result.exit_code == 4 and "cannot write" in result.output
    result = CliRunner().invoke(
        main, ["render", str(runs["cantilever"]), "-o", str(tmp_path / "new" / "a.png")]
    )
    assert result.exit_code == 0 and (tmp_path / "new" / "a.png").exists()


def test_reactions_are_coloured_with_their_unit(headless, tmp_path):
    """A field of the layout that rodsim plot does not name (reaction_force) has its unit in
    a declared system: N."""
    from rodsim.case import units
    from rodsim.post.render import _bar_title
    from rodsim.post.render_scene import parse_field

    si = units.from_attribute("SI: length m, mass kg, time s")
    assert (
        _bar_title(parse_field("reaction_force.z"), "reaction_force.z", si)
        == "reaction_force.z (N)"
    )
    assert _bar_title(parse_field("reaction_moment"), "reaction_moment", None) == (
        "reaction_moment (force length)"
    )
    assert _bar_title(parse_field("rotation"), "rotation", None) == "rotation (rad)"
    # stresses as rodsim plot shows them (docs/units.md, "Units shown"): MPa, not Pa
    assert _bar_title(parse_field("von_mises_max"), "von_mises_max", si) == "von_mises_max (MPa)"
    out = _run(tmp_path, "units: SI\n" + CANTILEVER.replace("rodsim: 1\n", "rodsim: 1\n", 1), "si")
    result = CliRunner().invoke(main, ["render", str(out), "--field", "reaction_force.z"])
    assert result.exit_code == 0, result.output


def test_a_signal_stops_a_render_and_leaves_nothing(runs, headless, tmp_path):
    """SIGTERM during an MP4: exit 128 + 15, no picture, no temporary file, no ffmpeg left."""
    import signal
    import time

    pytest.importorskip("imageio_ffmpeg", reason="an .mp4 needs rodsim[movie]")
    many = tmp_path / "many.h5"
    _run(tmp_path, CANTILEVER.replace("load_steps: 3", "load_steps: 200"), "many")
    target = tmp_path / "m.mp4"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rodsim.cli", "render", str(many), "-o", str(target)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    part = tmp_path / ".m.mp4.part"
    for _ in range(600):  # until the movie is being written
        if part.exists() or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "render stopped by SIGTERM: nothing written" in err
    assert not target.exists() and not part.exists()
    writers = [p for p in Path("/proc").glob("[0-9]*") if cmdline(p).count(str(part))]
    assert not writers, "an ffmpeg still writes the movie"
