"""Job and step environments where minislurm differed from real Slurm 22.05.8.

Every expected value here was measured on a real 22.05.8 cluster configured like the
reference one (``scripts/realslurm``, n[1-4], 4 CPUs, 4 a100 each) by running the same
command lines on it and on minislurm and diffing ``env | sort`` per task; the
``real_slurm`` tests at the end replay the cases on both clusters (they skip when real
Slurm cannot start here).  Host- and time-specific values are not compared: job ids
(shifted), ``SLURM_TASK_PID``, srun's ports (``SLURM_SRUN_COMM_PORT``,
``SLURM_STEP_LAUNCHER_PORT``), ``SLURM_JOB_START_TIME``/``END_TIME``,
``SLURM_WORKING_CLUSTER``, ``MINISLURM_STATE_DIR`` (tests/minicluster.py
``normalizer`` and ``KNOWN_ENV_GAPS``).
"""

from __future__ import annotations

from typing import Any

import pytest
from minicluster import KNOWN_ENV_GAPS, MiniCluster, env_diff, env_of, run_case
from realslurm import RealSlurm

from minislurm.common.layout import distribute
from minislurm.job import Allocation, NodeAlloc
from minislurm.options.srun import parse_srun
from minislurm.slurmd.context import JobContext, StepContext
from minislurm.slurmd.env import batch_environment, step_environments
from minislurm.slurmd.userenv import parse_env_dump, with_user_env

USER_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8", "USER": "root"}


def _job(**kw: Any) -> JobContext:
    fields: dict[str, Any] = {
        "job_id": 7, "name": "bash", "partition": "debug", "cluster_name": "mini",
        "submit_dir": "/w", "submit_host": "vm", "conf_path": "/etc/slurm.conf",
    }
    fields.update(kw)
    return JobContext(**fields)


def _alloc(*nodes: tuple[str, int, tuple[int, ...]]) -> Allocation:
    return Allocation(
        tuple(NodeAlloc(n, c, 1000 * c, tuple(("a100", g) for g in gpus)) for n, c, gpus in nodes)
    )


def _srun_own_job(job: JobContext, alloc: Allocation, ntasks: int, **step: Any) -> list[
    dict[str, str]
]:
    """The task environments of an srun that created its own job (``inside_allocation=False``)."""
    layout = distribute(ntasks, alloc.node_names, [n.cpus for n in alloc.nodes],
                        distribution=step.pop("distribution", None) or "block")
    ctx = StepContext(step_id=0, layout=layout, launcher_port=40000, inside_allocation=False,
                      **step)
    return step_environments(job, alloc, ctx, base_env=USER_ENV)


# ----- -m plane=N --------------------------------------------------------------------------
def test_plane_layout_counts_tasks_by_free_cpus() -> None:
    """``_task_layout_plane``: one task per node, then up to plane_size per node while it
    has CPUs left.  Real 22.05.8: ``sbatch -N2 -n4 -m plane=2`` (3+1 CPUs) runs tasks
    0,1,3 on n1 and 2 on n2 (SLURM_TASKS_PER_NODE=3,1); ``srun -N2 -n5 -m plane=3`` (4+1)
    0,1,2,4 / 3.  minislurm dealt plane blocks ignoring CPUs (2(x2), 3,2)."""
    assert distribute(4, ["n1", "n2"], [3, 1], distribution="plane=2").task_ids == (
        (0, 1, 3), (2,))
    assert distribute(5, ["n2", "n3"], [4, 1], distribution="plane=3").task_ids == (
        (0, 1, 2, 4), (3,))
    # slurm_step_layout.c's own example: 4,1,1 CPUs, plane 2, 6 tasks
    assert distribute(6, ["a", "b", "c"], [4, 1, 1], distribution="plane=2").task_ids == (
        (0, 1, 4, 5), (2,), (3,))


def test_plane_distribution_is_exported_as_plane_and_planesize() -> None:
    """Real 22.05.8: ``sbatch -m plane=2`` -> SLURM_DISTRIBUTION=plane and
    SLURM_DIST_PLANESIZE=2 (minislurm: SLURM_DISTRIBUTION=plane=2, no PLANESIZE)."""
    env = batch_environment(_job(ntasks=4, distribution="plane=2"),
                            _alloc(("n1", 3, ()), ("n2", 1, ())), base_env=USER_ENV)
    assert env["SLURM_DISTRIBUTION"] == "plane"
    assert env["SLURM_DIST_PLANESIZE"] == "2"
    tasks = _srun_own_job(_job(ntasks=5, distribution="plane=3"),
                          _alloc(("n2", 4, ()), ("n3", 1, ())), 5, distribution="plane=3")
    assert {(t["SLURM_DISTRIBUTION"], t["SLURM_DIST_PLANESIZE"]) for t in tasks} == {
        ("plane", "3")}
    assert [t["SLURM_GTIDS"] for t in tasks] == ["0,1,2,4"] * 3 + ["3", "0,1,2,4"]


