"""The course manifest (``course/manifest.yaml``): the modules in teaching order.

``load_manifest()`` parses and type-checks the file and raises `ManifestError` with
every problem found, each naming the file, the module and the key; ``check_files``
then checks it against the checkout (notebooks, readings and quiz banks it names
exist, every notebook in ``notebooks/`` is listed, objectives and pass marks agree
with the notebooks and banks).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: The repository checkout this package lives in.
ROOT = Path(__file__).resolve().parent.parent
#: The manifest shipped with the course.
MANIFEST = Path(__file__).resolve().parent / "manifest.yaml"

_ID = re.compile(r"^(\d\d)-[a-z0-9]+(?:-[a-z0-9]+)*$")
_OBJECTIVES = re.compile(r"\*\*Objectives:\*\*\s*(.+?)\s*$", re.S)
_KEYS = {"id", "title", "objectives", "notebook", "reading", "quiz", "pass_mark", "slider",
         "pending"}
_REQUIRED = ("id", "title", "objectives", "notebook", "reading", "quiz", "pass_mark")


class ManifestError(ValueError):
    """The manifest is malformed or disagrees with the files; ``problems`` lists each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    @property
    def message(self) -> str:
        """The user-facing text: one problem per line."""
        return str(self)


@dataclass(frozen=True, slots=True)
class Module:
    """One module of the course: a lesson notebook, its reading and its quiz."""

    id: str
    title: str
    objectives: str
    notebook: str
    reading: str
    quiz: str
    pass_mark: float
    slider: bool = False
    pending: bool = False

    @property
    def number(self) -> int:
        """The module's number (``08`` of ``08-frontier-scale``)."""
        return int(self.id[:2])

    def notebook_path(self, root: Path = ROOT) -> Path:
        """The notebook in the checkout ``root``."""
        return root / self.notebook

    def reading_path(self, root: Path = ROOT) -> Path:
        """The reading in the checkout ``root``."""
        return root / self.reading


@dataclass(frozen=True, slots=True)
class Manifest:
    """The course: its name and modules in order."""

    course: str
    modules: tuple[Module, ...]
    path: Path

    def module(self, module_id: str) -> Module:
        """The module with this id (`KeyError` naming the known ids otherwise)."""
        for m in self.modules:
            if m.id == module_id:
                return m
        raise KeyError(f"no module {module_id!r} in {self.path.name} "
                       f"(modules: {', '.join(m.id for m in self.modules)})")

    def by_notebook(self, name: str) -> Module | None:
        """The module whose notebook file is called ``name`` (``08-frontier-scale.ipynb``)."""
        return next((m for m in self.modules if Path(m.notebook).name == name), None)


