"""Lesson 4's experiments: srun's tasks and the torch.distributed ranks they become.

Everything runs on minislurm's *local* cluster (``python -m minislurm cluster up``
with the embedded default slurm.conf: nodes ``gpu[01-04]`` with 64 CPUs each, all
of them this host), with real processes:

* `local_cluster` starts it in a temporary ``$MINISLURM_STATE_DIR`` and always
  brings it down (a context manager);
* `srun_env` runs ``srun -N2 --ntasks-per-node=2 -l env`` there and reduces every
  task's environment to a `TaskRow`: ``SLURM_PROCID``, ``SLURM_LOCALID``,
  ``SLURM_NODEID``, the node, and the ``RANK``/``LOCAL_RANK``/``WORLD_SIZE``/
  ``MASTER_ADDR``/``MASTER_PORT`` that `course.ddp.wiring.wiring_from_env` derives;
* `run_ddp` trains the course's model (`course.ddp.train`, gloo, 2 ranks) as one
  srun step with ``-o rank-%t.log``: each task runs `rank_main`, which logs its
  own ``SLURM_*`` ids and then the training script's records *on every rank*
  (the script itself logs on rank 0 only); `rank_rows`, `loss_curves`,
  `loss_figure` and `digests` read those logs;
* `step_layout` asks minislurm's own task layout (`minislurm.common.layout.distribute`,
  Slurm's ``slurm_step_layout.c``: ``-m block|cyclic``) where each rank runs;
  `layout_figure` draws it and `LayoutExplorer` is the slider widget.

plotly and ipywidgets are imported inside the functions that draw, so that
`rank_main`, which every training rank runs, starts without them.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course.ddp.logfmt import format_record, loss_curve, parse_records
from course.ddp.wiring import master_port, wiring_from_env
from minislurm.cli.cluster import DOWN_TIMEOUT
from minislurm.common.layout import TaskLayout, distribute

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "DISTRIBUTIONS",
    "NODES",
    "DdpRun",
    "FirstJobIdError",
    "LayoutExplorer",
    "LocalCluster",
    "Placement",
    "RankRow",
    "TaskRow",
    "digests",
    "format_rank_rows",
    "format_task_rows",
    "layout_figure",
    "local_cluster",
    "loss_curves",
    "loss_figure",
    "parse_env_dump",
    "placements",
    "rank_main",
    "rank_placement",
    "rank_rows",
    "run_ddp",
    "srun_env",
    "step_layout",
    "table_figure",
    "task_row",
]

REPO = Path(__file__).resolve().parents[2]
#: The embedded default cluster's GPU nodes (minislurm/etc/slurm.conf) and their CPUs.
NODES = ("gpu01", "gpu02", "gpu03", "gpu04")
CPUS_PER_NODE = 64
#: The node-level distributions the widget offers (``srun -m/--distribution``).
DISTRIBUTIONS = ("block", "cyclic")
#: The job id the lesson's first job gets (``FirstJobId``) when its ports are free.
FIRST_JOB_ID = 4001
#: The environment variable that moves the lessons' clusters to another ``FirstJobId``
#: (so another ``MASTER_PORT`` range): for a machine where several learners or courses
#: train side by side.
FIRST_JOB_ID_VAR = "COURSE_FIRST_JOB_ID"
#: The ``FirstJobId`` values slurm.conf accepts below the default ``MaxJobId`` (67043328).
_FIRST_JOB_ID_RANGE = (1, 67_043_327)
#: Every command's wall-clock limit (seconds; 2 shared cores).
LIMIT = 180.0
#: Per-task output files of the training step (``srun -o``; ``%t`` = task id).
RANK_LOG = "rank-%t.log"
#: The variables `srun_env` keeps (the rest of ``env`` is noise for this lesson).
SLURM_VARS = ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NTASKS",
              "SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_STEP_ID", "SLURMD_NODENAME",
              "SLURM_TASKS_PER_NODE", "SLURM_DISTRIBUTION")
_LABELLED = re.compile(r"^\s*(\d+): (\w+)=(.*)$")


# ------------------------------------------------------------------ the local cluster
def _port_free(job_id: int) -> bool:
    """Nobody listens on the job's MASTER_PORT (connections of an earlier job left in
    TIME_WAIT do not count: the TCP store binds with SO_REUSEADDR too)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", master_port(job_id)))
        except OSError:
            return False
    return True


class FirstJobIdError(ValueError):
    """``$COURSE_FIRST_JOB_ID`` is not a job id; the message says so."""


