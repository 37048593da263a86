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
        [--baseline TREE]

``--baseline TREE`` measures an earlier checkout beside this one in the same run, the
two interleaved request by request (each tree's daemon on its own copy of the state,
its commands from ``TREE/bin`` with ``PYTHONPATH=TREE``)::

    mkdir /tmp/base && git archive 97c2153 | tar -x -C /tmp/base
    ln -s "$PWD/.venv" /tmp/base/.venv

Measured on the shared 2-core machine (2026-12-03, other sessions busy: load 2-4),
15 repeats, medians, baseline 97c2153 (commands via ``python -m minislurm``, which
imports the options parser, slurm.conf's parser and site-packages first) | now
(``bin/`` runs ``python -S`` and a forwarded command imports only C modules):

* idle, submit -> script running: controller 42 | 58 ms (same daemon code: noise;
  min 15 | 33), through the ``sbatch`` command 247 | 94 ms;
  ``squeue`` command 227 | 47 ms;
* 10,000 jobs queued, ``squeue``: controller 67 | 68 ms, the command 179 | 89 ms
  (the target, <= 100 ms, now met by the command a learner types, not only by the
  controller); ``squeue -u bench -t PD`` 72 | 64 ms; ``sbatch -H`` 159 | 173 ms at the
  controller (it saves the whole state first), 280 | 177 ms as a command; ``cluster up``
  with them 5.4 | 6.3 s.

A second such run: idle ``sbatch`` command 146 | 64 ms, ``squeue`` command 180 | 34 ms;
at 10,000 jobs ``squeue`` controller 59 | 65 ms, command 145 | 92 ms, ``sbatch -H``
command 229 | 152 ms.  2026-12-04, quiet machine, 15 repeats, medians: idle submit ->
script running 15.8 ms (controller) / 27.1 ms (``sbatch`` command), ``squeue`` command
13.0 ms; at 10,000 jobs ``squeue`` 58.4 ms (controller) / 74.9 ms (command), ``sbatch
-H`` 146 / 148 ms: all targets met.

The controller's part of squeue at 10k (~60 ms; ~47 ms when run in-process) is the
records and lines themselves: under cProfile a third goes to ``Job.snapshot`` comparing
each job's ~60 attributes with its cached key, the rest to sorting, filtering and
joining 10,000 records (ctld/ and cli/squeue code, not the transport). Before the
spare step daemon submit -> start was 104 ms / 400 ms; before the snapshot and line
caches, squeue at 2,000 jobs took 74 ms (about 370 ms at 10,000); before unchanged jobs
kept their JSON, sbatch at 10k 1.9 s.
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
from collections.abc import Callable
from pathlib import Path

import simpy

from minislurm.cli.common import Context
from minislurm.cli.transport import forward
from minislurm.conf import parse_config
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
#: Seconds of quiet before each timed submission (an idle cluster, not a burst).
SETTLE = 0.5


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
    """``python -m minislurm cluster up`` of one source tree in a temporary folder.

    ``tree`` is the checkout whose daemon and commands (``tree/bin``) are run; a
    baseline tree other than this one is put first on ``PYTHONPATH`` (its bin/
    wrappers run ``python -m minislurm`` there, or import from their own folder).
    """

    def __init__(self, root: Path, tree: Path = REPO, label: str = "now") -> None:
        self.root, self.tree, self.label = root, tree, label
        root.mkdir(parents=True, exist_ok=True)
        (root / "slurm.conf").write_text(CONF)
        self.env = {**os.environ, "MINISLURM_STATE_DIR": str(root / "state"),
                    "SLURM_CONF": str(root / "slurm.conf"),
                    "PATH": f"{tree / 'bin'}:{os.environ.get('PATH', '')}"}
        if tree != REPO:
            self.env["PYTHONPATH"] = str(tree)
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


def submit_to_start(d: Daemon, how: str, k: int) -> tuple[float, float | None]:
    """Seconds from submission to the script's first line, by request (``how`` =
    "request", also returning the sbatch answer time) or by the ``sbatch`` command."""
    out = d.root / f"lat-{how}-{k}.out"
    argv = ["-o", str(out), "--wrap", "date +%s.%N"]
    time.sleep(SETTLE)  # idle: the previous job's ending and the next spare stepd are done
    t0 = time.time()
    answered = None
    if how == "request":
        d.request("sbatch", *argv)
        answered = time.time() - t0
    else:
        d.cli("sbatch", *argv)
    return _wait_stamp(out) - t0, answered


Rows = dict[str, dict[str, list[float]]]


def _add(rows: Rows, label: str, who: str, seconds: float) -> None:
    rows.setdefault(label, {}).setdefault(who, []).append(seconds)


def _timed(fn: Callable[..., object], *args: str) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def _cell(xs: list[float] | None) -> str:
    if not xs:
        return f"{'-':>24}"
    return (f"{statistics.median(xs) * 1000:7.1f} ({min(xs) * 1000:5.1f}-"
            f"{max(xs) * 1000:6.1f}) ms")


def show(rows: Rows, whos: list[str], targets: dict[str, float]) -> None:
    """One line per measurement: median (min-max) per tree, and the target's verdict."""
    print(f"{'':55s}" + "".join(f"{w:>26s}" for w in whos), flush=True)
    for label, by in rows.items():
        line = f"{label:55s}" + "".join(f"{_cell(by.get(w)):>26s}" for w in whos)
        if label in targets:
            med = statistics.median(by[whos[-1]]) * 1000
            line += (f"  target <= {targets[label]:.0f} ms: "
                     f"{'met' if med <= targets[label] else 'NOT met'}")
        print(line, flush=True)


def idle(daemons: list[Daemon], repeat: int, rows: Rows) -> None:
    """Submit-to-start and squeue on an idle cluster, the trees interleaved."""
    for d in daemons:
        d.up()
        d.request("sinfo")  # warm the connection path
    for k in range(repeat):
        for d in daemons:
            ctl, answered = submit_to_start(d, "request", k)
            _add(rows, "idle: submit -> script running (controller)", d.label, ctl)
            _add(rows, "idle: sbatch request answered (controller)", d.label, answered or 0.0)
            cmd, _ = submit_to_start(d, "command", k)
            _add(rows, "idle: submit -> script running (sbatch command)", d.label, cmd)
            _add(rows, "idle: squeue (controller)", d.label, _timed(d.request, "squeue"))
            _add(rows, "idle: squeue (squeue command)", d.label, _timed(d.cli, "squeue"))
    for d in daemons:
        d.down()


def full_queue(daemons: list[Daemon], n: int, repeat: int, rows: Rows) -> None:
    """The same saved queue of ``n`` held jobs loaded by each tree's daemon."""
    t0 = time.perf_counter()
    queue = held_queue(n, daemons[0].env)
    parts = dump_state(queue)
    for d in daemons:
        StateFiles(d.root / "state").save(parts)
    print(f"built and saved a queue of {n} held jobs in {time.perf_counter() - t0:.1f} s",
          flush=True)
    for d in daemons:
        up = _timed(d.up)
        _add(rows, f"{n} jobs: cluster up", d.label, up)
        lines = d.request("squeue", "-h").count("\n")
        assert lines == n, f"{d.label}: squeue shows {lines} jobs, expected {n}"
    for _ in range(repeat):
        for d in daemons:
            _add(rows, f"{n} jobs: squeue (controller)", d.label,
                 _timed(d.request, "squeue"))
            _add(rows, f"{n} jobs: squeue (squeue command)", d.label,
                 _timed(d.cli, "squeue"))
            _add(rows, f"{n} jobs: squeue -u bench -t PD (controller)", d.label,
                 _timed(d.request, "squeue", "-u", "bench", "-t", "PD"))
    for _ in range(max(3, repeat // 3)):
        for d in daemons:
            _add(rows, f"{n} jobs: sbatch -H (controller, incl. state save)", d.label,
                 _timed(d.request, "sbatch", "-H", "--wrap", "true"))
            _add(rows, f"{n} jobs: sbatch -H (sbatch command)", d.label,
                 _timed(d.cli, "sbatch", "-H", "--wrap", "true"))
    for d in daemons:
        d.down()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queue", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--baseline", type=Path, metavar="TREE",
                        help="an earlier checkout (git archive REV | tar -x -C TREE, with "
                             "TREE/.venv linked to this one's) measured beside this one")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-daemon-"))
    daemons = [Daemon(root / "now")]
    if args.baseline is not None:
        daemons.insert(0, Daemon(root / "base", args.baseline.resolve(), "baseline"))
    whos = [d.label for d in daemons]
    rows: Rows = {}
    n = args.queue
    targets = {"idle: submit -> script running (controller)": 100.0,
               "idle: submit -> script running (sbatch command)": 100.0,
               f"{n} jobs: squeue (controller)": 100.0,
               f"{n} jobs: squeue (squeue command)": 100.0}
    try:
        idle(daemons, args.repeat, rows)
        full_queue(daemons, n, args.repeat, rows)
    finally:
        for d in daemons:
            d.down()
        shutil.rmtree(root, ignore_errors=True)
    show(rows, whos, targets)


if __name__ == "__main__":
    main()
