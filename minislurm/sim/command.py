"""``python -m minislurm simulate``: replay a workload through the controller.

    python -m minislurm simulate --workload FILE.swf --procs 128 --scheduler easy --out jobs.csv
    python -m minislurm simulate --generate 500 --seed 1 --conf slurm.conf --scheduler slurm

A trace (SWF, ``--workload``) or a generated AI-cluster mix (``--generate N --seed S``:
the first N jobs of ``minislurm.sim.workload.generate``) runs on the cluster of ``--conf``
(default: ``$SLURM_CONF``, else the embedded teaching cluster) or on ``--procs N``
single-processor units (see ``minislurm.sim.simulate``: there ``--scheduler easy`` is
textbook EASY, with limits to the second and backfill at the event, where every other
scheduler keeps Slurm's minute limits and ``bf_interval``).  ``--out`` writes one CSV
row per job attempt: ``job_id,workload_id,submit,start,end,wait,procs|nodes,gpus,state``
with times in seconds from the trace's start (SWF's convention; empty when the job
never started).  The metrics of ``minislurm.sim.metrics`` are printed on stdout.

This is not a Slurm command: its options are argparse's.  Every failure (a bad SWF line,
a missing file, a bad slurm.conf) is one ``simulate: error: ...`` line on stderr and a
non-zero exit (2 for usage errors, 1 otherwise), never a traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from minislurm.conf import SlurmConfig, load_config
from minislurm.errors import SlurmError
from minislurm.sim.metrics import format_summary, job_gpus, job_nodes
from minislurm.sim.simulate import SCHEDULERS, SimulationResult, simulate
from minislurm.sim.workload.generator import WorkloadJob, WorkloadSpec, default_kinds, generate
from minislurm.sim.workload.swf import SWFWorkload, read_swf

PROG = "simulate"


class UsageError(Exception):
    """A command-line mistake (exit 2, as argparse)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The options of ``minislurm simulate``."""
    p = _Parser(prog=f"python -m minislurm {PROG}",
                description="Replay a workload (SWF trace or generated mix) on a simulated clock.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workload", metavar="FILE.swf", help="an SWF trace (18 fields per line)")
    src.add_argument("--generate", metavar="N", type=int,
                     help="use the first N jobs of the seeded AI-cluster generator")
    p.add_argument("--seed", type=int, default=0, help="generator seed (with --generate)")
    machine = p.add_mutually_exclusive_group()
    machine.add_argument("--conf", metavar="slurm.conf", help="the cluster (default $SLURM_CONF)")
    machine.add_argument("--procs", metavar="N", type=int,
                         help="N single-processor units; SWF requested time is the limit")
    p.add_argument("--scheduler", choices=SCHEDULERS, default="slurm",
                   help="slurm is Slurm's sched/backfill; easy with --procs is textbook EASY "
                        "(limits to the second, backfill at the event)")
    p.add_argument("--out", metavar="jobs.csv", help="write one CSV row per job")
    p.add_argument("--progress", action="store_true", help="force the progress bar on")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    return p


def generated(n: int, seed: int, config: SlurmConfig | None) -> list[WorkloadJob]:
    """The first ``n`` jobs of the generator, shaped for ``config``'s largest GPU nodes."""
    if n <= 0:
        raise UsageError(f"argument --generate: must be a positive number, not {n}")
    gpus = max((sum(g.count for g in node.gres if g.name == "gpu")
                for node in (config.nodes if config else ())), default=8)  # fmt: skip
    nodes = len(config.nodes) if config else 4
    kinds = default_kinds(max_nodes=max(1, nodes), gpus_per_node=max(1, gpus))
    jobs: list[WorkloadJob] = []
    days = 1.0
    while len(jobs) < n:  # enough days of arrivals for n jobs
        spec = WorkloadSpec(seed=seed, days=days, kinds=kinds)
        jobs = list(itertools.islice(generate(spec), n))
        days *= 2
    return jobs


CSV_FIELDS = ("job_id", "workload_id", "submit", "start", "end", "wait")


def write_csv(result: SimulationResult, out: TextIO, *, procs: bool) -> None:
    """One row per job attempt; times in seconds from ``result.epoch``."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow([*CSV_FIELDS, "procs" if procs else "nodes", "gpus", "state"])
    e = result.epoch
    for j in result.jobs:
        started = j.start_time is not None and j.end_time is not None
        w.writerow([
            j.job_id_str, result.workload_id(j), j.submit_time - e,
            j.start_time - e if started and j.start_time is not None else "",
            j.end_time - e if started and j.end_time is not None else "",
            j.start_time - j.submit_time if started and j.start_time is not None else "",
            job_nodes(j), job_gpus(j), j.state.value,
        ])  # fmt: skip


def csv_text(result: SimulationResult, *, procs: bool) -> str:
    """``write_csv`` as a string."""
    buf = io.StringIO()
    write_csv(result, buf, procs=procs)
    return buf.getvalue()


def _load(args: argparse.Namespace) -> tuple[list[WorkloadJob] | SWFWorkload, SlurmConfig | None]:
    config = None if args.procs is not None else load_config(args.conf)
    if args.procs is not None and args.procs <= 0:
        raise UsageError(f"argument --procs: must be a positive number, not {args.procs}")
    if args.workload is not None:
        return read_swf(args.workload), config
    return generated(args.generate, args.seed, config), config


def run(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    """The command, with its streams (tests pass StringIO)."""
    try:
        args = build_parser().parse_args(list(argv))
        workload, config = _load(args)
        progress = not args.no_progress and (args.progress or stderr.isatty())
        result = simulate(workload, config, scheduler=args.scheduler, procs=args.procs,
                          progress=progress)  # fmt: skip
        if args.out:
            with open(args.out, "w", encoding="utf-8", newline="") as fh:
                write_csv(result, fh, procs=args.procs is not None)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except UsageError as exc:
        stderr.write(f"{PROG}: error: {exc}\n")
        stderr.write(f"Try \"python -m minislurm {PROG} --help\" for more information\n")
        return 2
    except SlurmError as exc:
        stderr.write(f"{PROG}: error: {exc.message}\n")
        return exc.exit_code or 1
    except OSError as exc:
        stderr.write(f"{PROG}: error: {exc.filename or ''}: {exc.strerror}\n")
        return 1
    except ValueError as exc:
        stderr.write(f"{PROG}: error: {exc}\n")
        return 1
    stdout.write(f"scheduler  {result.scheduler}\n")
    stdout.write(format_summary(result.metrics))
    if result.rejected:
        stdout.write(f"rejected  {result.rejected} submissions\n")
    stdout.write(f"simulated  {len(result.jobs)} job records in {result.wall_seconds:.2f} s "
                 f"({result.events_per_second:,.0f} events/s)\n")  # fmt: skip
    if args.out:
        stdout.write(f"wrote  {args.out}\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m minislurm simulate ...``."""
    try:
        return run(sys.argv[1:] if argv is None else argv, sys.stdout, sys.stderr)
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130


__all__ = ["CSV_FIELDS", "build_parser", "csv_text", "generated", "main", "run", "write_csv"]
