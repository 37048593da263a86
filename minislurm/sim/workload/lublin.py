"""The Lublin–Feitelson workload model (1999), as SWF: rigid parallel jobs of a 1990s machine.

Uri Lublin and Dror G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11), 2003 (the "Lublin99"
model of the Parallel Workloads Archive, whose ``lublin_256`` / ``lublin_1024`` traces it
generated).  Each job is *batch* or *interactive*; each kind has its own parameters
(`LublinClass`, the constants of the authors' C program ``m_lublin99.c``):

- **size**: serial with probability ``serial_prob``; else ``par`` is drawn from a
  two-stage uniform (``U(ulow, umed)`` with probability ``uprob``, else ``U(umed, uhi)``),
  rounded to an integer for a power-of-two job (probability ``pow2_prob``), and the size
  is ``round(2**par)``;
- **runtime**: ``exp(hg)`` seconds (truncated), ``hg`` hyper-gamma: ``Gamma(a1, b1)`` with
  probability ``p = pa * size + pb`` (clipped to [0, 1]), else ``Gamma(a2, b2)``; draws
  above ``ln`` of two days (12) are drawn again;
- **arrivals**: the day is 48 half-hour buckets weighted by the Gamma(``anum``, ``bnum``)
  density (the daily cycle, peak in the early afternoon); each inter-arrival draws
  ``exp(Gamma(aarr * arar, barr))`` seconds of "rush-hour" time, spent bucket by bucket at
  the bucket's weight (quiet buckets cost more), draws above ``exp(13)`` drawn again.  The
  two kinds arrive independently; the next job is the kind whose next arrival is first.
  The clocks keep fractions of seconds and each arrival is truncated to a whole second
  (the C program truncates its clock at every arrival, which drifts the daily cycle by
  about half a second per job: hours over a 10,000-job trace).

The machine size sets ``uhi = log2(procs)`` of both kinds, keeping the program's offsets
(for its 128 nodes: batch ``umed = uhi - 2``, interactive ``umed = uhi - 4`` and
``uhi - 1.5``); ``procs=256`` gives the ``lublin_256`` family.  The model has no user
estimates; the SWF's requested time (field 9) is the runtime times ``estimate_factor``
(1: exact estimates), rounded up to a second.  Gamma variates come from
``random.Random(seed).gammavariate`` (same distribution as the C program's Jain method,
not the same stream: the C program seeds ``drand48`` from the clock anyway).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace

from minislurm.sim.workload.swf import STATUS_COMPLETED, SWFRecord, SWFWorkload, format_swf

#: Half-hour buckets of a day, and seconds in one.
BUCKETS = 48
SECONDS_IN_BUCKET = 86400 // BUCKETS
#: The model's day starts at bucket CYCLIC_DAY_START when weighting buckets (m_lublin99.c).
CYCLIC_DAY_START = 11
#: Rejection bounds of the C program: ln(runtime) <= 12 (~1.9 days), ln(inter-arrival) <= 13.
TOO_MUCH_TIME = 12.0
TOO_MUCH_ARRIVE_TIME = 13.0
#: Field 15 (queue) of the SWF lines, as the C program writes the job's type.
INTERACTIVE, BATCH = 0, 1
#: Midnight UTC before minislurm's default epoch: the model starts its day at hour 0.
LUBLIN_EPOCH = 1767571200


@dataclass(frozen=True, slots=True)
class LublinClass:
    """The parameters of one kind of job (batch or interactive)."""

    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float
    uhi: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float

    def first_gamma_prob(self, size: int) -> float:
        """``p = pa * size + pb`` clipped to [0, 1]: the weight of ``Gamma(a1, b1)``."""
        return min(1.0, max(0.0, self.pa * size + self.pb))


#: m_lublin99.c's constants for a 128-node machine (``UHI = 7``).
BATCH_128 = LublinClass(
    serial_prob=0.2927, pow2_prob=0.6686, ulow=1.2, umed=5.0, uhi=7.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519,
)  # fmt: skip
INTERACTIVE_128 = LublinClass(
    serial_prob=0.1541, pow2_prob=0.625, ulow=1.0, umed=3.0, uhi=5.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797,
)  # fmt: skip


def classes_for(procs: int) -> tuple[LublinClass, LublinClass]:
    """(interactive, batch) parameters for a machine of ``procs`` processors."""
    if procs < 2:
        raise ValueError(f"the Lublin model needs at least 2 processors, not {procs}")
    shift = math.log2(procs) - BATCH_128.uhi
    interactive, batch = (replace(c, umed=c.umed + shift, uhi=c.uhi + shift)
                          for c in (INTERACTIVE_128, BATCH_128))
    return interactive, batch


@dataclass(frozen=True, slots=True)
class LublinSpec:
    """What to generate: ``jobs`` jobs for ``procs`` processors from ``seed``."""

    jobs: int = 10_000
    procs: int = 256
    seed: int = 0
    estimate_factor: float = 1.0
    start: int = LUBLIN_EPOCH


@dataclass(frozen=True, slots=True)
class LublinJob:
    """One generated job: arrival (seconds from the start), size, runtime, kind, estimate."""

    number: int
    arrival: int
    size: int
    runtime: int
    kind: int  # INTERACTIVE or BATCH
    requested: int


# ------------------------------------------------------------------ distributions


def gamma_cdf(x: float, alpha: float, beta: float) -> float:
    """P(Gamma(alpha, beta) <= x), shape ``alpha``, scale ``beta`` (regularized lower
    incomplete gamma: series below ``alpha + 1``, continued fraction above)."""
    if x <= 0:
        return 0.0
    x /= beta
    log_front = -x + alpha * math.log(x) - math.lgamma(alpha)
    if x < alpha + 1:
        term = total = 1.0 / alpha
        a = alpha
        for _ in range(1000):
            a += 1
            term *= x / a
            total += term
            if term < total * 1e-14:
                break
        return total * math.exp(log_front)
    # Lentz's continued fraction for the upper tail
    tiny = 1e-300
    b = x + 1 - alpha
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - alpha)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-14:
            break
    return 1.0 - math.exp(log_front) * h


def bucket_weights(cls: LublinClass) -> list[float]:
    """The relative arrival rate of each half-hour bucket (mean 1): the Gamma(anum, bnum)
    mass of ``[i - 0.5, i + 0.5]`` for ``i`` in ``CYCLIC_DAY_START .. +47``, stored at
    ``(i - 1) % 48`` as in ``arrive_init``."""
    weights = [0.0] * BUCKETS
    for i in range(CYCLIC_DAY_START, CYCLIC_DAY_START + BUCKETS):
        weights[(i - 1) % BUCKETS] = gamma_cdf(i + 0.5, cls.anum, cls.bnum) - gamma_cdf(
            i - 0.5, cls.anum, cls.bnum
        )
    mean = sum(weights) / BUCKETS
    return [w / mean for w in weights]


def two_stage_uniform(rng: random.Random, cls: LublinClass) -> float:
    """``U(ulow, umed)`` with probability ``uprob``, else ``U(umed, uhi)``."""
    if rng.random() <= cls.uprob:
        return rng.uniform(cls.ulow, cls.umed)
    return rng.uniform(cls.umed, cls.uhi)


def job_size(rng: random.Random, cls: LublinClass) -> int:
    """Processors of one job (``calc_number_of_nodes``)."""
    u = rng.random()
    if u <= cls.serial_prob:
        return 1
    par = two_stage_uniform(rng, cls)
    if u <= cls.serial_prob + cls.pow2_prob:
        par = float(int(par + 0.5))
    return int(2**par + 0.5)


def job_runtime(rng: random.Random, cls: LublinClass, size: int) -> int:
    """Seconds of one job (``time_from_nodes``): ``exp`` of a hyper-gamma draw <= 12."""
    p = cls.first_gamma_prob(size)
    while True:
        a, b = (cls.a1, cls.b1) if rng.random() <= p else (cls.a2, cls.b2)
        hg = rng.gammavariate(a, b)
        if hg <= TOO_MUCH_TIME:
            return int(math.exp(hg))


class _Arrivals:
    """The arrival process of one kind (``calc_next_arrive``): its clock and points."""

    def __init__(self, cls: LublinClass) -> None:
        self.cls = cls
        self.weights = bucket_weights(cls)
        self.bucket = 0  # the model starts at hour 0
        self.points = 0.0
        self.reminder = 0.0
        self.time = 0.0

    def advance(self, rng: random.Random) -> None:
        """Move ``time`` to this kind's next arrival."""
        while True:
            gam = rng.gammavariate(self.cls.aarr * self.cls.arar, self.cls.barr)
            if gam <= TOO_MUCH_ARRIVE_TIME:
                break
        self.points += math.exp(gam) / SECONDS_IN_BUCKET
        step = 0.0
        while self.points > self.weights[self.bucket]:
            self.points -= self.weights[self.bucket]
            self.bucket = (self.bucket + 1) % BUCKETS
            step += SECONDS_IN_BUCKET
        new_reminder = self.points / self.weights[self.bucket]
        step += SECONDS_IN_BUCKET * (new_reminder - self.reminder)
        self.reminder = new_reminder
        self.time += step


