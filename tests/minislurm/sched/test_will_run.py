"""``sbatch --test-only``: when and where a job would start, without queueing it.

The sequence below was run on real Slurm 22.05.8 (the reference cluster n[1-4], 4 CPUs
each) and gave, on stderr (job ids as they came, times relative to the first):

    sbatch: Job 1 to start at +0 using 1 processors on nodes n1 in partition debug
    sbatch: Job 2 to start at +0 using 16 processors on nodes n[1-4] in partition debug
    Submitted batch job 3            (stdout; -N4 --exclusive -t 5 holds the cluster)
    sbatch: Job 4 to start at +300 using 2 processors on nodes n[1-2] in partition debug
    sbatch: error: invalid partition specified: nosuch
    allocation failure: Invalid partition name specified        (rc 1, takes no job id)
    allocation failure: Requested node configuration is not available   (rc 1, takes id 5)
    6                                (the next real submission)

The job blocked behind job 3 starts when job 3's time limit ends (+300 s). The test
replays it on minislurm's embedded cluster, and on real Slurm when it can start.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm

STEPS = [
    ("sbatch --test-only --wrap 'sleep 1'", 0),
    ("sbatch --test-only -N4 --exclusive --wrap 'sleep 1'", 0),
    ("sbatch --parsable -N4 --exclusive -t 5 --wrap 'sleep 30'", 0),
    ("sbatch --test-only -N2 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -p nosuch --wrap 'sleep 1'", 1),
    ("sbatch --test-only -N9 --wrap 'sleep 1'", 1),
    ("sbatch --parsable --wrap 'sleep 1'", 0),
]

EXPECTED = [
    "sbatch: Job +0 to start at +0 using 1 processors on nodes n1 in partition debug",
    "sbatch: Job +1 to start at +0 using 16 processors on nodes n[1-4] in partition debug",
    "+2",
    "sbatch: Job +3 to start at +300 using 2 processors on nodes n[1-2] in partition debug",
    "sbatch: error: invalid partition specified: nosuch\n"
    "allocation failure: Invalid partition name specified",
    "allocation failure: Requested node configuration is not available",
    "+5",
]



def normalise(outputs: list[str]) -> list[str]:
    """Job ids relative to the first, start times relative to the first answer (seconds)."""
    job = re.search(r"Job (\d+)", outputs[0])
    assert job is not None, outputs[0]
    first_id = int(job.group(1))
    from datetime import datetime

    def stamp(text: str) -> datetime:
        return datetime.fromisoformat(text)

    at = re.search(r"at (\S+)", outputs[0])
    assert at is not None, outputs[0]
    t0 = stamp(at.group(1))
    out = []
    for text in outputs:
        text = re.sub(r"Job (\d+)", lambda m: f"Job +{int(m.group(1)) - first_id}", text)
        text = re.sub(r"at (\S+T\S+)",
                      lambda m: f"at +{round((stamp(m.group(1)) - t0).total_seconds() / 60) * 60}",
                      text)
        if text.strip().isdigit():
            text = f"+{int(text) - first_id}"
        out.append(text.strip())
    return out


#: With busy nodes (n1: 2 of 4 CPUs free, n2: 1 free), measured on real Slurm 22.05.8:
#: select/cons_tres's ``_will_run_test`` answers with select's own uneven shares
#: (``-N2 -n5`` -> 2 + 3 CPUs on n[1,3] now), spreads ``-n6`` over n[1-3], and a job
#: that needs every CPU starts when both holders' 5-minute limits end.
BUSY_STEPS = [
    ("sbatch --test-only -N2 -n5 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --parsable -w n1 -n2 -t 5 --wrap 'sleep 60'", 0),
    ("sbatch --parsable -w n2 -n3 -t 5 --wrap 'sleep 60'", 0),
    ("sbatch --test-only -N2 -n5 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -N2 -n4 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -n6 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -N4 -n5 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -N4 -n16 -t 1 --wrap 'sleep 1'", 0),
    ("sbatch --test-only -N2 -n5 -w n1 -t 1 --wrap 'sleep 1'", 1),
]

BUSY_EXPECTED = [
    "sbatch: Job +0 to start at +0 using 5 processors on nodes n[1-2] in partition debug",
    "+1",
    "+2",
    "sbatch: Job +3 to start at +0 using 5 processors on nodes n[1,3] in partition debug",
    "sbatch: Job +4 to start at +0 using 4 processors on nodes n[1,3] in partition debug",
    "sbatch: Job +5 to start at +0 using 6 processors on nodes n[1-3] in partition debug",
    "sbatch: Job +6 to start at +0 using 5 processors on nodes n[1-4] in partition debug",
    "sbatch: Job +7 to start at +300 using 16 processors on nodes n[1-4] in partition debug",
    # only the -w nodes are candidates for --test-only (job_start_data): never 2 nodes
    "allocation failure: Requested node configuration is not available",
]


def _replay(
    steps: list[tuple[str, int]], run: Callable[[str], tuple[str, int]], pause: Callable[[], object]
) -> list[str]:
    """Run ``steps`` (pausing a second after the third, once its job runs); normalised."""
    outputs = []
    for i, (cmd, rc) in enumerate(steps):
        out, code = run(cmd)
        assert code == rc, (cmd, out)
        outputs.append(out)
        if i == 2:
            pause()
    return normalise(outputs)


def _mini(tmp_path: Path) -> tuple[Callable[[str], tuple[str, int]], Callable[[], None]]:
    cluster = reference_cluster(tmp_path)

    def run(cmd: str) -> tuple[str, int]:
        result = cluster.run(cmd)
        return str(result), result.returncode

    return run, lambda: cluster.advance(1)


def _real(real_slurm: RealSlurm, tmp_path: Path, steps: list[tuple[str, int]]) -> list[str]:
    real_slurm.reset()  # no job, every node idle: a node still completing starts holders late

    def run(cmd: str) -> tuple[str, int]:
        result = real_slurm.run(cmd, cwd=tmp_path)
        return result.stdout + result.stderr, result.rc

    try:
        return _replay(steps, run, lambda: real_slurm.run("sleep 1", cwd=tmp_path))
    finally:
        real_slurm.run("scancel -u root", cwd=tmp_path)


def test_test_only_on_minislurm_answers_like_slurm(tmp_path: Path) -> None:
    assert _replay(STEPS, *_mini(tmp_path)) == EXPECTED


@pytest.mark.realslurm
def test_test_only_on_real_slurm_gives_the_recorded_answers(
    fresh_real_slurm: RealSlurm, tmp_path: Path
) -> None:
    assert _real(fresh_real_slurm, tmp_path, STEPS) == EXPECTED


def test_test_only_with_busy_nodes_on_minislurm_answers_like_slurm(tmp_path: Path) -> None:
    assert _replay(BUSY_STEPS, *_mini(tmp_path)) == BUSY_EXPECTED


@pytest.mark.realslurm
def test_test_only_with_busy_nodes_on_real_slurm(fresh_real_slurm: RealSlurm,
                                                  tmp_path: Path) -> None:
    assert _real(fresh_real_slurm, tmp_path, BUSY_STEPS) == BUSY_EXPECTED
