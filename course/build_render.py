"""The course site's pages: lesson notebooks (nbconvert), readings (markdown), the index.

Lesson pages use nbconvert's lab look with the template ``course/site/lesson``: plotly
outputs become ``<div>``s drawn by ``assets/plotly.min.js`` (copied from the installed
plotly, so the pages work offline). Widgets need a kernel: each experiment (a widget
view) is shown as it first appeared -- the plotly figures of its Output widgets, read
from the widget state saved with the executed notebook (``metadata.widgets``: nbclient's
``store_widget_state``, build_nbval.py for the nbval run) -- followed by a note to open
the notebook in JupyterLab to use its controls.
Links to readings (``readings/NN.md``, ``../course/lessons/NN.md``) and notebooks (``NN.ipynb``) are
rewritten to their pages (to the index when that page is not built).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import nbformat

from course.i18n import N_, t
from course.manifest import ROOT, Manifest, Module, notebook_objectives
from quizzes.i18n import DEFAULT_LANG, LANGS, language

SITE_TEMPLATES = Path(__file__).resolve().parent / "site"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"
_MODEL_REF = "IPY_MODEL_"
WIDGET_NOTE = N_('Interactive widget: open this notebook in JupyterLab '
                 '(<code>{command}</code>) to use it.')
#: A language's name in its own language, for the site's language menu.
LANG_NAMES = {"en": "English", "pt-BR": "Português (Brasil)"}


def widget_note(lang: str = DEFAULT_LANG) -> str:
    """The note replacing a widget on a lesson page, in ``lang``."""
    command = "scripts/course" if language(lang) == DEFAULT_LANG else \
        f"scripts/course --lang {language(lang)}"
    return ('<div class="course-widget-note">' + t(lang, WIDGET_NOTE).format(command=command)
            + "</div>")


def edition_prefix(lang: str) -> str:
    """An edition's folder in the site: ``""`` for English, ``pt-BR/`` for pt-BR."""
    lang = language(lang)
    return "" if lang == DEFAULT_LANG else f"{lang}/"


def lang_menu(lang: str, page: str, langs: tuple[str, ...] = tuple(LANGS)) -> str:
    """The language menu of a page: ``page`` (``index.html``, ``lessons/NN.html``) in each
    built edition, the current one marked (``aria-current``)."""
    lang = language(lang)
    up = "../" * (page.count("/") + (lang != DEFAULT_LANG))
    items = []
    for other in langs:
        other = language(other)
        name = LANG_NAMES[other]
        if other == lang:
            items.append(f'<span class="current" lang="{other}" aria-current="page">{name}'
                         "</span>")
        else:
            items.append(f'<a href="{up}{edition_prefix(other)}{page}" hreflang="{other}" '
                         f'lang="{other}">{name}</a>')
    label = t(lang, "Language")
    return f'<nav class="course-langs" aria-label="{label}">' + " · ".join(items) + "</nav>"
#: A notebook's link to its reading: ``readings/NN.md`` (JupyterLab's root is notebooks/,
#: course/lab.py) or the repository path ``course/lessons/NN.md``.
_READING_LINK = re.compile(
    r'href="(?:(?:\.\./)?course/lessons/|(?:\.\./)?readings/)(\d\d-[a-z0-9-]+)\.md"')
#: (not the navigation's own ``download`` link to the executed notebook)
_NOTEBOOK_LINK = re.compile(
    r'(?<!download="" )href="(?:\.\./)?(?:notebooks/)?(\d\d-[a-z0-9-]+)\.ipynb"(?! download)')


class RenderError(RuntimeError):
    """A page could not be rendered (a missing asset)."""


def _plotly_html(fig: dict[str, Any], div_id: str) -> str:
    import plotly.io as pio

    return str(pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id,
                           config={"responsive": True}))


def _model_refs(value: Any) -> list[str]:
    """The widget models a state value refers to (``IPY_MODEL_<id>``), in order."""
    if isinstance(value, str):
        return [value[len(_MODEL_REF):]] if value.startswith(_MODEL_REF) else []
    if isinstance(value, dict):
        return [r for v in value.values() for r in _model_refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _model_refs(v)]
    return []


def widget_figures(model_id: str, state: dict[str, Any]) -> list[dict[str, Any]]:
    """The plotly figures a widget view shows: those in the Output widgets of its tree
    (children first to last), from a saved widget state (``model id -> model``)."""
    figures: list[dict[str, Any]] = []
    seen: set[str] = set()

    def visit(mid: str) -> None:
        if mid in seen or mid not in state:
            return
        seen.add(mid)
        model = state[mid]
        body = model.get("state", {})
        if model.get("model_name") == "OutputModel":
            for out in body.get("outputs", []):
                fig = (out.get("data") or {}).get(PLOTLY_MIME)
                if fig:
                    figures.append(dict(fig))
        for ref in _model_refs({k: v for k, v in body.items() if k != "outputs"}):
            visit(ref)

    visit(model_id)
    return figures


