"""``python -m minislurm slurmctld [-D] [-f slurm.conf]``: the controller daemon.

The same `minislurm.ctld.Controller` as in the notebooks, on the wall clock
(`minislurm.daemon.realtime`), with `minislurm.slurmd.process_runner.ProcessRunner`
as its node daemons: batch scripts are real local processes. Commands reach
it over a Unix socket in the state directory (`minislurm.common.rpc`): a command is
forwarded whole and runs here against the live controller (its output goes
back to the caller); srun and salloc use the step operations below.

Like Slurm's, ``-D`` keeps it in the foreground; without it the daemon
detaches (``cluster up`` starts it that way) and logs to ``slurmctld.log`` in
the state directory.

Its state lives in ``StateSaveLocation`` (`state_save_location`;
`minislurm.ctld.state_files`, `minislurm.ctld.state_save`): loaded at start, saved
before a changing command is answered, before a job's script is launched, and
within a second of any other change. Batch scripts run under step daemons of their
own (`minislurm.slurmd.slurmstepd`), so stopping or killing slurmctld loses no job:
the next one re-adopts those still running and collects those that ended. ``-i``
starts despite unreadable state files (using the previous good save).
"""

from __future__ import annotations

import gc
import importlib
import io
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm.cli.common import Context
from minislurm.cli.registry import CHANGING, FORWARDED
from minislurm.cli.transport import state_dir
from minislurm.common import rpc
from minislurm.common.accounts import load_associations
from minislurm.conf import SlurmConfig, load_config
from minislurm.ctld import WALL_CLOCK, Controller
from minislurm.ctld.state_files import StateFiles
from minislurm.ctld.state_save import dump_state, load_state
from minislurm.daemon.realtime import RealtimeDriver, realtime_environment
from minislurm.daemon.step_service import StepService
from minislurm.errors import SlurmError
from minislurm.slurmd.process_runner import ProcessBody, ProcessRunner
from minislurm.slurmd.spool import JobSpool, read_json
from minislurm.slurmd.stepd_handle import StepdHandle
from minislurm.states import JobState

#: Step operations that change state (saved before answering).
STEP_OPS = ("allocate", "step_create", "step_pids", "step_complete", "allocation_complete")
#: Seconds between two looks for changes made by the clock itself (job ends, starts).
SAVE_INTERVAL = 1.0


def state_save_location(config: SlurmConfig, env: dict[str, str], state: Path) -> Path:
    """Where the controller saves its state (``StateSaveLocation``).

    ``$MINISLURM_STATE_DIR`` keeps everything of one cluster in one folder (tests, the
    course); else slurm.conf's ``StateSaveLocation`` if it names an absolute path, else
    the state directory (``~/.local/state/minislurm/<ClusterName>``).
    """
    if env.get("MINISLURM_STATE_DIR"):
        return state
    value = str(config.extra.get("StateSaveLocation") or "")
    return Path(value) if value.startswith("/") else state


