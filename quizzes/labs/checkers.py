"""Checkers: grade a `Trial` (what Slurm did) and name the difference in Slurm's terms.

Each checker reads only Slurm's records of the play (`quizzes.labs.runner`):
``scontrol show job`` fields of the job (partition, name, nodes, TRES, time
limit, StdOut, Requeue, ArrayTaskThrottle, Dependency), its ``sacct`` attempts
(states, exit codes, restarts), the environment of each task of its first
``srun`` step, and its fate under the lab's injected event.  Any spelling Slurm
treats the same therefore grades the same.  The first difference found is the
feedback (one thing to fix at a time); a job Slurm refused gets Slurm's own
error text.

Each sentence is a message of the ``quizzes`` gettext catalogue (`quizzes.i18n.M`,
`Verdict.said`): the learner reads it in their language, and Slurm's words (commands,
options, states, reasons, job ids, file names) are its arguments or stay in its
English bytes in every language; the gradebook keeps the English text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from minislurm.common.filenames import expand_pattern
from minislurm.common.timespec import format_time_limit_hms
from minislurm.job import JobRecord
from minislurm.states import JobState
from quizzes.i18n import M, Msg
from quizzes.labs.model import Verdict
from quizzes.labs.runner import SUBMITTED, JobFacts, Trial

Checker = Callable[[Trial], Verdict]


def _limit(minutes: int | None) -> str:
    """``TimeLimit=`` as scontrol prints it."""
    return format_time_limit_hms(minutes)


def _gpus(rec: JobRecord) -> int:
    return int(rec.tres_alloc.get("gres/gpu", 0)) if rec.tres_alloc else \
        (rec.allocation.num_gpus if rec.allocation else 0)


def _gpus_per_node(rec: JobRecord) -> tuple[int, ...]:
    return tuple(len(n.gpus) for n in rec.allocation.nodes) if rec.allocation else ()


def out_name(rec: JobRecord) -> str:
    """The StdOut file name (basename) slurmd opens for this job or array task."""
    path = expand_pattern(rec.std_out, job_id=rec.job_id, array_job_id=rec.array_job_id,
                          array_task_id=rec.array_task_id, job_name=rec.name, user=rec.user,
                          node=rec.batch_host or "")
    return os.path.basename(path)


def _miss(message: Msg, *, details: tuple[Msg, ...] = (), slurm: str = "") -> Verdict:
    """A failed check saying ``message`` (and Slurm's own words, ``slurm``)."""
    return Verdict.said(False, message, details, slurm)


def _pass(message: Msg) -> Verdict:
    return Verdict.said(True, message)


def _tasks(n: int) -> Msg:
    return M("{n} task", n=n) if n == 1 else M("{n} tasks", n=n)


def _nodes(n: int) -> Msg:
    return M("{n} node", n=n) if n == 1 else M("{n} nodes", n=n)


def _gpu_count(n: int) -> Msg:
    return M("{n} GPU", n=n) if n == 1 else M("{n} GPUs", n=n)


def summary(facts: JobFacts) -> Msg:
    """``your job ran 1 task on 1 node with 8 GPUs`` (from the first srun step and TRES)."""
    rec = facts.first or facts.final
    nodes = len(rec.allocation.nodes) if rec.allocation else rec.num_nodes
    tasks = len(facts.tasks) or rec.num_tasks
    return M("your job ran {tasks} on {nodes} with {gpus}", tasks=_tasks(tasks),
             nodes=_nodes(nodes), gpus=_gpu_count(_gpus(rec)))


def preflight(trial: Trial, *, jobs: int = 1) -> Verdict | None:
    """What stops grading before any job is read: a refused snippet, a refused job,
    too few jobs submitted."""
    if trial.refused:
        return _miss(M("The lab did not run this answer: {reason}",
                       reason=trial.said or trial.refused))
    for cmd in trial.errors:
        if cmd.argv[0] == "sbatch" and not SUBMITTED.match(cmd.stdout.strip()):
            return _miss(M("Slurm refused the job ({command}): fix what sbatch says, then "
                           "check again.", command=cmd.line), slurm=cmd.stderr or cmd.stdout)
    bad = [c for c in trial.errors if c.argv[0] != "sbatch"]
    if bad:
        return _miss(M("A command failed: {command}", command=bad[0].line),
                     slurm=bad[0].stderr)
    if len(trial.jobs) < jobs:
        got = len(trial.jobs)
        if got == 1:
            return _miss(M("{got} job submitted; this lab needs {jobs} (submit with sbatch).",
                           got=got, jobs=jobs))
        return _miss(M("{got} jobs submitted; this lab needs {jobs} (submit with sbatch).",
                       got=got, jobs=jobs))
    return None


def _no_srun(facts: JobFacts, command: str) -> Verdict | None:
    if facts.task_error:
        return _miss(M("srun could not start the job's first step inside the allocation."),
                     slurm=facts.task_error)
    if not facts.step_argv:
        return _miss(M("Your script starts no job step: run {command} through srun (a line "
                       "'srun ...'), so sacct shows it as step .0 and Slurm sets up its "
                       "tasks.", command=command))
    if command.split()[0] not in facts.step_argv:
        return _miss(M("The first srun step runs '{argv}', not {command}.",
                       argv=" ".join(facts.step_argv), command=command))
    return None


def _exit_code(rec: JobRecord) -> str:
    """``ExitCode=`` as scontrol and sacct print it: ``code:signal``."""
    return f"{rec.exit_code}:{rec.signal}"


def _never_ran(facts: JobFacts) -> Verdict:
    rec = facts.final
    return _miss(M("Job {job} never ran: it is {state} (Reason={reason}).", job=rec.job_id,
                   state=rec.state.value, reason=rec.reason.value))


def _started(trial: Trial, *, srun: str | None = None) -> tuple[JobFacts, JobRecord] | Verdict:
    """What every one-job lab checks first: the answer ran (`preflight`) and its job
    started, and, given ``srun``, its first step ran that command through srun; then the
    job's facts and the record of its first run."""
    stop = preflight(trial)
    if stop:
        return stop
    facts = trial.jobs[0]
    if facts.first is None:
        return _never_ran(facts)
    if srun is not None:
        no_step = _no_srun(facts, srun)
        if no_step:
            return no_step
    return facts, facts.first


def _queued(trial: Trial) -> tuple[JobFacts, JobRecord, int]:
    """The learner's job as the queue shows it after the scenario (its last record when it
    left the queue), with the GPUs it asks for (TRES ``gres/gpu``)."""
    facts = trial.jobs[0]
    mine = next((r for r in trial.queue if r.job_id == facts.job_id), facts.final)
    gpus = int(mine.tres_req.get("gres/gpu", 0)) if mine.tres_req else 0
    return facts, mine, gpus


# ---- the required labs ----------------------------------------------------------------

def check_first_job(trial: Trial) -> Verdict:
    """``first-job``: gpu, train, 1 node, 1 GPU, 30 minutes, train-<jobid>.out, srun."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    if rec.partition != "gpu":
        return _miss(M("Your job ran in Partition={partition}; the task asks for the gpu "
                       "partition (-p/--partition).", partition=rec.partition))
    if rec.name != "train":
        return _miss(M("JobName={name}; the task asks for the job name train "
                       "(-J/--job-name).", name=rec.name))
    nodes = len(rec.allocation.nodes) if rec.allocation else rec.num_nodes
    if nodes != 1:
        return _miss(M("{summary} (NumNodes={nodes}); the task asks for 1 node.",
                       summary=summary(facts), nodes=nodes))
    if _gpus(rec) != 1:
        return _miss(M("{summary} (TRES gres/gpu={gpus}); the task asks for 1 GPU "
                       "(--gres=gpu:1, --gpus=1, --gpus-per-node=1).", summary=summary(facts),
                       gpus=_gpus(rec)))
    if rec.time_limit != 30:
        if facts.options.time_limit is None:
            return _miss(M("TimeLimit={limit} (the partition's DefaultTime: you set none); "
                           "the task asks for 30 minutes (-t/--time).",
                           limit=_limit(rec.time_limit)))
        return _miss(M("TimeLimit={limit}; the task asks for 30 minutes (-t/--time).",
                       limit=_limit(rec.time_limit)))
    want = f"train-{rec.job_id}.out"
    got = out_name(rec)
    if got != want:
        return _miss(M("StdOut={got}; the task asks for {want}: train- then the job id "
                       "(-o/--output with the %j pattern).", got=got, want=want))
    stop = _no_srun(facts, "python train.py")
    if stop:
        return stop
    if "train.py" not in facts.step_argv:
        return _miss(M("The first srun step runs '{argv}'; the task runs python train.py.",
                       argv=" ".join(facts.step_argv)))
    if facts.final.state is not JobState.COMPLETED:
        return _miss(M("The job ended {state} (ExitCode={exit_code}).",
                       state=facts.final.state.value, exit_code=_exit_code(facts.final)))
    return _pass(M("Job {job} ran train.py through srun on 1 node with 1 GPU in partition "
                   "gpu for at most 30 minutes, writing {want}.", job=rec.job_id, want=want))


def check_ddp_2x4(trial: Trial) -> Verdict:
    """``ddp-2x4``: 2 nodes x 4 GPUs, one task per GPU, ranks 0-7, one MASTER_ADDR."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    nodes = len(rec.allocation.nodes) if rec.allocation else 0
    per_node = _gpus_per_node(rec)
    if nodes != 2:
        return _miss(M("{summary}; the task asks for 2 nodes (-N/--nodes=2).",
                       summary=summary(facts)))
    if set(per_node) != {4}:
        return _miss(M("{summary} ({split} per node); the task asks for 4 GPUs on each node "
                       "(--gres=gpu:4, --gpus-per-node=4, or --gpus-per-task=1 with 4 tasks "
                       "per node).", summary=summary(facts),
                       split=" + ".join(map(str, per_node))))
    return _check_ranks(facts, nodes=2, per_node=4)


def _check_ranks(facts: JobFacts, *, nodes: int, per_node: int) -> Verdict:
    tasks = facts.tasks
    world = nodes * per_node
    if len(tasks) != world:
        return _miss(M("{summary}; the task asks for {world} ranks, one per GPU: {per_node} "
                       "tasks on each node (--ntasks-per-node={per_node} or -n {world}).",
                       summary=summary(facts), world=world, per_node=per_node))
    by_node: dict[str, list[int]] = {}
    for t in tasks:
        by_node.setdefault(t.node, []).append(t.task)
    if sorted(len(v) for v in by_node.values()) != [per_node] * nodes:
        spread = ", ".join(f"{n}: {len(v)}" for n, v in sorted(by_node.items()))
        return _miss(M("The {world} tasks are spread {spread}; the task asks for {per_node} on "
                       "each node (--ntasks-per-node={per_node}).", world=world, spread=spread,
                       per_node=per_node))
    for t in tasks:
        seen = t.get("CUDA_VISIBLE_DEVICES")
        if seen == "(unset)" or len(seen.split(",")) != 1:
            return _miss(M("Task {task} (SLURM_PROCID={task}, node {node}) sees "
                           "CUDA_VISIBLE_DEVICES={seen}; each task should see exactly one GPU: "
                           "bind one GPU per task (--gpus-per-task=1, or srun "
                           "--gpu-bind=single:1 with --gres=gpu:4).", task=t.task, node=t.node,
                           seen=seen),
                         details=tuple(M("task {task} on {node}: CUDA_VISIBLE_DEVICES={seen}",
                                         task=x.task, node=x.node,
                                         seen=x.get("CUDA_VISIBLE_DEVICES")) for x in tasks))
    ranks = sorted(int(t.get("RANK", "-1")) for t in tasks)
    if ranks != list(range(world)):
        return _miss(M("RANK values are {ranks}; they should be 0-{last}.", ranks=str(ranks),
                       last=world - 1))
    for node, _ids in by_node.items():
        local = sorted(int(t.get("LOCAL_RANK", "-1")) for t in tasks if t.node == node)
        if local != list(range(per_node)):
            return _miss(M("On {node} LOCAL_RANK (SLURM_LOCALID) is {local}; it should be "
                           "0-{last} on each node.", node=node, local=str(local),
                           last=per_node - 1))
    gpus = {(t.node, t.get("CUDA_VISIBLE_DEVICES")) for t in tasks}
    if len(gpus) != world:
        return _miss(M("Two tasks on one node see the same GPU; each rank needs its own "
                       "(--gpus-per-task=1)."))
    masters = {t.get("MASTER_ADDR") for t in tasks}
    if len(masters) != 1:
        return _miss(M("The ranks disagree on MASTER_ADDR ({masters}).",
                       masters=str(sorted(masters))))
    sizes = {t.get("WORLD_SIZE") for t in tasks}
    if sizes != {str(world)}:
        return _miss(M("WORLD_SIZE (SLURM_NTASKS) is {sizes}; it should be {world}.",
                       sizes=str(sorted(sizes)), world=world))
    return _pass(M("{summary}: ranks 0-{last}, LOCAL_RANK 0-{last_local} on each node, one "
                   "GPU per task, MASTER_ADDR={master} for all.", summary=summary(facts),
                   last=world - 1, last_local=per_node - 1, master=masters.pop()))


def _numbers(name: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", name)]


def _max_running(records: tuple[JobRecord, ...]) -> int:
    events: list[tuple[int, int]] = []
    for r in records:
        if r.start_time is not None and r.end_time is not None and r.end_time > r.start_time:
            events += [(r.start_time, 1), (r.end_time, -1)]
    best = cur = 0
    for _, d in sorted(events):
        cur += d
        best = max(best, cur)
    return best


def check_sweep_array(trial: Trial) -> Verdict:
    """``sweep-array``: 16 tasks, at most 4 at once, 1 GPU each, %A_%a output files."""
    stop = preflight(trial)
    if stop:
        return stop
    facts = trial.jobs[0]
    rec = facts.final
    if rec.array_job_id is None and not facts.options.array:
        return _miss(M("Your job is not a job array (ArrayJobId is unset); the sweep is 16 "
                       "array tasks (-a/--array)."))
    array_id = rec.array_job_id or rec.job_id
    tasks = tuple(r for r in facts.attempts if r.array_job_id == array_id
                  and r.array_task_id is not None)
    ids = sorted({r.array_task_id for r in tasks if r.array_task_id is not None})
    if len(ids) != 16:
        return _miss(M("The array has {n} tasks (ArrayTaskId {first}..{last}); the sweep has "
                       "16.", n=len(ids), first=ids[0] if ids else "-",
                       last=ids[-1] if ids else "-"))
    throttle = rec.array_max_tasks
    if not throttle:
        return _miss(M("No ArrayTaskThrottle: up to {n} tasks ran at once; the task allows at "
                       "most 4 (--array=...%4).", n=_max_running(tasks)))
    if throttle != 4:
        return _miss(M("ArrayTaskThrottle={throttle}; the task asks for at most 4 running at "
                       "once.", throttle=throttle))
    gpus = sorted({_gpus(r) for r in tasks})
    if gpus != [1]:
        return _miss(M("Array tasks got {gpus} GPUs (TRES gres/gpu); each task needs 1.",
                       gpus="/".join(map(str, gpus))))
    names = {out_name(r): r for r in tasks}
    if len(names) != len(tasks):
        shared = sorted(names)[0]
        return _miss(M("The tasks share output files (StdOut={shared}): each would overwrite "
                       "the others'. Name the file with the array job id and the task id (%A "
                       "and %a).", shared=shared))
    for name, r in sorted(names.items(), key=lambda kv: kv[1].array_task_id or 0):
        nums = _numbers(name)
        if array_id not in nums or r.array_task_id not in nums:
            return _miss(M("Task {task} writes {name}; the name should hold the array job id "
                           "{array} and the task id {task} (%A and %a; %j is each task's own "
                           "job id).", task=r.array_task_id, name=name, array=array_id))
    bad = [r for r in tasks if r.state is not JobState.COMPLETED]
    if bad:
        return _miss(M("Array task {task} ended {state}.", task=bad[0].array_task_id,
                       state=bad[0].state.value))
    return _pass(M("16 array tasks of job {array}, at most {n} at once "
                   "(ArrayTaskThrottle=4), 1 GPU each, one output file per task ({name}, ...).",
                   array=array_id, n=_max_running(tasks), name=out_name(tasks[0])))


def check_survive(trial: Trial) -> Verdict:
    """``survive-node-failure``: requeued on NODE_FAIL, --open-mode=append, --signal >= 120 s."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, first = started
    after = facts.after_event
    if after is None:
        return _miss(M("The job ended ({state}) before the lab failed its node; it should "
                       "still be training then (its time limit and run time must cover at "
                       "least 10 minutes).", state=facts.final.state.value))
    node = _first_node(first)
    if after.state.is_terminal:
        return _miss(M("When {node} failed the job ended {state} (Requeue={requeue}): Slurm "
                       "did not requeue it. A job that must survive asks for --requeue.",
                       node=node, state=after.state.value, requeue=int(after.requeue)))
    if after.restart_count < 1:
        return _miss(M("After {node} failed the job is {state} with Restarts={restarts}; it "
                       "should be requeued.", node=node, state=after.state.value,
                       restarts=after.restart_count))
    mode = facts.options.open_mode
    if mode != "append":
        return _miss(M("Requeued (Restarts={restarts}), but its output is opened with "
                       "--open-mode={mode}: the restart would truncate {out}; append to it.",
                       restarts=after.restart_count, mode=_open_mode(mode),
                       out=out_name(after)))
    spec = facts.final.signal_spec
    match = re.fullmatch(r"(\d+)@(\d+)", spec or "")
    if match is None:
        return _miss(M("No warning signal: at its TimeLimit the job only gets SIGTERM and, "
                       "KillWait=30 s later, SIGKILL; ask Slurm for a signal before the limit "
                       "(--signal) so the job can checkpoint."))
    before = int(match.group(2))
    if before < 120:
        return _miss(M("The warning signal comes {before} s before the time limit; the task "
                       "needs at least 2 minutes (120 s) to checkpoint.", before=before))
    if facts.final.time_limit is not None and before >= facts.final.time_limit * 60:
        return _miss(M("The signal is asked {before} s before a TimeLimit of {limit}: it "
                       "would come at once.", before=before,
                       limit=_limit(facts.final.time_limit)))
    if facts.final.restart_count < 1:
        return _miss(M("The job was not restarted after the failure."))
    return _pass(M("When {node} failed job {job} was requeued (Restarts={restarts}, final "
                   "state {state}), appends to {out}, and gets signal {signal} {before} s "
                   "before its time limit.", node=node, job=facts.job_id,
                   restarts=facts.final.restart_count, state=facts.final.state.value,
                   out=out_name(facts.final), signal=match.group(1), before=before))


def _first_node(rec: JobRecord) -> str | Msg:
    """The name of the job's first node (``its node`` when it has no allocation)."""
    return rec.allocation.nodes[0].node if rec.allocation else M("its node")


def _open_mode(mode: str | None) -> str | Msg:
    """``--open-mode``'s value as asked, or ``truncate (the default)``."""
    return mode or M("truncate (the default)")


def check_survive_preemption(trial: Trial) -> Verdict:
    """``survive-preemption``: a scavenger job that preempt/qos requeues (sacct: a PREEMPTED
    attempt, then a new one that completes), Requeue=1, ``--open-mode=append``."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, first = started
    if first.qos != "scavenger":
        return _miss(M("Your job ran in QOS {qos}; the urgent job's QOS high may preempt only "
                       "QOS scavenger (Preempt=scavenger), so it waited for your job instead. "
                       "The task is a free scavenger job: ask for that QOS.", qos=first.qos))
    after = facts.after_event
    if after is None:
        return _miss(M("The job ended ({state}) before the urgent job came; it should still be "
                       "training 10 minutes after it starts (its time limit and run time must "
                       "cover that).", state=facts.final.state.value))
    node = _first_node(first)
    if after.state.is_terminal:
        return _miss(M("When the urgent job needed {node} your job ended {state} "
                       "(Requeue={requeue}): a job that cannot be requeued is cancelled by "
                       "preemption, even under PreemptMode=REQUEUE. Do not turn requeueing "
                       "off (--no-requeue).", node=node, state=after.state.value,
                       requeue=int(after.requeue)))
    if after.restart_count < 1:
        return _miss(M("After the urgent job came your job is {state} with "
                       "Restarts={restarts}; it was not preempted.", state=after.state.value,
                       restarts=after.restart_count))
    mode = facts.options.open_mode
    if mode != "append":
        return _miss(M("Preempted and requeued (Restarts={restarts}), but its output is "
                       "opened with --open-mode={mode}: the next attempt would truncate {out} "
                       "and lose what the first one wrote; append to it.",
                       restarts=after.restart_count, mode=_open_mode(mode),
                       out=out_name(after)))
    runs = sorted((a for a in facts.attempts if a.job_id == facts.job_id),
                  key=lambda a: a.start_time or 0)
    states = [a.state.value for a in runs]
    if "PREEMPTED" not in states or states[-1] != "COMPLETED" \
            or states.index("PREEMPTED") == len(states) - 1:
        return _miss(M("sacct shows the attempts {states}; after PREEMPTED the new attempt "
                       "should run to COMPLETED (its time limit, TimeLimit={limit}, must cover "
                       "the whole training run).", states=", ".join(states),
                       limit=_limit(facts.final.time_limit)))
    return _pass(M("Job {job} (QOS scavenger, Requeue={requeue}) was PREEMPTED on {node} by "
                   "the urgent job, requeued and run again to {state} (Restarts={restarts}), "
                   "appending to {out}.", job=facts.job_id, requeue=int(facts.final.requeue),
                   node=node, state=states[-1], restarts=facts.final.restart_count,
                   out=out_name(facts.final)))


def check_after_preprocess(trial: Trial) -> Verdict:
    """``after-preprocess``: train starts after preprocess succeeds, never if it fails."""
    stop = preflight(trial, jobs=2)
    if stop:
        return stop
    pre, train = trial.job("preprocess"), trial.job("train")
    if pre is None or train is None:
        names = ", ".join(j.final.name for j in trial.jobs)
        return _miss(M("Submitted jobs: {names}; submit preprocess.sh and train.sh (their "
                       "#SBATCH lines name them preprocess and train).", names=names))
    if pre.job_id > train.job_id:
        return _miss(M("train was submitted before preprocess; submit preprocess first and "
                       "capture its job id (sbatch --parsable)."))
    dep = train.options.dependency or ""
    if not dep:
        return _miss(M("train (job {job}) has Dependency=(null): it started at once, beside "
                       "preprocess. Make it depend on the preprocessing job "
                       "(-d/--dependency).", job=train.job_id))
    if str(pre.job_id) not in _numbers_str(dep):
        return _miss(M("train's dependency is {dependency}, but preprocess is job {job}: "
                       "capture the id sbatch --parsable prints in a variable and use it.",
                       dependency=dep, job=pre.job_id))
    if pre.final.state is not JobState.COMPLETED or train.first is None:
        return _miss(M("preprocess ended {state} and train is {train_state} "
                       "(Reason={reason}).", state=pre.final.state.value,
                       train_state=train.final.state.value, reason=train.final.reason.value))
    pre_end = pre.final.end_time or 0
    if (train.first.start_time or 0) < pre_end:
        return _miss(M("train started before preprocess ended (dependency {dependency}).",
                       dependency=dep))
    alt = trial.alternate
    if alt is not None:
        apre, atrain = alt.job("preprocess"), alt.job("train")
        if apre is not None and atrain is not None and atrain.first is not None:
            return _miss(M("When preprocess fails ({state}, ExitCode={exit_code}) train still "
                           "runs: with {dependency} it waits for the end, not for success. "
                           "Only a successful end should start it (afterok).",
                           state=apre.final.state.value, exit_code=_exit_code(apre.final),
                           dependency=atrain.options.dependency))
    return _pass(M("train (job {job}) started at the end of preprocess (job {pre}, COMPLETED) "
                   "with Dependency={dependency}; when preprocess fails it never starts "
                   "(DependencyNeverSatisfied).", job=train.job_id, pre=pre.job_id,
                   dependency=dep))


def _numbers_str(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def check_cpu_preprocess(trial: Trial) -> Verdict:
    """``cpu-preprocess``: cpu, prep, 1 task x 8 CPUs, 32 GB, 2 h, .out and .err files."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    if rec.partition != "cpu":
        return _miss(M("Partition={partition}; the task asks for cpu.", partition=rec.partition))
    if rec.name != "prep":
        return _miss(M("JobName={name}; the task asks for prep.", name=rec.name))
    stop = _no_srun(facts, "python preprocess.py")
    if stop:
        return stop
    if len(facts.tasks) != 1:
        return _miss(M("The srun step ran {n} tasks; the task asks for one task.",
                       n=len(facts.tasks)))
    if rec.cpus_per_task != 8 or rec.num_cpus != 8:
        return _miss(M("NumCPUs={cpus} CPUs/Task={per_task}; the task asks for one task with 8 "
                       "CPUs (the CPUs belong to the task, so srun gives them to it).",
                       cpus=rec.num_cpus, per_task=rec.cpus_per_task))
    mem = int(rec.tres_alloc.get("mem", 0)) if rec.tres_alloc else 0
    if mem != 32 * 1024:
        return _miss(M("TRES mem={mem}M; the task asks for 32 GB for the job (32768M), per "
                       "node or per CPU.", mem=mem))
    if rec.time_limit != 120:
        return _miss(M("TimeLimit={limit}; the task asks for 2 hours.",
                       limit=_limit(rec.time_limit)))
    want_out, want_err = f"prep-{rec.job_id}.out", f"prep-{rec.job_id}.err"
    got_out = out_name(rec)
    got_err = os.path.basename(expand_pattern(rec.std_err, job_id=rec.job_id,
                                              job_name=rec.name, user=rec.user))
    if got_out != want_out:
        return _miss(M("StdOut={got}; the task asks for {want}.", got=got_out, want=want_out))
    if got_err != want_err:
        return _miss(M("StdErr={got}; the task asks for {want} (standard error goes to StdOut "
                       "unless it has its own file).", got=got_err, want=want_err))
    return _pass(M("Job {job} ran 1 task with 8 CPUs and 32768M in partition cpu for at most "
                   "2 hours, writing {out} and {err}.", job=rec.job_id, out=want_out,
                   err=want_err))


def check_four_gpus(trial: Trial) -> Verdict:
    """``four-gpus``: 1 node, 4 GPUs, 32 CPUs, one task seeing the four GPUs."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    nodes = len(rec.allocation.nodes) if rec.allocation else 0
    if nodes != 1 or _gpus(rec) != 4:
        return _miss(M("{summary}; the task asks for 4 GPUs on 1 node.",
                       summary=summary(facts)))
    if rec.num_cpus != 32:
        return _miss(M("NumCPUs={cpus}; the task asks for 8 CPUs per GPU, 32 in all.",
                       cpus=rec.num_cpus))
    if len(facts.tasks) != 1:
        return _miss(M("{summary}; the task asks for a single task.", summary=summary(facts)))
    seen = facts.tasks[0].get("CUDA_VISIBLE_DEVICES")
    if len(seen.split(",")) != 4:
        return _miss(M("The task sees CUDA_VISIBLE_DEVICES={seen}; it should see all four GPUs "
                       "of the job.", seen=seen))
    return _pass(M("One task on {nodes} with 32 CPUs sees CUDA_VISIBLE_DEVICES={seen}.",
                   nodes=rec.nodelist, seen=seen))


def check_ddp_drill(trial: Trial) -> Verdict:
    """``ddp-drill`` (practice): 1 node, 2 tasks, one GPU each."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, first = started
    nodes = len(first.allocation.nodes) if first.allocation else 0
    if nodes != 1:
        return _miss(M("{summary}; the drill runs on 1 node.", summary=summary(facts)))
    return _check_ranks(facts, nodes=1, per_node=2)


def check_qos_eval(trial: Trial) -> Verdict:
    """``qos-eval``: QOS debug, 2 GPUs, 30 min, first in the pending queue, no QOS hold."""
    stop = preflight(trial)
    if stop:
        return stop
    facts, mine, gpus = _queued(trial)
    if gpus != 2:
        return _miss(M("Your job asks for {gpus} GPUs (TRES gres/gpu); the evaluation needs 2.",
                       gpus=gpus))
    if mine.time_limit != 30:
        return _miss(M("TimeLimit={limit}; the task asks for 30 minutes.",
                       limit=_limit(mine.time_limit)))
    if mine.state is JobState.PENDING and mine.reason.value.startswith("QOS"):
        return _miss(M("Your job is held by its QOS: Reason={reason} (QOS={qos}).",
                       reason=mine.reason.value, qos=mine.qos))
    others = [r for r in trial.queue if r.state is JobState.PENDING
              and r.job_id != facts.job_id]
    top = max(others, key=lambda r: r.priority, default=None)
    if top is not None and mine.priority <= top.priority:
        return _miss(M("Priority={priority} (QOS={qos}) is not above job {job} ({name}, "
                       "Priority={top}): yours would start after it. Compare the factors "
                       "with sprio.", priority=mine.priority, qos=mine.qos, job=top.job_id,
                       name=top.name, top=top.priority))
    first = facts.first
    if first is None:
        return _never_ran(facts)
    stop = _no_srun(facts, "python eval.py")
    if stop:
        return stop
    waited = (first.start_time or trial.start) - trial.start
    return _pass(M("Priority={priority} with QOS={qos}: first of the pending jobs; it started "
                   "{waited} s after submission.", priority=mine.priority, qos=mine.qos,
                   waited=waited))


def check_backfill_fit(trial: Trial) -> Verdict:
    """``backfill-fit``: 1 node x 8 GPUs, >= 20 min limit, started now by backfill."""
    stop = preflight(trial)
    if stop:
        return stop
    facts, mine, gpus = _queued(trial)
    nodes = mine.num_nodes
    if nodes != 1 or gpus != 8:
        return _miss(M("Your job asks for {nodes} node(s) and {gpus} GPUs; the task needs one "
                       "node with 8 GPUs.", nodes=nodes, gpus=gpus))
    if mine.time_limit is not None and mine.time_limit < 20:
        return _miss(M("TimeLimit={limit} is shorter than the 20 minutes train.py needs: it "
                       "would end TIMEOUT.", limit=_limit(mine.time_limit)))
    first = facts.first
    big = next((r for r in trial.queue if r.name == "big"), None)
    if first is None or (first.start_time or 0) - trial.start > 120:
        when = M("never") if first is None else \
            M("{minutes} minutes later", minutes=((first.start_time or 0) - trial.start) // 60)
        limit = _limit(mine.time_limit)
        if big is not None and big.start_time:
            return _miss(M("Your job started {when}: with TimeLimit={limit} it would still "
                           "hold gpu04 when big must start (job big's planned StartTime is "
                           "{minutes} minutes away), so backfill may not start it now.",
                           when=when, limit=limit,
                           minutes=(big.start_time - trial.start) // 60))
        return _miss(M("Your job started {when}: with TimeLimit={limit} it would still hold "
                       "gpu04 when big must start, so backfill may not start it now.",
                       when=when, limit=limit))
    stop = _no_srun(facts, "python train.py")
    if stop:
        return stop
    return _pass(M("Started at once on {nodes} by the {scheduler} scheduler: "
                   "TimeLimit={limit} ends before big's reserved start.", nodes=first.nodelist,
                   scheduler=first.scheduler, limit=_limit(first.time_limit)))


CHECKERS: dict[str, Checker] = {
    "first_job": check_first_job,
    "ddp_2x4": check_ddp_2x4,
    "sweep_array": check_sweep_array,
    "survive": check_survive,
    "survive_preemption": check_survive_preemption,
    "after_preprocess": check_after_preprocess,
    "cpu_preprocess": check_cpu_preprocess,
    "four_gpus": check_four_gpus,
    "ddp_drill": check_ddp_drill,
    "qos_eval": check_qos_eval,
    "backfill_fit": check_backfill_fit,
}
