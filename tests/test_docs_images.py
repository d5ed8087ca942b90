"""The pictures in docs/ are made by rodsim's own commands: docs/images/make_images.sh writes
every one of them, the docs show the very commands that make each, and running the script
makes the same pictures again."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
SCRIPT = IMAGES / "make_images.sh"


def _commands() -> dict:
    """{picture name: the rodsim command that writes it, as a user types it}."""
    out = {}
    for line in SCRIPT.read_text().splitlines():
        m = re.search(r'-o "\$out/([^"]+)"', line)
        if line.startswith("rodsim ") and m:
            out[m.group(1)] = re.sub(r'"\$(?:work|out)/([^"]+)"', r"\1", line)
    return out


def test_every_picture_is_made_by_the_script_and_shown_with_its_command():
    commands = _commands()
    on_disk = {p.name for p in IMAGES.iterdir() if p.suffix in (".png", ".gif")}
    assert on_disk == set(commands), "pictures without a command, or commands without one"
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    shown = set(re.findall(r"\(images/([^)]+\.(?:png|gif))\)", docs))
    assert shown == on_disk
    for name, command in commands.items():
        assert command in docs, f"docs/ do not show the command that makes {name}: {command}"


@pytest.fixture(scope="module")
def remade(tmp_path_factory):
    pytest.importorskip("pyvista", reason="the pictures need rodsim[render]")
    out = tmp_path_factory.mktemp("images")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(SCRIPT), str(out)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0 and "cannot render" in done.stderr:
        pytest.skip(f"VTK cannot render off-screen here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    return out


def _frames(path: Path) -> list[np.ndarray]:
    from PIL import Image, ImageSequence

    with Image.open(path) as im:
        return [np.asarray(f.convert("RGB")).astype(int) for f in ImageSequence.Iterator(im)]


def test_the_script_makes_the_pictures_again(remade):
    """Same size, same number of frames, and (rendering may differ by a few pixels between
    machines' GL drivers) within 2% of the pixels of the committed ones."""
    for name in _commands():
        old, new = _frames(IMAGES / name), _frames(remade / name)
        assert len(old) == len(new) and old[0].shape == new[0].shape, name
        for a, b in zip(old, new, strict=True):
            differ = (np.abs(a - b).max(axis=2) > 40).mean()
            assert differ < 0.02, f"{name}: {differ:.1%} of the pixels differ"
