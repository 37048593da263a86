"""How the DDP example finds its rank, world and rendezvous from ``SLURM_*``.

The environment files are real Slurm 22.05.8 task environments captured with
``srun -N2 --ntasks-per-node=2 --gres=gpu:2 -o task%t.env env``
(``slurm-reference/a1_srun_env``): tasks 0,1 on n1 and 2,3 on n2, job id 3.
No torch is imported here.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from course.ddp.launch_bare import block_layout, exit_code, task_environment
from course.ddp.wiring import (
    LOCAL_ADDRESS,
    WiringError,
    master_addr,
    master_port,
    wiring_from_env,
)
from minislurm.common.hostlist import expand


def no_dns(host: str) -> str:
    """A resolver for which no name exists (minislurm's logical nodes ``n1``...)."""
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def read_env(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return dict(pairs)


@pytest.fixture
def task_envs(captures: Path) -> list[dict[str, str]]:
    """The four captured task environments, in task id order."""
    folder = captures / "a1_srun_env"
    return [read_env(folder / f"task{t}.env") for t in range(4)]


def test_rank_world_and_local_rank_come_from_procid_ntasks_localid(
    task_envs: list[dict[str, str]],
) -> None:
    wirings = [wiring_from_env(env, resolve=no_dns) for env in task_envs]
    assert [w.rank for w in wirings] == [0, 1, 2, 3]
    assert [w.local_rank for w in wirings] == [0, 1, 0, 1]
    assert {w.world_size for w in wirings} == {4}
    assert {w.launcher for w in wirings} == {"slurm"}


def test_local_rank_is_the_position_among_the_nodes_tasks(task_envs: list[dict[str, str]]) -> None:
    """What the capture implies: task t runs on SLURM_TOPOLOGY_ADDR, which is host
    SLURM_NODEID of the node list, and SLURM_GTIDS lists that node's tasks."""
    for env in task_envs:
        wiring = wiring_from_env(env, resolve=no_dns)
        hosts = expand(env["SLURM_JOB_NODELIST"])
        assert hosts[int(env["SLURM_NODEID"])] == env["SLURM_TOPOLOGY_ADDR"]
        gtids = [int(t) for t in env["SLURM_GTIDS"].split(",")]
        assert gtids.index(wiring.rank) == wiring.local_rank


def test_every_task_agrees_on_master_addr_and_port(task_envs: list[dict[str, str]]) -> None:
    wirings = [wiring_from_env(env, resolve=no_dns) for env in task_envs]
    # n1 (first host of n[1-2]) does not resolve: a local node -> loopback.
    assert {(w.master_addr, w.master_port) for w in wirings} == {(LOCAL_ADDRESS, 20003)}
    assert all(w.single_host for w in wirings)
    assert {w.job_id for w in wirings} == {3}


def test_master_addr_is_the_first_host_resolved() -> None:
    table = {"gpu01": "10.0.0.11", "gpu02": "10.0.0.12", "me": "127.0.1.1"}
    assert master_addr("gpu[02,01]", resolve=table.__getitem__) == "10.0.0.12"
    assert master_addr("gpu[01-02]", resolve=table.__getitem__) == "10.0.0.11"
    # Debian maps the own hostname to 127.0.1.1: still this host.
    assert master_addr("me,gpu01", resolve=table.__getitem__) == LOCAL_ADDRESS
    # A name listed as local is not even looked up.
    assert master_addr("gpu01", local={"gpu01"}, resolve=no_dns) == LOCAL_ADDRESS
    assert master_addr("n[1-4]", resolve=no_dns) == LOCAL_ADDRESS


def test_a_job_on_other_hosts_is_not_single_host() -> None:
    env = {"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0",
           "SLURM_JOB_NODELIST": "gpu[01-02]", "SLURM_JOB_ID": "42"}
    table = {"gpu01": "10.0.0.11", "gpu02": "10.0.0.12"}
    wiring = wiring_from_env(env, resolve=table.__getitem__)
    assert (wiring.master_addr, wiring.single_host) == ("10.0.0.11", False)


def test_extra_local_names_come_from_course_ddp_local_nodes() -> None:
    env = {"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "1",
           "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_JOB_ID": "7",
           "COURSE_DDP_LOCAL_NODES": "n[1-2]"}
    wiring = wiring_from_env(env, resolve=lambda host: "10.9.9.9")
    assert (wiring.master_addr, wiring.single_host) == (LOCAL_ADDRESS, True)


def test_master_port_follows_the_job_id() -> None:
    assert master_port(3) == master_port(3, 0) == 20003  # step 0: the job's own port
    assert master_port(3) != master_port(4)
    assert len({master_port(j) for j in range(1000, 1100)}) == 100
    assert all(20000 <= master_port(j) < 30000 for j in (0, 1, 9999, 10000, 123456789))
    with pytest.raises(WiringError):
        master_port(-1)


def test_master_port_differs_between_the_steps_of_one_job() -> None:
    """Concurrent ``srun --exact`` steps of one allocation are separate worlds."""
    assert master_port(3, 1) == 20000 + (3 + 1009) % 10000 == 21012
    for job_id in (0, 3, 9999, 123456789):
        ports = [master_port(job_id, step) for step in range(10000)]
        assert len(set(ports)) == 10000  # no two of a job's first 10000 steps meet
        assert all(20000 <= p < 30000 for p in ports)  # unprivileged, below ephemeral
    assert master_port(7, 2) == master_port(7, 2)  # deterministic: every task agrees
    with pytest.raises(WiringError, match="invalid SLURM_STEP_ID -1"):
        master_port(7, -1)


STEP_ENV = {"SLURM_NTASKS": "2", "SLURM_JOB_NODELIST": "gpu[01-02]", "SLURM_JOB_ID": "42",
            "SLURM_STEP_NODELIST": "gpu02", "SLURM_STEP_ID": "1"}


def test_master_addr_and_port_are_the_steps_not_the_jobs() -> None:
    """``srun -N1 --exact`` on the allocation's second node: rank 0 of that step
    is on gpu02, and its port is step 1's."""
    table = {"gpu01": "10.0.0.11", "gpu02": "10.0.0.12"}
    wirings = [wiring_from_env({**STEP_ENV, "SLURM_PROCID": str(r), "SLURM_LOCALID": str(r)},
                               resolve=table.__getitem__) for r in range(2)]
    assert {(w.master_addr, w.master_port) for w in wirings} == {("10.0.0.12", 21051)}
    assert {(w.job_id, w.step_id, w.world_size) for w in wirings} == {(42, 1, 2)}
    assert not wirings[0].single_host


def test_outside_a_step_the_jobs_nodes_and_step_0_are_used() -> None:
    """The batch script has no SLURM_STEP_* (slurm-reference/a2_sbatch_env)."""
    env = {k: v for k, v in STEP_ENV.items() if not k.startswith("SLURM_STEP")}
    wiring = wiring_from_env({**env, "SLURM_PROCID": "0", "SLURM_LOCALID": "0"},
                             resolve={"gpu01": "10.0.0.11", "gpu02": "10.0.0.12"}.__getitem__)
    assert (wiring.master_addr, wiring.master_port, wiring.step_id) == ("10.0.0.11", 20042, 0)


def test_a_bad_step_id_is_named() -> None:
    env = {**STEP_ENV, "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_STEP_ID": "x"}
    with pytest.raises(WiringError, match="SLURM_STEP_ID='x' is not an integer"):
        wiring_from_env(env, resolve=no_dns)


def test_restart_count_is_read_from_slurm_restart_count(task_envs: list[dict[str, str]]) -> None:
    assert wiring_from_env(task_envs[0], resolve=no_dns).restart_count == 0
    requeued = {**task_envs[0], "SLURM_RESTART_COUNT": "2"}
    assert wiring_from_env(requeued, resolve=no_dns).restart_count == 2


def test_torchrun_variables_are_used_when_slurm_is_absent() -> None:
    env = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "x"}
    wiring = wiring_from_env(env)
    assert (wiring.rank, wiring.world_size, wiring.local_rank) == (3, 4, 3)
    assert (wiring.master_addr, wiring.master_port, wiring.launcher) == ("127.0.0.1", 29500,
                                                                         "torchrun")
    assert wiring.torch_env()["RANK"] == "3"


def test_torchrun_inside_a_batch_script_wins_over_the_batch_steps_procid(
    task_envs: list[dict[str, str]],
) -> None:
    """The batch step has SLURM_PROCID=0; torchrun's own children must not all be rank 0."""
    env = {**task_envs[0], "RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "2",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "x"}
    assert wiring_from_env(env).rank == 2
    del env["TORCHELASTIC_RUN_ID"]
    assert wiring_from_env(env, resolve=no_dns).rank == 0  # plain srun: SLURM_* win


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "no launcher variables"),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0"},
         "SLURM_JOB_NODELIST is not set"),
        ({"SLURM_PROCID": "x", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0",
          "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_ID": "1"}, "SLURM_PROCID='x' is not an integer"),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0",
          "SLURM_JOB_NODELIST": "n1"}, "SLURM_JOB_ID is not set"),
    ],
)
def test_missing_or_bad_variables_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(WiringError, match=message):
        wiring_from_env(env, resolve=no_dns)


