"""The real-Slurm harness itself: its configuration is the reference's, the
cluster it starts looks like the reference cluster, it reports why it cannot
start, it leaves no process behind, and the differential helper returns a
job's files in the captures' terms."""

from __future__ import annotations

import itertools
import re
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from captures import load_case
from realslurm import HarnessUnavailable, RealSlurm, harness
from realslurm.conf import ClusterConfig, gres_conf, slurm_conf
from realslurm.differential import parse_env, run_batch
from realslurm.normalize import drop_step_waits, mask_volatile, to_reference
from realslurm.ports import BLOCK_SIZE, REFERENCE_PORTS, choose_ports, worker_range
from realslurm.replay import case_dir, replay_case

from course.ddp.wiring import master_port

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "realslurm"


def test_templates_render_the_reference_configuration(captures: Path) -> None:
    """With /srv/slurm-ref and the reference ports, the templates give the
    captured slurm.conf and gres.conf byte for byte."""
    reference = ClusterConfig.reference()
    assert slurm_conf(reference) == (captures / "slurm.conf").read_text()
    assert gres_conf(reference) == (captures / "gres.conf").read_text()


def test_ports_avoid_ephemeral_and_ddp_ports_and_each_xdist_worker_has_its_own() -> None:
    """Clusters started side by side (pytest-xdist workers gw0..) draw their port blocks
    from disjoint slices, none among the kernel's ephemeral ports or the DDP example's
    rendezvous ports (so a job's MASTER_PORT never meets a daemon's port)."""
    ephemeral_low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ddp = {master_port(job) for job in range(10_000)}
    slices = [worker_range(f"gw{k}") for k in range(8)]
    assert all(a_high <= b_low for (_, a_high), (b_low, _) in itertools.pairwise(slices))
    for low, high in [*slices, worker_range("")]:
        assert high - low > 100 * BLOCK_SIZE and high <= ephemeral_low
        assert not ddp & set(range(low, high))
    ports = choose_ports()
    assert worker_range()[0] <= ports.ctld < ports.nodes[-1] < worker_range()[1]


BUSY = "(Requested nodes are busy)"


def test_drop_step_waits_removes_whole_waits_only() -> None:
    """srun's wait for a step (launch.c: ``temporarily disabled`` on the first failed
    try, ``still disabled`` on each later one, ``Step created`` at the end) goes as a
    whole, however many tries; a broken or foreign block stays to fail the comparison."""
    first = f"srun: Job 6 step creation temporarily disabled, retrying {BUSY}\n"
    still = f"srun: Job 6 step creation still disabled, retrying {BUSY}\n"
    created = "srun: Step created for job 6\n"
    for tries in range(3):
        text = f"before\n{first}{still * tries}{created}after\n"
        assert drop_step_waits(text) == "before\nafter\n"
    assert drop_step_waits(first + created + first + still + created) == ""
    for kept in (first, first + still, still + created, created,
                 first + "srun: Step created for job 7\n",
                 first + "task output\n" + created):
        assert drop_step_waits(kept) == kept


def test_without_accounting_only_the_storage_lines_change(captures: Path) -> None:
    lines = slurm_conf(
        ClusterConfig(Path("/srv/slurm-ref"), REFERENCE_PORTS, accounting=False)
    ).splitlines()
    ref = (captures / "slurm.conf").read_text().splitlines()
    changed = [(a, b) for a, b in zip(ref, lines, strict=True) if a != b]
    assert changed == [
        (
            "AccountingStorageType=accounting_storage/slurmdbd",
            "AccountingStorageType=accounting_storage/none",
        ),
        ("AccountingStorageTRES=gres/gpu", "# AccountingStorageTRES=gres/gpu needs slurmdbd"),
    ]


def test_not_being_root_or_missing_binaries_are_reasons_to_skip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """start() refuses before touching anything, saying why (the fixture's skip reason)."""
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    real_which = harness.shutil.which
    monkeypatch.setattr(
        harness.shutil,
        "which",
        lambda name, path=None: None if name == "slurmdbd" else real_which(name),
    )
    with pytest.raises(HarnessUnavailable) as err:
        RealSlurm(tmp_path / "never").start()
    assert str(err.value).startswith(
        "needs root (SlurmUser=root, mknod); running as uid 1000; missing binaries: slurmdbd"
    )
    assert not (tmp_path / "never").exists()


@pytest.mark.realslurm
def test_idle_cluster_looks_like_the_reference(real_slurm: RealSlurm) -> None:
    """c2's ``sinfo; sinfo -N -l; squeue; scontrol show partition; show node n1``.

    One difference between two real clusters: ``sinfo -N -l`` lists a node's
    partitions in no stable order (capture: gpu, short, debug*; a fresh slurmctld
    here: debug*, gpu, short; after restarting it: debug*, short, gpu), so that
    block is compared as sorted lines. Without
    accounting (MINISLURM_REALSLURM_ACCOUNTING=0) no TRES lists gres/gpu."""
    real_slurm.cancel_all()
    case = load_case("c2_formats_and_reasons", "00_idle_views")
    got = replay_case(real_slurm, case, case_dir(real_slurm, "c2_formats_and_reasons"))
    assert real_slurm.ports is not None
    mine = to_reference(got.stdout, root=real_slurm.root, ports=real_slurm.ports)
    theirs = mask_volatile(case.out)
    if not real_slurm.accounting:
        theirs = re.sub(r",gres/gpu=\d+", "", theirs)
    assert (sort_second_block(mine), got.stderr, got.rc) == (
        sort_second_block(theirs),
        case.err,
        case.rc,
    )


