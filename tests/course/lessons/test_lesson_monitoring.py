"""Lesson 2: sstat sees a running step's memory; sacct keeps it per step after the end."""

from __future__ import annotations

import pytest

from course.lessons.monitoring import (
    GATHER,
    MIB,
    Usage,
    format_usage,
    monitored_cluster,
    parse_size,
    watch_job,
)


@pytest.mark.parametrize(("text", "mib"), [
    ("212928K", 207.9375), ("208M", 208.0), ("1.5G", 1536.0), ("0", 0.0), ("", 0.0),
])
def test_sizes_as_sstat_and_sacct_print_them(text: str, mib: float) -> None:
    assert parse_size(text) == pytest.approx(mib)


def test_the_summary_says_what_the_numbers_show() -> None:
    u = Usage(7, "7.0", 1, MIB + 10, "COMPLETED", MIB + 12, "")
    assert format_usage(u).splitlines() == [
        f"while running: sstat reports step .0 with 1 task; MaxRSS at least {MIB} MiB: True",
        "after the end: sacct step .0 COMPLETED; MaxRSS recorded: True; "
        "job line's MaxRSS empty: True",
    ]
    low = Usage(7, "7.0", 1, 3.0, "FAILED", 0.0, "5M")
    assert "MiB: False" in format_usage(low) and "empty: False" in format_usage(low)


def test_gathering_is_switched_on() -> None:
    assert "JobAcctGatherType=jobacct_gather/linux" in GATHER


def test_a_real_step_holding_memory_is_seen_live_and_recorded() -> None:
    with monitored_cluster() as cluster:
        usage = watch_job(cluster)
    assert usage.live_step == f"{usage.job_id}.0" and usage.live_tasks == 1
    assert usage.live_max_rss_mib >= MIB
    assert usage.step_state == "COMPLETED"
    assert usage.step_max_rss_mib >= MIB
    assert usage.job_line_max_rss == ""
