"""The Slurm commands (sbatch, srun, squeue, sinfo, scancel, scontrol, sacct, ...).

One module per command. Each command is: options -> request to the controller ->
formatting of records (the pure formatters live in ``minislurm.cli.format``).
"""
