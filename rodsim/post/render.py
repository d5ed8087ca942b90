"""``rodsim render``: pictures and movies of a results file, drawn off-screen with pyvista
(docs/render.md): rods as prisms of their section outline, plates as solids of their
thickness, coloured by a field with a colour bar, a time label, and a camera fitted to every
frame drawn. A .png is one frame, a .gif or .mp4 the run (or the animation of a mode).

pyvista is the optional extra ``rodsim[render]``; an .mp4 needs an ffmpeg (``rodsim[movie]``
brings one, else the one on PATH).
"""

import logging
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rodsim.case import units
from rodsim.errors import CaseError, ResourceError
from rodsim.post import movie as movies
from rodsim.post import render_scene as scene
from rodsim.post.plots import _is_equilibrium, _is_path
from rodsim.results_reader import frame_count, open_results

log = logging.getLogger(__name__)

KINDS = (".png", ".gif", ".mp4")
HEADERS = {".png": (0, b"\x89PNG"), ".gif": (0, b"GIF8"), ".mp4": (4, b"ftyp")}
VIEWS = ("auto", "iso", "xy", "xz", "yz")
MODE_FRAMES = 24  # one period, as the ParaView series of a mode (docs/modal.md)
MODE_AMPLITUDE = 0.1  # largest nodal displacement, of the model's size


class Options(NamedTuple):
    """What to draw: field (QUANTITY[.C] or none), frames (a slice 'start:stop:step' or one
    frame number), mode (1-based, 0: none), view, camera ("px,py,pz/fx,fy,fz/ux,uy,uz" or
    None), size (width, height; None: 1024 x 768, a .gif 640 x 480), fps, scale (of
    displacements and rotations), clim ((low, high) or None), cmap (a matplotlib colour map),
    time (the frame nearest it, instead of frames), reference (also the undeformed structure,
    faint grey)."""

    field: str = "displacement"
    frames: str | None = None
    mode: int = 0
    view: str = "auto"
    camera: str | None = None
    size: tuple | None = None
    fps: float = 12.0
    scale: float = 1.0
    clim: tuple | None = None
    cmap: str = "viridis"
    time: float | None = None
    reference: bool = False


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


def output_path(results: Path, output, options: Options) -> Path:
    """-o, else <stem>_<field>.png (a mode: <stem>_mode<k>.gif); CaseError for a suffix that
    is not .png, .gif or .mp4, or a file that is not an earlier picture of that kind."""
    if output is None:
        if options.mode:
            return results.with_name(f"{results.stem}_mode{options.mode}.gif")
        return results.with_name(f"{results.stem}_{options.field.replace('.', '_')}.png")
    output = Path(output)
    suffix = output.suffix.lower()
    if suffix not in KINDS:
        raise CaseError(
            f"-o {output}: expected a .png (one frame), .gif or .mp4 (a movie), got "
            f"{suffix or 'no suffix'!r}",
            key="render",
        )
    offset, header = HEADERS[suffix]
    if output.exists() and output.resolve() == results.resolve():
        raise CaseError(f"-o {output} is the results file itself", file=str(results))
    if output.is_file():
        with open(output, "rb") as f:
            start = f.read(offset + len(header))[offset:]
        if start != header:
            raise CaseError(
                f"-o {output} exists and is not a {suffix[1:].upper()} file: name a new file, "
                "or remove it first",
                file=str(results),
            )
    return output


def _frames(spec: str | None, n: int, movie: bool) -> list[int]:
    """Frame indices: 'K' one frame (negative from the end), 'A:B:C' a slice; default: the
    last frame for a picture, every frame for a movie."""
    if spec is None:
        return list(range(n)) if movie else [n - 1]
    try:
        if ":" in spec:
            parts = [int(p) if p.strip() else None for p in spec.split(":")]
            if len(parts) > 3:
                raise ValueError
            picked = list(range(n))[slice(*parts)]
        else:
            k = int(spec)
            if not -n <= k < n:
                raise CaseError(
                    f"the file holds {n} frames (0 to {n - 1}, or {-n} to -1); got {k}",
                    key="--frames",
                )
            picked = [k % n]
    except ValueError:
        raise CaseError(
            f"expected a frame number (-1: the last) or a slice START:STOP:STEP, got {spec!r}",
            key="--frames",
        ) from None
    if not picked:
        raise CaseError(f"{spec!r} picks none of the file's {n} frames", key="--frames")
    if len(picked) > 1 and not movie:
        raise CaseError("a .png is one frame: give --frames K, or -o a .gif or .mp4", key="-o")
    return picked


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


