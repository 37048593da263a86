"""``python -m course build``: execute, validate and publish the course as a static site.

1. **Execute and validate** every lesson notebook of the manifest once: one
   ``pytest --nbval`` run (strict, the sanitizers of ``notebooks/sanitize.cfg``) whose
   fresh outputs are kept by the `course.build_nbval` plugin, with a progress bar per
   executed cell. ``validate=False`` executes with nbclient instead (no comparison);
   ``execute=False`` renders the stored outputs as they are.
2. **Render** each executed notebook to HTML with nbconvert (template
   ``course/site/lesson``): plotly figures become interactive ``<div>``s drawn by the
   ``plotly.min.js`` shipped with plotly (copied to ``assets/``, so pages work offline);
   widgets, which need a kernel, are replaced by a note to open the notebook in
   JupyterLab.
3. **Publish** the readings (markdown) and an index page from the manifest (titles,
   objectives, pass marks), with links between them.

Site layout: ``index.html``, ``lessons/NN-name.html``, ``readings/NN-name.html``,
``notebooks/NN-name.ipynb`` (the executed notebook), ``assets/``; the pt-BR edition
(``BuildOptions.lang``) the same under ``pt-BR/``, from notebooks/pt-BR/ (written first by
``python -m course build --lang``, course/i18n.py) and course/lessons/pt-BR/, its strict
nbval run with the edition's sanitizer (course.i18n.nbval_sanitize).  Every page has its
``lang`` attribute and a language menu to the same page in the other edition.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from course.build_render import (
    Pages,
    RenderError,
    copy_assets,
    edition_prefix,
    inline_markdown,
    markdown_html,
    prepare_for_html,
    reading_path,
    render_index,
    render_lesson,
    render_reading,
)
from course.i18n import edition_dir, nbval_sanitize
from course.manifest import ROOT, Manifest, Module, load_manifest
from quizzes.i18n import language


class BuildError(RuntimeError):
    """The course could not be built; the message says why (and what failed)."""

    @property
    def message(self) -> str:
        """The user-facing text."""
        return str(self)


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """What to build: ``only`` restricts to some module ids (``01-what-is-slurm``)."""

    out: Path = ROOT / "build" / "site"
    execute: bool = True
    validate: bool = True
    only: tuple[str, ...] = ()
    timeout: int = 900
    progress: bool = True
    #: The edition: English (the site's root) or pt-BR (``<out>/pt-BR/``, notebooks from
    #: notebooks/pt-BR/, which ``python -m course build --lang`` writes first).
    lang: str = "en"
    #: Every edition built together (each page's language menu links them).
    langs: tuple[str, ...] = ("en",)


@dataclass(slots=True)
class BuildReport:
    """What was written and how long each phase took (seconds)."""

    out: Path
    lessons: list[str] = field(default_factory=list)
    readings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        """One paragraph for the terminal."""
        times = ", ".join(f"{k} {v:.1f} s" for k, v in self.seconds.items())
        extra = f"; not written yet: {', '.join(self.missing)}" if self.missing else ""
        return (f"course: built {self.out}/index.html: {len(self.lessons)} lessons, "
                f"{len(self.readings)} readings ({times}){extra}")


def _kernel_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(tmp / var.lower())
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env.pop("SLURM_CONF", None)  # lessons run on the embedded default cluster
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _code_cells(path: Path) -> int:
    return sum(c.cell_type == "code" for c in nbformat.read(str(path), as_version=4).cells)


def _bar(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit="cell", desc="executing", disable=not enabled,
                file=sys.stderr, dynamic_ncols=True)


def validate_notebooks(paths: Sequence[Path], work: Path, *, timeout: int = 900,
                       progress: bool = True, sanitize: Path | None = None) -> dict[str, Path]:
    """Execute and validate ``paths`` with one strict nbval run; the executed copies.
    ``sanitize``: the sanitizer file (default notebooks/sanitize.cfg; an edition's,
    course.i18n.nbval_sanitize, for a translated one)."""
    captured = work / "executed"
    env = _kernel_env(work)
    env["COURSE_BUILD_CAPTURE"] = str(captured)
    read_fd, write_fd = os.pipe()
    env["COURSE_BUILD_PROGRESS_FD"] = str(write_fd)
    log = work / "nbval.log"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
            "course.build_nbval", "--nbval", "--nbval-current-env", "--nbval-sanitize-with",
            str(sanitize or ROOT / "notebooks" / "sanitize.cfg"), *map(str, paths)]
    bar = _bar(sum(_code_cells(p) for p in paths), progress)
    failed: list[str] = []
    deadline = time.monotonic() + timeout
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                pass_fds=(write_fd,))
        os.close(write_fd)
        buf = b""
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            while True:
                if time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    raise BuildError(f"course build: nbval did not finish in {timeout} s")
                ready, _, _ = select.select([pipe], [], [], 1.0)
                if not ready:
                    continue
                chunk = pipe.read(4096)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    _, name, cell, status = line.decode().split(" ", 3)
                    bar.set_postfix_str(name, refresh=False)
                    bar.update(1)
                    if status != "ok":
                        failed.append(f"{name} cell {cell}")
        rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    bar.close()
    if rc != 0:
        tail = log.read_text()[-6000:]
        raise BuildError(f"course build: nbval failed ({', '.join(failed) or f'exit {rc}'}):\n"
                         f"{tail}")
    result = {p.name: captured / p.name for p in paths}
    missing = [n for n, p in result.items() if not p.is_file()]
    if missing:
        raise BuildError(f"course build: nbval ran but kept no outputs for {missing}")
    return result


def execute_notebooks(paths: Sequence[Path], work: Path, *, timeout: int = 900,
                      progress: bool = True) -> dict[str, Path]:
    """Execute ``paths`` with nbclient (no comparison); the executed copies."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    out_dir = work / "executed"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = _kernel_env(work)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    bar = _bar(sum(_code_cells(p) for p in paths), progress)
    try:
        result: dict[str, Path] = {}
        for path in paths:
            nb = nbformat.read(str(path), as_version=4)
            bar.set_postfix_str(path.name, refresh=False)
            client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                    resources={"metadata": {"path": str(path.parent)}})
            client.on_cell_executed = lambda **_kw: bar.update(1)
            try:
                client.execute()
            except CellExecutionError as exc:
                raise BuildError(f"course build: {path.name} failed:\n{exc}") from exc
            nbformat.write(nb, str(out_dir / path.name))
            result[path.name] = out_dir / path.name
        return result
    finally:
        bar.close()
        os.environ.clear()
        os.environ.update(saved)


