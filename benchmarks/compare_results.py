"""Bit-identical results between a base commit and a working tree (a script, not a test).

Issue 12 asks that a refactor leaves every numeric dataset of every case in inputs/ and of the
quick validation suite identical. This script runs the same cases with the code of two trees
and compares the HDF5 results dataset by dataset.

- base: a git worktree of the base commit, created on first use (``git worktree add --detach``)
  under benchmarks/results/worktrees/base-<sha>/ (git-ignored) and reused afterwards;
- head: the working tree (default: the repository root holding this script; ``--head-tree``
  picks another tree, e.g. a second worktree of the base to check the script itself).

Each run is a subprocess of this Python with ``PYTHONPATH=<tree>``, so ``import rodsim`` loads
that tree's package before the editable install; the run prints ``rodsim.__file__`` into its log
and stops (exit 90) if the package came from elsewhere. Numba caches are per source path, so
the trees do not share compiled kernels. Base and head run one after the other, never at once.

Cases (``--list`` prints them):

- ``inputs/<folder>``: each case YAML in inputs/ (``inputs/<folder>/<stem>`` when a folder holds
  several), run as ``rodsim run CASE -o results.h5 --no-vtk`` through ``rodsim.cli.main``, at
  full length. Each tree runs its own copy of the case file (a warning says when they differ).
- ``quick/<benchmark>``: each benchmark of validation/ run as ``rodsim validate --quick`` runs
  it (``rodsim.validate.runner.run_benchmark(bench, "quick", dir)``: every run of the quick tier
  through prepare/execute, one results file per run). A benchmark unavailable in a tree writes
  no file; a numerical failure or a broken spec counts as a failed run.

A case that only head has (a new input or benchmark) is listed and not compared; a case that
only the base has is a failure.

Every dataset of each pair of files (mesh/* included) must have the same shape and dtype and
equal values (``np.array_equal``, NaNs equal; a difference only in the sign of a zero or a NaN
payload is accepted and noted). Attributes are ignored (they hold the case text and versions).
A dataset missing in head is a difference; one new in head is a difference unless it matches
``--allow-new``. Datasets matching ``--exclude`` (intended behaviour changes) are skipped and
counted. Exit code 0 only if every run succeeded in both trees and every file is identical.

Base results are cached in OUT/base-<sha>/ (OUT defaults to benchmarks/results/compare) and
reused when a previous run of the same case succeeded; ``--rerun-base`` runs them again. Head
results go to OUT/head/ and are rewritten every time (``--no-run`` compares the results already
there, e.g. with a new ``--exclude``). Each case's log is next to its results.

    python benchmarks/compare_results.py --base c9f44ef    # ~2 min a tree warm, ~8 cold
    python benchmarks/compare_results.py --base c9f44ef --skip-validation
    python benchmarks/compare_results.py --base c9f44ef --cases 'inputs/*' quick/ring
    python benchmarks/compare_results.py --base c9f44ef --exclude 'nodes/reaction_*' \\
        --allow-new 'nodes/support_*'
    python benchmarks/compare_results.py --base c9f44ef --head-tree ../wt-base2 --list
"""

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"

# Run by each tree's Python process: argv = tree kind name source outdir.
DRIVER = r"""
import json, sys
from pathlib import Path
tree, kind, name, source, out = sys.argv[1:6]
import rodsim
where = Path(rodsim.__file__).resolve()
print(f"rodsim.__file__ = {where}", flush=True)
if not where.is_relative_to(Path(tree).resolve()):
    print(f"rodsim was imported from {where}, not from {tree}", file=sys.stderr)
    sys.exit(90)
if kind == "input":
    from rodsim.cli import main
    sys.argv = ["rodsim", "run", source, "-o", str(Path(out) / "results.h5"), "--no-vtk"]
    main()
else:
    from rodsim.validate import runner, suite
    bench = suite.select(None, [name])[0]
    outcome = runner.run_benchmark(bench, "quick", Path(out))
    print("OUTCOME " + json.dumps({"status": outcome.status, "note": outcome.note,
                                   "files": {k: str(v) for k, v in outcome.results.items()}}))
    failed = outcome.status == "error" or (outcome.status == "FAIL" and bool(outcome.note))
    sys.exit(1 if failed else 0)
"""


