"""priority/multifactor: a job's priority as the weighted sum Slurm documents.

https://slurm.schedmd.com/priority_multifactor.html::

    Job_priority = site_factor
                 + PriorityWeightAge * age_factor
                 + PriorityWeightAssoc * assoc_factor
                 + PriorityWeightFairshare * fair-share_factor
                 + PriorityWeightJobSize * job_size_factor
                 + PriorityWeightPartition * partition_factor
                 + PriorityWeightQOS * QOS_factor
                 + SUM(TRES_weight_<type> * TRES_factor_<type>)
                 - nice_factor

Each factor below is a pure function mirroring ``set_priority_factors`` of
``src/plugins/priority/multifactor/priority_multifactor.c``; ``MultifactorPriority``
ties them to the decaying usage (``UsageTracker``) and the fair-share tree.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from typing import Any

from minislurm.common.accounts import AssociationSet, AssocKey, flat_associations
from minislurm.priority.factors import (
    INFINITE,
    MAX_PRIORITY,
    ClusterView,
    MultifactorParams,
    PartitionView,
    PriorityFactors,
)
from minislurm.priority.fairshare import ShareRow, compute_shares, job_fairshare
from minislurm.priority.usage import UsageTracker, billable_seconds
from minislurm.states import JobState

PLUGIN_TYPE = "priority/multifactor"

#: Jobs whose time-independent factors ``MultifactorPriority`` keeps (then it starts over).
_STATIC_CACHE = 65536

#: A job's time-independent priority terms (`MultifactorPriority._static_entry`).
_Terms = tuple[float, float, float, float, float, float, float]


def age_factor(
    now: int,
    *,
    accrue_time: int | None,
    submit_time: int,
    max_age: int,
    accrue_always: bool = False,
) -> float:
    """Time eligible in the queue / ``PriorityMaxAge``, capped at 1.0.

    Counts from the job's accrue time (when it became eligible), or from its submit
    time with ``PriorityFlags=ACCRUE_ALWAYS``; a job that does not accrue gets 0.
    """
    use_time = submit_time if accrue_always else accrue_time
    if not use_time and not accrue_always:
        return 0.0
    diff = max(0, now - (use_time or 0))
    if diff < max_age:
        return diff / max_age
    return 1.0


def job_size_factor(
    *,
    num_nodes: int,
    num_cpus: int,
    node_count: int,
    cpu_count: int,
    favor_small: bool = False,
    small_relative_to_time: bool = False,
    time_limit: int | None = None,
    partition_max_time: int | None = None,
) -> float:
    """The job size factor (``PriorityFavorSmall``, ``SMALL_RELATIVE_TO_TIME``).

    Default: mean of ``nodes / cluster nodes`` and ``cpus / cluster cpus`` (favour
    large) or of their complements (``PriorityFavorSmall=YES``).  With
    ``SMALL_RELATIVE_TO_TIME``: ``max(cpus, nodes * cpus per node) / time limit in
    minutes / cluster cpus`` (``1 -`` that when favouring small).  Clamped to 0..1.
    """
    min_nodes = num_nodes
    if node_count <= 0 or cpu_count <= 0:
        return 0.0
    if small_relative_to_time:
        js = min_nodes * cpu_count / node_count
        if num_cpus > js:
            js = float(num_cpus)
        if time_limit is not None:
            limit = time_limit
        elif partition_max_time is not None:
            limit = partition_max_time
        else:
            limit = INFINITE
        js /= max(limit, 1)
        js /= cpu_count
        if favor_small:
            js = 1.0 - js
    elif favor_small:
        js = (node_count - min_nodes) / node_count
        if num_cpus:
            js += (cpu_count - num_cpus) / cpu_count
            js /= 2
    else:
        js = min_nodes / node_count
        if num_cpus:
            js += num_cpus / cpu_count
            js /= 2
    return min(1.0, max(0.0, js))


def partition_factor(
    priority_job_factor: int, max_priority: int, *, normalize: bool = True
) -> float:
    """``PriorityJobFactor`` / the highest over all partitions (raw with NO_NORMAL_PART)."""
    if not priority_job_factor:
        return 0.0
    if not normalize:
        return float(priority_job_factor)
    return priority_job_factor / max_priority if max_priority else 0.0


def qos_factor(qos_priority: int, max_priority: int, *, normalize: bool = True) -> float:
    """QOS ``Priority`` / the highest QOS Priority (raw with NO_NORMAL_QOS)."""
    if not qos_priority:
        return 0.0
    if not normalize:
        return float(qos_priority)
    return qos_priority / max_priority if max_priority else 0.0


def assoc_factor(assoc_priority: int, max_priority: int, *, normalize: bool = True) -> float:
    """Association ``Priority`` / the highest one (raw with NO_NORMAL_ASSOC)."""
    if not assoc_priority:
        return 0.0
    if not normalize:
        return float(assoc_priority)
    return assoc_priority / max_priority if max_priority else 0.0


def tres_factors(
    names: tuple[str, ...],
    job_tres: Mapping[str, int],
    partition_tres: Mapping[str, int],
    *,
    normalize: bool = True,
) -> tuple[tuple[str, float], ...]:
    """Each weighted TRES: the job's count / the partition's total (raw with NO_NORMAL_TRES)."""
    out = []
    for name in names:
        value = job_tres.get(name, 0)
        if not value:
            factor = 0.0
        elif not normalize:
            factor = float(value)
        elif partition_tres.get(name):
            factor = value / partition_tres[name]
        else:
            factor = 0.0
        out.append((name, factor))
    return tuple(out)


def job_factors(
    job: Any,
    now: int,
    params: MultifactorParams,
    cluster: ClusterView,
    associations: AssociationSet,
    fairshare: float,
    *,
    partition: str | None = None,
) -> PriorityFactors:
    """All factors of ``job`` (a ``JobRecord``) in ``partition`` (default: its first).

    A factor whose weight is 0 is left 0, as Slurm skips computing it.
    """
    w = params.weights
    part_name = partition or str(job.partition).split(",")[0]
    part = cluster.partitions.get(part_name, PartitionView(part_name, priority_job_factor=0))
    accrue = job.accrue_time if job.accrue_time is not None else job.eligible_time
    age = 0.0
    if w.age:
        age = age_factor(
            now,
            accrue_time=accrue,
            submit_time=job.submit_time,
            max_age=params.max_age,
            accrue_always=params.has("ACCRUE_ALWAYS"),
        )
    js = 0.0
    if w.job_size:
        js = job_size_factor(
            num_nodes=job.num_nodes,
            num_cpus=job.num_cpus,
            node_count=cluster.node_count,
            cpu_count=cluster.cpu_count,
            favor_small=params.favor_small,
            small_relative_to_time=params.has("SMALL_RELATIVE_TO_TIME"),
            time_limit=job.time_limit,
            partition_max_time=part.max_time,
        )
    pf = 0.0
    if w.partition:
        pf = partition_factor(
            part.priority_job_factor,
            cluster.max_partition_priority,
            normalize=not params.has("NO_NORMAL_PART"),
        )
    qf = 0.0
    qos = associations.qos_named(job.qos) if job.qos else None
    if w.qos and qos is not None:
        qf = qos_factor(
            qos.priority, associations.max_qos_priority(), normalize=not params.has("NO_NORMAL_QOS")
        )
    af = 0.0
    key: AssocKey = (job.account, job.user)
    if w.assoc and associations.get(key) is not None:
        af = assoc_factor(
            associations.assoc_priority(key),
            associations.max_assoc_priority(),
            normalize=not params.has("NO_NORMAL_ASSOC"),
        )
    tres: tuple[tuple[str, float], ...] = ()
    if w.tres:
        job_tres = job.tres_alloc or job.tres_req
        tres = tres_factors(
            tuple(n for n, _ in w.tres),
            job_tres,
            part.tres_total,
            normalize=not params.has("NO_NORMAL_TRES"),
        )
    return PriorityFactors(
        job_id=job.job_id,
        partition=part_name,
        user=job.user,
        account=job.account,
        weights=w,
        site=int(getattr(job, "site_factor", 0) or 0),
        age=age,
        assoc=af,
        fairshare=fairshare if w.fairshare else 0.0,
        job_size=js,
        part=pf,
        qos=qf,
        nice=int(job.nice),
        tres=tres,
    )


def _static_key(job: Any) -> tuple[Any, ...]:
    """The fields a job's time-independent priority terms are computed from (without
    ``TRESBillingWeights``'s TRES, which `MultifactorPriority._static_entry` adds)."""
    return (job.partition, job.num_nodes, job.num_cpus, job.time_limit, job.qos,
            job.account, job.user, job.nice, getattr(job, "site_factor", 0))


