"""One switch opens JupyterLab in pt-BR: ``python -m course lab --lang pt-BR`` (what
``scripts/course --lang pt-BR`` and ``COURSE_LANG=pt-BR scripts/course`` run) serves the
pt-BR edition with JupyterLab's own interface in Portuguese (its language pack, the locale
set in a per-run overrides.json); English stays the default.  The menus seen in a real
browser are checked in tests/browser/test_browser_pt_br.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_driver import lab_env, running_lab

from course.i18n_lab import (
    MAINMENU_PLUGIN,
    TRANSLATION_PLUGIN,
    app_settings,
    jupyterlab_locale,
    language_pack_installed,
    overrides,
    split_lang,
    with_settings,
)
from course.lab import APP_SETTINGS, lab_arguments
from course.manifest import ROOT


def test_the_language_comes_from_the_option_else_course_lang_else_english():
    assert split_lang(["--no-browser"], {}) == ("en", ["--no-browser"])
    assert split_lang(["--no-browser"], {"COURSE_LANG": "pt_BR"}) == ("pt-BR", ["--no-browser"])
    assert split_lang(["--lang", "pt-BR", "x.ipynb"], {}) == ("pt-BR", ["x.ipynb"])
    assert split_lang(["--lang=en"], {"COURSE_LANG": "pt-BR"}) == ("en", [])
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        split_lang(["--lang", "fr"], {})


def test_the_overrides_keep_the_course_settings_and_set_the_locale():
    base = json.loads((APP_SETTINGS / "overrides.json").read_text())
    pt = overrides("pt-BR")
    assert pt[TRANSLATION_PLUGIN] == {"locale": "pt_BR"}
    labels = {m["id"]: m["label"] for m in pt[MAINMENU_PLUGIN]["menus"]}
    assert labels["jp-mainmenu-file"] == "Arquivo" and labels["jp-mainmenu-help"] == "Ajuda"
    assert {k: v for k, v in pt.items() if k not in (TRANSLATION_PLUGIN, MAINMENU_PLUGIN)} \
        == base
    assert overrides("en") == {**base, TRANSLATION_PLUGIN: {"locale": "en"}}
    with app_settings("pt-BR") as folder:
        assert json.loads((folder / "overrides.json").read_text()) == pt
        args = with_settings(lab_arguments(ROOT / "notebooks", ["--no-browser"]), folder)
        assert [a for a in args if "app_settings_dir" in a] == \
            [f"--LabApp.app_settings_dir={folder}"]
        assert args[0] == "lab" and args[-1] == "--no-browser"
    assert not folder.exists()          # per run: nothing left behind
    assert not (APP_SETTINGS / "overrides.json").read_text().count("pt_BR")


def test_jupyterlab_has_its_pt_br_language_pack():
    """scripts/setup installs jupyterlab-language-pack-pt-BR (pyproject.toml)."""
    assert jupyterlab_locale("pt-BR") == "pt_BR"
    assert language_pack_installed("pt-BR")


def test_an_unknown_language_is_refused_with_the_known_ones():
    proc = subprocess.run([sys.executable, "-m", "course", "lab", "--lang", "fr"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert "unknown language 'fr'" in proc.stderr and "pt-BR" in proc.stderr
    assert "Traceback" not in proc.stderr


def _server(tmp: Path, lang_args: list[str], env_lang: str | None) -> Iterator[dict]:
    root = tmp / "root"
    root.mkdir()
    env = lab_env(tmp)
    if env_lang:
        env["COURSE_LANG"] = env_lang
    with running_lab(tmp, root, env, lang_args) as (base, token):
        url = f"{base}/lab/api/settings/{TRANSLATION_PLUGIN}?token={token}"
        with urllib.request.urlopen(url, timeout=30) as resp:
            settings = json.load(resp)
        url = f"{base}/lab/api/settings/{MAINMENU_PLUGIN}?token={token}"
        with urllib.request.urlopen(url, timeout=30) as resp:
            menus = json.load(resp)["schema"]["properties"]["menus"]["default"]
        with urllib.request.urlopen(f"{base}/lab/api/translations/pt_BR?token={token}",
                                    timeout=30) as resp:
            pack = json.load(resp)
        yield {"settings": settings, "pack": pack, "menus": menus, "base": base,
               "token": token}


@pytest.mark.parametrize(("args", "env_lang", "locale"), [
    (["--lang", "pt-BR"], None, "pt_BR"),
    ([], "pt-BR", "pt_BR"),
    ([], None, "en"),
])
def test_the_server_gives_jupyterlab_the_editions_locale(tmp_path, args, env_lang, locale):
    """A real jupyter_server: the translation plugin's composite settings carry the locale
    (from the per-run overrides.json), and the pt_BR catalogue is served."""
    for got in _server(tmp_path, args, env_lang):
        # overrides.json changes the schema's default (the learner's own choice would win)
        assert got["settings"]["schema"]["properties"]["locale"]["default"] == locale
        assert "locale" not in got["settings"]["settings"]
        assert got["pack"]["message"] == "" and got["pack"]["data"]
        jlab = got["pack"]["data"]["jupyterlab"]
        assert jlab[""]["language"] == "pt-BR" and jlab["New Launcher"] == ["Novo iniciador"]
        file_menu = [m.get("label") for m in got["menus"] if m["id"] == "jp-mainmenu-file"]
        assert file_menu == (["Arquivo"] if locale == "pt_BR" else [])