def preferred_first_job_id(env: Mapping[str, str] | None = None) -> int:
    """``$COURSE_FIRST_JOB_ID`` when set (a whole number below slurm.conf's default
    ``MaxJobId``), else `FIRST_JOB_ID` (4001, the id the lessons' stored outputs show)."""
    raw = (os.environ if env is None else env).get(FIRST_JOB_ID_VAR, "").strip()
    if not raw:
        return FIRST_JOB_ID
    low, high = _FIRST_JOB_ID_RANGE
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise FirstJobIdError(
            f"{FIRST_JOB_ID_VAR}={raw!r} is not a job id: give a whole number from "
            f"{low} to {high} (the lessons' clusters start their job ids there)")
    return int(raw)


def free_first_job_id(preferred: int | None = None, jobs: int = 4) -> int:
    """``preferred`` (default `preferred_first_job_id`) if the MASTER_PORTs of its next
    ``jobs`` job ids are free, else the next block of ids whose ports are
    (`course.ddp.wiring.master_port`: two jobs on one port would rendezvous with each
    other)."""
    first = preferred_first_job_id() if preferred is None else preferred
    for _ in range(500):
        if all(_port_free(first + k) for k in range(jobs)):
            return first
        first += jobs
    raise RuntimeError("no free MASTER_PORT range")


@dataclass(frozen=True, slots=True)
class LocalCluster:
    """A running local cluster: its folder and the environment its commands need."""

    root: Path
    env: Mapping[str, str]  # PATH with minislurm's bin/ first, MINISLURM_STATE_DIR, SLURM_CONF
    first_job_id: int

    @property
    def work_dir(self) -> Path:
        """Where jobs run (``root/work``)."""
        return self.root / "work"

    def run(self, argv: Sequence[str], *, cwd: Path | None = None,
            extra_env: Mapping[str, str] | None = None,
            timeout: float = LIMIT) -> subprocess.CompletedProcess[str]:
        """Run a command (``srun ...``, ``sinfo``) as a terminal on the cluster would."""
        return subprocess.run(list(argv), cwd=cwd or self.work_dir,
                              env={**self.env, **(extra_env or {})}, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def _conf_text(first_job_id: int, conf_lines: str = "") -> str:
    """The embedded slurm.conf with ``FirstJobId`` (and ``conf_lines``) set before its
    first NodeName line."""
    text = (resources.files("minislurm") / "etc" / "slurm.conf").read_text(encoding="utf-8")
    return re.sub(r"(?m)^(NodeName=)", f"FirstJobId={first_job_id}\n{conf_lines}\\1", text,
                  count=1)


@contextmanager
def local_cluster(first_job_id: int | None = None, *, conf_lines: str = ""
                  ) -> Iterator[LocalCluster]:
    """``python -m minislurm cluster up`` in a fresh ``/tmp/minislurm-*`` folder with the
    embedded default slurm.conf (+ gres.conf); ``cluster down`` on exit, also after an
    error. ``first_job_id``: ``FirstJobId`` (default: `free_first_job_id` from
    ``$COURSE_FIRST_JOB_ID``, else 4001); ``conf_lines``:
    slurm.conf lines added to the embedded ones (e.g. ``JobAcctGatherType=...``)."""
    first = free_first_job_id() if first_job_id is None else first_job_id
    with tempfile.TemporaryDirectory(prefix="minislurm-") as tmp:
        root = Path(tmp)
        etc = root / "etc"
        etc.mkdir()
        (root / "work").mkdir()
        conf = etc / "slurm.conf"
        conf.write_text(_conf_text(first, conf_lines))
        gres = resources.files("minislurm") / "etc" / "gres.conf"
        (etc / "gres.conf").write_text(gres.read_text(encoding="utf-8"))
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "COURSE_DDP"))}
        env = {**base, "PATH": f"{REPO / 'bin'}{os.pathsep}{base.get('PATH', '')}",
               "MINISLURM_STATE_DIR": str(root / "state"), "SLURM_CONF": str(conf),
               "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
        cluster = LocalCluster(root, env, first)
        cli = [sys.executable, "-m", "minislurm", "cluster"]
        up = cluster.run([*cli, "up", "--conf", str(conf)], cwd=root, timeout=60)
        if up.returncode != 0:
            raise RuntimeError(f"minislurm cluster up failed: {up.stdout}{up.stderr}")
        try:
            yield cluster
        finally:
            cluster.run([*cli, "down"], cwd=root, timeout=DOWN_TIMEOUT + 30)  # it kills by then
            time.sleep(0.2)  # let the daemon finish writing its log before the folder goes


# ------------------------------------------------------------------ srun env -> ranks
@dataclass(frozen=True, slots=True)
class TaskRow:
    """One srun task: Slurm's ids and the torch.distributed names derived from them."""

    procid: int  # SLURM_PROCID
    localid: int  # SLURM_LOCALID
    nodeid: int  # SLURM_NODEID
    node: str  # SLURMD_NODENAME (what `hostname` says on a real cluster)
    rank: int  # RANK
    local_rank: int  # LOCAL_RANK
    world_size: int  # WORLD_SIZE
    master_addr: str  # MASTER_ADDR
    master_port: int  # MASTER_PORT


def task_row(env: Mapping[str, str]) -> TaskRow:
    """A task's row from its environment (`course.ddp.wiring.wiring_from_env`)."""
    w = wiring_from_env(env)
    return TaskRow(int(env["SLURM_PROCID"]), int(env["SLURM_LOCALID"]),
                   int(env["SLURM_NODEID"]), env.get("SLURMD_NODENAME", "?"), w.rank,
                   w.local_rank, w.world_size, w.master_addr, w.master_port)


def parse_env_dump(text: str) -> dict[int, dict[str, str]]:
    """``srun -l env`` output -> task id -> that task's variables."""
    tasks: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        m = _LABELLED.match(line)
        if m:
            tasks.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3)
    return dict(sorted(tasks.items()))


