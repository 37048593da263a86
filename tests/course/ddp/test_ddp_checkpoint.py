"""Checkpoints of the DDP example are complete or ignored, never half-loaded.

In-process tests of :mod:`course.ddp.checkpoint`; the kills of real training
processes are in ``tests/course/ddp/test_ddp_runs.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from course.ddp import checkpoint as ckpt  # noqa: E402
from course.ddp.logfmt import format_record, loss_curve, parse_records  # noqa: E402
from course.ddp.model import MLP, derive_seed, parameter_digest  # noqa: E402


def state(step: int) -> dict[str, Any]:
    """A checkpoint's state, as the DDP example writes it (``write_checkpoint``'s type)."""
    model = MLP(4, 8, seed=step)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=False)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return {"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "config": {"seed": 0}}


def test_a_checkpoint_round_trips_model_optimizer_and_step(tmp_path: Path) -> None:
    path = ckpt.write_checkpoint(tmp_path, state(5))
    assert path == tmp_path / "ckpt-00000005.pt"
    loaded = ckpt.read_checkpoint(path)
    assert loaded["step"] == 5
    assert loaded["optimizer"]["state"][0]["momentum_buffer"].shape == (8, 4)
    model = MLP(4, 8, seed=99)
    model.load_state_dict(loaded["model"])
    assert parameter_digest(model) == parameter_digest(_model_of(state(5)))
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt-00000005.pt"]  # no temp left


def _model_of(s: dict[str, Any]) -> MLP:
    model = MLP(4, 8, seed=0)
    model.load_state_dict(s["model"])
    return model


def test_the_newest_complete_checkpoint_wins_and_old_ones_are_pruned(tmp_path: Path) -> None:
    for step in (5, 10, 15):
        ckpt.write_checkpoint(tmp_path, state(step), keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-00000010.pt", "ckpt-00000015.pt"]
    found = ckpt.latest_checkpoint(tmp_path)
    assert found is not None and (found.step, found.skipped) == (15, ())


@pytest.mark.parametrize("keep_bytes", [0, 10, 16, 1000, -33, -1])
def test_a_torn_file_under_the_final_name_is_skipped(tmp_path: Path, keep_bytes: int) -> None:
    """Even a truncated file that somehow got the final name (a non-atomic copy,
    a full disk) is rejected by its length and checksum; the previous one is used."""
    ckpt.write_checkpoint(tmp_path, state(10))
    good = ckpt.write_checkpoint(tmp_path, state(15), keep=5)
    data = good.read_bytes()
    good.write_bytes(data[:keep_bytes])
    with pytest.raises(ckpt.CheckpointError, match="truncated"):
        ckpt.read_checkpoint(good)
    found = ckpt.latest_checkpoint(tmp_path)
    assert found is not None and found.step == 10
    assert [(p.name, "truncated" in why) for p, why in found.skipped] == [
        ("ckpt-00000015.pt", True)]


def test_a_flipped_byte_fails_the_checksum(tmp_path: Path) -> None:
    path = ckpt.write_checkpoint(tmp_path, state(10))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(ckpt.CheckpointError, match="checksum mismatch"):
        ckpt.read_checkpoint(path)
    assert ckpt.latest_checkpoint(tmp_path) is None


def test_a_file_with_the_wrong_step_or_no_magic_is_rejected(tmp_path: Path) -> None:
    path = ckpt.write_checkpoint(tmp_path, state(10))
    shutil.copy(path, tmp_path / "ckpt-00000020.pt")
    with pytest.raises(ckpt.CheckpointError, match="holds step 10"):
        ckpt.read_checkpoint(tmp_path / "ckpt-00000020.pt")
    torch.save(state(30), tmp_path / "ckpt-00000030.pt")  # a plain torch.save file
    with pytest.raises(ckpt.CheckpointError, match="bad magic"):
        ckpt.read_checkpoint(tmp_path / "ckpt-00000030.pt")
    found = ckpt.latest_checkpoint(tmp_path)
    assert found is not None and found.step == 10 and len(found.skipped) == 2


def test_a_writer_interrupted_mid_file_leaves_only_a_temporary(tmp_path: Path) -> None:
    ckpt.write_checkpoint(tmp_path, state(10))
    seen: list[Path] = []

    def crash(temp: Path) -> None:
        seen.append(temp)
        assert temp.parent == tmp_path and temp.name.startswith(".ckpt-00000015.pt.tmp-")
        assert temp.stat().st_size > 0
        raise KeyboardInterrupt  # stands for the SIGKILL a real process gets

    with pytest.raises(KeyboardInterrupt):
        ckpt.write_checkpoint(tmp_path, state(15), mid_write=crash)
    assert seen and not (tmp_path / "ckpt-00000015.pt").exists()
    found = ckpt.latest_checkpoint(tmp_path)
    assert found is not None and found.step == 10


def test_stale_temporaries_are_removed_and_never_considered(tmp_path: Path) -> None:
    ckpt.write_checkpoint(tmp_path, state(10))
    data = ckpt.encode(state(15))
    torn = tmp_path / f".ckpt-00000015.pt.tmp-{os.getpid()}"
    torn.write_bytes(data[: len(data) // 2])
    found = ckpt.latest_checkpoint(tmp_path)
    assert found is not None and (found.step, found.skipped) == (10, ())
    assert ckpt.remove_stale_temporaries(tmp_path) == [torn]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-00000010.pt"]


def test_an_empty_or_missing_directory_has_no_checkpoint(tmp_path: Path) -> None:
    assert ckpt.latest_checkpoint(tmp_path) is None
    assert ckpt.latest_checkpoint(tmp_path / "nope") is None
    assert ckpt.remove_stale_temporaries(tmp_path / "nope") == []


def test_seeds_are_named_and_independent() -> None:
    assert derive_seed(0, "batch", 1, 0) == derive_seed(0, "batch", 1, 0)
    assert len({derive_seed(0, "batch", s, r) for s in range(50) for r in range(4)}) == 200
    assert 0 <= derive_seed(123, "model") < 2**63


def test_the_log_records_parse_back_to_exact_floats() -> None:
    loss = 0.1 + 0.2
    lines = [
        format_record("start", rank=0, world=2),
        format_record(None, step=1, loss=loss),
        "0: " + format_record(None, step=2, loss=0.5),  # srun -l label
        "noise",
        format_record(None, step=2, loss=0.25),  # a resumed job repeats step 2
        format_record("final", step=2, sha256="ab"),
    ]
    assert loss_curve(lines) == [(1, loss), (2, 0.25)]
    assert [kind for kind, _ in parse_records(lines)] == ["start", "step", "step", "step",
                                                          "final"]
