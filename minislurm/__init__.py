"""minislurm: a compact, faithful Slurm 22.05 for teaching.

Its modules are named after the Slurm components they model (``hostlist``,
``config``, ``gres``, ``options``, ``ctld``, ``slurmd``, ...), so a learner can
map each file to the real thing.
"""

__version__ = "0.1.0"
