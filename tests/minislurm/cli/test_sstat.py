"""``sstat`` on a running step, and sacct's usage columns after it ended.

The texts below were printed by real Slurm 22.05.8 (scripts/realslurm, the reference
cluster: jobacct_gather/linux, JobAcctGatherFrequency=30) for ``sbatch -n2`` running
``srun -n2 python3 -c '<50 MB + a busy loop>'``:

* ``sstat -j 6.0 -o JobID,MaxRSS,MaxRSSNode,AveCPU,AveRSS,NTasks,TRESUsageInAve%60``:
  ``6.0  64648K  n1  00:00:05  64554K  2
  cpu=00:00:05,energy=0,fs/disk=1685855,mem=64554K,pages=0,vm+``;
* ``sstat -p -j 8.0``: TRESUsageInMaxNode ``cpu=n1,energy=n1,fs/disk=n1,mem=n1,pages=n1,
  vmem=n1``, TRESUsageInMaxTask ``cpu=00:00:00,fs/disk=0,mem=1,pages=0,vmem=0``,
  TRESUsageOutAve ``energy=0,fs/disk=1714``;
* ``sstat -j 6.0 --noconvert -o JobID,MaxRSS``: ``66199552`` (bytes);

and the errors: no -j (exit 1), -j abc (exit 1), a bad field (exit 1), an unknown job,
a job without running steps, a step that does not run (exit 0, after the header).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from minicluster import MiniCluster, srun_works

from minislurm.cli.format.sstat import convert_num, usage_value
from minislurm.common.jobacct import TaskUsage, aggregate, gather_frequency, read_task_usage
from minislurm.sim import Cluster

#: ``sstat -j J`` header of real 22.05.8 (the default STAT_FIELDS).
REAL_HEADER = (
    'JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxR'
    'SSNode MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask   AvePages    '
    ' MinCPU MinCPUNode MinCPUTask     AveCPU   NTasks AveCPUFreq ReqCPUFreqMin ReqCP'
    'UFreqMax ReqCPUFreqGov ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTa'
    'sk  AveDiskRead MaxDiskWrite MaxDiskWriteNode MaxDiskWriteTask AveDiskWrite TRES'
    'UsageInAve TRESUsageInMax TRESUsageInMaxNode TRESUsageInMaxTask TRESUsageInMin T'
    'RESUsageInMinNode TRESUsageInMinTask TRESUsageInTot TRESUsageOutAve TRESUsageOut'
    'Max TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutMin TRESUsageOutMinNode '
    'TRESUsageOutMinTask TRESUsageOutTot \n'
    '------------ ---------- -------------- -------------- ---------- ---------- ----'
    '------ ---------- ---------- -------- ------------ -------------- ---------- ---'
    '------- ---------- ---------- ---------- -------- ---------- ------------- -----'
    '-------- ------------- -------------- ------------ --------------- -------------'
    '-- ------------ ------------ ---------------- ---------------- ------------ ----'
    '---------- -------------- ------------------ ------------------ -------------- -'
    '----------------- ------------------ -------------- --------------- ------------'
    '--- ------------------- ------------------- --------------- ------------------- '
    '------------------- --------------- \n'
)
#: ``sstat -e``.
REAL_HELPFORMAT = (
    'AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n'
    'AvePages            AveRSS              AveVMSize           ConsumedEnergy     \n'
    'ConsumedEnergyRaw   JobID               MaxDiskRead         MaxDiskReadNode    \n'
    'MaxDiskReadTask     MaxDiskWrite        MaxDiskWriteNode    MaxDiskWriteTask   \n'
    'MaxPages            MaxPagesNode        MaxPagesTask        MaxRSS             \n'
    'MaxRSSNode          MaxRSSTask          MaxVMSize           MaxVMSizeNode      \n'
    'MaxVMSizeTask       MinCPU              MinCPUNode          MinCPUTask         \n'
    'Nodelist            NTasks              Pids                ReqCPUFreq         \n'
    'ReqCPUFreqMin       ReqCPUFreqMax       ReqCPUFreqGov       TRESUsageInAve     \n'
    'TRESUsageInMax      TRESUsageInMaxNode  TRESUsageInMaxTask  TRESUsageInMin     \n'
    'TRESUsageInMinNode  TRESUsageInMinTask  TRESUsageInTot      TRESUsageOutAve    \n'
    'TRESUsageOutMax     TRESUsageOutMaxNode TRESUsageOutMaxTask TRESUsageOutMin    \n'
    'TRESUsageOutMinNode TRESUsageOutMinTask TRESUsageOutTot    \n'
)
#: ``sstat --help``.
REAL_HELP = (
    'sstat [<OPTION>] -j <job(.stepid)>                                          \n'
    '    Valid <OPTION> values are:                                              \n'
    '      -a, --allsteps:                                                       \n'
    '                   Print all steps for the given job(s) when no step is     \n'
    '                   specified.                                               \n'
    '      -e, --helpformat:                                                     \n'
    '\t           Print a list of fields that can be specified with the    \n'
    "\t           '--format' option                                        \n"
    '     -h, --help:   Print this description of use.                           \n'
    '     -i, --pidformat:                                                       \n'
    '                   Predefined format to list the pids running for each      \n'
    '                   job step.  (JobId,Nodes,Pids)                            \n'
    '     -j, --jobs:                                                            \n'
    '\t           Format is <job(.step)>. Stat this job step               \n'
    '                   or comma-separated list of job steps. This option is     \n'
    '                   required.  The step portion will default to the lowest   \n'
    '                   numbered (not batch, extern, etc) step running if not    \n'
    '                   specified, unless the --allsteps flag is set where not   \n'
    '                   specifying a step will result in all running steps       \n'
    "                   to be displayed. A step id of 'batch' will display the   \n"
    "                   information about the batch step. A step id of 'extern'  \n"
    '                   will display the information about the extern step       \n'
    '                   when using PrologFlags=contain.                          \n'
    '     -n, --noheader:                                                        \n'
    '\t           No header will be added to the beginning of output.      \n'
    '                   The default is to print a header.                        \n'
    "     --noconvert:  Don't convert units from their original type             \n"
    "\t\t   (e.g. 2048M won't be converted to 2G).                   \n"
    '     -o, --format:                                                          \n'
    '\t           Comma separated list of fields. (use "--helpformat"    \n'
    '                   for a list of available fields).                         \n'
    "     -p, --parsable: output will be '|' delimited with a '|' at the end     \n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end \n"
    '     --usage:      Display brief usage message.                             \n'
    '     -v, --verbose:                                                         \n'
    '\t           Primarily for debugging purposes, report the state of    \n'
    '                   various variables during processing.                     \n'
    '     -V, --version: Print version.                                          \n'
    '\n'
)

TWO_TASKS = {
    (0, "n1"): TaskUsage(rss_kb=64460, max_rss_kb=64460, vsize_kb=67772, max_vsize_kb=67772,
                         cpu_seconds=5.4, read_bytes=1685855, write_bytes=1714),
    (1, "n1"): TaskUsage(rss_kb=64648, max_rss_kb=64648, vsize_kb=67772, max_vsize_kb=67772,
                         cpu_seconds=5.2, read_bytes=1685855, write_bytes=1714),
}


def test_aggregate_names_the_max_and_min_tasks_and_averages_like_jobacctinfo() -> None:
    s = aggregate(TWO_TASKS, nodelist="n1")
    assert (s.ntasks, s.rss.max, s.rss.max_task, s.rss.max_node) == (2, 64648, 1, "n1")
    assert s.ave(s.rss) == 64554  # (64460 + 64648) / 2, as real AveRSS 64554K
    assert (s.cpu.min, s.cpu.min_task) == (5.2, 1)
    row = {f: usage_value(s, f, 0) for f in (
        "MaxRSS", "MaxRSSNode", "MaxRSSTask", "AveRSS", "AveCPU", "MinCPUTask", "NTasks",
        "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode", "TRESUsageInMaxTask",
        "TRESUsageInTot", "TRESUsageOutAve", "TRESUsageOutMaxTask", "ReqCPUFreqMin",
        "MaxDiskRead")}
    assert row == {
        "MaxRSS": "64648K", "MaxRSSNode": "n1", "MaxRSSTask": "1", "AveRSS": "64554K",
        "AveCPU": "00:00:05", "MinCPUTask": "1", "NTasks": "2",
        "TRESUsageInAve": "cpu=00:00:05,energy=0,fs/disk=1685855,mem=64554K,pages=0,vmem=67772K",
        "TRESUsageInMax": "cpu=00:00:05,energy=0,fs/disk=1685855,mem=64648K,pages=0,vmem=67772K",
        "TRESUsageInMaxNode": "cpu=n1,energy=n1,fs/disk=n1,mem=n1,pages=n1,vmem=n1",
        "TRESUsageInMaxTask": "cpu=00:00:00,fs/disk=0,mem=1,pages=0,vmem=0",
        "TRESUsageInTot": "cpu=00:00:10,energy=0,fs/disk=3371710,mem=129108K,pages=0,"
                          "vmem=135544K",
        "TRESUsageOutAve": "energy=0,fs/disk=1714", "TRESUsageOutMaxTask": "fs/disk=0",
        "ReqCPUFreqMin": "Unknown", "MaxDiskRead": "1685855"}
    assert usage_value(s, "ReqCPUFreqMin", "batch") == "0"
    assert usage_value(s, "MaxRSS", 0, noconvert=True) == "66199552"


def test_units_move_up_only_for_exact_multiples() -> None:
    assert convert_num(64648, 1) == "64648K"
    assert convert_num(221236, 1) == "221236K"
    assert convert_num(2048, 1) == "2M"
    assert convert_num(1536, 1) == "1.50M"
    assert convert_num(0, 1) == "0"
    assert convert_num(64648, 1, noconvert=True) == "66199552"


def test_gather_frequency_reads_the_task_interval() -> None:
    assert gather_frequency(None) == 30.0
    assert gather_frequency("30") == 30.0
    assert gather_frequency("energy=5,task=10") == 10.0


def test_read_task_usage_finds_tasks_by_their_environment(tmp_path: Path) -> None:
    """A fake /proc with one task of step 7.0, one process of 7's batch step, another job,
    and another cluster's job 7."""
    def proc(pid: int, env: dict[str, str], rss: int) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in env.items()))
        (d / "stat").write_text(f"{pid} (python3) R 1 1 1 0 -1 0 0 0 3 0 250 50 0 0 20 0")
        (d / "status").write_text(f"Name:\tpython3\nVmSize:\t  9000 kB\nVmRSS:\t  {rss} kB\n")
        (d / "io").write_text("rchar: 100\nwchar: 7\n")
    here = {"SLURM_CONF": "/here/slurm.conf"}  # slurmd sets it for every job
    proc(101, {"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_PROCID": "1",
               "SLURMD_NODENAME": "n2", **here}, 5000)
    proc(102, {"SLURM_JOB_ID": "7", "SLURMD_NODENAME": "n1", **here}, 1200)
    proc(103, {"SLURM_JOB_ID": "8", "SLURM_STEP_ID": "0", **here}, 1)
    # the step's, but no task's (no SLURM_PROCID / SLURMD_NODENAME): not a task of its own
    proc(104, {"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURMD_NODENAME": "n2", **here}, 9)
    proc(105, {"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_PROCID": "0", **here}, 9)
    # job 7's step 0 on another cluster of the same host (its own slurm.conf, same ids)
    proc(106, {"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_PROCID": "0",
               "SLURMD_NODENAME": "n1", "SLURM_CONF": "/elsewhere/slurm.conf"}, 9)
    tasks, pids = read_task_usage(7, 0, tmp_path, "/here/slurm.conf")
    assert pids == (101,)
    ticks = 300 / __import__("os").sysconf("SC_CLK_TCK")
    assert tasks == {(1, "n2"): TaskUsage(rss_kb=5000, max_rss_kb=5000, vsize_kb=9000,
                                           max_vsize_kb=9000, pages=3, max_pages=3,
                                           cpu_seconds=ticks, read_bytes=100, write_bytes=7)}
    batch, _ = read_task_usage(7, "batch", tmp_path, "/here/slurm.conf")
    assert list(batch) == [(0, "n1")]
    assert read_task_usage(7, 0, tmp_path, "/elsewhere/slurm.conf")[1] == (106,)
    assert read_task_usage(7, 0, tmp_path)[1] == (101, 106)  # no conf known: any cluster


