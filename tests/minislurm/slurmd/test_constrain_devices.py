"""cgroup.conf ``ConstrainDevices=yes`` (with ``TaskPlugin=task/cgroup``): GPUs renumbered.

Slurm 22.05's gres plugins (src/plugins/gres/common/gres_common.c
``common_gres_set_env``) build two lists for the GPUs a job or step holds on a
node: the *global* list (the node's indices) goes to ``SLURM_JOB_GPUS`` /
``SLURM_STEP_GPUS``, the *local* list to ``CUDA_VISIBLE_DEVICES``,
``GPU_DEVICE_ORDINAL``, ``ROCR_VISIBLE_DEVICES`` and ``ZE_AFFINITY_MASK``. The local
list is the global one unless ``gres_use_local_device_index()`` (src/common/gres.c) is
true -- TaskPlugin contains ``cgroup`` and cgroup.conf has ``ConstrainDevices=yes`` --
in which case it counts the held devices from 0 (the device cgroup hides the others,
so the CUDA runtime numbers what is left from 0). The reference cluster (task/none,
no cgroups) keeps the global numbers: tests/minislurm/select/test_gpu_placement.py.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from minicluster import MiniCluster, srun_works

from minislurm.conf import CgroupConfig, load_config, parse_cgroup_conf
from minislurm.ctld.step_mgr import plan_step
from minislurm.errors import ConfigError
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.srun import parse_srun
from minislurm.sim import Cluster
from minislurm.slurmd.context import StepContext, job_context
from minislurm.slurmd.env import batch_environment, step_environments
from minislurm.slurmd.gpu import gpu_environment, task_gpu_environment

CGROUP_CONF = "CgroupPlugin=autodetect\nConstrainCores=yes\nConstrainDevices=yes\n"
TASK_NONE = "TaskPlugin=task/none"
TASK_CGROUP = "TaskPlugin=task/affinity,task/cgroup"


def test_cgroup_conf_keys_and_slurms_words_for_bad_ones() -> None:
    conf = parse_cgroup_conf(CGROUP_CONF + "# a comment\nAllowedRAMSpace=98.5\n", "/e/cgroup.conf")
    assert (conf.constrain_devices, conf.constrain_cores, conf.constrain_ram_space) == (
        True, True, False)
    assert dict(conf.settings)["AllowedRAMSpace"] == 98.5
    assert parse_cgroup_conf("constraindevices=no\n").constrain_devices is False
    with pytest.raises(ConfigError) as info:
        parse_cgroup_conf("ConstrainGPUs=yes\n", "/e/cgroup.conf")
    assert str(info.value) == (
        "error: _parse_next_key: Parsing error at unrecognized key: ConstrainGPUs\n"
        "fatal: Could not open/read/parse cgroup.conf file /e/cgroup.conf")
    with pytest.raises(ConfigError, match='"maybe" is not a valid option for "ConstrainDevices"'):
        parse_cgroup_conf("ConstrainDevices=maybe\n")


def _conf_dir(folder: Path, captures: Path, task_plugin: str, cgroup: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = (captures / "slurm.conf").read_text()
    assert TASK_NONE in text
    (folder / "slurm.conf").write_text(text.replace(TASK_NONE, task_plugin))
    shutil.copy(captures / "gres.conf", folder / "gres.conf")
    if cgroup is not None:
        (folder / "cgroup.conf").write_text(cgroup)
    return folder / "slurm.conf"


@pytest.mark.parametrize(("task_plugin", "cgroup", "local"), [
    (TASK_CGROUP, CGROUP_CONF, True),
    (TASK_CGROUP, "ConstrainCores=yes\n", False),  # devices not constrained
    (TASK_NONE, CGROUP_CONF, False),  # no task/cgroup: cgroup.conf does not matter
    (TASK_CGROUP, None, False),  # no cgroup.conf: the defaults
])
def test_local_device_index_needs_task_cgroup_and_constrain_devices(
    tmp_path: Path, captures: Path, task_plugin: str, cgroup: str | None, local: bool
) -> None:
    config = load_config(_conf_dir(tmp_path, captures, task_plugin, cgroup))
    assert config.use_local_device_index is local


def test_a_bad_cgroup_conf_stops_the_daemons_only_when_a_cgroup_plugin_reads_it(
    tmp_path: Path, captures: Path
) -> None:
    bad = "ConstrainDevices=sure\n"
    assert load_config(_conf_dir(tmp_path / "none", captures, TASK_NONE, bad)).cgroup == (
        CgroupConfig())
    with pytest.raises(ConfigError, match=r"fatal: Could not open/read/parse cgroup\.conf file"):
        load_config(_conf_dir(tmp_path / "cg", captures, TASK_CGROUP, bad))


def test_visibility_counts_from_0_while_slurm_job_gpus_keeps_node_indices() -> None:
    env = gpu_environment([3, 2], scope="job", local=True)
    assert (env["CUDA_VISIBLE_DEVICES"], env["GPU_DEVICE_ORDINAL"], env["SLURM_JOB_GPUS"],
            env["SLURM_GPUS_ON_NODE"]) == ("0,1", "0,1", "2,3", "2")
    step, _ = task_gpu_environment([1, 3], [3], local=True)
    assert (step["CUDA_VISIBLE_DEVICES"], step["SLURM_STEP_GPUS"]) == ("1", "3")
    plain, _ = task_gpu_environment([1, 3], [3])
    assert plain["CUDA_VISIBLE_DEVICES"] == "3"


@pytest.fixture
def simulated(tmp_path: Path, captures: Path) -> Iterator[Cluster]:
    c = Cluster(_conf_dir(tmp_path, captures, TASK_CGROUP, CGROUP_CONF))
    yield c
    c.close()


def test_on_the_simulated_cluster_a_job_on_gpus_2_and_3_sees_0_and_1(simulated: Cluster) -> None:
    """A holder takes n1's GPUs 0 and 1; the next job gets 2 and 3 there. Its batch
    step and each task of ``srun -n2 --gpus-per-task=1`` count from 0."""
    c = simulated
    c.sbatch("#!/bin/bash\nsleep 600\n", "-w", "n1", "--gres=gpu:2", runtime=600)
    args = "-w n1 -n2 --gres=gpu:2"
    jid = c.sbatch("#!/bin/bash\nsleep 60\n", *shlex.split(args), runtime=60)
    c.advance(1)
    job = c.controller.job(jid)
    alloc = job.allocation
    assert alloc is not None and alloc.nodes[0].gpu_indices == (2, 3)
    opts = parse_sbatch([*shlex.split(args), "--wrap", "true"], env={}, cwd="/tmp").options
    ctx = job_context(opts, job_id=jid, name=job.name, partition=job.partition,
                      cluster_name=c.config.cluster_name,
                      local_device_index=c.config.use_local_device_index)
    batch = batch_environment(ctx, alloc, base_env={})
    assert (batch["CUDA_VISIBLE_DEVICES"], batch["SLURM_JOB_GPUS"]) == ("0,1", "2,3")
    sopts = parse_srun(["-n2", "--gpus-per-task=1", "env"], env=batch, cwd="/tmp").options
    plan = plan_step(jid, alloc, sopts, 0)
    step = StepContext(step_id=0, layout=plan.layout, launcher_port=40000,
                       cpus_on_node=plan.cpus_on_node, gpus=plan.gpus,
                       gpus_per_task=sopts.gpus_per_task)
    tasks = step_environments(ctx, alloc, step, base_env=batch)
    assert [(t["CUDA_VISIBLE_DEVICES"], t["GPU_DEVICE_ORDINAL"], t["SLURM_STEP_GPUS"],
             t["SLURM_JOB_GPUS"]) for t in tasks] == [("0", "0", "2", "2,3"),
                                                      ("1", "1", "3", "2,3")]


JOB = """#!/bin/bash
echo "batch $CUDA_VISIBLE_DEVICES $GPU_DEVICE_ORDINAL $SLURM_JOB_GPUS"
srun -n2 --gpus-per-task=1 bash -c \\
  'echo "task $SLURM_PROCID $CUDA_VISIBLE_DEVICES $GPU_DEVICE_ORDINAL $SLURM_STEP_GPUS"'
