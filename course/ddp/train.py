"""DDP training on gloo, wired only from what Slurm gives; checkpoint + exact resume.

Run it under ``srun`` (see ``course/ddp/job.sh``), under ``torchrun``, or with the
bare launcher::

    srun -N2 --ntasks-per-node=2 python -m course.ddp.train --steps 200
    torchrun --nproc_per_node=4 course/ddp/train.py --steps 200
    python -m course.ddp.launch_bare -n 4 -- python -m course.ddp.train

What it does, in order:

1. :func:`course.ddp.wiring.wiring_from_env` turns ``SLURM_PROCID``/``SLURM_NTASKS``/
   ``SLURM_LOCALID``/``SLURM_JOB_NODELIST``/``SLURM_JOB_ID`` (or torchrun's
   ``RANK``...) into rank, world size and rendezvous address;
   ``init_process_group("gloo", timeout=...)`` -- always with a timeout (the
   default is 30 minutes of hanging when a peer is gone).
2. Rank 0 looks for the newest *complete* checkpoint (``--checkpoint-dir``, default
   ``checkpoints/job-$SLURM_JOB_ID``, which a ``--requeue``-d job keeps) and
   broadcasts its step, so every rank loads the same file: model, optimizer
   state (momentum buffers) and step. ``SLURM_RESTART_COUNT`` > 0 (set by Slurm
   on a requeued job) without a checkpoint is reported and starts from step 0.
3. Each step trains on a batch that is a pure function of (seed, step, rank)
   (:mod:`course.ddp.model`); DistributedDataParallel averages the gradients
   (one bucket per parameter: :data:`PER_PARAMETER` says why a resume needs that);
   rank 0 logs the mean loss; every ``--checkpoint-every`` steps rank 0 writes a
   checkpoint atomically (:mod:`course.ddp.checkpoint`).
4. Rank 0 prints ``final step=N sha256=...`` (the parameters' digest) and, with
   ``--out``, saves the final tensors; two runs are equal bit for bit iff their
   digests are.

Start-up cost (torch 2.13, CPU): ``import torch`` (~2-3.5 s per process alone) and
``torch._dynamo``, which ``DistributedDataParallel.__init__`` imports unconditionally
(``torch._dynamo.utils.get_optimize_ddp_mode()``; ~2.5 s per process alone, pulls
in parts of ``torch._inductor``). Every ``torch.optim`` optimizer imports it too, in
its *constructor* (``Optimizer.add_param_group`` is wrapped by
``torch._disable_dynamo``), for SGD and Adam alike and whatever ``foreach`` is; after
DDP has paid for it the optimizer adds nothing. Nothing here calls
``torch.use_deterministic_algorithms`` (it would import ``torch._inductor``): the
CPU kernels used are deterministic, and equal runs are checked by digest.

Test hook: ``COURSE_DDP_TEST_PAUSE_IN_CHECKPOINT=<step>`` makes rank 0 stop half way
through writing that step's checkpoint, print ``checkpoint-paused ...`` and sleep
(until a test kills the job) -- in the first attempt only (``SLURM_RESTART_COUNT``
unset or 0), so that a requeued job, which keeps its environment, runs through.
``--step-time`` adds simulated compute per step so a learner has time to ``scancel``
or down a node mid-run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

if __package__ in (None, ""):  # run as a plain file: python course/ddp/train.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from course.ddp import checkpoint as ckpt
from course.ddp.logfmt import format_record
from course.ddp.model import MLP, batch, parameter_digest, teacher
from course.ddp.wiring import Wiring, WiringError, wiring_from_env

PAUSE_HOOK = "COURSE_DDP_TEST_PAUSE_IN_CHECKPOINT"
#: DDP's gradient bucket cap in MiB, 1 byte: every parameter gets its own bucket.
#: DDP re-buckets after its first iteration in the order gradients became ready,
#: and with more than 2 ranks the position of a value in a bucket decides the order
#: of the floating-point additions in gloo's ring all-reduce. A resumed run's first
#: iteration is step k+1, so with shared buckets it would round differently from an
#: uninterrupted run there (measured: 4 ranks diverge, 2 ranks do not). One bucket
#: per parameter makes every all-reduce independent of the bucket order.
PER_PARAMETER = 1 / 2**20
#: Hyper-parameters that must match for a checkpoint to be resumed.
RUN_KEYS = ("seed", "features", "hidden", "batch_size", "optimizer", "lr", "momentum")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The script's options (all have defaults; see ``--help``)."""
    p = argparse.ArgumentParser(prog="course.ddp.train", description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20, help="optimizer steps in total (20)")
    p.add_argument("--seed", type=int, default=0, help="seed of model, teacher and data (0)")
    p.add_argument("--checkpoint-dir", type=Path, default=None,
                   help="where checkpoints live (checkpoints/job-$SLURM_JOB_ID)")
    p.add_argument("--checkpoint-every", type=int, default=5, help="steps between checkpoints")
    p.add_argument("--keep", type=int, default=2, help="complete checkpoints to keep (2)")
    p.add_argument("--batch-size", type=int, default=32, help="samples per rank and step")
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (0.9)")
    p.add_argument("--step-time", type=float, default=0.0,
                   help="simulated compute per step, seconds (for the failure drill)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="init_process_group timeout, seconds (120)")
    p.add_argument("--out", type=Path, default=None, help="rank 0 saves final tensors here")
    p.add_argument("--log-ranks", choices=("0", "all"), default="0",
                   help="which ranks print the log records: rank 0 (default) or all")
    p.add_argument("--timing", action="store_true",
                   help="rank 0 logs 'timing phase=... age=...' (seconds since process start)")
    args = p.parse_args(argv)
    if args.steps < 0 or args.checkpoint_every < 1 or args.keep < 1:
        p.error("--steps must be >= 0, --checkpoint-every and --keep >= 1")
    return args


#: ``--log-ranks all``: every rank prints its records (lesson 4 reads each rank's log).
_LOG_ALL_RANKS = False


def _say(wiring: Wiring, kind: str | None, **fields: object) -> None:
    if wiring.rank == 0 or _LOG_ALL_RANKS:
        print(format_record(kind, **fields), flush=True)


def process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; 10 ms resolution)."""
    with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
        start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        return float(uptime.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")


def _timing(args: argparse.Namespace, wiring: Wiring, phase: str) -> None:
    if args.timing:
        _say(wiring, "timing", phase=phase, age=round(process_age(), 2))


def _run_config(args: argparse.Namespace, world_size: int) -> dict[str, Any]:
    config = {key: getattr(args, key) for key in RUN_KEYS}
    config["world_size"] = world_size
    return config


def _make_optimizer(args: argparse.Namespace, model: torch.nn.Module) -> torch.optim.Optimizer:
    # foreach=False: the per-parameter loop; with these few tensors it is as fast
    # and keeps the arithmetic identical whatever torch picks as default.
    if args.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=args.lr, foreach=False)
    return torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, foreach=False)


def _pause_in_write(step: int) -> Callable[[Path], None] | None:
    """The test hook's ``mid_write`` for step ``step`` (or ``None``)."""
    wanted = os.environ.get(PAUSE_HOOK, "")
    if wanted != str(step) or os.environ.get("SLURM_RESTART_COUNT", "0") not in ("", "0"):
        return None

    def pause(temp: Path) -> None:
        print(format_record("checkpoint-paused", step=step, temp=temp), flush=True)
        time.sleep(3600)

    return pause


