"""The course's DDP example: PyTorch DistributedDataParallel on gloo, wired only
from the ``SLURM_*`` variables ``srun`` gives every task, with atomic checkpoints
and a resume that is bit-identical to an uninterrupted run.

Modules: :mod:`~course.ddp.wiring` (rank, world, rendezvous from the environment),
:mod:`~course.ddp.checkpoint` (atomic write, validated read),
:mod:`~course.ddp.model` (MLP, synthetic data, parameter digest),
:mod:`~course.ddp.logfmt` (the log's record format), :mod:`~course.ddp.train`
(the script), :mod:`~course.ddp.launch_bare` (a launcher without Slurm);
``job.sh`` is the batch script. Importing this package does not import torch.
"""
