"""Every lab's checker: three or more right answers in different spellings, three or more
wrong ones, each wrong one with its own message (issue 18)."""

from __future__ import annotations

import pytest

from quizzes.labs import LABS, LESSONS, by_lesson, check, lab

H = "#!/bin/bash\n"

RIGHT: dict[str, list[str]] = {
    "first-job": [
        H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30 -o train-%j.out\n"
            "srun python train.py\n",
        H + "#SBATCH --partition=gpu\n#SBATCH --job-name=train\n#SBATCH --nodes=1\n"
            "#SBATCH --gpus=1\n#SBATCH --time=00:30:00\n#SBATCH --output=train-%j.out\n"
            "srun python train.py\n",
        "sbatch -p gpu -J train -N 1 --gpus-per-node=1 --time=0:30:00 -o 'train-%j.out' "
        "--wrap 'srun python train.py'\n",
        H + "#SBATCH --partition gpu --job-name train --gres gpu:a100:1 -t 30:00\n"
            "#SBATCH --output train-%j.out\nsrun python train.py\n",
    ],
    "cpu-preprocess": [
        H + "#SBATCH -p cpu -J prep -n1 -c8 --mem=32G -t 2:00:00 -o prep-%j.out "
            "-e prep-%j.err\nsrun python preprocess.py\n",
        H + "#SBATCH --partition=cpu --job-name=prep --cpus-per-task=8 --mem-per-cpu=4G\n"
            "#SBATCH --time=120 --output=prep-%j.out --error=prep-%j.err\n"
            "srun python preprocess.py\n",
        "sbatch -p cpu -J prep --ntasks=1 --cpus-per-task 8 --mem 32768 -t 02:00:00 "
        "-o prep-%j.out -e prep-%j.err --wrap 'srun python preprocess.py'",
    ],
    "after-preprocess": [
        "jid=$(sbatch --parsable preprocess.sh)\nsbatch --dependency=afterok:${jid} train.sh\n",
        "JID=`sbatch --parsable preprocess.sh`\nsbatch -d afterok:$JID train.sh\n",
        "first=$(sbatch --parsable preprocess.sh); sbatch --dependency \"afterok:$first\" "
        "train.sh",
        "export PRE=$(sbatch --parsable preprocess.sh)\n# then train\n"
        "sbatch --kill-on-invalid-dep=yes -d afterok:${PRE} train.sh\n",
    ],
    "four-gpus": [
        H + "#SBATCH -N1 --gres=gpu:4 -c 32\nsrun python train.py\n",
        H + "#SBATCH --nodes=1 --gpus-per-node=4 --cpus-per-gpu=8\nsrun python train.py\n",
        "sbatch -N 1 --gpus=4 --cpus-per-task=32 --wrap 'srun python train.py'",
    ],
    "ddp-2x4": [
        H + "#SBATCH -N2 --ntasks-per-node=4 --gpus-per-task=1\nsrun python train.py\n",
        H + "#SBATCH --nodes=2 --gres=gpu:4 --ntasks-per-node 4\n"
            "srun --gpu-bind=single:1 python train.py\n",
        "sbatch --nodes 2 --ntasks=8 --ntasks-per-node=4 --gpus-per-node=4 --wrap "
        "'srun --gpus-per-task=1 python train.py'",
        H + "#SBATCH -N 2\n#SBATCH --tasks-per-node=4\n#SBATCH --gpus-per-task=1\n"
            "srun python train.py\n",
    ],
    "ddp-drill": [
        H + "#SBATCH -N1 -n2 --gpus-per-task=1\nsrun python train.py\n",
        H + "#SBATCH --nodes=1 --ntasks-per-node=2 --gres=gpu:2\n"
            "srun --gpu-bind=single:1 python train.py\n",
        "sbatch -N1 --ntasks=2 --gpus-per-task 1 --wrap 'srun python train.py'",
    ],
    "qos-eval": [
        H + "#SBATCH --qos=debug --gres=gpu:2 -t 30\nsrun python eval.py\n",
        H + "#SBATCH -q debug\n#SBATCH --gpus=2\n#SBATCH --time=00:30:00\nsrun python eval.py\n",
        "sbatch --qos debug --gpus-per-node=2 -t 30:00 --wrap 'srun python eval.py'",
    ],
    "backfill-fit": [
        H + "#SBATCH -N1 --gres=gpu:8 -t 30\nsrun python train.py\n",
        H + "#SBATCH --nodes=1 --gpus-per-node=8 --time=00:25:00\nsrun python train.py\n",
        "sbatch --gpus=8 -N 1 --time=40 --wrap 'srun python train.py'",
    ],
    "survive-preemption": [
        H + "#SBATCH --qos=scavenger -N1 --gres=gpu:8 -t 2:00:00 --requeue "
            "--open-mode=append\n#MINISLURM runtime=1:00:00\nsrun python train.py\n",
        # no --requeue: JobRequeue's default (1) makes a batch job requeueable
        H + "#SBATCH -q scavenger\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\n"
            "#SBATCH --time=120\n#SBATCH --open-mode append\n#MINISLURM runtime=1:00:00\n"
            "srun python train.py\n",
        "sbatch -q scavenger --gpus=8 -t 2:00:00 --requeue --open-mode=append "
        "--wrap 'sleep 3600'",
        "export SBATCH_QOS=scavenger\nsbatch -N 1 --gres=gpu:a100:8 --time=1:30:00 "
        "--open-mode=append --wrap 'srun python train.py; sleep 3600'\n",
    ],
    "survive-node-failure": [
        H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00\n#SBATCH --requeue --open-mode=append "
            "--signal=B:USR1@300\n#MINISLURM runtime=1:30:00\nsrun python train.py\n",
        H + "#SBATCH --nodes=1 --gpus=8 --time=120 --signal=USR1@120 --open-mode=a\n"
            "#SBATCH --requeue\n#MINISLURM runtime=1:30:00\nsrun python train.py\n",
        H + "#SBATCH -N 1 --gpus-per-node=8 -t 02:00:00 --signal=SIGTERM@600 "
            "--open-mode append\n#MINISLURM runtime=1:30:00\nsrun python train.py\n",
    ],
    "sweep-array": [
        H + "#SBATCH --array=0-15%4 --gres=gpu:1 -o sweep-%A_%a.out\nsrun python train.py\n",
        H + "#SBATCH -a 1-16%4\n#SBATCH --gpus=1\n#SBATCH --output=logs-%a-of-%A.out\n"
            "srun python train.py\n",
        "sbatch --array=0-15%4 --gpus-per-node=1 --output='sweep_%A.%a.log' "
        "--wrap 'srun python train.py'",
    ],
    "diagnose-queue": ["Resources", "(Resources): all the GPU nodes are busy",
                       "reason is resources"],
    "diagnose-timeout": ["TIMEOUT", "it hit its time limit", "the job reached its TimeLimit"],
    "diagnose-qos": ["QOSMaxGRESPerUser", "the debug QOS limit (MaxTRESPerUser gres/gpu)",
                     "qos max gres per user"],
    "diagnose-node-fail": ["NODE_FAIL", "a node failure", "node failed (gpu02 died)"],
    "diagnose-priority": ["Priority", "big has a higher priority", "reason: priority"],
    "diagnose-start": ["10:00:00", "at 10:00", "2026-01-05T10:00:00"],
    "diagnose-preempted": ["PREEMPTED", "it was preempted by urgent",
                           "preemption by the high QOS"],
    "diagnose-array": ["JobArrayTaskLimit", "the %4 throttle of the array",
                       "array task limit"],
}

