"""Differential test against real Slurm 22.05 (the ``real_slurm`` fixture).

The same batch script runs on the real cluster started by tests/realslurm;
its batch step and its srun step dump their environments.  minislurm then
builds the environments for the *same job and allocation* (job id, nodes, CPUs
and GPU indices per node are read from what real Slurm chose: they are the
controller's decisions, which the environment only reports) and every variable
must agree.  The request is one the captures do not cover: ``-N2 -n3``
(tasks 2,1), one GPU per node and ``--mem-per-cpu``.

Inputs taken from the real run, each the real value of something minislurm's
launcher or controller supplies: the pids (``SLURM_TASK_PID``), srun's port,
the host name (``SLURM_SUBMIT_HOST``) and the controller port in slurm.conf
(``SLURM_WORKING_CLUSTER``).  Normalised: ``SHLVL`` and ``_``, which bash sets.
"""

from __future__ import annotations

import re
import socket
from typing import Any

import pytest
from realslurm import RealSlurm
from realslurm.differential import parse_env, run_batch

from minislurm.common.hostlist import expand
from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.slurmd.context import JobContext, StepContext, working_cluster
from minislurm.slurmd.env import batch_environment, step_task_environment

pytestmark = pytest.mark.realslurm

SCRIPT = """#!/bin/bash
#SBATCH -J envdiff -N2 -n3 --gres=gpu:1 --mem-per-cpu=300
env | sort > batch.env
srun bash -c 'env | sort > step.$SLURM_PROCID.env'
"""
BASH_OWN = ("SHLVL", "_")


def _cpus(text: str) -> list[int]:
    """Undo ``2(x2),1`` -> [2, 2, 1]."""
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        assert m, text
        out += [int(m.group(1))] * int(m.group(2) or 1)
    return out


def _strip(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in BASH_OWN}


def test_batch_and_step_environment_like_real_slurm(real_slurm: RealSlurm) -> None:
    real_slurm.cancel_all()
    run = run_batch(real_slurm, SCRIPT, normalize=False)
    assert run.state == "COMPLETED", run.submit
    real_batch = parse_env(run.files["batch.env"])
    steps = [parse_env(run.files[f"step.{t}.env"]) for t in range(3)]

    nodes = expand(real_batch["SLURM_JOB_NODELIST"])
    cpus = _cpus(real_batch["SLURM_JOB_CPUS_PER_NODE"])
    gpus = {s["SLURMD_NODENAME"]: s["SLURM_STEP_GPUS"] for s in steps}
    alloc = Allocation(
        tuple(
            NodeAlloc(n, c, 300 * c, tuple(("a100", int(g)) for g in gpus[n].split(",")))
            for n, c in zip(nodes, cpus, strict=True)
        )
    )
    ctld_port = re.search(r"^SlurmctldPort=(\d+)", real_slurm.conf_path.read_text(), re.M)
    assert ctld_port is not None
    assert real_batch["SLURM_SUBMIT_HOST"] == socket.gethostname().split(".")[0]
    job = JobContext(
        job_id=run.job_id,
        name="envdiff",
        partition="debug",
        cluster_name="mini",
        submit_dir=str(run.folder),
        submit_host=socket.gethostname().split(".")[0],
        working_cluster=working_cluster("mini", "localhost", int(ctld_port.group(1))),
        conf_path=str(real_slurm.conf_path),
        ntasks=3,
        mem_per_cpu=300,
        # without slurmdbd the job has no account/QOS and Slurm exports neither
        account="root" if real_slurm.accounting else None,
        qos="normal" if real_slurm.accounting else None,
    )
    user_env = {**real_slurm.env, "PWD": str(run.folder)}
    ours = batch_environment(
        job, alloc, base_env=user_env, task_pid=int(real_batch["SLURM_TASK_PID"])
    )
    assert _strip(ours) == _strip(real_batch)

    layout = distribute(3, alloc.node_names, alloc.cpus_per_node)
    step = StepContext(0, layout, launcher_port=int(steps[0]["SLURM_SRUN_COMM_PORT"]))
    for task, real in enumerate(steps):
        mine = step_task_environment(
            job, alloc, step, task, base_env=ours, task_pid=int(real["SLURM_TASK_PID"])
        )
        assert _strip(mine) == _strip(real), f"task {task}"


def _user_env(real_slurm: RealSlurm, folder: str) -> dict[str, str]:
    return {**real_slurm.env, "PWD": folder}


def _context(real_slurm: RealSlurm, real: dict[str, str], name: str, **kw: Any) -> JobContext:
    ctld_port = re.search(r"^SlurmctldPort=(\d+)", real_slurm.conf_path.read_text(), re.M)
    assert ctld_port is not None
    fields: dict[str, Any] = {
        "job_id": int(real["SLURM_JOB_ID"]),
        "name": name,
        "partition": "debug",
        "cluster_name": "mini",
        "submit_dir": real["SLURM_SUBMIT_DIR"],
        "submit_host": socket.gethostname().split(".")[0],
        "working_cluster": working_cluster("mini", "localhost", int(ctld_port.group(1))),
        "conf_path": str(real_slurm.conf_path),
        "account": "root" if real_slurm.accounting else None,
        "qos": "normal" if real_slurm.accounting else None,
    }
    fields.update(kw)
    return JobContext(**fields)


