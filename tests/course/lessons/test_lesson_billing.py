"""Lesson 5's billing demo: GPUs cost nothing in fair share unless TRESBillingWeights says so."""

from __future__ import annotations

from course.lessons.billing import BILLING_COMMANDS, GPU_WEIGHTS, billing_cluster, billing_conf


def _usage(weights: str | None) -> dict[str, tuple[float, float]]:
    out = billing_cluster(weights).run(BILLING_COMMANDS[1]).stdout.splitlines()
    rows = {}
    for line in out:
        cols = line.split()
        if len(cols) == 5 and cols[1] in ("alice", "bob"):
            rows[cols[1]] = (float(cols[3]), float(cols[4]))
    return rows


def test_the_weights_go_on_the_gpu_partition_only() -> None:
    text = billing_conf(GPU_WEIGHTS)
    gpu = [ln for ln in text.splitlines() if ln.startswith("PartitionName=gpu ")]
    assert gpu[0].endswith(f'TRESBillingWeights="{GPU_WEIGHTS}"')
    assert text.count("TRESBillingWeights") == 1
    assert "TRESBillingWeights" not in billing_conf(None)


def test_without_weights_billing_is_cpus_and_the_gpu_user_ranks_higher() -> None:
    u = _usage(None)
    # 8 CPUs vs 64 CPUs for the same ten hours: bob used eight times more
    assert 7.9 < u["bob"][0] / u["alice"][0] < 8.1
    assert u["alice"][1] > u["bob"][1]


def test_with_gpu_weights_the_gpu_user_pays_and_ranks_lower() -> None:
    u = _usage(GPU_WEIGHTS)
    # alice: 8 CPUs + 8 x 8 GPUs = billing 72; bob: 64
    assert 1.12 < u["alice"][0] / u["bob"][0] < 1.13
    assert u["alice"][1] < u["bob"][1]
    sacct = billing_cluster(GPU_WEIGHTS).run(BILLING_COMMANDS[0]).stdout
    assert "billing=72,cpu=8,gres/gpu=8" in sacct and "billing=64,cpu=64" in sacct
