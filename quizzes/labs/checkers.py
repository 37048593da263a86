"""Checkers: grade a `Trial` (what Slurm did) and name the difference in Slurm's terms.

Each checker reads only Slurm's records of the play (`quizzes.labs.runner`):
``scontrol show job`` fields of the job (partition, name, nodes, TRES, time
limit, StdOut, Requeue, ArrayTaskThrottle, Dependency), its ``sacct`` attempts
(states, exit codes, restarts), the environment of each task of its first
``srun`` step, and its fate under the lab's injected event.  Any spelling Slurm
treats the same therefore grades the same.  The first difference found is the
feedback (one thing to fix at a time); a job Slurm refused gets Slurm's own
error text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from minislurm.common.filenames import expand_pattern
from minislurm.common.timespec import format_time_limit_hms
from minislurm.job import JobRecord
from minislurm.states import JobState
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


def summary(facts: JobFacts) -> str:
    """``your job ran 1 task on 1 node with 8 GPUs`` (from the first srun step and TRES)."""
    rec = facts.first or facts.final
    nodes = len(rec.allocation.nodes) if rec.allocation else rec.num_nodes
    tasks = len(facts.tasks) or rec.num_tasks
    gpus = _gpus(rec)
    return (f"your job ran {tasks} task{'s' * (tasks != 1)} on {nodes} node"
            f"{'s' * (nodes != 1)} with {gpus} GPU{'s' * (gpus != 1)}")


def preflight(trial: Trial, *, jobs: int = 1) -> Verdict | None:
    """What stops grading before any job is read: a refused snippet, a refused job,
    too few jobs submitted."""
    if trial.refused:
        return Verdict(False, "The lab did not run this answer: " + trial.refused)
    for cmd in trial.errors:
        if cmd.argv[0] == "sbatch" and not SUBMITTED.match(cmd.stdout.strip()):
            return Verdict(False, f"Slurm refused the job ({cmd.line}): fix what sbatch "
                                  "says, then check again.", slurm=cmd.stderr or cmd.stdout)
    bad = [c for c in trial.errors if c.argv[0] != "sbatch"]
    if bad:
        return Verdict(False, f"A command failed: {bad[0].line}", slurm=bad[0].stderr)
    if len(trial.jobs) < jobs:
        got = len(trial.jobs)
        return Verdict(False, f"{got} job{'s' * (got != 1)} submitted; this lab needs "
                              f"{jobs} (submit with sbatch).")
    return None


def _no_srun(facts: JobFacts, command: str) -> Verdict | None:
    if facts.task_error:
        return Verdict(False, "srun could not start the job's first step inside the "
                              "allocation.", slurm=facts.task_error)
    if not facts.step_argv:
        return Verdict(False, f"Your script starts no job step: run {command} through srun "
                              "(a line 'srun ...'), so sacct shows it as step .0 and Slurm "
                              "sets up its tasks.")
    if command.split()[0] not in facts.step_argv:
        return Verdict(False, f"The first srun step runs '{' '.join(facts.step_argv)}', not "
                              f"{command}.")
    return None


def _never_ran(facts: JobFacts) -> Verdict:
    rec = facts.final
    return Verdict(False, f"Job {rec.job_id} never ran: it is {rec.state.value} "
                          f"(Reason={rec.reason.value}).")


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
        return Verdict(False, f"Your job ran in Partition={rec.partition}; the task asks for "
                              "the gpu partition (-p/--partition).")
    if rec.name != "train":
        return Verdict(False, f"JobName={rec.name}; the task asks for the job name train "
                              "(-J/--job-name).")
    nodes = len(rec.allocation.nodes) if rec.allocation else rec.num_nodes
    if nodes != 1:
        return Verdict(False, f"{summary(facts)} (NumNodes={nodes}); the task asks for 1 node.")
    if _gpus(rec) != 1:
        return Verdict(False, f"{summary(facts)} (TRES gres/gpu={_gpus(rec)}); the task asks "
                              "for 1 GPU (--gres=gpu:1, --gpus=1, --gpus-per-node=1).")
    if rec.time_limit != 30:
        extra = " (the partition's DefaultTime: you set none)" if facts.options.time_limit \
            is None else ""
        return Verdict(False, f"TimeLimit={_limit(rec.time_limit)}{extra}; the task asks for "
                              "30 minutes (-t/--time).")
    want = f"train-{rec.job_id}.out"
    got = out_name(rec)
    if got != want:
        return Verdict(False, f"StdOut={got}; the task asks for {want}: train- then the job "
                              "id (-o/--output with the %j pattern).")
    stop = _no_srun(facts, "python train.py")
    if stop:
        return stop
    if "train.py" not in facts.step_argv:
        return Verdict(False, f"The first srun step runs '{' '.join(facts.step_argv)}'; the "
                              "task runs python train.py.")
    if facts.final.state is not JobState.COMPLETED:
        return Verdict(False, f"The job ended {facts.final.state.value} "
                              f"(ExitCode={facts.final.exit_code}:{facts.final.signal}).")
    return Verdict(True, f"Job {rec.job_id} ran train.py through srun on 1 node with 1 GPU "
                         f"in partition gpu for at most 30 minutes, writing {want}.")


def check_ddp_2x4(trial: Trial) -> Verdict:
    """``ddp-2x4``: 2 nodes x 4 GPUs, one task per GPU, ranks 0-7, one MASTER_ADDR."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    nodes = len(rec.allocation.nodes) if rec.allocation else 0
    per_node = _gpus_per_node(rec)
    if nodes != 2:
        return Verdict(False, f"{summary(facts)}; the task asks for 2 nodes (-N/--nodes=2).")
    if set(per_node) != {4}:
        return Verdict(False, f"{summary(facts)} ({' + '.join(map(str, per_node))} per node); "
                              "the task asks for 4 GPUs on each node (--gres=gpu:4, "
                              "--gpus-per-node=4, or --gpus-per-task=1 with 4 tasks per node).")
    return _check_ranks(facts, nodes=2, per_node=4)


