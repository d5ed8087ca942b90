"""``rodsim render``: pictures and movies of a results file, drawn off-screen with pyvista
(docs/render.md): rods as prisms of their section outline, plates as solids of their
thickness, coloured by a field with a colour bar, a time label, and a camera fitted to every
frame drawn. A .png is one frame, a .gif or .mp4 the run (or the animation of a mode).

pyvista is the optional extra ``rodsim[render]``; an .mp4 needs an ffmpeg (``rodsim[movie]``
brings one, else the one on PATH).
"""

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rodsim import interrupts
from rodsim.case import units
from rodsim.errors import CaseError, Interrupted, ResourceError
from rodsim.post import display_units, render_memory
from rodsim.post import movie as movies
from rodsim.post import render_camera as cameras
from rodsim.post import render_options as options
from rodsim.post import render_scene as scene
from rodsim.post.plots import _is_equilibrium, _is_path
from rodsim.results.layout import FRAME_DATASETS
from rodsim.results.reader import frame_count, open_results

MODE_FRAMES = 24  # one period, as the ParaView series of a mode (docs/modal.md)
MODE_AMPLITUDE = 0.1  # largest nodal displacement, of the model's size


def pyvista():
    """The pyvista module, off-screen; CaseError (exit 2) naming the extra without it."""
    try:
        import pyvista as pv
    except ImportError:
        raise CaseError(
            'rodsim render needs pyvista, which is not installed: pip install "rodsim[render]"',
            key="render",
        ) from None
    pv.OFF_SCREEN = True
    from vtkmodules.vtkCommonCore import vtkLogger

    # VTK says "bad X server connection" before it falls back to EGL or OSMesa: harmless
    vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_ERROR)
    return pv


class Shot(NamedTuple):
    """One picture: the node positions (N,3), rotations (N,3,3), the field's values (on
    nodes, rods, plates) and the label of the frame."""

    x: np.ndarray
    turns: np.ndarray
    values: tuple
    label: str


def _scaled(x, q, points, scale: float):
    """Positions and rotation matrices with displacements and rotation vectors times scale."""
    turns = scene.matrices(q)
    if scale == 1.0:
        return x, turns
    from scipy.spatial.transform import Rotation

    rotvec = Rotation.from_matrix(turns).as_rotvec()
    return points + scale * (x - points), Rotation.from_rotvec(scale * rotvec).as_matrix()


def _time_labels(f, system):
    """k -> the label of frame k: its time, load multiplier, arc length or step and time."""
    unit = f" {system.label('time')}" if system is not None else ""
    n = frame_count(f)
    t = f["time"][:n]
    if _is_path(f):
        factor = f["load_factor"][:n]
        return lambda k: f"arc length {t[k]:.6g}, load factor {factor[k]:.6g}"
    if _is_equilibrium(f):
        return lambda k: f"load multiplier {t[k]:.6g}"
    step = f["step"][:n] if "step" in f else np.zeros(n, dtype=np.int64)
    if len(np.unique(step)) > 1:
        names = [
            (e.decode() if isinstance(e, bytes) else str(e)).split(":")[0] for e in f.attrs["steps"]
        ]
        total = f["total_time"][:n]
        return lambda k: f"step {names[step[k]]}: t = {t[k]:.6g}{unit} (total {total[k]:.6g})"
    return lambda k: f"t = {t[k]:.6g}{unit}"


def _nearest(f, t: float, n: int) -> int:
    """The frame whose time (total_time in a file of several steps) is nearest t."""
    stepped = "step" in f and len(np.unique(f["step"][:n])) > 1
    times = f["total_time" if stepped else "time"][:n]
    return int(np.argmin(np.abs(times - t)))


def frame_shots(f, picked, field, scale: float, system):
    points, label = f["mesh/points"][()], _time_labels(f, system)
    for k in picked:  # the field's values are the frame's own, whatever the scale drawn
        x = f["nodes/position"][k]
        values = scene.field_values(f, field, k, x)
        factor = _shown(field, system).factor
        if factor != 1.0:  # stresses in MPa (docs/units.md, "Units shown")
            values = tuple(None if v is None else v * factor for v in values)
        x, turns = _scaled(x, f["nodes/rotation"][k], points, scale)
        yield Shot(x, turns, values, label(k))