def prepare_for_html(nb: Any, module_id: str, lang: str = DEFAULT_LANG) -> Any:
    """Plotly outputs -> HTML drawn by assets/plotly.min.js; widgets -> their starting
    figures (from the saved widget state) and a note."""
    saved = nb.metadata.pop("widgets", None) or {}
    state = dict(saved.get(WIDGET_STATE_MIME, {}).get("state", {}))
    n = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data:
                continue
            if PLOTLY_MIME in data:
                n += 1
                data["text/html"] = _plotly_html(dict(data.pop(PLOTLY_MIME)),
                                                 f"plotly-{module_id}-{n}")
            elif WIDGET_MIME in data:
                view = data.pop(WIDGET_MIME)
                data.pop("text/plain", None)
                html = []
                for fig in widget_figures(str(view.get("model_id", "")), state):
                    n += 1
                    html.append(_plotly_html(fig, f"plotly-{module_id}-{n}"))
                if html:
                    data["text/html"] = ('<div class="course-experiment">' + "".join(html)
                                         + WIDGET_NOTE + "</div>")
                else:
                    data["text/html"] = widget_note(lang)
    return nb


@dataclass(frozen=True, slots=True)
class Pages:
    lessons: frozenset[str]
    readings: frozenset[str]


def _links(text: str, pages: Pages) -> str:
    """Links to readings (.md) and notebooks (.ipynb) -> their pages (index if not built)."""
    def reading(m: re.Match[str]) -> str:
        ok = m.group(1) in pages.readings
        return f'href="../readings/{m.group(1)}.html"' if ok else 'href="../index.html"'

    def lesson(m: re.Match[str]) -> str:
        ok = m.group(1) in pages.lessons
        return f'href="../lessons/{m.group(1)}.html"' if ok else 'href="../index.html"'

    return _NOTEBOOK_LINK.sub(lesson, _READING_LINK.sub(reading, text))


def title(m: Module, lang: str = DEFAULT_LANG) -> str:
    """A module's title in ``lang`` (the manifest's titles are ``course`` messages)."""
    return t(lang, m.title)


def _nav(manifest: Manifest, m: Module, kind: str, pages: Pages,
         lang: str = DEFAULT_LANG) -> str:
    have = pages.lessons if kind == "lesson" else pages.readings
    mods = [x for x in manifest.modules if x.id in have]
    i = next((k for k, x in enumerate(mods) if x.id == m.id), None)
    index, reading = t(lang, "Course index"), t(lang, "Reading")
    notebook, lesson = t(lang, "Notebook (.ipynb)"), t(lang, "Lesson notebook")
    parts = [f'<a href="../index.html">{index}</a>']
    if kind == "lesson":
        if m.id in pages.readings:
            parts.append(f'<a href="../readings/{m.id}.html">{reading}</a>')
        parts.append(f'<a href="../notebooks/{m.id}.ipynb" download>{notebook}</a>')
    elif m.id in pages.lessons:
        parts.append(f'<a href="../lessons/{m.id}.html">{lesson}</a>')
    if i is not None and i > 0:
        parts.append(f'<a href="../{kind}s/{mods[i - 1].id}.html">← '
                     f'{title(mods[i - 1], lang)}</a>')
    if i is not None and i + 1 < len(mods):
        parts.append(f'<a href="../{kind}s/{mods[i + 1].id}.html">'
                     f'{title(mods[i + 1], lang)} →</a>')
    return '<nav class="course-nav">' + " · ".join(parts) + "</nav>"


def lesson_heading(m: Module, lang: str = DEFAULT_LANG) -> str:
    """``Lesson 3: GPUs as GRES`` in ``lang``."""
    return t(lang, "Lesson {number}: {title}").format(number=m.number, title=title(m, lang))


def render_lesson(nb_path: Path, m: Module, manifest: Manifest, site: Path,
                  pages: Pages, lang: str = DEFAULT_LANG,
                  langs: tuple[str, ...] = (DEFAULT_LANG,)) -> Path:
    """Write ``lessons/<id>.html`` (and the executed notebook) for module ``m``."""
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(nb_path), as_version=4)
    (site / "notebooks").mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(site / "notebooks" / f"{m.id}.ipynb"))
    exporter = HTMLExporter(template_name="lesson", extra_template_basedirs=[str(SITE_TEMPLATES)])
    nav = _nav(manifest, m, "lesson", pages, lang)
    resources = {"course_nav": lang_menu(lang, f"lessons/{m.id}.html", langs) + nav,
                 "course_nav_bottom": nav,
                 "course_title": lesson_heading(m, lang),
                 "metadata": {"name": lesson_heading(m, lang)}}
    body, _ = exporter.from_notebook_node(prepare_for_html(nb, m.id, lang),
                                          resources=resources)
    # nbconvert takes only ISO 639-1 codes (pt-BR would become en): the page's language
    body = re.sub(r'<html lang="[^"]*">', f'<html lang="{language(lang)}">', body, count=1)
    path = site / "lessons" / f"{m.id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_links(body, pages), encoding="utf-8")
    return path


