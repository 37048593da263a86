"""tests/conftest.py's ``test_group``: the unit ``--dist loadgroup`` hands to one worker."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "tests_conftest", Path(__file__).resolve().parents[1] / "conftest.py")
assert _spec is not None and _spec.loader is not None
conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conftest)


@dataclass
class _Item:
    """What ``test_group`` reads of a pytest item: its id and marks."""

    nodeid: str
    marks: dict[str, pytest.Mark] = field(default_factory=dict)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.marks.get(name)


def _mark(name: str, *args: object) -> pytest.Mark:
    mark: pytest.Mark = getattr(pytest.mark, name)(*args).mark
    return mark


def test_a_files_tests_are_one_group_unless_marked() -> None:
    f = "tests/browser/test_x.py"
    assert conftest.test_group(_Item(f"{f}::test_a")) == f
    assert conftest.test_group(_Item(f"{f}::test_a", {"spread": _mark("spread")})) \
        == f"{f}::test_a"
    assert conftest.test_group(_Item(f"{f}::test_a[en-01]",
                                     {"ddp_ports": _mark("ddp_ports")})) == "ddp-ports"


def test_groups_are_handed_out_longest_first() -> None:
    """Known groups by their recorded seconds; a group not recorded yet goes before the
    short ones if one of its tests waits on a cluster, else last; ties keep collection
    order, and a group's tests stay in theirs."""
    slow = {"slow": _mark("slow")}
    items = [_Item("tests/a.py::t1"), _Item("tests/b.py::t1"), _Item("tests/new.py::t1", slow),
             _Item("tests/a.py::t2"), _Item("tests/c.py::t1"), _Item("tests/fresh.py::t1"),
             _Item("tests/d.py::t1", {"ddp_ports": _mark("ddp_ports")}),
             _Item("tests/b.py::t2")]
    known = {"ddp-ports": 500.0, "tests/b.py": 40.0, "tests/a.py": 3.0, "tests/c.py": 3.0}
    order = [i.nodeid for i in conftest.group_order(items, known)]
    assert order == ["tests/d.py::t1", "tests/b.py::t1", "tests/b.py::t2", "tests/new.py::t1",
                     "tests/a.py::t1", "tests/a.py::t2", "tests/c.py::t1", "tests/fresh.py::t1"]


def test_the_recorded_group_times_are_seconds_by_group() -> None:
    """tests/group-times.json (copied from a run's build/group-times.json) parses to
    positive seconds, the DDP group among them."""
    known = conftest._known_group_times()
    assert known and all(v > 0 for v in known.values())
    assert conftest.DDP_PORTS_GROUP in known