def log_line(text: str) -> None:
    """One line of slurmctld.log: ``[2026-01-05T08:00:00.123] text``."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now))
    print(f"[{stamp}.{int(now % 1 * 1000):03d}] {text}", flush=True)


class Slurmctld:
    """The controller, its clock, its node daemons and its socket."""

    def __init__(self, conf: str | None = None, *, state: Path | None = None,
                 ignore_state_errors: bool = False) -> None:
        self.conf_path = conf or os.environ.get("SLURM_CONF") or ""
        self.config = load_config(conf)
        env_vars = dict(os.environ)
        if conf:
            env_vars["SLURM_CONF"] = conf
        self.state = state or state_dir(env_vars)
        self.state.mkdir(parents=True, exist_ok=True)
        save_dir = state_save_location(self.config, env_vars, self.state)
        try:
            save_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SlurmError(f"fatal: Unable to stat state save loc: {save_dir}: "
                             f"{exc.strerror}", 1) from exc
        self.files = StateFiles(save_dir)
        self._closing = False
        self._encoded: dict[int, Any] = {}
        self._saved_mark: tuple[int, ...] | None = None
        self.env = realtime_environment()
        self.driver = RealtimeDriver(self.env)
        self.runner = ProcessRunner(self.env, self.config, self.state / "spool",
                                    self.driver.call, conf_path=self.conf_path)
        self.controller = Controller(self.config, self.env, runner=self.runner,
                                     associations=load_associations(), clock=WALL_CLOCK)
        # slurmctld runs as SlurmUser: whoever started this daemon may administer it
        self.controller.operator_uids.add(os.getuid())
        self.steps = StepService(self.controller, self.runner, self.config)
        loaded = self.files.load(ignore=ignore_state_errors)  # StateRecoveryError: refuse
        for line in loaded.log:
            log_line(line)
        if not loaded.empty:
            lines = self.driver.call(lambda: load_state(
                self.controller, loaded.parts, steps=self.steps, runner=self.runner))
            for line in lines:
                log_line(line)
            self.driver.call(self.steps.recovered)
        self.driver.call(self.save_now)
        self._clean_spool()
        self.runner.before_launch = self.save_now
        self.runner.termination = self._termination
        self.server = rpc.Server(self.state / "slurmctld.sock", self.handle)
        self.stopped = threading.Event()

    # ---- state save ------------------------------------------------------------------
    def save_now(self) -> None:
        """Write the state files now (call under the clock's lock: ``driver.call``)."""
        try:
            self.files.save(dump_state(self.controller, steps=self.steps, runner=self.runner,
                                       cache=self._encoded))
        except OSError as exc:  # keep serving; the previous save stays on disk
            log_line(f"error: Could not save state in {self.files.dir}: {exc}")
        self._saved_mark = self._mark()

    def _mark(self) -> tuple[int, ...]:
        """A cheap sign of change: scheduler triggers and passes, accounting rows."""
        ctl = self.controller
        return (ctl.events, ctl.passes["main"], ctl.passes["backfill"],
                len(ctl.accounting_store.attempts), len(ctl._running), len(ctl._pending))

    def _saver(self) -> None:
        """slurmctld's state save thread: what the clock changed goes to disk within 1 s."""
        while not self.stopped.wait(SAVE_INTERVAL):
            if self._closing:
                return
            try:
                self.driver.call(self._save_if_changed)
            except RuntimeError:  # the clock stopped
                return

    def _save_if_changed(self) -> None:
        if self._mark() != self._saved_mark:
            self.save_now()

    def _clean_spool(self) -> None:
        """Spool directories of ended jobs go; step daemons of unknown jobs are killed
        (slurmd's "Killing orphan batch job")."""
        spool = self.state / "spool"
        if not spool.is_dir():
            return
        active = {j.job_id: j for j in self.controller.jobs() if not j.state.is_terminal}
        for job_dir in sorted(spool.glob("job[0-9]*")):
            try:
                job_id = int(job_dir.name[3:])
            except ValueError:
                continue
            if job_id in active:
                continue
            record = read_json(job_dir / "launch.json")
            if record is not None:
                node = str(record.get("task", {}).get("node", ""))
                job_spool = JobSpool(spool, job_id, node, int(record.get("restart_count", 0)))
                handle = StepdHandle.adopt(job_spool)
                if handle is not None:
                    log_line(f"error: Killing orphan batch JobId={job_id}")
                    handle.signal(signal.SIGKILL)
                    handle.wait()
                job_spool.socket.unlink(missing_ok=True)
            shutil.rmtree(job_dir, ignore_errors=True)

    def _termination(self, job_id: int) -> str | None:
        """Why the controller sends SIGTERM to ``job_id`` (for slurmstepd's message)."""
        job = self.controller._jobs.get(job_id)
        if job is None or job.state is not JobState.COMPLETING:
            return None
        return {JobState.TIMEOUT: "TIME LIMIT", JobState.CANCELLED: "",
                JobState.PREEMPTED: "PREEMPTION", JobState.REQUEUED: "JOB REQUEUE",
                }.get(job.final_state)

    # ---- requests -------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one RPC (see `minislurm.common.rpc`)."""
        op = request["op"]
        if op == "ping":
            return {"cluster": self.config.cluster_name, "pid": os.getpid(),
                    "now": self.driver.call(lambda: self.controller.now)}
        if op == "command":
            answer = self.command(request)
            if request.get("name") in CHANGING:
                self.driver.call(self.save_now)
            return answer
        if op == "shutdown":
            kill = bool(request.get("kill_jobs", False))
            threading.Thread(target=self.shutdown, kwargs={"kill_jobs": kill},
                             daemon=True).start()
            return {}
        if op == "wait_start":
            job_id = int(request["job_id"])
            self.driver.wait(lambda: self._state(job_id) != "PENDING",
                             float(request.get("timeout", 1.0)))
            return {"state": self.driver.call(lambda: self._state(job_id))}
        if op == "step_wait":  # a busy srun waits for a step of its job to end
            job_id, ended = int(request["job_id"]), int(request["ended"])
            over = self.driver.wait(lambda: self.steps.waiting_over(job_id, ended),
                                    float(request.get("timeout", 1.0)))
            return {"over": bool(over)}
        handler = {"allocate": self.steps.allocate, "step_create": self.steps.create,
                   "step_pids": self.steps.pids, "step_complete": self.steps.complete,
                   "allocation_complete": self.steps.allocation_complete,
                   "allocation_env": self.steps.allocation_env}.get(op)
        if handler is None:
            raise SlurmError(f"slurmctld: error: unknown request '{op}'")

        def run() -> dict[str, Any]:
            answer = handler(request)
            if op in STEP_OPS:
                self.save_now()
            return answer

        return self.driver.call(run)

    def _state(self, job_id: int) -> str:
        return self.controller.job(job_id).state.value

    def command(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run a forwarded command against the live controller; return its output."""
        name = str(request["name"])
        if name not in FORWARDED:
            raise SlurmError(f"slurmctld: error: command '{name}' is not served here")
        module = importlib.import_module(f"minislurm.cli.{name}")
        out, err = io.StringIO(), io.StringIO()
        ctx = Context(
            stdout=out, stderr=err, env=dict(request.get("env") or {}),
            cwd=str(request.get("cwd") or "/"), stdin=request.get("stdin"),
            controller=lambda: self.controller, user=str(request.get("user", "root")),
            uid=int(request.get("uid", 0)), group=str(request.get("group", "root")),
            gid=int(request.get("gid", 0)), wait=self.driver.wait,
            job_body=lambda inv, c: ProcessBody(
                run_time=None, options=inv.options, script_args=inv.script_args,
                submit_env=dict(c.env), submit_dir=c.cwd),
        )
        rc = self.driver.call(lambda: module.run(list(request.get("argv") or []), ctx))
        return {"stdout": out.getvalue(), "stderr": err.getvalue(), "rc": int(rc)}

    # ---- life cycle -------------------------------------------------------------------
    def serve(self) -> None:
        """Start the clock, the state saver and the socket; block until `shutdown`."""
        gc.freeze()  # the recovered state is long-lived: keep it out of every GC pass
        self.driver.start()
        threading.Thread(target=self._saver, name="state-save", daemon=True).start()
        self.runner.keep_spare()
        self.server.serve_in_thread()
        (self.state / "slurmctld.pid").write_text(f"{os.getpid()}\n")
        log_line(f"slurmctld running, state in {self.files.dir}")
        self.stopped.wait()

    def shutdown(self, *, kill_jobs: bool = False) -> None:
        """Save the state and stop serving.

        Running jobs keep running (their step daemons do not depend on slurmctld) and
        are found again by the next slurmctld -- what ``systemctl stop slurmctld``
        does. ``kill_jobs`` (``cluster down``) first cancels every running job, as
        ``scancel`` would (SIGTERM, SIGKILL after KillWait), and waits for them to end.
        """
        try:
            if kill_jobs:
                def cancel_all() -> None:
                    for job in self.controller.jobs():
                        if job.state in (JobState.RUNNING, JobState.CONFIGURING):
                            self.controller.cancel(job.job_id, uid=0)
                self.driver.call(cancel_all)
                self.driver.wait(lambda: not any(j.state.is_active and j.state
                                                 is not JobState.PENDING
                                                 for j in self.controller.jobs()),
                                 float(self.controller.kill_wait) + 10.0)
            self._closing = True
            self.runner.drop_spare()
            self.server.shutdown()
            self.server.server_close()
            self.driver.stop()
            self.driver.call(self.save_now)
            log_line("Saving all slurm state" + ("" if kill_jobs else
                                                 "; running jobs go on without slurmctld"))
        finally:  # a failure above (a dead clock thread) must still end the daemon
            for name in ("slurmctld.sock", "slurmctld.pid"):
                (self.state / name).unlink(missing_ok=True)
            self.stopped.set()


def main(argv: Sequence[str]) -> int:
    """``slurmctld [-D] [-i] [-f file]``."""
    args = list(argv)
    foreground, ignore, conf = False, False, None
    while args:
        arg = args.pop(0)
        if arg == "-D":
            foreground = True
        elif arg == "-i":
            ignore = True
        elif arg == "-f" and args:
            conf = args.pop(0)
        elif arg.startswith("-f") and len(arg) > 2:
            conf = arg[2:]
        elif arg in ("-h", "--help"):
            print("Usage: slurmctld [-D] [-i] [-f file]   (-D: run in the foreground, "
                  "-i: ignore errors found while reading in state files on startup)")
            return 0
        else:
            print(f"slurmctld: invalid option -- '{arg}'", file=sys.stderr)
            return 1
    if not foreground:
        print("slurmctld: use 'python -m minislurm cluster up' to start it in the background,"
              " or -D for the foreground", file=sys.stderr)
        return 1
    try:
        daemon = Slurmctld(conf, ignore_state_errors=ignore)
    except SlurmError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: threading.Thread(target=daemon.shutdown).start())
    daemon.serve()
    return 0
