"""Calibration: fit a Young's modulus to a measured tip deflection through the Python API
(docs/sweeps.md, "Calibration").

The steel cantilever of inputs/cantilever_tip (L = 1, a 20 x 10 mm bar bending about d2) with
a tip load of 50 N, small enough for the linear range. Its "measured" deflection here is
the one rodsim computes for E = 2.1e11 times a 3% error (a bench measurement in practice).
scipy.optimize.brentq finds the E whose computed deflection is the measurement: the
deflection falls monotonically with E, so the root is bracketed by a soft and a stiff guess.
Each evaluation is one equilibrium run in memory (rodsim.run_in_memory). Run:
python calibrate_stiffness.py [--measured W]
"""

import argparse
from pathlib import Path

from scipy.optimize import brentq

import rodsim

CASE = Path(__file__).resolve().parents[2] / "inputs" / "cantilever_tip" / "cantilever_tip.yaml"
LOAD = 50.0
SETTINGS = [f"loads[0].force=[0, 0, {-LOAD!r}]", "mesh[0].rod.elements=20"]


def tip_deflection(case, modulus: float) -> float:
    """The tip's displacement along z at the full load for a Young's modulus."""
    results = rodsim.run_in_memory(case, overrides=[f"sections.bar.material.E={modulus!r}"])
    tip = results.mesh.sets["beam.end"][0]
    return float(results.displacement()[-1, tip, 2])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measured", type=float, default=None, help="the measured deflection")
    args = parser.parse_args(argv)
    case = rodsim.load_case(CASE, SETTINGS)
    measured = args.measured
    if measured is None:  # a synthetic measurement: the steel bar's, 3% larger
        measured = 1.03 * tip_deflection(case, 2.1e11)
    calls = []

    def mismatch(modulus: float) -> float:
        calls.append(modulus)
        return tip_deflection(case, modulus) - measured

    fitted = brentq(mismatch, 1.0e11, 4.0e11, xtol=1e3, rtol=1e-10)
    print(f"measured tip deflection {measured:.6g}; fitted E = {fitted:.6g} in {len(calls)} runs")
    return {"measured": measured, "E": fitted, "runs": len(calls)}


if __name__ == "__main__":
    main()