def build(options: BuildOptions | None = None, *, manifest: Manifest | None = None,
          root: Path = ROOT) -> BuildReport:
    """Build the course site into ``options.out``; `BuildError` says what failed."""
    opts = options or BuildOptions()
    man = manifest or load_manifest()
    unknown = [i for i in opts.only if i not in {m.id for m in man.modules}]
    if unknown:
        raise BuildError(f"course build: no module {', '.join(unknown)} in the manifest")
    chosen = [m for m in man.modules if not opts.only or m.id in opts.only]
    lang = language(opts.lang)
    site = opts.out / edition_prefix(lang) if edition_prefix(lang) else opts.out
    report = BuildReport(site)
    folder = edition_dir(lang, root / "notebooks")

    def notebook(m: Module) -> Path:
        return folder / m.notebook_path(root).name

    have_nb = [m for m in chosen if notebook(m).is_file()]
    report.missing = [m.id for m in chosen if m not in have_nb]
    if site.exists():
        for sub in ("index.html", "lessons", "readings", "notebooks", "assets"):
            target = site / sub   # never another edition's folder inside the English site
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    site.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-build-") as tmp:
        t = time.monotonic()
        paths = [notebook(m) for m in have_nb]
        if not opts.execute or not paths:
            executed = {p.name: p for p in paths}
        elif opts.validate:
            executed = validate_notebooks(
                paths, Path(tmp), timeout=opts.timeout, progress=opts.progress,
                sanitize=nbval_sanitize(lang, Path(tmp) / "sanitize.cfg",
                                        ROOT / "notebooks" / "sanitize.cfg"))
        else:
            executed = execute_notebooks(paths, Path(tmp), timeout=opts.timeout,
                                         progress=opts.progress)
        report.seconds["execute+validate" if opts.validate else "execute"] = (
            time.monotonic() - t)
        t = time.monotonic()
        try:
            copy_assets(site)
        except RenderError as exc:
            raise BuildError(str(exc)) from exc
        pages = Pages(frozenset(m.id for m in have_nb),
                       frozenset(m.id for m in chosen if reading_path(m, lang, root).is_file()))
        langs = tuple(dict.fromkeys([*map(language, opts.langs), lang]))
        for m in have_nb:
            render_lesson(executed[Path(m.notebook).name], m, man, site, pages, lang, langs)
            report.lessons.append(m.id)
        for m in chosen:
            if m.id in pages.readings:
                render_reading(m, man, site, pages, root, lang, langs)
                report.readings.append(m.id)
        render_index(man, site, set(pages.lessons), set(pages.readings), root, lang, langs,
                     {m.id: notebook(m) for m in have_nb})
        report.seconds["render"] = time.monotonic() - t
    return report


__all__ = ["BuildError", "BuildOptions", "BuildReport", "build", "copy_assets",
           "execute_notebooks", "inline_markdown", "markdown_html", "prepare_for_html",
           "render_index", "render_lesson", "render_reading", "validate_notebooks"]