@pytest.mark.parametrize(
    "spec, indices",
    [("1,3,5", [1, 3, 5]), ("0-6:3", [0, 3, 6]), ("1-2,7", [1, 2, 7]), ("4", [4])],
)
def test_array_task_environment_like_real_slurm(
    real_slurm: RealSlurm, spec: str, indices: list[int]
) -> None:
    """SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP for array syntaxes the captures do not show."""
    from minislurm.slurmd.context import ArrayContext

    real_slurm.cancel_all()
    script = (
        f"#!/bin/bash\n#SBATCH --array={spec} -J arr\nenv | sort > a.$SLURM_ARRAY_TASK_ID.env\n"
    )
    run = run_batch(real_slurm, script, normalize=False)
    assert run.state == "COMPLETED", run.submit
    for task_id in indices:
        real = parse_env(run.files[f"a.{task_id}.env"])
        node = real["SLURMD_NODENAME"]
        alloc = Allocation((NodeAlloc(node, int(real["SLURM_CPUS_ON_NODE"]), 1000),))
        array = ArrayContext.from_indices(run.job_id, task_id, indices, spec)
        job = _context(real_slurm, real, "arr", array=array, mem_per_cpu=1000)
        ours = batch_environment(
            job,
            alloc,
            base_env=_user_env(real_slurm, str(run.folder)),
            task_pid=int(real["SLURM_TASK_PID"]),
        )
        assert _strip(ours) == _strip(real), f"array task {task_id}"


