"""Every notebook runs top to bottom and reproduces its stored outputs (nbval).

The notebooks are stored with their outputs; ``pytest --nbval`` re-executes each
in the current environment and compares every cell's output with the stored one,
after the sanitizers in ``notebooks/sanitize.cfg`` (temporary paths, addresses).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from ddp_notebooks import notebook_params

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Each notebook is a test of its own (no shared fixture): under xdist they spread over
#: the workers, the DDP ones (tests/ddp_notebooks.py) on the one worker of the ddp_ports
#: group, as their stored outputs show the job ids and ports of FirstJobId 4001.
pytestmark = pytest.mark.spread


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("notebook", notebook_params(NOTEBOOKS))
def test_notebook_outputs_match(notebook: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(tmp_path / var.lower())
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env.pop("SLURM_CONF", None)  # lessons run on the embedded default cluster
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         "--nbval-current-env", "--nbval-sanitize-with", str(ROOT / "notebooks/sanitize.cfg"),
         str(notebook)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


#: The cells whose output nbval may not compare, and why: nothing else is exempt.
NONDETERMINISTIC = {
    ("07-failures-requeue", "real_ddp_drill(real)"):
        "real processes on the wall clock: job ids, the step the job resumes from",
}


def test_only_truly_nondeterministic_cells_are_exempt_from_comparison() -> None:
    exempt = set()
    for notebook in NOTEBOOKS:
        nb = nbformat.read(str(notebook), as_version=4)
        assert "nbval-ignore-output" not in nb.metadata.get("tags", []), notebook.name
        for cell in nb.cells:
            tags = cell.get("metadata", {}).get("tags", [])
            assert "nbval-skip" not in tags and "nbval-raises-exception" not in tags
            if "nbval-ignore-output" in tags:
                keys = [k for (stem, k) in NONDETERMINISTIC if stem == notebook.stem
                        and k in cell.source]
                assert keys, f"{notebook.name}: unexpected nbval-ignore-output on\n{cell.source}"
                exempt.add((notebook.stem, keys[0]))
    assert exempt == set(NONDETERMINISTIC)