def _check_ranks(facts: JobFacts, *, nodes: int, per_node: int) -> Verdict:
    tasks = facts.tasks
    world = nodes * per_node
    if len(tasks) != world:
        return Verdict(False, f"{summary(facts)}; the task asks for {world} ranks, one per "
                              f"GPU: {per_node} tasks on each node (--ntasks-per-node="
                              f"{per_node} or -n {world}).")
    by_node: dict[str, list[int]] = {}
    for t in tasks:
        by_node.setdefault(t.node, []).append(t.task)
    if sorted(len(v) for v in by_node.values()) != [per_node] * nodes:
        spread = ", ".join(f"{n}: {len(v)}" for n, v in sorted(by_node.items()))
        return Verdict(False, f"The {world} tasks are spread {spread}; the task asks for "
                              f"{per_node} on each node (--ntasks-per-node={per_node}).")
    for t in tasks:
        seen = t.get("CUDA_VISIBLE_DEVICES")
        if seen == "(unset)" or len(seen.split(",")) != 1:
            return Verdict(False, f"Task {t.task} (SLURM_PROCID={t.task}, node {t.node}) sees "
                                  f"CUDA_VISIBLE_DEVICES={seen}; each task should see exactly "
                                  "one GPU: bind one GPU per task (--gpus-per-task=1, or srun "
                                  "--gpu-bind=single:1 with --gres=gpu:4).",
                           details=tuple(f"task {x.task} on {x.node}: CUDA_VISIBLE_DEVICES="
                                         f"{x.get('CUDA_VISIBLE_DEVICES')}" for x in tasks))
    ranks = sorted(int(t.get("RANK", "-1")) for t in tasks)
    if ranks != list(range(world)):
        return Verdict(False, f"RANK values are {ranks}; they should be 0-{world - 1}.")
    for node, _ids in by_node.items():
        local = sorted(int(t.get("LOCAL_RANK", "-1")) for t in tasks if t.node == node)
        if local != list(range(per_node)):
            return Verdict(False, f"On {node} LOCAL_RANK (SLURM_LOCALID) is {local}; it should "
                                  f"be 0-{per_node - 1} on each node.")
    gpus = {(t.node, t.get("CUDA_VISIBLE_DEVICES")) for t in tasks}
    if len(gpus) != world:
        return Verdict(False, "Two tasks on one node see the same GPU; each rank needs its "
                              "own (--gpus-per-task=1).")
    masters = {t.get("MASTER_ADDR") for t in tasks}
    if len(masters) != 1:
        return Verdict(False, f"The ranks disagree on MASTER_ADDR ({sorted(masters)}).")
    sizes = {t.get("WORLD_SIZE") for t in tasks}
    if sizes != {str(world)}:
        return Verdict(False, f"WORLD_SIZE (SLURM_NTASKS) is {sorted(sizes)}; it should be "
                              f"{world}.")
    return Verdict(True, f"{summary(facts)}: ranks 0-{world - 1}, LOCAL_RANK 0-{per_node - 1} "
                         f"on each node, one GPU per task, MASTER_ADDR={masters.pop()} for "
                         "all.")


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
        return Verdict(False, "Your job is not a job array (ArrayJobId is unset); the sweep "
                              "is 16 array tasks (-a/--array).")
    array_id = rec.array_job_id or rec.job_id
    tasks = tuple(r for r in facts.attempts if r.array_job_id == array_id
                  and r.array_task_id is not None)
    ids = sorted({r.array_task_id for r in tasks if r.array_task_id is not None})
    if len(ids) != 16:
        return Verdict(False, f"The array has {len(ids)} tasks (ArrayTaskId "
                              f"{ids[0] if ids else '-'}..{ids[-1] if ids else '-'}); the "
                              "sweep has 16.")
    throttle = rec.array_max_tasks
    if not throttle:
        return Verdict(False, f"No ArrayTaskThrottle: up to {_max_running(tasks)} tasks ran "
                              "at once; the task allows at most 4 (--array=...%4).")
    if throttle != 4:
        return Verdict(False, f"ArrayTaskThrottle={throttle}; the task asks for at most 4 "
                              "running at once.")
    gpus = sorted({_gpus(r) for r in tasks})
    if gpus != [1]:
        return Verdict(False, f"Array tasks got {'/'.join(map(str, gpus))} GPUs (TRES "
                              "gres/gpu); each task needs 1.")
    names = {out_name(r): r for r in tasks}
    if len(names) != len(tasks):
        shared = sorted(names)[0]
        return Verdict(False, f"The tasks share output files (StdOut={shared}): each would "
                              "overwrite the others'. Name the file with the array job id "
                              "and the task id (%A and %a).")
    for name, r in sorted(names.items(), key=lambda kv: kv[1].array_task_id or 0):
        nums = _numbers(name)
        if array_id not in nums or r.array_task_id not in nums:
            return Verdict(False, f"Task {r.array_task_id} writes {name}; the name should hold "
                                  f"the array job id {array_id} and the task id "
                                  f"{r.array_task_id} (%A and %a; %j is each task's own job "
                                  "id).")
    bad = [r for r in tasks if r.state is not JobState.COMPLETED]
    if bad:
        return Verdict(False, f"Array task {bad[0].array_task_id} ended {bad[0].state.value}.")
    return Verdict(True, f"16 array tasks of job {array_id}, at most {_max_running(tasks)} at "
                         "once (ArrayTaskThrottle=4), 1 GPU each, one output file per task "
                         f"({out_name(tasks[0])}, ...).")


