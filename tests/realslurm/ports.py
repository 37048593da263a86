"""Free TCP ports for one harness run.

The reference cluster used fixed ports (SlurmctldPort=16817, SlurmdPort=16818,
AccountingStoragePort=16819, node ports 17001-17004). Two harness runs on the
same host must not collide, so each run picks a block of consecutive free ports
at random and checks that every one of them can be bound right now.

The blocks come from 10000-19999: below the kernel's ephemeral ports (32768 and up
here, where a client socket could take a port between the check and slurmctld's
bind) and below the DDP example's rendezvous ports (``course.ddp.wiring.master_port``:
20000-29999). Under pytest-xdist each worker (``PYTEST_XDIST_WORKER=gwN``) draws
from its own slice of that range, so two workers starting clusters at the same
moment cannot pick overlapping blocks.
"""

from __future__ import annotations

import os
import random
import re
import socket
from dataclasses import dataclass

#: How many consecutive ports a cluster needs (see :class:`PortPlan`).
BLOCK_SIZE = 8


@dataclass(frozen=True, slots=True)
class PortPlan:
    """The ports of one cluster: slurm.conf's SlurmctldPort, SlurmdPort,
    AccountingStoragePort (= slurmdbd.conf's DbdPort), MariaDB's port and the
    per-node ``Port=`` range of ``NodeName=n[1-4]``."""

    ctld: int
    slurmd: int
    dbd: int
    mysql: int
    nodes: tuple[int, ...]

    @property
    def node_range(self) -> str:
        """The ``Port=`` value of the NodeName line, e.g. ``17001-17004``."""
        return f"{self.nodes[0]}-{self.nodes[-1]}"

    @classmethod
    def from_base(cls, base: int, node_count: int = 4) -> PortPlan:
        """Lay the ports out from ``base`` upwards (``BLOCK_SIZE`` ports for 4 nodes)."""
        return cls(
            ctld=base,
            slurmd=base + 1,
            dbd=base + 2,
            mysql=base + 3,
            nodes=tuple(base + 4 + i for i in range(node_count)),
        )


#: The reference cluster's ports (slurm-reference/slurm.conf).
REFERENCE_PORTS = PortPlan(
    ctld=16817, slurmd=16818, dbd=16819, mysql=3306, nodes=(17001, 17002, 17003, 17004)
)


def port_is_free(port: int) -> bool:
    """True when ``port`` can be bound on all interfaces right now (slurmctld
    and slurmd listen on INADDR_ANY)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("", port))
        except OSError:
            return False
    return True


#: The range harness ports are drawn from (see the module docstring).
PORT_RANGE = (10000, 20000)
#: How many xdist workers get a slice of their own (more share slices round-robin).
WORKER_SLICES = 8


def worker_range(worker: str | None = None) -> tuple[int, int]:
    """The [low, high) ports of this process: PORT_RANGE, or under pytest-xdist the
    worker's own slice of it (``gw0`` the first, ...)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "") if worker is None else worker
    low, high = PORT_RANGE
    match = re.fullmatch(r"gw(\d+)", worker)
    if match is None:
        return low, high
    size = (high - low) // WORKER_SLICES
    start = low + (int(match.group(1)) % WORKER_SLICES) * size
    return start, start + size


def choose_ports(
    *,
    low: int | None = None,
    high: int | None = None,
    attempts: int = 200,
    rng: random.Random | None = None,
) -> PortPlan:
    """Pick a random block of ``BLOCK_SIZE`` consecutive free ports in [low, high)
    (default: :func:`worker_range`)."""
    default_low, default_high = worker_range()
    low = default_low if low is None else low
    high = default_high if high is None else high
    pick = rng or random.SystemRandom()
    for _ in range(attempts):
        base = pick.randrange(low, high - BLOCK_SIZE)
        if all(port_is_free(base + i) for i in range(BLOCK_SIZE)):
            return PortPlan.from_base(base)
    raise OSError(f"no block of {BLOCK_SIZE} free ports found in [{low}, {high})")
