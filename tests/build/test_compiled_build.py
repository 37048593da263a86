"""The optional compiled build (``scripts/compile``, issue 21).

- When the build is in place, the compiled modules are the ones Python loads, and the
  build matches the sources (a stale ``.so`` would run old code);
  ``MINISLURM_EXPECT_COMPILED=1`` (the compiled CI run) makes a missing build a failure.
- ``PYTHONPATH=scripts/interpreted:...`` loads the ``.py`` files beside a build.
- Without a working C compiler the build is skipped with a message, exit 0, and a build
  that no longer matches the sources is removed.
- A build compiles, loads, computes what the interpreted module computes, is skipped when
  nothing changed, and ``--clean`` removes it (a copy of the package, one module).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPILE = ROOT / "scripts" / "compile"
SO = str(sysconfig.get_config_var("EXT_SUFFIX"))  # .cpython-311-x86_64-linux-gnu.so here


def _modules() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        paths: list[str] = tomllib.load(f)["tool"]["minislurm"]["compile"]["modules"]
    return [p.removesuffix(".py").replace("/", ".") for p in paths]


def _loaded(root: Path, modules: list[str], *, interpreted: bool = False) -> dict[str, str]:
    """Where a fresh interpreter imports each module from (relative to ``root``)."""
    paths = [str(root)]
    if interpreted:
        paths.insert(0, str(root / "scripts" / "interpreted"))
    code = ("import importlib, sys\n"
            "for m in sys.argv[1:]:\n"
            "    print(m, importlib.import_module(m).__file__)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    out = subprocess.run([sys.executable, "-c", code, *modules], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return {m: os.path.relpath(f, root) for m, f in (line.split() for line in out.splitlines())}


def _compile(root: Path, *args: str, cc: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": sys.executable}
    if cc is not None:
        env["CC"] = cc
    return subprocess.run([str(root / "scripts" / "compile"), *args], env=env, cwd=root,
                          capture_output=True, text=True, timeout=900)


def test_the_listed_modules_exist_and_hold_no_runtime_protocol() -> None:
    """Every listed module is a file of the package; none defines a @runtime_checkable
    Protocol (mypyc/mypyc#909: the compiled module fails at import)."""
    for m in _modules():
        path = ROOT / (m.replace(".", "/") + ".py")
        assert path.is_file(), m
        assert "@runtime_checkable" not in path.read_text(), m


def test_compiled_modules_are_the_ones_loaded_when_built() -> None:
    status = _compile(ROOT, "--status")
    built = sorted(p for p in ROOT.glob(f"minislurm/**/*{SO}") if "__mypyc" not in p.name)
    if status.returncode != 0:
        assert not built, f"a build that does not match the sources shadows them: {status.stdout}"
        if os.environ.get("MINISLURM_EXPECT_COMPILED") == "1":
            pytest.fail(f"MINISLURM_EXPECT_COMPILED=1 but {status.stdout.strip()}")
        pytest.skip(f"no compiled build ({status.stdout.strip()}); scripts/compile builds it")
    modules = _modules()
    loaded = _loaded(ROOT, modules)
    assert {m: f.endswith(SO) for m, f in loaded.items()} == dict.fromkeys(modules, True)
    # nothing else of minislurm is compiled: the list is the build
    assert sorted(str(p.relative_to(ROOT)) for p in built) == sorted(
        m.replace(".", "/") + SO for m in modules)


def test_interpreted_path_hook_loads_the_sources_beside_a_build() -> None:
    modules = _modules()
    loaded = _loaded(ROOT, modules, interpreted=True)
    assert loaded == {m: m.replace(".", "/") + ".py" for m in modules}


def _copy_tree(tmp_path: Path) -> Path:
    """A copy of what scripts/compile reads: pyproject.toml, scripts/, minislurm/ (sources)."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(ROOT / "scripts", root / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "minislurm", root / "minislurm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return root


@pytest.mark.parametrize("cc", ["false", "/nonexistent/cc"])
def test_without_a_c_compiler_the_build_is_skipped_and_a_stale_one_removed(
    tmp_path: Path, cc: str
) -> None:
    root = _copy_tree(tmp_path)
    stale = root / ("minislurm/common/hostlist" + SO)
    stale.write_text("an old build")
    out = _compile(root, cc=cc)
    assert out.returncode == 0, out.stderr
    why = "does not work" if cc == "false" else "not found"
    assert why in out.stderr and "the interpreted package is used" in out.stderr
    assert "removed the compiled build (1 files)" in out.stderr
    assert not stale.exists()
    assert _loaded(root, ["minislurm.common.hostlist"]) == {
        "minislurm.common.hostlist": "minislurm/common/hostlist.py"}
    status = _compile(root, "--status")
    assert status.returncode == 1 and "no compiled build" in status.stdout


def _works(cc: str) -> bool:
    return shutil.which(cc) is not None and subprocess.run(
        [cc, "--version"], capture_output=True).returncode == 0


HOSTLIST_CHECK = """
from minislurm.common import hostlist as h
names = [f"g{i:04d}" for i in range(1, 40) if i % 7] + ["a1", "b[2]", "n10", "n9"]
print(h.__file__.endswith(".so"), h.compress(names), h.expand("g[0001-0003,0007],x[1-2]"))
"""


@pytest.mark.slow
@pytest.mark.skipif(not _works(os.environ.get("CC", "cc")), reason="no working C compiler")
def test_a_build_runs_the_same_is_skipped_when_current_and_is_cleaned(tmp_path: Path) -> None:
    root = _copy_tree(tmp_path)
    module = "minislurm/common/hostlist.py"
    built = _compile(root, module)
    assert built.returncode == 0, built.stderr
    assert "built 1 modules" in built.stderr
    assert (root / ("minislurm/common/hostlist" + SO)).exists()

    def run(interpreted: bool) -> str:
        paths = [str(root)] if not interpreted else [str(root / "scripts/interpreted"), str(root)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        return subprocess.run([sys.executable, "-c", HOSTLIST_CHECK], env=env, cwd=root,
                              capture_output=True, text=True, check=True).stdout

    compiled, interpreted = run(False), run(True)
    assert compiled.startswith("True ") and interpreted.startswith("False ")
    assert compiled[len("True "):] == interpreted[len("False "):]
    again = _compile(root, module)
    assert again.returncode == 0 and again.stderr == ""  # current: nothing to do
    (root / "minislurm/errors.py").write_text(
        (root / "minislurm/errors.py").read_text() + "\n# changed\n")
    stale = _compile(root, module, cc="false")  # the sources changed, no compiler
    assert "removed the compiled build" in stale.stderr
    assert not list(root.glob(f"minislurm/**/*{SO}"))
    rebuilt = _compile(root, module)
    assert rebuilt.returncode == 0 and "built 1 modules" in rebuilt.stderr
    cleaned = _compile(root, "--clean")
    assert cleaned.returncode == 0 and "removed the compiled build (2 files)" in cleaned.stderr
    assert not list(root.glob(f"**/*{SO}")) and not (root / "build/mypyc").exists()
    assert run(False).startswith("False ")
