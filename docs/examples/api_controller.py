"""A feedback controller stepping a rod from Python: a PID force at the tip of a cantilever
holds the tip at its reference height against gravity (docs/python.md).

The cantilever (L = 10, 20 elements, EI = 500, rhoA = 1) would sag by q L^4 / (8 EI) = 1
under gravity 0.4. The case declares a zero force at the tip; before every step the
controller reads the tip's height and vertical velocity from the state and sets that force
(PID on the height); held level, the tip carries 3/8 of the weight, 3 q L / 8 = 1.5. Run:
python api_controller.py [--t-end 30]
"""

import argparse

import rodsim

CASE = """
rodsim: 1
title: Cantilever held up by a tip controller
mesh:
  - rod: {name: beam, from: [0, 0, 0], to: [10, 0, 0], elements: 20, up: [0, 0, 1], section: s}
sections:
  s: {type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 500, EI: [500, 500], rhoA: 1, rhoI: [10, 10]}
boundary:
  - {set: beam.start, fix: all}
loads:
  - gravity: [0, 0, -0.4]
  - {set: beam.end, force: [0, 0, 0]}    # the controller's force, set from Python
solver: {t_end: 30}
"""


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=30.0)
    parser.add_argument(
        "--gains", type=float, nargs=3, default=(20.0, 10.0, 10.0), metavar=("KP", "KD", "KI")
    )
    args = parser.parse_args(argv)
    kp, kd, ki = args.gains

    sim = rodsim.Simulation(rodsim.case_from_yaml(CASE, [f"solver.t_end={args.t_end}"]))
    tip = sim.sets["beam.end"][0]  # node index
    mass = sim.model.mass[tip]  # lumped mass of the tip node: velocity = momentum / mass
    force = sim.loads["beam.end"]  # the `loads:` entry on the tip's set
    report = round(2.0 / sim.dt)  # steps between printed lines
    integral = 0.0
    print(f"dt {sim.dt:.3g}, {sim.n_steps} steps")
    print(f"{'t':>6} {'tip z':>10} {'force z':>10}")
    while sim.steps < sim.n_steps:
        z = sim.state.x[tip, 2]  # height (the reference height is 0)
        vz = sim.state.p[tip, 2] / mass
        integral += z * sim.dt
        force.force = (0.0, 0.0, -(kp * z + kd * vz + ki * integral))  # acts over the next step
        sim.step()
        if sim.steps % report == 0:
            print(f"{sim.time:6.2f} {sim.state.x[tip, 2]:10.5f} {force.force[2]:10.5f}")
    held = sim.frame()  # the output record: energies, reactions, stress resultants
    print(
        f"tip z {held.position[tip, 2]:.3g}, controller force {force.force[2]:.4g} "
        f"(the weight is {0.4 * sim.model.mass.sum():.4g}), root moment "
        f"{held.reaction_moment[0, 1]:.4g}"
    )
    return {
        "tip_z": float(held.position[tip, 2]),
        "force": float(force.force[2]),
        "moment": float(held.reaction_moment[0, 1]),
    }


if __name__ == "__main__":
    main()
