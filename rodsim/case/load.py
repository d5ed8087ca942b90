"""Reading a case file: safe YAML, ``--set`` overrides, schema validation.

The YAML loader is PyYAML's SafeLoader with two changes users expect: numbers such as ``1e4``
and ``1.0e-3`` are floats (YAML 1.2; PyYAML's 1.1 rules read them as strings), and a key given
twice in one mapping is an error instead of silently keeping the last value.
"""

import re
from dataclasses import dataclass
from pathlib import Path, PurePath

import numpy as np
import yaml

from rodsim.case import steps, units, v1
from rodsim.case.schema import render, show
from rodsim.case.settings import CaseSettings
from rodsim.errors import CaseError

_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 floats and duplicate-key detection."""


_Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != "tag:yaml.org,2002:float"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))


def _key(loader: _Loader, key_node: yaml.Node) -> str:
    key = loader.construct_object(key_node, deep=True)
    if not isinstance(key, str):
        raise yaml.constructor.ConstructorError(
            None, None, f"keys must be names, found {key!r}", key_node.start_mark
        )
    return key


def _mapping(loader: _Loader, node: yaml.MappingNode):
    # Duplicates are looked for before merging: keys merged in with `<<: *anchor` may be
    # overridden by the mapping's own keys (YAML merge semantics), which is not a duplicate.
    first = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = _key(loader, key_node)
        if key in first:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"key {key!r} appears twice in one mapping (first on line {first[key].line + 1})",
                key_node.start_mark,
            )
        first[key] = key_node.start_mark
    loader.flatten_mapping(node)  # merged keys first, so the mapping's own keys win below
    return {_key(loader, k): loader.construct_object(v, deep=True) for k, v in node.value}


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)

# libyaml's parser, the same resolvers and constructors: a 10,000-step case (650 kB) parses in
# ~2 s instead of ~20 s. Any error it meets is parsed again by _Loader, so messages (and
# what is refused) stay those of the pure-Python parser.
_CLoader = None
if getattr(yaml, "__with_libyaml__", False):

    class _CLoader(yaml.CSafeLoader):
        """_Loader on libyaml's parser."""

    _CLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers
    _CLoader.yaml_constructors = dict(_Loader.yaml_constructors)


class _Dumper(yaml.SafeDumper):
    """SafeDumper that quotes what _Loader would read as a number (YAML 1.2 floats such as
    1e4), so that text written from a dict reads back as the same values."""


_Dumper.yaml_implicit_resolvers = {k: list(v) for k, v in _Loader.yaml_implicit_resolvers.items()}


MAX_DEPTH = 64  # nested mappings and lists; a case file needs about 8
EXPANSION = (10, 100_000)  # aliases may expand a document to 10x its nodes + 100000


def _check_nesting(text: str, file: str | None, loader=_Loader) -> None:
    """Refuse documents nested deeper than MAX_DEPTH before they are composed: PyYAML composes
    recursively, and 100000 levels end in a RecursionError. The parser's events are flat."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise CaseError(
                    f"invalid YAML: mappings and lists nested deeper than {MAX_DEPTH} levels",
                    file=file,
                    key=f"line {mark.line + 1}, column {mark.column + 1}",
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _expanded_size(node: yaml.Node) -> tuple[int, int]:
    """(nodes in the document, nodes once every alias is expanded), without expanding: an
    alias is the same node object again, so each node's expanded size is counted once."""
    size: dict[int, int] = {}
    open_: set[int] = set()

    def expanded(n: yaml.Node) -> int:
        if id(n) in open_:  # an alias inside its own anchor: infinite
            raise CaseError(
                "invalid YAML: an alias (*name) refers to a value that contains "
                "it (a recursive alias)",
                key=f"line {n.start_mark.line + 1}, column {n.start_mark.column + 1}",
            )
        if id(n) not in size:
            open_.add(id(n))
            children = (
                n.value
                if isinstance(n, yaml.SequenceNode)
                else [c for kv in n.value for c in kv]
                if isinstance(n, yaml.MappingNode)
                else []
            )
            size[id(n)] = 1 + sum(expanded(c) for c in children)
            open_.discard(id(n))
        return size[id(n)]

    total = expanded(node)
    return len(size), total


def _load(text: str, file: str | None):
    """Compose, check the expansion of aliases (a 'billion laughs' document of 600 bytes
    expands to 10^9 nodes), then construct: with libyaml where PyYAML has it, and with the
    pure-Python parser where that fails (its messages are the documented ones)."""
    if _CLoader is not None:
        try:
            return _load_with(_CLoader, text, file)
        except (yaml.YAMLError, CaseError, ValueError, RecursionError):
            pass  # the same document again, for the pure-Python parser's error
    return _load_with(_Loader, text, file)


