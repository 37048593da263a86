"""Diagnose labs: read minislurm's own output for a scenario and say what happened.

Each scenario is played on a fresh `minislurm.sim.cluster.Cluster` on the simulated
clock; the learner sees what ``squeue``, ``sprio``, ``squeue --start`` or ``sacct``
print for it (the `Exhibit`), and answers in a word or a sentence.  The answer is
graded against what minislurm itself reports for that scenario (the pending
Reason of a job, the State sacct gives an attempt, the StartTime the scheduler
plans): nothing here stores the expected answer, it is read from the records.

The answer's words are mapped to Slurm's terms (`TERMS`: ``time limit`` ->
``TIMEOUT``, ``higher priority`` -> ``Priority``...).  An answer naming the
right term and no competing one passes; a wrong term gets a message saying
what that term would mean and where the exhibit contradicts it.  The feedback is
said in the learner's language (messages of the ``quizzes`` gettext catalogue); the
terms themselves are Slurm's words, the same in every language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from minislurm.common.timespec import format_timestamp
from minislurm.sim import Cluster
from quizzes.i18n import M, Msg
from quizzes.labs.model import Verdict


@dataclass(frozen=True, slots=True)
class Exhibit:
    """What the learner is shown (commands and their output) and the record's truth."""

    text: str
    truth: str  # a key of TERMS, or a time (HH:MM:SS) for kind "time"
    kind: str = "term"


#: Slurm's terms and the phrasings that name them (lower case, ``_``/``-`` read as spaces,
#: accents dropped): English, then Portuguese (a pt-BR learner may answer in either).
TERMS: dict[str, tuple[str, ...]] = {
    "Resources": ("resources", "not enough free", "no free", "nodes are busy",
                  "cluster is full", "all gpus are in use", "all gpus busy", "busy",
                  "recursos", "ocupad", "cluster cheio", "nenhum no livre", "nenhuma gpu livre",
                  "sem nos livres", "sem gpus livres"),
    "Priority": ("priority", "prioridade"),
    "Dependency": ("dependency", "dependencia"),
    "QOSMaxGRESPerUser": ("qosmaxgrespreuser", "qosmaxgresperuser", "qos limit",
                          "maxtresperuser", "maxtrespu", "qos gpu limit", "qos max gres",
                          "limite da qos", "limite de qos", "limite de gpus da qos",
                          "limite de gpus por usuario"),
    "JobArrayTaskLimit": ("jobarraytasklimit", "array task limit", "throttle",
                          "arraytaskthrottle", "array limit", "limite do array",
                          "limite de tasks do array"),
    "TIMEOUT": ("timeout", "time limit", "timelimit", "out of time", "walltime",
                "ran too long", "tempo limite", "limite de tempo", "estourou o tempo",
                "acabou o tempo"),
    "NODE_FAIL": ("node fail", "node failure", "node failed", "node died", "node crashed",
                  "node went down", "node down", "falha do no", "falha de no", "no falhou",
                  "no caiu", "no morreu", "no fora do ar"),
    "PREEMPTED": ("preempt", "preempca", "preemcao"),
    "OUT_OF_MEMORY": ("out of memory", "oom", "sem memoria", "falta de memoria",
                      "memoria insuficiente", "estouro de memoria"),
    "CANCELLED": ("cancelled", "canceled", "scancel", "cancelad", "cancelou", "cancelamento"),
    "FAILED": ("failed", "non zero exit", "exit code", "falhou", "codigo de saida"),
}
#: Phrases naming a node's failure, which also hold FAILED's word.
NODE_FAILED = ("node failed", "no falhou")

#: What each term would mean, said when it is the wrong diagnosis.
MEANS: dict[str, Msg] = {
    "Resources": M("Resources means the job is first in line but the free nodes/GPUs are "
                   "not enough yet"),
    "Priority": M("Priority means a job with a higher priority is ahead of it in the queue "
                  "(sprio shows the factors)"),
    "Dependency": M("Dependency means it waits for another job (squeue's Reason would say "
                    "so)"),
    "QOSMaxGRESPerUser": M("QOSMaxGRESPerUser means the QOS caps the GPUs one user may "
                           "hold"),
    "JobArrayTaskLimit": M("JobArrayTaskLimit means the array's %N throttle holds it back"),
    "TIMEOUT": M("TIMEOUT means the job reached its TimeLimit (Elapsed = Timelimit)"),
    "NODE_FAIL": M("NODE_FAIL means a node of the job stopped answering"),
    "PREEMPTED": M("PREEMPTED means a job of a higher-priority QOS took its resources"),
    "OUT_OF_MEMORY": M("OUT_OF_MEMORY means the cgroup memory limit killed it"),
    "CANCELLED": M("CANCELLED means scancel (a user or an admin) ended it"),
    "FAILED": M("FAILED means the script exited with a non-zero code"),
}