def mode_shots(f, mode: int, field, scale: float, movie: bool, system):
    """The animation of a mode (1-based) of modes/ or buckling/ over one period about the state
    it is about (docs/modal.md), amplitude scale times MODE_AMPLITUDE of the model's size: a
    picture is the largest amplitude. Its displacement field is the mode's, s u."""
    group = "modes" if "modes" in f else "buckling" if "buckling" in f else None
    if group is None:
        raise CaseError("the file has no modes/ or buckling/ group: --mode needs one", key="--mode")
    shapes = f[f"{group}/shape"]
    if not 1 <= mode <= len(shapes):
        raise CaseError(f"the file holds modes 1 to {len(shapes)}; got {mode}", key="--mode")
    if field.name not in ("displacement", "none"):
        raise CaseError(
            "a mode is coloured by its displacement (displacement[.x|.y|.z]) or none",
            key="--field",
        )
    from scipy.spatial.transform import Rotation

    k = int(f[group].attrs.get("frame", frame_count(f) - 1))
    x0, turns0 = f["nodes/position"][k], scene.matrices(f["nodes/rotation"][k])
    u, theta = shapes[mode - 1][:, :3], shapes[mode - 1][:, 3:]
    size = float(np.linalg.norm(np.ptp(f["mesh/points"][()], axis=0))) or 1.0
    largest = float(np.linalg.norm(u, axis=1).max()) or float(np.abs(theta).max()) or 1.0
    a = scale * MODE_AMPLITUDE * size / largest
    if group == "modes":
        hz = display_units.shown(display_units.FREQUENCY, system)
        unit = f" {hz.unit}" if system is not None else " per time unit"
        label = f"mode {mode}: frequency {f['modes/frequency'][mode - 1] * hz.factor:.6g}{unit}"
    else:
        label = f"buckling mode {mode}: load factor {f['buckling/factor'][mode - 1]:.6g}"
    for j in range(MODE_FRAMES) if movie else [MODE_FRAMES // 4]:
        s = a * math.sin(2.0 * math.pi * j / MODE_FRAMES)
        turns = Rotation.from_rotvec(s * theta).as_matrix() @ turns0
        values = None if field.name == "none" else scene.reduce_field(s * u, field)
        yield Shot(x0 + s * u, turns, (values, None, None), label)


# --- drawing -----------------------------------------------------------------------------------


def _bar_title(field, spec: str, system) -> str:
    """The colour bar's title: the field and its unit in the case's declared system, else its
    dimension (docs/results.md: the case's own units); a rotation's angle in rad. In
    parentheses: VTK's font draws square brackets as round ones."""
    if field.name == "rotation" and not field.component:
        return f"{spec} (rad)"
    if system is not None:
        unit = _shown(field, system).unit
    else:
        dim = _dimension(field)
        unit = "" if dim == "1" else dim.replace("*", " ")
    return f"{spec} ({unit})" if unit else spec


def _dimension(field) -> str:
    return units.QUANTITIES.get(field.name) or _layout_units(field.name)


def _shown(field, system) -> display_units.Shown:
    """How the field is shown: rodsim plot's rule (stresses in MPa, the declared units)."""
    if field.name in ("rotation", "none"):
        return display_units.Shown("rad" if field.name == "rotation" else "", 1.0)
    dim = _dimension(field)
    return display_units.shown(dim, system, moment=field.name in units.MOMENTS)


def _layout_units(name: str) -> str:
    """The units of a field's dataset in docs/results.md, as units.QUANTITIES writes them."""
    for d in FRAME_DATASETS:
        if d.path.split("/", 1)[-1] == name:
            return d.units.replace(" ", "*")
    return "1"


def _cameras(scan, extra: np.ndarray, o, size, movie: bool) -> list:
    """One render_camera.Shot per shot drawn: o.camera as given; else from the view, fitted to
    every frame's box (fit all, and a picture) or following the structure (fit each); extra
    (2,3): the box of what is drawn in every frame besides (the reference), or inf, -inf."""
    if o.camera is not None:
        return [cameras.Shot(o.camera.position, o.camera.focal, o.camera.up)] * len(scan.boxes)
    direction, up = cameras.view(o.view, scan.spread)
    angle, aspect = 30.0, size[0] / size[1]  # VTK's default view angle, vertical, degrees
    boxes = np.stack(
        [np.minimum(scan.boxes[:, 0], extra[0]), np.maximum(scan.boxes[:, 1], extra[1])], axis=1
    )
    if _fit(o, movie) == "each":
        return cameras.follow(boxes, direction, up, angle, aspect, o.fps)
    whole = np.array([boxes[:, 0].min(axis=0), boxes[:, 1].max(axis=0)])
    return [cameras.fit(whole, direction, up, angle, aspect)] * len(boxes)


def _fit(o, movie: bool) -> str:
    """--fit, or its default: each frame for a movie of frames, all frames for a mode's
    animation (an oscillation about one state: a still camera shows it) and a picture."""
    return o.fit or ("each" if movie and o.mode is None else "all")


class _Drawing(NamedTuple):
    mesh: object  # pyvista.PolyData
    surface: scene.Surface
    which: int  # 1 rods, 2 plates: the index into Shot.values
    place: object  # Shot -> (V,3) the surface's points


def _scalars(drawing: _Drawing, values: tuple, field) -> np.ndarray:
    """The colouring array of a drawn surface: nodal values on its points, element values on
    its faces, NaN (drawn grey) where the field has none."""
    nodal, own = values[0], values[drawing.which]
    if field.where == "node":
        return nodal[drawing.surface.node]
    if own is None:
        return np.full(len(drawing.surface.element), np.nan)
    return own[drawing.surface.element]


def _shots(f, o, field, movie: bool, system, n: int):
    """A function giving the shots to draw, afresh on each call (two passes read the file),
    and how many it gives."""
    if o.mode is not None:
        count = MODE_FRAMES if movie else 1
        return lambda: mode_shots(f, o.mode, field, o.scale, movie, system), count
    if o.time is not None:
        if movie:
            raise CaseError("--time picks one frame, for a .png", key="--time")
        picked = [_nearest(f, o.time, n)]
    else:
        picked = options.frames(o.frames, n, movie)
    return lambda: frame_shots(f, picked, field, o.scale, system), len(picked)


class _Scan(NamedTuple):
    boxes: np.ndarray  # (S,2,3) of the surfaces drawn in each shot
    spread: cameras.Spread  # of the nodes over every shot
    values: tuple  # (least, largest) of the field, inf and -inf where it has none


def _scan(shots, drawings, field, watch) -> _Scan:
    """Pass 1 over the shots: what the camera and the colour range must hold."""
    boxes, spread = [], cameras.Spread.empty()
    vmin, vmax = np.inf, -np.inf
    for shot in shots():
        _stop_if_asked(watch)
        spread = spread.add(shot.x)
        low, high = np.full(3, np.inf), np.full(3, -np.inf)
        for d in drawings:
            p = d.place(shot)
            low, high = np.minimum(low, p.min(axis=0)), np.maximum(high, p.max(axis=0))
            if field.name != "none":
                v = _scalars(d, shot.values, field)
                if np.isfinite(v).any():
                    vmin, vmax = min(vmin, np.nanmin(v)), max(vmax, np.nanmax(v))
        boxes.append((low, high))
    boxes = np.array(boxes)
    if not (np.isfinite(boxes).all() and np.isfinite(spread.box).all()):
        raise CaseError("the picture has no finite extent (a --scale too large?)", key="--scale")
    return _Scan(boxes, spread, (vmin, vmax))


def _stop_if_asked(watch) -> None:
    if watch.requested():
        raise Interrupted(f"render stopped by {watch.name}: nothing written", signal=watch.signal)


class _Plan(NamedTuple):
    shots: object  # () -> the shots, afresh
    total: int  # how many
    drawings: list
    scan: _Scan
    system: object  # the case's unit system, or None
    size: tuple  # of the picture, pixels


def _plan(f, path: Path, o, field, output: Path, watch, tell, pv, drawn: bool = True) -> _Plan:
    """What a render of the open results file f to output draws, and pass 1 over it; drawn:
    the pictures will be drawn (their memory is checked first, render_memory)."""
    n = frame_count(f)
    if n == 0:
        raise CaseError("the file holds no frame", file=str(path))
    raw = f.attrs.get("units", "")
    system = units.from_attribute(raw.decode() if isinstance(raw, bytes) else str(raw))
    movie = output.suffix.lower() != ".png"
    shots, total = _shots(f, o, field, movie, system, n)
    gif = output.suffix.lower() == ".gif"
    size = o.size or ((640, 480) if gif else (1024, 768))
    if drawn:  # before anything large is made
        render_memory.check(size, total, gif)
    tell(0, total)
    drawings = _surfaces(f, pv)
    scan = _scan(shots, drawings, field, watch)
    return _Plan(shots, total, drawings, scan, system, size)


def camera_path(path, output, **given) -> list:
    """The cameras (render_camera.Shot, one per frame drawn) of render(path, output, **given),
    found without drawing (docs/render.md, "Camera")."""
    path, o = Path(path), options.make(**given)
    field = scene.parse_field(o.field)
    output = options.output_path(path, output, o)
    with open_results(path) as f, interrupts.watch() as watch:
        plan = _plan(f, path, o, field, output, watch, lambda done, total: None, pyvista(), False)
        extra = _reference_box(f, plan.drawings) if o.reference else _NOTHING
        return _cameras(plan.scan, extra, o, plan.size, output.suffix.lower() != ".png")


def render(path, output=None, progress=None, **given) -> Path:
    """Draw a results file's frames (or a mode) to output (default: render_options.output_path)
    as the keyword options of render_options.Options say (docs/render.md); return the path
    written. progress(done, total): frames drawn of the total, at 0 and after each frame.
    CaseError (exit 2) for options no picture has, ResourceError (exit 4) where it cannot be
    written, Interrupted where a signal stopped it (nothing is written then)."""
    path, o = Path(path), options.make(**given)
    tell = progress or (lambda done, total: None)
    field = scene.parse_field(o.field)
    output = options.output_path(path, output, o)
    movie = output.suffix.lower() != ".png"
    if output.suffix.lower() == ".mp4":
        movies.ffmpeg()
    pv = pyvista()
    with open_results(path) as f, interrupts.watch() as watch:
        plan = _plan(f, path, o, field, output, watch, tell, pv)
        shots, total, drawings, scan, system, size = plan
        clim = o.clim or _range(*scan.values)
        pl = pv.Plotter(off_screen=True, window_size=list(size))
        writer = movies.Movie(output, o.fps)
        try:
            _dress(pl, f, drawings, field, clim, o, _bar_title(field, o.field, system))
            extra = _reference_box(f, drawings) if o.reference else _NOTHING
            views = _cameras(scan, extra, o, size, movie)
            title = f.attrs.get("title", "") or path.stem
            for done, (shot, camera, box) in enumerate(
                zip(shots(), views, scan.boxes, strict=True), 1
            ):
                _stop_if_asked(watch)
                pl.camera_position = [camera.position, camera.focal, camera.up]
                near = np.array([np.minimum(box[0], extra[0]), np.maximum(box[1], extra[1])])
                pl.renderer.ResetCameraClippingRange(*near.T.ravel())
                for d in drawings:
                    d.mesh.points = d.place(shot)
                    if field.name != "none" and clim is not None:
                        store = d.mesh.point_data if field.where == "node" else d.mesh.cell_data
                        store["field"] = _scalars(d, shot.values, field)
                pl.add_text(f"{title}\n{shot.label}", position="upper_left", font_size=11,
                            color="black", name="label")  # fmt: skip
                pl.render()
                writer.add(pl.screenshot(return_img=True))
                tell(done, total)
            writer.finish()
        except OSError as exc:
            writer.abandon()
            raise ResourceError(f"cannot write {output}: {exc.strerror or exc}") from None
        except KeyboardInterrupt:  # a second signal, or Ctrl-C outside the watch
            writer.abandon()
            raise Interrupted("render stopped: nothing written", signal=2) from None
        except BaseException:
            writer.abandon()
            raise
        finally:
            pl.close()
    return output


def _dress(pl, f, drawings, field, clim, o, bar: str) -> None:
    """Put the drawings (and the reference, with o.reference) in the plotter with their
    colouring."""
    pl.set_background("white")
    labels = 5 if pl.window_size[0] >= 640 else 3  # a narrow bar cannot hold five numbers
    for d in drawings:
        if field.name == "none" or clim is None:
            pl.add_mesh(d.mesh, color="lightsteelblue", show_edges=False)
            continue
        store = d.mesh.point_data if field.where == "node" else d.mesh.cell_data
        store["field"] = np.zeros(d.mesh.n_points if field.where == "node" else d.mesh.n_cells)
        pl.add_mesh(
            d.mesh, scalars="field", cmap=o.cmap, clim=clim, nan_color="lightgrey",
            scalar_bar_args={"title": bar, "color": "black", "fmt": "%.4g",
                             "vertical": False, "position_x": 0.2, "position_y": 0.03,
                             "height": 0.08, "width": 0.6, "n_labels": labels},
        )  # fmt: skip
    if o.reference:  # the undeformed structure, faint, behind the frames
        rest = _rest(f)
        for d in drawings:
            ghost = d.mesh.copy(deep=True)
            ghost.points = d.place(rest)
            pl.add_mesh(ghost, color="grey", opacity=0.3)


_NOTHING = np.array([np.full(3, np.inf), np.full(3, -np.inf)])  # the box of nothing


def _rest(f) -> Shot:
    """The undeformed structure, as a shot."""
    points = f["mesh/points"][()]
    return Shot(points, np.broadcast_to(np.eye(3), (len(points), 3, 3)), (), "")


def _reference_box(f, drawings) -> np.ndarray:
    """(2,3) the box of the undeformed structure's surfaces (--reference draws them)."""
    rest = _rest(f)
    points = [d.place(rest) for d in drawings]
    return np.array([np.min([p.min(axis=0) for p in points], axis=0),
                     np.max([p.max(axis=0) for p in points], axis=0)])  # fmt: skip


def _range(vmin: float, vmax: float):
    """The colour range of the values seen; None where there were none (drawn plain)."""
    if not np.isfinite(vmin):
        return None
    if vmax - vmin <= 1e-12 * max(abs(vmin), abs(vmax)):  # a constant field: a band around it
        pad = abs(vmin) * 0.01 or 1.0
        return (vmin - pad, vmax + pad)
    return (float(vmin), float(vmax))


def _surfaces(f, pv) -> list:
    """The drawings of a file's rods and plates: their pyvista meshes, made once (frames move
    their points), and how each places its points from a Shot."""
    points, frames = f["mesh/points"][()], f["mesh/frames"][()]
    size = float(np.linalg.norm(np.ptp(points, axis=0))) or 1.0
    drawings = []
    if "mesh/rods" in f and len(f["mesh/rods"]):
        conn = f["mesh/rods"][()]
        ends = f["mesh/rod_frames"][()] if "mesh/rod_frames" in f else frames[conn]
        if "mesh/section_outline" in f:
            outline, section = f["mesh/section_outline"][()], f["mesh/rod_section"][()]
        else:  # before layout 1.6: one default tube
            outline, section = np.zeros((1, 0, 2)), np.zeros(len(conn), dtype=np.int64)
        rods = scene.rod_surface(conn, section, outline, size)

        def place_rods(shot, surface=rods):
            return scene.rods_at(surface, shot.x, shot.turns, ends, conn)

        mesh = pv.PolyData(np.zeros((len(rods.node), 3)), faces=rods.faces)
        drawings.append(_Drawing(mesh, rods, 1, place_rods))
    if "mesh/plates" in f and len(f["mesh/plates"]):
        cells = f["mesh/plates"][()]
        h = f["mesh/plate_thickness"][()] if "mesh/plate_thickness" in f else np.zeros(len(cells))
        plates = scene.plate_surface(cells, h)
        d3 = frames[:, :, 2]

        def place_plates(shot, surface=plates):
            normals = np.einsum("nij,nj->ni", shot.turns, d3)
            return scene.plates_at(surface, shot.x, normals, cells)

        mesh = pv.PolyData(np.zeros((len(plates.node), 3)), faces=plates.faces)
        drawings.append(_Drawing(mesh, plates, 2, place_plates))
    return drawings
