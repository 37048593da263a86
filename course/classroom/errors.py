"""The class deployment's typed error."""

from __future__ import annotations

from minislurm.errors import SlurmError


class ClassError(SlurmError):
    """A class could not be configured, started, stopped or queried; the message says why."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        if not message.startswith("course class: "):
            message = f"course class: error: {message}"
        super().__init__(message, exit_code)
