"""StateSaveLocation: the controller to disk and back (simulated clock, in-process).

The strongest check is behavioural: a controller is stopped in the middle of a
busy day (jobs running, pending, held, requeued after a node failure, an array, a
dependency, a drained node, a reservation, fair-share usage), its state is saved,
loaded into a brand-new controller on a fresh clock, and both run on to the end:
every accounting row, every job record and every node must come out the same.
The files themselves: atomic rotation, an interrupted save, corrupt files refused in
slurmctld's words with nothing changed on disk, ``-i`` falling back to the previous
good save without deleting anything.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import simpy
from ctld_helpers import REF_CONF, sub

from minislurm.common.accounts import QOS
from minislurm.common.gres import parse_gres_request
from minislurm.common.jobarray import parse_array
from minislurm.conf import parse_config
from minislurm.ctld import Controller, JobBody
from minislurm.ctld.runner import SIGKILL, SIGTERM, Launch, Recovery
from minislurm.ctld.state_codec import (
    MOVED,
    MOVED_CLASSES,
    StateFormatError,
    _class,
    decode,
    encode,
)
from minislurm.ctld.state_files import PARTS, StateFiles, StateRecoveryError
from minislurm.ctld.state_save import dump_state, load_state
from minislurm.job import Allocation, JobRecord
from minislurm.options import JobOptions
from minislurm.options.model import SignalSpec
from minislurm.priority import MultifactorPriority
from minislurm.states import JobState, NodeFlag, Reason

FATAL_JOB = ("fatal: Incomplete job state save file, start with '-i' to ignore this. "
             "Warning: using -i will lose the data that can't be recovered.")


# ---- a simulated slurmd that can be found again after a restart -----------------------
class RecoverableRunner:
    """`SimulatedRunner` semantics, plus ``recover``: a job found again ends when its
    body would have ended had the controller never stopped (``offset``: epoch - SimPy)."""

    def __init__(self, env: simpy.Environment, offset: int) -> None:
        self.env = env
        self.offset = offset
        self._running: dict[int, simpy.Event] = {}
        self.signals: list[tuple[float, int, int]] = []  # (SimPy time, job id, signal)
        self.warned: dict[int, int] = {}  # RecoversJobs: no --signal is ever routed here

    def _schedule(self, job_id: int, done: simpy.Event, ends_at: float | None, code: int) -> None:
        self._running[job_id] = done
        if ends_at is None:
            return

        def fire(_ev: object) -> None:
            if not done.triggered and self._running.get(job_id) is done:
                del self._running[job_id]
                done.succeed((code, 0))

        self.env.timeout(max(0.0, ends_at - self.env.now)).callbacks.append(fire)

    def start(self, job: Launch, allocation: Allocation, body: JobBody) -> simpy.Event:
        done = self.env.event()
        end = None if body.run_time is None else self.env.now + body.run_time
        self._schedule(job.job_id, done, end, body.exit_code)
        return done

    def recover(self, job: JobRecord, allocation: Allocation, body: JobBody) -> Recovery:
        done = self.env.event()
        end = None
        if body.run_time is not None and job.start_time is not None:
            end = job.start_time + body.run_time - self.offset
        self._schedule(job.job_id, done, end, body.exit_code)
        return Recovery(done)

    def kill(self, job_id: int, signal: int) -> None:
        self.signals.append((self.env.now, job_id, signal))
        done = self._running.get(job_id)
        if done is None or signal not in (SIGKILL, SIGTERM):
            return
        del self._running[job_id]
        if not done.triggered:
            done.succeed((0, signal))

    def node_failed(self, job_id: int, failed: object) -> None:
        self.kill(job_id, SIGKILL)


def signals(ctl: Controller) -> list[tuple[float, int, int]]:
    """The signals ``ctl``'s ``RecoverableRunner`` delivered (SimPy time, job id, signal)."""
    runner = ctl.runner
    assert isinstance(runner, RecoverableRunner), runner
    return runner.signals


#: The reference cluster under priority/multifactor with fair share, whose usage a
#: restart must keep (``assoc_usage``).
FAIRSHARE = ("PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"
             "AccountingStorageType=accounting_storage/slurmdbd\n")  # else 22.05 zeroes the weight


def controller(env: simpy.Environment | None = None, extra: str = "") -> Controller:
    env = env or simpy.Environment()
    cfg = parse_config(REF_CONF + extra, "slurm.conf")
    runner = RecoverableRunner(env, 1767600000)
    return Controller(cfg, env, runner=runner)


