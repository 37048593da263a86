"""``class up`` / ``down`` / ``status``: a real JupyterHub for the class on this machine.

``up`` prepares the class folder (``private/`` 0700: issuer key, gradebook, banks,
hub secrets; the learner image; homes), creates the learners' Unix users when the
hub runs as root (``useradd``), writes ``jupyterhub_config.py``
(:mod:`.hubconfig`) and starts ``jupyterhub`` in the background with
configurable-http-proxy on PATH; it returns when the hub and the quiz service
answer through the proxy.  ``down`` stops every learner's server (each stops its
cluster) and then the hub (which stops the proxy and the service).  ``status``
says what runs, as which Unix users, and whether learners can read answer
material.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from course.classroom import hubapi, image, runtime
from course.classroom.config import PASSWORD_FILE, ClassConfig
from course.classroom.errors import ClassError
from course.classroom.hubconfig import hub_config
from course.classroom.paths import ClassPaths

REPO = Path(__file__).resolve().parents[2]
#: Where scripts/setup installs configurable-http-proxy (git-ignored).
NODE_DIR = REPO / ".class-node"
UP_TIMEOUT = 90.0
#: The GECOS field of the Unix users ``class up`` creates (``<comment> <class name>``).
USER_COMMENT = "minislurm course class"
DOWN_TIMEOUT = 60.0


def proxy_bin() -> Path:
    """configurable-http-proxy: on PATH, else under .class-node/ (ClassError if neither)."""
    local = NODE_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
    if local.exists():
        return local
    found = shutil.which("configurable-http-proxy")
    if found:
        return Path(found)
    raise ClassError("configurable-http-proxy is not installed: run "
                     f"'npm install --prefix {NODE_DIR} configurable-http-proxy' "
                     "(scripts/setup does)")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, e.g. a hub started by this very process and not
    yet reaped, counts as gone)."""
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def hub_pid(paths: ClassPaths) -> int | None:
    """The running hub's pid, or None."""
    try:
        pid = int(paths.hub_pid.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def _get(url: str, timeout: float = 5.0) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError):
        return 0


def _secret(path: Path) -> None:
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")


def spawn_mode(cfg: ClassConfig, uid: int | None = None) -> str:
    """The spawner this class gets on this machine (``unix-users`` needs root and a
    Python the learners can run: :func:`course.classroom.runtime.available`)."""
    return cfg.spawn_mode(uid, shared=runtime.available())


def prepare(cfg: ClassConfig, paths: ClassPaths, uid: int | None = None) -> str:
    """Create the class folder, keys, banks, image, homes and users; returns the mode."""
    from quizzes.keys import generate

    mode = spawn_mode(cfg, uid)
    if mode == "unix-users" and (uid if uid is not None else os.geteuid()) != 0:
        raise ClassError("spawn: unix-users needs the hub to run as root (it switches to "
                         "each learner's Unix user); use spawn: one-user")
    if mode == "unix-users":
        blocked = [f for f in paths.root.resolve().parents
                   if f.exists() and not os.stat(f).st_mode & 0o001]
        if blocked:
            raise ClassError(f"spawn: unix-users, but learners cannot reach {paths.root}: "
                             f"{blocked[0]} is not searchable by other users (chmod o+x it, "
                             "or put the class's dir elsewhere)")
    for folder, perm in ((paths.root, 0o755), (paths.private, 0o700),
                         (paths.hub_log.parent, 0o700), (paths.revocations.parent, 0o755),
                         (paths.homes, 0o755)):
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(perm)
    if not paths.key.exists():
        _, pub = generate(paths.private / "issuer")
        shutil.copy(pub, paths.revocations.parent / "issuer.pub")
    if paths.banks.exists():
        shutil.rmtree(paths.banks)
    shutil.copytree(REPO / "quizzes" / "banks", paths.banks)
    _secret(paths.proxy_token)
    _secret(paths.admin_token)
    # learners' Python: the hub's if they can run it, else the class's own virtualenv
    python = (runtime.learner_python(paths.root / "python") if mode == "unix-users"
              else Path(sys.executable))
    image.build(REPO, paths.image, python_prefix=python.parent.parent)
    for user in cfg.users:
        home = paths.home(user)
        if mode == "unix-users":
            try:
                known = pwd.getpwnam(user)
            except KeyError:
                known = None
            if known is not None and known.pw_gecos.startswith(USER_COMMENT) \
                    and known.pw_dir != str(home):  # made by an earlier class: its home here
                subprocess.run(["usermod", "--home", str(home), user], check=True,
                               capture_output=True, timeout=60)
            elif known is None:  # a site's own user keeps their home
                subprocess.run(["useradd", "--no-create-home", "--home-dir", str(home),
                                "--shell", "/bin/bash", "--user-group",
                                "--comment", f"{USER_COMMENT} {cfg.name}", user], check=True,
                               capture_output=True, timeout=60)
            home.mkdir(exist_ok=True)
            info = pwd.getpwnam(user)
            os.chown(home, info.pw_uid, info.pw_gid)
            home.chmod(0o700)
        else:
            home.mkdir(exist_ok=True)
    paths.hub_config.write_text(hub_config(cfg, paths, repo=REPO, uid=uid,
                                           shared=runtime.available(),
                                           learner_python=str(python)), encoding="utf-8")
    return mode