def generate_lublin(spec: LublinSpec | None = None) -> Iterator[LublinJob]:
    """Yield ``spec.jobs`` jobs in arrival order, numbered from 1."""
    spec = spec or LublinSpec()
    if spec.jobs < 0:
        raise ValueError(f"jobs must be >= 0, not {spec.jobs}")
    if spec.estimate_factor < 1:
        raise ValueError(f"estimate_factor must be >= 1, not {spec.estimate_factor}")
    rng = random.Random(spec.seed)
    kinds = classes_for(spec.procs)
    clocks = (_Arrivals(kinds[INTERACTIVE]), _Arrivals(kinds[BATCH]))
    for clock in (clocks[BATCH], clocks[INTERACTIVE]):  # arrive_init's order
        clock.advance(rng)
    for number in range(1, spec.jobs + 1):
        kind = BATCH if clocks[BATCH].time < clocks[INTERACTIVE].time else INTERACTIVE
        arrival = int(clocks[kind].time)
        clocks[kind].advance(rng)
        cls = kinds[kind]
        size = min(job_size(rng, cls), spec.procs)
        runtime = job_runtime(rng, cls, size)
        requested = max(1, math.ceil(runtime * spec.estimate_factor))
        yield LublinJob(number, arrival, size, runtime, kind, requested)