def check_survive(trial: Trial) -> Verdict:
    """``survive-node-failure``: requeued on NODE_FAIL, --open-mode=append, --signal >= 120 s."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, first = started
    after = facts.after_event
    if after is None:
        return Verdict(False, f"The job ended ({facts.final.state.value}) before the lab "
                              "failed its node; it should still be training then (its time "
                              "limit and run time must cover at least 10 minutes).")
    node = first.allocation.nodes[0].node if first.allocation else "its node"
    if after.state.is_terminal:
        return Verdict(False, f"When {node} failed the job ended {after.state.value} "
                              f"(Requeue={int(after.requeue)}): Slurm did not requeue it. "
                              "A job that must survive asks for --requeue.")
    if after.restart_count < 1:
        return Verdict(False, f"After {node} failed the job is {after.state.value} with "
                              f"Restarts={after.restart_count}; it should be requeued.")
    mode = facts.options.open_mode
    if mode != "append":
        return Verdict(False, f"Requeued (Restarts={after.restart_count}), but its output is "
                              f"opened with --open-mode={mode or 'truncate (the default)'}: "
                              f"the restart would truncate {out_name(after)}; append to it.")
    spec = facts.final.signal_spec
    match = re.fullmatch(r"(\d+)@(\d+)", spec or "")
    if match is None:
        return Verdict(False, "No warning signal: at its TimeLimit the job only gets SIGTERM "
                              "and, KillWait=30 s later, SIGKILL; ask Slurm for a signal "
                              "before the limit (--signal) so the job can checkpoint.")
    before = int(match.group(2))
    if before < 120:
        return Verdict(False, f"The warning signal comes {before} s before the time limit; the "
                              "task needs at least 2 minutes (120 s) to checkpoint.")
    if facts.final.time_limit is not None and before >= facts.final.time_limit * 60:
        return Verdict(False, f"The signal is asked {before} s before a TimeLimit of "
                              f"{_limit(facts.final.time_limit)}: it would come at once.")
    if facts.final.restart_count < 1:
        return Verdict(False, "The job was not restarted after the failure.")
    return Verdict(True, f"When {node} failed job {facts.job_id} was requeued "
                         f"(Restarts={facts.final.restart_count}, final state "
                         f"{facts.final.state.value}), appends to {out_name(facts.final)}, and "
                         f"gets signal {match.group(1)} {before} s before its time limit.")


def check_survive_preemption(trial: Trial) -> Verdict:
    """``survive-preemption``: a scavenger job that preempt/qos requeues (sacct: a PREEMPTED
    attempt, then a new one that completes), Requeue=1, ``--open-mode=append``."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, first = started
    if first.qos != "scavenger":
        return Verdict(False, f"Your job ran in QOS {first.qos}; the urgent job's QOS high "
                              "may preempt only QOS scavenger (Preempt=scavenger), so it "
                              "waited for your job instead. The task is a free scavenger job: "
                              "ask for that QOS.")
    after = facts.after_event
    if after is None:
        return Verdict(False, f"The job ended ({facts.final.state.value}) before the urgent "
                              "job came; it should still be training 10 minutes after it "
                              "starts (its time limit and run time must cover that).")
    node = first.allocation.nodes[0].node if first.allocation else "its node"
    if after.state.is_terminal:
        return Verdict(False, f"When the urgent job needed {node} your job ended "
                              f"{after.state.value} (Requeue={int(after.requeue)}): a job "
                              "that cannot be requeued is cancelled by preemption, even "
                              "under PreemptMode=REQUEUE. Do not turn requeueing off "
                              "(--no-requeue).")
    if after.restart_count < 1:
        return Verdict(False, f"After the urgent job came your job is {after.state.value} "
                              f"with Restarts={after.restart_count}; it was not preempted.")
    mode = facts.options.open_mode
    if mode != "append":
        return Verdict(False, f"Preempted and requeued (Restarts={after.restart_count}), but "
                              f"its output is opened with --open-mode="
                              f"{mode or 'truncate (the default)'}: the next attempt would "
                              f"truncate {out_name(after)} and lose what the first one wrote; "
                              "append to it.")
    runs = sorted((a for a in facts.attempts if a.job_id == facts.job_id),
                  key=lambda a: a.start_time or 0)
    states = [a.state.value for a in runs]
    if "PREEMPTED" not in states or states[-1] != "COMPLETED" \
            or states.index("PREEMPTED") == len(states) - 1:
        return Verdict(False, f"sacct shows the attempts {', '.join(states)}; after "
                              "PREEMPTED the new attempt should run to COMPLETED (its time "
                              f"limit, TimeLimit={_limit(facts.final.time_limit)}, must cover "
                              "the whole training run).")
    return Verdict(True, f"Job {facts.job_id} (QOS scavenger, Requeue="
                         f"{int(facts.final.requeue)}) was PREEMPTED on {node} by the urgent "
                         f"job, requeued and run again to {states[-1]} "
                         f"(Restarts={facts.final.restart_count}), appending to "
                         f"{out_name(facts.final)}.")


