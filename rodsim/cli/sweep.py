"""``rodsim sweep`` (docs/sweeps.md): its options and its progress bar, on rodsim.sweep."""

import click

from rodsim import progress
from rodsim.cli.common import handle_errors


class Bar(progress.Line):
    """One line on a terminal: done / failed / running of total, and the time left; nothing
    where standard error is not a terminal or CI is set (rodsim.progress)."""

    def __call__(self, c: dict) -> None:
        eta = progress.left(c["eta"]) if c["running"] else ""
        self.show(
            f"{progress.bar((c['done'] + c['failed']) / max(1, c['total']))} {c['done']} done, "
            f"{c['failed']} failed, {c['running']} running of {c['total']}{eta}",
            force=not c["running"],
        )


@click.command()
@click.argument("sweep_file", metavar="SWEEP.yaml", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="The sweep's folder (default: the file's output, or <stem>_sweep).")  # fmt: skip
@click.option("--workers", type=int, default=None,
              help="Processes here (default: one per core; 1: in this process).")  # fmt: skip
@click.option("--dask", metavar="local[:N] | tcp://HOST:PORT", default=None,
              help="Run on Dask: a LocalCluster of N workers, or a running scheduler.")  # fmt: skip
@click.option("--retry-failed", is_flag=True, help="Run the runs that failed before again.")
@click.option("--rerun-outdated", is_flag=True,
              help="Run again the runs made by another rodsim version.")  # fmt: skip
@click.option("--check", "dry", is_flag=True, help="Check the sweep file and list its runs.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@handle_errors
def sweep(sweep_file, output, workers, dask, retry_failed, rerun_outdated, dry, quiet):
    """Run a case over a space of parameters; write every run's results and a summary."""
    from rodsim.sweep import runner, spec

    if dry:
        plan = spec.load(sweep_file, output)
        jobs = runner.plan(plan)
        click.echo(f"{len(jobs)} runs of {plan.case_path}, into {plan.output}")
        for run, job in zip(plan.runs, jobs, strict=True):
            said = ", ".join(f"{k} = {v!r}" for k, v in run.values.items())
            click.echo(f"  {run.index:4d}  {job.name}  {said}")
        return
    bar = Bar(not quiet)
    try:
        outcome = runner.run_sweep(sweep_file, output, workers=workers, dask=dask,
                                   retry_failed=retry_failed, rerun_outdated=rerun_outdated,
                                   progress=bar)  # fmt: skip
    finally:
        bar.close()
    failed = [r for r in outcome.records if r.status != "complete"]
    outdated = sum(r.outdated for r in outcome.records)
    click.echo(
        f"{len(outcome.records)} runs: {len(outcome.records) - len(failed)} complete, "
        f"{len(failed)} failed ({outcome.ran} ran now, {sum(r.reused for r in outcome.records)} "
        f"from earlier"
        + (f", {outdated} made by another rodsim version" if outdated else "")
        + f"); kernels compiled in {outcome.compile_seconds:.1f} s"
    )
    for r in failed[:10]:
        click.echo(f"  run {r.index} failed (exit {r.exit_code}): {r.error}")
    if len(failed) > 10:
        click.echo(f"  and {len(failed) - 10} more: see the summary's status and error")
    click.echo(f"wrote {outcome.csv} and {outcome.h5}")
