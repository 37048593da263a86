"""``sbatch --time=-5``: what real Slurm 22.05.8 stores, prints and does with it.

Measured on the reference cluster (scripts/realslurm, 2026-12-03):

* ``sbatch --time=-5`` (``-5`` days: ``time_str2mins`` = ``(-432000 + 59) / 60 =
  -7199``) is stored in the ``uint32_t`` time limit as ``2**32 - 7199 = 4294960097``
  minutes: ``scontrol show job`` prints ``TimeLimit=2982611-04:17:00``, sacct
  ``TimelimitRaw=4294960097``, squeue ``%l`` and ``%L`` ``INVALID`` (over a year).
  ``--time=-01`` (-1 day) gives ``2982615-04:17:00``; ``--time=-1`` is UNLIMITED.
* In partition ``debug`` (MaxTime=1:00:00) the job pends ``PartitionTimeLimit``
  (EnforcePartLimits=NO); with ``MaxTime=UNLIMITED`` it starts at once and is never
  timed out (its EndTime is 136 years on: ``time_limit * 60`` wraps in ``uint32_t``).
* With EnforcePartLimits=ALL the submission is refused (capture
  b2_sbatch_errors_EnforcePartLimits_ALL).
"""

from __future__ import annotations

import re

import pytest
from ctld_helpers import REF_CONF, ref_controller, sub

from minislurm.cli.format.scontrol import format_scontrol_job
from minislurm.common.timespec import (
    format_time_limit,
    format_time_limit_hms,
    is_negative_limit,
    parse_time_limit,
    time_limit_secs,
)
from minislurm.conf import parse_config
from minislurm.ctld import Controller, lifecycle
from minislurm.errors import SlurmError
from minislurm.options import JobOptions
from minislurm.sim import Cluster
from minislurm.states import JobState, Reason

UNLIMITED_GPU = REF_CONF.replace(
    "PartitionName=gpu Nodes=n[1-4] MaxTime=02:00:00",
    "PartitionName=gpu Nodes=n[1-4] MaxTime=UNLIMITED",
)


def _field(text: str, key: str) -> str:
    found = re.search(rf"\b{re.escape(key)}=(\S+)", text)
    assert found, text
    return found.group(1)


@pytest.mark.parametrize(("text", "stored", "shown"), [
    ("-5", 4294960097, "2982611-04:17:00"),
    ("-01", 4294965857, "2982615-04:17:00"),
    ("-2", 2**32 - 2879, "2982614-04:17:00"),
    ("-90", 2**32 - 129599, "2982526-04:17:00"),
])
def test_negative_time_is_stored_as_uint32(text: str, stored: int, shown: str) -> None:
    assert parse_time_limit(text) == stored
    assert format_time_limit_hms(stored) == shown
    assert format_time_limit(stored) == "INVALID"
    assert is_negative_limit(stored)


@pytest.mark.parametrize("text", ["-1", "0", "-0"])
def test_minus_one_and_zero_stay_unlimited(text: str) -> None:
    assert parse_time_limit(text) is None


def test_uint32_product_wraps_like_job_end_time_reset() -> None:
    """Measured: start 2026-12-03T19:50:19 + ``4294960097 * 60`` (uint32) ->
    EndTime 2163-01-05T02:19:35."""
    assert time_limit_secs(4294960097) == 4294535356
    assert time_limit_secs(60) == 3600
    assert not is_negative_limit(365 * 1440)


@pytest.mark.parametrize(("limit", "shown"), [
    (365 * 1440, "365-00:00:00"), (365 * 1440 + 1, "INVALID"), (400 * 1440, "INVALID"),
])
def test_squeue_prints_invalid_beyond_a_year(limit: int, shown: str) -> None:
    """Measured: ``--time=365-0`` shows ``365-00:00:00``, ``365-0:1`` and ``400-0``
    ``INVALID`` in squeue ``%l`` (``_print_secs``: more than YEAR_SECONDS)."""
    assert format_time_limit(limit) == shown


def test_pending_job_shows_the_wrapped_limit_and_partition_time_limit() -> None:
    c = Cluster(parse_config(REF_CONF, "slurm.conf"), user="root", uid=0)
    assert c.run("sbatch -J neg --time=-5 --wrap true").stdout == "Submitted batch job 1\n"
    c.advance(3)
    show = c.run("scontrol show job 1").stdout
    assert _field(show, "TimeLimit") == "2982611-04:17:00"
    assert _field(show, "Reason") == "PartitionTimeLimit"
    assert _field(show, "EndTime") == "Unknown"
    squeue = c.run('squeue -h -o "%l %L %T %r"').stdout
    assert squeue == "INVALID INVALID PENDING PartitionTimeLimit\n"
    sacct = c.run("sacct -n -X -j 1 -o TimelimitRaw,State").stdout.split()
    assert sacct == ["4294960097", "PENDING"]


def test_runs_and_never_times_out_without_a_partition_max_time() -> None:
    ctl = Controller(parse_config(UNLIMITED_GPU, "slurm.conf"))
    jid = sub(ctl, None, partition="gpu", time_limit=parse_time_limit("-5"))
    ctl.run_for(3)
    job = ctl.job(jid)
    assert job.state is JobState.RUNNING
    assert lifecycle.limit_deadline(ctl, ctl._jobs[jid]) is None
    assert _field(format_scontrol_job(job, now=ctl.now), "TimeLimit") == "2982611-04:17:00"
    # EndTime = start + the wrapped uint32 product (measured: 19:50:19 -> 2163-01-05T02:19:35)
    assert job.start_time is not None and job.end_time == job.start_time + 4294535356
    ctl.run_for(400 * 86400)
    assert ctl.job(jid).state is JobState.RUNNING


def test_enforce_part_limits_all_refuses_it() -> None:
    ctl = ref_controller("EnforcePartLimits=ALL\n")
    with pytest.raises(SlurmError, match="Requested time limit is invalid"):
        ctl.submit(JobOptions(time_limit=parse_time_limit("-5"), time_limit_set=True),
                   name="neg")


def test_pending_reason_is_partition_time_limit_on_the_controller() -> None:
    ctl = ref_controller()
    jid = sub(ctl, None, time_limit=parse_time_limit("-5"))
    ctl.run_for(3)
    assert ctl.job(jid).state is JobState.PENDING
    assert ctl.job(jid).reason is Reason.PARTITION_TIME_LIMIT