def _time_label(f, k: int, system) -> str:
    unit = f" {system.label('time')}" if system is not None else ""
    if _is_path(f):
        return f"arc length {f['time'][k]:.6g}, load factor {f['load_factor'][k]:.6g}"
    if _is_equilibrium(f):
        return f"load multiplier {f['time'][k]:.6g}"
    if "step" in f and len(np.unique(f["step"][:])) > 1:
        name = f.attrs["steps"][int(f["step"][k])].split(":")[0]
        return f"step {name}: t = {f['time'][k]:.6g}{unit} (total {f['total_time'][k]:.6g})"
    return f"t = {f['time'][k]:.6g}{unit}"


def _nearest(f, t: float, n: int) -> int:
    """The frame whose time (total_time in a file of several steps) is nearest t."""
    stepped = "step" in f and len(np.unique(f["step"][:n])) > 1
    times = f["total_time" if stepped else "time"][:n]
    return int(np.argmin(np.abs(times - t)))


def frame_shots(f, picked, field, scale: float, system):
    points = f["mesh/points"][()]
    for k in picked:  # the field's values are the frame's own, whatever the scale drawn
        x = f["nodes/position"][k]
        values = scene.field_values(f, field, k, x)
        x, turns = _scaled(x, f["nodes/rotation"][k], points, scale)
        yield Shot(x, turns, values, _time_label(f, k, system))


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
        unit = f" 1/{system.label('time')}" if system is not None else " per time unit"
        label = f"mode {mode}: frequency {f['modes/frequency'][mode - 1]:.6g}{unit}"
    else:
        label = f"buckling mode {mode}: load factor {f['buckling/factor'][mode - 1]:.6g}"
    for j in range(MODE_FRAMES) if movie else [MODE_FRAMES // 4]:
        s = a * math.sin(2.0 * math.pi * j / MODE_FRAMES)
        turns = Rotation.from_rotvec(s * theta).as_matrix() @ turns0
        values = None if field.name == "none" else scene._reduce(s * u, field)
        yield Shot(x0 + s * u, turns, (values, None, None), label)


# --- drawing -----------------------------------------------------------------------------------


def _dimension_label(name: str, quantity: str, system) -> str:
    """The colour bar's title: the quantity and its unit (a declared system), else its
    dimension (docs/results.md: the case's own units)."""
    if system is not None:
        return units.axis_label(quantity, system, name)
    dim = units.QUANTITIES.get(name, "1").replace("*", " ")
    return quantity if dim == "1" else f"{quantity} [{dim}]"


def _camera(pl, bounds: np.ndarray, options: Options) -> None:
    """Fit the camera to bounds (2,3) (every frame drawn) from the view, or place it as given."""
    if options.camera:
        try:
            pos, focal, up = (
                tuple(float(v) for v in p.split(",")) for p in options.camera.split("/")
            )
            if not len(pos) == len(focal) == len(up) == 3:
                raise ValueError
        except ValueError:
            raise CaseError(
                f"expected px,py,pz/fx,fy,fz/ux,uy,uz, got {options.camera!r}", key="--camera"
            ) from None
        pl.camera_position = [pos, focal, up]
    else:
        extent = np.ptp(bounds, axis=0)
        view = options.view
        if view == "auto":  # a flat structure faces the camera
            thin = int(np.argmin(extent))
            view = ("yz", "xz", "xy")[thin] if extent[thin] < 0.05 * extent.max() else "iso"
        direction, up = {
            "iso": ((1.0, 1.0, 1.0), (0.0, 0.0, 1.0)),
            "xy": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
            "xz": ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
            "yz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
        }[view]
        centre = bounds.mean(axis=0)
        pl.camera_position = [tuple(centre + np.array(direction)), tuple(centre), up]
        pl.renderer.ResetCamera(*np.column_stack([bounds[0], bounds[1]]).ravel())
    pl.renderer.ResetCameraClippingRange(*np.column_stack([bounds[0], bounds[1]]).ravel())


class _Drawing(NamedTuple):
    mesh: object  # pyvista.PolyData
    surface: scene.Surface
    which: int  # 1 rods, 2 plates: the index into Shot.values


def _scalars(drawing: _Drawing, values: tuple, field) -> np.ndarray:
    """The colouring array of a drawn surface: nodal values on its points, element values on
    its faces, NaN (drawn grey) where the field has none."""
    nodal, own = values[0], values[drawing.which]
    if field.where == "node":
        return nodal[drawing.surface.node]
    if own is None:
        return np.full(len(drawing.surface.element), np.nan)
    return own[drawing.surface.element]


def render(path, output=None, **options) -> Path:
    """Draw a results file's frames (or a mode) to output (default: output_path), as the
    keyword options of Options say (docs/render.md); return the path written. CaseError
    (exit 2) for options no picture has, ResourceError (exit 4) where it cannot be written."""
    path, options = Path(path), Options(**options)
    _check(options)
    field = scene.parse_field(options.field)
    output = output_path(path, output, options)
    movie = output.suffix.lower() != ".png"
    if options.view not in VIEWS:
        raise CaseError(f"expected one of {', '.join(VIEWS)}, got {options.view!r}", key="--view")
    import matplotlib

    if options.cmap not in matplotlib.colormaps:
        raise CaseError(
            f"unknown colour map {options.cmap!r} (matplotlib's, e.g. viridis, coolwarm, jet)",
            key="--cmap",
        )
    if output.suffix.lower() == ".mp4":
        movies.ffmpeg()
    pv = pyvista()
    with open_results(path) as f:
        n = frame_count(f)
        if n == 0:
            raise CaseError("the file holds no frame", file=str(path))
        raw = f.attrs.get("units", "")
        system = units.from_attribute(raw.decode() if isinstance(raw, bytes) else str(raw))
        if options.mode:
            shots = lambda: mode_shots(f, options.mode, field, options.scale, movie, system)  # noqa: E731
        else:
            if options.time is not None:
                if options.frames is not None:
                    raise CaseError("give --frames or --time, not both", key="--time")
                picked = [_nearest(f, options.time, n)] if not movie else None
                if movie:
                    raise CaseError("--time picks one frame, for a .png", key="--time")
            else:
                picked = _frames(options.frames, n, movie)
            if options.frames is None and len(picked) > MAX_FRAMES:
                picked = picked[:: math.ceil(len(picked) / MAX_FRAMES)]
            shots = lambda: frame_shots(f, picked, field, options.scale, system)  # noqa: E731
        drawings, place = _surfaces(f)
        n_nodes = len(f["mesh/points"])
        low, high = np.full(3, np.inf), np.full(3, -np.inf)
        vmin, vmax = np.inf, -np.inf
        for shot in shots():  # pass 1: the camera's bounds and the colour range of every frame
            for d in drawings:
                p = place[d.which](shot)
                low, high = np.minimum(low, p.min(axis=0)), np.maximum(high, p.max(axis=0))
                if field.name != "none":
                    v = _scalars(d, shot.values, field)
                    if np.isfinite(v).any():
                        vmin, vmax = min(vmin, np.nanmin(v)), max(vmax, np.nanmax(v))
        clim = options.clim or _range(vmin, vmax)
        title = f.attrs.get("title", "") or path.stem
        bar = _dimension_label(field.name, options.field, system)
        size = options.size or ((640, 480) if output.suffix.lower() == ".gif" else (1024, 768))
        pl = pv.Plotter(off_screen=True, window_size=list(size))
        pl.set_background("white")
        for d in drawings:
            if field.name == "none" or clim is None:
                pl.add_mesh(d.mesh, color="lightsteelblue", show_edges=False)
            else:
                key = "field"
                store = d.mesh.point_data if field.where == "node" else d.mesh.cell_data
                store[key] = np.zeros(d.mesh.n_points if field.where == "node" else d.mesh.n_cells)
                pl.add_mesh(
                    d.mesh, scalars=key, cmap=options.cmap, clim=clim, nan_color="lightgrey",
                    scalar_bar_args={"title": bar, "color": "black", "fmt": "%.4g",
                                     "vertical": False, "position_x": 0.2, "position_y": 0.03,
                                     "height": 0.08, "width": 0.6, "n_labels": 5},
                )  # fmt: skip
        if options.reference:  # the undeformed structure, faint, behind the frames
            rest = Shot(f["mesh/points"][()], np.broadcast_to(np.eye(3), (n_nodes, 3, 3)), (), "")
            for d in drawings:
                ghost = d.mesh.copy(deep=True)
                ghost.points = place[d.which](rest)
                low = np.minimum(low, ghost.points.min(axis=0))
                high = np.maximum(high, ghost.points.max(axis=0))
                pl.add_mesh(ghost, color="grey", opacity=0.3)
        _camera(pl, np.array([low, high]), options)
        writer = movies.Movie(output, options.fps)
        try:
            for shot in shots():
                for d in drawings:
                    d.mesh.points = place[d.which](shot)
                    if field.name != "none" and clim is not None:
                        store = d.mesh.point_data if field.where == "node" else d.mesh.cell_data
                        store["field"] = _scalars(d, shot.values, field)
                pl.add_text(f"{title}\n{shot.label}", position="upper_left", font_size=11,
                            color="black", name="label")  # fmt: skip
                pl.render()
                writer.add(pl.screenshot(return_img=True))
            writer.finish()
        except OSError as exc:
            writer.abandon()
            raise ResourceError(f"cannot write {output}: {exc.strerror or exc}") from None
        except BaseException:
            writer.abandon()
            raise
        finally:
            pl.close()
    return output


def _check(options: Options) -> None:
    if not options.fps > 0:
        raise CaseError(f"expected frames per second > 0, got {options.fps}", key="--fps")
    if not options.scale > 0:
        raise CaseError(f"expected a scale > 0, got {options.scale}", key="--scale")
    if options.size is not None and not min(options.size) >= 16:
        raise CaseError(f"expected at least 16 x 16 pixels, got {options.size}", key="--size")
    if options.clim is not None and not options.clim[0] < options.clim[1]:
        raise CaseError(f"expected LOW < HIGH, got {options.clim}", key="--range")
    if options.mode < 0:
        raise CaseError(f"expected a mode number from 1, got {options.mode}", key="--mode")


MAX_FRAMES = 300  # a movie of a longer run takes every k-th frame, unless --frames says


def _range(vmin: float, vmax: float):
    """The colour range of the values seen; None where there were none (drawn plain)."""
    if not np.isfinite(vmin):
        return None
    if vmax - vmin <= 1e-12 * max(abs(vmin), abs(vmax)):  # a constant field: a band around it
        pad = abs(vmin) * 0.01 or 1.0
        return (vmin - pad, vmax + pad)
    return (float(vmin), float(vmax))


def _surfaces(f):
    """The drawings of a file's rods and plates (their pyvista meshes, made once: frames move
    their points) and how each places its points from a Shot."""
    import pyvista as pv

    points, frames = f["mesh/points"][()], f["mesh/frames"][()]
    size = float(np.linalg.norm(np.ptp(points, axis=0))) or 1.0
    drawings, place = [], {}
    if "mesh/rods" in f and len(f["mesh/rods"]):
        conn = f["mesh/rods"][()]
        ends = f["mesh/rod_frames"][()] if "mesh/rod_frames" in f else frames[conn]
        outline = (
            f["mesh/section_outline"][()] if "mesh/section_outline" in f else np.zeros((1, 0, 2))
        )
        section = (
            f["mesh/rod_section"][()] if "mesh/section_outline" in f else np.zeros(len(conn), int)
        )
        surface = scene.rod_surface(conn, section, outline, size)
        place[1] = lambda shot: scene.rods_at(surface, shot.x, shot.turns, ends, conn)
        mesh = pv.PolyData(np.zeros((len(surface.node), 3)), faces=surface.faces)
        drawings.append(_Drawing(mesh, surface, 1))
    if "mesh/plates" in f and len(f["mesh/plates"]):
        plates = f["mesh/plates"][()]
        h = f["mesh/plate_thickness"][()] if "mesh/plate_thickness" in f else np.zeros(len(plates))
        surface = scene.plate_surface(plates, h)
        d3 = frames[:, :, 2]
        place[2] = lambda shot: scene.plates_at(
            surface, shot.x, np.einsum("nij,nj->ni", shot.turns, d3), plates
        )
        mesh = pv.PolyData(np.zeros((len(surface.node), 3)), faces=surface.faces)
        drawings.append(_Drawing(mesh, surface, 2))
    return drawings, place
