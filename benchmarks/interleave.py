"""No-slowdown check: a benchmark script run alternately with a base commit's code and a working
tree's code (a script, not a test).

Issue 12 asks that bench_explicit.py and bench_equilibrium.py stay within 3% of the base
commit: median of at least 5 runs each, interleaved, spread reported. This script runs
SCRIPT (a path relative to the repository root) as a subprocess from each tree, with
``PYTHONPATH=<tree>`` and that tree's own copy of the script:

- base: the git worktree of the base commit under benchmarks/results/worktrees/base-<sha>/
  (the one compare_results.py uses; created on first use with ``git worktree add --detach``);
- head: the working tree (default: this repository; ``--head-tree`` picks another).

First one warm-up run per tree (numba compilation or cache load; not counted), then ROUNDS
rounds in the order base, head / head, base / base, head ... (ABBA, so a drift in machine load
hits both trees alike). Every run is a fresh process. The output of each script is read by a
parser chosen by its file name (``--parser`` overrides):

- ``explicit`` (bench_explicit.py): run with ``--json FILE``; one row per group, order,
  elements and core setting, the script's best us/step of the run;
- ``equilibrium`` (bench_equilibrium.py, which prints only text): the best and the median
  equilibrium solve in ms, and the wall time in s of each explicit-dynamics tolerance line;
- ``plate`` (bench_plate.py): us/step per mesh;
- ``run`` (bench_run.py): the best wall time in ms of each case's whole run path. The base
  tree may lack the script: ``--same-script`` runs the head tree's copy with each tree's code.

For each row the table gives the median over the rounds for base and head, the spread of each
as (max - min) / median and as the relative interquartile range, and head median / base median.
All rows are times (lower is better); a ratio above ``--threshold`` (default 1.03) is flagged
SLOWER, and a spread above the threshold's margin is flagged as noisy: the figures cannot
resolve 3% then; rerun on a quieter machine or with more rounds. The load average is printed
at the start and the end. The exit code is 0 whatever the ratios: this script reports, it does
not assert.

    python benchmarks/interleave.py --base c9f44ef --rounds 5 -- benchmarks/bench_explicit.py \\
        --elements 10 1000 --groups SO3xR3 SE3 --seconds 1 --no-order4
    python benchmarks/interleave.py --base c9f44ef -- benchmarks/bench_equilibrium.py
    python benchmarks/interleave.py --base c9f44ef --rounds 2 --json benchmarks/results/il.json \\
        -- benchmarks/bench_explicit.py --elements 10 --seconds 0.5 --no-order4
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from compare_results import REPO, base_worktree, git, rodsim_location, tree_env

PARSERS = {
    "bench_explicit.py": "explicit",
    "bench_equilibrium.py": "equilibrium",
    "bench_plate.py": "plate",
    "bench_run.py": "run",
}


def _explicit_rows(data: dict) -> dict[str, float]:
    rows = {}
    for r in data["rows"]:
        if r.get("error") or r.get("us_per_step") is None:
            continue
        cores = "single" if r["mode"] == "single" else f"all ({r['threads']} thr)"
        key = f"{r['group']} ord {r['order']} {r['elements']} el {cores} [us/step]"
        rows[key] = float(r["us_per_step"])
    return rows


def _equilibrium_rows(text: str) -> dict[str, float]:
    rows = {}
    m = re.search(r"equilibrium: best of (\d+): ([\d.eE+-]+) ms \(median ([\d.eE+-]+) ms\)", text)
    if m:
        rows[f"equilibrium solve, best of {m[1]} [ms]"] = float(m[2])
        rows[f"equilibrium solve, median of {m[1]} [ms]"] = float(m[3])
    for m in re.finditer(r"tip within (\S+) after \d+ steps, .*?, ([\d.eE+-]+) s wall", text):
        rows[f"damped explicit to {m[1]} [s]"] = float(m[2])
    return rows


def _plate_rows(text: str) -> dict[str, float]:
    rows = {}
    for m in re.finditer(r"^\s*(\d+)x(\d+)\s+(\d+)\s+(\d+)\s+([\d.eE+-]+)\s", text, re.M):
        rows[f"plate {m[1]}x{m[2]} ({m[3]} el) [us/step]"] = float(m[5])
    return rows


def _run_rows(text: str) -> dict[str, float]:
    return {f"run {m[1]} [ms]": float(m[2]) for m in re.finditer(r"^run (\S+) (\S+)$", text, re.M)}


def run_once(
    tree: Path, script: str, args: list[str], parser: str, script_tree: Path | None = None
) -> tuple[dict, float, str]:
    """One run of SCRIPT (the copy in script_tree, default the tree's own) with the tree's
    code: (rows, wall, error text or '')."""
    cmd = [sys.executable, str((script_tree or tree) / script), *args]
    with tempfile.TemporaryDirectory(prefix="interleave-") as tmp:
        json_path = Path(tmp) / "out.json"
        if parser == "explicit":
            cmd += ["--json", str(json_path)]
        started = time.perf_counter()
        r = subprocess.run(cmd, env=tree_env(tree), cwd=tree, capture_output=True, text=True)
        wall = time.perf_counter() - started
        if r.returncode:
            return {}, wall, f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-400:]}"
        if parser == "explicit":
            rows = _explicit_rows(json.loads(json_path.read_text()))
        elif parser == "equilibrium":
            rows = _equilibrium_rows(r.stdout)
        elif parser == "run":
            rows = _run_rows(r.stdout)
        else:
            rows = _plate_rows(r.stdout)
    if not rows:
        return {}, wall, f"no figures found in the output:\n{r.stdout[-400:]}"
    return rows, wall, ""


def _stats(values: list[float]) -> tuple[float, float, float]:
    """(median, (max - min) / median, IQR / median)."""
    v = np.asarray(values, dtype=float)
    med = float(np.median(v))
    q1, q3 = np.percentile(v, [25, 75])
    return med, float(v.max() - v.min()) / med, float(q3 - q1) / med


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        usage="%(prog)s --base REV [options] -- SCRIPT [SCRIPT ARGS]",
    )
    p.add_argument("--base", required=True, help="base commit (e.g. c9f44ef)")
    p.add_argument(
        "--head-tree",
        type=Path,
        default=REPO,
        help="tree compared with the base (default: this repository)",
    )
    p.add_argument("--rounds", type=int, default=5, help="counted runs per tree (default 5)")
    p.add_argument(
        "--threshold",
        type=float,
        default=1.03,
        help="flag rows whose head/base median ratio exceeds this (default 1.03)",
    )
    p.add_argument(
        "--parser",
        choices=sorted(set(PARSERS.values())),
        help="how to read the script's output (default: from its file name)",
    )
    p.add_argument("--no-warmup", action="store_true", help="skip the uncounted warm-up runs")
    p.add_argument(
        "--same-script",
        action="store_true",
        help="run the head tree's copy of SCRIPT for both trees (a script the base lacks)",
    )
    p.add_argument("--json", metavar="FILE", help="also write every run's figures as JSON")
    p.add_argument("script", help="benchmark script, relative to the repository root")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments of the script")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be >= 1")
    script = Path(args.script)
    if script.is_absolute():
        for root in (args.head_tree.resolve(), REPO):
            if script.resolve().is_relative_to(root):
                script = script.resolve().relative_to(root)
                break
        else:
            p.error(f"{script} is not inside the head tree or this repository")
    args.script = str(script)
    args.parser = args.parser or PARSERS.get(script.name)
    if args.parser is None:
        p.error(f"no parser for {script.name}; give --parser")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    base_tree, sha = base_worktree(args.base)
    head_tree = args.head_tree.resolve()
    trees = {"base": base_tree, "head": head_tree}
    script_tree = head_tree if args.same_script else None
    for label, tree in trees.items():
        if not ((script_tree or tree) / args.script).is_file():
            print(f"error: {tree / args.script} does not exist ({label})")
            return 0
    edits = " + local edits" if git("status", "--porcelain", "-uno", cwd=head_tree) else ""
    print(f"interleaved benchmark: {args.script} {' '.join(args.script_args)}")
    print(f"base  {sha[:12]}  {base_tree}\n      rodsim from {rodsim_location(base_tree)}")
    print(
        f"head  {git('rev-parse', '--short=12', 'HEAD', cwd=head_tree)}{edits}  {head_tree}\n"
        f"      rodsim from {rodsim_location(head_tree)}"
    )
    load = os.getloadavg()
    print(
        f"{args.rounds} rounds (ABBA order) after {'no' if args.no_warmup else 'one'} warm-up "
        f"run per tree; parser {args.parser}; load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f} at start",
        flush=True,
    )

    figures = {"base": [], "head": []}  # one dict of rows per counted run
    errors = []
    order = [("warm-up", lbl) for lbl in ("base", "head")] if not args.no_warmup else []
    for k in range(args.rounds):
        pair = ("base", "head") if k % 2 == 0 else ("head", "base")
        order += [(f"round {k + 1}", lbl) for lbl in pair]
    started = time.perf_counter()
    for what, label in order:
        rows, wall, err = run_once(
            trees[label], args.script, args.script_args, args.parser, script_tree
        )
        print(
            f"  {what:<9} {label}: {wall:6.1f} s" + (f"  FAILED {err}" if err else ""),
            file=sys.stderr,
            flush=True,
        )
        if err:
            errors.append(f"{what} {label}: {err}")
        elif what != "warm-up":
            figures[label].append(rows)

    names = []
    for runs in (figures["base"], figures["head"]):
        for rows in runs:
            names += [n for n in rows if n not in names]
    width = max([len(n) for n in names] + [10])
    print()
    print(
        f"{'row':<{width}}  {'base med':>10} {'spread':>7} {'rIQR':>6}  {'head med':>10} "
        f"{'spread':>7} {'rIQR':>6}  {'head/base':>9}  n"
    )
    margin = args.threshold - 1.0
    summary = []
    for name in names:
        b = [r[name] for r in figures["base"] if name in r]
        h = [r[name] for r in figures["head"] if name in r]
        if not b or not h:
            print(f"{name:<{width}}  missing in {'base' if not b else 'head'}")
            continue
        (bm, bs, bi), (hm, hs, hi) = _stats(b), _stats(h)
        ratio = hm / bm
        flags = []
        if ratio > args.threshold:
            flags.append("SLOWER")
        if max(bs, hs) > margin:
            flags.append("noisy")
        print(
            f"{name:<{width}}  {bm:10.4g} {bs:7.1%} {bi:6.1%}  {hm:10.4g} {hs:7.1%} {hi:6.1%}  "
            f"{ratio:9.3f}  {len(b)}/{len(h)}  {' '.join(flags)}"
        )
        summary.append(
            {
                "row": name,
                "base": b,
                "head": h,
                "base_median": bm,
                "head_median": hm,
                "ratio": ratio,
                "flags": flags,
            }
        )
    load = os.getloadavg()
    print(
        f"\nspread = (max - min) / median, rIQR = interquartile range / median over the rounds; "
        f"SLOWER: head/base > {args.threshold:g}; noisy: a spread above {margin:.0%}."
    )
    print(
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at end; "
        f"total {time.perf_counter() - started:.0f} s"
    )
    slower = [s["row"] for s in summary if "SLOWER" in s["flags"]]
    print(
        f"{len(slower)} of {len(summary)} rows slower than {args.threshold:g} x base"
        + (f": {', '.join(slower)}" if slower else "")
    )
    for e in errors:
        print(f"failed run: {e}")
    if args.json:
        out = {
            "script": args.script,
            "args": args.script_args,
            "base": sha,
            "head_tree": str(head_tree),
            "rounds": args.rounds,
            "rows": summary,
            "errors": errors,
        }
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2))
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
