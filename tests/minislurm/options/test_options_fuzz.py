"""Fuzzing the front end: any input gives a result or a typed Slurm error, never a crash."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.common.filenames import expand_pattern
from minislurm.common.jobarray import parse_array
from minislurm.common.timespec import parse_begin, parse_time_limit
from minislurm.dependency import parse_dependency
from minislurm.errors import SlurmError
from minislurm.options import InfoExit, parse_salloc, parse_sbatch, parse_srun
from minislurm.options.table import OPTIONS

NAMES = sorted({o.name for o in OPTIONS})
SHORTS = sorted({o.short for o in OPTIONS if o.short})
VALUES = st.sampled_from(["", "0", "1", "-1", "2-4", "abc", "5G", "1:00", "now+1hour",
                          "USR1@60", "gpu:2", "none", "ALL", "%", "x y", "01/02", "TOP",
                          "afterok:1", "0-7%2", "9" * 30])
WORD = st.one_of(
    st.builds(lambda n, v: f"--{n}={v}", st.sampled_from(NAMES), VALUES),
    st.builds(lambda n: f"--{n}", st.sampled_from(NAMES)),
    st.builds(lambda n: f"--{n[:3]}", st.sampled_from(NAMES)),
    st.builds(lambda s, v: f"-{s}{v}", st.sampled_from(SHORTS), VALUES),
    st.builds(lambda s: f"-{s}", st.sampled_from(SHORTS)),
    VALUES,
    st.text(max_size=8),
)
FUZZ = settings(max_examples=150, deadline=None)


def _read(path: str) -> bytes:
    return b"#!/bin/bash\necho hi\n"


@FUZZ
@given(st.lists(WORD, max_size=8), st.dictionaries(
    st.sampled_from(["SBATCH_TIMELIMIT", "SBATCH_PARTITION", "SBATCH_EXCLUSIVE",
                     "SBATCH_DEBUG", "SBATCH_MEM_PER_NODE", "SBATCH_SIGNAL", "SBATCH_WAIT"]),
    VALUES, max_size=3))
def test_random_sbatch_command_lines(argv: list[str], env: dict[str, str]) -> None:
    with contextlib.suppress(SlurmError, InfoExit):
        parse_sbatch(argv, env=env, cwd="/w", stdin=b"#!/bin/sh\ntrue\n", now=1767600000,
                     read_file=_read)


@FUZZ
@given(st.lists(WORD, max_size=8))
def test_random_srun_and_salloc_command_lines(argv: list[str]) -> None:
    for parse in (parse_srun, parse_salloc):
        with contextlib.suppress(SlurmError, InfoExit):
            parse(argv, env={"SLURM_NTASKS": "2"}, now=1767600000)


LINE = st.one_of(
    st.lists(WORD, max_size=4).map(lambda ws: "#SBATCH " + " ".join(ws)),
    st.sampled_from(["", "# comment", "echo hi", "  ", "#SBATCH", '#SBATCH -J "x',
                     "#SBATCH -J 'a b' # c", "#SBATCH : -N1", "\r"]),
    st.text(max_size=20))


@FUZZ
@given(st.lists(LINE, max_size=6), st.sampled_from(["#!/bin/bash\n", "", "#!", "x\n"]))
def test_random_scripts(lines: list[str], head: str) -> None:
    script = (head + "\n".join(lines)).encode("utf-8", "surrogateescape")
    with contextlib.suppress(SlurmError, InfoExit):
        parse_sbatch([], env={}, cwd="/w", stdin=script, now=1767600000)


@FUZZ
@given(st.text(max_size=16))
def test_random_values_of_the_small_parsers(text: str) -> None:
    for parse in (parse_time_limit, lambda s: parse_begin(s, 1767600000),
                  lambda s: parse_array(s, 1001), parse_dependency):
        with contextlib.suppress(SlurmError):
            parse(text)
    assert isinstance(expand_pattern(text, job_id=1), str)
