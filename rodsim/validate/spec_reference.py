"""Generate the reference of the validation suite's files (docs/validation/spec_reference.md)
from the schema in rodsim.validate.spec, with the case reference's tables
(rodsim.case.reference.tables).

``python -m rodsim.validate.spec_reference > docs/validation/spec_reference.md``; a test
checks that the committed file equals this output, so the reference cannot drift from the
validator.
"""

from rodsim.case.reference import tables
from rodsim.validate import spec

# A complete benchmark (with a copy of validation/masses_pulse/case.yaml): tests load it.
EXAMPLE_SPEC = """\
number: 16
title: Free beam under a pulse
case: case.yaml
reference: reference.json
tiers:
  quick: {set: ["solver.t_end=0.15"]}   # --set overrides of the quick tier (CI)
quantities:
  - name: linear momentum x after the pulse
    series: linear_momentum.x
    reduce: final
    reference: Lx
    tolerance: 1.0e-9
    reason: the impulse fixes the final momentum exactly; round-off only
figure:
  series: linear_momentum.x
"""

EXAMPLE_REFERENCE = """\
{
  "citation": ["T. Demoures (2012), Lie group and Lie algebra variational integrators for \
flexible beam and plate in R^3, PhD thesis, EPFL, Example 4.3.2."],
  "values": {
    "Lx": {"value": -10.0, "source": "exact: the x component of the applied impulse",
           "uncertainty": "exact"}
  }
}
"""

HEADER = f"""# Validation suite: benchmark.yaml and reference.json

Generated from the validator's schema (`rodsim/validate/spec.py`) by
`python -m rodsim.validate.spec_reference > docs/validation/spec_reference.md`; do not edit by
hand. `rodsim validate` runs the benchmarks of `validation/` (or of `--suite DIR`) and
compares what they compute with their references ([README.md](README.md) is its report). Each
benchmark is a folder holding a case file, `benchmark.yaml` (what is run, reduced and compared,
with which tolerance and why) and `reference.json` (every reference number with its source).
A spec holds no reference number: it names values and curves of `reference.json`. Numbers are
in the case file's units. Unknown keys are errors; keys marked *required* must be given,
others show their default (*optional*: absent means not used). A broken spec stops
`rodsim validate` with exit code 2 naming the file and the key
([exit codes](../running.md#exit-codes)).

A small benchmark (`validation/masses_pulse` and `validation/timoshenko` are complete ones):

```yaml
# benchmark.yaml
{EXAMPLE_SPEC}```

```json
{EXAMPLE_REFERENCE}```

The relative error of a quantity is abs(computed - reference) / scale; it passes when it is at
most `tolerance`.
"""


def reductions() -> list[str]:
    """The section listing what each `reduce:` does."""
    out = ["\n## Reductions (`quantities[i].reduce`)\n"]
    out += [f"- `{name}`: {doc}" for name, doc in spec.REDUCTIONS.items()]
    return out


def reference() -> str:
    out = [HEADER, "## `benchmark.yaml`\n"]
    tables(spec.SPEC, out, dims=False)
    out += reductions()
    out += ["\n## `reference.json`\n"]
    tables(spec.REFERENCE, out, dims=False)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
