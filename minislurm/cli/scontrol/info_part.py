"""``scontrol show partition`` (src/scontrol/info_part.c ``scontrol_print_part``)."""

from __future__ import annotations

from minislurm.cli.format.scontrol import format_scontrol_partition
from minislurm.cli.scontrol.session import Session


def show_partitions(s: Session, val: str | None) -> None:
    """``scontrol_print_part``."""
    parts = s.controller("slurm_load_partitions error").partitions()
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