def _module(raw: Any, where: str, problems: list[str]) -> Module | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a mapping of keys to values")
        return None
    for key in sorted(set(raw) - _KEYS):
        problems.append(f"{where}: unknown key {key!r} (known: {', '.join(sorted(_KEYS))})")
    missing = [k for k in _REQUIRED if k not in raw]
    for key in missing:
        problems.append(f"{where}: missing key {key!r}")
    if missing:
        return None
    ok = True
    for key in ("id", "title", "objectives", "notebook", "reading", "quiz"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            problems.append(f"{where}: {key!r} must be a non-empty text, not {raw[key]!r}")
            ok = False
    mark = raw["pass_mark"]
    if isinstance(mark, bool) or not isinstance(mark, int | float) or not 0 < mark <= 1:
        problems.append(f"{where}: 'pass_mark' must be a number in (0, 1], not {mark!r}")
        ok = False
    for key in ("slider", "pending"):
        if key in raw and not isinstance(raw[key], bool):
            problems.append(f"{where}: {key!r} must be true or false, not {raw[key]!r}")
            ok = False
    if not ok:
        return None
    if not _ID.match(raw["id"]):
        problems.append(f"{where}: id {raw['id']!r} must look like NN-name (08-frontier-scale)")
        return None
    if not raw["notebook"].endswith(".ipynb"):
        problems.append(f"{where}: notebook {raw['notebook']!r} must be a .ipynb file")
    if not raw["reading"].endswith(".md"):
        problems.append(f"{where}: reading {raw['reading']!r} must be a .md file")
    return Module(raw["id"], raw["title"].strip(), " ".join(raw["objectives"].split()),
                  raw["notebook"], raw["reading"], raw["quiz"], float(mark),
                  bool(raw.get("slider", False)), bool(raw.get("pending", False)))


def parse_manifest(text: str, path: Path = MANIFEST) -> Manifest:
    """Parse manifest text; `ManifestError` lists every problem."""
    name = path.name
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ManifestError([f"{name}: not valid YAML: {exc}"]) from exc
    if not isinstance(data, dict):
        raise ManifestError([f"{name}: must be a mapping with 'schema', 'course' and 'modules'"])
    problems: list[str] = []
    if data.get("schema") != 1:
        problems.append(f"{name}: 'schema' must be 1, not {data.get('schema')!r}")
    course = data.get("course")
    if not isinstance(course, str) or not course.strip():
        problems.append(f"{name}: 'course' must name the course")
    raw_modules = data.get("modules")
    if not isinstance(raw_modules, list) or not raw_modules:
        problems.append(f"{name}: 'modules' must be a non-empty list")
        raise ManifestError(problems)
    modules: list[Module] = []
    for i, raw in enumerate(raw_modules, 1):
        label = raw.get("id", "?") if isinstance(raw, dict) else "?"
        m = _module(raw, f"{name}: module {i} ({label})", problems)
        if m is not None:
            modules.append(m)
    ids = [m.id for m in modules]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        problems.append(f"{name}: module id {dup!r} is listed more than once")
    numbers = [m.number for m in modules]
    if numbers != sorted(numbers):
        problems.append(f"{name}: modules must be in order of their numbers, not {ids}")
    if problems:
        raise ManifestError(problems)
    return Manifest(str(course).strip(), tuple(modules), path)


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Read and parse ``path`` (default: the course's ``manifest.yaml``)."""
    p = Path(path) if path is not None else MANIFEST
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError([f"cannot read the course manifest {p}: {exc.strerror}"]) from exc
    return parse_manifest(text, p)


def notebook_objectives(path: Path) -> str | None:
    """The text after ``**Objectives:**`` in the notebook's first markdown cells."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", [])[:3]:
        if cell.get("cell_type") != "markdown":
            continue
        src = "".join(cell.get("source", ""))
        for para in src.split("\n\n"):
            m = _OBJECTIVES.search(para)
            if m:
                return " ".join(m.group(1).split())
    return None


def check_files(manifest: Manifest, root: Path = ROOT) -> None:
    """Check the manifest against the checkout; `ManifestError` lists every problem."""
    from quizzes.bank import BANKS_DIR, load_bank

    name = manifest.path.name
    problems: list[str] = []
    for m in manifest.modules:
        where = f"{name}: {m.id}"
        nb, reading = m.notebook_path(root), m.reading_path(root)
        for label, path in (("notebook", nb), ("reading", reading)):
            if not path.is_file() and not m.pending:
                problems.append(f"{where}: {label} {path.relative_to(root)} does not exist")
        bank_path = BANKS_DIR / f"{m.quiz}.yaml"
        if not bank_path.is_file():
            problems.append(f"{where}: quiz bank {m.quiz} does not exist ({bank_path})")
        else:
            bank = load_bank(bank_path)
            if abs(bank.pass_mark - m.pass_mark) > 1e-9:
                problems.append(f"{where}: pass_mark {m.pass_mark} but the bank {m.quiz} says "
                                f"{bank.pass_mark}")
        if nb.is_file() and not m.pending:
            found = notebook_objectives(nb)
            if found is None:
                problems.append(f"{where}: {m.notebook} has no '**Objectives:**' line")
            elif found != m.objectives:
                problems.append(f"{where}: objectives differ from {m.notebook}'s line: "
                                f"{found!r}")
    listed = {Path(m.notebook).name for m in manifest.modules}
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        if nb.name not in listed:
            problems.append(f"{name}: notebooks/{nb.name} is not listed in the manifest")
    if problems:
        raise ManifestError(problems)


__all__ = ["MANIFEST", "ROOT", "Manifest", "ManifestError", "Module", "check_files",
           "load_manifest", "notebook_objectives", "parse_manifest"]
