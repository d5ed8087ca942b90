"""Generate the reference of the validation suite's files (docs/validation/spec_reference.md)
from the schema in rodsim.validate.spec, with the case reference's tables
(rodsim.case.reference.tables).

``python -m rodsim.validate.spec_reference > docs/validation/spec_reference.md``; a test
checks that the committed file equals this output, so the reference cannot drift from the
validator.
"""

from rodsim.case.reference import tables
from rodsim.validate import spec

HEADER = """# Validation suite: benchmark.yaml and reference.json

Generated from the validator's schema (`rodsim/validate/spec.py`) by
`python -m rodsim.validate.spec_reference > docs/validation/spec_reference.md`; do not edit by
hand. `rodsim validate` ([running.md](../running.md)) runs the benchmarks of `validation/`
(or of `--suite DIR`): each is a folder holding a case file, `benchmark.yaml` (what is run,
reduced and compared, with which tolerance and why) and `reference.json` (every reference
number with its source). A spec holds no reference number: it names values and curves of
`reference.json`. Numbers are in the case file's units. Unknown keys are errors; keys marked
*required* must be given, others show their default (*optional*: absent means not used). A
broken spec stops `rodsim validate` with exit code 2 naming the file and the key.

A small benchmark (`validation/masses_pulse` and `validation/timoshenko` are complete ones):

```yaml
# benchmark.yaml
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
```

```json
{
  "citation": ["A. Author (2024), Title, Journal 1(2), 3-4."],
  "values": {"Lx": {"value": 0.15, "source": "exact: the impulse", "uncertainty": "exact"}}
}
```

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