def _env() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(SITE_TEMPLATES)),
                              autoescape=jinja2.select_autoescape(["html"]))


def markdown_html(text: str) -> str:
    """Markdown (tables, fenced code) to HTML, as the readings are written."""
    import mistune

    md = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])
    return str(md(text))


def inline_markdown(text: str) -> Any:
    """One line of markdown (`code`, *emphasis*) as safe inline HTML."""
    import markupsafe
    import mistune

    body = str(mistune.create_markdown(escape=True)(text)).strip()
    return markupsafe.Markup(body.removeprefix("<p>").removesuffix("</p>"))


def reading_path(m: Module, lang: str = DEFAULT_LANG, root: Path = ROOT) -> Path:
    """The module's reading in ``lang``: ``course/lessons/<lang>/NN-name.md`` beside the
    English one."""
    path = m.reading_path(root)
    lang = language(lang)
    return path if lang == DEFAULT_LANG else path.parent / lang / path.name


def render_reading(m: Module, manifest: Manifest, site: Path, pages: Pages,
                   root: Path = ROOT, lang: str = DEFAULT_LANG,
                   langs: tuple[str, ...] = (DEFAULT_LANG,)) -> Path:
    """Write ``readings/<id>.html`` from the module's markdown reading (in ``lang``)."""
    text = reading_path(m, lang, root).read_text(encoding="utf-8")
    nav = _nav(manifest, m, "reading", pages, lang)
    page = _env().get_template("reading.html.j2").render(
        title=t(lang, "{lesson} (reading)").format(lesson=lesson_heading(m, lang)),
        course=t(lang, manifest.course), lang=language(lang),
        menu=lang_menu(lang, f"readings/{m.id}.html", langs),
        nav=nav, body=_links(markdown_html(text), pages))
    path = site / "readings" / f"{m.id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def render_index(manifest: Manifest, site: Path, lessons: set[str], readings: set[str],
                 root: Path = ROOT, lang: str = DEFAULT_LANG,
                 langs: tuple[str, ...] = (DEFAULT_LANG,),
                 notebooks: dict[str, Path] | None = None) -> Path:
    """Write ``index.html``: every module with objectives, pass mark and links.

    A lesson's objectives are its notebook's ``**Objectives:**`` line when the notebook
    exists (the manifest keeps a copy for lessons still being written)."""
    modules = []
    for m in manifest.modules:
        nb = (notebooks or {}).get(m.id, m.notebook_path(root))
        found = (notebook_objectives(nb) or translated_objectives(nb)) if m.id in lessons \
            else None
        modules.append(replace(m, objectives=found or m.objectives, title=title(m, lang)))
    page = _env().get_template("index.html.j2").render(
        course=t(lang, manifest.course), modules=modules, lessons=lessons, readings=readings,
        mark=lambda x: f"{x:.0%}".replace(".", ",") if language(lang) != DEFAULT_LANG
        else f"{x:.0%}", inline=inline_markdown, lang=language(lang),
        menu=lang_menu(lang, "index.html", langs), _=lambda msg: t(lang, msg),
        scripts_course="scripts/course" if language(lang) == DEFAULT_LANG
        else f"scripts/course --lang {language(lang)}")
    path = site / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


_OBJETIVOS = re.compile(r"\*\*Objetivos:\*\*\s*(.+?)\s*$", re.S)


def translated_objectives(path: Path) -> str | None:
    """A pt-BR notebook's ``**Objetivos:**`` line (``notebook_objectives`` of English)."""
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells[:3]:
        if cell.cell_type == "markdown":
            for para in cell.source.split("\n\n"):
                found = _OBJETIVOS.search(para)
                if found:
                    return " ".join(found.group(1).split())
    return None


def copy_assets(site: Path) -> None:
    """plotly.min.js (from the installed plotly, for offline figures) and the stylesheet."""
    import plotly

    assets = site / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not js.is_file():
        raise RenderError(f"course build: plotly.min.js not found at {js}")
    shutil.copyfile(js, assets / "plotly.min.js")
    shutil.copyfile(SITE_TEMPLATES / "site.css", assets / "site.css")


__all__ = ["LANG_NAMES", "Pages", "RenderError", "copy_assets", "edition_prefix",
           "inline_markdown", "lang_menu", "markdown_html", "prepare_for_html",
           "reading_path", "render_index", "render_lesson", "render_reading", "widget_figures",
           "widget_note"]