def git(*args, cwd=REPO) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def base_worktree(rev: str) -> tuple[Path, str]:
    """The worktree of commit ``rev`` under benchmarks/results/worktrees/, created if missing.
    Returns (path, full sha). Refuses a worktree that moved off the commit or has edits."""
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    path = RESULTS / "worktrees" / f"base-{sha[:12]}"
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "prune")
        print(f"creating worktree of {sha[:12]} at {path}", file=sys.stderr)
        git("worktree", "add", "--detach", str(path), sha)
    head = git("rev-parse", "HEAD", cwd=path)
    if head != sha:
        sys.exit(
            f"error: worktree {path} is at {head[:12]}, not {sha[:12]}; remove it "
            f"(git worktree remove {path}) and rerun"
        )
    if git("status", "--porcelain", "--untracked-files=no", cwd=path):
        sys.exit(f"error: worktree {path} has local edits; restore it (git -C {path} checkout .)")
    return path, sha


def tree_env(tree: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    return env


def rodsim_location(tree: Path) -> str:
    """Where ``import rodsim`` resolves with this tree's PYTHONPATH."""
    code = "import rodsim; print(rodsim.__file__)"
    r = subprocess.run(
        [sys.executable, "-c", code], env=tree_env(tree), cwd=tree, capture_output=True, text=True
    )
    return r.stdout.strip() if r.returncode == 0 else f"IMPORT FAILED: {r.stderr.strip()[-300:]}"


def find_cases(tree: Path) -> dict[str, tuple[str, str]]:
    """case name -> (kind, path relative to the tree) for inputs/ and validation/."""
    cases = {}
    for folder in sorted(p for p in (tree / "inputs").iterdir() if p.is_dir()):
        yamls = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
        for y in yamls:
            name = f"inputs/{folder.name}" + (f"/{y.stem}" if len(yamls) > 1 else "")
            cases[name] = ("input", str(y.relative_to(tree)))
    for spec in sorted((tree / "validation").glob("*/benchmark.yaml")):
        cases[f"quick/{spec.parent.name}"] = ("quick", spec.parent.name)
    return cases


@dataclass
class Run:
    rc: int | None = None  # None: not run (missing in this tree)
    wall: float = float("nan")
    files: dict = field(default_factory=dict)  # relative name -> path
    status: str = ""  # validation verdict (informational)
    reused: bool = False
    log: Path | None = None


def run_case(tree: Path, kind: str, name: str, source: str, out: Path) -> Run:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    log = out / "run.log"
    arg = str(tree / source) if kind == "input" else source
    started = time.perf_counter()
    with open(log, "w") as fh:
        r = subprocess.run(
            [sys.executable, "-c", DRIVER, str(tree), kind, name, arg, str(out)],
            env=tree_env(tree),
            cwd=tree,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    run = Run(r.returncode, time.perf_counter() - started, log=log)
    text = log.read_text(errors="replace")
    for line in text.splitlines():
        if line.startswith("OUTCOME "):
            run.status = json.loads(line[8:])["status"]
    run.files = {str(p.relative_to(out)): p for p in sorted(out.rglob("*.h5"))}
    (out / "run.json").write_text(
        json.dumps({"rc": run.rc, "wall": run.wall, "status": run.status})
    )
    return run


def cached_run(out: Path) -> Run | None:
    """A previous successful base run of the case, if any."""
    try:
        info = json.loads((out / "run.json").read_text())
    except (OSError, ValueError):
        return None
    if info.get("rc") != 0:
        return None
    files = {str(p.relative_to(out)): p for p in sorted(out.rglob("*.h5"))}
    return Run(0, info["wall"], files, info.get("status", ""), True, out / "run.log")


def _datasets(f: h5py.File) -> dict:
    found = {}

    def visit(name, obj):  # returns None: a value would stop visititems
        if isinstance(obj, h5py.Dataset):
            found[name] = obj

    f.visititems(visit)
    return found


def _equal(a: np.ndarray, b: np.ndarray) -> tuple[bool, bool, float]:
    """(equal, bitwise equal, max |a - b|) for arrays of the same shape and dtype."""
    if a.dtype.kind in "biufc":
        if a.tobytes() == b.tobytes():
            return True, True, 0.0
        equal = bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        if a.size == 0:
            return equal, False, 0.0
        x, y = (
            a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
            b.astype(np.complex128 if b.dtype.kind == "c" else np.float64),
        )
        with np.errstate(invalid="ignore"):
            d = np.abs(x - y)
        both_nan = np.isnan(x) & np.isnan(y)
        d[both_nan] = 0.0
        d[np.isnan(d)] = np.inf  # NaN on one side only
        return equal, False, float(d.max())
    equal = bool(np.array_equal(a, b))
    return equal, equal, 0.0 if equal else float("nan")


@dataclass
class Diff:
    compared: int = 0
    excluded: int = 0
    different: list = field(default_factory=list)  # (dataset, why, max |diff|)
    allowed_new: int = 0
    soft: int = 0  # equal, but not bitwise (signed zero, NaN payload)

    @property
    def identical(self) -> bool:
        return not self.different

    @property
    def max_diff(self) -> float:
        vals = [d for _, _, d in self.different if d == d]
        return max(vals) if vals else float("nan")


def compare_files(base: Path, head: Path, exclude, allow_new) -> Diff:
    diff = Diff()
    with h5py.File(base, "r") as fb, h5py.File(head, "r") as fh:
        db, dh = _datasets(fb), _datasets(fh)
        for name in sorted(set(db) | set(dh)):
            if any(fnmatch.fnmatchcase(name, p) for p in exclude):
                diff.excluded += 1
                continue
            if name not in dh:
                diff.different.append((name, "missing in head", float("nan")))
                continue
            if name not in db:
                if any(fnmatch.fnmatchcase(name, p) for p in allow_new):
                    diff.allowed_new += 1
                else:
                    diff.different.append((name, "new in head", float("nan")))
                continue
            diff.compared += 1
            a, b = db[name][()], dh[name][()]
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape or a.dtype != b.dtype:
                why = f"shape/dtype {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
                diff.different.append((name, why, float("nan")))
                continue
            equal, bitwise, d = _equal(a, b)
            if not equal:
                diff.different.append((name, "values", d))
            elif not bitwise:
                diff.soft += 1
    return diff


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", required=True, help="base commit (e.g. c9f44ef)")
    p.add_argument(
        "--head-tree",
        type=Path,
        default=REPO,
        help="tree whose code is compared with the base (default: this repository)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "compare",
        help="results folder (default: benchmarks/results/compare)",
    )
    p.add_argument(
        "--cases",
        nargs="+",
        metavar="PATTERN",
        help="run only these cases (glob patterns on the names --list prints)",
    )
    p.add_argument(
        "--skip-validation",
        action="store_true",
        help="leave out the quick validation suite (quick/*)",
    )
    p.add_argument(
        "--exclude",
        nargs="+",
        default=[],
        metavar="PATTERN",
        help="skip datasets matching these globs (e.g. 'nodes/reaction_*')",
    )
    p.add_argument(
        "--allow-new",
        nargs="+",
        default=[],
        metavar="DATASET",
        help="datasets (globs) that head may have and the base has not",
    )
    p.add_argument(
        "--rerun-base",
        action="store_true",
        help="run the base cases again instead of reusing cached results",
    )
    p.add_argument(
        "--no-run",
        action="store_true",
        help="run nothing: compare the results already in OUT (e.g. a new --exclude)",
    )
    p.add_argument("--list", action="store_true", help="list the case names and stop")
    return p.parse_args(argv)


def _fmt_wall(run: Run) -> str:
    if run.rc is None:
        return "-"
    return f"{run.wall:.1f}" + ("*" if run.reused else "")


def main(argv=None) -> int:
    args = parse_args(argv)
    head_tree = args.head_tree.resolve()
    base_tree, sha = base_worktree(args.base)
    base_cases, head_cases = find_cases(base_tree), find_cases(head_tree)
    names = sorted(set(base_cases) | set(head_cases), key=lambda n: (n.startswith("q"), n))
    if args.skip_validation:
        names = [n for n in names if not n.startswith("quick/")]
    if args.cases:
        names = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in args.cases)]
    if args.list:
        for n in names:
            print(n)
        return 0
    out_base, out_head = args.out.resolve() / f"base-{sha[:12]}", args.out.resolve() / "head"
    print(f"base  {sha[:12]}  {base_tree}\n      rodsim from {rodsim_location(base_tree)}")
    print(
        f"head  {git('rev-parse', '--short=12', 'HEAD', cwd=head_tree)}"
        f"{' + local edits' if git('status', '--porcelain', '-uno', cwd=head_tree) else ''}  "
        f"{head_tree}\n      rodsim from {rodsim_location(head_tree)}"
    )
    print(f"results: base {out_base} (cached), head {out_head}")
    print(f"exclude: {' '.join(args.exclude) or '-'}; allow new: {' '.join(args.allow_new) or '-'}")
    print(f"{len(names)} cases; base and head run one after the other", flush=True)

    rows, failures = [], 0
    started = time.perf_counter()
    for name in names:
        runs = {}
        for label, tree, cases, out in (
            ("base", base_tree, base_cases, out_base),
            ("head", head_tree, head_cases, out_head),
        ):
            slug = out / name.replace("/", "__")
            if name not in cases:
                runs[label] = Run()
                continue
            kind, source = cases[name]
            reuse = args.no_run or (label == "base" and not args.rerun_base)
            cached = cached_run(slug) if reuse else None
            if cached or args.no_run:
                runs[label] = cached or Run(-1, log=slug / "run.log")
            else:
                print(f"  {label} {name} ...", end=" ", file=sys.stderr, flush=True)
                runs[label] = run_case(tree, kind, name.split("/", 1)[1], source, slug)
                print(f"{runs[label].wall:.1f} s, exit {runs[label].rc}", file=sys.stderr)
        b, h = runs["base"], runs["head"]
        if b.rc is not None and h.rc is not None and base_cases[name][0] == "input":
            if (base_tree / base_cases[name][1]).read_bytes() != (
                head_tree / head_cases[name][1]
            ).read_bytes():
                print(f"warning: {name}: the case file differs between the trees", flush=True)
        walls = f"{_fmt_wall(b):>8} {_fmt_wall(h):>8}"
        problem = ""
        if h.rc is None:
            problem = "case missing in head"
        elif b.rc or h.rc:
            problem = (
                "RUN FAILED ("
                + ", ".join(
                    f"{lbl} not run" if r.rc == -1 else f"{lbl} exit {r.rc}, log {r.log}"
                    for lbl, r in (("base", b), ("head", h))
                    if r.rc
                )
                + ")"
            )
        if b.rc is None and h.rc is not None:
            rows.append(f"{name:<34} {walls}  {'':>6} {'':>4}  new in head: not compared")
            continue
        if problem:
            failures += 1
            rows.append(f"{name:<34} {walls}  {'':>6} {'':>4}  {problem}")
            continue
        verdict = f" [{b.status}/{h.status}]" if b.status or h.status else ""
        for rel in sorted(set(b.files) | set(h.files)):
            label = name if len(set(b.files) | set(h.files)) == 1 else f"{name}:{Path(rel).stem}"
            if rel not in b.files or rel not in h.files:
                failures += 1
                where = "head" if rel not in h.files else "base"
                rows.append(f"{label:<34} {walls}  {'':>6} {'':>4}  NO FILE in {where}: {rel}")
                continue
            d = compare_files(b.files[rel], h.files[rel], args.exclude, args.allow_new)
            extra = []
            if d.excluded:
                extra.append(f"{d.excluded} excluded")
            if d.allowed_new:
                extra.append(f"{d.allowed_new} new allowed")
            if d.soft:
                extra.append(f"{d.soft} equal but not bitwise (signed zero / NaN payload)")
            if d.identical:
                text = "identical"
            else:
                failures += 1
                first, why, _ = d.different[0]
                more = f" (+{len(d.different) - 1} more)" if len(d.different) > 1 else ""
                text = f"DIFFERENT  max {d.max_diff:.3g}  first {first}: {why}{more}"
            note = f"  ({'; '.join(extra)})" if extra else ""
            rows.append(
                f"{label:<34} {walls}  {d.compared:>6} {d.excluded:>4}  {text}{note}{verdict}"
            )
        if not b.files and not h.files:
            rows.append(f"{name:<34} {walls}  {0:>6} {'':>4}  no results files{verdict}")

    print()
    print(f"{'case':<34} {'base s':>8} {'head s':>8}  {'sets':>6} {'excl':>4}  result")
    for r in rows:
        print(r)
    print(
        f"\nwall times include process start and numba cache load; * = base result reused "
        f"from cache. Total {time.perf_counter() - started:.0f} s."
    )
    if failures:
        print(f"NOT IDENTICAL: {failures} case(s) or file(s) differ, fail or are missing")
        return 1
    print("all results bit-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
