"""``scontrol show reservation`` (src/scontrol/info_res.c ``scontrol_print_res``)."""

from __future__ import annotations

from minislurm.cli.format.scontrol import format_scontrol_reservation
from minislurm.cli.scontrol.session import Session


def show_reservations(s: Session, val: str | None) -> None:
    """``scontrol_print_res``."""
    resvs = s.controller("slurm_load_reservations error").reservations()
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
