"""A rodsim sweep on a SLURM cluster through dask-jobqueue (docs/sweeps.md, "On a cluster").

Run it on the cluster's login node, in the environment that has rodsim[dask] and
dask-jobqueue (the compute nodes must see the same environment and home folder):

    python docs/examples/slurm_sweep.py sweep.yaml --jobs 16

Each SLURM job is one Dask worker process with one thread: one rodsim run at a time on one
core. The workers share one kernel cache folder (RODSIM_CACHE_DIR), which rodsim fills once
before the fan-out and several processes may write at once. `job_script()` shows what would be
submitted; tests/test_sweep.py checks it without a SLURM installation.
"""

import argparse
import os
import sys


def cluster(cache=None, queue="compute", walltime="02:00:00", host=None):
    """A SLURMCluster of one-core, one-thread rodsim workers (no job is submitted until it is
    scaled); host: the scheduler's address (default: this node's, which the compute nodes
    reach)."""
    from dask_jobqueue import SLURMCluster

    cache = cache or os.path.expanduser("~/.cache/rodsim")
    return SLURMCluster(
        queue=queue,
        cores=1,  # one thread: one run at a time, on one core
        processes=1,
        memory="4GiB",
        walltime=walltime,
        job_cpu=1,
        job_script_prologue=[f"export RODSIM_CACHE_DIR={cache}", "export NUMBA_NUM_THREADS=1"],
        scheduler_options={"host": host} if host else None,
    )


def job_script(cache=None, host=None) -> str:
    """The batch script each SLURM job would run."""
    c = cluster(cache, host=host)
    try:
        return c.job_script()
    finally:
        c.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweep", nargs="?", help="the sweep file")
    parser.add_argument("--jobs", type=int, default=8, help="SLURM jobs (Dask workers)")
    parser.add_argument("--print-script", action="store_true", help="show the job script only")
    args = parser.parse_args(argv)
    if args.print_script or not args.sweep:
        print(job_script())
        return 0
    import rodsim

    c = cluster()
    try:
        c.scale(jobs=args.jobs)
        outcome = rodsim.run_sweep(args.sweep, dask=c.scheduler_address)
    finally:
        c.close()
    print(f"{len(outcome.records)} runs; summary: {outcome.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
