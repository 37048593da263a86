"""Typed errors that carry the exact text a Slurm command prints.

Every user-facing failure in minislurm is one of these. ``message`` is the
whole stderr text the real command prints (one or more lines, without the
final newline, already prefixed the way Slurm does, e.g.
``sbatch: error: Invalid --time specification``) and ``exit_code`` is the
command's exit status (Slurm exits 255 for client-side option errors and 1
for rejections by slurmctld).  Commands print ``message`` and exit with
``exit_code``; they never show a Python traceback.

`Errno` is the one table of the texts of Slurm 22.05's ``slurm_strerror``
(src/common/slurm_errno.c) that minislurm prints.  Code never spells one of
these texts itself: it writes ``Errno.ESLURM_INVALID_JOB_ID`` (a plain ``str``)
or raises `RequestError` with it and the client's lead-in.
tests/test_errors_table.py fails when a text of the table appears as a literal
anywhere else.  This module imports nothing: a forwarded command imports it and
must start in milliseconds (tests/minislurm/cli/test_command_start.py; ``enum`` alone costs
more than the whole quick path).
"""

from __future__ import annotations


class SlurmError(Exception):
    """Base class: a failure with Slurm's own wording and exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class ConfigError(SlurmError):
    """slurm.conf / gres.conf could not be read; the message names file and line."""


class HostlistError(SlurmError):
    """A hostlist expression could not be parsed (``scontrol show hostnames``)."""


class GresError(SlurmError):
    """A GRES specification (``--gres``, ``Gres=`` or gres.conf) is malformed."""


class OptionError(SlurmError):
    """A client-side option error of sbatch/srun/salloc (exit 255 by default)."""

    def __init__(self, message: str, exit_code: int = 255) -> None:
        super().__init__(message, exit_code)


class SbatchError(OptionError):
    """An sbatch failure detected before the job reaches the controller."""


class SubmitError(SlurmError):
    """slurmctld rejected a job (``Batch job submission failed: ...``, exit 1)."""


class ControllerUnavailable(SlurmError):
    """No controller answers (slurmctld is down)."""


class RequestError(SlurmError):
    """slurmctld answered a request with an error number (``slurm_strerror``).

    ``errno`` is an `Errno` text; ``message`` is the whole line the client
    prints, ``lead_in`` followed by the text (``slurm_load_jobs error: Invalid
    job id specified``); clients exit 1 after such a refusal.
    """

    def __init__(self, errno: str, lead_in: str = "", exit_code: int = 1) -> None:
        super().__init__(f"{lead_in}{errno}", exit_code)
        self.errno = errno

    @property
    def errno_name(self) -> str:
        """The slurm_errno.h symbol of ``errno`` (``ESLURM_INVALID_JOB_ID``)."""
        return ERRNO_NAMES[self.errno]


class Errno:
    """Slurm 22.05's ``slurm_strerror`` texts (src/common/slurm_errno.c), each once.

    Attributes are named after their slurm_errno.h symbol; each is the text itself
    (a ``str``).  Texts checked against the strings of Debian's libslurmfull.so
    22.05.8 (tests/test_errors_table.py).  Not an ``enum``: see the module docstring.
    """

    #: ESLURM_ACCESS_DENIED: a user changing another user's job.
    ESLURM_ACCESS_DENIED = "Access/permission denied"
    #: ESLURM_USER_ID_MISSING: slurmctld's ``validate_super_user`` refusing a user who
    #: is not root, SlurmUser or an operator (``scontrol update NodeName=...``).
    ESLURM_USER_ID_MISSING = "Invalid user id"
    #: ESLURM_NODES_BUSY: nodes asked for (a reservation's, a step's) are in use.
    ESLURM_NODES_BUSY = "Requested nodes are busy"
    #: ESLURM_INVALID_JOB_ID: no such job (squeue -j, scontrol, scancel, srun --jobid).
    ESLURM_INVALID_JOB_ID = "Invalid job id specified"
    #: ESLURM_INVALID_NODE_NAME: a node name slurm.conf does not define.
    ESLURM_INVALID_NODE_NAME = "Invalid node name specified"
    #: ESLURM_JOB_PENDING: the job has not started (``scontrol suspend`` of a pending job).
    ESLURM_JOB_PENDING = "Job is pending execution"
    #: ESLURM_INVALID_NODE_STATE: ``scontrol update NodeName= State=`` with a bad state.
    ESLURM_INVALID_NODE_STATE = "Invalid node state specified"
    #: ESLURM_DEPENDENCY: a ``--dependency`` slurmctld refuses.
    ESLURM_DEPENDENCY = "Job dependency problem"
    #: ESLURM_INVALID_QOS: an unknown or forbidden ``--qos``.
    ESLURM_INVALID_QOS = "Invalid qos specification"
    #: ESLURM_INVALID_TIME_VALUE: a reservation time parse_time cannot read.
    ESLURM_INVALID_TIME_VALUE = "Invalid time specified"
    #: ESLURM_RESERVATION_NAME_DUP: ``scontrol create reservation`` with a used name.
    ESLURM_RESERVATION_NAME_DUP = "Duplicate reservation name"
    #: ESLURM_INVALID_NICE: the errno text (sbatch's own out-of-range message is longer).
    ESLURM_INVALID_NICE = "Invalid --nice value"
    #: SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR: nothing listens where slurmctld should.
    SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR = (
        "Unable to contact slurm controller (connect failure)")
    #: ESLURM_INVALID_PARTITION_NAME: no such partition.
    ESLURM_INVALID_PARTITION_NAME = "Invalid partition name specified"
    #: ESLURM_TOO_MANY_REQUESTED_CPUS: more CPUs than the partition/step may have.
    ESLURM_TOO_MANY_REQUESTED_CPUS = "More processors requested than permitted"
    #: ESLURM_INVALID_NODE_COUNT: a node count outside the partition's limits.
    ESLURM_INVALID_NODE_COUNT = "Node count specification invalid"
    #: ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE: no node could ever run the request.
    ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE = "Requested node configuration is not available"
    #: ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE: the partition cannot run it now
    #: (``srun --immediate``, a DOWN partition).
    ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE = (
        "Requested partition configuration not available now")
    #: ESLURM_ALREADY_DONE: the job or step is completing or completed.
    ESLURM_ALREADY_DONE = "Job/step already completing or completed"
    #: ESLURM_INVALID_TASK_MEMORY: a step's memory does not fit its allocation.
    ESLURM_INVALID_TASK_MEMORY = "Memory required by task is not available"
    #: ESLURM_INVALID_ACCOUNT: an unknown account or account/partition pair.
    ESLURM_INVALID_ACCOUNT = "Invalid account or account/partition combination specified"
    #: ESLURM_INVALID_TIME_LIMIT: ``--time`` above the partition's MaxTime (and the like).
    ESLURM_INVALID_TIME_LIMIT = "Requested time limit is invalid (missing or exceeds some limit)"
    #: ESLURM_RESERVATION_INVALID: ``--reservation`` names no usable reservation.
    ESLURM_RESERVATION_INVALID = "Requested reservation is invalid"
    #: ESLURM_RESERVATION_BUSY: ``scontrol delete reservation`` while jobs use it.
    ESLURM_RESERVATION_BUSY = "Requested reservation is in use"
    #: ESLURM_RESERVATION_OVERLAP: a reservation overlapping another on its nodes.
    ESLURM_RESERVATION_OVERLAP = "Requested reservation overlaps with another reservation"
    #: ESLURM_INVALID_GRES: a ``--gres`` slurmctld cannot satisfy or parse.
    ESLURM_INVALID_GRES = "Invalid generic resource (gres) specification"
    #: ESLURM_JOB_NOT_PENDING: a change only a pending job accepts.
    ESLURM_JOB_NOT_PENDING = "Job is no longer pending execution"
    #: ESLURM_INVALID_ARRAY: a ``--array`` expression slurmctld refuses.
    ESLURM_INVALID_ARRAY = "Invalid job array specification"
    #: ESLURM_INVALID_GRES_TYPE: gres.c, one name asked for both with and without a
    #: type (``gpu:a100:1,gpu:1``); sbatch/srun/salloc print it after
    #: ``<cmd>: error: `` and exit 1.
    ESLURM_INVALID_GRES_TYPE = "Invalid GRES specification (with and without type identification)"
    #: ESLURMD_IO_ERROR: slurmstepd could not open a task's per-task output file.
    ESLURMD_IO_ERROR = "Slurmd could not connect IO"


#: slurm_errno.h symbol -> text, in table order.
ERRNO_TEXTS: dict[str, str] = {
    name: text for name, text in vars(Errno).items() if name.startswith(("ESLURM", "SLURM"))}
#: text -> slurm_errno.h symbol.
ERRNO_NAMES: dict[str, str] = {text: name for name, text in ERRNO_TEXTS.items()}

#: Former names, kept for callers not yet switched (ctld/auth.py re-exports it).
GRES_TYPE_MIX = Errno.ESLURM_INVALID_GRES_TYPE
INVALID_USER_ID = Errno.ESLURM_USER_ID_MISSING
