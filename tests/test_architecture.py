"""The import graph keeps the architecture: no import circle, no upward import.

Every ``import`` of ``minislurm/``, ``quizzes/`` and ``course/`` counts, read with
:mod:`ast` (nothing is imported): module-level ones, the ones inside functions and
the ones under ``if TYPE_CHECKING:`` (a type-only import is still a dependency
of the design; the mixins' ``self: Controller`` circle was made of them).

Two rules, as docs/ARCHITECTURE.md explains:

* **No circle**: no strongly connected component of more than one module.
* **No upward import**: `LAYERS` lists the layers from the bottom up; a module
  may import its own layer and the ones below, never one above. A module is in
  the layer of its longest matching prefix; a module in no layer fails too, so a
  new package has to be placed on purpose.

A third rule keeps docs/ARCHITECTURE.md whole: it names every module of
``minislurm/`` (``conf/read_config.py`` as written there, in backquotes) and
every package folder (``conf/``).

The self-tests at the end run the checks on tiny graphs, on a package written to
a temporary folder and on a tiny document, so the checks are seen to fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: The packages whose imports are checked.
ROOTS = ("minislurm", "quizzes", "course")

#: The layers, bottom first: a module may import only its own layer or a lower one.
#: A prefix names a module and everything under it; ``=name`` names that module alone
#: (the root package: its ``__init__`` holds the version and imports nothing).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors and states", ("=minislurm", "minislurm.errors", "minislurm.states")),
    ("common", ("minislurm.common",)),
    ("conf", ("minislurm.conf",)),
    ("options", ("minislurm.options", "minislurm.dependency")),
    ("records", ("minislurm.job", "minislurm.node")),
    ("select and priority plugins", ("minislurm.select", "minislurm.priority")),
    ("sched plugins", ("minislurm.sched",)),
    ("ctld", ("minislurm.ctld",)),
    ("slurmd", ("minislurm.slurmd",)),
    ("commands", ("minislurm.cli",)),
    ("daemon", ("minislurm.daemon",)),
    ("sim", ("minislurm.sim",)),
    ("entry point", ("minislurm.__main__",)),
    # the DDP example (a program run under Slurm) is below the quizzes: the labs grade
    # a job's tasks by the wiring it derives from SLURM_* (course.ddp.wiring)
    ("the DDP example", ("course.ddp",)),
    ("quizzes", ("quizzes",)),
    ("course", ("course",)),
)

#: The document that must name every module of minislurm/.
ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"

Graph = Mapping[str, set[str]]


def module_name(root: Path, path: Path) -> str:
    """``minislurm/conf/__init__.py`` -> ``minislurm.conf``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(root, path)] = path
    return found


