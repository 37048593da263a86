"""The course's labs: two or more per lesson, one of them a diagnosis.

Ids are stable (banks, submissions and the gradebook name them).  The task
statements say what Slurm must end up doing, never which options to type; the
hints and the documentation lines (quoted from Slurm 22.05's man pages) are the
ladder a learner climbs after a miss.  Model answers live in the private
authoring sources (``quizzes/authoring/sources``) and in the tests, not here.
"""

from __future__ import annotations

from quizzes.labs.model import Event, Lab

_TRAIN = "#!/bin/bash\n#SBATCH -J train --gres=gpu:1 -t 1:00:00\nsrun python train.py\n"
_PRE_OK = "#!/bin/bash\n#SBATCH -J preprocess -p cpu -c 4 -t 30\nsrun sleep 600\n"
_PRE_FAIL = "#!/bin/bash\n#SBATCH -J preprocess -p cpu -c 4 -t 30\nsrun sleep 300\nexit 1\n"
_ALICE_FULL = tuple(("alice", ("-J", "llm", "--gres=gpu:8", "-t", "45", "--wrap",
                               "srun sleep 2700")) for _ in range(3))
_SCRIPT = "#!/bin/bash\n#SBATCH \n\n"

LABS: tuple[Lab, ...] = (
    # ---- 01 what is slurm ---------------------------------------------------------------
    Lab(
        id="first-job", lesson="01-what-is-slurm", title="Your first GPU job",
        kind="script", answer_file="train.sh", checker="first_job",
        task=("Write a batch script train.sh for partition gpu, with the job name train, "
              "1 node and 1 GPU, a 30-minute time limit, its output written to "
              "train-<jobid>.out (the job's own id), running `python train.py` through "
              "srun. The check submits it with `sbatch train.sh` on a fresh cluster and "
              "reads what Slurm recorded."),
        skeleton="#!/bin/bash\n#SBATCH \n\nsrun python train.py\n",
        hints=("Each requirement is one #SBATCH option: partition, job name, nodes, GPUs, "
               "time, output.",
               "Without -o, Slurm writes slurm-<jobid>.out; the output name is a filename "
               "pattern, and one of its symbols stands for the job id."),
        docs=("sbatch(1) -o, --output=<filename_pattern>: Instruct Slurm to connect the batch "
              "script's standard output directly to the file name specified in the "
              "\"filename pattern\".",
              "sbatch(1) filename pattern: %j jobid of the running job.",
              "sbatch(1) -t, --time=<time>: Set a limit on the total run time of the job "
              "allocation. Acceptable time formats include \"minutes\", \"minutes:seconds\", "
              "\"hours:minutes:seconds\"..."),
        objectives=("01.1",),
    ),
    Lab(
        id="diagnose-queue", lesson="01-what-is-slurm", title="Why does my job wait?",
        kind="diagnose", scenario="queue-full",
        task=("You submitted the job train (1 GPU). This is what squeue prints two minutes "
              "later. Why does train not run? Answer in Slurm's words (one reason)."),
        hints=("For a pending job the last squeue column holds the reason in parentheses.",),
        docs=("squeue(1) JOB REASON CODES: Resources: The job is waiting for resources to "
              "become available. Priority: One or more higher priority jobs exist for this "
              "partition or advanced reservation.",),
        objectives=("01.3",),
    ),
    # ---- 02 sbatch ----------------------------------------------------------------------
    Lab(
        id="cpu-preprocess", lesson="02-sbatch", title="A CPU preprocessing job",
        kind="script", answer_file="prep.sh", checker="cpu_preprocess",
        task=("Write prep.sh: a job named prep in partition cpu, one task with 8 CPUs, 32 GB "
              "of memory for the job, a 2-hour limit, standard output in prep-<jobid>.out "
              "and standard error in prep-<jobid>.err, running `python preprocess.py` "
              "through srun."),
        skeleton=_SCRIPT + "srun python preprocess.py\n",
        hints=("CPUs for one task are asked per task; memory can be asked per node or per "
               "CPU: both count.",
               "Standard error goes to the output file unless you name another one."),
        docs=("sbatch(1) -c, --cpus-per-task=<ncpus>: Advise the Slurm controller that "
              "ensuing job steps will require ncpus number of processors per task.",
              "sbatch(1) --mem=<size>[units]: Specify the real memory required per node. "
              "Default units are megabytes.",
              "sbatch(1) -e, --error=<filename_pattern>: Instruct Slurm to connect the batch "
              "script's standard error directly to the file name specified."),
        objectives=("02.2",),
    ),
    Lab(
        id="after-preprocess", lesson="02-sbatch", title="Train only after preprocessing",
        kind="snippet", answer_file="submit.sh", checker="after_preprocess",
        files=(("preprocess.sh", _PRE_OK), ("train.sh", _TRAIN)),
        alternate_files=(("preprocess.sh", _PRE_FAIL),),
        task=("preprocess.sh and train.sh are in the lab's folder. Write the shell lines that "
              "submit both, so that train starts only if preprocess ends successfully, and "
              "never if it fails. Capture the first job's id with `sbatch --parsable` in a "
              "variable. The check runs your lines twice: once with a preprocess that "
              "succeeds, once with one that fails."),
        skeleton="jid=$(sbatch --parsable preprocess.sh)\n",
        hints=("sbatch can make a job wait for another one; the kind of wait decides what "
               "happens when the first job fails.",
               "--parsable prints only the id: $(...) around sbatch puts it in a variable."),
        docs=("sbatch(1) -d, --dependency=<dependency_list>: Defer the start of this job "
              "until the specified dependencies have been satisfied.",
              "sbatch(1) afterok:job_id[:jobid...] This job can begin execution after the "
              "specified jobs have successfully executed (ran to completion with an exit code "
              "of zero).",
              "sbatch(1) --parsable: Outputs only the job id number and the cluster name if "
              "present."),
        objectives=("02.1",),
    ),
    Lab(
        id="diagnose-timeout", lesson="02-sbatch", title="What ended my job?",
        kind="diagnose", scenario="timeout",
        task=("Your job train ended early. This is its sacct record. What ended it? Answer "
              "in Slurm's words."),
        hints=("Compare Elapsed with Timelimit, and read the State column.",),
        docs=("sacct(1) JOB STATE CODES: TIMEOUT TO Job terminated upon reaching its time "
              "limit.",),
        objectives=("02.2",),
    ),
    # ---- 03 gres gpus -------------------------------------------------------------------
    Lab(
        id="four-gpus", lesson="03-gres-gpus", title="One task, four GPUs",
        kind="script", answer_file="train.sh", checker="four_gpus",
        task=("Write train.sh: one node, 4 GPUs, 8 CPUs for each GPU (32 CPUs), and a single "
              "task `python train.py` (through srun) that sees all four GPUs in "
              "CUDA_VISIBLE_DEVICES."),
        skeleton=_SCRIPT + "srun python train.py\n",
        hints=("GPUs are a generic resource (GRES) you ask per node, per job or per task; "
               "CPUs can follow the GPUs.",),
        docs=("sbatch(1) --gres=<list>: Specifies a comma-delimited list of generic "
              "consumable resources. The format for each entry in the list is "
              "\"name[[:type]:count]\".",
              "sbatch(1) --cpus-per-gpu=<ncpus>: Advise Slurm that ensuing job steps will "
              "require ncpus processors per allocated GPU."),
        objectives=("03.1",),
    ),
    Lab(
        id="diagnose-qos", lesson="03-gres-gpus", title="Enough free GPUs, still waiting",
        kind="diagnose", scenario="qos-limit",
        task=("The cluster has 32 idle GPUs, yet your job finetune stays pending. Here is "
              "what squeue and scontrol show. What holds it back? Answer in Slurm's words."),
        hints=("Free GPUs are not the only thing Slurm checks: limits of your QOS count too.",),
        docs=("squeue(1) JOB REASON CODES: QOSMaxGRESPerUser: The job's QOS has reached the "
              "maximum number of GRES for a user.",),
        objectives=("03.3",),
    ),
    # ---- 04 srun ddp --------------------------------------------------------------------
    Lab(
        id="ddp-2x4", lesson="04-srun-ddp", title="DDP on 2 nodes x 4 GPUs",
        kind="script", answer_file="ddp.sh", checker="ddp_2x4",
        task=("Write ddp.sh for a DDP run on 2 nodes with 4 GPUs per node and one task per "
              "GPU: each task sees exactly one GPU, the ranks are 0-7 with local ranks 0-3 "
              "on each node, and all of them agree on one MASTER_ADDR. The script runs "
              "`srun python train.py`; the check reads each task's environment (SLURM_PROCID, "
              "SLURM_LOCALID, CUDA_VISIBLE_DEVICES and the RANK/LOCAL_RANK/WORLD_SIZE/"
              "MASTER_ADDR the course's wiring derives from them)."),
        skeleton=_SCRIPT + "srun python train.py\n",
        hints=("One task per GPU: count the tasks per node, then give each task its own GPU.",
               "A task sees every GPU of its node unless the GPUs are bound per task."),
        docs=("sbatch(1) --ntasks-per-node=<ntasks>: Request that ntasks be invoked on each "
              "node.",
              "sbatch(1) --gpus-per-task=<type:number>: Specify the number of GPUs required "
              "for the job on each task to be spawned in the job's resource allocation.",
              "srun(1) --gpu-bind=[verbose,]<type>: Bind tasks to specific GPUs."),
        objectives=("04.2",),
    ),
    Lab(
        id="ddp-drill", lesson="04-srun-ddp", title="DDP drill (practice, real processes)",
        kind="script", answer_file="drill.sh", checker="ddp_drill", counted=False,
        task=("PRACTICE, NOT COUNTED. Write drill.sh for a 1-node run with 2 tasks, one GPU "
              "each, `srun python train.py`. The check verifies the wiring on the simulated "
              "clock; then run it for real in the terminal on minislurm's wall-clock cluster "
              "(gloo on CPU) and watch both ranks join."),
        skeleton=_SCRIPT + "srun python train.py\n",
        hints=("Two tasks on one node, one GPU per task.",),
        docs=("srun(1) -n, --ntasks=<number>: Specify the number of tasks to run.",),
        objectives=("04.1",),
    ),
    Lab(
        id="diagnose-node-fail", lesson="04-srun-ddp", title="What killed the DDP run?",
        kind="diagnose", scenario="node-fail",
        task=("Your 2-node DDP job ddp ended after 20 minutes. Here is sacct. What ended it? "
              "Answer in Slurm's words."),
        hints=("The job's State is not the same as its steps' states: read the job's line.",),
        docs=("sacct(1) JOB STATE CODES: NF NODE_FAIL Job terminated due to failure of one "
              "or more allocated nodes.",),
        objectives=("04.1",),
    ),
    # ---- 05 priority fairshare ----------------------------------------------------------
    Lab(
        id="qos-eval", lesson="05-priority-fairshare", title="Jump the queue with a QOS",
        kind="script", answer_file="eval.sh", checker="qos_eval",
        setup=(*_ALICE_FULL,
               ("alice", ("-J", "llm", "--gres=gpu:8", "-t", "45", "--wrap", "srun sleep 2700")),
               ("alice", ("-J", "sweep", "--gres=gpu:2", "-t", "30", "--wrap",
                          "srun sleep 1800"))),
        task=("All GPUs are busy and alice's job sweep waits. Your account may use the QOS "
              "normal and debug (debug: Priority=50, at most 2 GPUs per user, 1 hour). "
              "Write eval.sh: an evaluation run `srun python eval.py` with 2 GPUs and a "
              "30-minute limit that will be the first pending job to start (highest "
              "priority), without being held by a QOS limit."),
        skeleton=_SCRIPT + "srun python eval.py\n",
        hints=("A job's priority is a sum of weighted factors; one of them comes from the "
               "QOS.", "sprio shows each factor of each pending job."),
        docs=("sbatch(1) -q, --qos=<qos>: Request a quality of service for the job.",
              "priority/multifactor: Job_priority = site_factor + (PriorityWeightAge) * "
              "(age_factor) + ... + (PriorityWeightQOS) * (QOS_factor) + ..."),
        objectives=("05.1",),
    ),
    Lab(
        id="diagnose-priority", lesson="05-priority-fairshare", title="Behind someone else",
        kind="diagnose", scenario="priority",
        task=("Your job train waits behind alice's job big. Here are squeue and sprio. Why "
              "does train wait? Answer in Slurm's words (squeue's reason for train)."),
        hints=("Two pending jobs, two different reasons: the first one in line waits for "
               "nodes, the others wait for it.",),
        docs=("squeue(1) JOB REASON CODES: Priority: One or more higher priority jobs exist "
              "for this partition or advanced reservation.",),
        objectives=("05.1",),
    ),
    # ---- 06 backfill --------------------------------------------------------------------
    Lab(
        id="backfill-fit", lesson="06-backfill", title="Slip into the gap",
        kind="script", answer_file="short.sh", checker="backfill_fit",
        setup=(*_ALICE_FULL,
               ("alice", ("-J", "big", "-N4", "--gres=gpu:8", "-t", "4:00:00", "--wrap",
                          "srun sleep 7200"))),
        task=("Three GPU nodes run alice's jobs for 45 more minutes and her 4-node job big "
              "waits for all four nodes; gpu04 is idle. Your job needs one node with 8 GPUs "
              "and runs `srun python train.py` for 20 minutes. Write short.sh so that it "
              "starts now, without delaying big."),
        skeleton=_SCRIPT + "srun python train.py\n",
        hints=("Backfill starts a lower-priority job early only if it will end before the "
               "reserved start of the higher-priority job.",
               "Slurm only knows how long your job may run from its time limit."),
        docs=("slurm.conf(5) SchedulerType=sched/backfill: ... will start lower priority jobs "
              "if doing so does not delay the expected start time of any higher priority "
              "job.",
              "sbatch(1) -t, --time=<time>: ... If the requested time limit exceeds the "
              "partition's time limit, the job will be left in a PENDING state."),
        objectives=("06.1",),
    ),
    Lab(
        id="diagnose-start", lesson="06-backfill", title="When will it start?",
        kind="diagnose", scenario="start-time",
        task=("Your 2-node job wide waits. Here are squeue and squeue --start. At what time "
              "does Slurm plan to start it? Answer with the time of day (HH:MM:SS)."),
        hints=("squeue --start shows the start the backfill scheduler planned for pending "
               "jobs.",),
        docs=("squeue(1) --start: Report the expected start time and resources to be "
              "allocated for pending jobs in order of increasing start time.",),
        objectives=("06.2",),
    ),
    # ---- 07 failures requeue ------------------------------------------------------------
    Lab(
        id="survive-node-failure", lesson="07-failures-requeue",
        title="Survive a node failure", kind="script", answer_file="train.sh",
        checker="survive", event=Event("node_failure", at=600),
        task=("Write train.sh for a 1-node, 8-GPU training run (`srun python train.py`, "
              "about 90 minutes: the skeleton's #MINISLURM line tells the simulator) with a "
              "2-hour limit that survives its node failing: it is requeued (not ended), it "
              "appends to its output file instead of truncating it, and it gets a signal at "
              "least 2 minutes before its time limit so it can checkpoint. The lab fails the "
              "job's node 10 minutes after it starts."),
        skeleton=("#!/bin/bash\n#SBATCH \n#MINISLURM runtime=1:30:00\n\n"
                  "srun python train.py\n"),
        hints=("Three separate sbatch options: one for requeueing, one for how the output is "
               "opened, one for a warning signal.",
               "The warning signal's time is given in seconds before the end."),
        docs=("sbatch(1) --requeue: Specifies that the batch job should be eligible for "
              "requeuing.",
              "sbatch(1) --open-mode={append|truncate}: Open the output and error files using "
              "append or truncate mode as specified.",
              "sbatch(1) --signal=[{R|B}:]<sig_num>[@sig_time]: When a job is within sig_time "
              "seconds of its end time, send it the signal sig_num."),
        objectives=("07.2",),
    ),
    Lab(
        id="survive-preemption", lesson="07-failures-requeue",
        title="Survive a preemption", kind="script", answer_file="scavenge.sh",
        checker="survive_preemption", grant_qos=(("student", "scavenger"),),
        event=Event("preemption", at=600, submit=(
            "alice", ("--qos=high", "-N1", "--gres=gpu:8", "-t", "30", "-J", "urgent",
                      "--wrap", "sleep 1200"))),
        task=("Write scavenge.sh for a 1-node, 8-GPU training run (`srun python train.py`, "
              "about 1 hour: the skeleton's #MINISLURM line tells the simulator) with a "
              "2-hour limit that runs in the free QOS scavenger and survives being "
              "preempted: it is requeued (not ended) and appends to its output file instead "
              "of truncating it. Ten minutes after your job starts, alice submits an urgent "
              "job in QOS high (Preempt=scavenger) that needs your job's node."),
        skeleton=("#!/bin/bash\n#SBATCH \n#MINISLURM runtime=1:00:00\n\n"
                  "srun python train.py\n"),
        hints=("A job runs in a QOS only if it asks for it; the default QOS is normal.",
               "Preemption under PreemptMode=REQUEUE requeues only a job that may be "
               "requeued; the next attempt opens the output file again.",
               "sacct -D shows every attempt of a requeued job."),
        docs=("sbatch(1) -q, --qos=<qos>: Request a quality of service for the job.",
              "sbatch(1) --requeue: Specifies that the batch job should be eligible for "
              "requeuing.",
              "sbatch(1) --open-mode={append|truncate}: Open the output and error files using "
              "append or truncate mode as specified.",
              "slurm.conf(5) PreemptMode REQUEUE: Preempts jobs by requeuing them (if "
              "possible) or canceling them."),
        objectives=("07.2",),
    ),
    Lab(
        id="diagnose-preempted", lesson="07-failures-requeue", title="Who took my GPUs?",
        kind="diagnose", scenario="preempted",
        task=("alice runs scavenger jobs. One of them stopped after 10 minutes. Here is "
              "sacct. What happened to job 1? Answer in Slurm's words."),
        hints=("Look at the QOS column of the job that started when job 1 stopped.",),
        docs=("sacct(1) JOB STATE CODES: PR PREEMPTED Job terminated due to preemption.",),
        objectives=("07.1",),
    ),
    # ---- 08 frontier scale --------------------------------------------------------------
    Lab(
        id="sweep-array", lesson="08-frontier-scale", title="A throttled sweep",
        kind="script", answer_file="sweep.sh", checker="sweep_array",
        task=("Write sweep.sh: a hyperparameter sweep as a job array of 16 tasks, at most 4 "
              "running at once, 1 GPU each, running `srun python train.py`, with one output "
              "file per task whose name holds the array's job id and the task id."),
        skeleton=_SCRIPT + "srun python train.py\n",
        hints=("A job array is one sbatch option; its index list can carry a limit.",
               "Each array task has its own job id; the array's id is another filename "
               "symbol."),
        docs=("sbatch(1) -a, --array=<indexes>: Submit a job array, multiple jobs to be "
              "executed with identical parameters. A maximum number of simultaneously "
              "running tasks from the job array may be specified using a \"%\" separator.",
              "sbatch(1) filename pattern: %A Job array's master job allocation number. "
              "%a Job array ID (index) number."),
        objectives=("08.1",),
    ),
    Lab(
        id="diagnose-array", lesson="08-frontier-scale", title="A sweep that crawls",
        kind="diagnose", scenario="array-throttle",
        task=("Your 16-task sweep runs only 4 tasks although GPUs are free. Here is squeue. "
              "Why do the other tasks wait? Answer in Slurm's words."),
        hints=("Read the first line: the pending tasks are grouped, with their reason.",),
        docs=("squeue(1) JOB REASON CODES: JobArrayTaskLimit: The job array's limit on the "
              "number of simultaneously running tasks has been reached.",),
        objectives=("08.1",),
    ),
)

LESSONS = ("01-what-is-slurm", "02-sbatch", "03-gres-gpus", "04-srun-ddp",
           "05-priority-fairshare", "06-backfill", "07-failures-requeue", "08-frontier-scale")


def lab(lab_id: str) -> Lab:
    """The lab with this id; KeyError naming the known ids otherwise."""
    for item in LABS:
        if item.id == lab_id:
            return item
    raise KeyError(lab_id)


def by_lesson(lesson: str) -> tuple[Lab, ...]:
    """The labs of one lesson, in catalogue order."""
    return tuple(x for x in LABS if x.lesson == lesson)
