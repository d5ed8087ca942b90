"""The arithmetic of a comparison: reducing a time series to a number, the error against the
reference, pass or fail, and the convergence order of a mesh sequence.

Pure functions of arrays; nothing here reads files.
"""

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

PASS, FAIL, ERROR = "pass", "FAIL", "error"


@dataclass(frozen=True)
class Comparison:
    """One row of the table."""

    benchmark: str
    quantity: str
    reference: float
    computed: float
    error: float  # |computed - reference| / scale
    tolerance: float
    status: str  # PASS, FAIL or ERROR
    note: str = ""


def relative_error(computed: float, reference: float, scale: float | None = None) -> float:
    """|computed - reference| / scale, scale = |reference| unless given; NaN stays NaN."""
    scale = abs(reference) if scale is None else scale
    if not scale > 0:
        raise ValueError("the error needs a scale > 0 when the reference is 0")
    return abs(computed - reference) / scale


def verdict(error: float, tolerance: float) -> str:
    """PASS when error <= tolerance; a NaN error (no number computed) fails."""
    return PASS if error <= tolerance else FAIL


def windowed(t: np.ndarray, v: np.ndarray, window: tuple[float, float]):
    """The samples with window[0] <= t <= window[1] (a hair of slack for round-off in t)."""
    lo, hi = window
    slack = 1e-9 * max(1.0, abs(t[-1]))
    keep = (t >= lo - slack) & (t <= hi + slack)
    if not keep.any():
        raise ValueError(f"no frame in the window [{lo}, {hi}] (frames span {t[0]} to {t[-1]})")
    return t[keep], v[keep]


def dominant_frequency(t: np.ndarray, v: np.ndarray) -> float:
    """Angular frequency of the strongest oscillation of v(t) on a uniform grid.

    The FFT peak gives a guess; the frequency is then the one whose best-fitting
    c + a cos(w t) + b sin(w t) leaves the smallest residual (a least-squares fit, so many
    periods make it accurate far beyond the FFT bin width).
    """
    if len(t) < 8:
        raise ValueError("a frequency needs at least 8 frames")
    v = v - v.mean()
    dt = (t[-1] - t[0]) / (len(t) - 1)
    spectrum = np.abs(np.fft.rfft(v * np.hanning(len(v))))
    spectrum[0] = 0.0
    k = int(np.argmax(spectrum))
    bin_w = 2 * math.pi / (len(t) * dt)
    guess = k * bin_w
    if guess == 0:
        raise ValueError("no oscillation found")

    def residual(w):
        a = np.column_stack([np.ones_like(t), np.cos(w * t), np.sin(w * t)])
        coef, *_ = np.linalg.lstsq(a, v, rcond=None)
        return float(np.sum((a @ coef - v) ** 2))

    res = minimize_scalar(
        residual,
        bounds=(max(guess - bin_w, 0.5 * bin_w), guess + bin_w),
        method="bounded",
        options={"xatol": 1e-12 * guess},
    )
    return float(res.x)


def curve_rms(t: np.ndarray, v: np.ndarray, curve_x, curve_y, window) -> float:
    """RMS of computed - reference at the reference points inside the window and inside the
    computed time span, relative to the largest |reference| there."""
    cx, cy = np.asarray(curve_x), np.asarray(curve_y)
    lo, hi = max(window[0], t[0]), min(window[1], t[-1])
    keep = (cx >= lo) & (cx <= hi)
    if keep.sum() < 2:
        raise ValueError("fewer than two reference points fall in the computed time span")
    diff = np.interp(cx[keep], t, v) - cy[keep]
    return float(np.sqrt(np.mean(diff**2)) / np.max(np.abs(cy[keep])))


def first_crossing(t: np.ndarray, v: np.ndarray, level: float) -> float:
    """The first time |v| reaches level (linear between frames); NaN if it never does."""
    a = np.abs(v)
    above = np.nonzero(a >= level)[0]
    if len(above) == 0:
        return math.nan
    k = above[0]
    if k == 0:
        return float(t[0])
    return float(np.interp(level, [a[k - 1], a[k]], [t[k - 1], t[k]]))


def reduce(
    t: np.ndarray, v: np.ndarray, how: str, window=(0.0, math.inf), at=None, curve=None
) -> float:
    """A number out of a time series (rodsim.validate.spec.REDUCTIONS says what each does)."""
    if not np.all(np.isfinite(v)):
        return math.nan
    if how == "final":
        return float(v[-1])
    if how == "at":
        if not t[0] - 1e-12 <= at <= t[-1] + 1e-12:
            raise ValueError(f"time {at} is outside the computed span {t[0]} to {t[-1]}")
        return float(np.interp(at, t, v))
    if how == "curve_rms":
        return curve_rms(t, v, curve.x, curve.y, window)
    if how == "crossing":  # `at` holds the level
        return first_crossing(t, v, at)
    tw, vw = windowed(t, v, window)
    if how == "max":
        return float(vw.max())
    if how == "min":
        return float(vw.min())
    if how == "absmax":
        return float(np.abs(vw).max())
    if how == "mean":
        return float(np.trapezoid(vw, tw) / (tw[-1] - tw[0])) if len(tw) > 1 else float(vw[0])
    if how == "band":
        return float(vw.max() - vw.min())
    if how == "drift":
        return float(np.max(np.abs(vw - vw[0])))
    if how == "relband":  # (max - min) / |mean|: for quantities without a reference level
        return float((vw.max() - vw.min()) / abs(vw.mean()))
    if how == "frequency":
        return dominant_frequency(tw, vw)
    raise ValueError(f"unknown reduction {how!r}")


def convergence_order(h, values, exact: float) -> float:
    """Least-squares slope of log|value - exact| against log h."""
    h, err = np.asarray(h, float), np.abs(np.asarray(values, float) - exact)
    if len(h) < 2 or not np.all(err > 0) or not np.all(np.isfinite(err)):
        return math.nan
    return float(np.polyfit(np.log(h), np.log(err), 1)[0])