class MultifactorPriority:
    """``PriorityType=priority/multifactor``: factors, fair share and decaying usage.

    Fair-share data are recomputed at most once per ``PriorityCalcPeriod`` (as the
    decay thread does), or sooner after new usage is recorded.
    """

    name = PLUGIN_TYPE
    #: age and fair share change with time: ``PriorityCalcPeriod`` recomputes them
    recalculates = True

    def __init__(
        self,
        params: MultifactorParams,
        cluster: ClusterView,
        associations: AssociationSet | None = None,
        *,
        start: int = 0,
    ) -> None:
        self.params = params
        self.cluster = cluster
        self.associations = associations or flat_associations()
        self.usage = UsageTracker(
            self.associations,
            half_life=params.decay_half_life,
            reset_period=params.usage_reset_period,
            start=start,
        )
        if params.usage_reset_period == "NOW":
            self.usage.reset(start)
        self._rows: dict[AssocKey, ShareRow] | None = None
        self._rows_at: int | None = None
        self._rows_version = -1
        self._highest: dict[int, int] = {}
        self._static: dict[int, tuple[tuple[Any, ...], PriorityFactors, _Terms]] = {}
        self._no_age = replace(params, weights=replace(params.weights, age=0))
        self._accrue_always = params.has("ACCRUE_ALWAYS")

    def _rows_stale(self, now: int) -> bool:
        return (
            self._rows is None
            or self._rows_at is None
            or now < self._rows_at
            or now - self._rows_at >= self.params.calc_period
            or self._rows_version != self.usage.version
        )

    def share_rows(self, now: int) -> dict[AssocKey, ShareRow]:
        """The fair-share data at ``now`` (what ``sshare`` shows)."""
        if self._rows_stale(now):
            raw = self.usage.raw_usage(now)
            self._rows = compute_shares(
                self.associations,
                raw,
                fair_tree=self.params.fair_tree,
                damp_factor=self.params.damp_factor,
                depth_oblivious=self.params.has("DEPTH_OBLIVIOUS"),
            )
            self._rows_at = now
            self._rows_version = self.usage.version
        assert self._rows is not None
        return self._rows

    def factors(self, job: Any, now: int, *, partition: str | None = None) -> PriorityFactors:
        """The factors ``sprio`` prints for ``job`` at ``now``."""
        fs = 0.0
        if self.params.weights.fairshare:
            fs = job_fairshare(self.share_rows(now), self.associations, job.user, job.account)
        return job_factors(
            job, now, self.params, self.cluster, self.associations, fs, partition=partition
        )

    def factors_list(
        self,
        jobs: Iterable[Any],
        now: int,
        *,
        job_ids: Collection[int] | None = None,
        users: Collection[str] | None = None,
        partitions: Collection[str] | None = None,
    ) -> list[PriorityFactors]:
        """What sprio lists (``priority_p_get_priority_factors_list``), sorted by job id.

        Pending jobs only (all jobs with ``CALCULATE_RUNNING``), not held, already
        eligible (begin time, or submit time with ``ACCRUE_ALWAYS``, not in the future);
        one row per partition of a multi-partition job.
        """
        out = []
        for job in jobs:
            if job.state is not JobState.PENDING and not self.params.has("CALCULATE_RUNNING"):
                continue
            if getattr(job, "hold", False):
                continue
            if self.params.has("ACCRUE_ALWAYS"):
                use_time = job.submit_time
            else:
                use_time = job.begin_time or job.eligible_time
            if not use_time or use_time > now:
                continue
            if job_ids is not None and job.job_id not in job_ids:
                continue
            if users is not None and job.user not in users:
                continue
            for part in str(job.partition).split(","):
                if partitions is None or part in partitions:
                    out.append(self.factors(job, now, partition=part))
        return sorted(out, key=lambda f: (f.job_id, f.partition))

    def priority(self, job: Any, now: int) -> int:
        """The job's priority at ``now`` (0 for a held job, as Slurm reserves 0 for holds).

        The same number as ``factors(job, now).priority``, computed without building the
        factors anew: only age and fair share change with time, so the other factors of
        a job are kept (per job id, while the fields they read stay the same) and the
        weighted sum is taken in the same order as ``PriorityFactors.priority``.
        """
        return self.priorities((job,), now)[0]

    def priorities(self, jobs: Iterable[Any], now: int) -> list[int]:
        """``priority(job, now)`` of each of ``jobs``: one ``PriorityCalcPeriod`` pass.

        The decay thread of priority/multifactor recomputes every pending job at once;
        the shared work is done once: the fair-share rows are read once, each
        association's factor is looked up once, and the time-independent factors of a
        job (with their TRES sum) are kept while the fields they read stay the same.
        """
        w, params = self.params.weights, self.params
        rows = self.share_rows(now) if w.fairshare else None
        fs_of: dict[tuple[str, str], float] = {}
        w_age, w_fs, max_age = w.age, w.fairshare, params.max_age
        always, incr_only = self._accrue_always, params.has("INCR_ONLY")
        static, with_tres = self._static, bool(w.tres)
        out: list[int] = []
        for job in jobs:
            if getattr(job, "hold", False):
                out.append(0)
                continue
            fs = 0.0
            if rows is not None:
                user, account = job.user, job.account
                hit = fs_of.get((user, account))
                if hit is None:
                    hit = fs_of[(user, account)] = job_fairshare(
                        rows, self.associations, user, account)
                fs = hit
            # _static_entry's lookup, inline (once per pending job and pass): the entry
            # is used only while its key, the fields it was computed from, is the same;
            # with TRES weights the key has the TRES too: _static_entry compares it
            entry = static.get(job.job_id)
            if entry is None or with_tres or entry[0] != _static_key(job):
                entry = self._static_entry(job, now)
            site, w_assoc, w_size, w_part, w_qos, tres_sum, nice = entry[2]
            age = 0.0
            if w_age:  # age_factor, inline
                use = job.submit_time if always else (
                    job.accrue_time if job.accrue_time is not None else job.eligible_time)
                if use or always:
                    diff = now - (use or 0)
                    if diff < 0:  # max(0, diff)
                        diff = 0
                    age = diff / max_age if diff < max_age else 1.0
            total = (site + age * w_age + w_assoc + fs * w_fs + w_size + w_part + w_qos
                     + tres_sum - nice)  # fmt: skip
            # int(min(total, MAX_PRIORITY)), without the two calls
            prio = (int(total) if total < MAX_PRIORITY else MAX_PRIORITY) if total >= 1 else 1
            if incr_only:  # PriorityFlags=INCR_ONLY: never decreases
                prio = max(prio, self._highest.get(job.job_id, 0))
                self._highest[job.job_id] = prio
            out.append(prio)
        return out

    @property
    def history_free(self) -> bool:
        """True when a pass's numbers do not depend on the passes before it (no
        ``INCR_ONLY``, which keeps each job's highest priority so far)."""
        return not self.params.has("INCR_ONLY")

    def decay_only(self, now: int) -> None:
        """A ``PriorityCalcPeriod`` pass whose priorities nobody will read (the next pass
        comes before anything else happens): only the usage decay ``priorities`` would
        apply at ``now`` (through ``share_rows``), so every later number is the same to
        the last bit as if the pass had been made."""
        if self.params.weights.fairshare and self._rows_stale(now):
            self.usage.advance(now)
            self._rows = None  # the next pass rebuilds the rows, as it would have

    def unread_pass(self, now: int) -> bool:
        """A pass nobody reads: the usage decay only (``decay_only``) when the numbers do
        not depend on the passes before (``history_free``), else ask for the full pass."""
        if not self.history_free:
            return False
        self.decay_only(now)
        return True

    def renice(self, priority: int, old_nice: int, new_nice: int) -> int | None:
        """``Nice=`` is one of the factors: the priority is computed anew."""
        return None

    def _static_entry(self, job: Any, now: int) -> tuple[tuple[Any, ...], PriorityFactors, _Terms]:
        """(what they are computed from, the factors of ``job`` that do not change with
        time (age and fair share 0), the time-independent terms of
        the priority sum as the floats ``PriorityFactors.priority`` adds: site, weighted
        association, job size, partition and QOS factors, the weighted TRES sum, nice),
        kept per job id while the fields they read stay the same: a
        ``PriorityCalcPeriod`` pass (``_set_priority_factors`` for every pending job)
        then multiplies no weight again."""
        key = _static_key(job)
        if self.params.weights.tres:
            key += (tuple(sorted((job.tres_alloc or job.tres_req).items())),)
        hit = self._static.get(job.job_id)
        if hit is not None and hit[0] == key:
            return hit
        if len(self._static) > _STATIC_CACHE:
            self._static.clear()
        factors = job_factors(job, now, self._no_age, self.cluster, self.associations, 0.0)
        tres_sum = self._tres_sum(factors)
        terms = (factors.site, factors.weighted_assoc, factors.weighted_job_size,
                 factors.weighted_part, factors.weighted_qos, tres_sum, factors.nice)
        entry = self._static[job.job_id] = (key, factors, terms)
        return entry

    @staticmethod
    def _tres_sum(static: PriorityFactors) -> float:
        return sum(v for _, v in static.weighted_tres)

    def record_usage(
        self,
        user: str,
        account: str,
        tres_seconds: Mapping[str, float],
        now: int,
        *,
        qos: str | None = None,
        period: float = 0.0,
    ) -> None:
        """Charge a job's TRES-seconds (billing, else cpu) x QOS ``UsageFactor``."""
        amount = billable_seconds(tres_seconds)
        q = self.associations.qos_named(qos) if qos else None
        if q is not None and q.usage_factor >= 0:
            amount *= q.usage_factor
        key: AssocKey = (account, user)
        if self.associations.get(key) is None:
            return  # Slurm: a job without an association accrues no fair-share usage
        self.usage.record(key, amount, now, period=period)


__all__ = [
    "PLUGIN_TYPE",
    "MultifactorPriority",
    "age_factor",
    "assoc_factor",
    "job_factors",
    "job_size_factor",
    "partition_factor",
    "qos_factor",
    "tres_factors",
]