def check_after_preprocess(trial: Trial) -> Verdict:
    """``after-preprocess``: train starts after preprocess succeeds, never if it fails."""
    stop = preflight(trial, jobs=2)
    if stop:
        return stop
    pre, train = trial.job("preprocess"), trial.job("train")
    if pre is None or train is None:
        names = ", ".join(j.final.name for j in trial.jobs)
        return Verdict(False, f"Submitted jobs: {names}; submit preprocess.sh and train.sh "
                              "(their #SBATCH lines name them preprocess and train).")
    if pre.job_id > train.job_id:
        return Verdict(False, "train was submitted before preprocess; submit preprocess "
                              "first and capture its job id (sbatch --parsable).")
    dep = train.options.dependency or ""
    if not dep:
        return Verdict(False, f"train (job {train.job_id}) has Dependency=(null): it started "
                              "at once, beside preprocess. Make it depend on the "
                              "preprocessing job (-d/--dependency).")
    if str(pre.job_id) not in _numbers_str(dep):
        return Verdict(False, f"train's dependency is {dep}, but preprocess is job "
                              f"{pre.job_id}: capture the id sbatch --parsable prints "
                              "in a variable and use it.")
    if pre.final.state is not JobState.COMPLETED or train.first is None:
        return Verdict(False, f"preprocess ended {pre.final.state.value} and train is "
                              f"{train.final.state.value} (Reason={train.final.reason.value}).")
    pre_end = pre.final.end_time or 0
    if (train.first.start_time or 0) < pre_end:
        return Verdict(False, f"train started before preprocess ended (dependency {dep}).")
    alt = trial.alternate
    if alt is not None:
        apre, atrain = alt.job("preprocess"), alt.job("train")
        if apre is not None and atrain is not None and atrain.first is not None:
            return Verdict(False, f"When preprocess fails ({apre.final.state.value}, ExitCode="
                                  f"{apre.final.exit_code}:{apre.final.signal}) train still "
                                  f"runs: with {atrain.options.dependency} it waits for the "
                                  "end, not for success. Only a successful end should start "
                                  "it (afterok).")
    return Verdict(True, f"train (job {train.job_id}) started at the end of preprocess "
                         f"(job {pre.job_id}, COMPLETED) with Dependency={dep}; when "
                         "preprocess fails it never starts (DependencyNeverSatisfied).")