@pytest.fixture
def simulated(captures: Path) -> Iterator[Cluster]:
    c = Cluster(captures / "slurm.conf")
    yield c
    c.close()


def test_header_helpformat_and_help_are_real_sstats(simulated: Cluster) -> None:
    jid = simulated.sbatch("#!/bin/bash\nsrun -n2 sleep 100\n", "-n2")
    simulated.advance(5)
    out = simulated.run(f"sstat -j {jid}").stdout.splitlines()
    assert "\n".join(out[:2]) + "\n" == REAL_HEADER
    assert simulated.run("sstat -e").stdout == REAL_HELPFORMAT
    assert simulated.run("sstat --help").stdout == REAL_HELP


def test_on_the_simulated_clock_a_step_shows_its_tasks_and_no_usage(simulated: Cluster) -> None:
    jid = simulated.sbatch("#!/bin/bash\nsrun -n2 sleep 100\n", "-n2")
    simulated.advance(5)
    res = simulated.run(f"sstat -a -P -n -j {jid} -o JobID,NTasks,Nodelist,MaxRSS,AveCPU")
    assert res.stdout.splitlines() == [f"{jid}.batch|1|n1|0|00:00:00",
                                       f"{jid}.0|2|n1|0|00:00:00"]
    assert simulated.run(f"sstat -p -n -j {jid} -o JobID,NTasks").stdout == f"{jid}.0|2|\n"


