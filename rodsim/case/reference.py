"""Generate the case-file reference (docs/case_reference.md) from the schema in rodsim.case.v1.

``python -m rodsim.case.reference > docs/case_reference.md``; a test checks that the committed
file equals this output, so the reference cannot drift from the validator.
"""

import textwrap

from rodsim import resources
from rodsim.case import schema as s
from rodsim.case import sections, v1

HEADER = """# Case-file reference (schema v1)

Generated from the validator's schema (`rodsim/case/v1.py` and the modules it imports) by
`python -m rodsim.case.reference > docs/case_reference.md`; do not edit by hand.
Complete examples are the cases in `inputs/` of the repository.

Numbers are in one consistent unit system of the user's choice. The *dimension* column gives
each number's physical dimension (length, mass, time, force; `1` a pure number, `angle` in
radians, `degree` in degrees). Declare the system with `units:` (SI, mm-t-s, or three base
units) to record it in the results and to write numbers with units, `E: 210 GPa`
([units.md](units.md)). Vectors are lists of 3 numbers in global axes.
Unknown keys are errors. Keys marked *required* must be given; others show their default
(*optional*: absent means not used). Any key can be overridden on the command line with
`--set KEY=VALUE`, e.g. `--set solver.dt=1e-3` or `--set loads[0].force=[0,0,1]`.

The file is YAML 1.2 (`1e4` is a number) read safely: no object tags, a key given twice in one
mapping is an error, mappings and lists may nest at most 64 levels deep, and aliases (`*name`
of an `&name` anchor) may expand the document to at most 10 times its values plus 100000 (a
recursive alias is an error); both limits are checked before anything is built.
"""


def _per_item(kind: str, plates: bool) -> float:
    """Estimated bytes per rod element (per plate) with its node, from rodsim.resources."""
    settings = resources.Settings(kind)
    n = 10**6
    sizes = [
        resources.Sizes(k * n, 0, k * n) if plates else resources.Sizes(k * n + 1, k * n, 0)
        for k in (1, 2)
    ]
    first, second = (resources.estimate(size, settings).bytes for size in sizes)
    return (second - first) / n


def _plate(n: int) -> str:
    sizes = resources.Sizes((n + 1) ** 2, 0, n * n, n + 1)
    return resources.format_size(resources.estimate(sizes, resources.Settings("implicit")).bytes)


def memory() -> str:
    """The paragraph on model size, its figures computed from rodsim.resources."""
    kib = 1024
    rod = _per_item("explicit", False)
    typical = (16 * 1024**3 - resources.BASELINE) / rod  # a 16 GiB machine
    text = (
        "Model size is limited by memory, not by the schema: before anything is built, rodsim "
        "estimates the peak memory of the run from the element counts (of generated parts "
        "before the mesh is generated, of mesh files once they are read) and refuses a model "
        "that does not fit with exit code 4, naming the estimate and the limit: the memory "
        "available (MemAvailable), or `--max-memory` when given, within the cgroup's limit "
        "and RLIMIT_AS. `rodsim check` prints the estimate. It is about "
        f"{rod / kib:.2g} KiB per rod element (with its node) with "
        f"the explicit scheme and {_per_item('implicit', False) / kib:.2g} KiB with the "
        f"implicit scheme or equilibrium, {_per_item('explicit', True) / kib:.2g} KiB per "
        "plate element (with its node) with the explicit scheme; the implicit scheme's LU "
        "factors of plates grow faster than their count (about "
        f"{_plate(100)} for 100 x 100 quads, {_plate(300)} for 300 x 300), plus "
        f"{resources.format_size(resources.BASELINE)} for rodsim itself "
        f"(rodsim/resources.py lists what is counted): 16 GiB hold a rod of about "
        f"{typical / 1e6:.2g} million elements."
    )
    return textwrap.fill(text, width=95) + "\n"


def _default(f: s.Field) -> str:
    if f.required:
        return "*required*"
    if f.default is s.MISSING:
        return "*optional*"
    d = f.default
    if d is s.FILLED or isinstance(d, dict):
        return "see below"
    if isinstance(d, tuple):
        return "[" + ", ".join(f"{x:g}" for x in d) + "]"
    if isinstance(d, str):
        return f"`{d}`" if d else '""'
    if isinstance(d, bool):
        return "true" if d else "false"
    if isinstance(d, list):
        return "[]"
    return f"`{d:g}`" if isinstance(d, float) else f"`{d}`"


