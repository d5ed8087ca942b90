"""A rod started in a deformed shape, its reference staying stress-free (issue 32, part;
docs/cases.md "Initial shapes", docs/theory.md "Initial shapes"): a catenary, a pre-twisted
rod, a rod on an arc and on a helix, a bent rod released against the two-run workaround,
and the input errors."""

import math

import meshio
import numpy as np
import pytest
from click.testing import CliRunner
from scipy.spatial.transform import Rotation

import rodsim
from rodsim.case.initial_shape import configuration
from rodsim.case.model import case_mesh
from rodsim.cli import main

# resultant section: a slender rod (EI << EA L^2) with a stable explicit step near 1e-4
SECTION = "{type: rod, EA: 1.0e4, GA: [1.0e4, 1.0e4], GJ: 2.0, EI: [1.0, 1.0], rhoA: 1.0, "
SECTION += "rhoI: [1.0e-4, 1.0e-4]}"
ROD = """
rodsim: 1
mesh:
  - rod: {{name: beam, from: [0, 0, 0], to: [{L}, 0, 0], elements: {n}, section: s, up: [0, 0, 1]}}
sections:
  s: {section}
{extra}
solver: {solver}
output: {{vtk: false, every: {every}}}
"""


def _write(tmp_path, name, extra, solver="{t_end: 1.0e-3}", n=10, length=1.0, every=1):
    path = tmp_path / name
    text = ROD.format(L=length, n=n, section=SECTION, extra=extra, solver=solver, every=every)
    path.write_text(text)
    return path


def test_a_catenary_starts_in_one_run(tmp_path):
    """A cable of length L pinned at both ends starts on the catenary of its own length,
    x = a asinh(sigma/a), y = sqrt(a^2 + sigma^2) - sqrt(a^2 + (L/2)^2), sigma = s - L/2,
    under gravity: the first frame is that shape, the pins hold the ends there, and the
    rotations are shear-free (below)."""
    a, length, n = 0.4, 1.0, 20
    span = 2 * a * math.asinh(length / (2 * a))
    x = f"{a}*asinh((s - L/2)/{a}) + {span / 2!r}"
    y = f"sqrt({a}**2 + (s - L/2)**2) - sqrt({a}**2 + (L/2)**2)"
    extra = (
        "boundary:\n"
        "  - {set: beam.start, fix: [ux, uy, uz]}\n"
        "  - {set: beam.end, fix: [ux, uy, uz]}\n"
        "loads:\n"
        "  - {gravity: [0, -9.81, 0]}\n"
        f'initial: {{shape: [{{part: beam, position: {{x: "{x}", y: "{y}", z: 0}}}}]}}\n'
    )
    r = rodsim.run_in_memory(rodsim.load_case(_write(tmp_path, "c.yaml", extra, n=n)))
    sigma = r.mesh.points[:, 0] - length / 2  # s = x in the straight reference
    shape = np.column_stack(
        [
            a * np.arcsinh(sigma / a) + span / 2,
            np.sqrt(a**2 + sigma**2) - math.sqrt(a**2 + (length / 2) ** 2),
            np.zeros_like(sigma),
        ]
    )
    np.testing.assert_allclose(r.position[0], shape, rtol=0, atol=1e-15 * length)
    np.testing.assert_allclose(r.position[0][-1], [span, 0.0, 0.0], atol=1e-15)
    for end in (0, -1):  # the pins hold the ends where the shape put them
        assert np.all(r.position[:, end] == r.position[0][end])
    assert len(r.time) > 5 and np.abs(r.position[-1] - r.position[0]).max() > 0  # it runs
    # shear-free: the element's midpoint d1 bisects its nodes' tangents (each the normalised
    # sum of the adjacent unit chords), which leaves the chord off it by h^2 kappa'/4 to
    # leading order; on the catenary kappa = a/(a^2 + sigma^2), |kappa'| <= 9/(8 sqrt(3) a^2)
    h = length / n
    bound = h**2 * 9 / (8 * math.sqrt(3) * a**2) / 4
    shear = np.abs(r.strain[0][:, 1:]).max()
    assert shear < 1.1 * bound  # 10% for the terms of higher order in h
    # bending: inside, the element curvature is the angle between its nodes' tangents over
    # h, a central difference of the tangent's angle: the catenary's at the element midpoint
    # to O(h^2), whose terms here are sized by (kappa_max h)^2 (kappa'' ~ kappa^3); the end
    # elements' tangents are mirrored, first order only (docs/theory.md)
    mid = (sigma[:-1] + sigma[1:]) / 2
    kappa = a / (a**2 + mid**2)
    inside = np.abs(r.curvature[0][1:-1, 2])
    np.testing.assert_allclose(inside, kappa[1:-1], rtol=(kappa.max() * h) ** 2)
    np.testing.assert_allclose(r.curvature[0][:, :2], 0.0, atol=1e-12 / h)


