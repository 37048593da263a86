"""Typed errors that carry the exact text a Slurm command prints.

Every user-facing failure in minislurm is one of these. ``message`` is the
whole stderr text the real command prints (one or more lines, without the
final newline, already prefixed the way Slurm does, e.g.
``sbatch: error: Invalid --time specification``) and ``exit_code`` is the
command's exit status (Slurm exits 255 for client-side option errors and 1
for rejections by slurmctld).  Commands print ``message`` and exit with
``exit_code``; they never show a Python traceback.
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


#: gres.c: one name asked for both with and without a type (``gpu:a100:1,gpu:1``);
#: sbatch/srun/salloc print it after ``<cmd>: error: `` and exit 1.
GRES_TYPE_MIX = "Invalid GRES specification (with and without type identification)"

#: slurm_errno.c ESLURM_USER_ID_MISSING: slurmctld's ``validate_super_user`` refusing a
#: user who is not root, SlurmUser or an operator (``scontrol update NodeName=...``).
INVALID_USER_ID = "Invalid user id"
