"""minislurm on the simulated clock: the embedded cluster and experiments.

    >>> from minislurm.sim import Cluster
    >>> print(Cluster().run("sinfo"))

* `minislurm.sim.cluster` -- `Cluster`: Slurm's commands against an in-process
  controller on a SimPy clock (the notebooks' and the labs' cluster);
* `minislurm.sim.simscript` -- how a simulated node "runs" a batch script (its sleeps);
* `minislurm.sim.simulate` -- an experiment: a workload through the controller;
* `minislurm.sim.command` -- ``python -m minislurm simulate``, the experiment's command;
* `minislurm.sim.workload` -- workloads: the seeded AI-cluster generator, SWF traces;
* `minislurm.sim.metrics` -- utilisation, waits, slowdown over accounting records;
* `minislurm.sim.plots` -- plotly figures of a schedule, one helper per chart.

No Slurm 22.05 counterpart: this is minislurm's own top layer, the one the
notebooks, the labs and the experiments use, over the same controller the
daemon runs.
"""

from __future__ import annotations

from minislurm.sim.cluster import Cluster

__all__ = ["Cluster"]
