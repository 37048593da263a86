"""The node daemon's side (slurmd / slurmstepd): environment and task launch.

* `minislurm.slurmd.context` -- what slurmd is told about a job and a step;
* `minislurm.slurmd.env` -- the batch step's and each srun task's environment;
* `minislurm.slurmd.gpu` -- gres/gpu's ``CUDA_VISIBLE_DEVICES`` & co.;
* `minislurm.slurmd.tasks` -- a task to start, a step's names, a task's end;
* `minislurm.slurmd.stdio` -- ``-o/-e/-i`` files, ``--open-mode``, ``srun -l`` labels;
* `minislurm.slurmd.execve` -- command lookup, ``execve`` and its error messages;
* `minislurm.slurmd.launch` -- a step's tasks as real local processes: start, signal, reap;
* `minislurm.slurmd.stepd` -- batch job / srun step from (job, allocation, step);
* `minislurm.slurmd.slurmstepd` -- the step daemon process of a batch job (outlives slurmctld);
* `minislurm.slurmd.stepd_handle` -- slurmd's handle on one: start, signal, wait, adopt;
* `minislurm.slurmd.spool` -- SlurmdSpoolDir records (launch, pid + start time, exit status);
* `minislurm.slurmd.process_runner` -- slurmd for the local daemon (the JobRunner seam).

Node daemons execute; they never decide (the controller does).
"""
