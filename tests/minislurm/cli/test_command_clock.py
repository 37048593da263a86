"""A command's "now" is its `Context`'s clock: the simulated one in a notebook's
`Cluster`, the wall clock in a terminal.

Slurm's clients read ``time(NULL)`` for ``--begin=now+60`` (parse_time.c); in an
embedded cluster that time is the simulation's.  Before the Context had a clock,
``Cluster().run("sbatch --begin=now+60 ...")`` took the wall clock and the job
pended about 333 simulated days.
"""

from __future__ import annotations

import time

from minislurm.cli import salloc, sbatch, srun
from minislurm.cli.common import Context
from minislurm.sim import Cluster


def _job_id(stdout: str) -> int:
    return int(stdout.split()[-1])


def test_sbatch_begin_now_plus_60_starts_60_simulated_seconds_later() -> None:
    c = Cluster()
    c.advance(1000)
    submitted = c.now
    r = c.run("sbatch --begin=now+60 --wrap 'sleep 1'")
    assert r.returncode == 0, r.stderr
    rec = c.wait_job(_job_id(r.stdout))
    assert (rec.submit_time, rec.start_time) == (submitted, submitted + 60)


def test_scontrol_update_start_time_is_on_the_simulated_clock() -> None:
    c = Cluster()
    job = _job_id(c.run("sbatch --begin=now+5000 --wrap 'sleep 1'").stdout)
    c.advance(100)
    updated = c.now
    r = c.run(f"scontrol update JobId={job} StartTime=now+120")
    assert (r.returncode, r.stderr) == (0, "")
    assert c.wait_job(job).start_time == updated + 120


def test_context_clock_defaults_to_the_wall_clock() -> None:
    before = int(time.time())
    now = Context().now()
    assert before <= now <= int(time.time())


def test_srun_and_salloc_parse_begin_with_the_context_clock() -> None:
    ctx = Context(clock=lambda: 1_000_000.0)
    s = srun.parse_invocation(["--begin=now+60", "true"], ctx)
    a = salloc.parse_invocation(["--begin=now+60", "true"], ctx)
    b = sbatch.parse_invocation(["--begin=now+60", "--wrap", "true"], ctx)
    assert not isinstance(s, int) and not isinstance(a, int) and not isinstance(b, int)
    assert s.options.begin == a.options.begin == b.options.begin == 1_000_060