@pytest.mark.parametrize(
    ("scheme", "group"), [("explicit", "SO3xR3"), ("explicit", "SE3"), ("implicit", "SE3")]
)
def test_a_pretwisted_clamped_rod_starts_with_the_torque_of_its_twist(tmp_path, scheme, group):
    """twist k per length about the tangent, 0 at the clamp: the section's twist moment is
    GJ k in every element (psi = (k h, 0, 0) exactly, Omega = psi/h), nothing else acts, and
    the clamp holds the torque GJ k."""
    k, gj = 0.7, 2.0
    extra = (
        "boundary:\n  - {set: beam.start, fix: all}\n"
        f"initial: {{shape: [{{part: beam, twist: {k}}}]}}\n"
    )
    solver = f"{{scheme: {scheme}, group: {group}, dt: 1.0e-4, t_end: 1.0e-3}}"
    r = rodsim.run_in_memory(rodsim.load_case(_write(tmp_path, "t.yaml", extra, solver)))
    moment = r.moment[0]
    np.testing.assert_allclose(moment[:, 0], gj * k, rtol=1e-12)  # round-off of log and exp
    np.testing.assert_allclose(moment[:, 1:], 0.0, atol=1e-12 * gj * k)
    np.testing.assert_allclose(r.force[0], 0.0, atol=1e-12 * gj * k)
    np.testing.assert_allclose(r.position[0], r.mesh.points, atol=1e-15)  # twisted in place
    turn = Rotation.from_quat(r.rotation[0], scalar_first=True)  # reference to current
    np.testing.assert_allclose(turn.as_rotvec()[:, 0], k * r.mesh.points[:, 0], atol=1e-14)
    np.testing.assert_allclose(r.reaction_moment[0][0], [-gj * k, 0, 0], atol=1e-12 * gj * k)


def test_a_rod_on_an_arc_of_its_length_is_a_uniform_circle(tmp_path):
    """A straight rod of length L on an arc of radius R and angle L/R: the element angle is
    dphi = L/(R n), so the curvature is dphi/h = 1/R, the axial strain chord/h - 1 =
    sin(dphi/2)/(dphi/2) - 1, and the shear 0 (the chord bisects the nodal tangents); all to
    round-off."""
    radius, n, length = 0.5, 12, 1.0
    angle = math.degrees(length / radius)
    arc = f"{{center: [0, {radius}, 0], radius: {radius}, start: [0, 0, 0], normal: [0, 0, 1]"
    extra = f"initial: {{shape: [{{part: beam, arc: {arc}, angle: {angle!r}}}}}]}}\n"
    r = rodsim.run_in_memory(rodsim.load_case(_write(tmp_path, "a.yaml", extra, n=n)))
    x = r.position[0]
    np.testing.assert_allclose(np.linalg.norm(x - [0, radius, 0], axis=1), radius, atol=1e-15)
    dphi = length / radius / n
    np.testing.assert_allclose(r.curvature[0][:, 2], 1 / radius, rtol=1e-12)
    np.testing.assert_allclose(r.strain[0][:, 0], math.sin(dphi / 2) / (dphi / 2) - 1, atol=1e-14)
    np.testing.assert_allclose(r.strain[0][:, 1:], 0.0, atol=1e-14)
    np.testing.assert_allclose(r.curvature[0][:, :2], 0.0, atol=1e-12)


