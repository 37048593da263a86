"""The controller (slurmctld): jobs, nodes, partitions, reservations, scheduling.

``Controller(config, env)`` is the public entry point; ``JobBody`` says what a
simulated job does and ``JobRunner`` is the seam to a real launcher (slurmd).
``SIMULATED``/``WALL_CLOCK`` say which clock a controller runs on.  The shape of
the package is described in docs/ctld.md.
"""

from minislurm.ctld.controller import DEFAULT_EPOCH, SIMULATED, WALL_CLOCK, Controller
from minislurm.ctld.runner import JobBody, JobRunner, SimulatedRunner

__all__ = ["DEFAULT_EPOCH", "SIMULATED", "WALL_CLOCK", "Controller", "JobBody", "JobRunner",
           "SimulatedRunner"]