def _resolve(name: str, known: Mapping[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in (``a.b.func`` -> ``a.b``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The known modules ``module`` imports anywhere in its file (ast, no execution)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(filter(None, (_resolve(alias.name, known) for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:  # ``from pkg import submodule`` imports the submodule
                full = f"{source}.{alias.name}"
                target = full if full in known else _resolve(source, known)
                if target:
                    targets.add(target)
    targets.discard(module)
    return targets


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """module -> the modules it imports, for every module of ``packages``."""
    known = modules(root, packages)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def layer_of(module: str, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS) -> int | None:
    """The index in ``layers`` of the longest prefix naming ``module``, else ``None``."""
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for number, (_name, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if prefix.startswith("="):
                named = module == prefix[1:]
            else:
                named = module == prefix or module.startswith(prefix + ".")
            if named and (best is None or len(prefix) > best[0]):
                best = (len(prefix), number)
    return None if best is None else best[1]


def upward_imports(
    graph: Graph, layers: tuple[tuple[str, tuple[str, ...]], ...] = LAYERS
) -> list[str]:
    """``a -> b (layer of a < layer of b)`` for every import of a higher layer."""
    found = []
    for module in sorted(graph):
        mine = layer_of(module, layers)
        for target in sorted(graph[module]):
            theirs = layer_of(target, layers)
            if mine is not None and theirs is not None and theirs > mine:
                found.append(
                    f"{module} ({layers[mine][0]}) -> {target} ({layers[theirs][0]})"
                )
    return found


def _where(module: str) -> str:
    path = modules(REPO, ROOTS)[module]
    return str(path.relative_to(REPO))


def unnamed_modules(package: Path, text: str) -> list[str]:
    """The modules (``conf/read_config.py``) and folders (``conf/``) of ``package`` that
    ``text`` does not name in backquotes."""
    missing = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if path.name == "__init__.py":
            if relative.parent == Path("."):
                continue  # the package itself
            name = f"{relative.parent.as_posix()}/"
        else:
            name = relative.as_posix()
        if f"`{name}`" not in text:
            missing.append(name)
    return missing


def stale_names(package: Path, text: str) -> list[str]:
    """The modules and folders a table row of ``text`` starts with (``| `ctld/x.py` |``)
    that ``package`` no longer has."""
    stale = []
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        name = line[3:].split("`", 1)[0]
        if name.endswith((".py", "/")) and not (package / name).exists():
            stale.append(name)
    return stale


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(REPO, ROOTS)


def test_no_import_circle(graph: dict[str, set[str]]) -> None:
    found = circles(graph)
    report = [" <-> ".join(_where(m) for m in circle) for circle in found]
    assert not found, "import circles:\n" + "\n".join(report)


def test_no_upward_import(graph: dict[str, set[str]]) -> None:
    found = upward_imports(graph)
    report = [f"{_where(line.split()[0])}: {line}" for line in found]
    assert not found, "upward imports (see LAYERS):\n" + "\n".join(report)


def test_every_module_has_a_layer(graph: dict[str, set[str]]) -> None:
    unplaced = [module for module in sorted(graph) if layer_of(module) is None]
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_minislurm_never_imports_quizzes_or_course(graph: dict[str, set[str]]) -> None:
    wrong = [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if module.split(".")[0] == "minislurm"
        for target in sorted(targets)
        if target.split(".")[0] != "minislurm"
    ]
    assert not wrong


def test_architecture_doc_names_every_module() -> None:
    missing = unnamed_modules(REPO / "minislurm", ARCHITECTURE.read_text(encoding="utf-8"))
    assert not missing, f"docs/ARCHITECTURE.md does not name: {missing}"


def test_architecture_doc_names_no_module_that_is_gone() -> None:
    stale = stale_names(REPO / "minislurm", ARCHITECTURE.read_text(encoding="utf-8"))
    assert not stale, f"docs/ARCHITECTURE.md names modules that do not exist: {stale}"


# ---- self-tests: the checks can fail ---------------------------------------------------


def test_circles_finds_each_strongly_connected_component() -> None:
    graph = {
        "a": {"b"}, "b": {"c"}, "c": {"a"},  # a circle of three
        "d": {"a", "e"}, "e": {"d"},  # another of two, pointing into the first
        "f": {"a"}, "g": set(),
    }  # fmt: skip
    assert circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_upward_imports_flags_only_imports_of_a_higher_layer() -> None:
    layers = (
        ("root", ("=p",)),
        ("low", ("p.low",)),
        ("mid", ("p.mid",)),
        ("high", ("p.high", "p.mid.top")),
    )
    graph = {
        "p": {"p.low.x"},  # the root package is the lowest layer: flagged
        "p.low.x": {"p.low.y", "p"},  # same layer and the root: fine
        "p.low.y": set(),
        "p.mid.z": {"p.low.x", "p.high.w"},  # down fine, up flagged
        "p.mid.top.t": {"p.high.w"},  # longest prefix: p.mid.top is high
        "p.high.w": {"p.mid.z"},
    }
    assert upward_imports(graph, layers) == [
        "p (root) -> p.low.x (low)",
        "p.mid.z (mid) -> p.high.w (high)",
    ]
    assert layer_of("p.mid", layers) == 2 and layer_of("p.middle", layers) is None
    assert layer_of("p", layers) == 0 and layer_of("p.other", layers) is None


def test_import_graph_reads_every_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from . import leaf\n")
    (package / "sub" / "leaf.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.top import Thing\n"
    )
    (package / "top.py").write_text(
        "import os\n\n\ndef late():\n    from .sub.leaf import x\n    import pkg.other as o\n"
    )
    (package / "other.py").write_text("from pkg import top\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {
        "pkg": set(),
        "pkg.sub": {"pkg.sub.leaf"},
        "pkg.sub.leaf": {"pkg.top"},  # under TYPE_CHECKING
        "pkg.top": {"pkg.sub.leaf", "pkg.other"},  # inside a function, relative and absolute
        "pkg.other": {"pkg.top"},
    }
    assert circles(graph) == [["pkg.other", "pkg.sub.leaf", "pkg.top"]]


def test_the_document_checks_find_a_missing_and_a_stale_module(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "conf").mkdir(parents=True)
    for name in ("__init__.py", "top.py", "conf/__init__.py", "conf/read.py"):
        (package / name).write_text("")
    assert unnamed_modules(package, "`top.py` and `conf/` and `conf/read.py`") == []
    assert unnamed_modules(package, "top.py, `conf/read.py`") == ["conf/", "top.py"]
    table = "| module | concept |\n| `top.py` | here |\n| `gone.py` | moved |\n| `conf/` | here |\n"
    assert stale_names(package, table) == ["gone.py"]