def _table(rec: s.Record, prefix: str, out: list, nested: list, dims: bool = True) -> None:
    out.append("| key | expects | dimension | default | meaning |" if dims else _NO_DIM_HEAD)
    out.append("|---|---|---|---|---|" if dims else "|---|---|---|---|")
    for f in rec.fields:
        path = f"{prefix}.{f.name}" if prefix else f.name
        expects = f"a mapping, see `{path}`" if isinstance(f.node, s.Record) else f.node.expected()
        dim = f" {dimension(f.node)} |" if dims else ""
        out.append(f"| `{f.name}` | {expects} |{dim} {_default(f)} | {f.doc} |")
        _children(f.node, path, nested)
    rules = [r.__doc__ for r in rec.rules if r.__doc__]
    if rules:
        out.append("")
        out.append("Also: " + "; ".join(rules) + ".")


_NO_DIM_HEAD = "| key | expects | default | meaning |"


def dimension(node) -> str:
    """The physical dimension of a key's numbers ('' for none, a count or a mapping)."""
    if isinstance(node, s.Number):
        return "" if node.integer else node.dim
    if isinstance(node, s.Vector):
        dims = [dimension(n) if isinstance(n, s.Number) else dimension(n) for n in node.items()]
        return dims[0] if len(set(dims)) == 1 else "[" + ", ".join(dims) + "]"
    if isinstance(node, s.ListOf):
        return dimension(node.item)
    if isinstance(node, s.Either):
        return next((d for d in map(dimension, node.options) if d), "")
    return ""


def _children(node, path: str, nested: list) -> None:
    if isinstance(node, s.Record):
        nested.append((path, node))
    elif isinstance(node, s.ListOf):
        _children(node.item, path + "[i]", nested)
    elif isinstance(node, s.MapOf):
        _children(node.value, f"{path}.{node.doc_key}", nested)
    elif isinstance(node, (s.Tagged, s.OneOf, sections.ByType)):
        nested.append((path, node))


def _section(path: str, node, out: list, seen: set, dims: bool = True) -> None:
    if path in seen:
        return
    seen.add(path)
    nested: list = []
    out.append(f"\n## `{path}`\n")
    if isinstance(node, s.Record):
        if node.doc:
            out.append(node.doc + "\n")
        _table(node, path, out, nested, dims)
    elif isinstance(node, s.Tagged):
        out.append("One of these forms, told apart by the key shown:\n")
        for tag, sub, is_nested, doc in node.options:
            form = f"`{tag}: {{...}}`" if is_nested else f"a mapping with `{tag}:`"
            out.append(f"- {form}: {doc}; see `{path}.{tag}`")
            nested.append((f"{path}.{tag}", sub))
    elif isinstance(node, s.OneOf):
        out.append("A mapping with exactly one of:\n")
        out.append("| key | expects | dimension | meaning |")
        out.append("|---|---|---|---|")
        for key, sub, doc in node.options:
            out.append(f"| `{key}` | {sub.expected()} | {dimension(sub)} | {doc} |")
            _children(sub, f"{path}.{key}", nested)
    elif isinstance(node, sections.ByType):
        out.append("Chosen by the value of `type`:\n")
        for kind, sub in node.options:
            out.append(f"- `type: {kind}`: see `{path} (type: {kind})`")
            nested.append((f"{path} (type: {kind})", sub))
    for sub_path, sub in nested:
        _section(sub_path, sub, out, seen, dims)


def tables(root: s.Record, out: list, dims: bool = True) -> None:
    """Append the key table of root, then one section per nested node, to out (lines of
    Markdown). dims=False leaves out the dimension column (files without physical numbers,
    such as the validation suite's: rodsim.validate.spec_reference)."""
    nested: list = []
    _table(root, "", out, nested, dims)
    seen: set = set()
    for path, node in nested:
        _section(path, node, out, seen, dims)


def reference() -> str:
    out = [HEADER, memory(), "## Top level\n"]
    tables(v1.CASE, out)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(reference(), end="")
