"""`python -m course build`: executes and validates the notebooks (nbval), writes the site.

The full pipeline (one strict nbval run that also keeps the fresh outputs) runs for
lessons 1 and 8; tests/notebooks/test_notebooks.py already runs every notebook under nbval, so
the whole course is rendered here from its stored outputs (``--no-execute``), which
checks every page and link without executing each notebook a second time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
import yaml

from course.build import BuildError, BuildOptions, BuildReport, build
from course.build_render import WIDGET_MIME
from course.manifest import MANIFEST, ROOT, load_manifest, parse_manifest


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.links.append(value)


def links_of(page: Path) -> list[str]:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.links


def assert_links_resolve(site: Path) -> int:
    """Every relative link of every page points to a file of the site."""
    count = 0
    for page in site.rglob("*.html"):
        for link in links_of(page):
            if re.match(r"^(https?:|mailto:|#|data:|javascript:)", link):
                continue
            target = (page.parent / link.split("#")[0]).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to missing {link}"
            count += 1
    return count


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildReport]:
    out = tmp_path_factory.mktemp("site") / "site"
    report = build(BuildOptions(out=out, only=("01-what-is-slurm", "08-frontier-scale"),
                                progress=False))
    print(f"\ncourse build of lessons 1 and 8: {report.summary()}")
    return out, report


@pytest.mark.slow
def test_build_executes_validates_and_writes_pages(built: tuple[Path, BuildReport]) -> None:
    site, report = built
    assert report.lessons == ["01-what-is-slurm", "08-frontier-scale"]
    for mid in report.lessons:
        assert (site / "lessons" / f"{mid}.html").is_file()
        assert (site / "readings" / f"{mid}.html").is_file()
        executed = nbformat.read(str(site / "notebooks" / f"{mid}.ipynb"), as_version=4)
        code = [c for c in executed.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), "every cell ran"
    assert assert_links_resolve(site) > 10


@pytest.mark.slow
def test_plotly_figures_are_interactive_and_offline(built: tuple[Path, BuildReport]) -> None:
    site, _ = built
    js = site / "assets" / "plotly.min.js"
    assert js.stat().st_size > 1_000_000 and b"Plotly" in js.read_bytes()[:100_000]
    page = (site / "lessons" / "08-frontier-scale.html").read_text()
    assert '<script src="../assets/plotly.min.js"></script>' in page
    executed = nbformat.read(str(site / "notebooks" / "08-frontier-scale.ipynb"), as_version=4)
    figures = sum("application/vnd.plotly.v1+json" in o.get("data", {})
                  for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    figures += len(experiment_figures(page))  # the experiments' starting figures
    assert figures >= 2 and page.count("Plotly.newPlot(") == figures  # every one drawn
    for n in range(1, figures + 1):
        assert f'id="plotly-08-frontier-scale-{n}"' in page
    assert "require.js" not in page and "html-manager" not in page  # no CDN scripts
    assert "goodput" in page and "Interactive widget: open this notebook" in page
    assert "application/vnd.jupyter.widget-view+json" not in page


_EXPERIMENT = '<div class="course-experiment">'


def experiments_of(nb: Any) -> int:
    """The notebook's experiments: code cells showing a widget, except the quiz and the
    hands-on labs (answer boxes, no figure)."""
    return sum(1 for c in nb.cells if c.cell_type == "code" and "quiz(" not in c.source
               and "lab_widget(" not in c.source
               and any(WIDGET_MIME in o.get("data", {}) for o in c.outputs))


def experiment_figures(page: str) -> list[list[str]]:
    """For each experiment block of a lesson page, its plotly figures' trace types."""
    blocks = []
    for chunk in page.split(_EXPERIMENT)[1:]:
        block = chunk.split('<div class="course-widget-note">', 1)[0]
        blocks.append(re.findall(r'Plotly\.newPlot\(\s*"[^"]+",\s*\[\{.*?"type":"(\w+)"',
                                 block, re.S))
    return blocks


@pytest.mark.slow
def test_each_experiment_shows_its_starting_figure(built: tuple[Path, BuildReport]) -> None:
    """Widgets need a kernel: each experiment is shown as it first appeared (its plotly
    figures, from the widget state kept by the nbval run), then the note."""
    site, report = built
    for mid in report.lessons:
        executed = nbformat.read(str(site / "notebooks" / f"{mid}.ipynb"), as_version=4)
        page = (site / "lessons" / f"{mid}.html").read_text()
        blocks = experiment_figures(page)
        assert experiments_of(executed) >= 1
        assert len(blocks) == experiments_of(executed), mid
        assert all(blocks), f"{mid}: an experiment without a drawn figure: {blocks}"