def _numbers_str(text: str) -> list[str]:
    return re.findall(r"\d+", text)


def check_cpu_preprocess(trial: Trial) -> Verdict:
    """``cpu-preprocess``: cpu, prep, 1 task x 8 CPUs, 32 GB, 2 h, .out and .err files."""
    started = _started(trial)
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    if rec.partition != "cpu":
        return Verdict(False, f"Partition={rec.partition}; the task asks for cpu.")
    if rec.name != "prep":
        return Verdict(False, f"JobName={rec.name}; the task asks for prep.")
    stop = _no_srun(facts, "python preprocess.py")
    if stop:
        return stop
    if len(facts.tasks) != 1:
        return Verdict(False, f"The srun step ran {len(facts.tasks)} tasks; the task asks "
                              "for one task.")
    if rec.cpus_per_task != 8 or rec.num_cpus != 8:
        return Verdict(False, f"NumCPUs={rec.num_cpus} CPUs/Task={rec.cpus_per_task}; the "
                              "task asks for one task with 8 CPUs (the CPUs belong to the "
                              "task, so srun gives them to it).")
    mem = int(rec.tres_alloc.get("mem", 0)) if rec.tres_alloc else 0
    if mem != 32 * 1024:
        return Verdict(False, f"TRES mem={mem}M; the task asks for 32 GB for the job "
                              "(32768M), per node or per CPU.")
    if rec.time_limit != 120:
        return Verdict(False, f"TimeLimit={_limit(rec.time_limit)}; the task asks for 2 "
                              "hours.")
    want_out, want_err = f"prep-{rec.job_id}.out", f"prep-{rec.job_id}.err"
    got_out = out_name(rec)
    got_err = os.path.basename(expand_pattern(rec.std_err, job_id=rec.job_id,
                                              job_name=rec.name, user=rec.user))
    if got_out != want_out:
        return Verdict(False, f"StdOut={got_out}; the task asks for {want_out}.")
    if got_err != want_err:
        return Verdict(False, f"StdErr={got_err}; the task asks for {want_err} (standard "
                              "error goes to StdOut unless it has its own file).")
    return Verdict(True, f"Job {rec.job_id} ran 1 task with 8 CPUs and 32768M in partition "
                         f"cpu for at most 2 hours, writing {want_out} and {want_err}.")


