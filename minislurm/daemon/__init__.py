"""minislurm as daemons on the wall clock, like Slurm's ``src/slurmctld`` main loop.

* `minislurm.daemon.slurmctld` -- ``python -m minislurm slurmctld``: the controller
  daemon (the same `minislurm.ctld.Controller` as the notebooks' cluster), serving
  the commands over `minislurm.common.rpc`, with `minislurm.slurmd` as node daemons;
* `minislurm.daemon.step_service` -- srun's and salloc's step RPCs (proc_req.c),
  launching through `minislurm.slurmd`;
* `minislurm.daemon.realtime` -- the second clock: one SimPy environment driven
  by ``time.time()``.

The package imports none of them itself: ``import minislurm.daemon`` costs nothing.
"""