def sort_second_block(text: str) -> str:
    """The output with the lines of its second blank-line-separated block sorted."""
    blocks = text.split("\n\n")
    blocks[1] = "\n".join(sorted(blocks[1].splitlines()))
    return "\n\n".join(blocks)


@pytest.mark.realslurm
def test_run_feeds_stdin_times_out_and_wait_job_reports_the_final_state(
    real_slurm: RealSlurm,
) -> None:
    held = real_slurm.run("sbatch -H -J fromstdin", input="#!/bin/bash\necho hi\n")
    assert (held.stdout.startswith("Submitted batch job "), held.stderr, held.rc) == (True, "", 0)
    job = held.stdout.split()[-1]
    assert real_slurm.job_records(job)[0]["JobName"] == "fromstdin"
    real_slurm.run(["scancel", job])
    assert real_slurm.wait_job(job, timeout=20) == "CANCELLED"
    failing = real_slurm.run(["sbatch", "--parsable", "--wrap", "exit 3"]).stdout.strip()
    assert real_slurm.wait_job(failing, timeout=30) == "FAILED"
    assert real_slurm.job_records(failing)[0]["ExitCode"] == "3:0"
    assert real_slurm.run("sleep 5", timeout=0.5).rc == 124


@pytest.mark.realslurm
def test_fake_gpus_are_nvidia_character_devices(real_slurm: RealSlurm) -> None:
    for minor in range(4):
        st = (real_slurm.root / "dev" / f"nvidia{minor}").stat()
        assert stat.S_ISCHR(st.st_mode)
        assert (st.st_rdev >> 8, st.st_rdev & 0xFF) == (195, minor)


@pytest.mark.realslurm
def test_scripts_realslurm_runs_a_second_cluster_alongside_and_stops_it_clean(
    real_slurm: RealSlurm, tmp_path: Path
) -> None:
    """``scripts/realslurm start|status|env|stop`` with ``--dir``: another cluster on
    other ports next to the session's; stop ends its daemons and a running job."""
    root = tmp_path / "cli"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SCRIPT), *args, "--dir", str(root), "--no-accounting"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    started = cli("start")
    try:
        assert (started.stdout, started.returncode) == (
            f"export SLURM_CONF={root}/etc/slurm.conf\n",
            0,
        ), started.stderr
        assert cli("env").stdout == started.stdout
        other = RealSlurm.attach(root)
        assert other.ports is not None and real_slurm.ports is not None
        assert other.ports.ctld != real_slurm.ports.ctld
        status = cli("status")
        assert status.returncode == 0 and status.stdout.count(" idle") == 10
        host = socket.gethostname()
        assert other.run("srun -N2 -l hostname | sort").stdout == f"0: {host}\n1: {host}\n"
        other.run("sbatch --wrap 'sleep 60'")
        wait = "for i in $(seq 50); do squeue -h -t R | grep -q . && break; sleep 0.2; done"
        assert other.run(f"{wait}; squeue -h -o %T").stdout == "RUNNING\n"
        assert len(other.pids()) >= 8  # munged, slurmctld, 4 slurmd, slurmstepd, the job
    finally:
        stopped = cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert RealSlurm.attach(root).pids() == []
    assert (cli("status").stdout, cli("status").returncode) == ("not running\n", 1)
    assert real_slurm.run(["sinfo", "-h", "-o", "%T %D", "-p", "debug"]).stdout == "idle 4\n"


@pytest.mark.realslurm
def test_a_daemon_that_cannot_start_gives_the_reason_and_its_log(tmp_path: Path) -> None:
    """slurmctld cannot bind its port: HarnessUnavailable quotes its log; nothing is left."""
    if harness.missing_prerequisites(False):
        pytest.skip("; ".join(harness.missing_prerequisites(False)))
    ports = choose_ports()
    with socket.socket() as blocker:
        blocker.bind(("", ports.ctld))
        cluster = RealSlurm(tmp_path / "broken", accounting=False, ports=ports)
        with pytest.raises(HarnessUnavailable) as err:
            cluster.start(timeout=15)
    assert "slurmctld" in str(err.value)
    assert "--- slurmctld.log:" in str(err.value)
    assert cluster.pids() == []


@pytest.mark.realslurm
def test_run_batch_returns_the_files_in_the_captures_terms(
    real_slurm: RealSlurm, captures: Path
) -> None:
    """a2's job.sh through the differential helper, its id mapped to the capture's (5)."""
    if not real_slurm.accounting:
        pytest.skip("without slurmdbd jobs have no SLURM_JOB_ACCOUNT/QOS, unlike the capture")
    folder = "a2_sbatch_env"
    real = run_batch(
        real_slurm, (captures / folder / "job.sh").read_text(), folder=folder, as_job_id=5
    )
    assert (real.state, real.submit.stdout, real.submit.rc) == (
        "COMPLETED",
        "Submitted batch job 5\n",
        0,
    )
    expected = mask_volatile((captures / folder / "batch.env").read_text())
    assert real.files["batch.env"] == expected
    assert parse_env(real.files["step.3.env"])["SLURM_PROCID"] == "3"
    assert real.record["JobName"] == "job.sh"
    assert sorted(real.files) == [
        "batch.env",
        "batch.fullenv",
        "slurm-5.out",
        *(f"step.{t}.{kind}" for t in range(4) for kind in ("env", "fullenv")),
    ]
