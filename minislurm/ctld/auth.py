"""Who may change the cluster: slurmctld's ``validate_super_user`` (22.05).

``scontrol update NodeName=``/``PartitionName=``/``Reservation=``, ``scontrol
create reservation`` and ``scontrol delete reservation`` are refused unless the
caller is root (uid 0), the ``SlurmUser`` of slurm.conf (the user slurmctld runs
as) or, with accounting, a user whose ``AdminLevel`` is Operator or Administrator.
Anyone else gets ``Invalid user id`` (``ESLURM_USER_ID_MISSING``), measured on
22.05.8 as ``nobody``::

    $ scontrol update nodename=n1 state=down reason=x
    slurm_update error: Invalid user id                     (exit 1)
    $ scontrol create reservation starttime=now duration=10 nodes=n1 users=root
    Error creating the reservation: Invalid user id
    $ scontrol delete reservation=r1
    delete_reservation reservation=r1: Invalid user id
    $ scontrol update reservation=r1 duration=20
    Error updating the reservation: Invalid user id
    slurm_update error: Invalid user id

minislurm does not model AdminLevel (sacctmgr's users carry none here).
"""

from __future__ import annotations

import pwd

from minislurm.conf import SlurmConfig
from minislurm.errors import INVALID_USER_ID

__all__ = ["INVALID_USER_ID", "operator_uids", "slurm_user_uid"]


def slurm_user_uid(name: str | None) -> int | None:
    """The uid of ``SlurmUser`` (a name or a number; ``None`` when unknown here)."""
    if not name:
        return 0  # SlurmUser's default is root
    if name.isdigit():
        return int(name)
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def operator_uids(config: SlurmConfig, *more: int) -> set[int]:
    """root, slurm.conf's ``SlurmUser`` and ``more`` (e.g. the uid slurmctld runs as)."""
    extra = config.extra
    uids = {0, *more}
    slurm_user = slurm_user_uid(extra.get("SlurmUser"))
    if slurm_user is not None:
        uids.add(slurm_user)
    return uids
