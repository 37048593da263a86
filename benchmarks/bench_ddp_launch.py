"""Launch + N steps of the DDP example under several launchers, side by side.

Each launcher starts the same ``course/ddp/train.py`` with ``--ntasks`` gloo ranks
on this host; one run = wall clock from starting the launcher to its exit
(rendezvous, ``import torch`` in every rank, the steps, teardown). Runs are
interleaved (bare, torchrun, bare, torchrun, ...) so a load change on the shared
machine hits every launcher alike; each run gets a fresh working directory (no
checkpoint to resume from) and a fresh port. The table shows the median, min and
max per launcher and the ratio of medians against ``torchrun`` and ``bare``; every
run must exit 0 and all launchers must end with the same parameter digest.

Usage::

    python benchmarks/bench_ddp_launch.py                    # 4 ranks, 20 steps, 3 runs each
    python benchmarks/bench_ddp_launch.py --repeats 5 --ntasks 2
    python benchmarks/bench_ddp_launch.py --only bare --only srun
    python benchmarks/bench_ddp_launch.py \\
        --launcher 'srun2=python -m minislurm srun -N2 -n {ntasks} {train}'

The ``srun`` column is minislurm's own ``srun -N1 -n N`` as typed (``bin/srun``; a
job allocation and step per run, like ``srun`` outside ``sbatch``; ``srun-m`` is the
same through ``python -m minislurm srun``) against a local cluster
(``python -m minislurm cluster up``) that the benchmark starts in a temporary
``$MINISLURM_STATE_DIR`` with a small slurm.conf of its own (:data:`SRUN_CONF`)
and brings down at the end; its ``MASTER_PORT`` comes from the job id minislurm
assigns (``FirstJobId`` is chosen so that the ports are free).

Measured on the shared 2-core machine (2026-12-03, other sessions busy: load 4-8,
``import torch`` alone 1.9-3.7 s instead of ~1 s), 4 ranks, 20 steps, medians:
5 runs each of bare, torchrun, srun: 12.1 / 11.0 / 10.2 s -- srun 0.93x torchrun,
0.84x bare; an earlier run (5 each, srun-m too): 20.2 / 13.4 / 9.8 / 9.6 s (srun 0.73x
torchrun, 0.48x bare); 3 each with bare-sessions: srun 0.69x torchrun, 0.93x
bare-sessions. Under that load the spread within one launcher (min to max: 7.7-14.8 s
for bare) is larger than the differences between launchers, and the bare launcher
(all ranks in one session, hence one autogroup) suffers most; on a quiet machine
commit bc61657 measured srun 1.01x bare and 0.80x torchrun.  Quiet machine again
(2026-12-03 20:55, load < 1, ``import torch`` 1.2-1.4 s): 5 runs each, bare 5.52 s,
torchrun 6.42 s, srun 5.51 s, srun-m 5.37 s (srun 0.86x torchrun, 1.00x bare); 7 runs
each, bare 5.34 s, torchrun 6.28 s, srun 5.44 s (0.87x torchrun, 1.02x bare).  So srun
costs what the bare launcher costs; against torchrun it lands where bare does, which
on a quiet machine is 0.85-0.86x rather than the ~0.8x the target was set from.
2026-12-04, 9 runs each on a quiet machine (load < 0.7 at the start, ``import torch``
2.0 s): bare 6.17 s, torchrun 7.17 s, srun 6.12 s -- srun 0.85x torchrun, 0.99x bare
(both targets met); the same day beside other work: 0.81x / 1.03x (5 runs), 0.82x /
1.07x (7), 0.86x / 1.09x (9).  srun's own cost, timed directly with 4 tasks of
``python -S -c pass``: 0.12-0.17 s against 0.07-0.10 s for the bare launcher (about
60 ms, 1 % of a run); a standalone ``srun -N1`` on a local node starts the tasks as its
own children, as the bare launcher does, so what remains between them is noise.
2026-12-04 again, quiet machine (load < 0.3 at each start), medians: 9 runs each with
bare-sessions, srun 0.84x torchrun / 0.98x bare; 15 runs each, 0.82x / 1.00x; after the
day's srun changes (step waiting, abort port, signal handling) 9 runs each twice, 0.87x /
1.01x and 0.81x / 0.96x.  The bare launcher itself measured 0.81-0.86x torchrun in these
runs: srun stays within the bare launcher's noise, and meets <= 0.85x torchrun exactly
when the bare launcher does.  2026-12-04, a later session (machine shared,
load 0.9, ``import torch`` 2.3 s), after the node-failure and step-time-limit work on
srun's message port: 9 runs each, bare 6.73 s, torchrun 8.70 s, srun 6.55 s -- srun
0.75x torchrun, 0.97x bare.

Another launcher is one ``--launcher NAME=TEMPLATE`` (or one entry in
:data:`LAUNCHERS`): the template is split like a shell command line after
substituting ``{python}`` (this interpreter), ``{ntasks}``, ``{job_id}`` (a fresh
id whose ``MASTER_PORT`` is free), ``{port}`` (that port), ``{script}`` (the path
of train.py) and ``{train}`` (the whole training command, quoted).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.ddp.logfmt import parse_records  # noqa: E402
from course.ddp.wiring import master_port  # noqa: E402

SCRIPT = REPO / "course" / "ddp" / "train.py"


@dataclass(frozen=True, slots=True)
class Spec:
    """What one run needs to know to build its command line."""

    python: str
    ntasks: int
    job_id: int
    port: int
    train_args: tuple[str, ...]

    @property
    def train(self) -> list[str]:
        """The training command every task runs."""
        return [self.python, str(SCRIPT), *self.train_args]


Builder = Callable[[Spec], list[str]]


def bare(spec: Spec) -> list[str]:
    """``course.ddp.launch_bare``: N processes with srun's SLURM_* variables."""
    return [spec.python, "-m", "course.ddp.launch_bare", "-n", str(spec.ntasks),
            "--job-id", str(spec.job_id), "-K", "--", *spec.train]