def srun_env(cluster: LocalCluster, nodes: int = 2, ntasks_per_node: int = 2,
             distribution: str | None = None) -> list[TaskRow]:
    """``srun -N<nodes> --ntasks-per-node=<n> [-m dist] -l env`` on ``cluster``: one
    `TaskRow` per task, by ``SLURM_PROCID``. Raises RuntimeError when srun fails."""
    argv = ["srun", f"-N{nodes}", f"--ntasks-per-node={ntasks_per_node}", "-l"]
    if distribution:
        argv.append(f"--distribution={distribution}")
    res = cluster.run([*argv, "env"])
    if res.returncode != 0:
        raise RuntimeError(f"srun failed (rc {res.returncode}): {res.stderr}")
    return [task_row(env) for env in parse_env_dump(res.stdout).values()]


_TASK_HEAD = ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "node", "RANK", "LOCAL_RANK",
              "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _task_cells(r: TaskRow) -> tuple[str, ...]:
    return (str(r.procid), str(r.localid), str(r.nodeid), r.node, str(r.rank),
            str(r.local_rank), str(r.world_size), r.master_addr, str(r.master_port))


def _fixed_width(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True))
             for line in (head, *rows)]
    return "\n".join(lines) + "\n"


def format_task_rows(rows: Sequence[TaskRow]) -> str:
    """The tasks as a fixed-width table, Slurm's names on the left, torch's on the right."""
    return _fixed_width(_TASK_HEAD, [_task_cells(r) for r in rows])


def table_figure(rows: Sequence[TaskRow], title: str = "srun tasks -> torch.distributed"
                 ) -> go.Figure:
    """The tasks as a plotly table (Slurm's columns grey, torch's blue)."""
    import plotly.graph_objects as go

    cells = [list(col) for col in zip(*(_task_cells(r) for r in rows), strict=True)]
    fill = ["#f2f2f2"] * 4 + ["#e6f0ff"] * 5
    fig = go.Figure(go.Table(
        header={"values": list(_TASK_HEAD), "fill_color": ["#d9d9d9"] * 4 + ["#b3cdf5"] * 5},
        cells={"values": cells or [[] for _ in _TASK_HEAD], "fill_color": fill}))
    fig.update_layout(title=title, height=120 + 30 * len(rows), margin={"t": 50, "b": 10},
                      template="plotly_white")
    return fig


# ------------------------------------------------------------------ the DDP run
def rank_main(argv: Sequence[str] | None = None) -> int:
    """What each srun task of `run_ddp` runs: log this task's ``SLURM_*`` ids, then
    `course.ddp.train` (arguments ``argv``) with ``--log-ranks all``, so that each
    rank's ``-o rank-%t.log`` shows that rank's own records."""
    env = os.environ
    print(format_record("note", procid=env.get("SLURM_PROCID"),
                        localid=env.get("SLURM_LOCALID"), nodeid=env.get("SLURM_NODEID"),
                        node=env.get("SLURMD_NODENAME"), ntasks=env.get("SLURM_NTASKS"),
                        job=env.get("SLURM_JOB_ID")), flush=True)
    from course.ddp import train

    args = list(argv if argv is not None else sys.argv[1:])
    return train.main(["--log-ranks", "all", *args])


