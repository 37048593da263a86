"""Generic resources: ``--gres`` requests, ``Gres=`` on nodes, gres.conf lines."""

from __future__ import annotations

import pytest
from captures import capture_root, load_case

from minislurm.common.gres import (
    INVALID_GRES,
    GresRequest,
    NodeGres,
    parse_gres_request,
    parse_node_gres,
)
from minislurm.conf import parse_gres_conf
from minislurm.errors import GresError

# ---- --gres ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gpu", [GresRequest("gpu", None, 1)]),
        ("gpu:2", [GresRequest("gpu", None, 2)]),
        ("gpu:a100:2", [GresRequest("gpu", "a100", 2)]),
        ("gpu:a100", [GresRequest("gpu", "a100", 1)]),
        ("gpu:a100:1,mps:50", [GresRequest("gpu", "a100", 1), GresRequest("mps", None, 50)]),
        ("gres/gpu:3", [GresRequest("gpu", None, 3)]),
        ("mps:1k", [GresRequest("mps", None, 1024)]),
        ("gpu:0", [GresRequest("gpu", None, 0)]),
        ("none", []),
    ],
)
def test_parse_gres_request(spec: str, expected: list[GresRequest]) -> None:
    assert list(parse_gres_request(spec)) == expected


@pytest.mark.parametrize(
    "spec",
    ["gpu:a100:x", "gpu::2", "gpu:", ":2", "gpu:a100:2:3", "gpu,,mps", "", "gpu:a100:2x", "g pu"],
)
def test_malformed_gres_request(spec: str) -> None:
    with pytest.raises(GresError) as info:
        parse_gres_request(spec)
    assert info.value.message == INVALID_GRES
    assert info.value.exit_code == 1


@pytest.mark.skipif(capture_root() is None, reason="slurm-reference captures not found")
@pytest.mark.parametrize("name", ["11_bad_gres_syntax_count", "13_bad_gres_syntax_colons"])
def test_bad_gres_syntax_captures(name: str) -> None:
    """sbatch --gres=gpu:a100:x / gpu::2: rejected with this text, exit 1."""
    case = load_case("b_sbatch_errors", name)
    spec = case.cmd.split("--gres=")[1].split()[0]
    with pytest.raises(GresError) as info:
        parse_gres_request(spec)
    assert case.err == f"sbatch: error: {info.value.message}\n"
    assert case.rc == info.value.exit_code


@pytest.mark.skipif(capture_root() is None, reason="slurm-reference captures not found")
@pytest.mark.parametrize("name", ["01_too_many_gpus_per_node", "03_unknown_gpu_type"])
def test_well_formed_but_unsatisfiable_gres_parses(name: str) -> None:
    """gpu:5 and gpu:h100:1 are valid syntax: slurmctld rejects them later (not a GresError)."""
    case = load_case("b_sbatch_errors", name)
    spec = case.cmd.split("--gres=")[1].split()[0]
    assert parse_gres_request(spec)
    assert "Requested node configuration is not available" in case.err


def test_request_prints_like_tres() -> None:
    assert [str(r) for r in parse_gres_request("gpu:a100:2,gpu")] == ["gpu:a100:2", "gpu:1"]


# ---- Gres= on a NodeName line -----------------------------------------------------------


def test_parse_node_gres() -> None:
    assert parse_node_gres("gpu:a100:4") == (NodeGres("gpu", "a100", 4),)
    assert parse_node_gres("gpu:4,mps:400") == (
        NodeGres("gpu", None, 4),
        NodeGres("mps", None, 400),
    )
    assert parse_node_gres("gpu:a100:4,gpu:v100:2")[1] == NodeGres("gpu", "v100", 2)
    assert parse_node_gres("gpu") == (NodeGres("gpu", None, 1),)
    assert parse_node_gres("") == ()
    assert str(NodeGres("gpu", "a100", 4)) == "gpu:a100:4"


def test_bad_node_gres() -> None:
    with pytest.raises(GresError):
        parse_node_gres("gpu:a:b:c")


def test_device_numbers_come_from_the_file_names() -> None:
    gres = NodeGres("gpu", "a100", 2, ("/dev/nvidia4", "/dev/nvidia5"), (0, 1))
    assert gres.device_numbers == (4, 5)


# ---- gres.conf ----------------------------------------------------------------------------

GRES_CONF = """\
# the reference cluster's line, and a few more
AutoDetect=nvml
NodeName=n[1-4] Name=gpu Type=a100 File=/dev/nvidia[0-3]
nodename=g1 name=gpu type=v100 file=/dev/nvidia[4-5] Cores=0-3
Name=mps Count=200
"""


def test_parse_gres_conf() -> None:
    lines = parse_gres_conf(GRES_CONF, "gres.conf")
    assert [line.name for line in lines] == ["gpu", "gpu", "mps"]
    first = lines[0]
    assert first.node_names == ("n1", "n2", "n3", "n4")
    assert first.type == "a100"
    assert first.files == ("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3")
    assert first.count == 4
    assert first.line == 3
    assert lines[1].cores == "0-3"
    assert lines[1].files == ("/dev/nvidia4", "/dev/nvidia5")
    assert lines[2].node_names is None  # no NodeName: every node
    assert lines[2].count == 200
    assert lines[2].files == ()


# verified with ``slurmd -G`` of Slurm 22.05.8 (minislurm adds its "in file" line before a
# fatal that names no file)
CONF = "/etc/slurm/gres.conf"
GRES_ERRORS = [
    ("NodeName=n1 Name=gpu Bogus=1", [
        "error: Parsing error at unrecognized key: Bogus",
        f'error: Parse error in file {CONF} line 2: " Bogus=1"',
        f"fatal: error opening/reading {CONF}"]),
    ("Name=gpu junk", [
        f'error: Parse error in file {CONF} line 2: " junk"',
        f"fatal: error opening/reading {CONF}"]),
    ("Name=gpu File=/dev/nvidia[0-1] Count=3", [
        f'error: in file {CONF} line 2: "Name=gpu File=/dev/nvidia[0-1] Count=3"',
        "fatal: Invalid GRES record for gpu, count does not match File value"]),
    ("Name=gpu Count=lots", [
        f'error: in file {CONF} line 2: "Name=gpu Count=lots"',
        "fatal: Invalid GRES record for gpu, invalid count lots"]),
    ("Name=gpu File=/dev/nvidia[3-1]", [
        "error: _parse_single_range: Invalid range: `3-1'",
        f'error: in file {CONF} line 2: "Name=gpu File=/dev/nvidia[3-1]"',
        "fatal: can't parse File=/dev/nvidia[3-1]"]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), GRES_ERRORS, ids=[e[0] for e in GRES_ERRORS])
def test_gres_conf_errors(text: str, expected: list[str]) -> None:
    with pytest.raises(GresError) as info:
        parse_gres_conf(f"# header\n{text}\n", CONF)
    assert info.value.message.split("\n") == expected


def test_a_line_without_name_is_skipped_with_slurmds_error() -> None:
    notes: list[str] = []
    lines = parse_gres_conf("NodeName=g1 Type=a100 File=/dev/nvidia0\n", CONF, notes)
    assert lines == []
    assert notes == [f"{CONF}: Invalid GRES data, no type name ( Type=a100 File=/dev/nvidia0)"]
