"""Node selection plugins (``SelectType=``); only ``select/cons_tres`` is modelled."""

from minislurm.select.cons_tres import ResourceRequest, select
from minislurm.select.table import NodeShape, NodeTable

__all__ = ["NodeShape", "NodeTable", "ResourceRequest", "select"]
