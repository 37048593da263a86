"""Benchmark of the local daemon's overhead: submit-to-start latency and squeue at 10k jobs.

Issue #4's targets: a job on an idle cluster starts <= 100 ms after it is submitted;
``squeue`` answers in <= 100 ms with 10,000 jobs in the queue. Each figure is shown
two ways, side by side in one run:

* **controller** -- what slurmctld costs: the request sent from this (already warm)
  Python process over the daemon's socket (`minislurm.cli.transport.forward`, exactly
  what the command does after its start), to the job's first line / squeue's answer;
* **command** -- what a learner typing the command waits: a fresh ``sbatch``/``squeue``
  process (Python start + imports + the same request).

The 10,000 jobs are held pending jobs (``sbatch -H``) written into the state the daemon
loads (StateSaveLocation) -- submitting them one by one through the daemon would only
time the submission path N times; ``sbatch`` on that full queue is timed too (the daemon
saves its state before answering, so this is what every submission pays at that size).

    .venv/bin/python benchmarks/bench_daemon.py [--queue 10000] [--repeat 15]

Measured on the 2-core machine (2026-12-03, 15 repeats, medians): submit -> script
running 63 ms (controller; min 41, max 95) and 101 ms through the ``sbatch`` command;
with 10,000 jobs queued ``squeue`` 79 ms (controller; the command 184 ms),
``squeue -u -t PD`` 58 ms, ``sbatch -H`` 273 ms (it saves the whole state first:
was 1.9 s before unchanged jobs kept their JSON), ``cluster up`` with them 4.6 s.
Before the spare step daemon: 104 ms / 400 ms; before the snapshot and line caches,
squeue at 2,000 jobs took 74 ms (about 370 ms at 10,000).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import simpy

from minislurm.cli.common import Context
from minislurm.cli.transport import forward
from minislurm.config import parse_config
from minislurm.ctld import Controller
from minislurm.ctld.state_files import StateFiles
from minislurm.ctld.state_save import dump_state
from minislurm.options.model import JobOptions
from minislurm.slurmd.process_runner import ProcessBody

REPO = Path(__file__).resolve().parent.parent
CONF = """ClusterName=bench
SlurmctldHost=localhost
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
NodeName=n[1-4] CPUs=8 RealMemory=32000
PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED State=UP
"""
SCRIPT = "#!/bin/bash\n#SBATCH -t 10\nsrun python train.py\n"


def held_queue(n: int, env: dict[str, str]) -> Controller:
    """A controller holding ``n`` held pending jobs (script, environment, options)."""
    ctl = Controller(parse_config(CONF, "slurm.conf"), simpy.Environment())
    for i in range(n):
        opts = JobOptions(time_limit=10 + i % 50, time_limit_set=True, ntasks=1 + i % 4,
                          hold=True)
        body = ProcessBody(run_time=None, options=opts, submit_env=env, submit_dir="/tmp")
        ctl.submit(opts, SCRIPT, name=f"job{i}", user="bench", body=body)
    ctl.run_for(1)
    return ctl


class Daemon:
    """``python -m minislurm cluster up`` in a temporary folder, and its socket."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "slurm.conf").write_text(CONF)
        self.env = {**os.environ, "MINISLURM_STATE_DIR": str(root / "state"),
                    "SLURM_CONF": str(root / "slurm.conf"),
                    "PATH": f"{REPO / 'bin'}:{os.environ.get('PATH', '')}"}
        self.sock = root / "state" / "slurmctld.sock"

    def cli(self, *argv: str) -> str:
        return subprocess.run(list(argv), env=self.env, cwd=self.root, capture_output=True,
                              text=True, timeout=300, check=True, stdin=subprocess.DEVNULL
                              ).stdout

    def up(self) -> None:
        self.cli(sys.executable, "-m", "minislurm", "cluster", "up")

    def down(self) -> None:
        subprocess.run([sys.executable, "-m", "minislurm", "cluster", "down"], env=self.env,
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)

    def request(self, name: str, *argv: str) -> str:
        """The command's request from this process (no process start, no imports)."""
        out = io.StringIO()
        ctx = Context.from_process()
        ctx.stdout, ctx.stderr, ctx.env, ctx.cwd = out, io.StringIO(), self.env, str(self.root)
        answer = forward(name, list(argv), ctx, self.sock)
        if int(answer.get("rc", 0)) != 0:
            raise RuntimeError(f"{name} {argv}: {answer.get('stderr')}")
        return str(answer.get("stdout", ""))


def _wait_stamp(path: Path, limit: float = 30.0) -> float:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists():
            text = path.read_text().strip()
            if text:
                return float(text)
        time.sleep(0.002)
    raise RuntimeError(f"the job did not start within {limit} s ({path})")


def latency(d: Daemon, repeat: int) -> tuple[list[float], list[float], list[float]]:
    """Seconds from submission to the script's first line (controller, command), and
    of the sbatch request alone (its answer: ``Submitted batch job N``)."""
    ctl, cmd, answer = [], [], []
    for k in range(repeat):
        for how, acc in (("request", ctl), ("command", cmd)):
            out = d.root / f"lat-{how}-{k}.out"
            argv = ["-o", str(out), "--wrap", "date +%s.%N"]
            t0 = time.time()
            if how == "request":
                d.request("sbatch", *argv)
                answer.append(time.time() - t0)
            else:
                d.cli("sbatch", *argv)
            acc.append(_wait_stamp(out) - t0)
    return ctl, cmd, answer


def timed(fn: object, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return times


def show(label: str, xs: list[float], target_ms: float | None = None) -> None:
    med = statistics.median(xs) * 1000
    verdict = "" if target_ms is None else (
        f"  (target <= {target_ms:.0f} ms: {'met' if med <= target_ms else 'NOT met'})")
    print(f"{label:52s} median {med:7.1f} ms  min {min(xs) * 1000:7.1f}  "
          f"max {max(xs) * 1000:7.1f}{verdict}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-daemon-"))
    d = Daemon(root)
    try:
        d.up()
        d.request("sinfo")  # warm the connection path
        ctl, cmd, answer = latency(d, args.repeat)
        show("idle cluster, submit -> script running (controller)", ctl, 100)
        show("idle cluster, sbatch request answered (controller)", answer)
        show("idle cluster, submit -> script running (sbatch cmd)", cmd)
        show("idle cluster, squeue (controller)", timed(lambda: d.request("squeue"),
                                                         args.repeat))
        d.down()

        t0 = time.perf_counter()
        queue = held_queue(args.queue, d.env)
        StateFiles(root / "state").save(dump_state(queue))
        print(f"built and saved a queue of {args.queue} held jobs in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        t0 = time.perf_counter()
        d.up()
        print(f"cluster up with them: {time.perf_counter() - t0:.2f} s", flush=True)
        lines = d.request("squeue", "-h").count("\n")
        assert lines == args.queue, f"squeue shows {lines} jobs, expected {args.queue}"
        show(f"{args.queue} jobs, squeue (controller)",
             timed(lambda: d.request("squeue"), args.repeat), 100)
        show(f"{args.queue} jobs, squeue (squeue cmd)",
             timed(lambda: d.cli("squeue"), max(3, args.repeat // 3)))
        show(f"{args.queue} jobs, squeue -u bench -t PD (controller)",
             timed(lambda: d.request("squeue", "-u", "bench", "-t", "PD"), args.repeat))
        show(f"{args.queue} jobs, sbatch -H (controller, incl. state save)",
             timed(lambda: d.request("sbatch", "-H", "--wrap", "true"), max(3, args.repeat // 3)))
    finally:
        d.down()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
