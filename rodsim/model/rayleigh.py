"""Rayleigh damping fitted to target modal damping ratios (docs/modal.md, "Damping").

rodsim's damping gives a mode of angular frequency omega the ratio

    zeta(omega) = alpha / (2 omega) + beta omega / 2

with alpha the mass damping (1/time, solver.damping.mass) and beta the strain-rate damping
(time, solver.damping.strain_rate), exactly where the mode's kinetic energy is translational
(mass damping does not act on rotary inertia) and its strain energy is in the elements (not in
elastic supports). Two targets (omega_1, zeta_1), (omega_2, zeta_2) fix both coefficients:

    beta = 2 (zeta_2 omega_2 - zeta_1 omega_1) / (omega_2^2 - omega_1^2),
    alpha = 2 omega_1 omega_2 (zeta_1 omega_2 - zeta_2 omega_1) / (omega_2^2 - omega_1^2),

both >= 0 when omega_1 / omega_2 <= zeta_2 / zeta_1 <= omega_2 / omega_1; one target
(omega, zeta) puts the minimum of zeta(omega) there: alpha = zeta omega, beta = zeta / omega.
"""

import math


def rayleigh(targets) -> tuple[float, float]:
    """(beta, alpha) from one or two (frequency f in cycles per time unit, ratio zeta) pairs;
    ValueError naming what is out of reach."""
    omegas = [2.0 * math.pi * f for f, _ in targets]
    ratios = [z for _, z in targets]
    if len(targets) == 1:
        return ratios[0] / omegas[0], ratios[0] * omegas[0]
    if len(targets) != 2:
        raise ValueError(f"expected one or two target ratios, got {len(targets)}")
    (w1, w2), (z1, z2) = omegas, ratios
    if w1 == w2:
        raise ValueError("the two target frequencies must differ")
    if w1 > w2:
        (w1, z1), (w2, z2) = (w2, z2), (w1, z1)
    beta = 2.0 * (z2 * w2 - z1 * w1) / (w2**2 - w1**2)
    alpha = 2.0 * w1 * w2 * (z1 * w2 - z2 * w1) / (w2**2 - w1**2)
    if beta < 0.0 or alpha < 0.0:
        raise ValueError(
            f"no Rayleigh damping reaches both: the ratio at the higher frequency over the "
            f"lower one must lie between {w1 / w2:.6g} and {w2 / w1:.6g} (the frequencies' "
            f"ratio and its inverse), got {z2 / z1:.6g}"
        )
    return beta, alpha
