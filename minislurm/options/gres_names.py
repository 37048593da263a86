"""The GRES check sbatch, srun and salloc make themselves, before contacting slurmctld.

Slurm 22.05's commands read slurm.conf and refuse a ``--gres`` (option, ``#SBATCH``
directive or ``SBATCH_GRES``/``SLURM_GRES``/``SALLOC_GRES``) naming a resource that
``GresTypes`` does not list, with ``<cmd>: error: Invalid generic resource (gres)
specification`` and exit 1; no job id is used. The same happens to a name given both
with and without a type (``gpu:a100:1,gpu:1``): ``Invalid GRES specification (with and
without type identification)``. Measured on 22.05.8
(tests/minislurm/options/test_gres_frontend_differential.py):

- names are compared case-sensitively and as written: ``GPU``, ``gres/gpu`` and an
  empty name (``:1``) are refused as well as ``foo``, ``shard`` or ``mps`` when not
  configured; empty items (``,gpu:1``) are skipped here (slurmctld refuses them);
- sbatch checks after reading the options and the script (``--time=abc``, a missing
  or empty script are reported first) and before ``--test-only`` or the partition;
- types, counts and sizes are not checked here: ``gpu:badtype:1``, ``gpu:-1``,
  ``gpu:a100:99``, ``--gpus=foo:1`` reach slurmctld (``Requested node configuration
  is not available``, a job id used); ``--gpus*`` always name ``gpu``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from minislurm.errors import ConfigError, Errno, GresError

#: A count as gres.c reads it (digits with an optional k/m/g/t/p multiplier).
_COUNT = re.compile(r"^\d+[kKmMgGtTpP]?$")


def _typed(item: str) -> bool:
    """Whether ``name[[:type]:count]`` names a type (``gpu:a100``, ``gpu:a100:2``)."""
    parts = item.split(":")
    return len(parts) >= 3 or (len(parts) == 2 and not _COUNT.match(parts[1]))


def check_gres_names(gres: str | None, gres_types: Sequence[str], prog: str) -> None:
    """Refuse ``--gres`` as the command itself does (see the module docstring).

    Raises `GresError` (exit 1) with the command's whole stderr line.

    >>> check_gres_names("gpu:a100:2", ("gpu",), "sbatch")
    >>> check_gres_names("shard:1", ("gpu",), "srun")
    Traceback (most recent call last):
    ...
    minislurm.errors.GresError: srun: error: Invalid generic resource (gres) specification
    """
    if not gres or gres.lower() == "none":
        return
    items = [item for item in gres.split(",") if item]
    for item in items:
        if item.split(":", 1)[0] not in gres_types:
            raise GresError(f"{prog}: error: {Errno.ESLURM_INVALID_GRES}")
    typed = {item.split(":", 1)[0] for item in items if _typed(item)}
    untyped = {item.split(":", 1)[0] for item in items if not _typed(item)}
    if typed & untyped:
        raise GresError(f"{prog}: error: {Errno.ESLURM_INVALID_GRES_TYPE}")


def check_command_gres(gres: str | None, prog: str, env: Mapping[str, str],
                       gres_types: Sequence[str] | None = None) -> None:
    """The GRES check sbatch, srun and salloc make before contacting slurmctld.

    ``gres_types`` is ``GresTypes`` when the caller already holds the configuration
    (sbatch answered by a running controller); otherwise the command reads slurm.conf
    as Slurm's would (`client_gres_types` of ``env``), and when it cannot be read the
    check is left to the controller.  Raises `GresError` like `check_gres_names`.
    """
    types = gres_types if gres_types is not None else client_gres_types(env)
    if types is not None:
        check_gres_names(gres, types, prog)


def client_gres_types(env: Mapping[str, str]) -> tuple[str, ...] | None:
    """``GresTypes`` as a command reads slurm.conf: ``$SLURM_CONF`` of ``env``, else the
    embedded default; None when it cannot be read (the controller will say why)."""
    from minislurm.conf import default_config, load_config  # the parser, only here

    path = env.get("SLURM_CONF")
    try:
        config = load_config(path) if path else default_config()
    except (ConfigError, OSError, UnicodeDecodeError):
        return None
    return config.gres_types
