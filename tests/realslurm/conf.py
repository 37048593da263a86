"""The cluster's configuration files, rendered from the reference ones.

``templates/slurm.conf.in`` and ``templates/gres.conf.in`` are the reference
cluster's files (slurm-reference/slurm.conf, gres.conf) with the folder
``/srv/slurm-ref`` replaced by ``${root}`` and the ports by placeholders;
rendering them with :data:`REFERENCE_ROOT` and the reference ports gives the
reference files back byte for byte (tests/harness/test_realslurm_harness.py checks).

Only three things may differ from the reference, all explicit arguments:
``accounting=False`` switches ``AccountingStorageType`` to
``accounting_storage/none`` (no MariaDB/slurmdbd, no sacct) and comments out
``AccountingStorageTRES=gres/gpu`` (slurmctld refuses it without slurmdbd), and
``first_job_id`` adds slurm.conf's ``FirstJobId`` so that job ids are
unmistakable in command outputs, and ``extra_lines`` are added before the
NodeName line (for tests of other settings, e.g. ``EnforcePartLimits=ALL``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from string import Template

from .ports import REFERENCE_PORTS, PortPlan

TEMPLATES = Path(__file__).with_name("templates")
#: Where the reference cluster lived; captures mention paths below it.
REFERENCE_ROOT = Path("/srv/slurm-ref")
NODE_NAMES = ("n1", "n2", "n3", "n4")
GPUS_PER_NODE = 4


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """What varies between two clusters: where they live, their ports, whether
    slurmdbd accounting runs, the first job id, and extra slurm.conf lines (e.g.
    ``EnforcePartLimits=ALL``, as in b2_sbatch_errors_EnforcePartLimits_ALL)."""

    root: Path
    ports: PortPlan
    accounting: bool = True
    first_job_id: int | None = None
    extra_lines: tuple[str, ...] = ()

    @classmethod
    def reference(cls) -> ClusterConfig:
        """The configuration the captures were taken with."""
        return cls(root=REFERENCE_ROOT, ports=REFERENCE_PORTS)


def _render(name: str, **values: str) -> str:
    return Template((TEMPLATES / name).read_text()).substitute(values)


def slurm_conf(cfg: ClusterConfig) -> str:
    """slurm.conf text (the reference's, paths and ports rewritten)."""
    extra = f"FirstJobId={cfg.first_job_id}\n" if cfg.first_job_id is not None else ""
    extra += "".join(f"{line}\n" for line in cfg.extra_lines)
    storage = "accounting_storage/slurmdbd" if cfg.accounting else "accounting_storage/none"
    text = _render(
        "slurm.conf.in",
        root=str(cfg.root),
        ctld_port=str(cfg.ports.ctld),
        slurmd_port=str(cfg.ports.slurmd),
        dbd_port=str(cfg.ports.dbd),
        node_ports=cfg.ports.node_range,
        accounting_storage_type=storage,
        extra=extra,
    )
    if not cfg.accounting:
        # slurmctld: "fatal: slurmdbd is required to run with TRES gres/gpu".
        text = text.replace(
            "\nAccountingStorageTRES=gres/gpu\n",
            "\n# AccountingStorageTRES=gres/gpu needs slurmdbd\n",
        )
    return text


def gres_conf(cfg: ClusterConfig) -> str:
    """gres.conf text: ``NodeName=n[1-4] Name=gpu Type=a100 File=<root>/dev/nvidia[0-3]``."""
    return _render("gres.conf.in", root=str(cfg.root))


def slurmdbd_conf(cfg: ClusterConfig) -> str:
    """slurmdbd.conf text (DbdPort = slurm.conf's AccountingStoragePort)."""
    return _render(
        "slurmdbd.conf.in",
        root=str(cfg.root),
        dbd_port=str(cfg.ports.dbd),
        mysql_port=str(cfg.ports.mysql),
    )
