"""A force term written in Python: a spring and a dashpot from the tip of a cantilever to the
ground, as a user term (rodsim.user_term), against the built-in `supports:` entry with the
same stiffness and damping (docs/python.md, "Your own force terms").

The cantilever (L = 4, 8 elements) sags under gravity; its tip hangs on a spring k = 50 and a
dashpot c = 0.5 to where it starts. Written in Python, the spring is compiled by numba and
called from the compiled explicit step; the run equals the one with the `supports:` entry
bit for bit. Run: python user_term.py [--t-end 0.3]
"""

import argparse

import numpy as np

import rodsim

CASE = """
rodsim: 1
title: Cantilever with its tip on a spring and dashpot
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [4, 0, 0], elements: 8, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 50, EI: [50, 50], rhoA: 1, rhoI: [0.1, 0.1]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - gravity: [0, 0, -1.0]
solver: {dt: 1.0e-3}
"""
K, C = 50.0, 0.5  # the spring's stiffness (force/length), the dashpot's (force x time/length)
SUPPORTS = f"""
supports:
  - {{set: beam.end, spring: [{K}, {K}, {K}], dashpot: [{C}, {C}, {C}]}}
"""


def tether(nodes, params, x, rot, quat, t, f, tau):
    """Springs from the nodes nodes[i, 0] to the anchors params[i, 0:3], of stiffness
    params[i, 3]: f = -k u with u = x - anchor; returns their energy 1/2 k |u|^2."""
    energy = 0.0
    for i in range(nodes.shape[0]):
        a, k = nodes[i, 0], params[i, 3]
        u0, u1, u2 = x[a, 0] - params[i, 0], x[a, 1] - params[i, 1], x[a, 2] - params[i, 2]
        n0, n1, n2 = k * u0, k * u1, k * u2
        f[a, 0] -= n0
        f[a, 1] -= n1
        f[a, 2] -= n2
        energy += 0.5 * (u0 * n0 + u1 * n1 + u2 * n2)
    return energy


def dashpot(nodes, params, x, rot, quat, vel, omg, f, tau):
    """Dashpots at the nodes nodes[i, 0]: f = -c v, c = params[i, 4]."""
    for i in range(nodes.shape[0]):
        a = nodes[i, 0]
        for k in range(3):
            f[a, k] -= params[i, 4] * vel[a, k]


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=0.3)
    args = parser.parse_args(argv)
    end = [f"solver.t_end={args.t_end}"]

    prep = rodsim.prepare(rodsim.case_from_yaml(CASE, end))  # the mesh: node indices
    tip = prep.setup.mesh.sets["beam.end"]  # (1,) the tip node
    anchors = prep.setup.model.x0[tip]  # (1, 3) where the springs are fixed
    params = np.column_stack([anchors, np.full(len(tip), K), np.full(len(tip), C)])
    term = rodsim.user_term(
        "tether",
        forces=tether,
        damping=dashpot,
        nodes=tip,
        params=params,
        role="ground",  # springs to the ground: part of the reactions
        stiffness=K,  # for the stable step (without it: the tangent at the reference)
    )
    mine = rodsim.Simulation(prep, terms=[term])
    builtin = rodsim.Simulation(rodsim.case_from_yaml(CASE + SUPPORTS, end))
    for sim in (mine, builtin):
        sim.advance(sim.n_steps)
    same = all(np.array_equal(a, b) for a, b in zip(mine.state, builtin.state, strict=True))
    frame = mine.frame()
    print(f"t = {mine.time:.3g}: tip z {frame.position[tip[0], 2]:.6f}, spring force z "
          f"{frame.reaction_force[tip[0], 2]:.6f}, same as supports: {same}")  # fmt: skip
    return {
        "same": same,
        "tip_z": float(frame.position[tip[0], 2]),
        "reaction_z": float(frame.reaction_force[tip[0], 2]),
    }


if __name__ == "__main__":
    main()