def busy_day(ctl: Controller) -> dict[str, int]:
    """A mix of every kind of job state, left at t = 500 s."""
    ids = {
        "done": sub(ctl, 30, name="done", time_limit=5),
        "failed": sub(ctl, 20, 3, name="failed", time_limit=5),
        "long": sub(ctl, 1500, name="long", nodes_min=2, time_limit=60),
        "timeout": sub(ctl, None, name="timeout", time_limit=12),
        "wide": sub(ctl, 300, name="wide", nodes_min=4, time_limit=30),
        "held": sub(ctl, 60, name="held", hold=True, time_limit=5),
        "array": sub(ctl, 200, name="array", array="0-5%2", time_limit=10),
        "later": sub(ctl, 60, name="later", begin=1767600000 + 3000, time_limit=5),
        "warned": sub(ctl, None, name="warned", time_limit=20,
                      signal=SignalSpec(signal=10, time=120)),
    }
    ids["after"] = sub(ctl, 40, name="after", dependency=f"afterok:{ids['long']}",
                       time_limit=5)
    ctl.create_reservation("maint", 1767600000 + 5000, 60, "n4")
    ctl.run_for(100)
    ctl.update_node("n3", "drain", "bad fan")
    ctl.run_for(150)
    ctl.fail_node("n1")  # a running job is requeued (NODE_FAIL attempt)
    ctl.run_for(250)
    return ids


def restarted(ctl: Controller, tmp_path: Path, extra: str = "") -> Controller:
    """Save ``ctl``'s state to disk and load it into a new controller at the same time
    (``extra``: the slurm.conf lines both were made with)."""
    files = StateFiles(tmp_path / "ctld")
    files.save(dump_state(ctl))
    loaded = StateFiles(tmp_path / "ctld").load()
    fresh = controller(simpy.Environment(initial_time=ctl.env.now), extra)
    log = load_state(fresh, loaded.parts)
    assert f"Recovered information about {len(ctl.jobs())} jobs" in log
    return fresh


def test_a_restored_controller_goes_on_exactly_like_the_original(tmp_path: Path) -> None:
    original = controller()
    ids = busy_day(original)
    states = {j.name: j.state for j in original.jobs()}
    assert {JobState.RUNNING, JobState.PENDING, JobState.COMPLETED,
            JobState.FAILED} <= set(states.values())
    assert any(r.state is JobState.NODE_FAIL for r in original.accounting())  # requeued once
    copy = restarted(original, tmp_path)
    assert copy.jobs() == original.jobs()
    assert copy.nodes() == original.nodes()
    assert copy.reservations() == original.reservations()
    assert copy.accounting() == original.accounting()
    assert copy.partitions() == original.partitions()
    for ctl in (original, copy):  # the administrator brings n1 back on both
        ctl.run(1767600000 + 900)
        ctl.update_node("n1", "resume")
    end = 1767600000 + 9000
    original.run(end)
    copy.run(end)
    assert copy.accounting() == original.accounting()
    assert copy.jobs() == original.jobs()
    assert copy.nodes() == original.nodes()
    # every signal after the restart (--signal=USR1@120, time limits, KillWait) the same
    after = [s for s in signals(original) if s[0] >= 500]
    assert signals(copy) == after
    assert (ids["warned"], 10) in {(j, sig) for _, j, sig in after}
    finals = {j.name: j.state for j in copy.jobs()}
    assert finals["timeout"] is JobState.TIMEOUT and finals["after"] is JobState.COMPLETED
    assert finals["held"] is JobState.PENDING  # still held: nobody released it
    assert copy.next_job_id() == original.next_job_id()
    usage = copy.accounting_store.usage
    assert usage and usage == original.accounting_store.usage
    assert ids["later"] in {r.job_id for r in copy.accounting()}


def test_an_end_moved_by_scontrol_update_survives_a_restart(tmp_path: Path) -> None:
    """A limit lowered below the time used puts EndTime at the update (``limit_end``);
    the restored controller shows the same end and times the job out at the same check.
    A pending job the backfill pass tested keeps ``Scheduler=Backfill:*``."""
    ctl = controller()
    jid = sub(ctl, None, time_limit=3)
    sub(ctl, None, time_limit=60, ntasks=13)  # leaves two CPUs free
    ctl.run_for(75)
    wide = sub(ctl, 60, name="wide", ntasks=4, time_limit=5)
    ctl.update_job(jid, time_limit=1)
    ctl.run_for(2)  # the backfill pass after the submission tested ``wide``
    assert ctl.job(jid).end_time == ctl.now - 2
    assert ctl.job(wide).scheduler == "Backfill"
    copy = restarted(ctl, tmp_path)
    assert copy.job(jid) == ctl.job(jid)
    assert copy.job(wide).scheduler == "Backfill"
    for c in (ctl, copy):
        c.run_for(60)
    assert copy.job(jid) == ctl.job(jid)
    assert copy.job(jid).state is JobState.TIMEOUT and copy.job(jid).end_time == 1767600000 + 90


