"""The README's promises: exactly two set-up commands (install and run an example; run the
tests), the second the one CI runs, and usage lines that run without a warning."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(section: str) -> list[str]:
    """The fenced code blocks of a README section (## heading to the next)."""
    body = README.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```\n(.*?)```", body, flags=re.S)]


def test_two_set_up_commands_and_ci_runs_the_second():
    install, tests = _blocks("Set up")
    assert "pip install -e ." in install and "rodsim run inputs/" in install
    assert "[dev]" not in install  # a user's first run needs no development extras
    assert tests.startswith('pip install -e ".[dev]"') and "python -m pytest -q" in tests
    ci = (ROOT / ".ci/run").read_text().splitlines()
    assert tests in ci  # verbatim, on a line of its own


def _run_lines() -> list[list[str]]:
    lines = []
    for block in _blocks("Use"):
        for line in block.splitlines():
            words = shlex.split(line.split("#", 1)[0])
            if words[:2] == ["rodsim", "run"]:
                lines.append(words[2:])
    return lines


@pytest.mark.parametrize("args", _run_lines(), ids=lambda a: a[0])
def test_the_readme_cases_check_without_a_warning(args):
    """Each `rodsim run` of the README's usage, checked (`rodsim check` plans the same steps
    and frames): exit 0 and no WARNING line (a t_end that dt does not divide printed two)."""
    if "-o" in args:
        i = args.index("-o")
        args = args[:i] + args[i + 2 :]
    out = subprocess.run(
        [sys.executable, "-m", "rodsim.cli", "check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    assert "WARNING" not in out.stdout + out.stderr
