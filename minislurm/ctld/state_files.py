"""The files in ``StateSaveLocation`` and how they are written and read back.

slurmctld keeps one file per subsystem in its StateSaveLocation -- ``job_state``,
``node_state``, ``part_state``, ``resv_state``, ``assoc_usage`` -- and writes each
one the same way (``src/slurmctld/state_save.c``, ``_write_file``): the new content
goes to ``<name>.new`` and is synced, the current file becomes ``<name>.old``, and
``<name>.new`` is renamed to ``<name>``. A crash at any moment leaves a complete
current file or a complete ``.old`` one. minislurm does the same (the current file is
hard-linked to ``.old`` first, so ``<name>`` never disappears) and adds ``accounting``,
the rows slurmdbd would hold for sacct.

The files are written in one order, ``job_state`` last: it is the commit record and
names the serial of every other file it goes with. Reading starts from it; a file
whose serial is ahead (the save was interrupted before ``job_state``) is read from its
``.old``, which holds exactly the serial ``job_state`` expects. So a load always sees
one consistent save.

A file that cannot be read back is an error in slurmctld's words
(`StateRecoveryError`, e.g. ``Incomplete job state save file, start with '-i' to
ignore this. ...``) and nothing is changed on disk. With ``-i`` (``ignore=True``) the
previous good save (``.old``) is used instead and the unreadable file is moved aside
as ``<name>.corrupt-<time>``, never deleted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minislurm.errors import SlurmError

__all__ = ["PARTS", "LoadedState", "StateFiles", "StateRecoveryError"]

#: Every file, in writing order (``job_state`` last: it commits the others).
PARTS = ("node_state", "part_state", "resv_state", "assoc_usage", "accounting", "job_state")

#: Identifies minislurm's state files and their layout version.
MAGIC = "minislurm-state"
VERSION = 1

_IGNORE = ", start with '-i' to ignore this. Warning: using -i will lose the data that " \
          "can't be recovered."

#: slurmctld's words for an unreadable file of each kind (strings of 22.05's slurmctld).
INCOMPLETE = {
    "job_state": "Incomplete job state save file",
    "node_state": "Incomplete node data checkpoint file",
    "part_state": "Incomplete partition data checkpoint file",
    "resv_state": "Incomplete reservation state save file",
    "assoc_usage": "Incomplete assoc usage state file",
    "accounting": "Incomplete accounting state file",
}
WHAT = {"job_state": "job", "node_state": "node", "part_state": "partition",
        "resv_state": "reservation", "assoc_usage": "assoc usage", "accounting": "accounting"}


class StateRecoveryError(SlurmError):
    """slurmctld cannot recover its state: the message is its ``fatal:`` text."""


@dataclass
class LoadedState:
    """What a load found: the data of each file, and slurmctld's log lines about it."""

    parts: dict[str, Any] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    serial: int = 0
    saved_at: float | None = None

    @property
    def empty(self) -> bool:
        return not self.parts


def _text(part: Any) -> str:
    """A part's JSON: as given when already serialised (``state_save.JsonText``)."""
    text = getattr(part, "text", None)
    if isinstance(text, str):
        return text
    return json.dumps(part, sort_keys=True, separators=(",", ":"))