WIRING_KEYS = (
    "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
    "SLURM_STEP_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_STEP_NUM_NODES",
    "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS", "SLURM_TASKS_PER_NODE",
    "SLURM_STEP_TASKS_PER_NODE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
    "SLURM_GTIDS", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_TOPOLOGY_ADDR",
)


def test_the_bare_launcher_sets_what_srun_set_in_the_capture(
    task_envs: list[dict[str, str]],
) -> None:
    layout = block_layout(4, 2)
    for placement, captured in zip(layout, task_envs, strict=True):
        ours = task_environment({"SLURM_STALE": "x", "HOME": "/root"}, placement, layout,
                                ["n1", "n2"], job_id=3)
        assert {k: ours[k] for k in WIRING_KEYS} == {k: captured[k] for k in WIRING_KEYS}
        assert "SLURM_STALE" not in ours and ours["HOME"] == "/root"
        assert "SLURM_RESTART_COUNT" not in ours  # only a requeued job has it


def test_block_layout_fills_a_node_before_the_next() -> None:
    assert [(p.node_index, p.local_id) for p in block_layout(5, 2)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    with pytest.raises(ValueError):
        block_layout(1, 2)


def test_the_launchers_exit_code_is_the_highest_task_code() -> None:
    assert exit_code([0, 0]) == 0
    assert exit_code([0, 3, 1]) == 3
    assert exit_code([0, -9]) == 137  # SIGKILL
