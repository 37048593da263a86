"""Node selection plugins (``SelectType=``); only ``select/cons_tres`` is modelled."""

from minislurm.select.cons_tres import select
from minislurm.select.request import ResourceRequest
from minislurm.select.table import NodeShape, NodeTable

__all__ = ["NodeShape", "NodeTable", "ResourceRequest", "select"]
