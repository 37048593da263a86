"""course/manifest.yaml: its schema, typed errors, and agreement with the files it names."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

from course.manifest import (
    MANIFEST,
    ROOT,
    ManifestError,
    Module,
    check_files,
    load_manifest,
    notebook_objectives,
    parse_manifest,
)
from quizzes.bank import BANKS_DIR, load_bank

#: Statements and expressions that are logic, which belongs in course/lessons/*.py
#: (unit-tested there), not in a lesson's cells.
LOGIC = re.compile(r"^\s*(def|class|for|while|if|try|elif)\b|\blambda\b|\bfor\s+\w+.*\bin\b",
                   re.MULTILINE)
WIDGET = "application/vnd.jupyter.widget-view+json"


def test_the_course_manifest_matches_the_checkout() -> None:
    """Every notebook/reading/bank it names exists (unless pending), every notebook is
    listed, objectives equal the notebooks' lines and pass marks the banks'."""
    manifest = load_manifest()
    check_files(manifest)
    assert [m.number for m in manifest.modules] == list(range(1, 9))
    for m in manifest.modules:
        assert (BANKS_DIR / f"{m.quiz}.yaml").is_file()
        assert m.pass_mark == load_bank(BANKS_DIR / f"{m.quiz}.yaml").pass_mark


def test_every_stored_notebook_is_listed() -> None:
    manifest = load_manifest()
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        assert manifest.by_notebook(nb.name) is not None, nb.name


def test_finished_modules_have_all_their_files() -> None:
    for m in load_manifest().modules:
        if not m.pending:
            assert m.notebook_path().is_file() and m.reading_path().is_file(), m.id
            assert notebook_objectives(m.notebook_path()) == m.objectives


def _raw() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def _problems(data: object) -> list[str]:
    with pytest.raises(ManifestError) as exc:
        parse_manifest(yaml.safe_dump(data), Path("manifest.yaml"))
    return exc.value.problems


def test_schema_errors_name_the_module_and_key() -> None:
    data = _raw()
    data["modules"][1]["pass_mark"] = 1.5
    del data["modules"][2]["quiz"]
    data["modules"][3]["colour"] = "red"
    data["modules"][4]["id"] = "five"
    problems = _problems(data)
    assert ("manifest.yaml: module 2 (02-sbatch): 'pass_mark' must be a number in (0, 1], "
            "not 1.5") in problems
    assert "manifest.yaml: module 3 (03-gres-gpus): missing key 'quiz'" in problems
    assert any("module 4 (04-srun-ddp): unknown key 'colour'" in p for p in problems)
    assert any("id 'five' must look like NN-name" in p for p in problems)


def test_duplicates_order_and_shape_are_checked() -> None:
    data = _raw()
    data["modules"].append(dict(data["modules"][0]))
    problems = _problems(data)
    assert "manifest.yaml: module id '01-what-is-slurm' is listed more than once" in problems
    assert any("must be in order of their numbers" in p for p in problems)
    assert _problems([1, 2]) == [
        "manifest.yaml: must be a mapping with 'schema', 'course' and 'modules'"]
    assert "manifest.yaml: 'modules' must be a non-empty list" in _problems(
        {"schema": 1, "course": "x", "modules": []})
    with pytest.raises(ManifestError, match="not valid YAML"):
        parse_manifest("modules: [", Path("manifest.yaml"))
    with pytest.raises(ManifestError, match="cannot read the course manifest"):
        load_manifest("/nonexistent/manifest.yaml")


def test_check_files_reports_missing_and_unlisted_files(tmp_path: Path) -> None:
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "09-extra.ipynb").write_text('{"cells": []}')
    data = _raw()
    data["modules"] = data["modules"][:2]
    data["modules"][0]["pending"] = False
    data["modules"][1]["quiz"] = "99-nope"
    manifest = parse_manifest(yaml.safe_dump(data), tmp_path / "manifest.yaml")
    with pytest.raises(ManifestError) as exc:
        check_files(manifest, tmp_path)
    problems = exc.value.problems
    assert ("manifest.yaml: 01-what-is-slurm: notebook notebooks/01-what-is-slurm.ipynb does "
            "not exist") in problems
    assert any("quiz bank 99-nope does not exist" in p for p in problems)
    assert "manifest.yaml: notebooks/09-extra.ipynb is not listed in the manifest" in problems


def test_objectives_mismatch_is_reported(tmp_path: Path) -> None:
    data = _raw()
    data["modules"] = data["modules"][:1]
    data["modules"][0]["objectives"] = "something else"
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "course" / "lessons").mkdir(parents=True)
    src = ROOT / "notebooks" / "01-what-is-slurm.ipynb"
    (tmp_path / "notebooks" / src.name).write_text(src.read_text())
    (tmp_path / "course" / "lessons" / "01-what-is-slurm.md").write_text("# r\n")
    manifest = parse_manifest(yaml.safe_dump(data), tmp_path / "manifest.yaml")
    with pytest.raises(ManifestError, match="objectives differ from notebooks/01-what-is-slurm"):
        check_files(manifest, tmp_path)


def test_module_lookup() -> None:
    manifest = load_manifest()
    assert manifest.module("08-frontier-scale").quiz == "08-frontier-scale"
    with pytest.raises(KeyError, match="no module '99-x'"):
        manifest.module("99-x")


@pytest.mark.parametrize("module", load_manifest().modules, ids=lambda m: m.id)
def test_each_lesson_has_its_parts_and_ends_with_its_quiz(module: Module) -> None:
    """Objectives and a short reading first, an experiment with a widget, a "try it on
    a real cluster" box, and the quiz widget as the lesson's last cell; no logic in
    cells."""
    m = module
    nb = nbformat.read(str(m.notebook_path()), as_version=4)
    intro = nb.cells[0].source
    assert "**Objectives:**" in intro and "**Reading" in intro, m.id
    assert f"`{m.reading}`" in intro  # the longer reading is named
    kinds = [(c.cell_type, c.source) for c in nb.cells]
    experiment = next(i for i, (k, src) in enumerate(kinds)
                      if k == "markdown" and src.startswith("## Experiment"))
    assert any(c.cell_type == "code" and any(WIDGET in o.get("data", {}) for o in c.outputs)
               for c in nb.cells[experiment:-1]), "the experiment shows a widget"
    boxes = [i for i, (k, src) in enumerate(kinds)
             if k == "markdown" and src.startswith("> **Try it on a real cluster:**")]
    assert len(boxes) == 1 and boxes[0] > experiment
    last = nb.cells[-1]
    assert last.cell_type == "code"
    assert last.source.startswith("from quizzes.widget import quiz")
    assert f'quiz("{m.quiz}")' in last.source and "learner_id" not in last.source
    assert any(WIDGET in o.get("data", {}) for o in last.outputs)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not LOGIC.search(cell.source), f"logic in a cell of {m.id}:\n{cell.source}"


def test_the_logic_check_catches_loops_and_definitions() -> None:
    for src in ("for job in QUEUE:\n    print(job)", "def f():\n    pass",
                "x = [a for a in b]", "if x:\n    y()", "f = lambda: 1"):
        assert LOGIC.search(src), src
    for src in ('print(queue_listing())', 'cluster.run("sinfo")',
                "with local_cluster() as c:\n    run(c)", "# for each node"):
        assert not LOGIC.search(src), src