def test_a_rod_on_a_helix_is_not_twisted_and_a_twist_adds_on(tmp_path):
    """The frames carried along the helix by parallel transport have no twist strain (each
    step turns about an axis normal to the tangent); twist k about the nodal tangents gives
    the element, bent by the angle b, the twist k (b/2) cot(b/2) + O(k^3 h^2) (the twist
    part of log(exp(b n) exp(k h E1)), n normal to E1; docs/theory.md); the nodes lie on the
    helix at their reference arc-length fraction."""
    radius, pitch, turns = 0.1, 0.2, 1.2
    helix = f"{{center: [0, 0, 0], axis: [1, 0, 0], start: [0, 0, {radius}], pitch: {pitch}, "
    helix += f"turns: {turns}}}"
    for k in (0.0, 0.3):
        extra = f"initial: {{shape: [{{part: beam, helix: {helix}, twist: {k}}}]}}\n"
        r = rodsim.run_in_memory(rodsim.load_case(_write(tmp_path, "h.yaml", extra, n=16)))
        x = r.position[0]
        f = r.mesh.points[:, 0]  # s / L
        np.testing.assert_allclose(x[:, 0], pitch * turns * f, atol=1e-15)
        np.testing.assert_allclose(np.hypot(x[:, 1], x[:, 2]), radius, atol=1e-15)
        h = 1.0 / 16
        b = h * np.linalg.norm(r.curvature[0][:, 1:], axis=1)
        expected = k * (b / 2) / np.tan(b / 2)
        np.testing.assert_allclose(r.curvature[0][:, 0], expected, rtol=0, atol=k**3 * h**2 + 1e-12)


def _nodes_prescribed(x, rot, x0, rot0) -> str:
    """sets and boundary entries that prescribe every node to (x, rot)."""
    turn = Rotation.from_matrix(rot @ np.transpose(rot0, (0, 2, 1))).as_rotvec()
    sets = "".join(f"  n{i}: {{nodes: [{i}]}}\n" for i in range(len(x)))
    rows = [
        f"  - {{set: n{i}, prescribe: {{displacement: {(x[i] - x0[i]).tolist()}, "
        f"rotation: {turn[i].tolist()}}}}}\n"
        for i in range(len(x))
    ]
    return "sets:\n" + sets + "boundary:\n" + "".join(rows)


