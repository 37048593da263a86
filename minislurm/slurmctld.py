"""``python -m minislurm slurmctld [-D] [-f slurm.conf]``: the controller daemon.

The same `minislurm.ctld.Controller` as in the notebooks, on the wall clock
(`minislurm.realtime`), with `minislurm.slurmd.process_runner.ProcessRunner`
as its node daemons: batch scripts are real local processes. Commands reach
it over a Unix socket in the state directory (`minislurm.rpc`): a command is
forwarded whole and runs here against the live controller (its output goes
back to the caller); srun and salloc use the step operations below.

Like Slurm's, ``-D`` keeps it in the foreground; without it the daemon
detaches (``cluster up`` starts it that way) and logs to ``slurmctld.log`` in
the state directory.
"""

from __future__ import annotations

import importlib
import io
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from minislurm import rpc
from minislurm.accounts import load_associations
from minislurm.cli.common import Context
from minislurm.cli.transport import state_dir
from minislurm.config import load_config
from minislurm.ctld import Controller
from minislurm.ctld.step_service import StepService
from minislurm.errors import SlurmError
from minislurm.realtime import RealtimeDriver, realtime_environment
from minislurm.slurmd.process_runner import ProcessBody, ProcessRunner

#: Commands the daemon runs for its clients (srun/salloc talk to it through steps).
FORWARDED = ("sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sprio", "sshare")


class Slurmctld:
    """The controller, its clock, its node daemons and its socket."""

    def __init__(self, conf: str | None = None, *, state: Path | None = None) -> None:
        self.conf_path = conf or os.environ.get("SLURM_CONF") or ""
        self.config = load_config(conf)
        env_vars = dict(os.environ)
        if conf:
            env_vars["SLURM_CONF"] = conf
        self.state = state or state_dir(env_vars)
        self.state.mkdir(parents=True, exist_ok=True)
        self.env = realtime_environment()
        self.driver = RealtimeDriver(self.env)
        self.runner = ProcessRunner(self.env, self.config, self.state / "spool",
                                    self.driver.call, conf_path=self.conf_path)
        self.controller = Controller(self.config, self.env, runner=self.runner,
                                     associations=load_associations())
        self.steps = StepService(self.controller, self.runner, self.config)
        self.server = rpc.Server(self.state / "slurmctld.sock", self.handle)
        self.stopped = threading.Event()

    # ---- requests -------------------------------------------------------------------
    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one RPC (see `minislurm.rpc`)."""
        op = request["op"]
        if op == "ping":
            return {"cluster": self.config.cluster_name, "pid": os.getpid(),
                    "now": self.driver.call(lambda: self.controller.now)}
        if op == "command":
            return self.command(request)
        if op == "shutdown":
            threading.Thread(target=self.shutdown, daemon=True).start()
            return {}
        if op == "wait_start":
            job_id = int(request["job_id"])
            self.driver.wait(lambda: self._state(job_id) != "PENDING",
                             float(request.get("timeout", 1.0)))
            return {"state": self.driver.call(lambda: self._state(job_id))}
        handler = {"allocate": self.steps.allocate, "step_create": self.steps.create,
                   "step_pids": self.steps.pids, "step_complete": self.steps.complete,
                   "allocation_complete": self.steps.allocation_complete,
                   "allocation_env": self.steps.allocation_env}.get(op)
        if handler is None:
            raise SlurmError(f"slurmctld: error: unknown request '{op}'")
        return self.driver.call(lambda: handler(request))

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
        """Start the clock and the socket; block until `shutdown`."""
        self.driver.start()
        self.server.serve_in_thread()
        (self.state / "slurmctld.pid").write_text(f"{os.getpid()}\n")
        self.stopped.wait()

    def shutdown(self) -> None:
        """Stop serving: running jobs are signalled (SIGTERM) and the socket removed."""
        def stop_jobs() -> None:
            for job in self.controller.jobs():
                if job.state.is_active:
                    self.runner.kill(job.job_id, signal.SIGTERM)
        self.driver.call(stop_jobs)
        self.server.shutdown()
        self.server.server_close()
        self.driver.stop()
        for name in ("slurmctld.sock", "slurmctld.pid"):
            (self.state / name).unlink(missing_ok=True)
        self.stopped.set()


def main(argv: Sequence[str]) -> int:
    """``slurmctld [-D] [-f file]``."""
    args = list(argv)
    foreground, conf = False, None
    while args:
        arg = args.pop(0)
        if arg == "-D":
            foreground = True
        elif arg == "-f" and args:
            conf = args.pop(0)
        elif arg.startswith("-f") and len(arg) > 2:
            conf = arg[2:]
        elif arg in ("-h", "--help"):
            print("Usage: slurmctld [-D] [-f file]   (-D: run in the foreground)")
            return 0
        else:
            print(f"slurmctld: invalid option -- '{arg}'", file=sys.stderr)
            return 1
    try:
        daemon = Slurmctld(conf)
    except SlurmError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
    if not foreground:
        print("slurmctld: use 'python -m minislurm cluster up' to start it in the background,"
              " or -D for the foreground", file=sys.stderr)
        return 1
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: threading.Thread(target=daemon.shutdown).start())
    daemon.serve()
    return 0
