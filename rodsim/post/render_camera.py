"""Where ``rodsim render`` puts its camera (docs/render.md, "Camera"), as arrays: no VTK here.

The view direction of --view auto is the normal of the plane the structure and its motion lie
closest to: the axis in which the nodes' positions over the frames drawn spread least (the
smallest principal axis of their covariance), so that a flying rod is seen across its flight,
never along it. A movie's camera follows the structure (--fit each): each frame's box is
fitted, its centre and size smoothed over half a second of the movie so that the picture does
not jitter, and never smaller than the frame needs. --fit all fits one camera to every frame.
"""

from typing import NamedTuple

import numpy as np

FLAT = 0.05  # a coordinate extent under this of the largest: a plane structure (or motion)
DISTINCT = 0.5  # the smallest principal variance under this of the middle one: a plane
SMOOTH_SECONDS = 0.5  # of the movie, over which a following camera's centre and size are smoothed
# a following camera's sphere spans this of the picture's height, centred: clear of the label
# (the top 8%) and the colour bar (the bottom 15%), which the structure would run under
FOLLOW_FILL = 0.7
VIEWS = {
    "iso": ((1.0, 1.0, 1.0), (0.0, 0.0, 1.0)),
    "xy": ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)),
    "xz": ((0.0, -1.0, 0.0), (0.0, 0.0, 1.0)),
    "yz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)),
}


class Spread(NamedTuple):
    """The nodes' positions over the frames: their box (2,3), and their count, sum (3,) and
    sum of outer products (3,3) about origin (the first frame's first node, so that the
    covariance loses no digits far from the coordinates' origin), gathered frame by frame."""

    box: np.ndarray
    origin: np.ndarray | None = None
    count: int = 0
    total: np.ndarray = np.zeros(3)
    outer: np.ndarray = np.zeros((3, 3))

    @staticmethod
    def empty() -> "Spread":
        return Spread(np.array([np.full(3, np.inf), np.full(3, -np.inf)]))

    def add(self, x: np.ndarray) -> "Spread":
        low, high = np.minimum(self.box[0], x.min(axis=0)), np.maximum(self.box[1], x.max(axis=0))
        origin = x[0] if self.origin is None else self.origin
        d = x - origin
        return Spread(np.array([low, high]), origin, self.count + len(x),
                      self.total + d.sum(axis=0), self.outer + d.T @ d)  # fmt: skip

    def covariance(self) -> np.ndarray:
        mean = self.total / max(self.count, 1)
        return self.outer / max(self.count, 1) - np.outer(mean, mean)


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _up_across(direction: np.ndarray) -> np.ndarray:
    """z made normal to the view direction (y where z is within 26 degrees of it): gravity's
    vertical stays vertical in the picture."""
    for axis in ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0)):
        a = np.array(axis)
        if abs(a @ direction) < 0.9:
            return _unit(a - (a @ direction) * direction)
    raise AssertionError("z and y cannot both be along one direction")


def view(name: str, spread: Spread) -> tuple[np.ndarray, np.ndarray]:
    """(direction from the focal point towards the camera, view-up), unit vectors, of --view
    name; auto: a coordinate plane where the nodes' extent over the frames along an axis is
    under FLAT of the largest, else the smallest principal axis of their positions where its
    variance is under DISTINCT of the middle one's (seen from the side of (1, 1, 1)), else iso."""
    if name == "auto":
        extent = np.ptp(spread.box, axis=0)
        thin = int(np.argmin(extent))
        if extent[thin] < FLAT * extent.max():
            name = ("yz", "xz", "xy")[thin]
        else:
            values, axes = np.linalg.eigh(spread.covariance())  # ascending
            if values[0] < DISTINCT * values[1]:
                normal = axes[:, 0] * (1.0 if axes[:, 0].sum() >= 0 else -1.0)
                return normal, _up_across(normal)
            name = "iso"
    direction, up = VIEWS[name]
    return _unit(direction), _unit(up)


class Shot(NamedTuple):
    position: tuple
    focal: tuple
    up: tuple


def _half_angle(view_angle: float, aspect: float) -> float:
    """The half angle (rad) that limits a fitted sphere: the vertical view angle's, or the
    horizontal one's in a picture taller than wide (aspect = width / height)."""
    half = np.radians(view_angle) / 2
    return min(half, np.arctan(aspect * np.tan(half)))


def fit(box: np.ndarray, direction, up, view_angle: float, aspect: float) -> Shot:
    """The camera looking at the centre of box (2,3) from direction, at the distance where the
    sphere about the box (its half diagonal) just fills the picture's narrower angle."""
    centre = box.mean(axis=0)
    radius = max(float(np.linalg.norm(box[1] - box[0])) / 2, 1e-300)
    return _shot(centre, radius, direction, up, view_angle, aspect)


def _shot(centre, radius, direction, up, view_angle, aspect) -> Shot:
    distance = radius / np.sin(_half_angle(view_angle, aspect))
    return Shot(tuple(centre + distance * np.asarray(direction)), tuple(centre), tuple(up))


def follow(boxes: np.ndarray, direction, up, view_angle: float, aspect: float, fps: float):
    """One camera per frame for boxes (F,2,3), the drawn structure's box in each frame: each
    frame's sphere (centre, half diagonal) with its centre smoothed over SMOOTH_SECONDS of the
    movie by a moving straight-line fit (a steady flight is followed exactly, to the last frame)
    and its radius the smoothed largest that the frames nearby need, never under what its own
    frame needs: the structure is always whole in the picture, within FOLLOW_FILL of it."""
    centres = boxes.mean(axis=1)
    radii = np.linalg.norm(boxes[:, 1] - boxes[:, 0], axis=1) / 2
    window = min(max(_odd(SMOOTH_SECONDS * fps), 3), _odd(len(boxes)))
    if window >= 3:
        from scipy.ndimage import maximum_filter1d
        from scipy.signal import savgol_filter

        centres = savgol_filter(centres, window, 1, axis=0, mode="interp")
        need = np.linalg.norm(boxes.mean(axis=1) - centres, axis=1) + radii
        smooth = savgol_filter(maximum_filter1d(need, window, mode="nearest"), window, 1)
        radii = np.maximum(smooth, need)
    pairs = zip(centres, radii / FOLLOW_FILL, strict=True)
    return [_shot(c, r, direction, up, view_angle, aspect) for c, r in pairs]


def _odd(n: float) -> int:
    """The odd number at or below n (at least 1)."""
    n = max(int(n), 1)
    return n if n % 2 else n - 1
