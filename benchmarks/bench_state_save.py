"""Benchmark of the local daemon's state save (StateSaveLocation) and restart.

For a controller holding N jobs (the daemon's jobs carry a script, the submit
environment and options, like ``sbatch`` sends them), prints the time of one dump +
save, of one load + restore, and the size of ``job_state`` / ``accounting``; then the
latency of a batch job on a running local daemon (sbatch -> first line of the script,
through its step daemon) and the time of ``cluster up`` with those jobs in the state.

    .venv/bin/python benchmarks/bench_state_save.py [--jobs 100 1000]

The daemon saves before answering each ``sbatch``/``scancel``/``scontrol`` and before
launching, so the dump time is what every submission pays on top.

Measured on the 2-core machine (2026-12-02): 100 jobs dump 12 ms + write 13 ms
(job_state 0.27 MB); 1,000 jobs dump 103 ms + write 64 ms (2.5 MB), restore 140 ms.
2026-12-03, after unchanged jobs keep their JSON text between saves: 1,000 jobs dump
29 ms + write 25 ms, restore 116 ms; sbatch -> script running 85-121 ms through the
``sbatch`` command (a spare step daemon waits ready); ``cluster up`` 0.48 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import simpy

from minislurm.conf import parse_config
from minislurm.ctld import Controller
from minislurm.ctld.state_files import StateFiles
from minislurm.ctld.state_save import dump_state, load_state
from minislurm.options import JobOptions
from minislurm.slurmd.process_runner import ProcessBody

REPO = Path(__file__).resolve().parent.parent
CONF = """ClusterName=bench
SlurmctldHost=localhost
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
NodeName=n[1-16] CPUs=8 RealMemory=32000
PartitionName=debug Nodes=n[1-16] Default=YES MaxTime=UNLIMITED State=UP
"""
SCRIPT = "#!/bin/bash\n#SBATCH -t 10\n" + "echo step $i\n" * 40


def controller_with(n: int) -> Controller:
    ctl = Controller(parse_config(CONF, "slurm.conf"), simpy.Environment())
    env = dict(os.environ)
    for i in range(n):
        opts = JobOptions(time_limit=10 + i % 50, time_limit_set=True, ntasks=1 + i % 4)
        body = ProcessBody(run_time=60 + i % 300, options=opts, submit_env=env,
                           submit_dir="/tmp")
        ctl.submit(opts, SCRIPT, name=f"job{i}", body=body)
        if i % 50 == 0:
            ctl.run_for(30)
    ctl.run_for(120)
    return ctl


def bench_files(n: int) -> None:
    ctl = controller_with(n)
    with tempfile.TemporaryDirectory() as tmp:
        files = StateFiles(tmp)
        cache: dict[int, object] = {}
        dump_state(ctl, cache=cache)  # the daemon keeps this cache between saves
        t0 = time.perf_counter()
        parts = dump_state(ctl, cache=cache)
        t1 = time.perf_counter()
        files.save(parts)
        t2 = time.perf_counter()
        loaded = StateFiles(tmp).load()
        fresh = Controller(parse_config(CONF, "slurm.conf"),
                           simpy.Environment(initial_time=ctl.env.now))
        t3 = time.perf_counter()
        load_state(fresh, loaded.parts)
        t4 = time.perf_counter()
        size = {p: (Path(tmp) / p).stat().st_size for p in ("job_state", "accounting")}
    states = {j.state.value for j in ctl.jobs()}
    print(f"{n:6d} jobs ({', '.join(sorted(states))}): "
          f"dump (ended jobs cached) {1000 * (t1 - t0):7.1f} ms, "
          f"write {1000 * (t2 - t1):6.1f} ms, read {1000 * (t3 - t2):6.1f} ms, "
          f"restore {1000 * (t4 - t3):7.1f} ms; job_state {size['job_state'] / 1e6:.2f} MB, "
          f"accounting {size['accounting'] / 1e6:.2f} MB")


def bench_daemon(jobs: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-state-"))
    env = {**os.environ, "MINISLURM_STATE_DIR": str(root / "state"),
           "PATH": f"{REPO / 'bin'}:{os.environ.get('PATH', '')}"}
    (root / "slurm.conf").write_text(CONF)
    env["SLURM_CONF"] = str(root / "slurm.conf")
    py = [sys.executable, "-m", "minislurm"]

    def run(*argv: str) -> str:
        return subprocess.run(list(argv), env=env, cwd=root, capture_output=True, text=True,
                              timeout=120, check=True).stdout

    try:
        run(*py, "cluster", "up")
        latencies = []
        for k in range(5):
            out = root / f"lat{k}.out"
            t0 = time.time()
            run("sbatch", "-o", str(out), "--wrap", "date +%s.%N")
            while not (out.exists() and out.read_text().strip()):
                time.sleep(0.01)
            latencies.append(float(out.read_text()) - t0)
        t0 = time.perf_counter()
        for _ in range(jobs):
            run("sbatch", "--hold", "--wrap", "true")
        per_sbatch = (time.perf_counter() - t0) / jobs
        run(*py, "cluster", "down")
        t0 = time.perf_counter()
        run(*py, "cluster", "up")
        up = time.perf_counter() - t0
        run(*py, "cluster", "down")
        print(f"daemon: sbatch -> script running {1000 * min(latencies):.0f}-"
              f"{1000 * max(latencies):.0f} ms (via slurmstepd); sbatch round trip with "
              f"{jobs} held jobs {1000 * per_sbatch:.0f} ms; cluster up with them {up:.2f} s")
    finally:
        subprocess.run([*py, "cluster", "down"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--daemon-jobs", type=int, default=50)
    args = parser.parse_args()
    for n in args.jobs:
        bench_files(n)
    bench_daemon(args.daemon_jobs)


if __name__ == "__main__":
    main()