WRONG: dict[str, list[tuple[str, str]]] = {
    "first-job": [
        (H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30\nsrun python train.py\n",
         "StdOut=slurm-"),
        (H + "#SBATCH -p gpu -J train -N1 --gres=gpu:2 -t 30 -o train-%j.out\n"
             "srun python train.py\n", "gres/gpu=2"),
        (H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -o train-%j.out\nsrun python "
             "train.py\n", "TimeLimit=01:00:00 (the partition's DefaultTime"),
        (H + "#SBATCH -p gpu -J train -N1 --gres=gpu:1 -t 30 -o train-%j.out\n"
             "python train.py\n", "starts no job step"),
        (H + "#SBATCH -p cpu -J train -N1 -t 30 -o train-%j.out\nsrun python train.py\n",
         "Partition=cpu"),
        (H + "#SBATCH -p gpu -J train --gres=tpu:1\nsrun python train.py\n",
         "Invalid generic resource (gres) specification"),
    ],
    "cpu-preprocess": [
        (H + "#SBATCH -p cpu -J prep -n8 --mem=32G -t 2:00:00 -o prep-%j.out -e prep-%j.err\n"
             "srun python preprocess.py\n", "ran 8 tasks"),
        (H + "#SBATCH -p cpu -J prep -c8 -t 2:00:00 -o prep-%j.out -e prep-%j.err\n"
             "srun python preprocess.py\n", "TRES mem=16000M"),
        (H + "#SBATCH -p cpu -J prep -c8 --mem=32G -t 2:00:00 -o prep-%j.out\n"
             "srun python preprocess.py\n", "StdErr=prep-"),
        (H + "#SBATCH -p cpu -J prep -c8 --mem=32G -t 2 -o prep-%j.out -e prep-%j.err\n"
             "srun python preprocess.py\n", "TimeLimit=00:02:00"),
    ],
    "after-preprocess": [
        ("sbatch preprocess.sh\nsbatch train.sh\n", "Dependency=(null)"),
        ("jid=$(sbatch --parsable preprocess.sh)\nsbatch --dependency=afterany:$jid train.sh",
         "still runs: with afterany"),
        ("jid=$(sbatch --parsable preprocess.sh)\nsbatch --dependency=afterok:1000 train.sh",
         "capture the id"),
        ("sbatch --parsable train.sh\nsbatch preprocess.sh", "train was submitted before"),
        ("jid=$(sbatch --parsable preprocess.sh) | cat\n", "pipes"),
    ],
    "four-gpus": [
        (H + "#SBATCH -N1 --gres=gpu:4\nsrun python train.py\n", "NumCPUs=1"),
        (H + "#SBATCH -N1 --gres=gpu:4 -c 32\nsrun --gpus=1 python train.py\n",
         "CUDA_VISIBLE_DEVICES=0;"),
        (H + "#SBATCH -N2 --gres=gpu:2 -c 16\nsrun python train.py\n", "on 2 nodes"),
        (H + "#SBATCH -N1 --gres=gpu:4 --ntasks=4 --cpus-per-gpu=8\nsrun python train.py\n",
         "single task"),
    ],
    "ddp-2x4": [
        (H + "#SBATCH -N1 --gres=gpu:8\nsrun python train.py\n",
         "your job ran 1 task on 1 node with 8 GPUs"),
        (H + "#SBATCH -N2 --gres=gpu:4 --ntasks-per-node=4\nsrun python train.py\n",
         "sees CUDA_VISIBLE_DEVICES=0,1,2,3"),
        (H + "#SBATCH -N2 --gres=gpu:4\nsrun python train.py\n", "asks for 8 ranks"),
        (H + "#SBATCH -N2 --gpus-per-node=2 --ntasks-per-node=2 --gpus-per-task=1\n"
             "srun python train.py\n", "2 + 2 per node"),
        (H + "#SBATCH -N2 --ntasks-per-node=4 --gpus-per-task=1\nsrun hostname\n",
         "runs 'hostname', not python train.py"),
        (H + "#SBATCH -N 2\n#SBATCH -n 8\n#SBATCH --gpus-per-task=1\nsrun python train.py\n",
         "(7 + 1 per node)"),
    ],
    "ddp-drill": [
        (H + "#SBATCH -N2 -n2 --gpus-per-task=1\nsrun python train.py\n", "runs on 1 node"),
        (H + "#SBATCH -N1 -n2 --gres=gpu:2\nsrun python train.py\n", "sees "
         "CUDA_VISIBLE_DEVICES=0,1"),
        (H + "#SBATCH -N1 --gres=gpu:2\nsrun python train.py\n", "asks for 2 ranks"),
    ],
    "qos-eval": [
        (H + "#SBATCH --gres=gpu:2 -t 30\nsrun python eval.py\n", "is not above job"),
        (H + "#SBATCH --qos=debug --gres=gpu:4 -t 30\nsrun python eval.py\n",
         "asks for 4 GPUs"),
        (H + "#SBATCH --qos=debug -p cpu --gres=gpu:2 -t 30\nsrun python eval.py\n",
         "Slurm refused the job"),
        (H + "#SBATCH --qos=debug --gres=gpu:2\nsrun python eval.py\n", "TimeLimit=01:00:00"),
    ],
    "backfill-fit": [
        (H + "#SBATCH -N1 --gres=gpu:8\nsrun python train.py\n", "TimeLimit=01:00:00 it "
         "would still hold gpu04"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 10\nsrun python train.py\n",
         "shorter than the 20 minutes"),
        (H + "#SBATCH -N2 --gres=gpu:8 -t 30\nsrun python train.py\n", "2 node(s)"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 4:00:00\nsrun python train.py\n",
         "TimeLimit=04:00:00"),
    ],
    "survive-preemption": [
        (H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --requeue --open-mode=append\n"
             "#MINISLURM runtime=1:00:00\nsrun python train.py\n", "ran in QOS normal"),
        (H + "#SBATCH -q scavenger -N1 --gres=gpu:8 -t 2:00:00 --no-requeue "
             "--open-mode=append\n#MINISLURM runtime=1:00:00\nsrun python train.py\n",
         "ended PREEMPTED (Requeue=0)"),
        (H + "#SBATCH -q scavenger -N1 --gres=gpu:8 -t 2:00:00 --requeue\n"
             "#MINISLURM runtime=1:00:00\nsrun python train.py\n",
         "--open-mode=truncate (the default)"),
        (H + "#SBATCH -q scavenger -N1 --gres=gpu:8 -t 40 --open-mode=append\n"
             "#MINISLURM runtime=1:00:00\nsrun python train.py\n", "PREEMPTED, TIMEOUT"),
        (H + "#SBATCH -q scavenger -N1 --gres=gpu:8 -t 5 --open-mode=append\n"
             "srun python train.py\n", "before the urgent job came"),
    ],
    "survive-node-failure": [
        (H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --no-requeue --open-mode=append "
             "--signal=B:USR1@300\n#MINISLURM runtime=1:30:00\nsrun python train.py\n",
         "ended NODE_FAIL"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --requeue --signal=B:USR1@300\n"
             "#MINISLURM runtime=1:30:00\nsrun python train.py\n", "would truncate"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --requeue --open-mode=append\n"
             "#MINISLURM runtime=1:30:00\nsrun python train.py\n", "No warning signal"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 2:00:00 --requeue --open-mode=append "
             "--signal=USR1@60\n#MINISLURM runtime=1:30:00\nsrun python train.py\n",
         "comes 60 s before"),
        (H + "#SBATCH -N1 --gres=gpu:8 -t 5 --requeue --open-mode=append "
             "--signal=USR1@180\nsrun python train.py\n", "before the lab failed its node"),
    ],
    "sweep-array": [
        (H + "#SBATCH --array=0-15 --gres=gpu:1 -o sweep-%A_%a.out\nsrun python train.py\n",
         "No ArrayTaskThrottle"),
        (H + "#SBATCH --array=0-15%4 --gres=gpu:1 -o sweep-%A.out\nsrun python train.py\n",
         "share output files"),
        (H + "#SBATCH --array=0-15%4 --gres=gpu:1 -o sweep-%j.out\nsrun python train.py\n",
         "%j is each task's own job id"),
        (H + "#SBATCH --array=0-7%4 --gres=gpu:1 -o sweep-%A_%a.out\nsrun python train.py\n",
         "The array has 8 tasks"),
        (H + "#SBATCH --array=0-15%4 --gres=gpu:2 -o sweep-%A_%a.out\nsrun python train.py\n",
         "got 2 GPUs"),
        (H + "#SBATCH -o sweep-%A_%a.out --gres=gpu:1\nsrun python train.py\n",
         "not a job array"),
    ],
    "diagnose-queue": [("Priority", "Not Priority"), ("Dependency", "Not Dependency"),
                       ("no idea", "Name the reason"), ("Resources or Priority", "say which")],
    "diagnose-timeout": [("NODE_FAIL", "Not NODE_FAIL"), ("it was cancelled", "Not CANCELLED"),
                         ("out of memory", "Not OUT_OF_MEMORY")],
    "diagnose-qos": [("Resources", "Not Resources"), ("Priority", "Not Priority"),
                     ("JobArrayTaskLimit", "Not JobArrayTaskLimit")],
    "diagnose-node-fail": [("TIMEOUT", "Not TIMEOUT"), ("CANCELLED", "Not CANCELLED"),
                           ("preempted", "Not PREEMPTED")],
    "diagnose-priority": [("Resources", "Not Resources"), ("Dependency", "Not Dependency"),
                          ("QOSMaxGRESPerUser", "Not QOSMaxGRESPerUser")],
    "diagnose-start": [("11:30:00", "is not the START_TIME"), ("08:03", "is not the "
                       "START_TIME"), ("soon", "Give a time of day")],
    "diagnose-preempted": [("TIMEOUT", "Not TIMEOUT"), ("NODE_FAIL", "Not NODE_FAIL"),
                           ("scancel", "Not CANCELLED")],
    "diagnose-array": [("Resources", "Not Resources"), ("Priority", "Not Priority"),
                       ("QOS limit", "Not QOSMaxGRESPerUser")],
}