def mentioned(answer: str) -> list[str]:
    """The Slurm terms an answer names, in `TERMS` order."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", answer.lower())
                    if not unicodedata.combining(c))
    text = " " + re.sub(r"[\s_\-]+", " ", plain) + " "
    found = []
    for term, phrases in TERMS.items():
        if any(p in text for p in phrases):
            found.append(term)
    if "FAILED" in found and "NODE_FAIL" in found and any(p in text for p in NODE_FAILED):
        found.remove("FAILED")
    return found


def grade_term(answer: str, exhibit: Exhibit) -> Verdict:
    """Pass when the answer names minislurm's term and no competing one."""
    said = mentioned(answer)
    if not said:
        return Verdict.said(False, M("Name the reason or the state in Slurm's words (the "
                                     "REASON column of squeue, the State column of sacct)."))
    if len(said) > 1:
        return Verdict.said(False, M("Your answer names {terms}: say which one it is.",
                                     terms=", ".join(said)))
    if said[0] == exhibit.truth:
        return Verdict.said(True, M("Right: minislurm reports {term} for this job. {means}.",
                                    term=exhibit.truth, means=MEANS[exhibit.truth]))
    return Verdict.said(False, M("Not {term}: {means}, and the output above does not show "
                                 "that. Read the columns again.", term=said[0],
                                 means=MEANS[said[0]]))


_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")


def grade_time(answer: str, exhibit: Exhibit) -> Verdict:
    """Pass when the answer gives the planned start time (HH:MM, or HH:MM:SS) minislurm
    reports, to the minute."""
    match = _TIME.search(answer)
    if match is None:
        return Verdict.said(False, M("Give a time of day as squeue --start prints it "
                                     "(HH:MM:SS)."))
    said = f"{int(match.group(1)):02d}:{match.group(2)}"
    if said == exhibit.truth[:5]:
        return Verdict.said(True, M("Right: the scheduler plans the start at {time}.",
                                    time=exhibit.truth))
    return Verdict.said(False, M("{time} is not the START_TIME squeue --start gives for that "
                                 "job; read its row (not the running jobs' end times).",
                                 time=said))


def _show(c: Cluster, *commands: str) -> str:
    parts = []
    for cmd in commands:
        parts.append(f"$ {cmd}\n{c.run(cmd)}".rstrip("\n"))
    return "\n\n".join(parts) + "\n"


def _fill_gpus(c: Cluster, user: str = "alice", hours: str = "4:00:00") -> None:
    for _ in range(4):
        c.run(["sbatch", "-J", "llm", "--gres=gpu:8", "-t", hours, "--wrap",
               "srun sleep 12000"], user=user)


def _queue_full() -> Exhibit:
    c = Cluster()
    _fill_gpus(c)
    c.advance(60)
    c.run(["sbatch", "-J", "train", "--gres=gpu:1", "-t", "1:00:00", "--wrap",
           "srun python train.py"])
    c.advance(120)
    job = next(j for j in c.jobs() if j.name == "train")
    return Exhibit(_show(c, "squeue"), job.reason.value)


def _timeout() -> Exhibit:
    c = Cluster()
    c.run(["sbatch", "-J", "train", "--gres=gpu:1", "-t", "20", "--wrap",
           "srun sleep 3600"])
    c.advance(2 * 3600)
    job = next(j for j in c.jobs() if j.name == "train")
    return Exhibit(_show(c, "sacct -o JobID,JobName,State,ExitCode,Elapsed,Timelimit"),
                   job.state.value)


