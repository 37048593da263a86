"""Priority plugins: the *order* of pending jobs (Slurm's ``PriorityType``).

A registry keyed by the strings of slurm.conf's ``PriorityType`` maps to classes
implementing ``PriorityPlugin``:

- ``priority/basic``: FIFO (``basic.py``), the 22.05 default;
- ``priority/multifactor``: the weighted sum of age, association, fair-share, job
  size, partition, QOS, TRES, site and nice (``multifactor.py``), with fair share
  (``fairshare.py``: Fair Tree or classic) over decaying usage (``usage.py``).

``make_priority_plugin(config, associations)`` builds the configured one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from minislurm.common.accounts import AssociationSet
from minislurm.conf import SlurmConfig
from minislurm.errors import ConfigError
from minislurm.priority.basic import BasicPriority
from minislurm.priority.factors import ClusterView, MultifactorParams, PriorityFactors
from minislurm.priority.multifactor import MultifactorPriority


@runtime_checkable
class PriorityPlugin(Protocol):
    """What the controller asks a priority plugin (``priority_g_*`` of slurm_priority.c)."""

    name: str

    #: Whether ``PriorityCalcPeriod`` passes may change a pending job's number
    #: (``priority_g_recover``/the decay thread); False: the controller never runs them.
    recalculates: bool

    def priority(self, job: Any, now: int) -> int:
        """``priority_g_set``: the job's priority at ``now`` (0 = held).

        ``job`` is what the controller gives every plugin: a ``PriorityView``
        (``minislurm.ctld.job_mgr``), the fields of a ``JobRecord`` priorities read.
        """
        ...

    def priorities(self, jobs: Sequence[Any], now: int) -> list[int]:
        """``priority(job, now)`` of each of ``jobs``: one ``PriorityCalcPeriod`` pass."""
        ...

    def unread_pass(self, now: int) -> bool:
        """A ``PriorityCalcPeriod`` pass whose numbers the next pass replaces unread.

        Do what must happen anyway (multifactor: the usage decay) and return True, or
        return False to ask for the full pass (``priorities`` of every pending job).
        """
        ...

    def renice(self, priority: int, old_nice: int, new_nice: int) -> int | None:
        """``scontrol update Nice=``: the job's new priority from its current one, or
        None to have it computed anew with ``priority``."""
        ...

    def factors(self, job: Any, now: int) -> PriorityFactors:
        """The job's factors, as ``sprio`` shows them."""
        ...

    def record_usage(
        self, user: str, account: str, tres_seconds: Mapping[str, float], now: int
    ) -> None:
        """Charge TRES-seconds used by a job of ``user`` in ``account`` up to ``now``."""
        ...


def _basic(config: SlurmConfig, associations: AssociationSet | None) -> PriorityPlugin:
    return BasicPriority()


def _multifactor(config: SlurmConfig, associations: AssociationSet | None) -> PriorityPlugin:
    return MultifactorPriority(
        MultifactorParams.from_config(config.priority),
        ClusterView.from_config(config),
        associations,
    )


#: ``PriorityType`` -> factory(config, associations).
PLUGINS: dict[str, Callable[[SlurmConfig, AssociationSet | None], PriorityPlugin]] = {
    "priority/basic": _basic,
    "priority/multifactor": _multifactor,
}

#: slurm.conf's default ``PriorityType`` in 22.05.
DEFAULT_PRIORITY_TYPE = "priority/basic"


def priority_type(config: SlurmConfig) -> str:
    """The configured ``PriorityType`` (the 22.05 default when the line is empty)."""
    return config.priority.type or DEFAULT_PRIORITY_TYPE


def make_priority_plugin(config: SlurmConfig,
                         associations: AssociationSet | None = None) -> PriorityPlugin:
    """Build the plugin ``PriorityType`` names; unknown names fail like slurmctld."""
    name = priority_type(config)
    factory = PLUGINS.get(name.lower())
    if factory is None:
        raise ConfigError(
            f"error: Couldn't find the specified plugin name for {name} looking at all files\n"
            f"fatal: Can't find plugin for {name}"
        )
    return factory(config, associations)


__all__ = [
    "DEFAULT_PRIORITY_TYPE",
    "PLUGINS",
    "BasicPriority",
    "MultifactorPriority",
    "PriorityPlugin",
    "make_priority_plugin",
    "priority_type",
]
