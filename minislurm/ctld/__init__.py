"""The controller (slurmctld): jobs, nodes, partitions, reservations, scheduling.

``Controller(config, env)`` is the public entry point; ``JobBody`` says what a
simulated job does and ``JobRunner`` is the seam to a real launcher (slurmd).
"""

from minislurm.ctld.controller import DEFAULT_EPOCH, Controller
from minislurm.ctld.runner import JobBody, JobRunner, SimulatedRunner

__all__ = ["DEFAULT_EPOCH", "Controller", "JobBody", "JobRunner", "SimulatedRunner"]