"""


@pytest.fixture(scope="module")
def wallclock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniCluster]:
    if not srun_works():
        pytest.skip("minislurm srun is not available yet")
    mini = MiniCluster(tmp_path_factory.mktemp("cgroup"), conf_edits=((TASK_NONE, TASK_CGROUP),),
                       etc_files={"cgroup.conf": CGROUP_CONF})
    mini.start_or_skip()
    try:
        yield mini
    finally:
        assert mini.stop() == []


def test_on_the_wall_clock_tasks_see_their_gpus_renumbered(wallclock: MiniCluster) -> None:
    work = wallclock.work_dir / "constrained"
    work.mkdir(parents=True)
    holder = wallclock.run(["sbatch", "--parsable", "-w", "n1", "--gres=gpu:2", "--wrap",
                            "sleep 120"], cwd=work, timeout=60)
    assert holder.rc == 0, holder.stderr
    (work / "job.sh").write_text(JOB)
    try:
        res = wallclock.run(["sbatch", "--parsable", "--wait", "-w", "n1", "-n2",
                             "--gres=gpu:2", "-o", "out-%j.txt", "job.sh"], cwd=work, timeout=120)
        match = re.match(r"(\d+)", res.stdout)
        assert res.rc == 0 and match, (res.stdout, res.stderr)
        lines = (work / f"out-{match.group(1)}.txt").read_text().splitlines()
    finally:
        wallclock.run(["scancel", holder.stdout.strip()], timeout=30)
    assert lines[0] == "batch 0,1 0,1 2,3"
    assert sorted(lines[1:]) == ["task 0 0 0 2", "task 1 1 1 3"]
