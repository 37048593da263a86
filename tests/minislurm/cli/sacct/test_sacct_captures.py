"""sacct's output against captures of Slurm 22.05 (c2 jobs 46-58 after the run, f3 array)."""

from __future__ import annotations

import calendar
import dataclasses

import pytest
from captures import capture_out as capture
from captures import needs_captures

from minislurm.cli.format.sacct import format_sacct, parse_fields
from minislurm.errors import SlurmError
from minislurm.job import JobRecord, StepRecord
from minislurm.states import JobState, Reason


def ts(hms: str | None) -> int | None:
    if hms is None:
        return None
    hh, mm, ss = (int(x) for x in hms.split(":"))
    return calendar.timegm((2026, 12, 2, hh, mm, ss, 0, 0, 0))


def acct(
    job_id: int,
    name: str,
    state: JobState,
    cpus: int,
    start: str | None,
    end: str,
    nodes: str,
    *,
    nnodes: int = 1,
    exit_code: int = 0,
    partition: str = "debug",
    batch: tuple[JobState, int, int, str, int] | None = None,
    cancelled_by: int | None = None,
    gpus: int = 0,
) -> JobRecord:
    """A finished job as the accounting database returns it, with its batch step."""
    tres_req = {"cpu": cpus, "mem": 1000 * cpus, "node": nnodes, "billing": cpus}
    tres_alloc = dict(tres_req, **({"gres/gpu": gpus} if gpus else {}))
    steps: tuple[StepRecord, ...] = ()
    if batch is not None:
        b_state, b_exit, b_sig, b_node, b_cpus = batch
        steps = (
            StepRecord(
                "batch",
                "batch",
                b_state,
                b_node,
                1,
                1,
                b_cpus,
                ts(start),
                ts(end),
                exit_code=b_exit,
                signal=b_sig,
                tres_alloc={
                    "cpu": b_cpus,
                    "mem": 1000 * b_cpus,
                    "node": 1,
                    **({"gres/gpu": b_cpus} if gpus else {}),
                },
            ),
        )
    return JobRecord(
        job_id=job_id,
        name=name,
        user="root",
        uid=0,
        group="root",
        gid=0,
        account="root",
        partition=partition,
        qos="normal",
        state=state,
        reason=Reason.NONE,
        submit_time=ts("13:27:37") or 0,
        start_time=ts(start),
        end_time=ts(end),
        num_cpus=cpus,
        num_nodes=nnodes,
        nodelist=nodes,
        exit_code=exit_code,
        cancelled_by=cancelled_by,
        tres_req=tres_req,
        tres_alloc=tres_alloc,
        steps=steps,
        time_limit=10,
    )


CA, CD, F, TO = JobState.CANCELLED, JobState.COMPLETED, JobState.FAILED, JobState.TIMEOUT


def c2_accounting() -> list[JobRecord]:
    return [
        acct(46, "timeout1", TO, 1, "13:27:38", "13:29:03", "n1", batch=(CA, 0, 15, "n1", 1)),
        acct(
            47,
            "bigrun",
            CA,
            12,
            "13:27:38",
            "13:29:04",
            "n[2-4]",
            nnodes=3,
            cancelled_by=0,
            gpus=12,
            batch=(CA, 0, 15, "n2", 4),
        ),
        acct(
            48,
            "wantall",
            CA,
            4,
            "13:29:04",
            "13:29:07",
            "n[1-4]",
            nnodes=4,
            cancelled_by=0,
            batch=(CA, 0, 15, "n1", 1),
        ),
        acct(49, "small", CD, 1, "13:27:44", "13:27:54", "n1", batch=(CD, 0, 0, "n1", 1)),
        acct(52, "helduser", CD, 1, "13:27:49", "13:27:59", "n1", batch=(CD, 0, 0, "n1", 1)),
        acct(53, "heldadm", CD, 1, "13:27:49", "13:27:59", "n1", batch=(CD, 0, 0, "n1", 1)),
        acct(54, "overmax", CA, 1, None, "13:29:07", "", partition="short", cancelled_by=0),
        acct(55, "toomany", CA, 5, None, "13:29:07", "", nnodes=5, cancelled_by=0),
        acct(
            56, "failer", F, 1, "13:27:42", "13:27:42", "n1", exit_code=3, batch=(F, 3, 0, "n1", 1)
        ),
        acct(
            58,
            "wantn4",
            CA,
            1,
            "13:29:04",
            "13:29:07",
            "n4",
            cancelled_by=0,
            batch=(CA, 0, 15, "n4", 1),
        ),
    ]


@needs_captures
def test_default_sacct_matches_capture() -> None:
    assert format_sacct(c2_accounting()) == capture("c2_formats_and_reasons", "25_sacct_default")


@needs_captures
def test_parsable2_custom_fields_match_capture() -> None:
    out = format_sacct(
        c2_accounting(), parsable2=True, fields="JobID,JobName,State,ExitCode,Start,End,NodeList"
    )
    assert out == capture("c2_formats_and_reasons", "29_sacct_parsable")


@needs_captures
def test_long_parsable_header_and_job_line_match_capture() -> None:
    expected = capture("c2_formats_and_reasons", "27_sacct_long").splitlines()
    bigrun = c2_accounting()[1]
    out = format_sacct([bigrun], long=True, parsable2=True).splitlines()
    assert out[:2] == expected[:2]
    # the batch step: what minislurm models (usage statistics are not) matches too
    got, want = out[2].split("|"), expected[2].split("|")
    header = expected[0].split("|")
    for name in (
        "JobID",
        "JobIDRaw",
        "JobName",
        "NTasks",
        "AllocCPUS",
        "Elapsed",
        "State",
        "ExitCode",
        "ReqCPUFreqMin",
        "ReqCPUFreqMax",
        "ReqCPUFreqGov",
        "AllocTRES",
    ):
        i = header.index(name)
        assert got[i] == want[i], name


