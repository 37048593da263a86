"""The real side of differential tests: run a batch script on real Slurm and get
back everything it wrote, in the captures' terms.

Usage in a test (the ``real_slurm`` fixture is in tests/conftest.py)::

    from realslurm.differential import parse_env, run_batch

    SCRIPT = '''#!/bin/bash
    #SBATCH -N2 --ntasks-per-node=2 --gres=gpu:2
    env | grep ^SLURM_ | sort > batch.env
    srun bash -c 'env | grep ^SLURM_ | sort > step.$SLURM_PROCID.env'
    '''

    @pytest.mark.realslurm
    def test_batch_env_like_real_slurm(real_slurm):
        real = run_batch(real_slurm, SCRIPT)          # sbatch --wait job.sh
        assert real.state == "COMPLETED"
        real_env = parse_env(real.files["batch.env"])
        ...  # run the same script on minislurm and compare with real_env

``run_batch`` writes the script as ``job.sh`` into a fresh folder
``<cluster>/work/<folder>``, runs ``sbatch --wait <args> job.sh`` there with
the captures' fixed environment, and returns a :class:`BatchRun`: the job id,
sbatch's output and exit code (``--wait`` returns the job's exit code), the
final JobState, ``scontrol show job`` fields, and every file in the folder
(except job.sh) by name. By default texts are rewritten like the captures
(folder -> ``/srv/slurm-ref/work/<folder>``, SlurmctldPort -> 16817, the job id
-> ``as_job_id``, default 1, as on a fresh cluster; pids, srun ports, times masked),
so that they can be compared with minislurm's outputs for the same job. Job ids
are rewritten only on clusters started with ``first_job_id=JOB_ID_BASE`` (the
``real_slurm`` fixture is); :attr:`BatchRun.job_id` is always the real id.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .harness import RealSlurm, Result
from .normalize import JOB_ID_BASE, to_reference
from .replay import case_dir

_COUNTER = itertools.count(1)


@dataclass(frozen=True, slots=True)
class BatchRun:
    """What one batch job did on real Slurm (see the module docstring)."""

    job_id: int
    submit: Result
    state: str
    record: dict[str, str]
    files: dict[str, str]
    folder: Path


def parse_env(text: str) -> dict[str, str]:
    """An ``env`` dump (one ``NAME=value`` a line) as a dict."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {name: value for name, value in pairs}


def run_batch(
    cluster: RealSlurm,
    script: str,
    *,
    args: Sequence[str] = (),
    folder: str | None = None,
    inputs: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    normalize: bool = True,
    as_job_id: int = 1,
) -> BatchRun:
    """``sbatch --wait <args> job.sh`` with ``script`` as job.sh (plus ``inputs``,
    name -> text, in the same folder); see the module docstring."""
    name = folder or f"diff-{next(_COUNTER)}"
    work = case_dir(cluster, name, files={"job.sh": script, **(inputs or {})})
    submit = cluster.run(["sbatch", "--wait", *args, "job.sh"], cwd=work, env=env, timeout=timeout)
    words = submit.stdout.split()
    if not submit.stdout.startswith("Submitted batch job") or not words[-1].isdigit():
        raise RuntimeError(f"sbatch refused the job: {submit.stderr.strip()} (rc {submit.rc})")
    job_id = int(words[-1])
    state = cluster.wait_job(job_id, timeout=timeout)
    records = cluster.job_records(job_id)
    files = {
        p.name: p.read_text(errors="replace")
        for p in sorted(work.iterdir())
        if p.is_file() and p.name != "job.sh" and p.name not in (inputs or {})
    }
    if normalize and cluster.ports is not None:
        offset = job_id - as_job_id if cluster.first_job_id == JOB_ID_BASE else None
        ports = cluster.ports

        def norm(text: str) -> str:
            return to_reference(text, root=cluster.root, ports=ports, offset=offset)

        submit = Result(norm(submit.stdout), norm(submit.stderr), submit.rc)
        records = [{k: norm(v) for k, v in r.items()} for r in records]
        files = {norm(k): norm(v) for k, v in files.items()}
    return BatchRun(
        job_id=job_id,
        submit=submit,
        state=state,
        record=records[0] if records else {},
        files=files,
        folder=work,
    )
