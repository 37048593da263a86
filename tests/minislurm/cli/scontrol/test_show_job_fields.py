"""``scontrol show job`` fields that real Slurm 22.05.8 prints differently from the obvious.

Measured on the reference cluster: ``sbatch -H --time=-N`` for N = 2, 5, 10, 90 shows
``TimeLimit=2982614-04:17:00``, ``2982611-04:17:00``, ``2982606-04:17:00``,
``2982526-04:17:00`` (the stored ``(-N*86400 + 59) / 60`` minutes printed as uint32;
``timespec.parse_time_limit`` stores them so, tests/minislurm/options/test_negative_time.py);
every job, held or pending on a partition limit, shows ``LastSchedEval=`` its
submission time until a scheduler looks at it.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from ctld_helpers import ref_controller, sub

from minislurm.cli.format.scontrol import format_scontrol_job
from minislurm.common.timespec import INVALID_TIME, parse_time_limit


def _stored(days: int) -> int:
    """``time_str2mins("-<days>")``: (-days*86400 + 59) / 60, truncated towards zero."""
    return int((-days * 86400 + 59) / 60)


def _field(text: str, key: str) -> str:
    found = re.search(rf"\b{re.escape(key)}=(\S+)", text)
    assert found, text
    return found.group(1)


@pytest.mark.parametrize(("days", "shown"), [
    (2, "2982614-04:17:00"), (5, "2982611-04:17:00"),
    (10, "2982606-04:17:00"), (90, "2982526-04:17:00"),
])
def test_negative_time_limit_wraps_like_uint32(days: int, shown: str) -> None:
    ctl = ref_controller()
    jid = sub(ctl, None, hold=True)
    rec = dataclasses.replace(ctl.job(jid), time_limit=_stored(days))
    assert _field(format_scontrol_job(rec, now=ctl.now), "TimeLimit") == shown


def test_sbatch_time_minus_5_shows_the_measured_limit() -> None:
    """The whole path: ``--time=-5`` as sbatch parses it, submitted, shown."""
    ctl = ref_controller()
    jid = sub(ctl, None, hold=True, time_limit=parse_time_limit("-5"))
    assert _field(format_scontrol_job(ctl.job(jid), now=ctl.now), "TimeLimit") == (
        "2982611-04:17:00")


def test_bare_invalid_marker_still_prints_invalid() -> None:
    ctl = ref_controller()
    rec = dataclasses.replace(ctl.job(sub(ctl, None, hold=True)), time_limit=INVALID_TIME)
    assert _field(format_scontrol_job(rec, now=ctl.now), "TimeLimit") == "INVALID"


def test_held_job_shows_its_submission_as_last_sched_eval() -> None:
    ctl = ref_controller()
    ctl.run_for(5)
    jid = sub(ctl, None, hold=True)
    ctl.run_for(30)
    text = format_scontrol_job(ctl.job(jid), now=ctl.now)
    assert _field(text, "LastSchedEval") == _field(text, "SubmitTime")
    assert _field(text, "LastSchedEval") != "Unknown"


def test_started_job_shows_its_start_as_last_sched_eval() -> None:
    ctl = ref_controller()
    ctl.run_for(5)
    jid = sub(ctl, None)
    ctl.run_for(3)
    text = format_scontrol_job(ctl.job(jid), now=ctl.now)
    assert _field(text, "LastSchedEval") == _field(text, "StartTime")
