"""slurmctld's state save and recovery: the controller to and from ``StateSaveLocation``.

Real slurmctld dumps its jobs (``dump_all_job_state``), nodes, partitions,
reservations and association usage into files in StateSaveLocation and reads them
back when it starts (``load_all_job_state`` ... in ``read_config.c``); running jobs
keep running meanwhile, because their slurmstepd does not depend on slurmctld. When
slurmd registers again, slurmctld learns which of them still run and which ended.

`dump_state` turns a `Controller` (plus its step bookkeeping and slurmd) into the
parts `minislurm.ctld.state_files.StateFiles` writes; `load_state` puts them into a
fresh controller of the same configuration:

* every job, with its script, environment, options and all its attempts so far;
  pending, held and requeued jobs wait again (their BeginTime timers re-armed); the
  job id counter goes on where it was;
* running jobs are re-adopted through slurmd (`ProcessRunner.recover`): their nodes
  are allocated again, their time limit and ``--signal`` timers re-armed; a job that
  ended while no controller ran is finished *at the time it ended* (so sacct's
  Elapsed is the real run time); a job whose launch left no trace is requeued like
  after a node failure (NODE_FAIL when it may not be requeued);
* node states and reasons, partition states, reservations, every accounting row and
  the fair-share usage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from minislurm.states import JobState

from . import lifecycle
from .job_mgr import Job
from .runner import SIGKILL, RecoversJobs
from .state import CtldState
from .state_codec import decode, encode

__all__ = ["JsonText", "KeepsState", "dump_state", "load_state"]


@runtime_checkable
class KeepsState(Protocol):
    """A daemon part with bookkeeping of its own that a restart must not lose: slurmd
    (``ProcessRunner``: srun steps' process groups and ports) and the step service
    (the next step id of each job, the steps still open).  Its data is saved inside
    ``job_state``, like slurmctld's step records inside each job's."""

    def export_state(self) -> dict[str, Any]: ...

    def import_state(self, data: Mapping[str, Any]) -> None: ...


@runtime_checkable
class KeepsUsage(Protocol):
    """A priority plugin with decayed usage per association (priority/multifactor's
    ``assoc_usage``), which a restart must keep."""

    @property
    def usage(self) -> KeepsState: ...


#: NodeInfo attributes a node keeps across a restart (its jobs are re-allocated).
NODE_FIELDS = ("down", "flags", "reason", "reason_time", "reason_user", "boot_time",
               "slurmd_start_time", "last_busy_time")

_ACTIVE = (JobState.RUNNING, JobState.COMPLETING, JobState.CONFIGURING)


#: Job attributes that are caches of others (rebuilt on demand, never saved).
_CACHES = ("_snap", "_alloc_cache", "_nodelist_cache")  # _nodelist_cache: older saves


def _attrs(job: Job) -> dict[str, Any]:
    if hasattr(job, "__dict__"):
        return {k: v for k, v in vars(job).items() if k not in _CACHES}
    return {k: getattr(job, k) for k in getattr(job, "__slots__", ()) if hasattr(job, k)}


# ---- dumping -------------------------------------------------------------------------
def _encode_job(job: Job, cache: dict[Any, Any] | None, memo: dict[int, Any] | None = None
                ) -> dict[str, Any]:
    """A job's attributes, encoded; an ended job (which no longer changes) is encoded once.

    ``memo`` maps ``id(value)`` of frozen values (options, bodies: most of a job's
    bytes, never changed in place) to ``(value, encoding)`` so that a save re-encodes
    only what is new; the caller passes the previous save's memo in ``cache``.
    """
    key = (id(job), job.state, job.end_time, job.restart_count, len(job.steps))
    if cache is not None and job.state.is_terminal:
        hit = cache.get(job.job_id)
        if hit is not None and hit[0] == key:
            encoded: dict[str, Any] = hit[1]
            return encoded
    if memo is None:
        data = {k: encode(v) for k, v in _attrs(job).items()}
    else:
        old: dict[int, Any] = cache.get(_MEMO, {}) if cache is not None else {}
        data = {}
        for k, v in _attrs(job).items():
            if _frozen(v):
                hit = memo.get(id(v)) or old.get(id(v))
                if hit is None or hit[0] is not v:
                    hit = (v, encode(v))
                memo[id(v)] = hit
                data[k] = hit[1]
            else:
                data[k] = encode(v)
    if cache is not None and job.state.is_terminal:
        cache[job.job_id] = (key, data)
    return data


#: The keys of ``cache`` holding the previous save's memo of frozen values and its
#: job texts (job id -> (key, JSON, env reference, env JSON)).
_MEMO = "frozen-values"
_FRAGMENTS = "job-texts"


def _frozen(value: Any) -> bool:
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and bool(params.frozen)


def _expand_envs(jobs: list[dict[str, Any]], envs: dict[str, Any] | None = None
                 ) -> list[dict[str, Any]]:
    """Put each job's submit environment back: from ``envs`` (reference -> env), or
    from the table first in the list (files written before the references)."""
    table: Any = envs
    if not envs:
        if not jobs or "__envs__" not in jobs[0]:
            return jobs
        table, jobs = jobs[0]["__envs__"], jobs[1:]
    out = []
    for data in jobs:
        body: Any = data.get("body")
        env = body.get("submit_env") if isinstance(body, dict) else None
        if isinstance(env, dict) and "__env__" in env:
            ref = env["__env__"]
            data = {**data, "body": {**body, "submit_env": table[ref if envs else int(ref)]}}
        out.append(data)
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class JsonText:
    """A part already serialised as JSON (`StateFiles.save` writes it as is)."""

    text: str


def _job_key(job: Job) -> tuple[Any, ...]:
    """Equal while nothing of ``job`` changed (as `Job.snapshot`'s cache key: every
    attribute is a scalar or a frozen value but the lists and the array bodies)."""
    values = tuple(vars(job).values())[1:]  # all but ``_snap``, the first attribute
    return (values, len(job.steps), len(job.array_pending), len(job.array_bodies or ()))


def _job_fragment(job: Job, cache: dict[Any, Any] | None, memo: dict[int, Any],
                  envs: dict[str, str], old: dict[int, Any], new: dict[int, Any]) -> str:
    """One job of ``job_state`` as JSON text, its submit environment replaced by a
    reference into ``envs`` (content hash -> JSON text). Unchanged jobs reuse the text
    of the previous save, so a save costs what changed plus one join."""
    key = _job_key(job)
    hit = old.get(job.job_id)
    text: str
    if hit is not None and hit[0] == key:
        _key, text, env_ref, env_text = hit
    else:
        data = _encode_job(job, cache, memo)
        env_ref = env_text = None
        body: Any = data.get("body")
        env = body.get("submit_env") if isinstance(body, dict) else None
        if isinstance(env, dict):
            env_text = json.dumps(env, sort_keys=True, separators=(",", ":"))
            env_ref = hashlib.sha1(env_text.encode()).hexdigest()[:16]
            data = {**data, "body": {**body, "submit_env": {"__env__": env_ref}}}
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    new[job.job_id] = (key, text, env_ref, env_text)
    if env_ref is not None:
        envs[env_ref] = env_text
    return text


def dump_state(ctl: CtldState, *, steps: KeepsState | None = None, runner: object | None = None,
               cache: dict[Any, Any] | None = None) -> dict[str, Any]:
    """The controller's state as the data of each state file (see `StateFiles`).

    ``runner`` (default: the controller's) may add what slurmd keeps (``export_state``);
    ``cache`` (kept by the caller between saves) spares re-encoding unchanged jobs.
    ``job_state`` comes back as `JsonText`: ``{"envs": {ref: env}, "jobs": [...],
    "next_job_id": N, ...}``.
    """
    runner = runner if runner is not None else ctl.runner
    memo: dict[int, Any] = {}
    envs: dict[str, str] = {}
    ordered = sorted(ctl._jobs.values(), key=lambda j: j.job_id)
    old: dict[int, Any] = cache.get(_FRAGMENTS, {}) if cache is not None else {}
    new: dict[int, Any] = {}
    fragments = [_job_fragment(j, cache, memo, envs, old, new) for j in ordered]
    if cache is not None:  # what this save saw; what is gone is let go
        cache[_MEMO], cache[_FRAGMENTS] = memo, new
    job_state: dict[str, Any] = {"next_job_id": ctl._next_id}
    if steps is not None:
        job_state["steps"] = steps.export_state()
    if isinstance(runner, KeepsState):
        job_state["slurmd"] = runner.export_state()
    rest = json.dumps(job_state, sort_keys=True, separators=(",", ":"))
    env_table = ",".join(f'"{ref}":{envs[ref]}' for ref in sorted(envs))
    job_state_text = JsonText(f'{{"envs":{{{env_table}}},"jobs":[{",".join(fragments)}],'
                              + rest[1:])
    nodes = {info.name: {f: encode(getattr(info, f)) for f in NODE_FIELDS}
             for info in ctl.nodes_mgr.infos}
    parts = {name: pv.state for name, pv in ctl.parts.items()}
    store = ctl.accounting_store
    accounting = {
        "attempts": encode(list(store.attempts)),
        "usage": [[list(k), dict(v)] for k, v in store.usage.items()],
    }
    return {"job_state": job_state_text, "node_state": nodes, "part_state": parts,
            "resv_state": {"top_suffix": ctl.resv_top_suffix,
                           "resvs": encode(list(ctl.reservations_by_name.values()))},
            "assoc_usage": _dump_usage(ctl), "accounting": accounting}


def _usage_of(ctl: CtldState) -> KeepsState | None:
    """priority/multifactor's decayed usage per association (Slurm's ``assoc_usage``);
    None under a priority plugin that keeps none."""
    plugin = ctl.priority_plugin
    return plugin.usage if isinstance(plugin, KeepsUsage) else None


def _dump_usage(ctl: CtldState) -> dict[str, Any]:
    usage = _usage_of(ctl)
    return usage.export_state() if usage is not None else {}


# ---- loading -------------------------------------------------------------------------
def _decode_job(data: dict[str, Any]) -> Job:
    job = Job(int(data["job_id"]), str(data.get("name", "")), int(data.get("submit_time", 0)))
    for key, value in data.items():
        if key not in _CACHES:  # state saved before the caches were left out
            setattr(job, key, decode(value))
    return job


@contextlib.contextmanager
def _clock_at(ctl: CtldState, timestamp: int | None) -> Iterator[None]:
    """Let the controller's ``now`` read ``timestamp`` (in the past) for one action:
    a job that ended while no controller ran is finished when it really ended."""
    if timestamp is None or timestamp >= ctl.now:
        yield
        return
    saved = ctl.clock_offset
    ctl.clock_offset = saved - (ctl.now - timestamp)
    try:
        yield
    finally:
        ctl.clock_offset = saved


def load_state(ctl: CtldState, parts: dict[str, Any], *, steps: KeepsState | None = None,
               runner: object | None = None) -> list[str]:
    """Put a saved state into the fresh controller ``ctl``; slurmctld's log lines.

    Running jobs are found again through ``runner`` (default: the controller's), which
    must offer ``recover`` (`ProcessRunner.recover`); without it they count as lost.
    """
    runner = runner if runner is not None else ctl.runner
    log: list[str] = []
    job_state = parts.get("job_state") or {}
    for name, state in (parts.get("part_state") or {}).items():
        if name in ctl.parts:
            ctl.parts[name] = dataclasses.replace(ctl.parts[name], state=str(state))
    resv_state = parts.get("resv_state") or []
    if isinstance(resv_state, dict):  # slurmctld keeps top_suffix: ids go on after a restart
        ctl.resv_top_suffix = int(resv_state.get("top_suffix", 0))
        resv_state = resv_state.get("resvs") or []
    resvs = decode(resv_state)
    ctl.resv_top_suffix = max([ctl.resv_top_suffix,
                                *(int(r.resv_id) for r in resvs)])
    for resv in resvs:
        ctl.reservations_by_name[resv.name] = resv
        ctl.wake_at(resv.start)
        ctl.wake_at(resv.end)
        log.append(f"Recovered state of reservation {resv.name}")
    if resvs:
        log.append(f"Recovered state of {len(resvs)} reservations")
    _load_accounting(ctl, parts.get("accounting") or {}, parts.get("assoc_usage") or {})
    if isinstance(runner, KeepsState) and job_state.get("slurmd"):
        runner.import_state(job_state["slurmd"])
    if steps is not None and job_state.get("steps"):
        steps.import_state(job_state["steps"])
    jobs = [_decode_job(d) for d in _expand_envs(list(job_state.get("jobs", [])),
                                                  job_state.get("envs"))]
    ctl._next_id = max(ctl._next_id, int(job_state.get("next_job_id", 0)))
    active = []
    for job in jobs:
        ctl.register(job)
        if job.state is JobState.PENDING:
            ctl.add_pending(job)
            ctl.wake_at(job.begin_time)
        elif job.state in _ACTIVE:
            active.append(job)
    log.append(f"Recovered information about {len(jobs)} jobs")
    for job in active:
        if job.allocation is not None and all(n.node in ctl.nodes_mgr.by_name
                                              for n in job.allocation.nodes):
            ctl.nodes_mgr.allocate(job.job_id, job.allocation, ctl.now)
            ctl.running_started(job)
    _load_nodes(ctl, parts.get("node_state") or {}, log)
    for job in active:
        _adopt(ctl, job, runner, log)
    ctl.kick()
    return log


def _load_nodes(ctl: CtldState, data: dict[str, Any], log: list[str]) -> None:
    mgr = ctl.nodes_mgr
    for name, fields in data.items():
        info = mgr.by_name.get(name)
        if info is None:
            log.append(f"error: Node {name} has vanished from configuration")
            continue
        for field in NODE_FIELDS:
            if field in fields:
                setattr(info, field, decode(fields[field]))
    mgr.refresh_usable()
    if data:
        log.append(f"Recovered state of {len(data)} nodes")


def _load_accounting(ctl: CtldState, acct: dict[str, Any], usage: dict[str, Any]) -> None:
    store = ctl.accounting_store
    store.attempts = list(decode(acct.get("attempts") or []))
    for key, values in acct.get("usage") or []:
        row = store.usage[(str(key[0]), str(key[1]))]
        for tres, amount in values.items():
            row[tres] = float(amount)
    tracker = _usage_of(ctl)
    if tracker is not None and usage:
        tracker.import_state(usage)


def _adopt(ctl: CtldState, job: Job, runner: object | None, log: list[str]) -> None:
    """A job that was running when the controller stopped: find it again through slurmd."""
    attempt = job.attempt
    if (job.allocation is None or not isinstance(runner, RecoversJobs)
            or job.job_id not in ctl._running):
        rec = None
    else:
        rec = runner.recover(job.snapshot(), job.allocation, job.body)
    if rec is None or rec.lost:
        log.append(f"error: Killing non-startable batch JobId={job.job_id}: "
                   "no step daemon found")
        if job.job_id not in ctl._running:  # its nodes are gone from the configuration
            job.allocation = None
            lifecycle.finish(ctl, job, JobState.NODE_FAIL, 0, 0)
        elif job.state is JobState.COMPLETING:
            lifecycle.completed(ctl, job)
        elif job.requeue and job.batch_flag and job.job_id in ctl._running:
            lifecycle.requeue(ctl, job, JobState.NODE_FAIL)
        else:
            lifecycle.finish(ctl, job, JobState.NODE_FAIL, 0, 0)
        return
    rec.event.callbacks.append(lambda ev: lifecycle.body_ended(ctl, job, attempt, ev.value))
    if rec.ended is not None:
        end = rec.end_time if rec.end_time is None else max(rec.end_time, job.start_time or 0)
        with _clock_at(ctl, end):
            lifecycle.body_ended(ctl, job, attempt, rec.ended)
        log.append(f"Recovered JobId={job.job_id}: ended while slurmctld was down")
        return
    log.append(f"Recovered JobId={job.job_id} running")
    if job.state is JobState.RUNNING:
        lifecycle.arm_time_limit(ctl, job)
        _arm_warning(ctl, job, runner)
    else:  # COMPLETING: SIGTERM was sent, SIGKILL follows KillWait after it
        due = (job.end_time or ctl.now) + ctl.kill_wait - ctl.now

        def force(_ev: object) -> None:
            if job.attempt == attempt and job.state is JobState.COMPLETING:
                ctl.runner.kill(job.job_id, SIGKILL)
                if job.state is JobState.COMPLETING and job.attempt == attempt:
                    lifecycle.completed(ctl, job)

        ctl.env.timeout(max(due, 0)).callbacks.append(force)


def _arm_warning(ctl: CtldState, job: Job, runner: object | None) -> None:
    """``--signal=SIG@TIME`` of a re-adopted job: still to come, or late if it fell due
    while no controller ran (never twice: slurmd remembers what it sent)."""
    end = lifecycle.running_end(job)
    if job.signal_spec is None or lifecycle.limit_deadline(ctl, job) is None or end is None:
        return
    warned = runner.warned if isinstance(runner, RecoversJobs) else {}
    if warned.get(job.job_id) == job.restart_count:
        return
    sig, before = job.signal_spec
    phase = lifecycle.limit_check_phase(ctl)
    target = end - before - lifecycle.PERIODIC_TIMEOUT
    due = phase - (-(target - phase) // lifecycle.PERIODIC_TIMEOUT) * lifecycle.PERIODIC_TIMEOUT
    attempt = job.attempt

    def send(_ev: object) -> None:
        if job.attempt == attempt and job.state is JobState.RUNNING:
            lifecycle.warn(ctl, job.job_id, sig)

    ctl.env.timeout(max(due - ctl.now, 0)).callbacks.append(send)
