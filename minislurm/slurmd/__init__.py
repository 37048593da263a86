"""The node daemon's side (slurmd / slurmstepd): environment and task launch.

* `minislurm.slurmd.context` -- what slurmd is told about a job and a step;
* `minislurm.slurmd.env` -- the batch step's and each srun task's environment;
* `minislurm.slurmd.gpu` -- gres/gpu's ``CUDA_VISIBLE_DEVICES`` & co.;
* `minislurm.slurmd.tasks` -- a task to start, a step's names, a task's end;
* `minislurm.slurmd.stdio` -- ``-o/-e/-i`` files, ``--open-mode``, ``srun -l`` labels;
* `minislurm.slurmd.execve` -- command lookup, ``execve`` and its error messages;
* `minislurm.slurmd.launch` -- a step's tasks as real local processes: start, signal, reap;
* `minislurm.slurmd.stepd` -- batch job / srun step from (job, allocation, step).

Node daemons execute; they never decide (the controller does).
"""