@pytest.mark.parametrize(("argv", "rc", "err"), [
    ("sstat", 1, "sstat: error: You didn't give me any jobs to stat.\n"),
    ("sstat -j abc", 1, "sstat: fatal: Bad job/step specified: abc\n"),
    ("sstat -j 1 -o JobID,Bogus", 1, 'sstat: error: Invalid field requested: "Bogus"\n'),
    ("sstat -o help -j 1", 1, 'sstat: error: Invalid field requested: "help"\n'),
    ("sstat -x", 1, "sstat: invalid option -- 'x'\n"),
    ("sstat -n -j 999", 0, "sstat: error: couldn't get steps for job 999\n"),
])
def test_errors_in_sstats_words(simulated: Cluster, argv: str, rc: int, err: str) -> None:
    res = simulated.run(argv)
    assert (res.returncode, res.stderr, res.stdout) == (rc, err, "")


def test_a_pending_job_and_a_step_that_does_not_run(simulated: Cluster) -> None:
    held = simulated.sbatch("#!/bin/bash\nsleep 10\n", "--hold")
    res = simulated.run(f"sstat -n -j {held}")
    assert (res.returncode, res.stderr) == (0, f"sstat: error: No steps running for job {held}\n")
    jid = simulated.sbatch("#!/bin/bash\nsrun sleep 100\n")
    simulated.advance(2)
    res = simulated.run(f"sstat -n -j {jid}.7")
    assert res.stderr == f"sstat: error: StepId={jid}.7 not found running.\n"