class StateFiles:
    """Read and write the state files of one ``StateSaveLocation``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.serial = 0
        self._serials: dict[str, int] = {}
        self._written: dict[str, str] = {}

    def path(self, name: str) -> Path:
        return self.dir / name

    # ---- writing ------------------------------------------------------------------
    def save(self, parts: dict[str, Any]) -> list[str]:
        """Write every part whose content changed, then ``job_state``; the names written."""
        texts = {name: _text(parts[name]) for name in PARTS if name in parts}
        changed = [n for n in PARTS if n in texts and texts[n] != self._written.get(n)]
        if not changed:
            return []
        self.dir.mkdir(parents=True, exist_ok=True)
        self.serial += 1
        for name in changed:
            if name != "job_state":
                self._write(name, texts[name], self.serial)
                self._serials[name] = self.serial
        self._serials["job_state"] = self.serial
        header = {"serials": {n: self._serials.get(n, 0) for n in PARTS if n != "job_state"}}
        self._write("job_state", texts["job_state"], self.serial, header)
        self._written.update(texts)
        return changed if "job_state" in changed else [*changed, "job_state"]

    def _write(self, name: str, body: str, serial: int, extra: dict[str, Any] | None = None
               ) -> None:
        head = {"magic": MAGIC, "version": VERSION, "name": name, "serial": serial,
                "time": time.time(), **(extra or {})}
        text = '{"header":' + json.dumps(head, sort_keys=True) + ',"data":' + body + "}\n"
        final, new, old = self.path(name), self.path(name + ".new"), self.path(name + ".old")
        with open(new, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if final.exists():
            link = self.path(name + ".old.new")
            link.unlink(missing_ok=True)
            os.link(final, link)
            os.replace(link, old)
        os.replace(new, final)
        with contextlib.suppress(OSError):  # make the renames durable
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    # ---- reading ------------------------------------------------------------------
    def _read(self, name: str, suffix: str = "") -> tuple[dict[str, Any], Any] | None:
        """``(header, data)`` of one file; None if absent; ValueError if unreadable."""
        path = self.path(name + suffix)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(str(exc)) from exc
        doc = json.loads(text)  # ValueError (JSONDecodeError) when truncated
        head = doc.get("header") if isinstance(doc, dict) else None
        if not isinstance(head, dict) or head.get("magic") != MAGIC or "data" not in doc:
            raise ValueError("not a minislurm state file")
        if head.get("version") != VERSION or head.get("name") != name:
            raise ValueError(f"version {head.get('version')} of {head.get('name')}")
        return head, doc["data"]

    def load(self, *, ignore: bool = False) -> LoadedState:
        """The last complete save (see the module docstring); `StateRecoveryError` if none."""
        out = LoadedState()
        corrupt: list[str] = []
        if not any(self.path(n).exists() or self.path(n + ".old").exists() for n in PARTS):
            out.log.append(f"No job state file ({self.path('job_state')}) to recover")
            return out
        job = self._pick("job_state", None, out, corrupt, ignore)
        if job is None:  # with -i: nothing usable, start empty (the files are kept aside)
            for name in corrupt:
                self._set_aside(name, out)
            return out
        head, data = job
        out.parts["job_state"] = data
        out.serial = int(head.get("serial", 0))
        out.saved_at = float(head.get("time", 0.0))
        serials = head.get("serials") or {}
        for name in PARTS[:-1]:
            want = int(serials.get(name, 0))
            if want == 0:
                continue  # never written: nothing of this kind was saved
            found = self._pick(name, want, out, corrupt, ignore)
            if found is not None:
                out.parts[name] = found[1]
        for name in corrupt:
            self._set_aside(name, out)
        self.serial = out.serial
        self._serials = {n: int(serials.get(n, 0)) for n in PARTS[:-1]}
        self._serials["job_state"] = out.serial
        return out

    def _pick(self, name: str, want: int | None, out: LoadedState, corrupt: list[str],
              ignore: bool) -> tuple[dict[str, Any], Any] | None:
        """The current file of ``name`` if it is good (and has serial ``want``), else ``.old``."""
        try:
            current = self._read(name)
        except ValueError:
            if not ignore:
                raise StateRecoveryError(f"fatal: {INCOMPLETE[name]}{_IGNORE}", 1) from None
            out.log.append(f"error: {INCOMPLETE[name]}")
            corrupt.append(name)
            current = None
        if current is not None and (want is None or int(current[0].get("serial", 0)) == want):
            return current
        if current is None and name not in corrupt:
            out.log.append(f"error: Could not open {WHAT[name]} state file "
                           f"{self.path(name)}: No such file or directory")
        try:
            backup = self._read(name, ".old")
        except ValueError:
            backup = None
        if backup is not None and (want is None or int(backup[0].get("serial", 0)) == want):
            if current is None:
                out.log.append("error: NOTE: Trying backup state save file. "
                               f"{'Jobs' if name == 'job_state' else 'Information'} may be lost!")
            return backup
        if ignore:
            out.log.append(f"error: {INCOMPLETE[name]}: no usable copy, {WHAT[name]} state lost")
            return None
        raise StateRecoveryError(f"fatal: {INCOMPLETE[name]}{_IGNORE}", 1)

    def _set_aside(self, name: str, out: LoadedState) -> None:
        """Keep an unreadable file as ``<name>.corrupt-<time>`` (``-i`` never deletes data)."""
        src = self.path(name)
        if src.exists():
            dest = self.path(f"{name}.corrupt-{int(time.time())}")
            os.replace(src, dest)
            out.log.append(f"error: unreadable {src} kept as {dest}")
