"""The options of ``rodsim render`` (docs/render.md), checked and put in one form before anything
is drawn: the command's strings and the Python keywords alike. Every option no picture has is
a CaseError (exit 2) naming the option."""

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rodsim.errors import CaseError
from rodsim.results import guard as output_guard

KINDS = (".png", ".gif", ".mp4")
VIEWS = ("auto", "iso", "xy", "xz", "yz")
FITS = ("each", "all")
LARGEST = 8192  # pixels a side: VTK's off-screen buffers, and memory, end about there
MAX_FRAMES = 300  # a movie of a longer run shows this many, evenly picked, unless --frames says


class Camera(NamedTuple):
    position: tuple
    focal: tuple
    up: tuple


class Options(NamedTuple):
    """What to draw: field (QUANTITY[.C] or none), frames (one frame number or a slice
    'start:stop:step', as text), time (the frame nearest it), mode (from 1; None: none), view,
    fit ("each": a movie's camera follows the structure, "all": one camera holds every frame;
    None: each for a movie of frames, all for a mode or a picture), camera (a Camera or None),
    size ((width, height) or None: 1024 x 768, a .gif 640 x 480),
    fps, scale (of displacements and rotations), clim ((low, high) or None), cmap (a
    matplotlib colour map), reference (also the undeformed structure, faint grey)."""

    field: str = "displacement"
    frames: str | None = None
    time: float | None = None
    mode: int | None = None
    view: str = "auto"
    fit: str | None = None
    camera: Camera | None = None
    size: tuple | None = None
    fps: float = 12.0
    scale: float = 1.0
    clim: tuple | None = None
    cmap: str = "viridis"
    reference: bool = False


def _numbers(value, key: str, count: int, form: str, kind=float) -> tuple:
    """count numbers from 'a,b' (or 'WxH') text or a sequence; CaseError naming form."""
    try:
        if isinstance(value, str):
            value = value.replace("x", ",").split(",")
        out = tuple(kind(v) for v in value)
        if len(out) != count or not all(math.isfinite(v) for v in out):
            raise ValueError
    except (TypeError, ValueError):
        raise CaseError(f"expected {form}, got {value!r}", key=key) from None
    return out


def _number(value, key: str, what: str, positive: bool) -> float:
    """A finite number (> 0 where positive); CaseError saying what was expected."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or (positive and not number > 0):
        raise CaseError(f"expected {what}, got {value!r}", key=key)
    return number


def _camera(text) -> Camera:
    form = "px,py,pz/fx,fy,fz/ux,uy,uz (position, focal point, view-up)"
    parts = text.split("/") if isinstance(text, str) else text
    if len(parts) != 3:
        raise CaseError(f"expected {form}, got {text!r}", key="--camera")
    pos, focal, up = (np.array(_numbers(p, "--camera", 3, form)) for p in parts)
    look = focal - pos
    if not np.linalg.norm(look) > 0:
        raise CaseError(
            "the camera's position is its focal point: it looks nowhere", key="--camera"
        )
    if not np.linalg.norm(np.cross(look, up)) > 1e-9 * np.linalg.norm(look) * np.linalg.norm(up):
        raise CaseError(
            "the view-up vector is zero or along the line of sight: give one across it",
            key="--camera",
        )
    return Camera(tuple(pos), tuple(focal), tuple(up))


def make(**given) -> Options:
    """The Options of rodsim.render's keywords (docs/render.md), checked."""
    unknown = sorted(set(given) - set(Options._fields))
    if unknown:
        raise CaseError(
            f"unknown option {', '.join(unknown)}; expected {', '.join(Options._fields)}",
            key="render",
        )
    o = Options()._replace(**{k: v for k, v in given.items() if v is not None})
    if o.frames is not None:
        o = o._replace(frames=str(o.frames))
    if o.time is not None:
        o = o._replace(time=_number(o.time, "--time", "a finite time", positive=False))
    if o.mode is not None and (
        isinstance(o.mode, bool) or not isinstance(o.mode, int) or o.mode < 1
    ):
        raise CaseError(f"modes count from 1; got {o.mode!r}", key="--mode")
    if o.mode is not None and (o.frames is not None or o.time is not None):
        raise CaseError("--mode draws the mode's own period: give it without --frames or --time",
                        key="--mode")  # fmt: skip
    if o.frames is not None and o.time is not None:
        raise CaseError("give --frames or --time, not both", key="--time")
    if o.view not in VIEWS:
        raise CaseError(f"expected one of {', '.join(VIEWS)}, got {o.view!r}", key="--view")
    if o.fit is not None and o.fit not in FITS:
        raise CaseError(f"expected one of {', '.join(FITS)}, got {o.fit!r}", key="--fit")
    if o.camera is not None:
        if o.view != "auto":
            raise CaseError("--camera places the camera: give it without --view", key="--camera")
        if o.fit is not None:
            raise CaseError("--camera places the camera: give it without --fit", key="--camera")
        o = o._replace(camera=o.camera if isinstance(o.camera, Camera) else _camera(o.camera))
    if o.size is not None:
        size = _numbers(o.size, "--size", 2, "WIDTHxHEIGHT in pixels, e.g. 1280x720", int)
        if not all(16 <= v <= LARGEST for v in size):
            raise CaseError(
                f"expected 16 to {LARGEST} pixels a side, got {size[0]}x{size[1]}", key="--size"
            )
        o = o._replace(size=size)
    o = o._replace(fps=_number(o.fps, "--fps", "frames per second > 0", positive=True))
    o = o._replace(scale=_number(o.scale, "--scale", "a finite scale > 0", positive=True))
    if o.clim is not None:
        clim = _numbers(o.clim, "--range", 2, "LOW,HIGH, e.g. -5e3,5e3")
        if not clim[0] < clim[1]:
            raise CaseError(f"expected LOW < HIGH, got {clim[0]:g},{clim[1]:g}", key="--range")
        o = o._replace(clim=clim)
    import matplotlib

    if o.cmap not in matplotlib.colormaps:
        raise CaseError(
            f"unknown colour map {o.cmap!r} (matplotlib's, e.g. viridis, coolwarm, jet)",
            key="--cmap",
        )
    return o


def output_path(results: Path, output, options: Options) -> Path:
    """-o, else <stem>_<field>.png (a mode: <stem>_mode<k>.gif), the file a symbolic link
    names; CaseError for a suffix that is not .png, .gif or .mp4, or a file that is not an
    earlier picture of that kind."""
    if output is None:
        if options.mode:
            output = results.with_name(f"{results.stem}_mode{options.mode}.gif")
        else:
            output = results.with_name(f"{results.stem}_{options.field.replace('.', '_')}.png")
    output = Path(output)
    suffix = output.suffix.lower()
    if suffix not in KINDS:
        raise CaseError(
            f"-o {output}: expected a .png (one frame), .gif or .mp4 (a movie), got "
            f"{suffix or 'no suffix'!r}",
            key="render",
        )
    if output.is_symlink():
        output = output.resolve()
    reads = {results.resolve(): "the results file itself"}
    return output_guard.check(output, suffix[1:], reads=reads, file=str(results))


def frames(spec: str | None, n: int, movie: bool) -> list[int]:
    """Frame indices: 'K' one frame (negative from the end), 'A:B:C' a slice; default: the
    last frame for a picture; for a movie every frame, or MAX_FRAMES evenly picked from the
    first to the last."""
    if spec is None:
        if not movie:
            return [n - 1]
        return sorted(set(np.linspace(0, n - 1, min(n, MAX_FRAMES)).round().astype(int).tolist()))
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