def test_node_reasons_partitions_and_fair_share_usage_survive(tmp_path: Path) -> None:
    ctl = controller(extra=FAIRSHARE)
    sub(ctl, 600, user="root", time_limit=20, nodes_min=4)
    ctl.run_for(700)
    ctl.update_node("n2", "drain", "disk")
    ctl.update_partition("short", "down")
    copy = restarted(ctl, tmp_path, FAIRSHARE)
    node = next(n for n in copy.nodes() if n.name == "n2")
    assert (node.reason, node.reason_user) == ("disk", "root")
    assert NodeFlag.DRAIN in node.state.flags
    assert next(p for p in copy.partitions() if p.name == "short").state == "DOWN"
    assert isinstance(ctl.priority_plugin, MultifactorPriority)
    assert isinstance(copy.priority_plugin, MultifactorPriority)
    tracker, restored = ctl.priority_plugin.usage, copy.priority_plugin.usage
    assert any(v > 0 for v in tracker.own_usage(ctl.now).values())
    assert restored.own_usage(ctl.now) == tracker.own_usage(ctl.now)


# ---- the encoding ---------------------------------------------------------------------
def test_the_codec_rebuilds_records_enums_and_containers() -> None:
    ctl = controller()
    job_id = sub(ctl, 30, time_limit=5, gpus_per_node="a100:2", nodes_min=2)
    ctl.run_for(60)
    values = [ctl.job(job_id), ctl.accounting(), JobOptions(array="0-3", signal=SignalSpec(10)),
              Reason.TIME_LIMIT, NodeFlag.DRAIN | NodeFlag.NOT_RESPONDING,
              {(1, "a"): frozenset({3, 1})}, ("x", None, 1.5)]
    for value in values:
        assert decode(json.loads(json.dumps(encode(value)))) == value


def test_the_codec_rebuilds_only_minislurm_classes() -> None:
    with pytest.raises(StateFormatError, match="not a minislurm class"):
        decode({"__dc__": "os.system", "command": "true"})
    with pytest.raises(StateFormatError, match="unknown class"):
        decode({"__enum__": "minislurm.states.NoSuchEnum", "v": 1})


def _old_names(data: object, renamed: list[str]) -> object:
    """``data`` (a state part) as an older minislurm wrote it: every class named by the
    module it had before it moved (the inverse of ``MOVED``/``MOVED_CLASSES``)."""
    back_classes = {new: old for old, new in MOVED_CLASSES.items()}
    back = {new: old for old, new in MOVED.items()}
    if isinstance(data, list):
        return [_old_names(v, renamed) for v in data]
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        if key in ("__dc__", "__enum__") and isinstance(value, str):
            module = max((m for m in back if value.startswith(m + ".")), key=len, default=None)
            if value in back_classes:
                value = back_classes[value]
            elif module is not None:
                value = back[module] + value[len(module):]
            if value != data[key]:
                renamed.append(value)
        out[key] = _old_names(value, renamed)
    return out


def test_state_saved_before_the_modules_moved_still_loads(tmp_path: Path) -> None:
    """A learner's saved cluster outlives an upgrade that moved minislurm's modules
    (minislurm.gres -> minislurm.common.gres, ...): the classes are found again."""
    original = controller()
    busy_day(original)
    StateFiles(tmp_path / "ctld").save(dump_state(original))
    renamed: list[str] = []
    parts = {name: _old_names(part, renamed)
             for name, part in StateFiles(tmp_path / "ctld").load().parts.items()}
    assert renamed  # the state really names a moved class (select's ResourceRequest)
    fresh = controller(simpy.Environment(initial_time=original.env.now))
    load_state(fresh, parts)
    assert fresh.jobs() == original.jobs()
    assert fresh.accounting() == original.accounting()
    assert fresh.nodes() == original.nodes()


def test_values_of_moved_modules_decode_from_their_old_names() -> None:
    values = [parse_array("0-15%4"), parse_gres_request("gpu:a100:2,nic:1"),
              QOS(name="debug", priority=10)]
    for value in values:
        renamed: list[str] = []
        old = _old_names(json.loads(json.dumps(encode(value))), renamed)
        assert renamed and renamed[0].split(".")[1] in ("jobarray", "gres", "accounts")
        assert decode(old) == value


