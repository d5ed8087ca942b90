"""The memory a render needs, checked before drawing (docs/render.md, "Memory").

An off-screen render holds the interpreter, VTK and the scene (the intercept) and, per pixel
of the picture, the render window's multisampled colour and depth buffers, the read-back
screenshot and the PNG or movie frame made from it (the slope). A .gif also keeps every frame,
quantised, until it is written. Measured peak RSS (rodsim render of inputs/spaghetti, 2-core
VM, VTK 9 with Mesa llvmpipe): 0.57 GB at 1024x768, 0.80 at 2048x2048, 1.64 at 4096x4096,
2.94 at 6000x6000, 5.03 at 8192x8192: 517 MB + 67.2 bytes a pixel to within 1%; a 30-frame
1024x768 .gif 83 MB more than its .png, 3.5 bytes a pixel a frame. The figures below round
these up, so the estimate is an upper bound for these builds.
"""

from rodsim.errors import ResourceError
from rodsim.resources import format_size, machine_limit

BASELINE = 540 * 10**6  # bytes: the interpreter, VTK, the scene
PER_PIXEL = 70  # bytes a pixel of the picture
GIF_PER_PIXEL = 4  # bytes a pixel of each frame a .gif keeps


def need(size: tuple, frames: int, gif: bool) -> int:
    """Bytes a render of `frames` pictures of size (width, height) pixels peaks at."""
    pixels = int(size[0]) * int(size[1])
    return BASELINE + PER_PIXEL * pixels + (GIF_PER_PIXEL * pixels * frames if gif else 0)


def check(size: tuple, frames: int, gif: bool, limit=None) -> int:
    """The estimate, or ResourceError (exit 4) where it exceeds what the machine allows
    (rodsim.resources.machine_limit: MemAvailable, the cgroup's limit, RLIMIT_AS)."""
    bytes_ = need(size, frames, gif)
    limit = limit or machine_limit()
    if limit.bytes is not None and bytes_ > limit.bytes:
        what = f"{size[0]}x{size[1]} pixels" + (f", {frames} frames kept by a .gif" if gif else "")
        raise ResourceError(
            f"the picture needs about {format_size(bytes_)} ({what}) but "
            f"{format_size(limit.bytes)} are available ({limit.source}); give a smaller "
            "--size" + (", fewer --frames or an .mp4" if gif else "")
        )
    return bytes_