def bare_sessions(spec: Spec) -> list[str]:
    """The bare launcher with one session per task, as torchrun starts its workers:
    under ``sched_autogroup`` and a busy machine that alone changes the CPU share."""
    return [*bare(spec)[:-len(spec.train) - 1], "--session-per-task", "--", *spec.train]


def torchrun(spec: Spec) -> list[str]:
    """``torchrun --nproc_per_node=N`` (its agent is one more process)."""
    return [spec.python, "-m", "torch.distributed.run", f"--nproc_per_node={spec.ntasks}",
            f"--master_port={spec.port}", *spec.train[1:]]  # torchrun runs the script itself


def minislurm_srun(spec: Spec) -> list[str]:
    """minislurm's ``srun -N1 -n N`` as a learner types it (``bin/srun``, which starts
    Python with ``-S``): one allocation and one step per run on the benchmark's local
    cluster (:func:`local_cluster`)."""
    return [str(REPO / "bin" / "srun"), "-N1", "-n", str(spec.ntasks), *spec.train]


def minislurm_srun_module(spec: Spec) -> list[str]:
    """The same through ``python -m minislurm srun`` (site-packages imported first)."""
    return [spec.python, "-m", "minislurm", "srun", "-N1", "-n", str(spec.ntasks), *spec.train]


#: name -> command builder; ``--launcher`` adds more.
LAUNCHERS: dict[str, Builder] = {"bare": bare, "torchrun": torchrun,
                                 "bare-sessions": bare_sessions, "srun": minislurm_srun,
                                 "srun-m": minislurm_srun_module}
#: Launchers that need the local cluster (its environment is added to their runs).
NEEDS_CLUSTER = frozenset({"srun", "srun-m"})

#: The local cluster's slurm.conf: one partition of two nodes on this host
#: (``NodeAddr=127.0.0.1``: rank 0's MASTER_ADDR), ``{cpus}`` CPUs each.
SRUN_CONF = """\
ClusterName=bench
SlurmctldHost=localhost
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
KillWait=5
FirstJobId={first_job_id}
NodeName=b[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory}
PartitionName=bench Nodes=b[1-2] Default=YES MaxTime=01:00:00 State=UP
"""


def template_launcher(template: str) -> Builder:
    """A builder from a ``--launcher`` template (see the module docstring)."""

    def build(spec: Spec) -> list[str]:
        text = template.format(python=shlex.quote(spec.python), ntasks=spec.ntasks,
                               job_id=spec.job_id, port=spec.port,
                               script=shlex.quote(str(SCRIPT)), train=shlex.join(spec.train))
        return shlex.split(text)

    return build


