"""Associations and QOS loaded from the YAML mirror of ``sacctmgr show assoc/qos``."""

from __future__ import annotations

from pathlib import Path

import pytest

from minislurm.common.accounts import (
    DEFAULT_ASSOCIATIONS,
    ROOT,
    USE_PARENT,
    load_associations,
    parse_associations,
    parse_tres,
)
from minislurm.errors import ConfigError

SMALL = """
cluster: test
qos:
  - {Name: high, Priority: 100, MaxTRESPerUser: "gres/gpu=8", MaxWall: "2-00:00:00",
     Preempt: scavenger}
  - {Name: scavenger, UsageFactor: 0, PreemptMode: requeue}
accounts:
  - {Name: ml, Fairshare: 60}
  - {Name: llm, Parent: ml, Fairshare: 40, Priority: 5}
users:
  - {Name: alice, Account: llm, QOS: "normal,high", DefaultQOS: normal}
  - {Name: bob, Account: ml, Fairshare: parent}
"""


def test_the_embedded_cluster_loads() -> None:
    aset = load_associations()
    assert DEFAULT_ASSOCIATIONS.name == "associations.yaml"
    assert aset.cluster == "minicluster"
    assert aset.get(ROOT) is not None
    assert aset.user_association("alice", "llm") is not None
    assert {q.name for q in aset.qos} >= {"normal", "high", "scavenger"}
    scavenger = aset.qos_named("scavenger")
    assert scavenger is not None and scavenger.preempt_mode == "requeue"


def test_tree_structure_and_sshare_order() -> None:
    aset = parse_associations(SMALL)
    order = [(depth, a.account, a.user) for a, depth in aset.hierarchy()]
    # users before sub-accounts, each sorted by name; root and root/root always exist
    assert order == [
        (0, "root", None),
        (1, "root", "root"),
        (1, "ml", None),
        (2, "ml", "bob"),
        (2, "llm", None),
        (3, "llm", "alice"),
    ]
    assert aset.lineage(("llm", "alice")) == [("llm", "alice"), ("llm", None), ("ml", None), ROOT]
    assert aset.user_count() == 3


def test_fields_are_read_with_sacctmgr_meanings() -> None:
    aset = parse_associations(SMALL)
    high = aset.qos_named("high")
    assert high is not None
    assert (high.priority, high.max_wall, high.preempt) == (100, 2 * 24 * 60, ("scavenger",))
    assert high.max_tres_per_user == {"gres/gpu": 8}
    scavenger = aset.qos_named("scavenger")
    assert scavenger is not None and scavenger.usage_factor == 0.0
    assert aset.qos_named("normal") is not None  # always there
    bob = aset.user_association("bob", "ml")
    assert bob is not None and bob.shares is USE_PARENT
    alice = aset.user_association("alice", "llm")
    assert alice is not None and alice.qos == ("normal", "high") and alice.shares == 1
    assert aset.assoc_priority(("llm", None)) == 5
    assert aset.assoc_priority(("llm", "alice")) == 0  # not inherited (measured on 22.05)
    assert aset.max_qos_priority() == 100
    assert aset.default_account("alice") == "llm"


def test_parse_tres() -> None:
    assert parse_tres("cpu=4,mem=10G,gres/gpu=8") == {"cpu": 4, "mem": 10240, "gres/gpu": 8}
    assert parse_tres("mem=500") == {"mem": 500}
    assert parse_tres(None) == {}
    with pytest.raises(ConfigError, match="Invalid TRES"):
        parse_tres("cpu")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("users:\n  - {Name: x, Account: nosuch}\n", "Parent account nosuch doesn't exist"),
        ("accounts:\n  - {Name: a, Parent: b}\n", "Parent account b doesn't exist"),
        ("users:\n  - {Name: x}\n", "missing Account"),
        ("users:\n  - {Name: x, Account: root, QOS: gold}\n", "Invalid qos name gold"),
        ("qos:\n  - {Name: q, PreemptMode: never}\n", "Invalid PreemptMode"),
        ("qos:\n  - {Name: q, Preempt: ghost}\n", "Invalid QOS name ghost"),
        ("accounts:\n  - {Name: a, Fairshare: lots}\n", "Invalid Fairshare value: lots"),
        ("accounts:\n  - {Name: a, Colour: red}\n", "Unknown field 'Colour'"),
        ("accounts:\n  - {Name: a}\n  - {Name: a}\n", "Duplicate association a/"),
        ("partitions: []\n", "Unknown section 'partitions'"),
        ("accounts: [\n", "invalid YAML"),
        (
            "accounts:\n  - {Name: a, Parent: b}\n  - {Name: b, Parent: a}\n",
            "parent loop",
        ),
    ],
)
def test_bad_files_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_associations(text, "assoc.yaml")
    assert message in err.value.message
    assert err.value.message.startswith("assoc.yaml")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Unable to open associations file"):
        load_associations(tmp_path / "nope.yaml")
