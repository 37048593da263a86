"""tests/cli_helpers.py: running a command in-process collects its streams and exit code."""

from __future__ import annotations

from collections.abc import Sequence

from cli_helpers import run

from minislurm.cli.common import Context


def test_run_collects_both_streams() -> None:
    """The helper hands back what a command wrote and its exit code."""

    def command(argv: Sequence[str], ctx: Context) -> int:
        ctx.out("to stdout")
        ctx.err("to stderr")
        return len(argv)

    assert run(command, ["a", "b"]) == (2, "to stdout\n", "to stderr\n")