def check_four_gpus(trial: Trial) -> Verdict:
    """``four-gpus``: 1 node, 4 GPUs, 32 CPUs, one task seeing the four GPUs."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, rec = started
    nodes = len(rec.allocation.nodes) if rec.allocation else 0
    if nodes != 1 or _gpus(rec) != 4:
        return Verdict(False, f"{summary(facts)}; the task asks for 4 GPUs on 1 node.")
    if rec.num_cpus != 32:
        return Verdict(False, f"NumCPUs={rec.num_cpus}; the task asks for 8 CPUs per GPU, "
                              "32 in all.")
    if len(facts.tasks) != 1:
        return Verdict(False, f"{summary(facts)}; the task asks for a single task.")
    seen = facts.tasks[0].get("CUDA_VISIBLE_DEVICES")
    if len(seen.split(",")) != 4:
        return Verdict(False, f"The task sees CUDA_VISIBLE_DEVICES={seen}; it should see all "
                              "four GPUs of the job.")
    return Verdict(True, f"One task on {rec.nodelist} with 32 CPUs sees "
                         f"CUDA_VISIBLE_DEVICES={seen}.")


def check_ddp_drill(trial: Trial) -> Verdict:
    """``ddp-drill`` (practice): 1 node, 2 tasks, one GPU each."""
    started = _started(trial, srun="python train.py")
    if isinstance(started, Verdict):
        return started
    facts, first = started
    nodes = len(first.allocation.nodes) if first.allocation else 0
    if nodes != 1:
        return Verdict(False, f"{summary(facts)}; the drill runs on 1 node.")
    return _check_ranks(facts, nodes=1, per_node=2)


def check_qos_eval(trial: Trial) -> Verdict:
    """``qos-eval``: QOS debug, 2 GPUs, 30 min, first in the pending queue, no QOS hold."""
    stop = preflight(trial)
    if stop:
        return stop
    facts, mine, gpus = _queued(trial)
    if gpus != 2:
        return Verdict(False, f"Your job asks for {gpus} GPUs (TRES gres/gpu); the evaluation "
                              "needs 2.")
    if mine.time_limit != 30:
        return Verdict(False, f"TimeLimit={_limit(mine.time_limit)}; the task asks for 30 "
                              "minutes.")
    if mine.state is JobState.PENDING and mine.reason.value.startswith("QOS"):
        return Verdict(False, f"Your job is held by its QOS: Reason={mine.reason.value} "
                              f"(QOS={mine.qos}).")
    others = [r for r in trial.queue if r.state is JobState.PENDING
              and r.job_id != facts.job_id]
    top = max(others, key=lambda r: r.priority, default=None)
    if top is not None and mine.priority <= top.priority:
        return Verdict(False, f"Priority={mine.priority} (QOS={mine.qos}) is not above job "
                              f"{top.job_id} ({top.name}, Priority={top.priority}): yours "
                              "would start after it. Compare the factors with sprio.")
    first = facts.first
    if first is None:
        return _never_ran(facts)
    stop = _no_srun(facts, "python eval.py")
    if stop:
        return stop
    waited = (first.start_time or trial.start) - trial.start
    return Verdict(True, f"Priority={mine.priority} with QOS={mine.qos}: first of the pending "
                         f"jobs; it started {waited} s after submission.")


def check_backfill_fit(trial: Trial) -> Verdict:
    """``backfill-fit``: 1 node x 8 GPUs, >= 20 min limit, started now by backfill."""
    stop = preflight(trial)
    if stop:
        return stop
    facts, mine, gpus = _queued(trial)
    nodes = mine.num_nodes
    if nodes != 1 or gpus != 8:
        return Verdict(False, f"Your job asks for {nodes} node(s) and {gpus} GPUs; the task "
                              "needs one node with 8 GPUs.")
    if mine.time_limit is not None and mine.time_limit < 20:
        return Verdict(False, f"TimeLimit={_limit(mine.time_limit)} is shorter than the 20 "
                              "minutes train.py needs: it would end TIMEOUT.")
    first = facts.first
    big = next((r for r in trial.queue if r.name == "big"), None)
    if first is None or (first.start_time or 0) - trial.start > 120:
        when = "never" if first is None else \
            f"{((first.start_time or 0) - trial.start) // 60} minutes later"
        planned = ""
        if big is not None and big.start_time:
            planned = (f" (job big's planned StartTime is "
                       f"{(big.start_time - trial.start) // 60} minutes away)")
        return Verdict(False, f"Your job started {when}: with TimeLimit="
                              f"{_limit(mine.time_limit)} it would still hold gpu04 when big "
                              f"must start{planned}, so backfill may not start it now.")
    stop = _no_srun(facts, "python train.py")
    if stop:
        return stop
    return Verdict(True, f"Started at once on {first.nodelist} by the {first.scheduler} "
                         f"scheduler: TimeLimit={_limit(first.time_limit)} ends before big's "
                         "reserved start.")


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
