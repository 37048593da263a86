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
import shutil
from pathlib import Path

import pytest
from captures import REF

from minislurm.cluster import Cluster

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
    first_id = int(re.search(r"Job (\d+)", outputs[0]).group(1))  # type: ignore[union-attr]
    from datetime import datetime

    def stamp(text: str) -> datetime:
        return datetime.fromisoformat(text)

    t0 = stamp(re.search(r"at (\S+)", outputs[0]).group(1))  # type: ignore[union-attr]
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


def test_test_only_on_minislurm_answers_like_slurm(tmp_path: Path) -> None:
    if not (REF / "slurm.conf").exists():
        pytest.skip("the reference captures are not here")
    for name in ("slurm.conf", "gres.conf"):
        shutil.copy(REF / name, tmp_path / name)
    cluster = Cluster(tmp_path / "slurm.conf", user="root", uid=0, workdir=tmp_path / "w")
    outputs = []
    for i, (cmd, rc) in enumerate(STEPS):
        result = cluster.run(cmd)
        assert result.returncode == rc, (cmd, result)
        outputs.append(str(result))
        if i == 2:
            cluster.advance(1)
    assert normalise(outputs) == EXPECTED


@pytest.mark.realslurm
def test_test_only_on_real_slurm_gives_the_recorded_answers(real_slurm, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    real_slurm.run("scancel -u root", cwd=tmp_path)
    outputs = []
    try:
        for i, (cmd, rc) in enumerate(STEPS):
            result = real_slurm.run(cmd, cwd=tmp_path)
            assert result.rc == rc, (cmd, result)
            outputs.append(result.stdout + result.stderr)
            if i == 2:
                real_slurm.run("sleep 1", cwd=tmp_path)
    finally:
        real_slurm.run("scancel -u root", cwd=tmp_path)
    assert normalise(outputs) == EXPECTED
