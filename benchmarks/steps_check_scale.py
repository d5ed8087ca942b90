"""`rodsim check` of a case with many analysis steps (docs/steps.md): builds a case of N steps
(equilibrium and explicit dynamic in turn, each with its own load factor) on a 4-element
clamped rod and times the command, start-up included, as a user runs it.

    python benchmarks/steps_check_scale.py [N ...]      # default 10000

Must hold (issue 33): 10,000 steps checked in under 60 s on the project's 2-core machine.
Measured there (shared with other work): 2,000 steps 8.1 s, 10,000 steps 30.5 s (59.6 s
while the machine was busier). Before issue 33's fix, 250 steps took 27.6 s and 500 took 40 s
(the explicit composition factor, 4001 2x2 matrix products, computed again for every step).
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = """rodsim: 1
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 10, EI: [10, 10], rhoA: 1,
      rhoI: [0.01, 0.01]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - {set: beam.end, force: [0, 0, -1], group: Q}
combination: {Q: 1}
solver: {t_end: 0.001, dt: 1.0e-4, equilibrium: {load_steps: 1}}
output: {vtk: false}
steps:
"""


def case_text(n: int) -> str:
    kinds = ("equilibrium", "dynamic")
    lines = [
        f"  - {{solver: {{analysis: {kinds[i % 2]}}}, combination: {{Q: {1 + i % 7}}}}}\n"
        for i in range(n)
    ]
    return HEAD + "".join(lines)


def timed(*args) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from rodsim.cli import main; main()", *args],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"rodsim {' '.join(args)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - start


def main(counts) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for n in counts:
            path = Path(folder) / f"steps{n}.yaml"
            path.write_text(case_text(n))
            size = path.stat().st_size / 1024
            seconds = timed("check", str(path))
            print(f"{n:6d} steps ({size:.0f} kB): rodsim check {seconds:.1f} s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10000])