@dataclass(frozen=True, slots=True)
class DdpRun:
    """One training step: srun's exit code and stderr, each rank's log (task id -> text)."""

    returncode: int
    stderr: str
    logs: Mapping[int, str]
    seconds: float


def run_ddp(cluster: LocalCluster, *, nodes: int = 2, ntasks_per_node: int = 1,
            steps: int = 30, seed: int = 0, folder: str = "ddp") -> DdpRun:
    """``srun -N<nodes> --ntasks-per-node=<n> -K -o rank-%t.log python -m
    course.lessons.ddp_ranks --steps <steps> ...`` in ``<work>/<folder>``: real gloo
    ranks (`rank_main`), one per task; the logs are read back after the step ends."""
    work = cluster.work_dir / folder
    work.mkdir(parents=True, exist_ok=True)
    argv = ["srun", f"-N{nodes}", f"--ntasks-per-node={ntasks_per_node}",
            "--kill-on-bad-exit=1", "-o", RANK_LOG, sys.executable, "-m",
            "course.lessons.ddp_ranks", "--steps", str(steps), "--seed", str(seed),
            "--checkpoint-every", str(steps + 1), "--checkpoint-dir", "checkpoints",
            "--timeout", "60"]
    t0 = time.monotonic()
    res = cluster.run(argv, cwd=work)
    seconds = time.monotonic() - t0
    logs = {int(p.stem.split("-")[1]): p.read_text()
            for p in sorted(work.glob("rank-*.log"))}
    return DdpRun(res.returncode, res.stderr, dict(sorted(logs.items())), seconds)


@dataclass(frozen=True, slots=True)
class RankRow:
    """One rank as its own log tells it: srun's ids and what the script wired."""

    procid: int
    localid: int
    nodeid: int
    node: str
    rank: int  # the script's start record: rank=
    world_size: int  # world=
    launcher: str  # launcher= (slurm: read from SLURM_*)
    master: str  # master=ADDR:PORT
    steps: int  # step records logged
    final_loss: float | None
    digest: str  # final sha256= (the parameters at the end)


def rank_rows(logs: Mapping[int, str]) -> list[RankRow]:
    """One `RankRow` per log (the logs of `run_ddp`), by task id."""
    rows = []
    for _tid, text in sorted(logs.items()):
        rec: dict[str, dict[str, str]] = {}
        for kind, fields in parse_records(text.splitlines()):
            rec.setdefault(kind, fields)
            if kind == "final":
                rec["final"] = fields
        note, start = rec.get("note", {}), rec.get("start", {})
        curve = loss_curve(text.splitlines())
        rows.append(RankRow(
            int(note.get("procid", -1)), int(note.get("localid", -1)),
            int(note.get("nodeid", -1)), note.get("node", "?"), int(start.get("rank", -1)),
            int(start.get("world", 0)), start.get("launcher", "?"), start.get("master", "?"),
            len(curve), curve[-1][1] if curve else None, rec.get("final", {}).get("sha256", "")))
    return rows


def format_rank_rows(rows: Sequence[RankRow]) -> str:
    """The ranks' own records as a fixed-width table (digest shortened to 16 hex)."""
    head = ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "node", "rank", "world",
            "launcher", "master", "steps", "final loss", "sha256")
    cells = [(str(r.procid), str(r.localid), str(r.nodeid), r.node, str(r.rank),
              str(r.world_size), r.launcher, r.master, str(r.steps),
              "" if r.final_loss is None else f"{r.final_loss:.6f}", r.digest[:16])
             for r in rows]
    return _fixed_width(head, cells)


def loss_curves(logs: Mapping[int, str]) -> dict[int, list[tuple[int, float]]]:
    """Task id -> ``[(step, loss), ...]`` (`course.ddp.logfmt.loss_curve` of its log)."""
    return {tid: loss_curve(text.splitlines()) for tid, text in sorted(logs.items())}


def digests(logs: Mapping[int, str]) -> dict[int, str]:
    """Task id -> the ``final sha256=`` digest of that rank's parameters ('' if none)."""
    return {r.procid if r.procid >= 0 else tid: r.digest
            for tid, r in zip(sorted(logs), rank_rows(logs), strict=True)}


