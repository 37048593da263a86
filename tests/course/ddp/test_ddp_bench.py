"""The launch benchmark's pieces that need no run: command lines and the table."""

from __future__ import annotations

from types import ModuleType

import pytest
from bench_loader import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_ddp_launch")


def spec(bench: ModuleType) -> object:
    return bench.Spec("/py", 4, 12345, 22345, ("--steps", "20"))


def test_every_launcher_runs_the_same_training_command(bench: ModuleType) -> None:
    s = spec(bench)
    train = ["/py", str(bench.SCRIPT), "--steps", "20"]
    assert bench.bare(s) == ["/py", "-m", "course.ddp.launch_bare", "-n", "4", "--job-id",
                             "12345", "-K", "--", *train]
    assert bench.torchrun(s) == ["/py", "-m", "torch.distributed.run", "--nproc_per_node=4",
                                 "--master_port=22345", *train[1:]]


def test_a_launcher_template_gets_the_placeholders(bench: ModuleType) -> None:
    build = bench.template_launcher("{python} -m minislurm srun -n {ntasks} --jobid={job_id} "
                                    "{train}")
    assert build(spec(bench)) == ["/py", "-m", "minislurm", "srun", "-n", "4", "--jobid=12345",
                                  "/py", str(bench.SCRIPT), "--steps", "20"]


def test_the_table_gives_medians_and_ratios(bench: ModuleType) -> None:
    results = [bench.Result(name, seconds, 0, "d") for name, seconds in
               [("bare", 8.0), ("bare", 10.0), ("bare", 30.0),
                ("torchrun", 12.0), ("torchrun", 11.0), ("torchrun", 13.0)]]
    rows = {row["launcher"]: row for row in bench.table(results, ["bare", "torchrun"])}
    assert rows["bare"]["median_s"] == 10.0 and rows["bare"]["max_s"] == 30.0
    assert rows["bare"]["vs_torchrun"] == pytest.approx(10 / 12)
    assert rows["torchrun"]["vs_bare"] == pytest.approx(1.2)
