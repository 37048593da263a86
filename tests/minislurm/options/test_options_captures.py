"""The sbatch/srun front end against the captures of real Slurm 22.05.8.

Every ``sbatch``/``srun`` command of ``b_sbatch_errors`` and
``f1_sbatch_directive_parsing`` is replayed through `parse_sbatch` /
`parse_srun`:

* a capture that failed *in the client* (exit 255, or a script error with
  exit 1) must fail here with exactly the captured stderr and exit code;
* a capture that was accepted (exit 0) or rejected by slurmctld
  (``Batch job submission failed: ...``) must pass the front end.

The ``show_*`` captures of f1 (``squeue -o 'JobName=[%j] TimeLimit=%l ...'``)
check the parsed job name and time limit.
"""

from __future__ import annotations

import os
import re
import shlex

import pytest
from captures import REF

from minislurm.common.timespec import format_time_limit
from minislurm.errors import SlurmError
from minislurm.options import SbatchInvocation, parse_sbatch, parse_srun

pytestmark = pytest.mark.skipif(not REF.is_dir(), reason=f"captures not found at {REF}")

NOW = 1767600000
DEBUG_DEFAULT_TIME = 10  # PartitionName=debug DefaultTime=00:10:00 (slurm.conf)


def _cases(folder: str) -> list[str]:
    d = REF / folder
    return sorted(p.stem for p in d.glob("*.cmd")) if d.is_dir() else []


def _read(folder: str, name: str, ext: str) -> str:
    return (REF / folder / f"{name}.{ext}").read_text()


def _first_command(cmd: str) -> tuple[list[str], bytes | None]:
    """The sbatch/srun words of a capture's shell line, and its piped stdin."""
    line = cmd.strip().split(";")[0]
    stdin: bytes | None = None
    if "|" in line:
        producer, _, line = line.partition("|")
        words = shlex.split(producer)
        text = words[-1]
        if words[0] in ("printf", "echo"):
            text = text.replace("\\n", "\n")
            if words[0] == "echo":
                text += "\n"
        stdin = text.encode()
    return shlex.split(line), stdin


def _invoke(folder: str, name: str) -> tuple[int, str, object]:
    """Run a capture's command through the front end: (rc, stderr, result)."""
    words, stdin = _first_command(_read(folder, name, "cmd"))
    cwd = str(REF / folder)
    env = {"PATH": "/usr/bin:/bin"}
    while words and "=" in words[0]:  # VAR=value sbatch ...
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    try:
        if words[0] == "sbatch":
            return 0, "", parse_sbatch(words[1:], env=env, stdin=stdin, cwd=cwd, now=NOW)
        return 0, "", parse_srun(words[1:], env=env, cwd=cwd, now=NOW)
    except SlurmError as e:
        return e.exit_code, e.message + "\n", None


SUBMISSION_CHECKS = ("submission failed", "Unable to allocate",
                     # sbatch checks --gres while building the job description
                     # (gres_job_state_validate); minislurm does it at submission
                     # with minislurm.common.gres.parse_gres_request.
                     "Invalid generic resource")


def _client_side(folder: str, name: str) -> bool:
    """Did the capture fail in the option front end (not at submission)?"""
    err = _read(folder, name, "err")
    rc = int(_read(folder, name, "rc"))
    return rc != 0 and not any(text in err for text in SUBMISSION_CHECKS)


def _front_end_cases(folder: str) -> list[str]:
    result = []
    for name in _cases(folder):
        first = _read(folder, name, "cmd").strip().split(";")[0]
        words = first.split("|")[-1].split()
        while words and "=" in words[0]:
            words.pop(0)
        if words and words[0] in ("sbatch", "srun") and "bash -c 'exit" not in first:
            result.append(name)
    return result


ERROR_FOLDERS = ("b_sbatch_errors", "b2_sbatch_errors_EnforcePartLimits_ALL")


@pytest.mark.parametrize(("folder", "name"), [(f, n) for f in ERROR_FOLDERS
                                              for n in _front_end_cases(f)])
def test_b_sbatch_errors(folder: str, name: str) -> None:
    rc, err, _ = _invoke(folder, name)
    if _client_side(folder, name):
        assert (rc, err) == (int(_read(folder, name, "rc")), _read(folder, name, "err"))
    else:
        assert rc == 0, f"front end rejected an accepted command: {err}"


@pytest.mark.parametrize("name", [n for n in _front_end_cases("f1_sbatch_directive_parsing")
                                  if n.startswith("sub_")])
def test_f1_directive_submissions(name: str) -> None:
    folder = "f1_sbatch_directive_parsing"
    rc, err, result = _invoke(folder, name)
    if _client_side(folder, name):
        assert (rc, err) == (int(_read(folder, name, "rc")), _read(folder, name, "err"))
        return
    assert rc == 0, err
    show = REF / folder / (name.replace("sub_", "show_", 1) + ".out")
    if not show.exists():
        return
    assert isinstance(result, SbatchInvocation)
    opts = result.options
    m = re.search(r"JobName=\[(.*)\] TimeLimit=(\S+) Partition=\S+ Nodes=(\d+)", show.read_text())
    assert m is not None
    limit = opts.time_limit if opts.time_limit_set else DEBUG_DEFAULT_TIME
    assert result.job_name == m.group(1)
    assert format_time_limit(limit) == m.group(2)
    assert (opts.nodes_min or 1) == int(m.group(3))


