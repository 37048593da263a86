"""slurm.conf (+ gres.conf beside it), read the way Slurm 22.05 reads it.

Mirrors ``read_slurm_conf`` / ``slurm_conf_init`` of ``src/common/read_config.c``
(and slurmctld's ``read_slurm_conf`` building its node and partition tables):
the file is tokenized (:mod:`minislurm.conf.parse_config`, ``parse_config.c``) against
the option tables (:mod:`minislurm.conf.tables`), the cluster-wide options are
validated and defaulted (:mod:`minislurm.conf.cluster_options`), ``NodeName=`` lines become
nodes with gres.conf merged in (:mod:`minislurm.conf.node_conf`), and ``PartitionName=``
lines become partitions (:mod:`minislurm.conf.partitions`); the results are the
frozen records of :mod:`minislurm.conf.records`, all importable from
:mod:`minislurm.conf` (the package's public API).

Keys Slurm accepts but minislurm does not model (``SlurmctldPort``, ``AuthType``,
log files, ...) are kept in :attr:`SlurmConfig.extra` with a note; a key Slurm does
not know, a malformed line or a bad value raises :class:`ConfigError` whose message
is the lines Slurm logs (``error: ... Parse error in file F line N: "..."`` then
``fatal: Unable to process configuration file``), without the program prefix.
Where Slurm names no file and line (``KillWait value "abc" is not a valid
number``), minislurm adds one line of its own, ``error: in file F line N: "..."``,
so a learner always finds the culprit.  ``Include FILE`` lines are followed.

The parse errors were checked against the real ``scontrol`` of Slurm 22.05.8;
the checks slurmctld makes later (unknown partition nodes, plugin names, Port
and NodeAddr counts, GresTypes) use Slurm's wording where it is known.

``load_config(path)`` reads *path*, else ``$SLURM_CONF``, else the embedded
default cluster ``minislurm/etc/slurm.conf``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from importlib import resources
from pathlib import Path

from minislurm.common import hostlist
from minislurm.common.billing import BillingError, parse_tres_weights
from minislurm.conf.cgroup_conf import load_cgroup_conf
from minislurm.conf.cluster_options import cluster_options
from minislurm.conf.node_conf import build_nodes, merge_gres
from minislurm.conf.parse_config import ConfParser, Rejected, config_error, read_conf_file, where
from minislurm.conf.partitions import build_partition
from minislurm.conf.records import (
    NodeConfig,
    PartitionConfig,
    SlurmConfig,
)
from minislurm.conf.tables import MODELLED_KEYS
from minislurm.errors import ConfigError, GresError

__all__ = ["default_config", "load_config", "parse_config"]


def parse_config(
    text: str,
    filename: str = "slurm.conf",
    gres_text: str | None = None,
    gres_filename: str | None = None,
) -> SlurmConfig:
    """Parse a slurm.conf text (and optionally its gres.conf) into a :class:`SlurmConfig`."""
    parser = ConfParser(filename)
    parser.feed(text)
    if parser.errors:
        raise config_error(parser.errors)
    top = {key: value for key, (_canonical, value) in parser.result.top.items()}
    notes: list[str] = []
    extra: dict[str, str] = {}
    for key, (canonical, value) in parser.result.top.items():
        if key not in MODELLED_KEYS:
            if isinstance(value, list):  # SlurmctldHost, DownNodes, ...: one entry per line
                value = ",".join(str(v) for v, _options in value)
            extra[canonical] = value if isinstance(value, str) else str(value)
            notes.append(f"{canonical} is accepted (as Slurm does) but ignored by minislurm")
    if not top.get("clustername"):
        raise config_error(["ClusterName needs to be specified"])
    if not (top.get("slurmctldhost") or top.get("controlmachine")):
        raise config_error(["No SlurmctldHost defined."])
    if top.get("maxarraysize", 0) > 4000001:
        notes.append(f"MaxArraySize value ({top['maxarraysize']}) is greater than 4000001")
    try:
        options = cluster_options(top, notes)
    except Rejected as exc:
        lines = exc.lines()
        if exc.key in parser.lines:
            where_file, lineno, text = parser.lines[exc.key]
            lines.append(f'in file {where_file} line {lineno}: "{text}"')
        raise config_error(lines, exc.fatal) from None

    nodes: list[NodeConfig] = []
    for item in parser.result.nodes:
        try:
            built = build_nodes(item, options["slurmd_port"], options["gres_types"], notes)
        except Rejected as exc:
            raise config_error([*exc.lines(), where(item)], exc.fatal) from None
        for node in built:
            if any(n.name == node.name for n in nodes):
                fatal = f"fatal: Duplicated NodeName {node.name} in the config file"
                raise config_error([where(item)], fatal)
        nodes.extend(built)
    gres_name = gres_filename or str(Path(filename).with_name("gres.conf"))
    try:
        nodes = merge_gres(nodes, gres_text, gres_name, notes)
    except GresError as exc:
        raise ConfigError(exc.message) from None

    # slurmctld sorts its node table by name (strnatcmp): a1, a2, b1, n09, n9, n10
    nodes.sort(key=functools.cmp_to_key(lambda a, b: hostlist.natcmp(a.name, b.name)))
    node_names = tuple(n.name for n in nodes)
    partitions: list[PartitionConfig] = []
    default_name: str | None = None
    for item in parser.result.partitions:
        try:
            part = build_partition(item, node_names, options["preempt_mode"], notes)
        except Rejected as exc:
            raise config_error([*exc.lines(), where(item)], exc.fatal) from None
        weights_text = item.options.get("tresbillingweights")
        if weights_text:
            # slurmctld's read_config (set_partition_billing_weights, fail=true)
            max_tres = "MAX_TRES" in options["priority"].flags
            try:
                weights = parse_tres_weights(str(weights_text), options["accounting_storage_tres"],
                                             max_tres=max_tres)
            except BillingError as exc:
                raise config_error(exc.lines, exc.fatal) from None
            part = dataclasses.replace(part, billing_weights=weights)
        if any(p.name == part.name for p in partitions):
            fatal = (
                "fatal: _build_single_partitionline_info: duplicate entry for partition "
                f"{part.name}"
            )
            raise config_error([where(item)], fatal)
        partitions.append(part)
        if part.default:
            default_name = part.name
    return SlurmConfig(
        cluster_name=str(top["clustername"]).lower(),
        nodes=tuple(nodes),
        partitions=tuple(partitions),
        default_partition_name=default_name,
        extra=extra,
        notes=tuple(notes),
        source=filename,
        **options,
    )


def load_config(path: str | os.PathLike[str] | None = None) -> SlurmConfig:
    """Load slurm.conf from ``path``, else ``$SLURM_CONF``, else the embedded default.

    gres.conf is read from the same folder when it exists (as Slurm does), and so is
    cgroup.conf when a cgroup plugin is configured (`minislurm.conf.cgroup_conf`).
    """
    chosen = path if path is not None else os.environ.get("SLURM_CONF")
    if chosen is None:
        return default_config()
    conf = Path(chosen)
    gres = conf.with_name("gres.conf")
    gres_text = gres.read_text(encoding="utf-8") if gres.is_file() else None
    config = parse_config(read_conf_file(conf), str(conf), gres_text, str(gres))
    if config.uses_cgroup:
        config = dataclasses.replace(config, cgroup=load_cgroup_conf(conf))
    return config


def default_config() -> SlurmConfig:
    """The embedded teaching cluster ``minislurm/etc/slurm.conf`` (+ its gres.conf)."""
    etc = resources.files("minislurm") / "etc"
    text = (etc / "slurm.conf").read_text(encoding="utf-8")
    gres_file = etc / "gres.conf"
    gres_text = gres_file.read_text(encoding="utf-8") if gres_file.is_file() else None
    return parse_config(text, "minislurm/etc/slurm.conf", gres_text, "minislurm/etc/gres.conf")
