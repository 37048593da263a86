"""cgroup.conf: the task/cgroup plugin's settings, read beside slurm.conf.

Slurm 22.05 reads ``cgroup.conf`` from the folder of slurm.conf
(src/common/cgroup.c ``cgroup_conf_init``: the ``s_p_options_t`` table below,
``Could not open/read/parse cgroup.conf file PATH`` when it does not parse). A
missing file leaves every setting at its default (all ``Constrain*`` off).

minislurm models what a job can observe of it:

* ``ConstrainDevices=yes`` with ``TaskPlugin`` naming ``task/cgroup``
  (``gres_use_local_device_index``, src/common/gres.c): each job and step sees only
  its own GPUs, renumbered from 0, so ``CUDA_VISIBLE_DEVICES``,
  ``GPU_DEVICE_ORDINAL``, ``ROCR_VISIBLE_DEVICES`` and ``ZE_AFFINITY_MASK`` count from
  0 while ``SLURM_JOB_GPUS``/``SLURM_STEP_GPUS`` keep the node's indices
  (gres_common.c ``common_gres_set_env``: local list vs global list).

The other keys are accepted and kept (``settings``) but do not change what runs here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minislurm.conf.parse_config import Rejected, conf_lines, convert_value, next_pair
from minislurm.errors import ConfigError

__all__ = ["CgroupConfig", "load_cgroup_conf", "parse_cgroup_conf"]

#: cgroup.c's option table (name: kind; ``b`` boolean, ``s`` string, ``f`` float,
#: ``u64`` integer).
_OPTIONS = {name.lower(): (name, kind) for name, kind in (
    ("CgroupAutomount", "b"), ("CgroupMountpoint", "s"), ("CgroupReleaseAgentDir", "s"),
    ("ConstrainCores", "b"), ("ConstrainRAMSpace", "b"), ("AllowedRAMSpace", "f"),
    ("MaxRAMPercent", "f"), ("MinRAMSpace", "u64"), ("ConstrainSwapSpace", "b"),
    ("ConstrainKmemSpace", "b"), ("AllowedKmemSpace", "f"), ("MaxKmemPercent", "f"),
    ("MinKmemSpace", "u64"), ("AllowedSwapSpace", "f"), ("MaxSwapPercent", "f"),
    ("MemoryLimitEnforcement", "b"), ("MemoryLimitThreshold", "f"),
    ("ConstrainDevices", "b"), ("AllowedDevicesFile", "s"), ("MemorySwappiness", "u64"),
    ("CgroupPlugin", "s"), ("IgnoreSystemd", "b"), ("IgnoreSystemdOnFailure", "b"),
)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class CgroupConfig:
    """What cgroup.conf says (defaults: nothing constrained, as with no file).

    ``settings`` maps each key given (canonical spelling) to its value; ``source`` is
    the file read ('' when there was none)."""

    constrain_devices: bool = False
    constrain_cores: bool = False
    constrain_ram_space: bool = False
    settings: tuple[tuple[str, Any], ...] = ()
    source: str = ""


def _convert(key: str, kind: str, value: str) -> Any:
    if kind == "f":
        try:
            return float(value)
        except ValueError:
            raise Rejected(f"{key} value ({value}) is not a valid number") from None
    return convert_value(key, kind, value)


def parse_cgroup_conf(text: str, filename: str = "cgroup.conf") -> CgroupConfig:
    """Parse cgroup.conf ``text``; a key Slurm does not know, a bad value or a line
    that does not parse ends like slurmd/slurmctld do (:class:`ConfigError`:
    ``error: ...`` then ``fatal: Could not open/read/parse cgroup.conf file NAME``)."""
    errors: list[str] = []
    values: dict[str, Any] = {}
    for lineno, line in conf_lines(text):
        pair = next_pair(line)
        if pair is None:
            errors.append(f'Parse error in file {filename} line {lineno}: "{line}"')
            continue
        key, _op, value, rest = pair
        entry = _OPTIONS.get(key.lower())
        if entry is None:
            errors.append(f"_parse_next_key: Parsing error at unrecognized key: {key}")
            continue
        name, kind = entry
        try:
            values[name] = _convert(name, kind, value)
        except Rejected as exc:
            errors.append(str(exc))
            continue
        if rest.strip():
            errors.append(f'Parse error in file {filename} line {lineno}: "{rest.strip()}"')
    if errors:
        lines = [f"error: {e}" for e in errors]
        raise ConfigError("\n".join(
            [*lines, f"fatal: Could not open/read/parse cgroup.conf file {filename}"]))
    return CgroupConfig(
        constrain_devices=bool(values.get("ConstrainDevices", False)),
        constrain_cores=bool(values.get("ConstrainCores", False)),
        constrain_ram_space=bool(values.get("ConstrainRAMSpace", False)),
        settings=tuple(values.items()),
        source=filename,
    )


def load_cgroup_conf(slurm_conf: str | Path) -> CgroupConfig:
    """The cgroup.conf beside ``slurm_conf`` (defaults when there is none)."""
    path = Path(slurm_conf).with_name("cgroup.conf")
    if not path.is_file():
        return CgroupConfig()
    return parse_cgroup_conf(path.read_text(encoding="utf-8"), str(path))
