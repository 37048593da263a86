"""Who am I in the job? torch.distributed's rendezvous read from what the launcher gives.

A DDP process needs five facts: its global rank, the world size, its rank on the
node (local rank), and the address and port of rank 0's TCP store. Under Slurm
they all follow from the variables ``srun`` (slurmstepd) puts into every task's
environment -- nothing else is needed, no ``torchrun`` agent:

========================  ===============================================
torch.distributed         Slurm 22.05 (``srun`` task environment)
========================  ===============================================
``RANK``                  ``SLURM_PROCID`` (``%t`` of ``srun -o``)
``WORLD_SIZE``            ``SLURM_NTASKS`` (``-n/--ntasks``)
``LOCAL_RANK``            ``SLURM_LOCALID``
``MASTER_ADDR``           first host of the **step**'s ``SLURM_STEP_NODELIST``
                          (block layout puts task 0 there), resolved; local
                          nodes -> ``127.0.0.1``
``MASTER_PORT``           :func:`master_port` of ``SLURM_JOB_ID`` and
                          ``SLURM_STEP_ID``
========================  ===============================================

Both rendezvous facts belong to the step, not the job: two ``srun --exact``
steps running side by side in one allocation (a sweep) are two separate
``torch.distributed`` worlds, each with its own rank 0 on the first node of
its own step. ``SLURM_JOB_NODELIST`` and step 0 are only the fallbacks for a
process outside any step (the batch script itself has no ``SLURM_STEP_*``).

When the ``SLURM_*`` variables are absent the usual ``env://`` variables set by
``torchrun`` (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``) are read instead, so the same script runs under both launchers.
``torchrun`` started inside an ``sbatch`` script inherits the batch step's
``SLURM_PROCID=0``; its own ``TORCHELASTIC_RUN_ID`` marks that case and wins.

Everything here is a pure function of an environment mapping (plus a name
resolver that tests may replace): no torch import, no global state.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from minislurm.common.hostlist import expand

__all__ = [
    "LOCAL_ADDRESS",
    "PORT_BASE",
    "PORT_SPAN",
    "STEP_STRIDE",
    "Wiring",
    "WiringError",
    "local_hosts",
    "master_addr",
    "master_port",
    "wiring_from_env",
]

#: The loopback address every local node maps to.
LOCAL_ADDRESS = "127.0.0.1"
#: ``MASTER_PORT = PORT_BASE + (SLURM_JOB_ID + STEP_STRIDE * SLURM_STEP_ID) % PORT_SPAN``:
#: 20000-29999, unprivileged, below Linux's ephemeral range (32768-60999, where
#: gloo's own connections land) and clear of Slurm's usual ports (6817-6819).
PORT_BASE = 20000
PORT_SPAN = 10000
#: How far apart the ports of consecutive steps of one job are. 1009 is prime to
#: ``PORT_SPAN``, so the first 10000 steps of a job all get different ports, and
#: step 0 keeps the job's own port ``PORT_BASE + job_id % PORT_SPAN``.
STEP_STRIDE = 1009
#: Extra names (a hostlist expression) to treat as this host, e.g. minislurm's
#: logical nodes ``n[1-4]`` when some DNS happens to resolve ``n1``.
LOCAL_NODES_VAR = "COURSE_DDP_LOCAL_NODES"

Resolver = Callable[[str], str]


class WiringError(ValueError):
    """The environment does not say who this process is (no launcher variables)."""


@dataclass(frozen=True, slots=True)
class Wiring:
    """One process's place in the job, as ``torch.distributed`` wants it.

    ``launcher`` is ``"slurm"``, ``"torchrun"`` or ``"env"`` (plain ``RANK``/...),
    ``single_host`` is true when every node of the job is this host (then the
    training script may pin gloo to the loopback interface).
    """

    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: int
    launcher: str
    single_host: bool
    restart_count: int = 0
    job_id: int | None = None
    step_id: int | None = None

    def torch_env(self) -> dict[str, str]:
        """The ``env://`` variables ``init_process_group`` reads."""
        return {
            "RANK": str(self.rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_RANK": str(self.local_rank),
            "MASTER_ADDR": self.master_addr,
            "MASTER_PORT": str(self.master_port),
        }


def master_port(job_id: int, step_id: int = 0) -> int:
    """The TCP store port of step ``step_id`` of job ``job_id``:
    ``20000 + (job_id + 1009 * step_id) % 10000``.

    Two rendezvous running at the same time on the same first node must not share
    a port (their ranks would cross-wire, or rank 0 fails with EADDRINUSE), so the
    port follows both the job id (``SLURM_JOB_ID``, which Slurm never hands out
    twice at once) and the step id (``SLURM_STEP_ID``: concurrent ``srun --exact``
    steps of one allocation, each its own world). Step 0 keeps the job's port
    ``20000 + job_id % 10000``; steps 1, 2, ... move 1009 ports on each time
    (modulo 10000), so no two of a job's first 10000 steps meet. Different jobs
    can still meet (ids 10000 apart, or job ``j`` step 1 and job ``j + 1009``
    step 0); that only matters if both rendezvous on one node at once.
    """
    if job_id < 0:
        raise WiringError(f"invalid SLURM_JOB_ID {job_id}")
    if step_id < 0:
        raise WiringError(f"invalid SLURM_STEP_ID {step_id}")
    return PORT_BASE + (job_id + STEP_STRIDE * step_id) % PORT_SPAN


def local_hosts(env: Mapping[str, str]) -> frozenset[str]:
    """Names meaning "this host": ``localhost``, ``gethostname()`` (full and short)
    and the hostlist in ``$COURSE_DDP_LOCAL_NODES``."""
    name = socket.gethostname()
    names = {"localhost", name, name.split(".")[0]}
    extra = env.get(LOCAL_NODES_VAR, "").strip()
    if extra:
        names.update(expand(extra))
    return frozenset(names)


def _resolve(host: str) -> str:
    return socket.gethostbyname(host)


def _host_address(host: str, local: Collection[str], resolve: Resolver) -> str:
    """``host``'s IPv4 address; ``127.0.0.1`` when it is local or does not resolve
    (minislurm's logical nodes ``n1``... and real Slurm's ``NodeHostname=localhost``
    nodes of a one-host cluster)."""
    if host in local:
        return LOCAL_ADDRESS
    try:
        address = resolve(host)
    except OSError:  # socket.gaierror: no such host
        return LOCAL_ADDRESS
    return LOCAL_ADDRESS if ipaddress.ip_address(address).is_loopback else address


def master_addr(
    nodelist: str, *, local: Collection[str] = (), resolve: Resolver = _resolve
) -> str:
    """The address of rank 0's node: the first host of ``nodelist``
    (the step's ``SLURM_STEP_NODELIST``, expanded like ``scontrol show hostnames``)."""
    hosts = expand(nodelist)
    if not hosts:
        raise WiringError(f"empty node list {nodelist!r}")
    return _host_address(hosts[0], local, resolve)


def _int(env: Mapping[str, str], name: str) -> int:
    try:
        return int(env[name])
    except KeyError:
        raise WiringError(f"{name} is not set") from None
    except ValueError:
        raise WiringError(f"{name}={env[name]!r} is not an integer") from None


def _from_slurm(env: Mapping[str, str], resolve: Resolver) -> Wiring:
    """The step's world: rank 0 is task 0 of *this step*, on the first node of
    ``SLURM_STEP_NODELIST`` (not of the job: an ``srun -N1 --exact`` step may run on
    the allocation's second node); outside a step (no ``SLURM_STEP_*``, the batch
    script) the job's node list and step 0."""
    nodelist = (env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
                or env.get("SLURM_NODELIST"))
    if not nodelist:
        raise WiringError("SLURM_JOB_NODELIST is not set")
    local = local_hosts(env)
    hosts = expand(nodelist)
    addresses = {_host_address(h, local, resolve) for h in hosts}
    job_id = _int(env, "SLURM_JOB_ID")
    step_id = _int(env, "SLURM_STEP_ID") if "SLURM_STEP_ID" in env else 0
    return Wiring(
        rank=_int(env, "SLURM_PROCID"),
        world_size=_int(env, "SLURM_NTASKS"),
        local_rank=_int(env, "SLURM_LOCALID"),
        master_addr=_host_address(hosts[0], local, resolve),
        master_port=master_port(job_id, step_id),
        launcher="slurm",
        single_host=addresses == {LOCAL_ADDRESS},
        restart_count=int(env.get("SLURM_RESTART_COUNT", "0") or 0),
        job_id=job_id,
        step_id=step_id,
    )


def _from_torch_env(env: Mapping[str, str], launcher: str) -> Wiring:
    addr = env.get("MASTER_ADDR", LOCAL_ADDRESS)
    try:
        loopback = addr == "localhost" or ipaddress.ip_address(addr).is_loopback
    except ValueError:
        loopback = False
    world = _int(env, "WORLD_SIZE")
    return Wiring(
        rank=_int(env, "RANK"),
        world_size=world,
        local_rank=int(env.get("LOCAL_RANK", env["RANK"])),
        master_addr=addr,
        master_port=_int(env, "MASTER_PORT"),
        launcher=launcher,
        single_host=loopback or int(env.get("LOCAL_WORLD_SIZE", "0") or 0) == world,
        restart_count=int(env.get("TORCHELASTIC_RESTART_COUNT", "0") or 0),
    )


def wiring_from_env(env: Mapping[str, str], *, resolve: Resolver = _resolve) -> Wiring:
    """This process's :class:`Wiring`, from (in this order) torchrun's variables
    when ``TORCHELASTIC_RUN_ID`` is set, ``SLURM_PROCID`` & co., or plain ``RANK`` & co.

    Raises :class:`WiringError` naming the missing or malformed variable.
    """
    if "TORCHELASTIC_RUN_ID" in env and "RANK" in env:
        return _from_torch_env(env, "torchrun")
    if "SLURM_PROCID" in env:
        return _from_slurm(env, resolve)
    if "RANK" in env:
        return _from_torch_env(env, "env")
    raise WiringError(
        "no launcher variables: run under srun (SLURM_PROCID, SLURM_NTASKS, "
        "SLURM_LOCALID, SLURM_JOB_NODELIST, SLURM_JOB_ID) or torchrun (RANK, WORLD_SIZE)"
    )
