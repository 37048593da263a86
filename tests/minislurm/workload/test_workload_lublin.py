"""The Lublin–Feitelson 1999 model (minislurm.sim.workload.lublin): its traces follow the
model's published distributions, and they are SWF that minislurm's reader takes."""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from minislurm.sim.workload.lublin import (
    BATCH,
    BATCH_128,
    BUCKETS,
    INTERACTIVE,
    INTERACTIVE_128,
    SECONDS_IN_BUCKET,
    TOO_MUCH_TIME,
    LublinClass,
    LublinJob,
    LublinSpec,
    bucket_weights,
    classes_for,
    gamma_cdf,
    generate_lublin,
    lublin_swf,
)
from minislurm.sim.workload.swf import read_swf, to_workload

N = 20_000
#: Kolmogorov–Smirnov critical value at the 0.1 % level (times 1/sqrt(n)).
KS_001 = 1.95


@pytest.fixture(scope="module")
def trace() -> list[LublinJob]:
    return list(generate_lublin(LublinSpec(jobs=N, procs=256, seed=7)))


def of_kind(jobs: list[LublinJob], kind: int) -> list[LublinJob]:
    return [j for j in jobs if j.kind == kind]


def test_gamma_cdf_matches_closed_forms() -> None:
    for x in (0.1, 1.0, 3.0, 30.0):
        assert gamma_cdf(x, 1.0, 2.0) == pytest.approx(1 - math.exp(-x / 2), abs=1e-12)
        assert gamma_cdf(x, 2.0, 1.0) == pytest.approx(1 - (1 + x) * math.exp(-x), abs=1e-12)
        # Gamma(1/2, 2) is chi-square with one degree of freedom: P = erf(sqrt(x / 2))
        assert gamma_cdf(x, 0.5, 2.0) == pytest.approx(math.erf(math.sqrt(x / 2)), abs=1e-12)
    assert gamma_cdf(0, 3.0, 1.0) == 0.0


def test_machine_size_sets_the_largest_job() -> None:
    assert classes_for(128) == (INTERACTIVE_128, BATCH_128)
    interactive, batch = classes_for(256)
    assert (batch.uhi, batch.umed, batch.ulow) == (8.0, 6.0, 1.2)
    assert (interactive.uhi, interactive.umed) == (6.5, 4.0)
    with pytest.raises(ValueError):
        classes_for(1)


def size_pmf(cls: LublinClass) -> dict[int, float]:
    """P(size = s) of one kind, exactly: serial, power-of-two (rounded exponent) and
    other jobs (round(2**par)), par from the two-stage uniform."""

    def measure(lo: float, hi: float) -> float:  # P(lo <= par < hi)
        first = max(0.0, min(hi, cls.umed) - max(lo, cls.ulow)) / (cls.umed - cls.ulow)
        second = max(0.0, min(hi, cls.uhi) - max(lo, cls.umed)) / (cls.uhi - cls.umed)
        return cls.uprob * first + (1 - cls.uprob) * second

    other = 1 - cls.serial_prob - cls.pow2_prob
    pmf: defaultdict[int, float] = defaultdict(float, {1: cls.serial_prob})
    for k in range(0, int(cls.uhi) + 2):
        pmf[2**k] += cls.pow2_prob * measure(k - 0.5, k + 0.5)
    for s in range(2, 2 ** math.ceil(cls.uhi) + 1):
        pmf[s] += other * measure(math.log2(s - 0.5), math.log2(s + 0.5))
    return {s: p for s, p in pmf.items() if p > 0}


def ks_distance(values: list[int], cdf: dict[int, float]) -> float:
    """max |empirical - model| over the support points (a discrete KS statistic)."""
    counts = Counter(values)
    seen = 0
    worst = 0.0
    for s in sorted(set(cdf) | set(counts)):
        seen += counts.get(s, 0)
        worst = max(worst, abs(seen / len(values) - cdf.get(s, 1.0)))
    return worst


@pytest.mark.parametrize("kind", [INTERACTIVE, BATCH])
def test_sizes_follow_the_model(trace: list[LublinJob], kind: int) -> None:
    cls = classes_for(256)[kind]
    jobs = of_kind(trace, kind)
    n = len(jobs)
    pmf = size_pmf(cls)
    assert sum(pmf.values()) == pytest.approx(1.0)
    sizes = [j.size for j in jobs]
    assert set(sizes) <= set(pmf)
    # serial fraction: binomial, within 4 standard deviations
    serial = sizes.count(1) / n
    sd = math.sqrt(cls.serial_prob * (1 - cls.serial_prob) / n)
    assert abs(serial - cls.serial_prob) < 4 * sd
    # power-of-two fraction (sizes >= 2): the pow2 jobs plus the others that land on one
    want = sum(p for s, p in pmf.items() if s >= 2 and s & (s - 1) == 0)
    assert want > cls.pow2_prob
    got = sum(1 for s in sizes if s >= 2 and s & (s - 1) == 0) / n
    assert abs(got - want) < 4 * math.sqrt(want * (1 - want) / n)
    # the whole distribution
    cdf: dict[int, float] = {}
    acc = 0.0
    for s in sorted(pmf):
        acc += pmf[s]
        cdf[s] = acc
    assert ks_distance(sizes, cdf) < KS_001 / math.sqrt(n)