def _qos_limit() -> Exhibit:
    c = Cluster()
    c.run(["sbatch", "-J", "finetune", "--qos=debug", "--gres=gpu:4", "-t", "30", "--wrap",
           "srun python train.py"])
    c.advance(120)
    job = next(j for j in c.jobs() if j.name == "finetune")
    return Exhibit(_show(c, "squeue", "scontrol show job -o " + str(job.job_id)),
                   job.reason.value)


def _node_fail() -> Exhibit:
    c = Cluster()
    c.run(["sbatch", "-J", "ddp", "-N2", "--ntasks-per-node=4", "--gpus-per-task=1",
           "--no-requeue", "-t", "2:00:00", "--wrap", "srun sleep 5000"])
    c.advance(1200)
    job = next(j for j in c.jobs() if j.name == "ddp")
    assert job.allocation is not None
    c.controller.fail_node(job.allocation.nodes[1].node)
    c.advance(60)
    job = c.controller.job(job.job_id)
    return Exhibit(_show(c, "sacct -o JobID,JobName,State,ExitCode,Elapsed,NodeList"),
                   job.state.value)


def _priority() -> Exhibit:
    c = Cluster()
    _fill_gpus(c, hours="2:00:00")
    c.advance(60)
    c.run(["sbatch", "-J", "big", "-N4", "--gres=gpu:8", "-t", "4:00:00", "--wrap",
           "srun sleep 3000"], user="alice")
    c.advance(600)
    c.run(["sbatch", "-J", "train", "--gres=gpu:8", "-t", "4:00:00", "--wrap",
           "srun python train.py"])
    c.advance(120)
    job = next(j for j in c.jobs() if j.name == "train")
    return Exhibit(_show(c, "squeue", "sprio"), job.reason.value)


def _start_time() -> Exhibit:
    c = Cluster()
    for hours in ("1:30:00", "2:00:00", "3:00:00", "4:00:00"):
        c.run(["sbatch", "-J", "llm", "--gres=gpu:8", "-t", hours, "--wrap",
               "srun sleep 20000"], user="alice")
    c.advance(60)
    c.run(["sbatch", "-J", "wide", "-N2", "--gres=gpu:8", "-t", "4:00:00", "--wrap",
           "srun python train.py"])
    c.advance(120)
    job = next(j for j in c.jobs() if j.name == "wide")
    start = format_timestamp(job.start_time or 0)
    return Exhibit(_show(c, "squeue", "squeue --start"), start.split("T")[-1], kind="time")


def _preempted() -> Exhibit:
    c = Cluster()
    for _ in range(4):
        c.run(["sbatch", "--qos=scavenger", "-J", "scav", "--gres=gpu:8", "-t", "4:00:00",
               "--wrap", "sleep 7200"], user="alice")
    c.advance(600)
    c.run(["sbatch", "--qos=high", "-J", "urgent", "--gres=gpu:8", "-t", "1:00:00",
           "--wrap", "sleep 600"], user="alice")
    c.advance(300)
    first = min((r for r in c.controller.accounting() if r.name == "scav"),
                key=lambda r: (r.end_time is None, r.end_time or 0))
    return Exhibit(_show(c, "sacct -a -X -o JobID,JobName,QOS,State,ExitCode,Elapsed"),
                   first.state.value)


def _array_throttle() -> Exhibit:
    c = Cluster()
    c.run(["sbatch", "-J", "sweep", "--array=0-15%4", "--gres=gpu:1", "-t", "1:00:00",
           "--wrap", "srun sleep 1800"])
    c.advance(300)
    pending = [j for j in c.controller.jobs(expand_arrays=True)
               if j.name == "sweep" and j.state.value == "PENDING"]
    return Exhibit(_show(c, "squeue"), pending[0].reason.value)


SCENARIOS: dict[str, Callable[[], Exhibit]] = {
    "queue-full": _queue_full,
    "timeout": _timeout,
    "qos-limit": _qos_limit,
    "node-fail": _node_fail,
    "priority": _priority,
    "start-time": _start_time,
    "preempted": _preempted,
    "array-throttle": _array_throttle,
}


@cache
def exhibit(name: str) -> Exhibit:
    """The scenario's output and truth, played once per process (deterministic)."""
    return SCENARIOS[name]()


def grade(name: str, answer: str) -> Verdict:
    """Grade a diagnosis of scenario ``name``."""
    ex = exhibit(name)
    return grade_time(answer, ex) if ex.kind == "time" else grade_term(answer, ex)
