"""Learner identity outside a notebook literal: the hub's user, else a name asked once."""

from __future__ import annotations

import json
import stat

import pytest

from quizzes import identity
from quizzes.identity import IdentityError, Learner


@pytest.fixture
def env(tmp_path):
    return {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "HOME": str(tmp_path / "home")}


def test_the_hub_user_is_the_learner(env):
    assert identity.current({**env, "JUPYTERHUB_USER": "ada"}) == Learner("ada", "ada", "hub")
    identity.remember("Ada Lovelace", {**env, "JUPYTERHUB_USER": "ada"})
    assert identity.current({**env, "JUPYTERHUB_USER": "ada"}) == \
        Learner("ada", "Ada Lovelace", "hub")
    # another hub user on the same home never inherits that name
    bob = identity.current({**env, "JUPYTERHUB_USER": "bob"})
    assert bob is not None and bob.name == "bob"


def test_outside_a_hub_the_name_is_asked_once_and_kept(env, tmp_path):
    assert identity.current(env) is None
    learner = identity.remember("  Zoë   Souza ", env)
    assert learner == Learner("zoe-souza", "Zoë Souza", "config")
    path = tmp_path / "cfg" / "minislurm-course" / "learner.json"
    assert identity.config_path(env) == path
    assert json.loads(path.read_text()) == {"learner_id": "zoe-souza",
                                            "learner_name": "Zoë Souza"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert identity.current(env) == learner


def test_without_xdg_the_config_is_under_home(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert identity.config_path(env) == tmp_path / ".config" / "minislurm-course" / \
        "learner.json"


@pytest.mark.parametrize(("name", "why"), [
    ("", "type your name"), ("   ", "type your name"), ("x" * 101, "at most 100"),
    ("a\x00b", "control characters"), ("!!!", "at least one letter"),
])
def test_a_name_that_cannot_identify_anyone_is_refused(env, name, why):
    with pytest.raises(IdentityError, match=why):
        identity.remember(name, env)
    assert identity.current(env) is None


def test_a_damaged_config_is_kept_aside_not_lost(env, tmp_path):
    path = identity.config_path(env)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert identity.current(env) is None
    identity.remember("Ada", env)
    assert path.with_name("learner.json.bak").read_text() == "{not json"
    ada = identity.current(env)
    assert ada is not None and ada.id == "ada"


def test_the_widget_asks_a_name_once_then_shows_the_quiz(env, tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    outer = quiz("02-sbatch", folder=tmp_path / "subs", env=env)
    assert repr(outer) == "quiz('02-sbatch')"           # the same text output for anyone
    view = outer.children[0]
    asked = view.children
    assert "Who is taking this quiz?" in asked[0].value
    text, save = asked[1].children
    save.click()                                         # nothing typed: asked again
    assert "type your name" in asked[2].value and view.children is asked
    text.value = "Ada Lovelace"
    save.click()
    header = view.children[0].children[0]
    assert "Module 2" in header.value and "attempt 1" in header.value
    assert identity.current(env) == Learner("ada-lovelace", "Ada Lovelace", "config")
    again = quiz("02-sbatch", folder=tmp_path / "subs", env=env)   # not asked twice
    assert "attempt 1" in again.children[0].children[0].value
    assert repr(again) == repr(outer)
    hub = quiz("02-sbatch", folder=tmp_path / "subs", env={**env, "JUPYTERHUB_USER": "bob"})
    assert "attempt 1" in hub.children[0].children[0].value


def test_the_widget_reads_numbers_in_course_lang(env, tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    identity.remember("Ada", env)
    view = quiz("08-frontier-scale", folder=tmp_path, env={**env, "COURSE_LANG": "pt_BR"},
                mode="all").children[0]
    from quizzes.bank import load_banks
    numeric_ids = {f"<b>{it.common.id}</b>" for it in load_banks()["08-frontier-scale"].items
                   if it.common.type == "numeric"}

    def numeric_card(cards):
        return next(c for c in cards if any(i in c.children[0].value for i in numeric_ids))

    numeric = numeric_card(view.children[1].children)
    assert numeric.children[1].placeholder.startswith("sua resposta")  # pt-BR labels
    numeric.children[1].value = "0,125"
    numeric.children[2].click()
    assert numeric.children[2].disabled                  # read as 0.125 and graded
    assert "write decimals" not in numeric.children[3].value
    en = quiz("08-frontier-scale", folder=tmp_path, env=env, mode="all",
              learner_id="eve").children[0]
    card = numeric_card(en.children[1].children)
    assert card.children[1].placeholder.startswith("your answer")
    card.children[1].value = "0,125"
    card.children[2].click()
    assert "write decimals with a point" in card.children[3].value
    assert not card.children[2].disabled                 # the item stays open


def test_in_a_class_the_widget_links_to_the_exam_page_and_loads_no_bank(env, tmp_path):
    pytest.importorskip("ipywidgets")
    from quizzes.widget import quiz

    service = "http://127.0.0.1:8000/services/quizzes/"
    box = quiz("02-sbatch", banks=str(tmp_path / "no-banks-here"),
               env={**env, "COURSE_QUIZ_SERVICE": service, "JUPYTERHUB_USER": "ada"})
    page = box.children[0].value
    assert "exam mode" in page
    assert "href='http://127.0.0.1:8000/services/quizzes/exam/02-sbatch'" in page
    pt = quiz("02-sbatch", banks=str(tmp_path / "no-banks-here"), lang="pt-BR",
              env={**env, "COURSE_QUIZ_SERVICE": service})
    assert "modo prova" in pt.children[0].value and repr(pt) == "quiz('02-sbatch')"
