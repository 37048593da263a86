"""Slurm's configuration files: slurm.conf, gres.conf and cgroup.conf.

The public API of the package; import from here, not from its modules::

    from minislurm.conf import load_config, parse_config, SlurmConfig

Inside, one module per part of Slurm 22.05 that reads them:

* :mod:`~minislurm.conf.read_config`: ``read_config.c``'s ``read_slurm_conf``,
  the whole file into a :class:`SlurmConfig` (``load_config``, ``parse_config``,
  ``default_config``);
* :mod:`~minislurm.conf.parse_config`: ``parse_config.c``, the tokenizer
  (lines, ``Key=Value`` pairs, ``Include``) and its value handlers;
* :mod:`~minislurm.conf.tables`: the ``s_p_options_t`` key tables;
* :mod:`~minislurm.conf.cluster_options`: ``_validate_and_set_defaults`` and
  ``SchedulerParameters``;
* :mod:`~minislurm.conf.node_conf`: ``NodeName=`` lines (``node_conf.c``);
* :mod:`~minislurm.conf.partitions`: ``PartitionName=`` lines;
* :mod:`~minislurm.conf.gres_conf`: gres.conf (``gres.c``'s ``_gres_options``);
* :mod:`~minislurm.conf.cgroup_conf`: cgroup.conf (``cgroup.c``);
* :mod:`~minislurm.conf.records`: the frozen records they build.
"""

from __future__ import annotations

from minislurm.conf.cgroup_conf import CgroupConfig, load_cgroup_conf, parse_cgroup_conf
from minislurm.conf.cluster_options import parse_scheduler_parameters
from minislurm.conf.gres_conf import GresConfLine, parse_gres_conf
from minislurm.conf.parse_config import FATAL, conf_lines, key_values, next_pair, time_str2mins
from minislurm.conf.read_config import default_config, load_config, parse_config
from minislurm.conf.records import (
    NodeConfig,
    PartitionConfig,
    PriorityConfig,
    SchedulerParameters,
    SlurmConfig,
)
from minislurm.conf.tables import DEFAULT_SLURMD_PORT, INFINITE16, INFINITE32
from minislurm.errors import ConfigError

__all__ = [
    "DEFAULT_SLURMD_PORT",
    "FATAL",
    "INFINITE16",
    "INFINITE32",
    "CgroupConfig",
    "ConfigError",
    "GresConfLine",
    "NodeConfig",
    "PartitionConfig",
    "PriorityConfig",
    "SchedulerParameters",
    "SlurmConfig",
    "conf_lines",
    "default_config",
    "key_values",
    "load_cgroup_conf",
    "load_config",
    "next_pair",
    "parse_cgroup_conf",
    "parse_config",
    "parse_gres_conf",
    "parse_scheduler_parameters",
    "time_str2mins",
]  # fmt: skip