def test_the_largest_jobs_use_the_whole_machine(trace: list[LublinJob]) -> None:
    assert max(j.size for j in trace) == 256
    assert max(j.size for j in of_kind(trace, INTERACTIVE)) <= round(2**6.5)


def runtime_cdf(cls: LublinClass, size: int, r: int) -> float:
    """P(runtime <= r | size): int(exp(hg)) <= r iff hg < ln(r + 1); hg hyper-gamma
    truncated at TOO_MUCH_TIME."""
    p = cls.first_gamma_prob(size)

    def f(x: float) -> float:
        return p * gamma_cdf(x, cls.a1, cls.b1) + (1 - p) * gamma_cdf(x, cls.a2, cls.b2)

    return min(1.0, f(math.log(r + 1)) / f(TOO_MUCH_TIME))


@pytest.mark.parametrize("kind", [INTERACTIVE, BATCH])
def test_runtimes_follow_the_hyper_gamma_of_their_size(trace: list[LublinJob], kind: int) -> None:
    cls = classes_for(256)[kind]
    jobs = of_kind(trace, kind)
    n = len(jobs)
    by_size = Counter(j.size for j in jobs)
    runtimes = sorted(j.runtime for j in jobs)
    assert runtimes[0] >= 1 and runtimes[-1] <= math.exp(TOO_MUCH_TIME)
    worst = 0.0
    for q in range(1, 40):
        r = runtimes[q * n // 40]
        empirical = sum(1 for x in runtimes if x <= r) / n
        model = sum(c * runtime_cdf(cls, s, r) for s, c in by_size.items()) / n
        worst = max(worst, abs(empirical - model))
    assert worst < KS_001 / math.sqrt(n)
    # the size-runtime correlation (pa < 0): big jobs run longer, as published
    small = [j.runtime for j in jobs if j.size == 1]
    big = [j.runtime for j in jobs if j.size >= 32]
    assert sum(map(math.log, big)) / len(big) > sum(map(math.log, small)) / len(small)


@pytest.mark.parametrize("kind", [INTERACTIVE, BATCH])
def test_arrivals_follow_the_daily_cycle(trace: list[LublinJob], kind: int) -> None:
    weights = bucket_weights(classes_for(256)[kind])
    assert sum(weights) == pytest.approx(BUCKETS)
    # the model's day: busiest early in the afternoon, quietest before dawn
    assert 12 * 2 <= weights.index(max(weights)) <= 15 * 2
    assert 3 * 2 <= weights.index(min(weights)) <= 6 * 2
    jobs = of_kind(trace, kind)
    counts = Counter((j.arrival % 86400) // SECONDS_IN_BUCKET for j in jobs)
    share = [counts[b] / len(jobs) for b in range(BUCKETS)]
    model = [w / BUCKETS for w in weights]
    # arrivals come in bursts (log-gamma inter-arrivals), so buckets vary more than
    # binomially: the shape is checked by correlation and the working-day share
    assert statistics.correlation(share, model) > 0.75
    assert abs(sum(share[16:40]) - sum(model[16:40])) < 0.06  # 08:00-20:00
    assert sum(model[16:40]) > 0.7
    arrivals = [j.arrival for j in trace]
    assert arrivals == sorted(arrivals)


def test_estimates_and_seeds() -> None:
    a = list(generate_lublin(LublinSpec(jobs=300, seed=3)))
    assert a == list(generate_lublin(LublinSpec(jobs=300, seed=3)))
    assert a != list(generate_lublin(LublinSpec(jobs=300, seed=4)))
    assert all(j.requested == j.runtime for j in a)
    b = list(generate_lublin(LublinSpec(jobs=300, seed=3, estimate_factor=2.5)))
    assert [j.runtime for j in b] == [j.runtime for j in a]
    assert all(j.requested == math.ceil(j.runtime * 2.5) for j in b)
    with pytest.raises(ValueError):
        list(generate_lublin(LublinSpec(estimate_factor=0.5)))


def test_the_swf_file_reads_back_with_minislurms_reader(tmp_path: Path) -> None:
    spec = LublinSpec(jobs=2000, procs=256, seed=11)
    jobs = list(generate_lublin(spec))
    path = tmp_path / "lublin_256.swf"
    path.write_text(lublin_swf(spec))
    swf = read_swf(path)
    assert swf.max_procs == 256
    assert swf.unix_start_time == spec.start
    assert len(swf.records) == len(jobs)
    for r, j in zip(swf.records, jobs, strict=True):
        assert (r.job_number, r.submit_time, r.run_time, r.procs, r.requested_time, r.queue) == (
            j.number, j.arrival, j.runtime, j.size, j.requested, j.kind
        )  # fmt: skip
    work = to_workload(swf)
    assert [w.nodes for w in work] == [j.size for j in jobs]
    assert [w.submit_time - spec.start for w in work] == [j.arrival for j in jobs]
    assert [w.time_limit for w in work] == [math.ceil(j.requested / 60) for j in jobs]