def array_tasks() -> list[JobRecord]:
    """f3: ``--array=0-7%2``: tasks 0-6 got job ids 109-115, task 7 kept 108."""
    times = [
        "13:40:07",
        "13:40:07",
        "13:40:11",
        "13:40:11",
        "13:40:16",
        "13:40:16",
        "13:40:20",
        "13:40:20",
    ]
    ends = [
        "13:40:11",
        "13:40:11",
        "13:40:15",
        "13:40:15",
        "13:40:20",
        "13:40:20",
        "13:40:24",
        "13:40:24",
    ]
    out = []
    for task in range(8):
        job_id = 109 + task if task < 7 else 108
        rec = acct(job_id, "arr", CD, 1, times[task], ends[task], "n1")
        out.append(dataclasses.replace(rec, array_job_id=108, array_task_id=task))
    return out


@needs_captures
def test_array_tasks_show_A_underscore_i_and_raw_ids() -> None:
    out = format_sacct(
        array_tasks(), allocations_only=True, fields="JobID,JobIDRaw,JobName,State,Start,End"
    )
    assert out == capture("f3_array", "07_sacct")


def test_parsable_ends_every_field_with_a_bar_and_noheader_drops_both_header_lines() -> None:
    out = format_sacct(c2_accounting()[:1], parsable=True, fields="JobID,State", noheader=True)
    assert out == "46|TIMEOUT|\n46.batch|CANCELLED|\n"


def test_field_names_are_case_insensitive_prefixes_with_optional_width() -> None:
    assert [(f.name, f.width) for f in parse_fields("jobid,state%20,jobname%5,nodel")] == [
        ("JobID", -12),
        ("State", 20),
        ("JobName", 5),
        ("NodeList", 15),
    ]
    out = format_sacct(c2_accounting()[1:2], fields="JobName%4,State%14", allocations_only=True)
    assert out.splitlines()[2] == "big+ CANCELLED by 0 "


def test_unknown_field_is_an_error_with_slurms_text() -> None:
    with pytest.raises(SlurmError) as err:
        format_sacct([], fields="JobID,Bogus")
    assert err.value.message == 'sacct: error: Invalid field requested: "Bogus"'
    assert err.value.exit_code == 1


#: b_sbatch_errors/99_final_queue: the jobs of the error case folder, as sacct -X lists them
#: (full names where the capture cuts them: ``interacti+``, ``nosuchcom+``).
B_JOBS = (
    "1 env CD 0:0|2 bash CD 0:0|3 bash CD 0:0|4 bash CD 0:0|5 job.sh CD 0:0|6 myjob CD 0:0|"
    "7 job.sh CD 0:0|8 wrap CD 0:0|9 interactive CD 0:0|10 ok.sh F 1:0|11 ok.sh F 1:0|"
    "12 ok.sh F 1:0|13 ok.sh F 1:0|14 ok.sh F 1:0|15 ok.sh CA 0:0|16 ok.sh CA 0:0|"
    "17 ok.sh F 1:0|18 ok.sh CA 0:0|19 ok.sh CA 0:0|20 ok.sh CA 0:0|21 ok.sh F 1:0|"
    "22 ok.sh F 1:0|23 ok.sh F 1:0|24 ok.sh CD 0:0|25 stdinjob CA 0:0|26 ok.sh CD 0:0|"
    "28 ok.sh CD 0:0|29 ok.sh CD 0:0|30 ok.sh F 1:0|31 ok.sh F 1:0|32 true F 1:0|"
    "33 n5 CA 0:0|34 nosuchcommand F 2:0|35 bash F 3:0|36 bash F 0:9|38 overmax CA 0:0|"
    "39 negtime CA 0:0|40 N5 CA 0:0|41 shortN3 CA 0:0|42 n17 CA 0:0|43 depnone CD 0:0|"
    "44 qosnosuch CD 0:0|45 acctnosuch CD 0:0"
)


@needs_captures
def test_allocations_of_the_error_cases_match_capture() -> None:
    states = {"CD": CD, "F": F, "CA": CA}
    jobs = []
    for item in B_JOBS.split("|"):
        job_id, name, state, code = item.split()
        exit_code, sig = (int(x) for x in code.split(":"))
        rec = acct(
            int(job_id),
            name,
            states[state],
            1,
            "13:00:00",
            "13:00:01",
            "n1",
            exit_code=exit_code,
            cancelled_by=0 if state == "CA" else None,
        )
        jobs.append(dataclasses.replace(rec, signal=sig))
    expected = capture("b_sbatch_errors", "99_final_queue").split("\n", 1)[1]
    assert format_sacct(jobs, allocations_only=True, fields="JobID,JobName,State,ExitCode") == (
        expected
    )


def test_a_running_job_counts_elapsed_up_to_now_and_has_no_end() -> None:
    run = dataclasses.replace(c2_accounting()[3], state=JobState.RUNNING, end_time=None, steps=())
    out = format_sacct(
        [run], fields="JobID,State,Elapsed,End", parsable2=True, noheader=True, now=ts("13:28:44")
    )
    assert out == "49|RUNNING|00:01:00|Unknown\n"
