"""What-if branches from one state: a cantilever released under gravity is run to t = 2, its
whole state taken, and the run started again from it with other tip forces (docs/python.md,
"State and reset").

The cantilever (L = 10, 20 elements, EI = 500, rhoA = 1) released at rest under gravity 0.4
swings about its static sag q L^4 / (8 EI) = 1. At t = 2 the simulation's state is taken
(Simulation.state(): copies); each branch resets to it (Simulation.reset) and runs to t = 4
with another tip force. The branch with the state's own inputs is the uninterrupted run, bit
for bit. Run: python api_reset.py [--forces 0 0.75 1.5]
"""

import argparse

import numpy as np

import rodsim

CASE = """
rodsim: 1
title: Cantilever released under gravity
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: 20, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1, rhoI: [10, 10]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - gravity: [0, 0, -0.4]
  - {set: beam.end, force: [0, 0, 0]}    # a tip force the branches set
solver: {t_end: 4}
"""


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forces", type=float, nargs="+", default=(0.0, 0.75, 1.5))
    args = parser.parse_args(argv)

    sim = rodsim.Simulation(rodsim.case_from_yaml(CASE))
    tip = sim.sets["beam.end"][0]
    force = sim.loads["beam.end"]
    sim.advance_to(2.0)
    branch = sim.state()  # the whole state at t = 2, copies (with the inputs then in force)
    sim.advance_to(4.0)
    straight = sim.state.x[tip].copy()  # the run that never branched

    sim.reset(branch, branch.inputs)  # t = 2 again, with the loads it had then
    sim.advance_to(4.0)
    same = bool(np.array_equal(sim.state.x[tip], straight))
    print(f"t = {sim.time:.3g}: tip z {sim.state.x[tip, 2]:.6f}, the unbranched run's: {same}")
    ends = {}
    for f in args.forces:
        sim.reset(branch)  # t = 2 again; the force set below acts from there on
        force.force = (0.0, 0.0, f)
        sim.advance_to(4.0)
        ends[f] = float(sim.state.x[tip, 2])
        print(f"tip force {f:5.2f} from t = 2: tip z {ends[f]:.6f} at t = {sim.time:.3g}")
    return {"same": same, "straight": float(straight[2]), "ends": ends}


if __name__ == "__main__":
    main()