JOB = """#!/bin/bash
srun -n2 python3 -c '
import time
block = bytearray(50 * 1024 * 1024)
end = time.time() + 6
while time.time() < end or time.process_time() < 1.5:  # 6 s, and 1.5 s of CPU however loaded
    pass
'
"""


@pytest.fixture(scope="module")
def wallclock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MiniCluster]:
    if not srun_works():
        pytest.skip("minislurm srun is not available yet")
    mini = MiniCluster(tmp_path_factory.mktemp("sstat"))
    mini.start_or_skip()
    try:
        yield mini
    finally:
        assert mini.stop() == []


#: A memory amount as sacct and sstat print it: KB converted up while exact
#: (``convert_num_unit2`` with ``CONVERT_NUM_UNIT_EXACT``): ``64648K``, but ``21M`` for
#: 21504K (seen in CI) and ``2.50G``.
AMOUNT = r"\d+(?:\.\d\d)?[KMGT]"


def kib(amount: str) -> float:
    """``AMOUNT`` in KB."""
    assert re.fullmatch(AMOUNT, amount), amount
    return float(amount[:-1]) * 1024 ** "KMGT".index(amount[-1])


def test_on_the_wall_clock_sstat_reads_the_tasks_and_sacct_keeps_it(
    wallclock: MiniCluster,
) -> None:
    c = wallclock
    work = c.work_dir / "sstat"
    work.mkdir(parents=True)
    (work / "job.sh").write_text(JOB)
    res = c.run(["sbatch", "--parsable", "-n2", "-o", "out.txt", "job.sh"], cwd=work, timeout=30)
    assert res.rc == 0, res.stderr
    jid = int(res.stdout.strip())
    fields = "JobID,MaxRSS,MaxRSSNode,AveCPU,AveRSS,NTasks,TRESUsageInAve,TRESUsageInMax"
    row: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = c.run(["sstat", "-P", "-n", "-j", f"{jid}.0", "-o", fields], timeout=30)
        row = out.stdout.strip().split("|")
        # before the tasks' first poll, sstat prints the step's amounts as 0 (no unit)
        if len(row) == 8 and re.fullmatch(AMOUNT, row[1]) and kib(row[1]) > 50 * 1024:
            break
        time.sleep(0.5)
    assert row[0] == f"{jid}.0" and row[2] == "n1" and row[5] == "2", row
    assert kib(row[1]) > 50 * 1024 and kib(row[4]) > 50 * 1024, row  # 50 MB each
    assert re.fullmatch(rf"cpu=\d\d:\d\d:\d\d,energy=0,fs/disk=\d+,mem={AMOUNT},pages=\d+,"
                        rf"vmem={AMOUNT}", row[6]), row
    assert f"mem={row[1]}" in row[7], row
    assert c.wait_job(jid, timeout=60) == "COMPLETED"
    sacct = c.run(["sacct", "-j", f"{jid}.0", "-P", "-n", "-o",
                   "JobID,MaxRSS,NTasks,AveCPU,TRESUsageInMax"], timeout=30).stdout.split("|")
    assert sacct[0] == f"{jid}.0" and kib(sacct[1]) > 50 * 1024, sacct
    assert sacct[2] == "2" and sacct[3] >= "00:00:01", sacct  # two busy loops of 1.5+ s CPU
    batch = c.run(["sacct", "-j", f"{jid}.batch", "-P", "-n", "-o", "JobID,MaxRSS,NTasks"],
                  timeout=30).stdout.strip()
    assert re.fullmatch(rf"{jid}\.batch\|{AMOUNT}\|1", batch), batch  # the script and its srun
    job_line = c.run(["sacct", "-X", "-j", str(jid), "-P", "-n", "-o", "JobID,MaxRSS"],
                     timeout=30).stdout.strip()
    assert job_line == f"{jid}|", job_line  # usage is per step, as sacct shows it
    gone = c.run(["sstat", "-n", "-j", f"{jid}.0"], timeout=30)
    assert gone.stderr in (f"sstat: error: StepId={jid}.0 not found running.\n",
                           f"sstat: error: No steps running for job {jid}\n"), gone
