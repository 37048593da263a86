"""Checkpoints that are either complete or ignored: atomic write, validated read.

A job killed by Slurm (``scancel``, a node set DOWN, the time limit's SIGKILL
after ``KillWait``) can die in the middle of ``torch.save``. ``--requeue`` then
restarts it, and it must never resume from half a file. Two defences:

1. **Atomic write.** The bytes go to a temporary file in the *same* directory
   (``.ckpt-00000010.pt.tmp-<pid>``), are ``fsync``-ed, and only then
   ``os.replace``-d to the final name ``ckpt-00000010.pt`` (``rename(2)`` is
   atomic within a file system), followed by an ``fsync`` of the directory so the
   rename itself survives a crash. A reader sees the old set of files or the new
   one, never a half-written ``ckpt-*.pt``.
2. **Validated read.** Each file is a small container::

       b"DDPCKPT1" | payload length (8 bytes, big endian) | payload | SHA-256(payload)

   where the payload is ``torch.save`` of a dict with the keys :data:`REQUIRED_KEYS`.
   A truncated or corrupted file (a non-atomic copy, a full disk, bit rot) fails the
   length or checksum test and is skipped; :func:`latest_checkpoint` falls back to
   the newest file that passes.

Only the step number is in the name, so "newest" is "highest step".
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "REQUIRED_KEYS",
    "CheckpointError",
    "Found",
    "checkpoint_path",
    "latest_checkpoint",
    "read_checkpoint",
    "remove_stale_temporaries",
    "write_checkpoint",
]

MAGIC = b"DDPCKPT1"
FORMAT = "course.ddp/1"
REQUIRED_KEYS = frozenset({"format", "step", "model", "optimizer"})
_HEADER = struct.Struct(">8sQ")
_DIGEST = hashlib.sha256().digest_size
_NAME = re.compile(r"^ckpt-(\d{8,})\.pt$")
_TEMP = re.compile(r"^\.ckpt-\d{8,}\.pt\.tmp-\d+$")


class CheckpointError(ValueError):
    """A checkpoint file is incomplete or not one of ours; the message says why."""


@dataclass(frozen=True, slots=True)
class Found:
    """The newest complete checkpoint and the newer files skipped on the way."""

    step: int
    path: Path
    skipped: tuple[tuple[Path, str], ...] = ()


def checkpoint_path(directory: Path, step: int) -> Path:
    """``<directory>/ckpt-<step, 8 digits>.pt``."""
    return Path(directory) / f"ckpt-{step:08d}.pt"


def encode(state: dict[str, Any]) -> bytes:
    """The container bytes of ``state`` (``torch.save`` + header + SHA-256)."""
    missing = REQUIRED_KEYS - {"format"} - state.keys()
    if missing:
        raise ValueError(f"checkpoint state lacks {sorted(missing)}")
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, **state}, buffer)
    payload = buffer.getvalue()
    return _HEADER.pack(MAGIC, len(payload)) + payload + hashlib.sha256(payload).digest()


def decode(data: bytes, *, name: str = "<bytes>") -> dict[str, Any]:
    """The state dict inside container ``data``; :class:`CheckpointError` when the
    bytes are truncated, corrupted, or not a checkpoint of this format."""
    if len(data) < _HEADER.size + _DIGEST:
        raise CheckpointError(f"{name}: truncated ({len(data)} bytes)")
    magic, length = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CheckpointError(f"{name}: not a checkpoint (bad magic {magic!r})")
    if len(data) != _HEADER.size + length + _DIGEST:
        raise CheckpointError(
            f"{name}: truncated ({len(data)} bytes, expected {_HEADER.size + length + _DIGEST})"
        )
    payload = data[_HEADER.size : _HEADER.size + length]
    if hashlib.sha256(payload).digest() != data[-_DIGEST:]:
        raise CheckpointError(f"{name}: checksum mismatch")
    try:
        state = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises RuntimeError/UnpicklingError/...
        raise CheckpointError(f"{name}: torch.load failed: {exc}") from exc
    if not isinstance(state, dict) or not state.keys() >= REQUIRED_KEYS:
        raise CheckpointError(f"{name}: missing keys")
    if state["format"] != FORMAT:
        raise CheckpointError(f"{name}: format {state['format']!r}, expected {FORMAT!r}")
    return state


def read_checkpoint(path: Path) -> dict[str, Any]:
    """Load and validate ``path`` (its step must match its name)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{path.name}: {exc.strerror}") from exc
    state = decode(data, name=path.name)
    match = _NAME.match(path.name)
    if match and int(match.group(1)) != state["step"]:
        raise CheckpointError(f"{path.name}: holds step {state['step']}")
    return state


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_checkpoint(
    directory: Path,
    state: dict[str, Any],
    *,
    keep: int = 2,
    mid_write: Callable[[Path], None] | None = None,
) -> Path:
    """Write ``state`` (with ``state["step"]``) atomically; keep the newest ``keep``.

    ``mid_write`` (a test hook) is called with the temporary file's path after half
    of the bytes are on disk -- a kill there must leave no loadable checkpoint.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    final = checkpoint_path(directory, int(state["step"]))
    data = encode(state)
    temp = directory / f".{final.name}.tmp-{os.getpid()}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        half = len(data) // 2
        os.write(fd, data[:half])
        if mid_write is not None:
            os.fsync(fd)
            mid_write(temp)
        view = memoryview(data)[half:]
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    os.replace(temp, final)
    _fsync_directory(directory)
    for old in _complete_names(directory)[keep:]:
        old[1].unlink(missing_ok=True)
    return final


def _complete_names(directory: Path) -> list[tuple[int, Path]]:
    """``(step, path)`` of every ``ckpt-*.pt`` name, newest first (unvalidated)."""
    found = []
    for entry in directory.iterdir() if directory.is_dir() else ():
        match = _NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry))
    return sorted(found, reverse=True)


def latest_checkpoint(directory: Path) -> Found | None:
    """The highest-step checkpoint in ``directory`` that validates, or ``None``.

    Temporary files are never considered; complete-named files that fail
    validation are listed in :attr:`Found.skipped` (and skipped, never loaded).
    """
    skipped: list[tuple[Path, str]] = []
    for step, path in _complete_names(Path(directory)):
        try:
            read_checkpoint(path)
        except CheckpointError as exc:
            skipped.append((path, str(exc)))
            continue
        return Found(step, path, tuple(skipped))
    return None


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete temporary files left by writers that were killed; returns them.

    Call only when no writer can be running (at job start, before any step).
    """
    removed = []
    for entry in Path(directory).iterdir() if Path(directory).is_dir() else ():
        if _TEMP.match(entry.name):
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return sorted(removed)
