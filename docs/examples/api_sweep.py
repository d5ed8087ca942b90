"""A parameter sweep from Python: the static tip deflection of a cantilever against its tip
load, from the linear range to large deflections (docs/python.md).

The steel cantilever of inputs/cantilever_tip (L = 1, EI2 = 350) is loaded at its tip by P
along -z, given as a fraction of P0 = 2 EI / L^2 = 700. Each load is one run in memory
(equilibrium by Newton in load steps); the deflection is compared with linear beam theory,
P L^3 / (3 EI), which it follows for small loads and falls short of for large ones. Run:
python api_sweep.py [--fractions 0.01 0.1 0.5 1]
"""

import argparse
from pathlib import Path

import rodsim

CASE = Path(__file__).resolve().parents[2] / "inputs" / "cantilever_tip" / "cantilever_tip.yaml"
EI, LENGTH = 350.0, 1.0


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.01, 0.1, 0.5, 1.0])
    parser.add_argument("--elements", type=int, default=100)
    args = parser.parse_args(argv)

    case = rodsim.load_case(CASE, [f"mesh[0].rod.elements={args.elements}"])
    tip = None
    rows = []
    print(f"{'P / P0':>8} {'P':>8} {'tip w':>10} {'linear':>10} {'ratio':>7} {'tip u':>10}")
    for fraction in args.fractions:
        load = fraction * 2 * EI / LENGTH**2
        results = rodsim.run_in_memory(case, overrides=[f"loads[0].force=[0, 0, {-load!r}]"])
        tip = results.mesh.sets["beam.end"][0] if tip is None else tip
        u = results.displacement()[-1, tip]  # the last frame: the full load
        linear = load * LENGTH**3 / (3 * EI)
        rows.append((fraction, -u[2], linear, u[0]))
        print(
            f"{fraction:8.3g} {load:8.4g} {-u[2]:10.5f} {linear:10.5f} {-u[2] / linear:7.4f} "
            f"{u[0]:10.5f}"
        )
    return {"rows": rows}


if __name__ == "__main__":
    main()