def _agree_on_checkpoint(wiring: Wiring, directory: Path) -> int:
    """Rank 0 picks the newest complete checkpoint; every rank learns its step (-1: none)."""
    chosen = torch.tensor([-1], dtype=torch.int64)
    if wiring.rank == 0:
        found = ckpt.latest_checkpoint(directory)
        for path, reason in found.skipped if found else ():
            _say(wiring, "skipped", path=path, reason=reason.replace(" ", "_"))
        for temp in ckpt.remove_stale_temporaries(directory):
            _say(wiring, "removed", path=temp, why="torn_temporary")
        if found is not None:
            chosen[0] = found.step
    dist.broadcast(chosen, src=0)
    return int(chosen[0])


def train(args: argparse.Namespace, wiring: Wiring) -> str:
    """The training loop of one rank; returns the final parameter digest."""
    directory = args.checkpoint_dir or Path(
        "checkpoints", f"job-{wiring.job_id}" if wiring.job_id is not None else "run"
    )
    config = _run_config(args, wiring.world_size)
    model = MLP(args.features, args.hidden, args.seed)
    optimizer = _make_optimizer(args, model)
    step = 0
    resume_step = _agree_on_checkpoint(wiring, directory)
    if resume_step >= 0:
        state = ckpt.read_checkpoint(ckpt.checkpoint_path(directory, resume_step))
        if state["config"] != config:
            raise SystemExit(
                f"train: error: checkpoint {resume_step} in {directory} is from another run: "
                f"{state['config']} != {config}"
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step = int(state["step"])
        _say(wiring, "resume", step=step, path=ckpt.checkpoint_path(directory, step),
             restart_count=wiring.restart_count)
    elif wiring.restart_count > 0:
        _say(wiring, "note", restart_count=wiring.restart_count, checkpoint="none", step=0)
    # broadcasts rank 0's parameters; one gradient bucket per parameter (see PER_PARAMETER)
    ddp = DistributedDataParallel(model, bucket_cap_mb_list=cast(list[int], [PER_PARAMETER]))
    _timing(args, wiring, "ddp")
    weights = teacher(args.features, args.seed)
    loss_fn = torch.nn.MSELoss()
    while step < args.steps:
        step += 1
        x, y = batch(args.seed, step, wiring.rank, args.batch_size, weights)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()  # DDP all-reduces (averages) the gradients here
        optimizer.step()
        if args.step_time > 0:
            time.sleep(args.step_time)
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        _say(wiring, None, step=step, loss=float(mean) / wiring.world_size)
        if step % args.checkpoint_every == 0 and wiring.rank == 0:
            state = {"step": step, "model": model.state_dict(),
                     "optimizer": optimizer.state_dict(), "config": config}
            path = ckpt.write_checkpoint(directory, state, keep=args.keep,
                                         mid_write=_pause_in_write(step))
            _say(wiring, "checkpoint", step=step, path=path)
    _timing(args, wiring, "steps")
    digest = parameter_digest(model)
    if wiring.rank == 0 and args.out is not None:
        temp = args.out.with_name(f".{args.out.name}.tmp-{os.getpid()}")
        torch.save({"step": step, "sha256": digest, "params": model.state_dict()}, temp)
        os.replace(temp, args.out)
    _say(wiring, "final", step=step, sha256=digest)
    return digest


def main(argv: list[str] | None = None) -> int:
    """Entry point: wire, init gloo, train, tear down. Exit 0, 1 (runtime) or 2 (usage)."""
    global _LOG_ALL_RANKS
    args = parse_args(argv)
    _LOG_ALL_RANKS = args.log_ranks == "all"
    try:
        wiring = wiring_from_env(os.environ)
    except WiringError as exc:
        print(f"train: error: {exc}", file=sys.stderr)
        return 2
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    if wiring.single_host:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    _timing(args, wiring, "imports")
    _say(wiring, "start", rank=wiring.rank, world=wiring.world_size, launcher=wiring.launcher,
         master=f"{wiring.master_addr}:{wiring.master_port}", restart_count=wiring.restart_count)
    dist.init_process_group(
        backend="gloo",
        init_method=f"tcp://{wiring.master_addr}:{wiring.master_port}",
        rank=wiring.rank,
        world_size=wiring.world_size,
        timeout=timedelta(seconds=args.timeout),
    )
    _timing(args, wiring, "init_process_group")
    try:
        train(args, wiring)
        # Leave together: a rank tearing down its gloo pairs while a peer is still
        # finishing can abort that peer ("terminate called without an active exception").
        dist.barrier()
        _timing(args, wiring, "done")
    except (RuntimeError, ckpt.CheckpointError) as exc:  # a peer died, a timeout, a bad file
        print(f"train: error: rank {wiring.rank}: {exc}", file=sys.stderr)
        return 1
    finally:
        dist.destroy_process_group()
    return 0


def run_and_exit() -> None:
    """``sys.exit(main())`` minus the interpreter's finalization.

    In torch 2.13, c10d/gloo threads still alive while the interpreter shuts down
    occasionally ``std::terminate`` the process *after* a clean
    ``destroy_process_group()`` ("terminate called without an active exception",
    SIGABRT, no Python frame; seen in ~1 of 3 runs of 4 ranks under torchrun).
    Everything is written and flushed by then, so leave with ``os._exit``.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run_and_exit()
