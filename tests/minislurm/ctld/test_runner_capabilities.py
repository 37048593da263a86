"""What the controller asks of its runner (the seam to slurmd), and when.

A job's end reads the usage of a runner that samples its tasks' usage
(``GathersUsage``: sstat's ``jobacct``).  The controller asks each runner once, when it
is set, at construction or later (lessons 7 and 8 give the controller their own).
"""

from __future__ import annotations

from ctld_helpers import ref_controller

from minislurm.ctld import SimulatedRunner


class Sampling(SimulatedRunner):
    """A simulated runner with a usage gatherer's place, as the runner with real
    processes has (``None``: ``JobAcctGatherType=jobacct_gather/none``)."""

    jobacct = None


def test_a_runner_given_after_construction_is_asked_whether_it_gathers_usage() -> None:
    ctl = ref_controller()
    assert ctl.usage_runner is None
    ctl.runner = sampling = Sampling(ctl.env)
    assert ctl.usage_runner is sampling
    ctl.runner = SimulatedRunner(ctl.env)
    assert ctl.usage_runner is None