def loss_figure(curves: Mapping[int, Sequence[tuple[int, float]]]) -> go.Figure:
    """One loss line per rank (rank 0 solid and wide, the others dashed on top)."""
    import plotly.graph_objects as go

    from minislurm.sim.plots import PALETTE, UIREVISION

    fig = go.Figure()
    for i, (rank, curve) in enumerate(sorted(curves.items())):
        fig.add_trace(go.Scatter(
            x=[s for s, _ in curve], y=[round(v, 8) for _, v in curve],
            name=f"rank {rank}", mode="lines+markers" if i == 0 else "lines",
            line={"color": PALETTE[i % len(PALETTE)], "width": 6 if i == 0 else 2,
                  "dash": "solid" if i == 0 else "dash"}))
    fig.update_layout(template="plotly_white", uirevision=UIREVISION, height=380,
                      title="Training loss logged by each rank (mean over ranks, all-reduced)",
                      xaxis={"title": "step"}, yaxis={"title": "MSE loss", "type": "log"})
    return fig


# ------------------------------------------------------------------ the task layout
def step_layout(nodes: int, tasks_per_node: int, distribution: str = "block") -> TaskLayout:
    """Where ``srun -N<nodes> --ntasks-per-node=<t> -m <distribution>`` puts its tasks on
    the default cluster's GPU nodes: minislurm's `minislurm.common.layout.distribute`, the
    function its step manager calls for every step."""
    if not 1 <= nodes <= len(NODES):
        raise ValueError(f"nodes must be 1..{len(NODES)}")
    return distribute(nodes * tasks_per_node, NODES[:nodes], [CPUS_PER_NODE] * nodes,
                      ntasks_per_node=tasks_per_node, distribution=distribution)


@dataclass(frozen=True, slots=True)
class Placement:
    """One task of a layout: its node and the ranks torch.distributed would get."""

    node: str
    node_index: int  # SLURM_NODEID
    rank: int  # SLURM_PROCID = RANK
    local_rank: int  # SLURM_LOCALID = LOCAL_RANK


def placements(layout: TaskLayout) -> list[Placement]:
    """Every task of ``layout``, by rank."""
    out = [Placement(layout.nodes[i], i, t, local)
           for i, tids in enumerate(layout.task_ids) for local, t in enumerate(tids)]
    return sorted(out, key=lambda p: p.rank)


def rank_placement(layout: TaskLayout, rank: int) -> str:
    """Where task ``rank`` of ``layout`` runs, as the lesson's prediction offers it:
    ``"gpu02, LOCAL_RANK 1"``."""
    p = next((p for p in placements(layout) if p.rank == rank), None)
    if p is None:
        raise ValueError(f"the layout has no rank {rank}")
    return f"{p.node}, LOCAL_RANK {p.local_rank}"


#: The explorer's prediction: where rank PREDICT_RANK of this step runs.
PREDICT_STEP = (3, 2, "cyclic")
PREDICT_RANK = 4


def layout_figure(layout: TaskLayout, *, lang: str = "en") -> go.Figure:
    """Nodes as columns, one box per task (``rank r`` / ``local l``) stacked by local rank;
    rank 0's node is marked as ``MASTER_ADDR``.  ``lang``: the language of the x axis
    title (the srun command, the variables, ``rank`` and node names stay)."""
    import plotly.graph_objects as go

    from course.i18n import t
    from course.lessons.figure_words import localise
    from minislurm.sim.plots import PALETTE, UIREVISION

    tasks = placements(layout)
    per_node = max(layout.tasks_per_node, default=1)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[p.node for p in tasks], y=[p.local_rank for p in tasks], mode="markers+text",
        marker={"symbol": "square", "size": 58,
                "color": [PALETTE[p.rank % len(PALETTE)] for p in tasks],
                "line": {"width": [4 if p.rank == 0 else 0 for p in tasks], "color": "black"}},
        text=[f"rank {p.rank}<br>local {p.local_rank}" for p in tasks],
        textfont={"color": "white"}, name="tasks", showlegend=False,
        customdata=[[p.rank, p.local_rank, p.node_index] for p in tasks],
        hovertemplate="RANK=%{customdata[0]} LOCAL_RANK=%{customdata[1]}"
                      " SLURM_NODEID=%{customdata[2]}<extra></extra>"))
    master = next((p for p in tasks if p.rank == 0), None)
    if master is not None:
        fig.add_annotation(x=master.node, y=per_node - 0.35, showarrow=False,
                           text=f"MASTER_ADDR = {master.node} (rank 0)",
                           font={"color": "black", "size": 13})
    world = len(tasks)
    fig.update_layout(
        template="plotly_white", uirevision=UIREVISION, height=200 + 70 * per_node,
        title=(f"srun -N{len(layout.nodes)} --ntasks-per-node={per_node} "
               f"-m {layout.distribution}: WORLD_SIZE={world}"),
        xaxis={"title": t(lang, "node (SLURM_NODEID left to right)"), "type": "category",
               "categoryorder": "array", "categoryarray": list(layout.nodes)},
        yaxis={"title": "SLURM_LOCALID", "range": [-0.6, per_node - 0.1], "dtick": 1},
        margin={"t": 60})
    return localise(fig, lang)


