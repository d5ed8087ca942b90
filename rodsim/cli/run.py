"""``rodsim run``, ``check``, ``schema`` and ``warmup`` (docs/running.md), on rodsim.api; and
what `run` shows on a terminal while it works (the progress line, the compile counter).
"""

import contextlib
import logging
import math
import sys
import time as wallclock

import click

from rodsim.cli.common import handle_errors
from rodsim.errors import Interrupted, RodsimError

_SET_HELP = "Override a case key, e.g. --set solver.dt=1e-3 (repeatable)."
_MEMORY_HELP = (
    "Memory the run may use, e.g. 4G, 500M, 2GiB (powers of 1024; kB, MB, GB: of "
    "1000) or bytes; default: what the system has available. A model whose "
    "estimate exceeds it is refused (exit code 4)."
)


class Size(click.ParamType):
    """A memory size (rodsim.resources.parse_size), as bytes."""

    name = "size"

    def convert(self, value, param, ctx):
        from rodsim.resources import parse_size

        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class Progress:
    """A one-line progress display on a terminal: simulated time, steps/s, ETA; and, when
    kernels are being compiled, a line saying so (also when stderr is not a terminal, where
    it is printed once). Compile time is left out of the step rate and the ETA."""

    def __init__(self, t_end: float, enabled: bool, announce: bool = True):
        from rodsim import kernel_cache

        self.t_end = t_end
        self.enabled = enabled
        self.announce = announce
        self.start = wallclock.perf_counter()
        self.shown = 0.0
        self.compiled = kernel_cache.compiling()
        self.compile_start = self.run_compile_start = self.compiled.elapsed()
        self.told = False

    def begin(self) -> None:
        """The run starts now: the step rate counts from here."""
        self.start = wallclock.perf_counter()
        self.run_compile_start = self.compiled.elapsed()

    def compile_seconds(self, run_only: bool = False) -> float:
        """Seconds spent compiling since this display was made (run_only: since begin)."""
        start = self.run_compile_start if run_only else self.compile_start
        return self.compiled.elapsed() - start

    def compiling(self, stats) -> None:
        """kernel_cache.watch callback."""
        if not self.announce:
            return
        try:
            if not self.enabled:  # piped: one line, at the first compilation
                if not self.told:
                    sys.stderr.write("compiling kernels (first run only) ...\n")
                    sys.stderr.flush()
                self.told = True
                return
            now = wallclock.perf_counter()
            if self.told and now - self.shown < 0.1 and stats.active:
                return
            self.told, self.shown = True, now
            sys.stderr.write(
                f"\r  compiling kernels (first run only): {stats.kernels} kernels,"
                f" {self.compile_seconds():.0f} s   "
            )
            sys.stderr.flush()
        except OSError:  # the terminal is gone (SIGHUP)
            self.enabled = self.announce = False

    def __call__(self, t: float, step: int, n_steps: int) -> None:
        now = wallclock.perf_counter()
        if not self.enabled or (now - self.shown < 0.1 and step < n_steps):
            return
        self.shown = now
        try:
            self._show(t, step, n_steps, now)
        except OSError:  # the terminal is gone (SIGHUP): the run goes on, or stops cleanly
            self.enabled = False

    def _show(self, t: float, step: int, n_steps: int, now: float) -> None:
        wall = now - self.start - self.compile_seconds(run_only=True)
        rate = step / wall if wall > 0 else 0.0
        eta = (n_steps - step) / rate if rate > 0 else math.inf
        width = 24
        fill = int(width * step / n_steps)
        bar = "#" * fill + "." * (width - fill)
        eta_text = f"{int(eta // 60)}:{int(eta % 60):02d}" if math.isfinite(eta) else "?"
        sys.stderr.write(
            f"\r  t = {t:.5g} / {self.t_end:.5g} [{bar}] {100 * step / n_steps:3.0f}%"
            f"  {rate:.3g} steps/s  ETA {eta_text}   "
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled and self.shown:
            try:
                sys.stderr.write("\n")
                sys.stderr.flush()  # before what stdout prints next
            except OSError:
                self.enabled = False
        self.shown = 0.0


class _OwnLines(logging.Filter):
    """A filter on the log's handlers while `run` or `check` works (on_log): a log record
    first ends the progress or compile counter line (a warning logged while the kernels
    compile starts on a line of its own), and a record that the printed summary holds
    (``in_summary``: the explicit step's collapse, rodsim.integrators.planning) is dropped
    where the summary is printed."""

    def __init__(self, progress: "Progress | None", summary: bool):
        super().__init__()
        self.progress, self.summary = progress, summary

    def filter(self, record: logging.LogRecord) -> bool:
        if self.summary and getattr(record, "in_summary", False):
            return False
        if self.progress is not None:
            self.progress.done()
        return True

    @contextlib.contextmanager
    def on_log(self):
        handlers = list(logging.getLogger().handlers)
        for h in handlers:
            h.addFilter(self)
        try:
            yield self
        finally:
            for h in handlers:
                h.removeFilter(self)


@click.command()
@click.argument("case", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Results file (.h5); never the case file, a mesh file it reads or a .pvd.",
)
@click.option(
    "--vtk/--no-vtk",
    default=None,
    help="Write the ParaView series (default: the case's output.vtk).",
)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--max-memory", type=Size(), default=None, help=_MEMORY_HELP)
@click.option(
    "--restart",
    type=click.Path(dir_okay=False),
    default=None,
    help="Continue this results file of CASE from its last restart state, to CASE's end "
    "time (the same or later); the file is the output (docs/restart.md).",
)
@handle_errors
def run(case, output, vtk, overrides, quiet, max_memory, restart):
    """Validate CASE, integrate it and write the results."""
    from rodsim import api, case_summary, kernel_cache
    from rodsim import run as runner
    from rodsim.results.writer import previous_path

    progress = Progress(0.0, sys.stderr.isatty() and not quiet, announce=not quiet)
    lines = _OwnLines(progress, summary=not quiet)
    with kernel_cache.watch(progress.compiling), lines.on_log():
        try:
            prep = api.prepare(case, overrides, max_memory=max_memory)
        finally:
            progress.done()  # end a compile line before the summary or an error
        progress.t_end = prep.plan.t_end
        if restart is not None:  # checked before anything is printed (again under the lock)
            resume = runner.restart_state(prep, restart)
        h5, _ = runner.output_paths(prep.case, output if restart is None else restart)
        if not quiet:
            text = [api.summary(prep)]  # may compile kernels (the load totals): a first run
            if restart is not None:
                text.append(f"restart   {restart_text(h5, resume)}")
            if h5.exists():
                text.append(
                    f"previous  {h5.name} is kept as {previous_path(h5).name} until this "
                    "run completes"
                )
            progress.done()  # the summary starts on a line of its own
            click.echo("\n".join(text))
        progress.begin()
        try:
            result = api.run_case(prep, output, vtk=vtk, progress=progress, restart=restart)
        except RodsimError as exc:
            progress.done()
            kept = getattr(exc, "result", None)
            if kept is not None and not isinstance(exc, Interrupted):
                click.echo(f"results   {runner.kept_text(kept)}", err=True)
            raise
        finally:
            progress.done()
    if not quiet and result.final is None:  # a restart with nothing left to run
        click.echo(f"done      nothing to run: {result.path} has reached the end already")
    elif not quiet:
        f = result.final
        compiled = progress.compile_seconds()
        # the steps' own rate: compiling happens once
        wall = max(result.wall - progress.compile_seconds(run_only=True), 1e-9)
        note = f"; compiling kernels {compiled:.3g} s (first run only)" if compiled > 0.05 else ""
        click.echo(
            f"done      {result.steps} steps in {wall:.3g} s "
            f"({result.steps / wall:.3g} steps/s), {result.frames} frames{note}"
        )
        click.echo(
            f"energy    kinetic {f.kinetic:.6g}, internal {f.internal:.6g}, "
            f"external {f.external:.6g}, total {f.total:.6g}"
        )
        reaction = case_summary.reaction_totals(f)
        if reaction is not None:
            force, moment = reaction
            click.echo(
                f"reaction  at the last frame: force {case_summary.vector_text(force)}, moment "
                f"about the origin {case_summary.vector_text(moment)}"
            )
        click.echo(f"results   {result.path}" + (f"\nparaview  {result.pvd}" if result.pvd else ""))


def restart_text(h5, state) -> str:
    """The summary's restart line: where the run goes on from, and with which step."""
    from rodsim.sequence import restart_time

    where = f"step {state.step + 1}, " if state.step else ""
    unit = "load" if state.kind == "equilibrium" else "t ="
    if state.kind == "equilibrium":
        step = f"load step {state.count}"
    elif "control" in state.arrays:
        step = f"adaptive steps, a frame every {state.dt:.6g} (stored)"
    else:
        step = f"dt {state.dt:.6g}, a frame every {state.every} steps (stored)"
    return (
        f"continuing {h5} from frame {state.frame} ({where}{unit} "
        f"{restart_time(state):.6g}), {step}"
    )


@click.command()
@click.argument("case", type=click.Path(dir_okay=False))
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=_SET_HELP)
@click.option("--max-memory", type=Size(), default=None, help=_MEMORY_HELP)
@handle_errors
def check(case, overrides, max_memory):
    """Validate CASE and print the model summary, stable step and the estimates of memory,
    results size and run time; never integrates."""
    from rodsim import api

    with _OwnLines(None, summary=True).on_log():
        text = api.check(case, overrides, max_memory=max_memory)
    click.echo(text)
    click.echo("ok")


