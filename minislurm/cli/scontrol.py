"""``scontrol``: view and modify Slurm state (src/scontrol/scontrol.c and friends).

Options (``-a -d -h -M -F -o -Q -u -v -V``) -> one command, or, without a
command, one command per line of standard input (interactive mode) ->
``_process_command``: ``show``, ``update``, ``hold``/``uhold``/``release``,
``requeue``/``requeuehold``, ``create``/``delete reservation``, ``version``,
``help``, ``oneliner``, ``details``, ``quit``.  Commands and entities may be
abbreviated as Slurm allows (``xstrncasecmp(tag, name, MAX(len, n))``).

``show hostnames``/``hostlist``/``hostlistsorted`` need no controller (as in
Slurm); ``show hostnames`` without a list reads ``SLURM_NODELIST`` (not
``SLURM_JOB_NODELIST``: capture c1_hostlist/09 prints
``scontrol: error: host list is empty`` and exits 0).  The exit code is 1
when any command failed (scontrol's global ``exit_code``).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from minislurm import hostlist
from minislurm.cli.common import Context, option_table, parse_permuted, usage_error
from minislurm.cli.format.scontrol import (
    format_scontrol_job,
    format_scontrol_node,
    format_scontrol_partition,
    format_scontrol_reservation,
)
from minislurm.cli.squeue import VERSION, known_jobs, pending_tasks
from minislurm.cli.transport import run_command
from minislurm.errors import (
    ControllerUnavailable,
    Errno,
    HostlistError,
    SlurmError,
)
from minislurm.job import JobRecord
from minislurm.options.getopt import GetoptError, HasArg
from minislurm.rpc import CONNECT_HINT
from minislurm.timespec import parse_begin, parse_time_limit, time_str2secs

PROG = "scontrol"
INVALID_JOB_ID = Errno.ESLURM_INVALID_JOB_ID

SHORTS, LONGS = option_table("adhM:FoQu:vV", [
    ("all", HasArg.NO, "a"), ("cluster", HasArg.REQUIRED, "M"),
    ("clusters", HasArg.REQUIRED, "M"), ("details", HasArg.NO, "d"),
    ("federation", HasArg.NO, "federation"), ("future", HasArg.NO, "F"),
    ("help", HasArg.NO, "h"), ("hide", HasArg.NO, "hide"), ("local", HasArg.NO, "local"),
    ("oneliner", HasArg.NO, "o"), ("quiet", HasArg.NO, "Q"),
    ("sibling", HasArg.NO, "sibling"), ("uid", HasArg.REQUIRED, "u"),
    ("usage", HasArg.NO, "h"), ("verbose", HasArg.NO, "v"), ("version", HasArg.NO, "V"),
])

USAGE = """\
scontrol [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a, --all      Equivalent to "all" command
     -d, --details  Equivalent to "details" command
     -h, --help     Equivalent to "help" command
     -o, --oneliner Equivalent to "oneliner" command
     -Q, --quiet    Equivalent to "quiet" command
     -v, --verbose  Equivalent to "verbose" command
     -V, --version  Equivalent to "version" command

    Valid <COMMAND> values are (those minislurm implements):
     create <SPECIFICATIONS>  create a new reservation
     delete <SPECIFICATIONS>  delete the specified reservation
     details                  evokes additional details from the "show" command
     exit                     terminate scontrol
     help                     print this description of use.
     hold <job_list>          prevent specified job from starting.
     oneliner                 report output one record per line.
     quit                     terminate this command.
     release <job_list>       permit specified job to start (see hold)
     requeue <job_id>         re-queue a batch job
     requeuehold <job_id>     re-queue and hold a batch
     show <ENTITY> [<ID>]     display state of identified entity, default
                              is all records.
     uhold <jobid_list>       place user hold on specified job (see hold)
     update <SPECIFICATIONS>  update job, node or partition
     version                  display tool version number.

  <ENTITY> may be "hostnames", "hostlist", "hostlistsorted", "job", "node",
  "partition" or "reservation".
"""

#: update_node.c: the ``State=`` keywords, tried before the base state names.
NODE_STATES = ("NoResp", "CANCEL_REBOOT", "DRAIN", "FAIL", "FUTURE", "RESUME", "POWER_DOWN",
               "POWER_UP", "UNDRAIN")
NODE_BASE_STATES = ("UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE")
#: The node states the controller can apply (``Controller.update_node``).
_APPLIED_NODE_STATES = ("DOWN", "DRAIN", "FAIL", "RESUME", "IDLE", "UNDRAIN")


def tag_is(tag: str, name: str, minimum: int) -> bool:
    """``xstrncasecmp(tag, name, MAX(strlen(tag), minimum)) == 0``."""
    n = max(len(tag), minimum)
    return tag.lower()[:n] == name.lower()[:n] and (len(tag) >= minimum or len(tag) == len(name))


class Stop(Exception):
    """``exit``/``quit``: leave interactive mode."""


@dataclass
class Session:
    """scontrol's globals: flags, exit code, where to print, the controller."""

    ctx: Context
    oneliner: bool = False
    details: bool = False
    quiet: bool = False
    exit_code: int = 0

    def error(self, text: str, code: int = 1) -> None:
        """Print ``text`` to stderr (not with ``-Q``) and remember the failure."""
        self.exit_code = code or self.exit_code
        if not self.quiet:
            self.ctx.err(text)

    def controller(self, down: str) -> object:
        """The controller, or `ControllerUnavailable` worded ``down: Unable to contact...``."""
        try:
            return self.ctx.controller()
        except ControllerUnavailable:
            raise ControllerUnavailable(
                f"{down}: {Errno.SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR}\n{CONNECT_HINT}",
                1) from None


def _operator(s: Session, ctl: object, *prefixes: str) -> bool:
    """slurmctld's ``validate_super_user`` (`minislurm.ctld.auth`): False after printing
    ``<prefix>Invalid user id`` once per prefix (exit 1) when the caller may not."""
    is_operator = getattr(ctl, "is_operator", None)
    if is_operator is None or is_operator(s.ctx.uid):
        return True
    for prefix in prefixes:
        s.error(prefix + Errno.ESLURM_USER_ID_MISSING)
    return False


# ---------------------------------------------------------------- hostlists
def _hostlist_error(exc: HostlistError) -> str:
    return "\n".join(f"{PROG}: {ln}" if ln.startswith("error:") else ln
                     for ln in exc.message.splitlines())


def print_hosts(s: Session, expr: str | None) -> None:
    """``scontrol_print_hosts``: one host per line; problems do not change the exit code."""
    if not expr:
        s.ctx.err(f"{PROG}: error: host list is empty")
        return
    try:
        hosts = hostlist.expand(expr)
    except HostlistError as exc:
        s.ctx.err(_hostlist_error(exc))
        return
    for host in hosts:
        s.ctx.out(host)


def encode_hostlist(s: Session, expr: str, sorted_: bool) -> None:
    """``scontrol_encode_hostlist``: a list, ``-`` (stdin) or a file -> one expression."""
    text = expr
    if expr == "-" or expr.startswith("/"):
        if expr == "-":
            text = s.ctx.stdin or ""
        else:
            try:
                with open(expr, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                s.error(f"Can not open {expr}")
                return
        text = ",".join(t for t in text.replace("\n", ",").split(",") if t)
    try:
        s.ctx.out(hostlist.ranged(text, sort=sorted_))
    except HostlistError as exc:
        s.error(_hostlist_error(exc))


# ---------------------------------------------------------------- show
def _split_job_id(text: str) -> tuple[int, int | None] | None:
    head, _, task = text.partition("_")
    if not head.isdigit() or (task and not task.isdigit()):
        return None
    return int(head), int(task) if task else None


def show_job(s: Session, val: str | None) -> None:
    """``scontrol_print_job``: all jobs, one job, an array or one task of it."""
    ctl = s.controller("slurm_load_jobs error")
    jobs = known_jobs(ctl)
    now = int(ctl.now)  # type: ignore[attr-defined]
    if val is None:
        if not jobs:
            if not s.quiet:
                s.ctx.out("No jobs in the system")
            return
        s.ctx.stdout.write("".join(format_scontrol_job(j, now=now, oneliner=s.oneliner,
                                                       details=s.details)
                                   for j in jobs))
        return
    parsed = _split_job_id(val)
    if parsed is None or not any(parsed[0] in (j.job_id, j.array_job_id) for j in jobs):
        s.error(f"slurm_load_jobs error: {INVALID_JOB_ID}")
        return
    job_id, task = parsed
    picked: list[JobRecord] = []
    for j in jobs:
        if job_id not in (j.job_id, j.array_job_id):
            continue
        if task is None or (j.array_task_id == task and j.array_job_id == job_id):
            picked.append(j)
        elif j.array_task_str is not None and task in pending_tasks(j):
            picked.append(dataclasses.replace(j, array_task_id=task, array_task_str=None))
    if not picked:
        s.exit_code = 1
        if not s.quiet:
            s.ctx.out(f"Job {val} not found")
        return
    s.ctx.stdout.write("".join(format_scontrol_job(j, now=now, oneliner=s.oneliner,
                                                       details=s.details)
                               for j in picked))


def show_nodes(s: Session, val: str | None) -> None:
    """``scontrol_print_node_list``: every node, or each node of a hostlist in turn
    (``Node n9 not found`` for an unknown one)."""
    ctl = s.controller("slurm_load_node error")
    nodes = ctl.nodes()  # type: ignore[attr-defined]
    now = int(ctl.now)  # type: ignore[attr-defined]
    if val is None:
        if not nodes and not s.quiet:
            s.ctx.out("No nodes in the system")
        s.ctx.stdout.write("".join(format_scontrol_node(n, now=now, oneliner=s.oneliner)
                                   for n in nodes))
        return
    try:
        wanted = hostlist.expand(val)
    except HostlistError:
        s.error(f"unable to parse node list {val}")
        return
    by_name = {n.name: n for n in nodes}
    for name in wanted:
        if name in by_name:
            s.ctx.stdout.write(format_scontrol_node(by_name[name], now=now,
                                                    oneliner=s.oneliner))
        else:
            s.exit_code = 1
            if not s.quiet:
                s.ctx.out(f"Node {name} not found")


def show_partitions(s: Session, val: str | None) -> None:
    """``scontrol_print_part``."""
    parts = s.controller("slurm_load_partitions error").partitions()  # type: ignore[attr-defined]
    if val is not None:
        parts = [p for p in parts if p.name == val]
        if not parts:
            s.exit_code = 1
            if not s.quiet:
                s.ctx.out(f"Partition {val} not found")
            return
    if not parts and not s.quiet:
        s.ctx.out("No partitions in the system")
    s.ctx.stdout.write("".join(format_scontrol_partition(p, oneliner=s.oneliner)
                               for p in parts))


def show_reservations(s: Session, val: str | None) -> None:
    """``scontrol_print_res``."""
    resvs = s.controller("slurm_load_reservations error").reservations()  # type: ignore[attr-defined]
    if val is not None:
        resvs = [r for r in resvs if r.name == val]
        if not resvs:
            s.exit_code = 1
            if not s.quiet:
                s.ctx.out(f"Reservation {val} not found")
            return
    if not resvs:
        if not s.quiet:
            s.ctx.out("No reservations in the system")
        return
    s.ctx.stdout.write("".join(format_scontrol_reservation(r, oneliner=s.oneliner)
                               for r in resvs))


def show(s: Session, args: Sequence[str]) -> None:
    """``_show_it``: ``show ENTITY [ID]`` or ``show ENTITY=ID``."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    if len(args) > 3:
        s.error(f"too many arguments for keyword:{args[0]}")
        return
    tag, eq, val = args[1].partition("=")
    value: str | None = val if eq else (args[2] if len(args) == 3 else None)
    if tag_is(tag, "hostnames", 5):
        print_hosts(s, value if value is not None else s.ctx.env.get("SLURM_NODELIST"))
    elif tag_is(tag, "hostlist", 5) or tag_is(tag, "hostlistsorted", 9):
        if value is None:
            s.error("invalid encode argument")
            s.ctx.stdout.write(USAGE)
        else:
            encode_hostlist(s, value, sorted_=len(tag) > len("hostlist"))
    elif tag_is(tag, "jobs", 1) or tag_is(tag, "jobid", 1):
        show_job(s, value)
    elif tag_is(tag, "nodes", 1):
        show_nodes(s, value)
    elif tag_is(tag, "partitions", 2) or tag_is(tag, "partitionname", 2):
        show_partitions(s, value)
    elif tag_is(tag, "reservations", 1) or tag_is(tag, "reservationname", 1):
        show_reservations(s, value)
    else:
        s.error(f"invalid entity:{tag} for keyword:{args[0]} ")


# ---------------------------------------------------------------- update
def _pairs(s: Session, args: Sequence[str]) -> list[tuple[str, str]] | None:
    """``tag=value`` arguments; anything else is ``Invalid input`` (request aborted)."""
    out = []
    for arg in args:
        tag, eq, val = arg.partition("=")
        if not eq:
            s.error(f"Invalid input: {arg}\nRequest aborted")
            return None
        out.append((tag, val))
    return out


def _node_state(val: str) -> str | None:
    """update_node.c: ``State=`` by prefix (at least 3 letters), keywords first."""
    for name in (*NODE_STATES, *NODE_BASE_STATES):
        if tag_is(val, name, 3):
            return name.upper()
    return None


def update_node(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_node``: ``NodeName=`` + ``State=`` [+ ``Reason=``]."""
    names = reason = ""
    state: str | None = ""
    for tag, val in pairs:
        if tag_is(tag, "NodeName", 1):
            names = val
        elif tag_is(tag, "Reason", 1):
            reason = val.strip('"')
        elif tag_is(tag, "State", 1):
            state = _node_state(val)
            if state is None:
                s.error(f"Invalid input: {tag}={val}\nRequest aborted\nValid states are: "
                        "NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"
                        "Not all states are valid given a node's prior state")
                return
        else:
            s.error(f"Update of this parameter is not supported: {tag}={val}\nRequest aborted")
            return
    if state in ("DOWN", "DRAIN", "FAIL") and not reason:
        s.error("You must specify a reason when DOWNING or DRAINING a node. Request denied")
        return
    if not state and not reason:
        s.error("No changes specified")
        return
    if state and state not in _APPLIED_NODE_STATES:  # "": Reason= alone (update_node)
        s.error(f"{PROG}: error: minislurm: node state {state} is not modelled")
        return
    ctl = s.controller("slurm_update error")
    if not _operator(s, ctl, "slurm_update error: "):
        return
    try:
        ctl.update_node(names, state, reason, user=s.ctx.user)  # type: ignore[attr-defined]
    except SlurmError as exc:
        s.error(exc.message)


def update_partition(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_part``: ``PartitionName=`` + ``State=UP|DOWN|DRAIN|INACTIVE``."""
    name = state = ""
    for tag, val in pairs:
        if tag_is(tag, "PartitionName", 3):
            name = val
        elif tag_is(tag, "State", 2):
            state = next((x for x in ("INACTIVE", "DOWN", "UP", "DRAIN")
                          if val and tag_is(val, x, 1)), "")
            if not state:
                s.error(f"{PROG}: error: Invalid input: {tag}={val}\n"
                        f"{PROG}: error: Acceptable State values are UP, DOWN, DRAIN and "
                        "INACTIVE")
                return
        else:
            s.error(f"{PROG}: error: minislurm: updating partition {tag} is not supported")
            return
    ctl = s.controller("slurm_update error")
    if not _operator(s, ctl, "slurm_update error: "):
        return
    try:
        ctl.update_partition(name, state)  # type: ignore[attr-defined]
    except SlurmError as exc:
        s.error(exc.message)


def update_job(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_job``: ``JobId=`` + ``TimeLimit=``, ``Partition=``, ``NumNodes=``,
    ``Nice=``, ``StartTime=``/``EligibleTime=`` (the job's BeginTime; a time in the past
    is now; a value parse_time rejects is reported and left out, as scontrol does)."""
    changes: dict[str, object] = {}
    start_text: str | None = None
    job_ids: list[int] = []
    relative = ""
    for tag, val in pairs:
        if tag_is(tag, "JobId", 3):
            ids = [_split_job_id(x) for x in val.split(",")]
            if any(i is None for i in ids):
                s.error(f"{INVALID_JOB_ID} for job {val}")
                return
            job_ids += [i[0] for i in ids if i is not None]
        elif tag_is(tag, "TimeLimit", 5):
            sign = val[:1] if val[:1] in ("+", "-") else ""  # +N / -N: relative
            try:
                changes["time_limit"] = _update_time_limit(val[len(sign):])
            except SlurmError:
                s.error(f"{PROG}: error: Invalid TimeLimit value")
                return
            if sign and not job_ids:
                s.error(f"{PROG}: error: JobId must precede TimeLimit increment or decrement")
                return
            relative = sign
        elif tag_is(tag, "Partition", 2):
            changes["partition"] = val
        elif tag_is(tag, "NumNodes", 8) or tag_is(tag, "ReqNodes", 8):
            if not val.isdigit():
                s.error(f"{PROG}: error: Invalid NumNodes value: {val}")
                return
            changes["num_nodes"] = int(val)
        elif tag_is(tag, "Nice", 2):
            changes["nice"] = int(val) if val.lstrip("-").isdigit() else 100
        elif tag_is(tag, "StartTime", 2) or tag_is(tag, "EligibleTime", 2):
            start_text = val
        else:
            s.error(f"Update of this parameter is not supported: {tag}={val}\nRequest aborted")
            return
    ctl = s.controller("slurm_update error")
    if not hasattr(ctl, "update_job"):
        s.error(f"{PROG}: error: minislurm: this controller cannot update jobs yet")
        return
    if start_text is not None:
        now = int(ctl.now)  # type: ignore[attr-defined]
        try:
            changes["start_time"] = max(parse_begin(start_text, now), now)
        except SlurmError as exc:  # parse_time printed why; the field is not sent
            if exc.message:
                s.ctx.err(exc.message)
    for job_id in job_ids:
        try:
            if relative:
                changes["time_limit"] = _relative_limit(ctl, job_id, relative,
                                                        changes["time_limit"])
            ctl.update_job(job_id, uid=s.ctx.uid, **changes)
        except SlurmError as exc:
            s.error(exc.message)


def _update_time_limit(text: str) -> int | None:
    """``TimeLimit=`` minutes as scontrol sends them (``time_str2mins``; None: UNLIMITED).

    Unlike sbatch's ``--time=0``, ``TimeLimit=0`` is not UNLIMITED but 0 minutes: a
    running job's end becomes the update's time (measured on 22.05.8: ``TimeLimit=00:00:00
    EndTime=`` the update, TIMEOUT at the next periodic check).
    """
    minutes = parse_time_limit(text)
    if minutes is None and time_str2secs(text) == 0:
        return 0
    return minutes


def _relative_limit(ctl: object, job_id: int, sign: str, minutes: object) -> int | None:
    """``TimeLimit=+N``/``-N``: scontrol adds to or takes from the job's current limit
    (``_get_job_time``); a decrement beyond it is refused (measured on 22.05.8:
    ``TimeLimit decrement larger than current time limit (5 > 1)``)."""
    try:
        current = ctl.job(job_id).time_limit  # type: ignore[attr-defined]
    except KeyError:
        raise SlurmError(f"{INVALID_JOB_ID} for job {job_id}", 1) from None
    if current is None or not isinstance(minutes, int):
        return current  # UNLIMITED plus or minus anything stays UNLIMITED here
    if sign == "+":
        return current + minutes
    if minutes > current:
        raise SlurmError(f"{PROG}: error: TimeLimit decrement larger than current time limit "
                         f"({minutes} > {current})", 1)
    return current - minutes


def update(s: Session, args: Sequence[str]) -> None:
    """``_update_it``: the entity is whichever of JobId/NodeName/PartitionName appears."""
    pairs = _pairs(s, args[1:])
    if pairs is None:
        return
    tags = [t for t, _ in pairs]
    if any(tag_is(t, "JobId", 3) or tag_is(t, "JobName", 3) for t in tags):
        update_job(s, pairs)
    elif any(tag_is(t, "ReservationName", 3) for t in tags):
        update_reservation(s, pairs)
    elif any(tag_is(t, "NodeName", 3) for t in tags):
        update_node(s, pairs)
    elif any(tag_is(t, "PartitionName", 3) for t in tags):
        update_partition(s, pairs)
    else:
        s.error('No valid entity in update command\nInput line must include "NodeName", '
                '"PartitionName", "Reservation", "JobId", or "SlurmctldDebug"')


# ---------------------------------------------------------------- hold / requeue
def _job_ids(s: Session, ctl: object, text: str, *, names: bool) -> list[int]:
    """``[JobID=|Job=]5[,6]`` (``108_3``: its array job) or, with ``names``,
    ``Name=NAME``: the pending jobs of that name.  Anything else is
    ``Invalid job id specified for job X`` (update_job.c ``scontrol_hold``)."""
    for prefix in ("jobid=", "job="):
        if text.lower().startswith(prefix):
            text = text[len(prefix):]
            break
    if names and text.lower().startswith("name="):
        name = text[5:]
        return [j.job_id for j in known_jobs(ctl)
                if j.name == name and j.state.value == "PENDING"]
    ids = [_split_job_id(t) for t in text.split(",") if t]
    if not ids or any(i is None for i in ids):
        s.error(f"{INVALID_JOB_ID} for job {text}")
        return []
    return [i[0] for i in ids if i is not None]


def hold(s: Session, args: Sequence[str]) -> None:
    """``hold``/``uhold``/``holdu``/``release`` of each job in the list."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    op = args[0].lower()
    ctl = s.controller("slurm_suspend error")
    for item in args[1:]:
        for job_id in _job_ids(s, ctl, item, names=True):
            try:
                if op.startswith("rel"):
                    ctl.release(job_id)  # type: ignore[attr-defined]
                else:
                    ctl.hold(job_id, user=op in ("uhold", "holdu"))  # type: ignore[attr-defined]
            except SlurmError as exc:
                s.error(exc.message)


def requeue(s: Session, args: Sequence[str], *, then_hold: bool) -> None:
    """``requeue`` / ``requeuehold`` [``Incomplete``|``State=SpecialExit``] job ids."""
    if len(args) < 2:
        s.error(f"too few arguments for keyword:{args[0]}")
        return
    ctl = s.controller("slurm_requeue error")
    for item in args[1:]:
        if item.lower() in ("incomplete", "state=specialexit"):
            continue
        for job_id in _job_ids(s, ctl, item, names=False):
            try:
                ctl.requeue(job_id)  # type: ignore[attr-defined]
                if then_hold:
                    ctl.hold(job_id, user=s.ctx.uid != 0)  # type: ignore[attr-defined]
            except SlurmError as exc:
                s.error(exc.message)


# ---------------------------------------------------------------- reservations
_NO_RESV = "No reservation created."
_NO_UPDATE = "No reservation update."
#: slurmctld's ESLURM_NODES_BUSY text (``Error creating the reservation: ...``).
BUSY = Errno.ESLURM_NODES_BUSY
#: A duration of UNLIMITED: slurmctld makes the reservation a year long (measured).
_YEAR_MINUTES = 365 * 1440

#: parse_resv_flags (scontrol's create_res.c / slurm_protocol_defs.c): the name, the
#: letters a prefix needs, the flag ``Flags=`` prints, whether ``-NAME`` is accepted
#: (measured on 22.05.8: ``mai``/``over``/``ignore`` are accepted, ``ma`` and
#: ``-overlap`` are not; ``static_alloc`` prints STATIC, ``license_only`` ANY_NODES).
_RESV_FLAGS: tuple[tuple[str, int, str, bool], ...] = (
    ("MAINTENANCE", 3, "MAINT", True), ("MAGNETIC", 3, "MAGNETIC", True),
    ("OVERLAP", 1, "OVERLAP", False), ("FLEX", 1, "FLEX", True),
    ("IGNORE_JOBS", 1, "IGNORE_JOBS", False), ("HOURLY", 1, "HOURLY", True),
    ("DAILY", 1, "DAILY", True), ("WEEKDAY", 1, "WEEKDAY", False),
    ("WEEKEND", 5, "WEEKEND", False), ("WEEKLY", 5, "WEEKLY", True),
    ("ANY_NODES", 1, "ANY_NODES", True), ("LICENSE_ONLY", 1, "ANY_NODES", True),
    ("STATIC_ALLOC", 1, "STATIC", True), ("PART_NODES", 2, "PART_NODES", True),
    ("FIRST_CORES", 1, "FIRST_CORES", False), ("TIME_FLOAT", 1, "TIME_FLOAT", False),
    ("REPLACE_DOWN", 8, "REPLACE_DOWN", False), ("REPLACE", 1, "REPLACE", False),
    ("NO_HOLD_JOBS_AFTER_END", 1, "NO_HOLD_JOBS_AFTER_END", False),
)  # fmt: skip


def parse_resv_flags(text: str) -> list[str] | None:
    """``Flags=a,b,-c``: the flags (``-NAME`` to remove one), or None when one is not
    known (``Error parsing flags ...``).  ``PURGE_COMP[=time]`` keeps its time as
    ``PURGE_COMP=HH:MM:SS`` (default 5 minutes)."""
    out: list[str] = []
    for item in text.split(","):
        minus = item.startswith("-")
        word, eq, val = (item[1:] if minus else item).partition("=")
        if tag_is(word, "PURGE_COMP", 2) and word and not minus:
            try:
                secs = time_str2secs(val) if eq else 300
            except ValueError:
                return None
            if secs is None or secs < 0:
                return None
            out.append(f"PURGE_COMP={secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}")
            continue
        hit = next((f for f in _RESV_FLAGS if word and not eq and tag_is(word, f[0], f[1])
                    and (f[3] or not minus)), None)
        if hit is None:
            return None
        out.append(("-" if minus else "") + hit[2])
    return out


@dataclass
class ResvRequest:
    """What ``scontrol create|update reservation`` sends (``resv_desc_msg_t``)."""

    name: str | None = None
    start: int | None = None
    end: int | None = None
    minutes: int | None = None
    nodes: str | None = None
    node_cnt: int | None = None
    users: tuple[str, ...] | None = None
    accounts: tuple[str, ...] | None = None
    flags: list[str] | None = None
    partition: str | None = None


def _resv_duration(text: str) -> int | None:
    """``time_str2mins``: minutes (rounded up), a year for UNLIMITED, None when invalid."""
    try:
        secs = time_str2secs(text)
    except ValueError:
        return None
    if secs is None:
        return _YEAR_MINUTES
    if secs < 0:
        return None
    return (secs + 59) // 60


def _parse_resv(s: Session, pairs: list[tuple[str, str]], now: int, suffix: str
                ) -> ResvRequest | str:
    """``scontrol_parse_res_options``: the arguments in order; the first bad one is
    reported (``scontrol: error: ... {suffix}``) and nothing is sent: then the text of
    errno is returned (``Invalid time specified`` after parse_time, else ``No error``)."""
    r = ResvRequest()
    for tag, val in pairs:
        if tag_is(tag, "ReservationName", 3) or tag_is(tag, "Reservation", 3):
            r.name = val
        elif tag_is(tag, "StartTime", 1) or tag_is(tag, "EndTime", 1):
            which = "start" if tag[:1].lower() == "s" else "end"
            try:
                setattr(r, which, parse_begin(val, now))
            except SlurmError as exc:
                if exc.message:
                    s.ctx.err(exc.message)
                s.error(f"{PROG}: error: Invalid {which} time {tag}={val}.  {suffix}")
                return Errno.ESLURM_INVALID_TIME_VALUE
        elif tag_is(tag, "Duration", 1):
            r.minutes = _resv_duration(val)
            if r.minutes is None:
                s.error(f"{PROG}: error: Invalid duration {tag}={val}.  {suffix}")
                return "No error"
        elif tag_is(tag, "NodeCnt", 5):
            if not val.isdigit():
                s.error(f"{PROG}: error: Invalid node count {val}")
                return "No error"
            r.node_cnt = int(val)
        elif tag_is(tag, "Nodes", 1):
            r.nodes = val
        elif tag_is(tag, "Users", 1):
            r.users = tuple(u for u in val.split(",") if u)
        elif tag_is(tag, "Accounts", 1):
            r.accounts = tuple(a for a in val.split(",") if a)
        elif tag_is(tag, "Flags", 2):
            r.flags = parse_resv_flags(val)
            if r.flags is None:
                s.error(f"{PROG}: error: Error parsing flags {val}.  {suffix}")
                return "No error"
        elif tag_is(tag, "PartitionName", 1):
            r.partition = val
        else:
            s.error(f"{PROG}: error: Unknown parameter {tag}={val}.  {suffix}")
            return "No error"
    return r


def create_reservation(s: Session, args: Sequence[str]) -> None:
    """``scontrol_create_res``: parse, then what is missing is reported as create_res.c
    does (measured on 22.05.8, see tests/test_fidelity_resv_cli.py); without
    ``ReservationName=`` slurmctld names it.  ``Requested nodes are busy`` comes with
    scontrol's note about partitions on stdout."""
    if args and "=" not in args[0]:  # "create reservation key=value ..."
        args = args[1:]
    pairs = _pairs(s, args)
    if pairs is None:
        return
    ctl = s.controller("Error creating the reservation")
    now = int(ctl.now)  # type: ignore[attr-defined]
    r = _parse_resv(s, pairs, now, _NO_RESV)
    if isinstance(r, str):
        return
    if r.start is None:
        s.error(f"{PROG}: error: A start time must be given.  {_NO_RESV}")
    elif r.end is None and r.minutes is None:
        s.error(f"{PROG}: error: An end time or duration must be given.  {_NO_RESV}")
    elif r.end is not None and r.start > r.end:
        s.error(f"{PROG}: error: Start time cannot be after end time.  {_NO_RESV}")
    elif not r.nodes and not r.node_cnt:
        s.error(f"{PROG}: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts "
                f"must be specified.  {_NO_RESV}")
    elif not r.users and not r.accounts:
        s.error(f"{PROG}: error: Either Users/Groups and/or Accounts must be specified.  "
                f"{_NO_RESV}")
    else:
        duration = r.minutes if r.minutes is not None else ((r.end or r.start) - r.start) // 60
        if not _operator(s, ctl, "Error creating the reservation: "):
            return
        try:
            line = ctl.create_reservation(  # type: ignore[attr-defined]
                r.name or "", r.start, duration, r.nodes or "", users=r.users or (),
                accounts=r.accounts or (), flags=[f for f in r.flags or () if f[0] != "-"],
                node_cnt=r.node_cnt, partition=r.partition or "")
        except SlurmError as exc:
            if exc.message.endswith(BUSY):
                s.ctx.out("Note, unless nodes are directly requested a reservation must "
                          "exist in a single partition.\nIf no partition is requested the "
                          "default partition is assumed.")
            s.error(exc.message)
            return
        s.ctx.out(line)


def update_reservation(s: Session, pairs: list[tuple[str, str]]) -> None:
    """``scontrol_update_res``: ``Reservation updated.``; a parse error is reported with
    ``No reservation update.`` and ``slurm_update error: No error`` (errno is 0; a bad
    time leaves parse_time's ``Invalid time specified``), the controller's refusal as
    ``Error updating the reservation: X`` then ``slurm_update error: X`` (measured)."""
    ctl = s.controller("slurm_update error")
    r = _parse_resv(s, pairs, int(ctl.now), _NO_UPDATE)  # type: ignore[attr-defined]
    if isinstance(r, str):
        s.error("slurm_update error: " + r)
        return
    if not _operator(s, ctl, "Error updating the reservation: ", "slurm_update error: "):
        return
    try:
        line = ctl.update_reservation(  # type: ignore[attr-defined]
            r.name or "", start=r.start, end=r.end, duration=r.minutes, nodes=r.nodes,
            users=r.users, accounts=r.accounts, flags=r.flags, node_cnt=r.node_cnt,
            partition=r.partition)
    except SlurmError as exc:
        s.error(exc.message)
        s.error("slurm_update error: " + exc.message.split(": ", 1)[-1])
        return
    s.ctx.out(line)


def delete(s: Session, args: Sequence[str]) -> None:
    """``_delete_it``: ``delete ReservationName=X`` or ``delete reservation X``."""
    if len(args) == 2 and "=" in args[1]:
        tag, _, val = args[1].partition("=")
    elif len(args) == 3:
        tag, val = args[1], args[2]
    else:
        s.error(f"{PROG}: error: Proper format is 'delete <ENTITY>=<ID>' or "
                "'delete <ENTITY> <ID>'")
        return
    if not tag_is(tag, "ReservationName", 3):
        s.error(f"Invalid deletion entity: {args[1]}")
        return
    ctl = s.controller(f"delete_reservation {args[1]}")
    if not hasattr(ctl, "delete_reservation"):
        s.error(f"{PROG}: error: minislurm: this controller cannot delete reservations yet")
        return
    if not _operator(s, ctl, f"delete_reservation {args[1]}: "):
        return
    try:
        ctl.delete_reservation(val)
    except SlurmError as exc:
        s.error(f"delete_reservation {args[1]}: {exc.message}")


# ---------------------------------------------------------------- dispatch
def process(s: Session, args: Sequence[str]) -> None:
    """``_process_command`` for one command line."""
    if not args:
        return
    tag = args[0]
    commands: list[tuple[str, int, Callable[[], None]]] = [
        ("show", 3, lambda: show(s, args)),
        ("update", 1, lambda: update(s, args)),
        ("create", 2, lambda: _create(s, args)),
        ("delete", 3, lambda: delete(s, args)),
        ("requeue", 3, lambda: requeue(s, args, then_hold=False)),
        ("release", 3, lambda: hold(s, args)),
        ("version", 4, lambda: _print(s, VERSION + "\n")),
        ("help", 2, lambda: _print(s, USAGE)),
        ("oneliner", 1, lambda: setattr(s, "oneliner", True)),
        ("details", 1, lambda: setattr(s, "details", True)),
        ("quiet", 4, lambda: setattr(s, "quiet", True)),
    ]
    low = tag.lower()
    if low == "requeuehold":
        requeue(s, args, then_hold=True)
        return
    if low in ("hold", "holdu", "uhold"):
        hold(s, args)
        return
    if tag_is(tag, "exit", 2) or tag_is(tag, "quit", 4):
        raise Stop
    for name, minimum, action in commands:
        if tag_is(tag, name, minimum):
            action()
            return
    s.error(f"invalid keyword: {tag}")


def _print(s: Session, text: str) -> None:
    s.ctx.stdout.write(text)


def _create(s: Session, args: Sequence[str]) -> None:
    if len(args) < 2:
        s.error(f"too few arguments for {args[0]} keyword")
        return
    entity = args[1].partition("=")[0]
    if tag_is(entity, "ReservationName", 3):
        create_reservation(s, args[1:])
    elif tag_is(entity, "PartitionName", 3) or tag_is(entity, "NodeName", 3):
        s.error(f"{PROG}: error: minislurm: creating {entity} is not supported")
    else:
        s.error(f"{PROG}: error: Invalid creation entity: {args[1]}")


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``scontrol argv`` in ``ctx``; returns the exit code."""
    try:
        opts, operands = parse_permuted(argv, SHORTS, LONGS, PROG)
    except GetoptError as exc:
        return usage_error(ctx, PROG, exc)
    s = Session(ctx)
    for o in opts:
        if o.key == "h":
            ctx.stdout.write(USAGE)
            return 0
        if o.key == "V":
            ctx.out(VERSION)
            return 0
        if o.key == "o":
            s.oneliner = True
        elif o.key == "d":
            s.details = True
        elif o.key == "Q":
            s.quiet = True
    lines = [operands] if operands else [_words(ln) for ln in (ctx.stdin or "").splitlines()]
    try:
        for words in lines:
            if not operands:
                ctx.stdout.write(f"{PROG}: ")
            try:
                process(s, words)
            except ControllerUnavailable as exc:
                s.error(exc.message)
        if not operands:  # the prompt before end of input, then putchar('\n')
            ctx.stdout.write(f"{PROG}: \n")
    except Stop:
        pass
    return s.exit_code


def _words(line: str) -> list[str]:
    """``_get_command``: blank-separated words, quotes keep blanks."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm scontrol ...``."""
    return run_command(PROG, argv)