def test_every_moved_name_points_at_a_class_that_exists() -> None:
    for old, new in MOVED_CLASSES.items():
        assert _class(old) is _class(new)
    for new in MOVED.values():
        __import__(new)


# ---- the files --------------------------------------------------------------------------
def _parts(tag: str) -> dict[str, object]:
    return {name: {"tag": tag, "name": name} for name in PARTS}


def test_each_file_is_rotated_to_old_and_written_whole(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    assert files.save(_parts("a")) == list(PARTS)
    assert files.save(_parts("a")) == []  # nothing changed: nothing written
    second = {**_parts("a"), "node_state": {"tag": "b"}}
    assert files.save(second) == ["node_state", "job_state"]
    assert json.loads((tmp_path / "node_state.old").read_text())["data"] == {
        "tag": "a", "name": "node_state"}
    assert not list(tmp_path.glob("*.new"))
    loaded = StateFiles(tmp_path).load()
    assert loaded.parts["node_state"] == {"tag": "b"}
    assert loaded.parts["accounting"]["tag"] == "a"


def test_an_interrupted_save_loads_the_previous_one_whole(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    files.save(_parts("a"))
    # a save of "b" that died after two files, before job_state (its commit record)
    files.serial += 1
    for name in ("node_state", "accounting"):
        files._write(name, json.dumps({"tag": "b"}), files.serial)
    loaded = StateFiles(tmp_path).load()
    assert {p["tag"] for p in loaded.parts.values()} == {"a"}


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_a_corrupt_state_file_is_refused_and_nothing_on_disk_changes(tmp_path: Path,
                                                                     damage: str) -> None:
    files = StateFiles(tmp_path)
    files.save(_parts("a"))
    files.save({**_parts("b")})
    path = tmp_path / "job_state"
    text = path.read_text()
    path.write_text({"truncate": text[: len(text) // 2], "garbage": "\x00\x01 not json",
                     "empty": ""}[damage])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(StateRecoveryError) as err:
        StateFiles(tmp_path).load()
    assert err.value.message == FATAL_JOB
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    # -i: the previous good save, the unreadable file kept aside (never deleted)
    loaded = StateFiles(tmp_path).load(ignore=True)
    assert {p["tag"] for p in loaded.parts.values()} == {"a"}
    assert "error: Incomplete job state save file" in loaded.log
    kept = list(tmp_path.glob("job_state.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == before["job_state"]


def test_a_missing_current_file_falls_back_to_old_like_slurmctld(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    files.save(_parts("a"))
    files.save(_parts("b"))
    (tmp_path / "job_state").unlink()
    loaded = StateFiles(tmp_path).load()
    assert loaded.parts["job_state"]["tag"] == "a"
    assert "error: NOTE: Trying backup state save file. Jobs may be lost!" in loaded.log


def test_a_corrupt_part_file_is_refused_in_its_own_words(tmp_path: Path) -> None:
    files = StateFiles(tmp_path)
    files.save(_parts("a"))
    (tmp_path / "node_state").write_text("{")
    with pytest.raises(StateRecoveryError, match=r"^fatal: Incomplete node data checkpoint"):
        StateFiles(tmp_path).load()


def test_no_state_at_all_is_a_fresh_start(tmp_path: Path) -> None:
    loaded = StateFiles(tmp_path / "none").load()
    assert loaded.empty
    assert loaded.log == [f"No job state file ({tmp_path / 'none' / 'job_state'}) to recover"]


def test_restored_reservations_show_reserved_and_ids_go_on(tmp_path: Path) -> None:
    """slurmctld restarted (measured on 22.05.8 by killing and starting it again): the
    nodes of a restored active reservation are RESERVED again (``resv`` once the 5-s
    check ran), and reservation ids go on from the saved top_suffix even when every
    reservation was deleted (root_27 deleted, restart, the next unnamed one root_28)."""
    ctl = controller()
    ctl.create_reservation("keep", ctl.now, 60, "n2", users=["root"])
    assert ctl.create_reservation("", ctl.now, 60, "n3", users=["root"]) \
        == "Reservation created: root_2"
    ctl.delete_reservation("root_2")
    ctl.run_for(10)
    fresh = restarted(ctl, tmp_path)
    fresh.run_for(10)
    n2 = next(n for n in fresh.nodes() if n.name == "n2")
    assert n2.state.has(NodeFlag.RESERVED) and n2.state.short == "resv"
    fresh.delete_reservation("keep")
    again = restarted(fresh, tmp_path / "again")
    assert again.create_reservation("", again.now, 60, "n3", users=["root"]) \
        == "Reservation created: root_3"