@pytest.mark.parametrize(
    ("scheme", "group", "source"),
    [
        ("explicit", "SO3xR3", "formula"),
        ("explicit", "SE3", "file"),
        ("implicit", "SE3", "formula"),
    ],
)
def test_a_bent_rod_released_moves_as_the_two_run_workaround(tmp_path, scheme, group, source):
    """Released from a bent shape (the reference unchanged) in one run, and through the
    workaround (an equilibrium with every node's position and rotation prescribed to the
    shape, then a dynamic run from its last frame): the same motion. The two starts differ
    by round-off (x0 + (x - x0), exp(log(R))), which 30 steps of a stable scheme keep at
    that size: 1e-10 of the motion."""
    solver = f"{{scheme: {scheme}, group: {group}, dt: 1.0e-4, t_end: 3.0e-3}}"
    clamp = "boundary:\n  - {set: beam.start, fix: all}\n"
    bend = '{part: beam, displacement: {y: "0.05*(s/L)**2", z: "0.1*sin(pi*s/(2*L))"}}'
    one = _write(tmp_path, "one.yaml", clamp + f"initial: {{shape: [{bend}]}}\n", solver)
    case = rodsim.load_case(one)
    mesh = case_mesh(case)
    x, rot = configuration(case, mesh)
    if source == "file":  # the same shape from a mesh file with its d1 d2 d3
        d = {f"d{j + 1}": rot[:, :, j] for j in range(3)}
        meshio.write(tmp_path / "bent.vtu", meshio.Mesh(x, [("line", mesh.conn)], point_data=d))
        one = _write(tmp_path, "one.yaml", clamp + "initial: {shape: [{file: bent.vtu}]}\n", solver)
    moved = rodsim.run_in_memory(rodsim.load_case(one))
    np.testing.assert_allclose(moved.position[0], x, rtol=0, atol=1e-15)
    held = _nodes_prescribed(x, rot, mesh.points, mesh.frames)
    rodsim.run_case(
        _write(tmp_path, "eq.yaml", held, "{analysis: equilibrium}"), tmp_path / "eq.h5"
    )
    two = _write(tmp_path, "two.yaml", clamp + "initial: {from: eq.h5}\n", solver)
    workaround = rodsim.run_in_memory(rodsim.load_case(two))
    assert len(moved.time) == len(workaround.time) == 31
    motion = np.abs(moved.position[-1] - moved.position[0]).max()
    assert motion > 1e-3  # it swings
    np.testing.assert_allclose(moved.position, workaround.position, rtol=0, atol=1e-10 * motion)
    np.testing.assert_allclose(moved.time, workaround.time, rtol=1e-12)