@click.command()
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (default: stdout)."
)
@handle_errors
def schema(output):
    """Write the case file's JSON Schema (draft 2020-12), for editors that complete and check
    YAML (docs/units.md, "Editors")."""
    from rodsim.case import json_schema
    from rodsim.post.replace_file import write_whole
    from rodsim.results import guard as output_guard

    text = json_schema.text()
    if output:
        write_whole(output_guard.check(output, "schema"), [text])
        click.echo(f"wrote {output}", err=True)
    else:
        click.echo(text, nl=False)


@click.command()
@click.argument("cases", nargs=-1, type=click.Path(dir_okay=False))
@handle_errors
def warmup(cases):
    """Compile the kernels now, not at the first run: those the CASES use, or (none given) the
    common kinds of model: rods explicit, SE3, on all cores, implicit and in equilibrium, rods
    on elastic supports, plates. For container images and cluster workers."""
    from rodsim import kernel_cache
    from rodsim import warmup as warming

    click.echo(f"kernel cache {kernel_cache.active_dir()}")

    def report(name, seconds, kernels):
        what = f"compiled {kernels} kernels in {seconds:.3g} s" if kernels else "already compiled"
        click.echo(f"  {name:<20} {what}")

    total = warming.warm(list(cases), report)
    click.echo(f"done: {total.kernels} kernels compiled in {total.seconds:.3g} s")
