"""Flying spaghetti 3D (Simo, Tarnow & Doblaré 1995) with rodsim's explicit Lie-group scheme.

A free rod of length 10 from (0,0,0) to (6,8,0) is kicked by a dead force (p/10) e1 and dead
moments p e3 + p/2 e2 at its end, p the triangular pulse 80 t / 400 - 80 t on [0, 5]
(an independent re-implementation of the same discretisation (docs/theory.md, Benchmark data):
corrected). After the pulse the linear momentum must be exactly
(50, 0, 0), both momenta constant, and the energy bounded. Run:  python flying_spaghetti.py
"""

import argparse

import numpy as np

from rodsim.integrators import dynamics
from rodsim.integrators.stable_step import stable_step
from rodsim.mesh.generate import straight_rod
from rodsim.model import timefunc
from rodsim.model.assembly import build_model
from rodsim.model.loads import NodalLoad
from rodsim.model.sections import section_from_resultants


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", default="SO3xR3", choices=["SO3xR3", "SE3"])
    parser.add_argument("--order", type=int, default=2, choices=[2, 4])
    parser.add_argument("--dt", type=float, default=0.005)
    parser.add_argument("--t-end", type=float, default=15.0)
    args = parser.parse_args(argv)

    part = straight_rod([0, 0, 0], [6, 8, 0], 10, up=[0, 0, 1])
    section = section_from_resultants(
        EA=1e4, GA=[1e4, 1e4], GJ=500, EI=[500, 500], rhoA=1, rhoI=[10, 10]
    )
    pulse = timefunc.table([[0, 0], [2.5, 200], [5, 0]])
    load = NodalLoad(nodes=[10], force=(0.1, 0, 0), moment=(0, 0.5, 1.0), time=pulse)
    model = build_model(part.points, part.frames, part.conn, section, loads=[load])

    dt_crit = stable_step(model, args.order)
    print(
        f"nodes {model.n_nodes}, elements {model.n_elements}, group {args.group}, "
        f"order {args.order}, dt {args.dt:g} (stable-step estimate {dt_crit:.6g})"
    )
    run = dynamics.start(model, args.dt, order=args.order, group=args.group)
    steps_per_frame = max(1, int(round(1.0 / args.dt)))
    energies = []
    print(f"{'t':>6} {'kinetic':>12} {'internal':>12} {'total':>12}  L  J")
    while run.time < args.t_end - 1e-12:
        n = min(steps_per_frame, int(round((args.t_end - run.time) / args.dt)))
        dynamics.advance(run, n)
        d = run.diagnostics()
        if run.time > 5.0:
            energies.append(d.total)
        print(
            f"{run.time:6.2f} {d.kinetic:12.6f} {d.internal:12.6f} {d.total:12.6f}  "
            f"{np.array2string(d.linear_momentum, precision=6)}  "
            f"{np.array2string(d.angular_momentum, precision=6)}"
        )
    d = run.diagnostics()
    band = (max(energies) - min(energies)) if energies else float("nan")
    print(f"Newton iterations per node: mean {run.mean_iterations:.2f}, max {run.max_iterations}")
    print(f"energy band after the pulse (frames): {band:.3g}")
    return {
        "linear_momentum": d.linear_momentum,
        "angular_momentum": d.angular_momentum,
        "energy_band": band,
    }


if __name__ == "__main__":
    main()
