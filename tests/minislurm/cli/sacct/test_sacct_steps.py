"""``sacct -j JOB.STEP``: one step's line, replayed on minislurm's local cluster and on
real Slurm 22.05.8 (the same jobs and commands, the outputs compared).

Measured first on 22.05.8 (2026-12-04): ``-j 5.0`` prints only the step's line (no job
line), ``5.batch`` the batch step's; a step that does not exist (``5.7``, ``5.extern``
without ``PrologFlags=contain``) prints nothing; with ``-X`` the job's own line;
``5.0.1`` is read as ``5.0``; ``5.x`` is ``sacct: fatal: Bad step specified: 5``, exit 1;
a step and a whole job mix (``-j 5.1,6``).
"""

from __future__ import annotations

import time

from minicluster import MiniCluster
from realslurm import RealSlurm

COMMANDS = (
    "sacct -j {a}.0",
    "sacct -j {a}.1,{b}",
    "sacct -j {a}.batch -P -o JobID,State",
    "sacct -j {a}.extern -P",
    "sacct -j {a}.7 -P",
    "sacct -X -j {a}.0 -P",
    "sacct -j {a}.x",
    "sacct -j {a}.0.1",
    "sacct -j {b}.0 -n",
    "sacct -j {a}.0 -o JobID,JobName,State,ExitCode,NTasks -P",
)


def _replay(cluster: MiniCluster | RealSlurm) -> list[tuple[str, str, int]]:
    work = cluster.work_dir / "sacct-steps"
    work.mkdir(exist_ok=True)
    (work / "k.sh").write_text("#!/bin/bash\nsrun true\nsrun -n1 false\n")
    a = cluster.run("sbatch --parsable -n2 -o k.out k.sh", cwd=work).stdout.strip()
    b = cluster.run("sbatch --parsable -o /dev/null --wrap true", cwd=work).stdout.strip()
    cluster.wait_job(a)
    cluster.wait_job(b)
    deadline = time.monotonic() + 30  # slurmdbd stores the steps and the jobs' own
    while True:                        # lines (name, partition) a little later
        rows = cluster.run(f"sacct -n -P -j {a},{b} -o JobID,Partition").stdout.split()
        if f"{a}.1|" in rows and f"{a}|debug" in rows and f"{b}|debug" in rows:
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.5)
    if isinstance(cluster, RealSlurm):  # and their ends (State, ExitCode) have come too
        cluster.wait_accounted(a)
        cluster.wait_accounted(b)
    out = []
    for cmd in COMMANDS:
        res = cluster.run(cmd.format(a=a, b=b), cwd=work)
        out.append((cmd, (res.stdout + res.stderr).replace(a, "A").replace(b, "B"), res.rc))
    return out


def test_sacct_selects_steps_like_real_slurm(mini_slurm: MiniCluster,
                                             real_slurm: RealSlurm) -> None:
    mini, real = _replay(mini_slurm), _replay(real_slurm)
    for (cmd, want, want_rc), (_, got, got_rc) in zip(real, mini, strict=True):
        assert (got, got_rc) == (want, want_rc), cmd
