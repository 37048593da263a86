#!/bin/bash
# The course's DDP example as a Slurm batch job (runs unmodified under real Slurm
# 22.05 and under minislurm). Submit from the repository (or any directory where
# `python -m course.ddp.train` imports):
#
#     sbatch course/ddp/job.sh                  # 2 nodes x 2 tasks = 4 gloo ranks
#     sbatch -N1 --ntasks-per-node=2 course/ddp/job.sh --steps 50   # overrides
#
# Every task reads its rank from SLURM_PROCID, the world size from SLURM_NTASKS,
# its local rank from SLURM_LOCALID, MASTER_ADDR from the first host of the
# step's SLURM_STEP_NODELIST and MASTER_PORT from SLURM_JOB_ID and SLURM_STEP_ID
# (course/ddp/wiring.py: concurrent `srun --exact` steps get different ports):
# no torchrun. --requeue: when a node fails (or `scontrol requeue`), Slurm puts
# the job back in the queue with the same job id and SLURM_RESTART_COUNT=1, 2, ...;
# the script then resumes from checkpoints/job-$SLURM_JOB_ID (which must be on a
# file system every node sees). --gres=gpu:2 is what an AI cluster job asks for;
# this CPU example trains on gloo and leaves the (possibly fake) GPUs alone.
#
#SBATCH -J ddp-mlp
#SBATCH -N 2 --ntasks-per-node=2 --gres=gpu:2 --requeue
#SBATCH --time=00:10:00
#SBATCH -o slurm-%j.out
#SBATCH --open-mode=append

set -eu

# One thread per rank (torch would start one per core and the ranks would fight).
export OMP_NUM_THREADS="${SLURM_CPUS_PER_TASK:-1}"

echo "job ${SLURM_JOB_ID} on ${SLURM_JOB_NODELIST} restart_count=${SLURM_RESTART_COUNT:-0}"

# --kill-on-bad-exit: one dead rank ends the step at once instead of leaving the
# others blocked in an all-reduce until the process-group timeout.
srun --kill-on-bad-exit=1 "${PYTHON:-python}" -m course.ddp.train \
    --checkpoint-dir "${CHECKPOINT_DIR:-checkpoints/job-${SLURM_JOB_ID}}" "$@"