def _sbatch_script(folder: str, script: str, *args: str,
                   env: dict[str, str] | None = None) -> SbatchInvocation:
    return parse_sbatch([*args, script], env=env or {}, cwd=str(REF / folder), now=NOW)


F1 = "f1_sbatch_directive_parsing"


@pytest.mark.parametrize(("script", "job_name"), [
    ("blank_and_comments.sh", "after_blank_and_comment"),
    ("empty_directive.sh", "after_empty_directive"),
    ("indented.sh", "indented.sh"),
    ("lowercase.sh", "lowercase.sh"),
    ("space_after_hash.sh", "space_after_hash.sh"),
    ("nospace.sh", "nospace"),
    ("tab.sh", "tab_after_SBATCH"),
    ("two_spaces.sh", "two_spaces_after_SBATCH"),
    ("quoted.sh", "quoted name"),
    ("quoted_single.sh", "single quoted"),
    ("trailing_comment.sh", "trail"),
    ("repeated.sh", "two"),
    ("shebang_python.sh", "pyjob"),
    ("set_e_before.sh", "set_e_before.sh"),
    ("after_command.sh", "first"),
])
def test_f1_job_names_from_directives(script: str, job_name: str) -> None:
    """CAPTURES.md f1: which directive lines count and how words are split."""
    if not (REF / F1 / script).exists():
        pytest.skip(f"{script} not in this copy of the captures")
    assert _sbatch_script(F1, script).job_name == job_name


def test_f1_multi_options_and_last_one_wins() -> None:
    multi = _sbatch_script(F1, "multi_opts.sh").options
    assert (multi.job_name, multi.time_limit, multi.nodes_min) == ("multi", 8, 2)
    repeated = _sbatch_script(F1, "repeated.sh").options
    assert (repeated.job_name, repeated.time_limit) == ("two", 4)
    trailing = _sbatch_script(F1, "trailing_comment.sh").options
    assert trailing.time_limit == 9


def test_f1_unknown_directive_is_the_command_line_error() -> None:
    with pytest.raises(SlurmError) as e:
        _sbatch_script(F1, "bad_directive.sh")
    assert e.value.exit_code == 255
    assert e.value.message == ("sbatch: unrecognized option '--nosuchoption'\n"
                               'Try "sbatch --help" for more information')


F2 = "f2_option_precedence"


def test_f2_precedence_cli_over_env_over_script() -> None:
    script = _sbatch_script(F2, "job.sh", "-H").options
    assert (script.job_name, script.time_limit, script.nodes_min) == ("inscript", 5, 1)
    cli = _sbatch_script(F2, "job.sh", "-H", "-J", "cli", "-t", "7", "-N", "2").options
    assert (cli.job_name, cli.time_limit, cli.nodes_min) == ("cli", 7, 2)
    env = {"SBATCH_JOB_NAME": "fromenv", "SBATCH_TIMELIMIT": "9"}
    from_env = _sbatch_script(F2, "job.sh", "-H", env=env).options
    assert (from_env.job_name, from_env.time_limit) == ("fromenv", 9)
    both = _sbatch_script(F2, "job.sh", "-H", "-J", "cli", "-t", "7", env=env).options
    assert (both.job_name, both.time_limit) == ("cli", 7)


def test_f2_output_args_wrap_and_stdin_names() -> None:
    cwd = str(REF / F2)
    out = _sbatch_script(F2, "job.sh", "-H", "-o", "cli-%j.out").options
    assert out.output == os.path.join(cwd, "cli-%j.out")
    inv = parse_sbatch(["-H", "job.sh", "-J", "notanoption"], env={}, cwd=cwd, now=NOW)
    assert inv.script_args == ("-J", "notanoption")
    assert inv.job_name == "inscript"
    wrap = parse_sbatch(["-H", "--wrap", "echo hi"], env={}, cwd=cwd, now=NOW)
    assert wrap.job_name == "wrap"
    assert wrap.script_text == "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hi\n"
    stdin = parse_sbatch(["-H"], env={}, stdin=b"#!/bin/bash\necho hi\n", cwd=cwd, now=NOW)
    assert stdin.job_name == "sbatch"


def test_a3_directives_on_one_line() -> None:
    opts = _sbatch_script("a3_sbatch_env_cpus_per_task", "job.sh").options
    assert (opts.job_name, opts.partition, opts.nodes_min, opts.ntasks_per_node) == (
        "myjob", "gpu", 2, 1)
    assert (opts.cpus_per_task, opts.gpus_per_node, opts.time_limit, opts.mem_per_cpu_mb) == (
        2, "1", 5, 500)


def test_a2_srun_inherits_the_job_from_its_environment() -> None:
    """Inside the batch job of a2, ``srun bash -c ...`` sees SLURM_NTASKS=4..."""
    path = REF / "a2_sbatch_env" / "batch.env"
    if not path.exists():
        pytest.skip("a2 batch.env not in this copy")
    env = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    inv = parse_srun(["bash", "-c", "env"], env=env, now=NOW)
    assert inv.options.ntasks == int(env["SLURM_NTASKS"])
    assert inv.options.nodes_min == int(env["SLURM_NNODES"])
    assert inv.options.jobid == env["SLURM_JOB_ID"]
    assert inv.command == ("bash", "-c", "env")