@pytest.mark.parametrize("validate", [True, False], ids=["nbval", "nbclient"])
def test_widget_state_saved_at_build_time(tmp_path: Path, validate: bool) -> None:
    """Both build paths keep the widgets' state of the run they made: a tiny lesson
    whose experiment is an Output widget holding a plotly figure is shown with it."""
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "course" / "lessons").mkdir(parents=True)
    source = ("import ipywidgets as w\nimport plotly.graph_objects as go\n"
              "fig = go.Figure(go.Bar(x=['a', 'b'], y=[3, 5], name='start'))\n"
              "out = w.Output()\n"  # as the lessons' experiments fill their figure views
              "out.outputs = ({'output_type': 'display_data', 'metadata': {}, 'data': "
              "{'application/vnd.plotly.v1+json': fig.to_plotly_json()}},)\n"
              "w.VBox([w.IntSlider(value=1), out])")
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Lesson 1\n\n**Objectives:** see."),
        nbformat.v4.new_code_cell(source)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = root / "notebooks" / "01-what-is-slurm.ipynb"
    nbformat.write(nb, str(path))
    (root / "course" / "lessons" / "01-what-is-slurm.md").write_text("# Reading\n")
    data = yaml.safe_load(MANIFEST.read_text())
    data["modules"] = data["modules"][:1]
    manifest = parse_manifest(yaml.safe_dump(data), root / "manifest.yaml")
    if validate:  # nbval compares outputs: store them first (widget views are not compared)
        filled = build(BuildOptions(out=tmp_path / "fill", validate=False, progress=False),
                       manifest=manifest, root=root)
        assert filled.lessons == ["01-what-is-slurm"]
        shutil.copyfile(tmp_path / "fill" / "notebooks" / "01-what-is-slurm.ipynb", path)
        stored = nbformat.read(str(path), as_version=4)
        stored.metadata.pop("widgets")  # so only this run's capture can provide it
        nbformat.write(stored, str(path))
    build(BuildOptions(out=tmp_path / "site", validate=validate, progress=False),
          manifest=manifest, root=root)
    page = (tmp_path / "site" / "lessons" / "01-what-is-slurm.html").read_text()
    assert experiment_figures(page) == [["bar"]]
    assert '"name":"start"' in page


@pytest.mark.slow
def test_index_lists_every_module_with_objectives_and_pass_marks(
        built: tuple[Path, BuildReport]) -> None:
    site, _ = built
    index = (site / "index.html").read_text()
    manifest = load_manifest()
    for m in manifest.modules:
        assert f"Lesson {m.number}: {m.title}" in index.replace("&amp;", "&")
        assert f'id="{m.id}"' in index
    assert index.count('class="pass-mark">70%<') == len(manifest.modules)
    assert "<code>slurmctld</code> decides" in index  # objectives rendered as markdown
    assert 'href="lessons/08-frontier-scale.html"' in index
    assert 'href="readings/01-what-is-slurm.html"' in index
    reading = (site / "readings" / "08-frontier-scale.html").read_text()
    assert "<table>" in reading or "<pre>" in reading
    assert 'href="../lessons/08-frontier-scale.html"' in reading


def test_whole_course_renders_from_stored_outputs(tmp_path: Path) -> None:
    report = build(BuildOptions(out=tmp_path / "site", execute=False, progress=False))
    manifest = load_manifest()
    stored = [m.id for m in manifest.modules if m.notebook_path().is_file()]
    assert report.lessons == stored
    assert report.missing == [m.id for m in manifest.modules if m.id not in stored]
    assert assert_links_resolve(tmp_path / "site") > 10
    for mid in stored:
        assert "course-nav" in (tmp_path / "site" / "lessons" / f"{mid}.html").read_text()


def test_a_notebook_whose_outputs_changed_fails_the_build(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "course" / "lessons").mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Lesson 1\n\n**Objectives:** add."),
        nbformat.v4.new_code_cell("1 + 1", execution_count=1, outputs=[
            nbformat.v4.new_output("execute_result", {"text/plain": "3"}, execution_count=1)]),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, str(root / "notebooks" / "01-what-is-slurm.ipynb"))
    (root / "course" / "lessons" / "01-what-is-slurm.md").write_text("# Reading\n")
    data = yaml.safe_load(MANIFEST.read_text())
    data["modules"] = data["modules"][:1]
    manifest = parse_manifest(yaml.safe_dump(data), root / "manifest.yaml")
    with pytest.raises(BuildError, match=r"nbval failed \(01-what-is-slurm.ipynb cell 0\)"):
        build(BuildOptions(out=tmp_path / "site", progress=False), manifest=manifest, root=root)
    # without validation the same notebook builds, with its fresh output
    report = build(BuildOptions(out=tmp_path / "site", validate=False, progress=False),
                   manifest=manifest, root=root)
    assert report.lessons == ["01-what-is-slurm"]
    fresh = json.loads((tmp_path / "site" / "notebooks" / "01-what-is-slurm.ipynb").read_text())
    assert "".join(fresh["cells"][1]["outputs"][0]["data"]["text/plain"]) == "2"


@pytest.mark.parametrize("href", ["readings/02-sbatch.md", "../course/lessons/02-sbatch.md",
                                  "course/lessons/02-sbatch.md"])
def test_reading_links_point_to_the_reading_pages(href: str) -> None:
    """A notebook's reading link (``readings/NN.md`` as JupyterLab opens it) becomes the
    site's reading page, or the index when that page is not built."""
    from course.build_render import Pages, _links

    built = Pages(lessons=frozenset({"02-sbatch"}), readings=frozenset({"02-sbatch"}))
    assert _links(f'<a href="{href}">r</a>', built) == '<a href="../readings/02-sbatch.html">r</a>'
    none = Pages(lessons=frozenset(), readings=frozenset())
    assert _links(f'<a href="{href}">r</a>', none) == '<a href="../index.html">r</a>'


def test_command_line(tmp_path: Path) -> None:
    out = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "course", "build", "--no-execute", "--out",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"course: built {out}/index.html:")
    bad = subprocess.run([sys.executable, "-m", "course", "build", "--only", "99-x", "--out",
                          str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1
    assert bad.stderr.strip() == "course build: no module 99-x in the manifest"
    check = subprocess.run([sys.executable, "-m", "course", "check"], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "8 modules, all files found" in check.stdout
