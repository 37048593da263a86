"""Edge values of sbatch's options, read the way real Slurm 22.05.8 reads them.

Found by differential fuzzing: a throwaway script ran some 2,000 variants of sbatch
options and hostlists on scripts/realslurm and on minislurm's local cluster and diffed
stdout, stderr, the exit code and ``scontrol show job``. Every expected value below is
what real Slurm printed. Slurm reads these values with C, and the C shows:

* ``--time`` (parse_time.c ``time_str2secs``): each number is ``sscanf("%d")`` (a
  ``long`` truncated to 32 bits), ``d*86400 + h*3600 + m*60 + s`` and ``(s + 59) / 60``
  wrap in ``int``; a sum of -1 (INFINITE) is UNLIMITED, -2 (NO_VAL) invalid.
* ``--mem*`` (proc_args.c ``str_to_mbytes``): ``strtoll`` must read digits without
  overflowing, the unit may be followed by ``B`` and nothing else.
* ``--array`` (slurmctld ``_valid_array_inx``): ``strtok``/``strtol`` scanning, with a
  ``%`` ending each item and ``atoi`` of what follows the first ``%`` as throttle.
* ``--dependency`` (slurmctld ``update_job_dependency``): see minislurm/dependency.py.

Each case is ``sbatch -H <options> ok.sh`` (held: nothing runs; with a hold slurmctld
skips its node-configuration test, so only values that fit the nodes are used) and
``scontrol show job -o`` of the job. minislurm's side runs on the embedded reference
cluster (tests/captures.py ``reference_cluster``); the ``realslurm`` test replays the
same tables on real Slurm.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm
from realslurm.harness import parse_show_one_liner
from realslurm.replay import case_dir

from minislurm.dependency import parse_dependency

OK_SH = "#!/bin/bash\necho hi\n"
INVALID_TIME = "sbatch: error: Invalid --time specification\n"
INVALID_ARRAY = "sbatch: error: Batch job submission failed: Invalid job array specification\n"
DEPENDENCY_PROBLEM = "sbatch: error: Batch job submission failed: Job dependency problem\n"

#: sbatch options -> (exit code, stderr, scontrol show job fields), real 22.05.8.
CASES: dict[str, tuple[int, str, dict[str, str]]] = {
    # --time: int arithmetic of time_str2secs / time_str2mins
    "-t 99999-0": (0, "", {"TimeLimit": "578-11:04:00"}),
    "-t 1000000-0": (0, "", {"TimeLimit": "5794-14:35:00"}),
    "-t 24856-0": (0, "", {"TimeLimit": "2957761-21:49:00"}),
    "-t 4294967294": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t 4294967296": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t 2147483647": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t 71582789": (0, "", {"TimeLimit": "00:01:00"}),
    "-t 35791395": (0, "", {"TimeLimit": "2957761-01:04:00"}),
    "-t 99999999999": (0, "", {"TimeLimit": "2981813-22:48:00"}),
    "-t 9223372036854775808": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t -9999999999": (0, "", {"TimeLimit": "16101-07:33:00"}),
    "-t -49710": (0, "", {"TimeLimit": "06:29:00"}),
    "-t 0:2147483647": (0, "", {"TimeLimit": "2957761-01:03:00"}),
    "-t 0-0:0:4294967295": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t 0-0:0:4294967140": (0, "", {"TimeLimit": "UNLIMITED"}),
    "-t 0-0:0:4294967294": (255, INVALID_TIME, {}),
    "-t 0-0:0:4294967100": (255, INVALID_TIME, {}),
    # --mem, --mem-per-cpu: str_to_mbytes with _end_on_byte
    "--mem=1GB": (0, "", {"MinMemoryNode": "1G"}),
    "--mem=100MB": (0, "", {"MinMemoryNode": "100M"}),
    "--mem-per-cpu=1KB": (0, "", {"MinMemoryCPU": "1M"}),
    "--mem=''": (255, "sbatch: error: Invalid --mem specification\n", {}),
    "--mem=G": (255, "sbatch: error: Invalid --mem specification\n", {}),
    "--mem=1Kx": (255, "sbatch: error: Invalid --mem specification\n", {}),
    "--mem=2M2": (255, "sbatch: error: Invalid --mem specification\n", {}),
    "--mem-per-cpu=18446744073709551615": (
        255, "sbatch: error: Invalid --mem-per-cpu specification\n", {}),
    # --array: _parse_array_tok and the %throttle
    "--array=1-3%": (0, "", {"ArrayTaskId": "1-3"}),
    "--array=1-3%0": (0, "", {"ArrayTaskId": "1-3"}),
    "--array=1-3%a": (0, "", {"ArrayTaskId": "1-3"}),
    "--array=%2": (0, "", {"ArrayTaskId": "0%2"}),
    "--array=1-3%2%3": (0, "", {"ArrayTaskId": "1-3%2"}),
    "--array=1,,3": (0, "", {"ArrayTaskId": "1,3"}),
    "--array=1,2%1,3": (0, "", {"ArrayTaskId": "1-3%1"}),
    "--array=0-7%2,9": (0, "", {"ArrayTaskId": "0-7,9%2"}),
    "--array=[1-3]:2": (0, "", {"ArrayTaskId": "1,3"}),
    "--array=' 1-3'": (0, "", {"ArrayTaskId": "1-3"}),
    "--array=+1": (0, "", {"ArrayTaskId": "1"}),
    "--array=-": (0, "", {"ArrayTaskId": "0"}),
    "--array=1-3%99999999999": (0, "", {"ArrayTaskId": "1-3%1215752191"}),
    "--array=0-10:1000": (0, "", {"ArrayTaskId": "0"}),
    "--array='1-3 '": (1, INVALID_ARRAY, {}),
    "--array=1]]": (1, INVALID_ARRAY, {}),
    "--array=0-10:1001": (1, INVALID_ARRAY, {}),
    "--array=4294967296": (1, INVALID_ARRAY, {}),
    "--array=1-3:%2": (1, INVALID_ARRAY, {}),
}

#: ``--dependency`` on two held jobs ``{j}`` and ``{k}``: (exit code, stderr,
#: scontrol's Dependency=), real 22.05.8 (ids as placeholders).
DEPENDENCIES: dict[str, tuple[int, str, str]] = {
    "afterok:{j}:{k}": (0, "", "afterok:{j}(unfulfilled),afterok:{k}(unfulfilled)"),
    "afterok:{j}+5:{k}": (0, "", "afterok:{j}+5(unfulfilled),afterok:{k}+5(unfulfilled)"),
    "after:{j}+5,afterany:{k}": (0, "", "after:{j}+5(unfulfilled),afterany:{k}(unfulfilled)"),
    "afterok:{j},afterany:{k}?after:{j}": (
        0, "", "afterok:{j}(unfulfilled)?afterany:{k}(unfulfilled)?after:{j}(unfulfilled)"),
    "afterok:-1": (0, "", "afterok:4294967295(unfulfilled)"),
    "afterok: {j}": (0, "", "afterok:{j}(unfulfilled)"),
    "afterok:+{j}": (0, "", "afterok:{j}(unfulfilled)"),
    "after:{j}+1+2": (0, "", "after:{j}+1(unfulfilled)"),
    "after:{j}+5x": (0, "", "after:{j}+5(unfulfilled)"),
    "after:{j}+99999999": (0, "", "after:{j}+28417210(unfulfilled)"),
    "afterany:{j}:{j}": (0, "", "afterany:{j}(unfulfilled)"),
    "singleton,singleton": (0, "", "singleton(unfulfilled)"),
    "afterok:{j}_[1-3]+5": (0, "", "afterok:{j}_1(unfulfilled),afterok:{j}_2(unfulfilled),"
                                   "afterok:{j}_3+5(unfulfilled)"),
    "afterok:{j}_-1": (0, "", "afterok:{j}_*(unfulfilled)"),
    "afterok:{j}_4294967296": (0, "", "afterok:{j}_0(unfulfilled)"),
    "{j},{k}": (0, "", "afterany:{j}(unfulfilled),afterany:{k}(unfulfilled)"),
    "{j},afterok:{k}": (1, DEPENDENCY_PROBLEM, ""),
    "{j}:{k}": (1, DEPENDENCY_PROBLEM, ""),
    "{j}+5": (1, DEPENDENCY_PROBLEM, ""),
    "after:{j}+0": (1, DEPENDENCY_PROBLEM, ""),
    "after:{j}+9223372036854775807": (1, DEPENDENCY_PROBLEM, ""),
    "afterok:4294967296": (1, DEPENDENCY_PROBLEM, ""),
    "afterok:{j}_[]": (1, DEPENDENCY_PROBLEM, ""),
}

Run = Callable[[str], tuple[str, str, int]]


def _submit(run: Run, options: str) -> tuple[int, str, dict[str, str]]:
    """``sbatch -H --parsable <options> ok.sh``: exit code, stderr, the job's record
    (``scontrol show job -o``; the job is cancelled afterwards)."""
    out, err, rc = run(f"sbatch -H --parsable {options} ok.sh")
    if rc != 0:
        return rc, err, {}
    job = out.strip()
    record = parse_show_one_liner(run(f"scontrol show job -o {job}")[0].strip())
    run(f"scancel {job}")
    return rc, err, record


def _held_jobs(run: Run) -> dict[str, str]:
    """Two held jobs to depend on: {"j": id, "k": id}."""
    return {name: run("sbatch -H --parsable ok.sh")[0].strip() for name in "jk"}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _mini(tmp_path: Path) -> Run:
    cluster = reference_cluster(tmp_path)
    cluster.write("ok.sh", OK_SH)

    def run(cmd: str) -> tuple[str, str, int]:
        result = cluster.run(cmd)
        return result.stdout, result.stderr, result.returncode
    return run


def _real(real_slurm: RealSlurm, folder: str) -> Run:
    work = case_dir(real_slurm, folder, files={"ok.sh": OK_SH})

    def run(cmd: str) -> tuple[str, str, int]:
        result = real_slurm.run(cmd, cwd=work, timeout=30)
        return result.stdout, result.stderr, result.rc
    return run


def _view(rc: int, err: str, record: dict[str, str], fields: dict[str, str]) -> object:
    return rc, err, {key: record.get(key) for key in fields}


@pytest.mark.parametrize("options", sorted(CASES))
def test_option_value_like_slurm(tmp_path: Path, options: str) -> None:
    rc, err, fields = CASES[options]
    assert _view(*_submit(_mini(tmp_path), options), fields) == (rc, err, fields)


@pytest.mark.parametrize("spec", sorted(DEPENDENCIES))
def test_dependency_like_slurm(tmp_path: Path, spec: str) -> None:
    """Accepted or refused as by slurmctld; the conditions kept are those real Slurm
    lists (scontrol's ``(unfulfilled)`` state aside)."""
    rc, err, shown = DEPENDENCIES[spec]
    run = _mini(tmp_path)
    ids = _held_jobs(run)
    got_rc, got_err, _ = _submit(run, f"--dependency={_quoted(spec.format(**ids))}")
    assert (got_rc, got_err) == (rc, err)
    if rc == 0:
        parsed = str(parse_dependency(spec.format(j=5, k=6)))
        assert parsed == shown.format(j=5, k=6).replace("(unfulfilled)", "")


@pytest.mark.realslurm
@pytest.mark.parametrize("options", sorted(CASES))
def test_real_slurm_still_reads_the_option_so(real_slurm: RealSlurm, options: str) -> None:
    rc, err, fields = CASES[options]
    run = _real(real_slurm, "option-values")
    assert _view(*_submit(run, options), fields) == (rc, err, fields)


@pytest.mark.realslurm
@pytest.mark.parametrize("spec", sorted(DEPENDENCIES))
def test_real_slurm_still_reads_the_dependency_so(real_slurm: RealSlurm, spec: str) -> None:
    rc, err, shown = DEPENDENCIES[spec]
    run = _real(real_slurm, "dependency-values")
    ids = _held_jobs(run)
    got_rc, got_err, record = _submit(run, f"--dependency={_quoted(spec.format(**ids))}")
    run("scancel " + " ".join(ids.values()))
    assert (got_rc, got_err, record.get("Dependency", "")) == (rc, err, shown.format(**ids))
