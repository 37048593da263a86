"""``compress``'s inline path (a run continuing the last range) against the general one.

``compress`` extends the last range in place when a host has the very same prefix and
width and the next number (the NodeList of every job start goes through it); every
other host takes ``_host_range`` + ``_push``, Slurm's ``hostlist_push_host``.  The
two must print the same expression for any host list, padding, duplicates and
names without a number included.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minislurm.common import hostlist
from minislurm.common.hostlist import compress


def _general(hosts: list[str], *, sort: bool = False, uniq: bool = False) -> str:
    """The expression built host by host through ``hostlist_push_host`` alone."""
    ranges: list[hostlist._Range] = []
    for host in hosts:
        hostlist._push(ranges, hostlist._host_range(host))
    if sort or uniq:
        hostlist._sort(ranges, uniq=uniq)
    return hostlist._ranged_string(ranges)


_HOST = st.builds(
    lambda prefix, num, width, bare: prefix if bare else f"{prefix}{num:0{width}d}",
    st.sampled_from(["n", "gpu", "rack1-n", "", "a b", "n0"]),
    st.integers(0, 40),
    st.integers(0, 4),
    st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_HOST, max_size=30), st.sampled_from([(False, False), (True, False),
                                                      (False, True)]))
def test_compress_matches_the_general_path(hosts: list[str], mode: tuple[bool, bool]) -> None:
    sort, uniq = mode
    assert compress(hosts, sort=sort, uniq=uniq) == _general(hosts, sort=sort, uniq=uniq)


def test_runs_and_breaks() -> None:
    hosts = [f"p{i}" for i in range(0, 9)] + ["p11", "p12", "p010", "p010", "q", "p13"]
    assert compress(hosts) == _general(hosts) == "p[0-8,11-12,010,010],q,p13"
    assert compress([f"n{i:03d}" for i in (7, 8, 9, 10, 11)]) == "n[007-011]"
    assert compress(["n9", "n10", "n11"]) == "n[9-11]"
    assert compress(["n1", "n2", "n" + "9" * 25]) == _general(["n1", "n2", "n" + "9" * 25])


def test_non_ascii_digits_are_not_numbers() -> None:
    """``str.isdigit`` accepts '²' and '٣'; hostlist's numbers are ASCII digits only."""
    hosts = ["n1", "n²", "n٣", "n2", "n٣4", "n05", "n06"]
    assert compress(hosts) == _general(hosts)
