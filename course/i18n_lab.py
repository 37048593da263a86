"""JupyterLab in the learner's language (``python -m course lab --lang pt-BR``,
``scripts/course --lang pt-BR``, ``COURSE_LANG=pt-BR scripts/course``).

* **The edition**: JupyterLab's root is the edition's folder (``notebooks/`` for English,
  ``notebooks/pt-BR/`` for pt-BR, built first by :func:`course.i18n.build_edition`), so
  the file browser, the terminals' working folder and the reading links are the
  edition's; the kernels run beside the edition's ``.course-lang`` marker and the
  server's environment carries ``COURSE_LANG`` (terminals' ``quizzes`` commands).
* **JupyterLab's own words**: the ``jupyterlab-language-pack-pt-BR`` package (installed
  by scripts/setup through pyproject.toml) holds JupyterLab's catalogues; which one the
  interface uses is the setting ``locale`` of ``@jupyterlab/translation-extension:plugin``.
  It is set in an ``overrides.json`` written per run into a temporary app settings folder
  (course/jupyter/settings/overrides.json plus the locale), never in the learner's home:
  the default stays English and nothing outlives the run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from course.lab import APP_SETTINGS
from quizzes.i18n import DEFAULT_LANG, ENV_VAR, LANGS, language

#: JupyterLab's plugin holding the interface language, and the setting.
TRANSLATION_PLUGIN = "@jupyterlab/translation-extension:plugin"
#: The PyPI package of JupyterLab's pt-BR catalogues (pyproject.toml's notebook extra).
LANGUAGE_PACK = "jupyterlab-language-pack-pt-BR"


def jupyterlab_locale(lang: str) -> str:
    """JupyterLab's name of a course language: ``en``, ``pt_BR``."""
    lang = language(lang)
    return "en" if lang == DEFAULT_LANG else LANGS[lang]


#: JupyterLab's main menu bar (``@jupyterlab/mainmenu-extension:plugin``'s menus).
MAINMENU_PLUGIN = "@jupyterlab/mainmenu-extension:plugin"
#: The menu bar's titles in pt-BR.  JupyterLab translates them on the server, in the
#: ``schema`` context of its catalogue, and jupyterlab-language-pack-pt-BR 4.5.post3 has
#: no entry for them there (only ``Run``, ``Settings``, ``Help`` out of context, and
#: ``File``/``Edit`` in the tour's domain): the course sets them with the pack's own words
#: (Executar, Configurações, Ajuda, Arquivo, Editar) and the usual ones for the rest.
#: ``Kernel`` stays ``Kernel`` (the pack's word too).
MENU_LABELS: dict[str, dict[str, str]] = {
    "pt-BR": {"jp-mainmenu-file": "Arquivo", "jp-mainmenu-edit": "Editar",
              "jp-mainmenu-view": "Visualizar", "jp-mainmenu-run": "Executar",
              "jp-mainmenu-kernel": "Kernel", "jp-mainmenu-tabs": "Abas",
              "jp-mainmenu-settings": "Configurações", "jp-mainmenu-help": "Ajuda"},
}


def overrides(lang: str, base: Path = APP_SETTINGS / "overrides.json") -> dict[str, Any]:
    """The course's JupyterLab overrides with the interface language of ``lang`` (and,
    for pt-BR, the menu bar's titles the language pack lacks, :data:`MENU_LABELS`)."""
    data: dict[str, Any] = json.loads(base.read_text(encoding="utf-8")) if base.is_file() else {}
    plugin = dict(data.get(TRANSLATION_PLUGIN, {}))
    plugin["locale"] = jupyterlab_locale(lang)
    data[TRANSLATION_PLUGIN] = plugin
    labels = MENU_LABELS.get(language(lang))
    if labels:
        menus = dict(data.get(MAINMENU_PLUGIN, {}))
        menus["menus"] = [{"id": mid, "label": label} for mid, label in labels.items()]
        data[MAINMENU_PLUGIN] = menus
    return data


@contextmanager
def app_settings(lang: str) -> Iterator[Path]:
    """A temporary JupyterLab app settings folder (``overrides.json``) for one run."""
    folder = Path(tempfile.mkdtemp(prefix="course-lab-settings-"))
    try:
        (folder / "overrides.json").write_text(json.dumps(overrides(lang), indent=2) + "\n",
                                               encoding="utf-8")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def with_settings(args: Sequence[str], folder: Path) -> list[str]:
    """``jupyter lab`` arguments (course.lab.lab_arguments) with the app settings folder
    replaced by ``folder``."""
    key = "--LabApp.app_settings_dir="
    out = [a for a in args if not a.startswith(key)]
    out.insert(1, f"{key}{folder}")
    return out


def lab_environment(env: Mapping[str, str], lang: str) -> dict[str, str]:
    """The server's environment: ``COURSE_LANG`` names the edition (kernels and terminals)."""
    out = dict(env)
    out[ENV_VAR] = language(lang)
    return out


def split_lang(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, list[str]]:
    """``--lang LANG`` / ``--lang=LANG`` out of ``python -m course lab``'s arguments (else
    ``$COURSE_LANG``, else English); the language and the other arguments."""
    rest: list[str] = []
    chosen: str | None = None
    args = list(argv)
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--lang" and i + 1 < len(args):
            chosen, i = args[i + 1], i + 2
            continue
        if a.startswith("--lang="):
            chosen = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    lang = language((chosen or "").strip() or env.get(ENV_VAR, "").strip() or DEFAULT_LANG)
    return lang, rest


def language_pack_installed(lang: str) -> bool:
    """Whether JupyterLab has its catalogues for ``lang`` (English always)."""
    locale = jupyterlab_locale(lang)
    if locale == "en":
        return True
    from jupyterlab_server.translation_utils import get_language_packs

    packs, _ = get_language_packs(locale)
    return locale in packs


__all__ = ["LANGUAGE_PACK", "TRANSLATION_PLUGIN", "app_settings", "jupyterlab_locale",
           "lab_environment", "language_pack_installed", "overrides", "split_lang",
           "with_settings"]
