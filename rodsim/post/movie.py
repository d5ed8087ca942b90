"""Pictures (H,W,3) uint8 to a file, as rodsim render writes them (docs/render.md): one to a
.png, a run to a .gif (Pillow, an adaptive palette per frame) or an .mp4 (H.264 by ffmpeg, fed
the frames through a pipe as they are drawn)."""

import shutil
import subprocess
from pathlib import Path

import numpy as np

from rodsim.errors import CaseError


class Movie:
    """Frames (H,W,3) uint8 to a .png (one), .gif or .mp4, written to a temporary file that
    replaces the target when complete."""

    def __init__(self, path: Path, fps: float):
        self.path, self.fps = path, fps
        self.part = path.with_name(f".{path.name}.part")
        self.kind = path.suffix.lower()
        self.gif, self.proc = [], None

    def add(self, img: np.ndarray) -> None:
        from PIL import Image

        self.part.parent.mkdir(parents=True, exist_ok=True)
        if self.kind == ".png":
            Image.fromarray(img).save(self.part, format="PNG")
        elif self.kind == ".gif":  # an adaptive palette per frame, 1 byte a pixel kept
            self.gif.append(Image.fromarray(img).quantize(colors=255, dither=Image.Dither.NONE))
        else:
            img = img[: img.shape[0] // 2 * 2, : img.shape[1] // 2 * 2]  # yuv420p: even sizes
            if self.proc is None:
                self.proc = subprocess.Popen(
                    [ffmpeg(), "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt",
                     "rgb24", "-s", f"{img.shape[1]}x{img.shape[0]}", "-r", f"{self.fps:g}",
                     "-i", "-", "-an", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags",
                     "+faststart", "-f", "mp4", str(self.part)],
                    stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
            try:
                self.proc.stdin.write(np.ascontiguousarray(img).tobytes())
            except BrokenPipeError:  # ffmpeg stopped (a full disk, say): its own words
                try:
                    self.proc.stdin.close()
                except BrokenPipeError:
                    pass
                self.proc.wait()
                raise OSError(_said(self.proc.stderr.read())) from None

    def finish(self) -> None:
        if self.kind == ".gif":
            first, *rest = self.gif
            duration = round(1000.0 / self.fps)
            first.save(self.part, format="GIF", save_all=True, append_images=rest,
                       duration=duration, loop=0)  # fmt: skip
        elif self.kind == ".mp4":
            _, err = self.proc.communicate()
            if self.proc.returncode != 0:
                raise OSError(_said(err))
        self.part.replace(self.path)

    def abandon(self) -> None:
        """Stop ffmpeg and remove the temporary file, if either is there."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            self.part.unlink(missing_ok=True)
        except OSError:
            pass  # the folder could not hold it: nothing was made


def _said(err: bytes) -> str:
    """ffmpeg's last words on standard error."""
    lines = err.decode(errors="replace").strip().splitlines()
    return "ffmpeg: " + (lines[-1] if lines else "stopped without a word")


def ffmpeg() -> str:
    """The ffmpeg of imageio-ffmpeg (rodsim[movie]), else the one on PATH; CaseError
    without either."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        found = shutil.which("ffmpeg")
        if found:
            return found
    raise CaseError(
        'an .mp4 needs ffmpeg: pip install "rodsim[movie]" (or put an ffmpeg on PATH); a .gif '
        "needs none",
        key="-o",
    )
