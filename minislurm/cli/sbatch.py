"""``sbatch``: submit a batch script (src/sbatch/sbatch.c).

Options -> `minislurm.options.parse_sbatch` (client-side errors, exit 255) ->
the GRES names check (`minislurm.options.gres_names`, exit 1) ->
``Controller.submit`` (slurmctld's rejections, exit 1) -> ``Submitted batch job N``.
``--parsable`` prints only the id, ``--test-only`` asks when the job would start,
``--wait`` waits for the job and exits with its exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from minislurm.cli.common import Context, fail
from minislurm.cli.transport import run_command
from minislurm.common.rpc import unavailable
from minislurm.common.timespec import format_timestamp
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.options import SbatchInvocation
from minislurm.options.gres_names import check_command_gres
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.setters import InfoExit

if TYPE_CHECKING:
    from minislurm.ctld.controller import Controller

PROG = "sbatch"


def parse_invocation(argv: Sequence[str], ctx: Context) -> SbatchInvocation | int:
    """sbatch's options as ``ctx`` reads them (its env, stdin, directory and clock);
    an ``int`` is the exit code to return at once (``--help`` and the like: 0)."""
    try:
        return parse_sbatch(argv, env=ctx.env, stdin=ctx.stdin, cwd=ctx.cwd, now=ctx.now())
    except InfoExit as info:
        ctx.stdout.write(info.stdout)
        return 0
    except SlurmError as exc:
        return fail(ctx, exc)


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sbatch argv`` in ``ctx``; returns the exit code."""
    inv = parse_invocation(argv, ctx)
    if isinstance(inv, int):
        return inv
    opts = inv.options
    try:
        controller: Controller | None = ctx.controller()
    except ControllerUnavailable:
        controller = None
    # sbatch's own GRES check; in the controller's process, with its slurm.conf
    served = controller.config.gres_types if controller is not None else None
    try:
        check_command_gres(opts.gres, PROG, ctx.env, served)
    except SlurmError as exc:
        return fail(ctx, exc)
    if controller is None:
        return fail(ctx, unavailable(PROG, "Batch job submission failed"))
    for line in inv.warnings:
        ctx.err(line)
    try:
        if opts.test_only:
            return _test_only(inv, controller, ctx)
        job_id = controller.submit_invocation(
            inv, user=ctx.user, uid=ctx.uid, group=ctx.group, gid=ctx.gid, cwd=ctx.cwd,
            body=ctx.job_body(inv, ctx) if ctx.job_body else None,
        )
    except SlurmError as exc:
        return fail(ctx, exc)
    ctx.out(str(job_id) if opts.parsable else f"Submitted batch job {job_id}")
    if not opts.wait:
        return 0
    ctx.wait(lambda: controller.job(job_id).state.is_terminal)
    record = controller.job(job_id)
    # sbatch.c _job_wait: WEXITSTATUS if the script exited, otherwise 1
    return record.exit_code if record.signal == 0 else 1


def _test_only(inv: SbatchInvocation, controller: Controller, ctx: Context) -> int:
    """``--test-only``: slurm_job_will_run's answer, or its ``allocation failure:`` line."""
    try:
        est = controller.will_run(inv.options, name=inv.job_name, user=ctx.user,
                                  uid=ctx.uid, cwd=ctx.cwd, prog=PROG)
    except SlurmError as exc:
        lines = exc.message.splitlines()
        lead = f"{PROG}: error: Batch job submission failed: "
        if lines and lines[-1].startswith(lead):
            lines[-1] = "allocation failure: " + lines[-1][len(lead):]
        ctx.err("\n".join(lines))
        return exc.exit_code
    ctx.err(f"{PROG}: Job {est.job_id} to start at {format_timestamp(est.start_time)} "
            f"using {est.num_cpus} processors on nodes {est.nodelist} "
            f"in partition {est.partition}")
    return 0


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sbatch ...``."""
    return run_command(PROG, argv)