def test_a_stretched_rod_and_a_polyline(tmp_path):
    """stretch e: every node at start + (1 + e)(x0 - start), the axial strain e in every
    element; a polyline of twice the rod's length: the nodes at their reference fraction of
    it, strain 1."""
    e = 0.01
    r = rodsim.run_in_memory(
        rodsim.load_case(
            _write(tmp_path, "s.yaml", f"initial: {{shape: [{{part: beam, stretch: {e}}}]}}")
        )
    )
    np.testing.assert_allclose(r.position[0][:, 0], (1 + e) * r.mesh.points[:, 0], atol=1e-15)
    np.testing.assert_allclose(r.strain[0][:, 0], e, rtol=1e-12)
    line = "{part: beam, points: [[0, 0, 0], [1, 0, 0], [1, 1, 0]]}"
    r = rodsim.run_in_memory(
        rodsim.load_case(_write(tmp_path, "p.yaml", f"initial: {{shape: [{line}]}}"))
    )
    np.testing.assert_allclose(r.position[0][5], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(r.position[0][-1], [1, 1, 0], atol=1e-15)
    np.testing.assert_allclose(r.strain[0][[0, -1], 0], 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    ("shape", "solver", "key", "words"),
    [
        ("[{file: few.vtu}]", "{t_end: 1.0e-3}", "initial.shape[0].file", "4 nodes"),
        ("[{file: none.vtu}]", "{t_end: 1.0e-3}", "initial.shape[0].file", "does not exist"),
        (
            '[{part: beam, position: {x: "s", y: "import os", z: 0}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].position.y",
            "cannot parse",
        ),
        (
            '[{part: beam, displacement: {z: "q*s"}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].displacement.z",
            "unknown name 'q'",
        ),
        (
            '[{part: beam, displacement: {z: "foo(s)"}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].displacement.z",
            "unknown function 'foo'",
        ),
        (
            '[{part: beam, displacement: {z: "sqrt(s - 0.5)"}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].displacement.z",
            "not a finite number at s = 0",
        ),
        (  # under the length limit, but deeper than the evaluator may recurse
            '[{part: beam, position: {x: "' + "-" * 1990 + 's", y: 0, z: 0}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].position.x",
            "nests deeper than",
        ),
        (  # 1e310: no float64 holds it
            '[{part: beam, position: {x: "s", y: "' + "1" + "0" * 310 + '", z: 0}}]',
            "{t_end: 1.0e-3}",
            "initial.shape[0].position.y",
            "too large for a float",
        ),
        ("[{part: rope, twist: 1}]", "{t_end: 1.0e-3}", "initial.shape[0].part", "no rod part"),
        (
            "[{part: beam, twist: 1}]",
            "{analysis: equilibrium}",
            "initial.shape",
            "dynamic analysis",
        ),
        (
            "[{part: beam, stretch: 0.1, points: [[0, 0, 0], [1, 0, 0]]}]",
            "{t_end: 1.0e-3}",
            "initial.shape[0].stretch",
            "sets the stretch",
        ),
        (
            "[{part: beam, helix: {center: [0, 0, 0], axis: [1, 0, 0], start: [1, 0, 0], "
            "pitch: 1, turns: 1}}]",
            "{t_end: 1.0e-3}",
            "initial.shape[0].helix.start",
            "on the axis",
        ),
    ],
)
def test_a_bad_shape_is_an_input_error(tmp_path, shape, solver, key, words):
    points = np.zeros((4, 3))
    meshio.write(tmp_path / "few.vtu", meshio.Mesh(points, [("line", np.array([[0, 1]]))]))
    case = _write(tmp_path, "x.yaml", f"initial: {{shape: {shape}}}", solver)
    out = CliRunner().invoke(main, ["check", str(case)])
    assert out.exit_code == 2, out.output
    assert key in out.output and words in out.output, out.output
    assert "x.yaml" in out.output  # the file


@pytest.mark.parametrize(
    ("initial", "words"),
    [
        ("{shape: [{part: beam, twist: 1}], velocity: [1, 0, 0]}", "starts at rest"),
        ("{shape: [{part: beam, twist: 1}], from: r.h5}", "or shape, not both"),
    ],
)
def test_a_shape_with_a_velocity_or_from_is_refused(tmp_path, initial, words):
    out = CliRunner().invoke(
        main, ["check", str(_write(tmp_path, "x.yaml", f"initial: {initial}"))]
    )
    assert out.exit_code == 2, out.output
    assert "initial.shape" in out.output and words in out.output, out.output


def test_a_file_of_positions_only_gets_the_completed_rotations(tmp_path):
    """A shape file without d1 d2 d3: its positions, and the rotations completed along the
    rod part, the same as the formula that gives those positions."""
    bend = '{part: beam, displacement: {z: "0.1*(s/L)**2"}}'
    case = rodsim.load_case(_write(tmp_path, "f.yaml", f"initial: {{shape: [{bend}]}}"))
    mesh = case_mesh(case)
    x, rot = configuration(case, mesh)
    meshio.write(tmp_path / "bent.vtu", meshio.Mesh(x, [("line", mesh.conn)]))
    other = rodsim.load_case(_write(tmp_path, "g.yaml", "initial: {shape: [{file: bent.vtu}]}"))
    x2, rot2 = configuration(other, case_mesh(other))
    assert np.array_equal(x2, x) and np.array_equal(rot2, rot)
    assert not np.allclose(rot, mesh.frames)  # the sections turned with the bend


def test_a_shape_on_a_case_with_plates_is_refused(tmp_path):
    case = tmp_path / "p.yaml"
    case.write_text(
        "rodsim: 1\n"
        "mesh:\n"
        "  - rod: {name: beam, from: [0, 0, 0], to: [1, 0, 0], elements: 4, section: s,"
        " up: [0, 0, 1]}\n"
        "  - rectangle: {name: deck, origin: [1, 0, 0], size: [1, 1], elements: [2, 2],"
        " section: p}\n"
        f"sections:\n  s: {SECTION}\n"
        "  p: {type: plate, material: {E: 2.1e9, nu: 0.3, rho: 7850}, thickness: 0.01}\n"
        "initial: {shape: [{part: beam, twist: 1}]}\n"
        "solver: {t_end: 1.0e-3}\n"
    )
    out = CliRunner().invoke(main, ["check", str(case)])
    assert out.exit_code == 2, out.output
    assert "initial.shape" in out.output and "plates" in out.output, out.output
