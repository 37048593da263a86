"""``--no-kill`` (-k) under a node failure: the job shrinks instead of ending.

Measured on real Slurm 22.05.8 (the reference cluster): ``sbatch -N2 -w n[1-2] -k``
running ``srun -N2 sleep 20`` when ``scontrol update nodename=n2 state=down``:

* the job stays RUNNING on n1 (``NumNodes=1 NumCPUs=1``, ``TRES=cpu=1,...,node=1``;
  StartTime unchanged); slurmctld logs ``Removing failed node n2 from JobId=3``;
* the step spanning n2 is killed: srun prints ``srun: error: Node failure on n2``,
  ``srun: error: n1: task 0: Killed`` (and n2's task line when it comes first),
  ``srun: Force Terminated StepId=3.0`` and exits 137;
* a new ``srun -N1`` step runs on n1; ``srun -N2`` waits "step creation temporarily
  disabled, retrying (Requested nodes are busy)" until the job ends, because the batch
  environment still says ``SLURM_JOB_NUM_NODES=2``/``SLURM_JOB_NODELIST=n[1-2]``;
* sacct: ``3 RESIZING n[1-2]``, ``3.batch RESIZING n1``, ``3.0 RESIZING n[1-2]`` (ended
  at the failure), then ``3 COMPLETED n1`` from the failure on, with the later steps.

Without ``-k`` the same failure ends the whole allocation: a requeue-able batch job
goes back to PENDING (its attempt NODE_FAIL in sacct), a ``--no-requeue`` one ends
NODE_FAIL (tests/minislurm/ctld/nodes/test_node_failure.py,
tests/minislurm/ctld/test_scenarios_realslurm.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from minicluster import MiniCluster, srun_works

from minislurm.sim import Cluster

SCRIPT = """#!/bin/bash
srun -N2 sleep 60; echo "step0 rc=$?"
srun -N1 hostname; echo "step1 rc=$?"
echo "env $SLURM_JOB_NUM_NODES $SLURM_JOB_NODELIST"
"""


@pytest.fixture(scope="module")
def wallclock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniCluster]:
    if not srun_works():
        pytest.skip("minislurm srun is not available yet")
    mini = MiniCluster(tmp_path_factory.mktemp("nokill"))
    mini.start_or_skip()
    try:
        yield mini
    finally:
        assert mini.stop() == []


def _sacct(c: MiniCluster | Cluster, job_id: int) -> list[str]:
    cmd = f"sacct -D -j {job_id} -n -P -o JobID,State,ExitCode,NodeList"
    out = c.run(cmd).stdout if isinstance(c, Cluster) else c.run(cmd, timeout=30).stdout
    return out.splitlines()


def test_with_no_kill_the_job_runs_on_and_new_steps_use_the_survivors(
    wallclock: MiniCluster,
) -> None:
    c = wallclock
    work = c.work_dir / "k"
    work.mkdir(parents=True)
    (work / "job.sh").write_text(SCRIPT)
    res = c.run(["sbatch", "--parsable", "-N2", "-w", "n[1-2]", "-k", "-o", "out.txt",
                 "job.sh"], cwd=work, timeout=30)
    assert res.rc == 0, res.stderr
    job_id = int(res.stdout.strip())
    try:
        c_wait(lambda: _step_running(c, job_id), "step 0 to run")
        down = c.run(["scontrol", "update", "nodename=n2", "state=down", "reason=drill"],
                     timeout=30)
        assert down.rc == 0, down.stderr
        assert c.wait_job(job_id, timeout=120) == "COMPLETED"
    finally:
        c.run(["scontrol", "update", "nodename=n2", "state=resume"], timeout=30)
    text = (work / "out.txt").read_text()
    lines = text.splitlines()
    assert lines[0] == "srun: error: Node failure on n2", text
    assert "srun: error: n1: task 0: Killed" in lines, text
    assert "step0 rc=137" in lines and "step1 rc=0" in lines, text
    # after the task lines, before the script's next line (22.05.8 with -k)
    force = lines.index(f"srun: Force Terminated StepId={job_id}.0")
    assert lines.index("srun: error: n1: task 0: Killed") < force < lines.index(
        "step0 rc=137"), text
    # the step ran on the survivor; the batch environment was not updated
    assert lines[-1] == "env 2 n[1-2]", text
    show = c.job_records(job_id)[0]
    assert (show["NodeList"], show["NumNodes"], show["NumCPUs"]) == ("n1", "1", "1"), show
    assert show["TRES"].startswith("cpu=1,mem=1000M,node=1,billing=1"), show
    assert _sacct(c, job_id) == [
        f"{job_id}|RESIZING|0:0|n[1-2]", f"{job_id}.batch|RESIZING|0:0|n1",
        f"{job_id}.0|RESIZING|0:0|n[1-2]",
        f"{job_id}|COMPLETED|0:0|n1", f"{job_id}.1|COMPLETED|0:0|n1"]


def _step_running(c: MiniCluster, job_id: int) -> bool:
    out = c.run(["squeue", "-s", "-h", "-o", "%i", "-j", str(job_id)], timeout=30).stdout
    return f"{job_id}.0" in out.split()


def c_wait(predicate: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    import time
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


# ----- the simulated clock ------------------------------------------------------------
SIM_SCRIPT = """#!/bin/bash
srun -N2 sleep 100
srun -N1 sleep 10
"""


@pytest.mark.parametrize("no_kill", [True, False])
def test_on_the_simulated_clock(captures: object, no_kill: bool) -> None:
    from pathlib import Path
    c = Cluster(Path(str(captures)) / "slurm.conf")
    try:
        args = ["-N2", "-w", "n[1-2]", "--no-requeue", *(["-k"] if no_kill else [])]
        jid = c.sbatch(SIM_SCRIPT, *args)
        c.advance(50)
        assert c.run("scontrol update nodename=n2 state=down reason=drill").returncode == 0
        c.advance(1)
        squeue = c.run(f"squeue -h -j {jid} -o '%T %D %N'").stdout.strip()
        if not no_kill:
            assert squeue == ""
            assert _sacct(c, jid)[0] == f"{jid}|NODE_FAIL|0:0|n[1-2]"
            return
        assert squeue == "RUNNING 1 n1"
        c.wait_job(jid)
        rows = _sacct(c, jid)
        assert rows[:3] == [f"{jid}|RESIZING|0:0|n[1-2]", f"{jid}.batch|RESIZING|0:0|n1",
                            f"{jid}.0|RESIZING|0:0|n[1-2]"]
        assert rows[3:] == [f"{jid}|COMPLETED|0:0|n1", f"{jid}.1|COMPLETED|0:0|n1"]
    finally:
        c.close()


def test_the_seconds_before_and_after_are_charged_at_their_sizes(captures: object) -> None:
    """Fair share: 2 CPUs x 50 s before the failure, 1 CPU x 50 s after (job_pre/
    post_resize_acctg close one record and open the next)."""
    from pathlib import Path
    text = (Path(str(captures)) / "slurm.conf").read_text()
    assert re.search(r"(?m)^PriorityType", text) is None
    c = Cluster(Path(str(captures)) / "slurm.conf")
    try:
        jid = c.sbatch("#!/bin/bash\nsleep 100\n", "-N2", "-w", "n[1-2]", "-k")
        c.advance(50)
        c.run("scontrol update nodename=n2 state=down reason=drill")
        c.wait_job(jid)
        used = c.controller.accounting_store.usage[("student", "teaching")]
        assert used["cpu"] == pytest.approx(2 * 50 + 1 * 50)
    finally:
        c.close()


def test_a_large_job_that_shrinks_keeps_nothing_of_its_old_allocation() -> None:
    """The node table keeps a large allocation's arrays from its start to its end
    (``NodeTable._Large``); a job that shrinks gives its nodes back as two new
    allocations, so what was kept for the old one is dropped, and every count comes
    back when the job ends."""
    from minislurm.sim.simulate import procs_config

    c = Cluster(procs_config(40))
    table = c.controller.table
    jid = c.sbatch("#!/bin/bash\nsleep 100\n", "-N40", "-k")
    c.advance(10)
    assert len(table._large) == 1
    assert c.run("scontrol update nodename=p0040 state=down reason=drill").returncode == 0
    c.advance(1)
    assert c.run(f"squeue -h -j {jid} -o '%T %D'").stdout.split() == ["RUNNING", "39"]
    assert table._large == {}
    c.advance(200)
    assert c.run(f"squeue -h -j {jid}").stdout == ""
    assert table.free_cpu.tolist() == table.cpus.tolist() and not table.njobs.any()
    table.check()