def test_srun_reads_the_plane_size_from_slurm_dist_planesize() -> None:
    """srun inside ``sbatch -m plane=2`` inherits SLURM_DISTRIBUTION=plane and
    SLURM_DIST_PLANESIZE=2 and lays its step out as plane=2 (``_parse_plane_dist``);
    minislurm's srun said ``Invalid --distribution specification`` (exit 255)."""
    inv = parse_srun(["true"], env={"SLURM_DISTRIBUTION": "plane", "SLURM_DIST_PLANESIZE": "2"},
                     cwd="/")
    assert inv.options.distribution == "plane=2"


# ----- SLURMD_TRES_BIND and GPU binding -------------------------------------------------------
def test_tres_bind_only_on_nodes_running_several_tasks() -> None:
    """Real 22.05.8, ``srun -N2 -n3 --gpus-per-task=1``: the two tasks on n1 have
    SLURMD_TRES_BIND=gpu:per_task:1 and CUDA_VISIBLE_DEVICES 0 / 1, the single task on
    n2 has no SLURMD_TRES_BIND (minislurm set it nowhere)."""
    tasks = _srun_own_job(_job(ntasks=3, gpus_per_task="1"),
                          _alloc(("n1", 2, (0, 1)), ("n2", 1, (0,))), 3, gpus_per_task="1")
    assert [t.get("SLURMD_TRES_BIND") for t in tasks] == ["gpu:per_task:1"] * 2 + [None]
    assert [t["CUDA_VISIBLE_DEVICES"] for t in tasks] == ["0", "1", "0"]


def test_explicit_gpu_bind_is_ignored_on_a_single_task_node() -> None:
    """Real 22.05.8, ``srun -N2 -n3 --gpus-per-node=1 --gpu-bind=none``: n1's two tasks
    have SLURMD_TRES_BIND=gpu:none and no CUDA_VISIBLE_DEVICES/SLURM_STEP_GPUS, n2's
    single task has CUDA_VISIBLE_DEVICES=0 and SLURM_STEP_GPUS=0 (minislurm hid n2's GPU)."""
    tasks = _srun_own_job(_job(ntasks=3, gpus_per_node="1"),
                          _alloc(("n1", 2, (0,)), ("n2", 1, (0,))), 3, gpu_bind="none")
    assert [t.get("SLURMD_TRES_BIND") for t in tasks] == ["gpu:none"] * 2 + [None]
    assert [t.get("CUDA_VISIBLE_DEVICES") for t in tasks] == [None, None, "0"]
    assert tasks[2]["SLURM_STEP_GPUS"] == "0"


# ----- what an srun that creates its own job exports ------------------------------------------
def test_srun_own_job_has_no_cpus_or_mem_per_gpu_nor_export_env() -> None:
    """Real 22.05.8: ``srun --gpus=1 --cpus-per-gpu=3``, ``srun --gpus=2 --mem-per-gpu=800``,
    ``srun --export=ALL,FOO=bar`` tasks have no SLURM_CPUS_PER_GPU, SLURM_MEM_PER_GPU,
    SLURM_EXPORT_ENV (sbatch's batch step has them; minislurm set them for srun too)."""
    job = _job(ntasks=1, gpus="2", cpus_per_gpu=3, mem_per_gpu=800, export="ALL,FOO=bar")
    (task,) = _srun_own_job(job, _alloc(("n1", 3, (0, 1))), 1)
    assert not {"SLURM_CPUS_PER_GPU", "SLURM_MEM_PER_GPU", "SLURM_EXPORT_ENV"} & set(task)
    assert task["FOO"] == "bar"


@pytest.mark.parametrize(
    ("job_kw", "ntasks", "expected"),
    [
        ({"mem_per_node": 1500}, 1, "cyclic"),  # srun --mem=1500
        ({"mem_per_cpu": 700, "mem_per_cpu_given": True}, 2, "block"),  # -n2 --mem-per-cpu=700
        ({}, 2, None),  # srun -n2: no SLURM_DISTRIBUTION
    ],
)
def test_srun_own_job_distribution_only_with_memory_options(
    job_kw: dict[str, object], ntasks: int, expected: str | None
) -> None:
    """launch_common_create_job_step leaves the distribution unknown without -m unless
    srun has memory options; measured on 22.05.8 (minislurm never set it without -m)."""
    tasks = _srun_own_job(_job(ntasks=ntasks, **job_kw), _alloc(("n1", 2, ())), ntasks)
    assert {t.get("SLURM_DISTRIBUTION") for t in tasks} == {expected}


def test_srun_export_filters_the_task_environment() -> None:
    """Real 22.05.8: ``srun --export=NONE env`` shows no HOME/PATH/LANG and no SRUN_DEBUG,
    only SLURM_* plus slurmstepd's SLURMD_NODENAME, TMPDIR, ...; ``--export=FOO=bar`` adds
    FOO=bar (minislurm passed srun's whole environment)."""
    (none,) = _srun_own_job(_job(ntasks=1, export="NONE"), _alloc(("n1", 1, ())), 1)
    assert not {"HOME", "PATH", "LANG", "USER", "SRUN_DEBUG"} & set(none)
    assert none["SLURMD_NODENAME"] == "n1" and none["TMPDIR"] == "/tmp"
    (foo,) = _srun_own_job(_job(ntasks=1, export="FOO=bar"), _alloc(("n1", 1, ())), 1)
    assert foo["FOO"] == "bar" and "HOME" not in foo


