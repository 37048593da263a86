"""``python -m course class up|down|status|passwd``: run a class on JupyterHub.

```sh
python -m course class up --config class.yaml     # start the hub, the proxy, the quiz service
python -m course class status --config class.yaml
python -m course class down --config class.yaml   # stop servers (and clusters), then the hub
python -m course class passwd ada --config class.yaml        # set a password (asked)
python -m course class up --demo [--dir class-demo] [--port 8000]
```
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Sequence
from pathlib import Path

from course.classroom import deploy, passwords
from course.classroom.config import ClassConfig, load
from course.classroom.errors import ClassError

DEMO_LEARNERS = ("ada", "bob", "cy")
DEMO_INSTRUCTOR = "teacher"


def demo_config(folder: Path, port: int) -> tuple[Path, dict[str, str]]:
    """Write a demo class (three learners, one instructor) into ``folder``; returns
    (class.yaml, user -> password).  Existing passwords are replaced."""
    folder.mkdir(parents=True, exist_ok=True)
    users = (*DEMO_LEARNERS, DEMO_INSTRUCTOR)
    chosen = {u: passwords.new_password() for u in users}
    passwords.write(folder / "passwords", {u: passwords.hash_password(p)
                                            for u, p in chosen.items()})
    conf = folder / "class.yaml"
    conf.write_text(
        "# demo class written by `python -m course class up --demo`\n"
        "name: demo-class\ndir: state\n"
        f"port: {port}\npasswords: passwords\n"
        f"instructors: [{DEMO_INSTRUCTOR}]\nlearners: [{', '.join(DEMO_LEARNERS)}]\n",
        encoding="utf-8")
    return conf, chosen


def _print_status(cfg: ClassConfig) -> None:
    for line in deploy.status(cfg).lines():
        print(line)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course class", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="action", required=True)
    u = sub.add_parser("up", help="start the class's JupyterHub")
    u.add_argument("--config", type=Path, help="class.yaml")
    u.add_argument("--demo", action="store_true",
                   help="write and start a demo class: three learners, one instructor")
    u.add_argument("--dir", type=Path, default=Path("class-demo"),
                   help="folder of the demo class (default: ./class-demo)")
    u.add_argument("--port", type=int, default=8000, help="the demo hub's port")
    for name, text in (("down", "stop the learners' servers and the hub"),
                       ("status", "what runs, as whom, and where the answer keys are")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--config", type=Path, required=True)
    pw = sub.add_parser("passwd", help="set a user's password in the class's password file")
    pw.add_argument("user")
    pw.add_argument("--config", type=Path, required=True)
    pw.add_argument("--random", action="store_true", help="generate one and print it")
    args = ap.parse_args(argv)
    try:
        if args.action == "up":
            chosen: dict[str, str] = {}
            if args.demo:
                conf, chosen = demo_config(args.dir.resolve(), args.port)
            elif args.config is None:
                ap.error("up needs --config class.yaml (or --demo)")
            else:
                conf = args.config
            cfg = load(conf)
            pid = deploy.up(cfg)
            print(f"course class: {cfg.name} is up at {cfg.url} (hub pid {pid}; "
                  f"config {conf})")
            for user, password in chosen.items():
                role = "instructor" if user in cfg.instructors else "learner"
                print(f"  {role:<10} {user:<8} password {password}")
            _print_status(cfg)
            return 0
        cfg = load(args.config)
        if args.action == "down":
            stopped = deploy.down(cfg)
            print(f"course class: {cfg.name} is down (servers stopped: "
                  f"{', '.join(stopped) or 'none'})")
        elif args.action == "status":
            _print_status(cfg)
        else:
            if cfg.passwords is None:
                raise ClassError("this class does not use a password file")
            if args.random:
                password = passwords.new_password()
                print(f"{args.user}: {password}")
            else:
                password = getpass.getpass(f"password for {args.user}: ")
            passwords.set_password(cfg.passwords, args.user, password)
    except ClassError as exc:
        print(exc.message, file=sys.stderr)
        return exc.exit_code
    return 0