def lublin_records(jobs: Iterator[LublinJob] | list[LublinJob]) -> list[SWFRecord]:
    """SWF records: sizes in fields 5 and 8, runtime 4, requested time 9, type in 15."""
    out = []
    for j in jobs:
        out.append(SWFRecord(
            job_number=j.number, submit_time=j.arrival, run_time=j.runtime,
            allocated_procs=j.size, requested_procs=j.size, requested_time=j.requested,
            status=STATUS_COMPLETED, queue=j.kind,
        ))  # fmt: skip
    return out


def lublin_header(spec: LublinSpec) -> tuple[str, ...]:
    """The SWF header of a generated trace (``UnixStartTime``: midnight, the model's hour 0)."""
    return (
        "Version: 2.2",
        "Computer: Lublin-Feitelson 1999 workload model (minislurm.sim.workload.lublin)",
        "Acknowledge: Uri Lublin and Dror Feitelson, Hebrew University",
        f"Note: seed {spec.seed}, estimate_factor {spec.estimate_factor}",
        f"UnixStartTime: {spec.start}",
        f"MaxJobs: {spec.jobs}",
        f"MaxRecords: {spec.jobs}",
        f"MaxNodes: {spec.procs}",
        f"MaxProcs: {spec.procs}",
        f"MaxRuntime: {int(math.exp(TOO_MUCH_TIME))}",
        "Queues: 0 interactive, 1 batch",
    )


def lublin_swf(spec: LublinSpec | None = None) -> str:
    """The whole trace as SWF text."""
    spec = spec or LublinSpec()
    return format_swf(lublin_records(list(generate_lublin(spec))), lublin_header(spec))


def lublin_workload(spec: LublinSpec | None = None) -> SWFWorkload:
    """The trace as an ``SWFWorkload`` (what ``read_swf`` of its file gives)."""
    spec = spec or LublinSpec()
    return SWFWorkload(lublin_header(spec), tuple(lublin_records(list(generate_lublin(spec)))))


__all__ = [
    "BATCH",
    "BATCH_128",
    "BUCKETS",
    "INTERACTIVE",
    "INTERACTIVE_128",
    "LUBLIN_EPOCH",
    "LublinClass",
    "LublinJob",
    "LublinSpec",
    "bucket_weights",
    "classes_for",
    "gamma_cdf",
    "generate_lublin",
    "job_runtime",
    "job_size",
    "lublin_header",
    "lublin_records",
    "lublin_swf",
    "lublin_workload",
]
