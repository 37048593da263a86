"""srun's signal handling while its step runs never writes from inside a signal handler.

A signal can interrupt srun in the middle of a write to stderr; Python then runs the
handler before that write returns. A handler writing to the same stream is refused
(``RuntimeError: reentrant call inside <_io.BufferedWriter name='<stderr>'>``: seen once
in CI when a cancelled job's SIGCONT reached srun). The stream below runs the handler
from inside its own write, as the interrupted write would, and fails on re-entry.
"""

from __future__ import annotations

import io
import signal
from collections.abc import Callable

from minislurm.cli.common import Context
from minislurm.cli.srun import SignalForwarder


class InterruptedStderr(io.StringIO):
    """stderr whose first write is interrupted by a signal (``deliver``), like a write
    to a full pipe that gets EINTR; writing again from there is the refused re-entry."""

    def __init__(self) -> None:
        super().__init__()
        self.deliver: Callable[[], None] | None = None
        self.writing = False

    def write(self, text: str) -> int:
        if self.writing:
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stderr>'>")
        self.writing = True
        try:
            deliver, self.deliver = self.deliver, None
            if deliver is not None:
                deliver()
            return super().write(text)
        finally:
            self.writing = False


class Tasks:
    """The step's tasks as `_forward_signal` drives them: the signals they got."""

    def __init__(self) -> None:
        self.got: list[int] = []

    def signal(self, sig: int, *, tree: bool = True) -> None:
        self.got.append(sig)


def test_a_signal_during_a_write_to_stderr_is_forwarded_after_it() -> None:
    stderr, tasks = InterruptedStderr(), Tasks()
    ctx = Context(stderr=stderr)
    forwarder = SignalForwarder(ctx, tasks)
    stderr.deliver = lambda: forwarder.handler(signal.SIGCONT, None)
    ctx.err("srun: error: n1: task 0: Terminated")
    forwarder.handler(signal.SIGTERM, None)
    forwarder.handler(signal.SIGUSR1, None)
    forwarder.stop()
    assert stderr.getvalue().splitlines() == [
        "srun: error: n1: task 0: Terminated",
        "srun: got SIGCONT",
        "srun: forcing job termination",
    ]
    assert tasks.got == [signal.SIGKILL, signal.SIGUSR1]
