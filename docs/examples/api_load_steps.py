"""Static equilibrium stepped from Python: the cantilever roll-up (Simo & Vu-Quoc 1986) load
step by load step, then a moment set from Python and solved for (docs/python.md).

An end moment M = 2 pi EI / L rolls the cantilever of inputs/rollup into a full circle, so
that its tip returns to the root. sim.solve() takes the case's load steps one at a time;
setting the moment to half of it and solving again at the full load multiplier gives the
half circle: its 10 element chords of length 1 span a diameter of 1 / sin(pi / 20) = 6.3925
(2 L / pi = 6.3662 for the continuum), so the tip lies at (0, 6.3925, 0). Run:
python api_load_steps.py
"""

import argparse
from pathlib import Path

import numpy as np

import rodsim

CASE = Path(__file__).resolve().parents[2] / "inputs" / "rollup" / "rollup.yaml"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load-steps", type=int, default=4)
    args = parser.parse_args(argv)

    sim = rodsim.Simulation(CASE, [f"solver.equilibrium.load_steps={args.load_steps}"])
    tip = sim.sets["beam.end"][0]
    print(f"{'load':>6} {'Newton':>7} {'residual':>9}  tip position")
    for _ in range(sim.n_steps):  # the case's load steps: multipliers 1/n, 2/n, ..., 1
        step = sim.solve()
        print(
            f"{sim.time:6.3f} {step.iterations:7d} {step.residual:9.2g}  "
            f"{np.round(sim.state.x[tip], 6) + 0.0}"
        )
    full = sim.state.x[tip].copy()
    moment = sim.loads["beam.end"]  # the end moment: loads[0] of the case
    moment.moment = 0.5 * moment.moment  # its time function (the load multiplier) still applies
    step = sim.solve(1.0)  # equilibrium at multiplier 1 from the full circle: unrolls to half
    half = sim.state.x[tip].copy()
    print(
        f"half the moment: tip at {np.round(half, 6) + 0.0} in {step.iterations} Newton "
        f"iterations and {step.pseudo_steps} pseudo-time steps"
    )
    frame = sim.frame()  # energies, reactions and stress resultants of this state
    print(
        f"bending moment along the rod {frame.moment[:, 2].min():.6g} to "
        f"{frame.moment[:, 2].max():.6g} (M / 2 = {moment.moment[2]:.6g})"
    )
    return {"full": full, "half": half, "moment": frame.moment}


if __name__ == "__main__":
    main()
