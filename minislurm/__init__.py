"""minislurm: a compact, faithful Slurm 22.05 for teaching.

Its modules are named after the Slurm components they model (``hostlist``,
``config``, ``gres``, ``options``, ``ctld``, ``slurmd``, ...), so a learner can
map each file to the real thing.
"""

__version__ = "0.1.0"

#: The Slurm release minislurm mirrors (Debian slurm-wlm 22.05.8): ``scontrol show node``'s
#: ``Version=``, ``sinfo %v`` and, as ``slurm 22.05.8``, every command's ``-V``.
SLURM_VERSION = "22.05.8"
