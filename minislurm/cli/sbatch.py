"""``sbatch``: submit a batch script (src/sbatch/sbatch.c).

Options -> `minislurm.options.parse_sbatch` (client-side errors, exit 255) ->
``Controller.submit`` (slurmctld's rejections, exit 1) -> ``Submitted batch job N``.
``--parsable`` prints only the id, ``--test-only`` asks when the job would start,
``--wait`` waits for the job and exits with its exit code.
"""

from __future__ import annotations

from collections.abc import Sequence

from minislurm.cli.common import Context, fail
from minislurm.cli.transport import run_command
from minislurm.errors import ControllerUnavailable, SlurmError
from minislurm.options.sbatch import parse_sbatch
from minislurm.options.setters import InfoExit
from minislurm.rpc import unavailable
from minislurm.timespec import format_timestamp

PROG = "sbatch"


def run(argv: Sequence[str], ctx: Context) -> int:
    """Run ``sbatch argv`` in ``ctx``; returns the exit code."""
    try:
        inv = parse_sbatch(argv, env=ctx.env, stdin=ctx.stdin, cwd=ctx.cwd)
    except InfoExit as info:
        ctx.stdout.write(info.stdout)
        return 0
    except SlurmError as exc:
        return fail(ctx, exc)
    try:
        controller = ctx.controller()
    except ControllerUnavailable:
        return fail(ctx, unavailable(PROG, "Batch job submission failed"))
    opts = inv.options
    try:
        if opts.test_only:
            est = controller.will_run(inv.options, name=inv.job_name, user=ctx.user,
                                      uid=ctx.uid, cwd=ctx.cwd)
            ctx.err(f"{PROG}: Job {est.job_id} to start at {format_timestamp(est.start_time)} "
                    f"using {est.num_cpus} processors on nodes {est.nodelist} "
                    f"in partition {est.partition}")
            return 0
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


def main(argv: Sequence[str]) -> int:
    """``python -m minislurm sbatch ...``."""
    return run_command(PROG, argv)