def up(cfg: ClassConfig) -> int:
    """Start the class's hub (no-op if it runs); returns its pid."""
    paths = ClassPaths(cfg.dir)
    running = hub_pid(paths)
    if running is not None:
        return running
    if cfg.authenticator == PASSWORD_FILE and (cfg.passwords is None
                                                or not cfg.passwords.exists()):
        raise ClassError(f"no password file at {cfg.passwords}: add users with "
                         "'python -m course class passwd USER --config class.yaml'")
    chp = proxy_bin()
    prepare(cfg, paths)
    env = dict(os.environ)
    env["PATH"] = f"{chp.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    with open(paths.hub_log, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(paths.hub_config)],
                                cwd=paths.private, env=env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + UP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = paths.hub_log.read_text(errors="replace").splitlines()[-8:]
            raise ClassError("jupyterhub exited at start:\n" + "\n".join(tail))
        if (_get(f"{cfg.url}/hub/api/") == 200
                and _get(f"{cfg.url}/services/quizzes/healthz") == 200):
            return proc.pid
        time.sleep(0.25)
    proc.terminate()
    raise ClassError(f"the hub did not answer at {cfg.url} within {UP_TIMEOUT:.0f} s "
                     f"(log: {paths.hub_log})")


def admin_token(paths: ClassPaths) -> str:
    return paths.admin_token.read_text().strip()


def stop_servers(cfg: ClassConfig, paths: ClassPaths, timeout: float = DOWN_TIMEOUT) -> list[str]:
    """Stop every running server through the hub's API; returns the users stopped."""
    token = admin_token(paths)
    code, users = hubapi.call(cfg.url, token, "GET", "users")
    if code != 200:
        raise ClassError(f"the hub refused to list users ({code}: {users})")
    running = [u["name"] for u in users if u.get("server") or u.get("pending")]
    for name in running:
        hubapi.call(cfg.url, token, "DELETE", f"users/{name}/server")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, users = hubapi.call(cfg.url, token, "GET", "users")
        if not any(u.get("server") or u.get("pending") for u in users):
            break
        time.sleep(0.5)
    return running


def stop_hub(paths: ClassPaths, timeout: float = DOWN_TIMEOUT) -> bool:
    """SIGTERM the hub (it stops its proxy and service), SIGKILL after ``timeout``."""
    pid = hub_pid(paths)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.2)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    return True


def down(cfg: ClassConfig) -> list[str]:
    """Stop the learners' servers (and clusters), then the hub; returns who was stopped."""
    paths = ClassPaths(cfg.dir)
    if hub_pid(paths) is None:
        return []
    stopped = stop_servers(cfg, paths)
    stop_hub(paths)
    return stopped


@dataclass(frozen=True, slots=True)
class Status:
    name: str
    url: str
    hub_pid: int | None
    mode: str
    run_as: str
    authenticator: str
    service: str
    servers: tuple[tuple[str, str, bool], ...]  # (user, role, server running)
    keys: str

    def lines(self) -> list[str]:
        state = f"up (hub pid {self.hub_pid})" if self.hub_pid else "down"
        out = [f"class {self.name}: {state} at {self.url}",
               f"spawner: {self.mode}: {self.run_as}",
               f"authenticator: {self.authenticator}",
               f"quiz service: {self.service}",
               f"answer keys: {self.keys}"]
        for user, role, on in self.servers:
            out.append(f"  {user:<20} {role:<10} server {'running' if on else 'stopped'}")
        return out


def status(cfg: ClassConfig) -> Status:
    paths = ClassPaths(cfg.dir)
    pid = hub_pid(paths)
    mode = spawn_mode(cfg)
    try:
        hub_user = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        hub_user = str(os.geteuid())
    if mode == "unix-users":
        run_as = ("separate Unix users: each learner's server runs as the Unix user of the "
                  "same name (LocalProcessSpawner), home in "
                  f"{paths.homes}/<user> (0700)")
    else:
        why = ("not root" if os.geteuid() != 0 else
               "spawn: one-user in class.yaml" if cfg.spawn == "one-user" else
               f"root, but no Python other users can run ({os.path.realpath(sys.executable)} "
               "is out of their reach and there is no system python"
               f"{sys.version_info[0]}.{sys.version_info[1]})")
        run_as = (f"one user: {why}; every server runs as the hub's Unix user "
                  f"'{hub_user}' (SimpleLocalProcessSpawner)")
    auth = (f"password file {cfg.passwords}" if cfg.authenticator == PASSWORD_FILE
            else cfg.authenticator)
    leaked = image.answer_material(paths.image) if paths.image.exists() else []
    readable = [REPO / e for e in image.EXCLUDED if runtime.others_can_read(REPO / e)]
    if leaked:
        keys = f"EXPOSED: the learner image holds {leaked[0]}"
    elif mode == "unix-users" and readable:
        keys = (f"EXPOSED: learners can read {readable[0]} (the checkout the hub runs "
                "from): make it unreadable to others (chmod o-rx) or run the hub from an "
                "installation outside their reach")
    elif mode == "unix-users":
        keys = (f"not in the learner image; banks, gradebook and issuer key in "
                f"{paths.private} (0700, learners cannot read it)")
    else:
        keys = ("not in the learner image, but learners run as the hub's Unix user and "
                f"could read {paths.private}: use spawn: unix-users (root) or containers "
                "for exams")
    servers: list[tuple[str, str, bool]] = []
    service = "down"
    if pid is not None:
        service = ("answering" if _get(f"{cfg.url}/services/quizzes/healthz") == 200
                   else "not answering")
        code, users = hubapi.call(cfg.url, admin_token(paths), "GET", "users")
        if code == 200:
            for u in sorted(users, key=lambda u: u["name"]):
                role = "instructor" if u["name"] in cfg.instructors else "learner"
                servers.append((u["name"], role, bool(u.get("server"))))
    return Status(cfg.name, cfg.url, pid, mode, run_as, auth, service, tuple(servers), keys)