def _load_with(kind, text: str, file: str | None):
    """_load with the loader class kind."""
    _check_nesting(text, file, kind)
    loader = kind(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            nodes, expanded = _expanded_size(node)
        except CaseError as exc:
            raise CaseError(exc.reason, file=file, key=exc.key) from None
        limit = EXPANSION[0] * nodes + EXPANSION[1]
        if expanded > limit:
            raise CaseError(
                f"invalid YAML: its aliases (*name) expand {nodes} values to "
                f"{expanded:.3g}, more than {limit} (a recursive or exponential "
                "alias bomb?)",
                file=file,
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse_yaml(text: str, file: str | None = None):
    """Parse YAML text; errors become CaseError with the line and column in place of a key.
    Nesting deeper than MAX_DEPTH and alias expansion beyond EXPANSION are refused before
    anything is built."""
    try:
        return _load(text, file)
    except yaml.reader.ReaderError as exc:  # no marks, only a character position
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise CaseError(
            f"invalid YAML: {exc.reason} (character #x{exc.character:04x})",
            file=file,
            key=f"line {line}, column {column}",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
        raise CaseError(f"invalid YAML: {_yaml_problem(exc)}", file=file, key=where) from None
    except ValueError as exc:  # a value PyYAML cannot convert: a huge integer, a bad date
        reason = str(exc).split(";")[0]  # not Python's advice on raising its digit limit
        raise CaseError(f"invalid YAML: a value cannot be read ({reason})", file=file) from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: what, in which construct, and a hint for the usual slips."""
    mark, context = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
    if getattr(exc, "context", None) and context and mark and context.line != mark.line:
        problem += (
            f" ({exc.context} that starts at line {context.line + 1}, column {context.column + 1})"
        )
    if "'\\t'" in problem:
        problem += "; indent with spaces, YAML does not allow tabs"
    elif "<block end>" in problem:
        problem += "; check the indentation of this line against the lines above"
    elif "<stream end>" in problem:
        problem += "; a bracket or quote is not closed"
    return problem


@dataclass(frozen=True)
class Case:
    """A validated case: its file, the exact text, its typed settings (rodsim.case.settings),
    the ``--set`` overrides applied to the text, and how messages name it (the path as given;
    ``<string>`` or ``<dict>`` for a case that was never a file, whose path is then the one
    it stands for: relative mesh files are read from its folder)."""

    path: Path
    text: str
    settings: CaseSettings
    overrides: tuple[str, ...] = ()
    name: str = ""
    # analysis steps (docs/steps.md): ((Step, CaseSettings of the step), ...), () without;
    # settings are then the first step's
    steps: tuple = ()

    @property
    def label(self) -> str:
        """The case in messages: the file as given, ``<string>`` or ``<dict>``."""
        return self.name or str(self.path)

    def with_overrides(self, *assignments: str) -> "Case":
        """This case with more ``KEY=VALUE`` overrides (as ``--set``), validated anew."""
        more = self.overrides + tuple(assignments)
        return case_from_text(self.text, self.path, more, name=self.label)

    def to_dict(self) -> dict:
        """The case as written, its overrides applied: a fresh dict of plain values (not the
        typed ``settings``), to edit and validate again with ``case_from_dict``."""
        data = _unshared(parse_yaml(self.text, file=self.label))
        for assignment in self.overrides:
            apply_override(data, assignment)
        return data

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def stem(self) -> str:
        return self.path.stem

    def resolve(self, relative: str) -> Path:
        """A path from the case file, relative to the case file's folder."""
        p = Path(relative).expanduser()
        return p if p.is_absolute() else self.folder / p


_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def split_key(key: str) -> list[str | int]:
    """'loads[1].time' or 'loads.1.time' -> ['loads', 1, 'time']."""
    parts: list[str | int] = []
    pos = 0
    for m in _STEP.finditer(key):
        if m.start() != pos and key[pos : m.start()] != ".":
            raise ValueError(key)
        name, index = m.groups()
        parts.append(int(index) if index is not None else (int(name) if name.isdigit() else name))
        pos = m.end()
    if not parts or pos != len(key):
        raise ValueError(key)
    return parts


def apply_override(data, assignment: str):
    """Apply one ``KEY=VALUE`` (VALUE is YAML) to parsed case data, in place; returns data."""
    if "=" not in assignment:
        raise CaseError(
            f"expected KEY=VALUE such as solver.dt=1e-3, got {assignment!r}", key="--set"
        )
    key, text = assignment.split("=", 1)
    try:
        path = split_key(key.strip())
    except ValueError:
        raise CaseError(
            f"expected a key path such as solver.dt or loads[0].force before '=', got {key!r}",
            key="--set",
        ) from None
    try:
        value = parse_yaml(text)
    except CaseError as exc:  # name the option, not line 1 of the case file
        at = f" ({exc.key.split(', ')[-1]} of the value)" if exc.key else ""
        raise CaseError(exc.reason + at, key=f"--set {key.strip()}") from None
    node, last = data, path[-1]
    for i, part in enumerate(path):
        if not (
            isinstance(node, dict)
            if isinstance(part, str)
            else isinstance(node, list) and part < len(node)
        ):
            raise _missing(node, path, i)
        if i < len(path) - 1:  # a missing key is created: --set may add keys the file omits
            node = (
                node[part]
                if isinstance(part, int)
                else node.setdefault(part, [] if isinstance(path[i + 1], int) else {})
            )
    node[last] = value
    if path[:-1] == ["output"] and last in steps.EXCLUSIVE:  # --set output.every: no interval
        node.pop(steps.EXCLUSIVE[last], None)
    return data


def _missing(node, path: list, i: int) -> CaseError:
    """--set names an entry that is not there: say what is there instead."""
    here, parent = render(tuple(path[: i + 1])), render(tuple(path[:i])) or "the case"
    if isinstance(path[i], int) and isinstance(node, list):
        found = f"{parent} has {len(node)} entr{'y' if len(node) == 1 else 'ies'}"
    else:
        kind = "list" if isinstance(path[i], int) else "mapping"
        found = f"{parent} is {show(node)}, not a {kind}"
    return CaseError(f"--set: no entry {here} to set ({found})", key=here)


def load_case(path, overrides=()) -> Case:
    """Read, override and validate a case file. Raises CaseError naming the file and key."""
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CaseError("no such file", file=name) from None
    except IsADirectoryError:
        raise CaseError("is a folder, expected a case file (.yaml)", file=name) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError(f"cannot read: {exc}", file=name) from None
    return case_from_text(text, path, overrides)


def case_from_text(text: str, path, overrides=(), name: str | None = None) -> Case:
    """Validate case text as if read from ``path`` (relative mesh files are read from its
    folder); messages name it ``name`` (default: the path)."""
    path = Path(path)
    name = str(path) if name is None else name
    data = parse_yaml(text, file=name)
    if data is None:
        raise CaseError("the case file is empty", file=name)
    if not isinstance(data, dict):
        raise CaseError(
            "expected a mapping of keys (rodsim: 1, mesh: ..., ...) at the top, got " + show(data),
            file=name,
        )
    data = _unshared(data)  # YAML aliases share objects; --set must change one place only
    try:
        for assignment in overrides:
            apply_override(data, assignment)
        with units.declared(v1.declared_units(data)):
            if data.get(steps.KEY) is None:  # `steps: null` (--set steps=null): none
                data.pop(steps.KEY, None)
                checked, per_step = v1.CASE.check(data, ()), ()
            else:
                checked, per_step = steps.validate(data, _case_check, v1.STEP_LIST)
    except CaseError as exc:
        raise CaseError(exc.reason, file=name, key=exc.key) from None
    return Case(
        path=path.resolve(),
        text=text,
        settings=checked,
        overrides=tuple(overrides),
        name=name,
        steps=per_step,
    )


def _case_check(data):
    return v1.CASE.check(data, ())


def dump_case(data: dict) -> str:
    """YAML text of case data given as a dict (numpy arrays and scalars, tuples and paths
    become plain values), which parse_yaml reads back as the same values. CaseError naming
    the key of a value YAML cannot hold."""
    if not isinstance(data, dict):
        raise CaseError(
            "expected a mapping of keys (rodsim: 1, mesh: ..., ...) at the top, got " + show(data)
        )
    return yaml.dump(_plain(data, ()), Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def _plain(value, path: tuple):
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise CaseError(f"keys must be names, found {key!r}", key=render(path) or None)
        return {k: _plain(v, (*path, k)) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v, (*path, i)) for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, PurePath):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CaseError(
        f"a {type(value).__name__} cannot be written in a case (give numbers, "
        "strings, lists and mappings)",
        key=render(path) or None,
    )


def _unshared(node):
    """A copy of parsed YAML in which no two places share a mapping or list."""
    if isinstance(node, dict):
        return {k: _unshared(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_unshared(v) for v in node]
    return node