# ----- sbatch --export other than ALL: SLURM_GET_USER_ENV -------------------------------------
def test_sbatch_export_gets_the_user_login_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Real 22.05.8: ``sbatch --export=NONE`` and ``--export=ALL,FOO=bar`` jobs have
    SLURM_GET_USER_ENV=1 and root's login environment (``su - root``: MAIL=/var/mail/root,
    the profile's PATH, ...) under the job's own variables; without --export or with
    ``ALL`` there is neither (minislurm had neither)."""
    import minislurm.slurmd.userenv as userenv

    login = {"HOME": "/root", "MAIL": "/var/mail/root", "PATH": "/root/bin:/usr/bin",
             "SHLVL": "1"}
    monkeypatch.setattr(userenv, "login_environment", lambda user: dict(login))
    job_env = {"SLURM_CONF": "/etc/slurm.conf", "FOO": "bar", "PATH": "/submit/path"}
    env = with_user_env(job_env, "ALL,FOO=bar", "root")
    assert env["SLURM_GET_USER_ENV"] == "1"
    assert env["MAIL"] == "/var/mail/root"
    assert env["PATH"] == "/submit/path"  # the job's own value wins
    assert with_user_env(job_env, "NONE", "root")["HOME"] == "/root"
    for export in (None, "ALL", "all", "NIL"):
        assert with_user_env(job_env, export, "root") == job_env


def test_login_environment_dump_drops_what_slurm_discards() -> None:
    """``_discard_env``: DISPLAY, ENVIRONMENT and HOSTNAME of the login shell are dropped."""
    dump = ("\nXXXXSLURMSTARTPARSINGHEREXXXX\nHOME=/root\nDISPLAY=:0\nHOSTNAME=vm\n"
            "ENVIRONMENT=x\nSHLVL=1\nXXXXSLURMENDPARSINGHEREXXXXX\n")
    assert parse_env_dump(dump) == {"HOME": "/root", "SHLVL": "1"}


# ----- replayed on real Slurm -------------------------------------------------------------------
#: Not compared: time/host/port specific (besides the normaliser's masks) and harness-only.
VOLATILE = {
    "SLURM_TASK_PID", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT",
    "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_JOB_ID", "SLURM_JOBID",
    *KNOWN_ENV_GAPS,
}
STEP_ENV = ("#!/bin/bash\nenv | sort > batch.env\n"
            "srun bash -c 'env | sort > step.$SLURM_PROCID.env'\n")
TASK_ENV = "bash -c 'env | sort > t.$SLURM_PROCID.env'"
REPLAYED = {
    "sbatch-plane": ("sbatch --wait -N2 -n4 -m plane=2 job.sh", STEP_ENV),
    "srun-plane": (f"srun -N2 -n5 -m plane=3 {TASK_ENV}", None),
    "srun-gpus-per-task-2-nodes": (f"srun -N2 -n3 --gpus-per-task=1 {TASK_ENV}", None),
    "srun-gpu-bind-none": (f"srun -N2 -n3 --gpus-per-node=1 --gpu-bind=none {TASK_ENV}", None),
    "sbatch-gpus-per-task": ("sbatch --wait -n2 --gpus-per-task=1 job.sh", STEP_ENV),
    "srun-cpus-mem-per-gpu": (f"srun --gpus=2 --mem-per-gpu=800 {TASK_ENV}", None),
    "srun-mem": (f"srun --mem=1500 {TASK_ENV}", None),
    "srun-export-foo": ("FOO=zz BAR=1 srun --export=FOO=bar /usr/bin/env | sort > t.0.env", None),
    "sbatch-export-all-foo": ("sbatch --wait --export=ALL,FOO=bar job.sh", STEP_ENV),
}


@pytest.mark.realslurm
@pytest.mark.parametrize("case", sorted(REPLAYED))
def test_same_environments_as_real_slurm(
    real_slurm: RealSlurm, mini_slurm: MiniCluster, case: str
) -> None:
    cmd, script = REPLAYED[case]
    files = {"job.sh": script} if script else {}
    runs = [run_case(side, cmd, folder=f"fidelity-env-{case}", files=files, timeout=90)
            for side in (real_slurm, mini_slurm)]
    real, mini = runs
    assert (real.result.rc, mini.result.rc) == (0, 0), (real.result, mini.result)
    envs = sorted(f for f in real.files if f.endswith(".env"))
    assert envs and envs == sorted(f for f in mini.files if f.endswith(".env"))
    for name in envs:
        diff = env_diff(env_of(real.files[name]), env_of(mini.files[name]))
        assert {k: v for k, v in diff.items() if k not in VOLATILE} == {}, name
