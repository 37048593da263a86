"""Hostlist expressions, as ``scontrol show hostnames / hostlist / hostlistsorted`` print them.

Every expected value below was produced by the real ``scontrol`` of Slurm
22.05.8; the captures in ``slurm-reference/c1_hostlist`` are checked too, and
when a real ``scontrol`` is installed a property test compares against it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from captures import cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minislurm.common.hostlist import compress, expand, ranged
from minislurm.errors import HostlistError

# ---- the captures ---------------------------------------------------------------------------

C1 = cases("c1_hostlist")


@pytest.mark.skipif(not C1, reason="slurm-reference captures (c1_hostlist) not found")
@pytest.mark.parametrize("case", C1, ids=[c.name for c in C1])
def test_c1_capture(case) -> None:
    words = case.cmd.split(maxsplit=3)
    if len(words) < 4 or words[0] != "scontrol":
        # 09: no argument; scontrol reads $SLURM_NODELIST (not SLURM_JOB_NODELIST), so the
        # list is empty: that is the CLI's job, expand() only sees expressions.
        assert case.err == "scontrol: error: host list is empty\n"
        pytest.skip("no-argument form belongs to the scontrol CLI")
    _scontrol, _show, mode, arg = words
    arg = arg.strip("'")
    if mode == "hostnames":
        assert "".join(f"{h}\n" for h in expand(arg)) == case.out
    else:
        hosts = arg.split(",")
        assert compress(hosts, sort=mode == "hostlistsorted") + "\n" == case.out
        assert ranged(arg, sort=mode == "hostlistsorted") + "\n" == case.out
    assert case.rc == 0


def test_hostlistsorted_of_the_capture_keeps_duplicates() -> None:
    """CAPTURES.md: hostlistsorted of n3,n1,n2,n2,n10 is n[1-2,2-3,10] (sorted, not uniq)."""
    assert compress(["n3", "n1", "n2", "n2", "n10"], sort=True) == "n[1-2,2-3,10]"
    assert compress(["n3", "n1", "n2", "n2", "n10"], uniq=True) == "n[1-3,10]"


# ---- expand: scontrol show hostnames ------------------------------------------------------

EXPAND = {
    "n[1-3,7]": ["n1", "n2", "n3", "n7"],
    "gpu[01-03,10],cpu7": ["gpu01", "gpu02", "gpu03", "gpu10", "cpu7"],
    "rack[1-2]-n[1-2]": ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"],
    "a[1-2]b[3-4]": ["a1b3", "a1b4", "a2b3", "a2b4"],
    "n1[1-2]": ["n11", "n12"],
    "n[01-3]": ["n01", "n02", "n03"],
    "n[9-11]": ["n9", "n10", "n11"],
    "[1-2]": ["1", "2"],
    "n[1-2],,m  z": ["n1", "n2", "m", "z"],
    "n1\tn2": ["n1", "n2"],
    "": [],
    # C strtoul corners, as Slurm has them:
    "n[1-]": ["n1"],
    "n[+1]": ["n01"],
    "n[ 1]": ["n01"],
    "n[1 - 2]": ["n01", "n02"],
    "n[1- 2]": ["n1", "n2"],
    "n[3-+5]": ["n3", "n4", "n5"],
    "n[99999999999999999999]": ["n18446744073709551615"],
    # a '[' without ']': Slurm keeps the prefix and tacks on a ']'
    "n[1": ["n]"],
    "ab[cd,ef": ["ab]", "ef"],
    "[1": ["1"],
    "[": [""],
    "a[1]b[": ["a[1]b]"],
    "x]y[1,2]": ["x]y]", "2]"],
    # an inner prefix that does not parse is silently dropped (MAX of return codes)
    "a[x]b[1-2]c[1-2]": [],
}


@pytest.mark.parametrize(("expr", "hosts"), EXPAND.items())
def test_expand(expr: str, hosts: list[str]) -> None:
    assert expand(expr) == hosts


def test_expand_keeps_order_and_duplicates() -> None:
    assert expand("n3,n1,n[1-2]") == ["n3", "n1", "n1", "n2"]


def test_largest_range_is_64k_hosts() -> None:
    assert len(expand("n[0-65535]")) == 65536


INVALID = {
    "n[3-1]": "error: _parse_single_range: Invalid range: `3-1'\nInvalid hostlist: n[3-1]",
    "n[]": "error: _parse_single_range: Invalid range: `'\nInvalid hostlist: n[]",
    "n[1,,2]": "error: _parse_single_range: Invalid range: `'\nInvalid hostlist: n[1,,2]",
    "n[1x2]": "error: _parse_single_range: Invalid range: `1x2'\nInvalid hostlist: n[1x2]",
    "n[a-b]": "error: _parse_single_range: Invalid range: `a-b'\nInvalid hostlist: n[a-b]",
    "n[1--2]": "error: _parse_single_range: Invalid range: `1--2'\nInvalid hostlist: n[1--2]",
    "n[1-2 ]": "error: _parse_single_range: Invalid range: `1-2 '\nInvalid hostlist: n[1-2 ]",
    "n[0x1]": "error: _parse_single_range: Invalid range: `0x1'\nInvalid hostlist: n[0x1]",
    "n[1-2,5-3]": "error: _parse_single_range: Invalid range: `5-3'\nInvalid hostlist: n[1-2,5-3]",
    "a[1-2]]b[3]": "error: _parse_single_range: Invalid range: `1-2]'\n"
    "Invalid hostlist: a[1-2]]b[3]",
    "n[1-70000]": "error: _parse_single_range: Too many hosts in range `1-70000'\n"
    "Invalid hostlist: n[1-70000]",
    "n[1-2]x": "Invalid hostlist: n[1-2]x",
    "n[1-2].ib": "Invalid hostlist: n[1-2].ib",
    "a[1-2]b[3-4]c": "Invalid hostlist: a[1-2]b[3-4]c",
    "n[1-2]]": "Invalid hostlist: n[1-2]]",
}


@pytest.mark.parametrize(("expr", "message"), INVALID.items())
def test_invalid_expressions_raise_scontrol_text(expr: str, message: str) -> None:
    with pytest.raises(HostlistError) as info:
        expand(expr)
    assert info.value.message == message


# ---- compress: scontrol show hostlist / hostlistsorted -------------------------------------

# (hosts, show hostlist, show hostlistsorted) -- from the real scontrol
COMPRESS = [
    ("n3,n1,n2,n2,n10", "n[3,1-2,2,10]", "n[1-2,2-3,10]"),
    ("n1,n2,n3,n4,n5,n3,n4,n5,n6,n7", "n[1-5,3-7]", "n[1-3,3-4,4-5,5-7]"),
    ("n01,n1,n2,n001", "n[01,1-2,001]", "n[1-2,01,001]"),
    ("a,b,a,a1,a2", "a,b,a,a[1-2]", "a,a,a[1-2],b"),
    ("1,2,3,5", "[1-3,5]", "[1-3,5]"),
    ("n1-ib,n2-ib", "n1-ib,n2-ib", "n1-ib,n2-ib"),
    ("n9,n10,n11,n08", "n[9-11,08]", "n[9-11,08]"),
    ("rack10-n1,rack2-n1,rack1-n2", "rack10-n1,rack2-n1,rack1-n2", "rack1-n2,rack2-n1,rack10-n1"),
    ("n2,n1,n1,n1", "n[2,1,1,1]", "n[1,1,1-2]"),
    ("x10,x9,x010,x09", "x[10,9,010,09]", "x[9,09-10,010]"),
    ("n0100,n99,n100", "n[0100,99-100]", "n[99-100,0100]"),
    ("b,a", "b,a", "a,b"),
    ("a1,a", "a1,a", "a,a1"),
]


@pytest.mark.parametrize(("hosts", "plain", "sorted_"), COMPRESS)
def test_compress(hosts: str, plain: str, sorted_: str) -> None:
    assert compress(hosts.split(",")) == plain
    assert compress(hosts.split(","), sort=True) == sorted_


RANGED = [
    ("n1[1-2]", "n1[1-2]", "n1[1-2]"),
    ("n[1-10],n[5-15]", "n[1-10,5-15]", "n[1-5,5-6,6-7,7-8,8-9,9-10,10-15]"),
    ("n[1-10],n[3-4]", "n[1-10,3-4]", "n[1-3,3-4,4-10]"),
    ("n[8-9],n[10-11]", "n[8-11]", "n[8-11]"),
]


@pytest.mark.parametrize(("expr", "plain", "sorted_"), RANGED)
def test_ranged_keeps_the_ranges_of_an_expression(expr: str, plain: str, sorted_: str) -> None:
    assert ranged(expr) == plain
    assert ranged(expr, sort=True) == sorted_


def test_compress_of_nothing_is_empty() -> None:
    assert compress([]) == ""


# ---- properties -------------------------------------------------------------------------------

HOST = (
    st.text(alphabet="abn-_.", min_size=0, max_size=4)
    .flatmap(
        lambda prefix: st.from_regex(r"[0-9]{0,6}", fullmatch=True).map(lambda num: prefix + num)
    )
    .filter(bool)
)


@settings(max_examples=300, deadline=None)
@given(st.lists(HOST, max_size=30))
def test_expand_undoes_compress_in_order(hosts: list[str]) -> None:
    assert expand(compress(hosts)) == hosts


@settings(max_examples=300, deadline=None)
@given(st.lists(HOST, max_size=30))
def test_sorted_compress_keeps_every_host(hosts: list[str]) -> None:
    assert Counter(expand(compress(hosts, sort=True))) == Counter(hosts)
    unique = expand(compress(hosts, uniq=True))
    assert sorted(unique) == sorted(set(hosts))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["n1", "n2", "n3", "n4", "n10", "n11", "gpu01", "gpu02"])))
def test_sorted_is_natural_order_within_a_prefix(hosts: list[str]) -> None:
    result = expand(compress(hosts, sort=True))
    for prefix in ("n", "gpu"):
        numbers = [
            int(h[len(prefix) :])
            for h in result
            if h[len(prefix) :].isdigit() and h.startswith(prefix)
        ]
        assert numbers == sorted(numbers)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="n019[],- \tx+ab]", max_size=16))
def test_random_text_never_raises_anything_but_hostlist_error(text: str) -> None:
    try:
        hosts = expand(text)
    except HostlistError as exc:
        assert exc.message.endswith(f"Invalid hostlist: {text}")
        return
    assert all(isinstance(h, str) for h in hosts)
    ranged(text, sort=True)


# ---- against the real scontrol, when it is installed -----------------------------------------

SCONTROL = shutil.which("scontrol")


@pytest.fixture(scope="module")
def scontrol_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    conf = Path(tmp_path_factory.mktemp("conf")) / "slurm.conf"
    conf.write_text("ClusterName=t\nSlurmctldHost=localhost\n")
    return {**os.environ, "SLURM_CONF": str(conf)}


@pytest.mark.skipif(SCONTROL is None, reason="real scontrol (Slurm 22.05) not installed")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.text(alphabet="n019[],- ", min_size=1, max_size=10).filter(lambda s: s[0] not in "-/"),
    st.sampled_from(["hostnames", "hostlist", "hostlistsorted"]),
)
def test_same_output_as_real_scontrol(scontrol_env: dict[str, str], expr: str, mode: str) -> None:
    assert SCONTROL is not None
    real = subprocess.run(
        [SCONTROL, "show", mode, expr],
        env=scontrol_env,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    try:
        if mode == "hostnames":
            mine = "".join(f"{h}\n" for h in expand(expr))
        else:
            mine = ranged(expr, sort=mode == "hostlistsorted") + "\n"
    except HostlistError as exc:
        mine = exc.message + "\n"
    assert real.stdout + real.stderr.replace("scontrol: ", "") == mine