def _plotly_output(fig: go.Figure) -> dict[str, Any]:
    import plotly.io as pio

    bundle = pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


class LayoutExplorer:
    """Sliders for ``-N`` and ``--ntasks-per-node``, buttons for ``-m``; the layout follows.

    Every control calls `refresh` (a plain method, so tests drive it without a browser).
    Before it opens, the learner predicts where rank `PREDICT_RANK` of the step
    `PREDICT_STEP` runs (`rank_placement`); the check sets the controls to that step.
    """

    def __init__(self, nodes: int = 2, tasks_per_node: int = 2,
                 distribution: str = "block", lang: str | None = None) -> None:
        import ipywidgets as widgets

        from course.i18n import t, widget_lang
        from course.lessons.predict import BusyIndicator, ChoiceQuestion, PredictStep

        self.lang = lang = widget_lang(lang)
        style = {"description_width": "150px"}
        self.nodes = widgets.IntSlider(nodes, min=1, max=len(NODES),
                                       description=t(lang, "-N (nodes)"),
                                       continuous_update=False, style=style)
        self.tasks = widgets.IntSlider(tasks_per_node, min=1, max=4, continuous_update=False,
                                       description="--ntasks-per-node", style=style)
        self.distribution = widgets.ToggleButtons(options=list(DISTRIBUTIONS),
                                                  value=distribution, description="-m")
        for w in (self.nodes, self.tasks, self.distribution):
            w.observe(lambda _change: self.refresh(), names="value")
        self.figure_view = widgets.Output()
        self.table = widgets.HTML()
        self.busy = BusyIndicator(lang)
        body = widgets.VBox([widgets.HBox([widgets.VBox([self.nodes, self.tasks]),
                                           self.distribution, self.busy.view]),
                             self.figure_view, self.table])
        n, per_node, d = PREDICT_STEP
        question = ChoiceQuestion(
            t(lang, "`srun -N{nodes} --ntasks-per-node={tasks} -m {distribution}`: on which "
              "node does rank {rank} run, and with which LOCAL_RANK?").format(
                nodes=n, tasks=per_node, distribution=d, rank=PREDICT_RANK),
            tuple(f"{node}, LOCAL_RANK {local}" for node in NODES[:n]
                  for local in range(per_node)),
            lambda: rank_placement(step_layout(*PREDICT_STEP), PREDICT_RANK))
        self.predict = PredictStep(question, body, on_checked=self._show_prediction,
                                   busy=self.busy)
        self.box = widgets.VBox([self.predict.view, body])
        self.layout = step_layout(nodes, tasks_per_node, distribution)
        self.figure = layout_figure(self.layout, lang=lang)
        self.refresh()

    def _show_prediction(self) -> None:
        n, t, d = PREDICT_STEP
        self.nodes.value, self.tasks.value, self.distribution.value = n, t, d

    def refresh(self) -> None:
        """Lay the step out for the controls' values and redraw."""
        with self.busy.working("laying out the tasks…"):
            self.layout = step_layout(int(self.nodes.value), int(self.tasks.value),
                                      str(self.distribution.value))
            self.figure = layout_figure(self.layout, lang=self.lang)
            self.figure_view.outputs = (_plotly_output(self.figure),)
            gtids = "  ".join(f"{n}: SLURM_GTIDS={self.layout.gtids(i) or '-'}"
                              for i, n in enumerate(self.layout.nodes))
            self.table.value = ("<pre>SLURM_TASKS_PER_NODE="
                                f"{self.layout.tasks_per_node_string()}\n{gtids}</pre>")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.box)


if __name__ == "__main__":
    code = rank_main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # as course.ddp.train.run_and_exit: skip torch's finalisation