def test_catalogue_covers_every_lesson() -> None:
    assert len(LABS) >= 16
    assert len({x.id for x in LABS}) == len(LABS)
    for lesson in LESSONS:
        labs = by_lesson(lesson)
        assert len(labs) >= 2, lesson
        assert any(x.kind == "diagnose" for x in labs), lesson
    for required in ("first-job", "ddp-2x4", "sweep-array", "survive-node-failure",
                     "after-preprocess"):
        assert lab(required).counted
    assert lab("ddp-drill").practice


def test_every_lab_is_tested() -> None:
    for item in LABS:
        assert len(RIGHT[item.id]) >= 3, item.id
        assert len(WRONG[item.id]) >= 3, item.id
        messages = [check(item.id, text).feedback for text, _ in WRONG[item.id]]
        assert len(set(messages)) == len(messages), f"{item.id}: wrong answers share a message"


@pytest.mark.parametrize("lab_id,text", [(k, t) for k, v in RIGHT.items() for t in v])
def test_right_answers_pass(lab_id: str, text: str) -> None:
    verdict = check(lab_id, text)
    assert verdict.passed, verdict.text()


@pytest.mark.parametrize("lab_id,text,message",
                         [(k, t, m) for k, v in WRONG.items() for t, m in v])
def test_wrong_answers_get_their_message(lab_id: str, text: str, message: str) -> None:
    verdict = check(lab_id, text)
    assert not verdict.passed
    assert message in verdict.text(), verdict.text()


def test_lab_objectives_exist_in_their_lesson_source() -> None:
    from quizzes.author import load_sources

    sources = load_sources()
    for item in LABS:
        objectives = {str(k) for k in sources[item.lesson]["objectives"]}
        assert set(item.objectives) <= objectives, item.id


def test_gpu_bind_as_a_directive_is_inherited_by_srun() -> None:
    text = (H + "#SBATCH --nodes=2 --gres=gpu:4 --ntasks-per-node 4 --gpu-bind=single:1\n"
                "srun python train.py\n")
    assert check("ddp-2x4", text).passed