def _port_free(job_id: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("", master_port(job_id)))
        except OSError:
            return False
    return True


def fresh_job_id(run: int = 1) -> int:
    """A random job id whose ``MASTER_PORT`` can be bound now (with ``run`` > 1: the
    first of ``run`` consecutive such ids, a ``FirstJobId`` for the local cluster)."""
    for _ in range(200):
        job_id = random.randrange(100_000 if run > 1 else 1, 10**6)
        if all(_port_free(job_id + k) for k in range(run)):
            return job_id
    raise OSError("no free port in the MASTER_PORT range")


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@contextmanager
def local_cluster(ntasks: int, runs: int) -> Iterator[dict[str, str]]:
    """``python -m minislurm cluster up`` in a temporary ``$MINISLURM_STATE_DIR``
    (``cluster down`` on exit, also after an error); yields the environment
    (``MINISLURM_STATE_DIR``, ``SLURM_CONF``) minislurm's commands need."""
    with tempfile.TemporaryDirectory(prefix="bench-ddp-cluster-") as root:
        conf = Path(root) / "slurm.conf"
        cpus = max(4, ntasks)
        conf.write_text(SRUN_CONF.format(first_job_id=fresh_job_id(runs + 1), cpus=cpus,
                                         memory=cpus * 1000))
        env = {"MINISLURM_STATE_DIR": str(Path(root) / "state"), "SLURM_CONF": str(conf)}
        full = {**{k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}, **env}
        cli = [sys.executable, "-m", "minislurm", "cluster"]
        up = subprocess.run([*cli, "up", "--conf", str(conf)], env=full, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
        if up.returncode != 0:
            raise RuntimeError(f"minislurm cluster up failed: {up.stdout}{up.stderr}")
        pid_file = Path(env["MINISLURM_STATE_DIR"]) / "slurmctld.pid"
        pid = int(pid_file.read_text()) if pid_file.exists() else None
        try:
            yield env
        finally:
            if pid is not None and not _running(pid):  # say why the srun runs failed
                log = Path(env["MINISLURM_STATE_DIR"]) / "slurmctld.log"
                tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
                print("the benchmark's slurmctld ended early; its log ends:\n" + "\n".join(tail),
                      file=sys.stderr, flush=True)
            subprocess.run([*cli, "down"], env=full, capture_output=True, timeout=60,
                           stdin=subprocess.DEVNULL, check=False)
            # `cluster down` returns once the socket is gone; the daemon may still be
            # exiting (writing its log) for a moment: wait before removing its folder
            deadline = time.monotonic() + 10
            while pid is not None and _running(pid) and time.monotonic() < deadline:
                time.sleep(0.05)


@dataclass(frozen=True, slots=True)
class Result:
    """One run: launcher, seconds, exit code, final digest (or '')."""

    launcher: str
    seconds: float
    returncode: int
    digest: str
    phases: tuple[tuple[str, float], ...] = ()  # rank 0's "timing" records


def run_once(name: str, build: Builder, args: argparse.Namespace,
             extra_env: Mapping[str, str] | None = None) -> Result:
    """Run launcher ``name`` once in a fresh directory (``extra_env`` added to its
    environment); kill it past ``--timeout``."""
    job_id = fresh_job_id()
    spec = Spec(sys.executable, args.ntasks, job_id, master_port(job_id),
                ("--steps", str(args.steps), "--checkpoint-every", str(args.steps + 1),
                 "--timing"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "COURSE_DDP_"))}
    env.update({"OMP_NUM_THREADS": "1", **(extra_env or {})})
    with tempfile.TemporaryDirectory(prefix=f"bench-ddp-{name}-") as work:
        start = time.perf_counter()
        proc = subprocess.Popen(build(spec), cwd=work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
        seconds = time.perf_counter() - start
    records = parse_records(out.splitlines())
    finals = [fields for kind, fields in records if kind == "final"]
    phases = tuple((f["phase"], float(f["age"])) for kind, f in records if kind == "timing")
    if proc.returncode != 0 or not finals:
        print(f"{name}: exit {proc.returncode}\n{err[-2000:]}", file=sys.stderr)
    return Result(name, seconds, proc.returncode, finals[0]["sha256"] if finals else "", phases)


def import_torch_seconds() -> float:
    """Wall clock of ``python -c 'import torch'`` alone (one process), for scale."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def table(results: list[Result], names: list[str]) -> list[dict[str, object]]:
    """One row per launcher: median/min/max seconds and ratios of medians."""
    medians = {n: statistics.median(r.seconds for r in results if r.launcher == n) for n in names}
    rows: list[dict[str, object]] = []
    for name in names:
        times = [r.seconds for r in results if r.launcher == name]
        row: dict[str, object] = {"launcher": name, "median_s": medians[name],
                                  "min_s": min(times), "max_s": max(times), "runs": len(times)}
        # rank 0's phases: process start -> imports done, init_process_group -> DDP built
        ages = [dict(r.phases) for r in results if r.launcher == name and r.phases]
        if ages and all({"imports", "init_process_group", "ddp"} <= a.keys() for a in ages):
            row["imports_s"] = statistics.median(a["imports"] for a in ages)
            row["ddp_ctor_s"] = statistics.median(a["ddp"] - a["init_process_group"]
                                                  for a in ages)
        for base in ("torchrun", "bare", "bare-sessions"):
            if base in medians:
                row[f"vs_{base}"] = medians[name] / medians[base]
        rows.append(row)
    return rows


def _cell(row: dict[str, object], column: str) -> str:
    """One right-aligned table cell (at least 11 wide, the column name's width)."""
    width = max(11, len(column))
    value = row.get(column, "-")
    return f"{value:>{width}.2f}" if isinstance(value, float) else f"{value!s:>{width}}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (``--json`` for machine-readable rows)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ntasks", type=int, default=4)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    p.add_argument("--launcher", action="append", default=[], metavar="NAME=TEMPLATE")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="run only these launchers (repeatable)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    launchers = dict(LAUNCHERS)
    for item in args.launcher:
        name, sep, template = item.partition("=")
        if not sep or not name:
            p.error(f"--launcher wants NAME=TEMPLATE, got {item!r}")
        launchers[name] = template_launcher(template)
    names = args.only or list(launchers)
    unknown = [n for n in names if n not in launchers]
    if unknown:
        p.error(f"unknown launcher(s) {unknown}; known: {sorted(launchers)}")

    torch_import = import_torch_seconds()
    results = []
    with contextlib.ExitStack() as stack:
        cluster_env: dict[str, str] = {}
        if NEEDS_CLUSTER & set(names):
            cluster_env = stack.enter_context(local_cluster(args.ntasks, args.repeats))
        for repeat in range(args.repeats):
            order = names[repeat % len(names):] + names[: repeat % len(names)]
            for name in order:
                extra = cluster_env if name in NEEDS_CLUSTER else None
                result = run_once(name, launchers[name], args, extra)
                print(f"  run {repeat + 1}/{args.repeats} {name:<13} {result.seconds:7.2f} s "
                      f"rc={result.returncode}", file=sys.stderr, flush=True)
                results.append(result)
    rows = table(results, names)
    failed = [r for r in results if r.returncode != 0 or not r.digest]
    digests = {r.digest for r in results if r.digest}
    if args.json:
        print(json.dumps({"ntasks": args.ntasks, "steps": args.steps, "rows": rows,
                          "import_torch_s": torch_import, "same_digest": len(digests) == 1,
                          "failed_runs": len(failed)}, indent=2))
    else:
        print(f"launch + {args.steps} steps, {args.ntasks} gloo ranks, {args.repeats} runs each "
              f"(cores: {os.cpu_count()}; `import torch` alone: {torch_import:.2f} s)")
        header = ["launcher", "median_s", "min_s", "max_s", "runs", "vs_torchrun", "vs_bare",
                  "vs_bare-sessions", "imports_s", "ddp_ctor_s"]
        print(f"{header[0]:<14}" + "  ".join(f"{h:>11}" for h in header[1:]))
        for row in rows:
            print(f"{row['launcher']!s:<14}" + "  ".join(_cell(row, h) for h in header[1:]))
        print(f"failed runs: {len(failed)}; same final parameters across all runs: "
              f"{not failed and len(digests) == 1}")
    return 1 if failed or len(digests) != 1 else 0


if __name__ == "__main__":
    sys.exit(main())