def test_standalone_srun_cyclic_with_cpus_per_task_like_real_slurm(
    real_slurm: RealSlurm, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """``srun -N2 -n3 -m cyclic -c2 --mem-per-cpu=300``: srun creates the job (not captured)."""
    real_slurm.cancel_all()
    folder = real_slurm.work_dir / "srun-cyclic"
    folder.mkdir(parents=True, exist_ok=True)
    res = real_slurm.run(
        "srun -J cyc -N2 -n3 -m cyclic -c2 --mem-per-cpu=300 -o s%t.env bash -c 'env | sort'",
        cwd=folder,
    )
    assert res.rc == 0, res.stderr
    reals = [parse_env((folder / f"s{t}.env").read_text()) for t in range(3)]
    nodes = expand(reals[0]["SLURM_JOB_NODELIST"])
    cpus = _cpus(reals[0]["SLURM_JOB_CPUS_PER_NODE"])
    alloc = Allocation(tuple(NodeAlloc(n, c, 1000 * c) for n, c in zip(nodes, cpus, strict=True)))
    job = _context(
        real_slurm,
        reals[0],
        "cyc",
        ntasks=3,
        cpus_per_task=2,
        distribution="cyclic",
        mem_per_cpu=300,
        mem_per_cpu_given=True,
    )
    layout = distribute(3, nodes, cpus, cpus_per_task=2, distribution="cyclic")
    assert layout.task_ids == ((0, 2), (1,))
    step = StepContext(
        0,
        layout,
        launcher_port=int(reals[0]["SLURM_SRUN_COMM_PORT"]),
        inside_allocation=False,
        cpus_per_task=2,
        distribution="cyclic",
    )
    # srun ran from bash in the folder: its environment has PWD and SHLVL=1
    base = {**_user_env(real_slurm, str(folder)), "SHLVL": "1"}
    for task, real in enumerate(reals):
        mine = step_task_environment(
            job, alloc, step, task, base_env=base, task_pid=int(real["SLURM_TASK_PID"])
        )
        assert _strip(mine) == _strip(real), f"task {task}"


def test_requeued_job_sees_its_restart_count_like_real_slurm(real_slurm: RealSlurm) -> None:
    """``scontrol requeue``: the second run has SLURM_RESTART_COUNT=1, the first none."""
    import time

    real_slurm.cancel_all()
    folder = real_slurm.work_dir / "requeue"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    script = (
        "#!/bin/bash\n#SBATCH -J rq --requeue -o rq.out --open-mode=append\n"
        "env | sort > run.${SLURM_RESTART_COUNT:-0}.env\n"
        '[ -n "$SLURM_RESTART_COUNT" ] || sleep 30\n'
    )
    (folder / "job.sh").write_text(script)
    job_id = real_slurm.run("sbatch --parsable job.sh", cwd=folder).stdout.strip()
    deadline = time.monotonic() + 60
    while not (folder / "run.0.env").exists():
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert real_slurm.run(["scontrol", "requeue", job_id]).rc == 0
    # a requeued job waits ~121 s (BeginTime); let it start now
    while real_slurm.run(["squeue", "-h", "-j", job_id, "-o", "%T"]).stdout.strip() != "PENDING":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # relaunching while the old run's slurmstepd still cleans up fails the job (1:0)
    while real_slurm.run(["sinfo", "-h", "-t", "completing", "-o", "%N"]).stdout.strip():
        assert time.monotonic() < deadline
        time.sleep(0.2)
    time.sleep(1.0)
    real_slurm.run(["scontrol", "update", f"jobid={job_id}", "StartTime=now"])
    state = real_slurm.wait_job(job_id, timeout=60)
    assert state == "COMPLETED", (
        [
            {k: r.get(k) for k in ("JobState", "Reason", "ExitCode", "Restarts", "BatchFlag")}
            for r in real_slurm.job_records(job_id)
        ],
        sorted(p.name for p in folder.iterdir()),
        (folder / "rq.out").read_text() if (folder / "rq.out").exists() else "",
    )
    first = parse_env((folder / "run.0.env").read_text())
    second = parse_env((folder / "run.1.env").read_text())
    assert "SLURM_RESTART_COUNT" not in first
    assert second["SLURM_RESTART_COUNT"] == "1"
    node = second["SLURMD_NODENAME"]
    alloc = Allocation((NodeAlloc(node, int(second["SLURM_CPUS_ON_NODE"]), 1000),))
    job = _context(real_slurm, second, "rq", restart_count=1, mem_per_cpu=1000, open_mode="append")
    ours = batch_environment(
        job,
        alloc,
        base_env=_user_env(real_slurm, str(folder)),
        task_pid=int(second["SLURM_TASK_PID"]),
    )
    assert _strip(ours) == _strip(second)


def test_salloc_and_its_srun_step_like_real_slurm(real_slurm: RealSlurm) -> None:
    """``salloc -N2 -n3 -c1 --mem-per-cpu=300 -J sal``: the shell's env, then srun's tasks."""
    from minislurm.slurmd.env import allocation_environment

    real_slurm.cancel_all()
    folder = real_slurm.work_dir / "salloc"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    inner = "env | sort > salloc.env; srun bash -c 'env | sort > step.$SLURM_PROCID.env'"
    res = real_slurm.run(
        ["salloc", "-N2", "-n3", "-c1", "--mem-per-cpu=300", "-J", "sal", "bash", "-c", inner],
        cwd=folder,
    )
    assert res.rc == 0, res.stderr
    real_alloc = parse_env((folder / "salloc.env").read_text())
    steps = [parse_env((folder / f"step.{t}.env").read_text()) for t in range(3)]
    nodes = expand(real_alloc["SLURM_JOB_NODELIST"])
    cpus = _cpus(real_alloc["SLURM_JOB_CPUS_PER_NODE"])
    alloc = Allocation(tuple(NodeAlloc(n, c, 300 * c) for n, c in zip(nodes, cpus, strict=True)))
    job = _context(
        real_slurm,
        real_alloc,
        "sal",
        ntasks=3,
        cpus_per_task=1,
        mem_per_cpu=300,
        mem_per_cpu_given=True,
    )
    # salloc was started without a shell in between: its environment is the harness's
    ours = allocation_environment(job, alloc, base_env={**real_slurm.env, "PWD": str(folder)})
    assert _strip(ours) == _strip(real_alloc)
    layout = distribute(3, nodes, cpus, cpus_per_task=1)
    step = StepContext(0, layout, launcher_port=int(steps[0]["SLURM_SRUN_COMM_PORT"]))
    for task, real in enumerate(steps):
        mine = step_task_environment(
            job, alloc, step, task, base_env=ours, task_pid=int(real["SLURM_TASK_PID"])
        )
        assert _strip(mine) == _strip(real), f"task {task}"


def test_second_gpu_job_on_a_node_sees_global_indices(real_slurm: RealSlurm) -> None:
    """task/none: GPUs 2,3 are CUDA_VISIBLE_DEVICES=2,3 (not renumbered from 0)."""
    from minislurm.slurmd.gpu import gpu_environment

    real_slurm.cancel_all()
    folder = real_slurm.work_dir / "gpu-indices"
    folder.mkdir(parents=True, exist_ok=True)
    opts = "-w n1 -c1 --mem=100 --gres=gpu:2"
    res = real_slurm.run(
        f"(srun {opts} sleep 8 &); "
        "for i in $(seq 100); do squeue -h -t R | grep -q . && break; sleep 0.1; done; "
        f"srun {opts} bash -c 'env | grep -E \"GPU|CUDA|ROCR|ZE_\" | sort'",
        cwd=folder,
    )
    assert res.rc == 0, res.stderr
    assert parse_env(res.stdout) == gpu_environment([2, 3], scope="step")
    real_slurm.cancel_all()
