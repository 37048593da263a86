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
* counts (``parse_int``, ``verify_node_count``): ``strtol`` into ``int`` (``-n
  2147483648`` is -2147483648, refused by ``_opt_verify``), "to big" only at
  ``LONG_MAX``; ``_opt_verify`` then checks the counts, makes ``-w`` raise the node
  count, and warns and lowers the node count when there are fewer tasks than nodes.
* option values sbatch checks itself: ``--hint``, ``--profile``, ``--propagate``,
  ``--get-user-env``, ``--delay-boot``, ``--switches``, ``--gres-flags`` (one word),
  ``--gpu-bind``, the ``parse_int`` of ``--ntasks-per-socket`` and the like; an
  empty value of an optional-argument option is no value (``--nice=`` is 100);
  ``-D`` is appended to the current directory as written; the long options and the
  order glibc lists them in when a prefix is ambiguous are 22.05.8's.

Each case is ``sbatch -H <options> ok.sh`` (held: nothing runs; with a hold slurmctld
skips its node-configuration test, so only values that fit the nodes are used) and
``scontrol show job -o`` of the job. minislurm's side runs on the embedded reference
cluster (tests/captures.py ``reference_cluster``); the ``realslurm`` test replays the
same tables on real Slurm.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from captures import reference_cluster
from realslurm import RealSlurm
from realslurm.harness import parse_show_one_liner
from realslurm.replay import case_dir

from minislurm.dependency import parse_dependency
from minislurm.errors import OptionError
from minislurm.options.srun import parse_srun

#: Independent cases, each on its own cluster state: xdist may run them on any worker.
pytestmark = pytest.mark.spread

OK_SH = "#!/bin/bash\necho hi\n"
INVALID_TIME = "sbatch: error: Invalid --time specification\n"
INVALID_ARRAY = "sbatch: error: Batch job submission failed: Invalid job array specification\n"
DEPENDENCY_PROBLEM = "sbatch: error: Batch job submission failed: Job dependency problem\n"
NNODES_1_OF_2 = "sbatch: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1"

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
    # counts: parse_int, verify_node_count, _opt_verify
    "-n 2147483648": (1, "sbatch: error: invalid number of tasks (-n -2147483648)\n", {}),
    "-n 9223372036854775807": (
        1, "sbatch: error: Numeric argument (9223372036854775807) to big for --ntasks.\n", {}),
    "-c 4294967296": (1, "sbatch: error: invalid number of cpus per task (-c 0)\n", {}),
    "--ntasks-per-node=65537": (0, "", {"NtasksPerN:B:S:C": "1:0:*:*"}),
    "--ntasks-per-node=4294967296": (0, "", {"NtasksPerN:B:S:C": "0:0:*:*"}),
    "-N 2-": (255, "sbatch: error: Maximum node count -1 is less than minimum node count 2\n",
              {}),
    "-N ''": (255, 'sbatch: error: "" is not a valid node count\n', {}),
    "-N 2147483648": (255, 'sbatch: error: "2147483648" is not a valid node count\n', {}),
    "-N 1km": (0, "", {"NumNodes": "1073741824-1073741824"}),
    "-N2 -n1": (0, f"{NNODES_1_OF_2}\n", {"NumNodes": "1-1"}),
    "-N2-4 -n3": (0, "", {"NumNodes": "2-3"}),
    "-w 'n[1-2]' -n1": (0, f"{NNODES_1_OF_2}\n", {"ReqNodeList": "n1"}),
    "-w 'n[1-3]' -N2 -n1": (1, "sbatch: error: invalid number of nodes (-N 3-2)\nsbatch: "
                            "Warning: can't run 1 processes on 3 nodes, setting nnodes to 1\n",
                            {}),
    "-w n1,n2 -N1": (1, "sbatch: error: invalid number of nodes (-N 2-1)\n", {}),
    "-w 'n[]'": (1, "sbatch: error: _parse_single_range: Invalid range: `'\n"
                 "sbatch: error: memory allocation failure\n", {}),
    "--ntasks-per-socket=0": (
        1, 'sbatch: error: Invalid numeric value "0" for --ntasks-per-socket.\n', {}),
    "--threads-per-core=2x": (
        1, 'sbatch: error: Invalid numeric value "2x" for --threads-per-core.\n', {}),
    "--ntasks-per-tres=x": (1, 'sbatch: error: Invalid numeric value "x" for --ntasks-per-tres.\n',
                            {}),
    # values sbatch checks itself
    "--hint=compute_bound,abc": (
        1, 'sbatch: error: unrecognized --hint argument "abc", see --hint=help\n', {}),
    "--profile=abc": (255, "sbatch: error: invalid --profile=abc option\n", {}),
    "--profile=task,abc": (0, "", {}),
    "--propagate=CPU,abc": (1, "sbatch: error: Bad rlimit name: abc\n"
                            "sbatch: error: --propagate=CPU,abc is not valid.\n", {}),
    "--propagate=as": (1, "sbatch: error: Bad rlimit name: as\n"
                       "sbatch: error: --propagate=as is not valid.\n", {}),
    "--get-user-env=10x": (255, "sbatch: error: Invalid --get-user-env specification\n", {}),
    "--delay-boot=abc": (255, "sbatch: error: Invalid --delay-boot specification\n", {}),
    "--switches=@5": (1, 'sbatch: error: Invalid numeric value "" for --switches.\n', {}),
    "--gres-flags=enforce-binding,disable-binding": (
        255, "sbatch: error: Invalid --gres-flags specification\n", {}),
    "--exclusive=topo": (255, "sbatch: error: Invalid --exclusive specification\n", {}),
    "--nice=": (0, "", {"Nice": "100"}),
    "--no-kill=": (0, "", {}),
    "--gpu-bind=map_gpu:x": (255, "sbatch: error: Failed to validate x, offending character is x"
                             "\nsbatch: error: Invalid --gpu-bind argument: gpu:map_gpu:x\n", {}),
    "--gpu-bind=verbose": (255, "sbatch: error: Invalid --gpu-bind argument: gpu:verbose\n", {}),
    "--gpu-bind=closest+gpu:x": (0, "", {}),
    "--begin=' now'": (255, "Invalid time specification (pos=5):  now\n"
                       "sbatch: error: Invalid --begin specification\n", {}),
    "--begin='tomorrow now'": (255, "Invalid time specification (pos=21): tomorrow now\n"
                               "sbatch: error: Invalid --begin specification\n", {}),
    "--begin=now+999999999999999999999seconds": (0, "", {}),
    "-D ..": (0, "", {"WorkDir": "{cwd}/.."}),
    "-D ''": (0, "", {"WorkDir": "{cwd}/"}),
    # the option table: no --autocomplete, --context and --ntasks-per-tres, glibc's order
    "--autocomplete=x": (255, "sbatch: unrecognized option '--autocomplete=x'\n"
                         'Try "sbatch --help" for more information\n', {}),
    "--context=x": (0, "", {}),
    "--b=x": (255, "sbatch: option '--b=x' is ambiguous; possibilities: '--batch' '--begin' '--bb'"
              " '--bbf'\nTry \"sbatch --help\" for more information\n", {}),
    "--nt=1": (255, "sbatch: option '--nt=1' is ambiguous; possibilities: '--ntasks' "
               "'--ntasks-per-core' '--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket' "
               "'--ntasks-per-tres'\nTry \"sbatch --help\" for more information\n", {}),
}

#: ``#SBATCH`` line of ``job.sh`` -> (exit code, stderr of ``sbatch -H sub/job.sh``), real
#: 22.05.8: a fatal() names the script by its base name; the first word is looked for
#: past the blanks, a later one right after the word before it.
DIRECTIVES: dict[str, tuple[int, str]] = {
    '#SBATCH -J "a b': (1, 'sbatch: fatal: job.sh: line 2: Unmatched `"` in [ "a b]\n'),
    "#SBATCH -J x 'y": (1, "sbatch: fatal: job.sh: line 2: Unmatched `'` in [ 'y]\n"),
    '#SBATCH "a b': (1, 'sbatch: fatal: job.sh: line 2: Unmatched `"` in ["a b]\n'),
    "#SBATCH  :": (1, "sbatch: fatal: job.sh: line 2: Unexpected `:` in [:]\n"),
    "#SBATCH : -J x": (1, "sbatch: fatal: job.sh: line 2: Unexpected `:` in [: -J x]\n"),
    "#SBATCH -J x  :y": (1, "sbatch: fatal: job.sh: line 2: Unexpected `:` in [  :y]\n"),
}

#: sbatch's input environment variables -> (exit code, stderr of ``sbatch -H ok.sh``).
ENV_CASES: dict[tuple[str, str], tuple[int, str]] = {
    ("SBATCH_REQ_SWITCH", "abc"): (
        1, 'sbatch: error: Invalid numeric value "abc" for --switches.\n'),
    ("SBATCH_THREADS_PER_CORE", ""): (
        1, 'sbatch: error: Invalid numeric value "" for --threads-per-core.\n'),
}

#: srun command lines -> (exit code, stderr), real 22.05.8 (the command is ``true``).
SRUN_CASES: dict[str, tuple[int, str]] = {
    "srun -N2 -n1 true": (0, "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes "
                          "to 1\n"),
    "srun -n 2147483648 true": (1, "srun: error: invalid number of tasks (-n -2147483648)\n"),
    "srun --ntasks-per-node=4294967296 true": (1, "srun: error: ntasks-per-node is 0\n"),
    "srun -w n1,n2 -N1 true": (0, "srun: error: Required nodelist includes more nodes than "
                               "permitted by max-node count (2 > 1). Eliminating nodes from the "
                               "nodelist.\n"),
    "srun -N2": (1, "srun: fatal: No command given to execute.\n"),
    "srun --x11 true": (255, "srun: error: No DISPLAY variable set, cannot setup x11 "
                        "forwarding.\n"),
    "srun --x11=foo true": (0, ""),
    "srun --send-libs=1 true": (255, "srun: error: Invalid --send-libs specification\n"),
    "srun --cp=1 true": (255, "srun: option '--cp=1' is ambiguous; possibilities: '--cpu-bind' "
                         "'--cpu-freq' '--cpus-per-gpu' '--cpus-per-task'\n"
                         'Try "srun --help" for more information\n'),
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

Run = Callable[..., tuple[str, str, int]]


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


def _cwd_free(record: dict[str, str], cwd: Path) -> dict[str, str]:
    """The record with the folder the command ran in written ``{cwd}``."""
    return {k: v.replace(str(cwd), "{cwd}") for k, v in record.items()}


def _held_jobs(run: Run) -> dict[str, str]:
    """Two held jobs to depend on: {"j": id, "k": id}."""
    return {name: run("sbatch -H --parsable ok.sh")[0].strip() for name in "jk"}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _mini(tmp_path: Path) -> tuple[Run, Path]:
    cluster = reference_cluster(tmp_path)
    cluster.write("ok.sh", OK_SH)

    def run(cmd: str, env: dict[str, str] | None = None) -> tuple[str, str, int]:
        result = cluster.run(cmd, env=env)
        return result.stdout, result.stderr, result.returncode
    return run, cluster.workdir


def _real(real_slurm: RealSlurm, folder: str) -> tuple[Run, Path]:
    work = case_dir(real_slurm, folder, files={"ok.sh": OK_SH})

    def run(cmd: str, env: dict[str, str] | None = None) -> tuple[str, str, int]:
        result = real_slurm.run(cmd, cwd=work, env=env, timeout=30)
        return result.stdout, result.stderr, result.rc
    return run, work


def _view(rc: int, err: str, record: dict[str, str], fields: dict[str, str]) -> object:
    return rc, err, {key: record.get(key) for key in fields}


@pytest.mark.parametrize("options", sorted(CASES))
def test_option_value_like_slurm(tmp_path: Path, options: str) -> None:
    rc, err, fields = CASES[options]
    run, cwd = _mini(tmp_path)
    got_rc, got_err, record = _submit(run, options)
    assert _view(got_rc, got_err, _cwd_free(record, cwd), fields) == (rc, err, fields)


@pytest.mark.parametrize("line", sorted(DIRECTIVES))
def test_directive_errors_like_slurm(tmp_path: Path, line: str) -> None:
    run, cwd = _mini(tmp_path)
    (cwd / "sub").mkdir()
    (cwd / "sub" / "job.sh").write_text(f"#!/bin/bash\n{line}\necho\n")
    _, err, rc = run("sbatch -H sub/job.sh")
    assert (rc, err) == DIRECTIVES[line]


@pytest.mark.parametrize("var", sorted(ENV_CASES))
def test_environment_like_slurm(tmp_path: Path, var: tuple[str, str]) -> None:
    run, _ = _mini(tmp_path)
    _, err, rc = run("sbatch -H ok.sh", env=dict([var]))
    assert (rc, err) == ENV_CASES[var]


@pytest.mark.parametrize("cmd", sorted(SRUN_CASES))
def test_srun_options_like_slurm(cmd: str) -> None:
    """srun's own checks and warnings (``parse_srun``: what srun prints before asking
    for an allocation; the commands run ``true``, which prints nothing)."""
    rc, err = SRUN_CASES[cmd]
    argv = shlex.split(cmd)[1:]
    try:
        inv = parse_srun(argv, env={}, cwd="/tmp")
    except OptionError as e:
        assert (e.exit_code, e.message + "\n") == (rc, err)
    else:
        assert (0, "".join(f"{w}\n" for w in inv.warnings)) == (rc, err)


@pytest.mark.parametrize("spec", sorted(DEPENDENCIES))
def test_dependency_like_slurm(tmp_path: Path, spec: str) -> None:
    """Accepted or refused as by slurmctld; the conditions kept are those real Slurm
    lists (scontrol's ``(unfulfilled)`` state aside)."""
    rc, err, shown = DEPENDENCIES[spec]
    run, _ = _mini(tmp_path)
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
    run, cwd = _real(real_slurm, "option-values")
    got_rc, got_err, record = _submit(run, options)
    assert _view(got_rc, got_err, _cwd_free(record, cwd), fields) == (rc, err, fields)


@pytest.mark.realslurm
@pytest.mark.parametrize("line", sorted(DIRECTIVES))
def test_real_slurm_still_reads_the_directive_so(real_slurm: RealSlurm, line: str) -> None:
    run, cwd = _real(real_slurm, "directive-values")
    (cwd / "sub").mkdir()
    (cwd / "sub" / "job.sh").write_text(f"#!/bin/bash\n{line}\necho\n")
    _, err, rc = run("sbatch -H sub/job.sh")
    assert (rc, err) == DIRECTIVES[line]


@pytest.mark.realslurm
@pytest.mark.parametrize("var", sorted(ENV_CASES))
def test_real_slurm_still_reads_the_environment_so(real_slurm: RealSlurm,
                                                    var: tuple[str, str]) -> None:
    run, _ = _real(real_slurm, "environment-values")
    _, err, rc = run("sbatch -H ok.sh", env=dict([var]))
    run("scancel -u root")
    assert (rc, err) == ENV_CASES[var]


@pytest.mark.realslurm
@pytest.mark.parametrize("cmd", sorted(SRUN_CASES))
def test_real_srun_still_says_so(real_slurm: RealSlurm, cmd: str) -> None:
    # every node idle first: a node still completing the last case's job is busy
    # (ESLURM_NODES_BUSY), and srun -w would wait for it and say so on stderr
    real_slurm.reset()
    run, _ = _real(real_slurm, "srun-values")
    _, err, rc = run(cmd)
    assert (rc, err) == SRUN_CASES[cmd]


@pytest.mark.realslurm
@pytest.mark.parametrize("spec", sorted(DEPENDENCIES))
def test_real_slurm_still_reads_the_dependency_so(real_slurm: RealSlurm, spec: str) -> None:
    rc, err, shown = DEPENDENCIES[spec]
    run, _ = _real(real_slurm, "dependency-values")
    ids = _held_jobs(run)
    got_rc, got_err, record = _submit(run, f"--dependency={_quoted(spec.format(**ids))}")
    run("scancel " + " ".join(ids.values()))
    assert (got_rc, got_err, record.get("Dependency", "")) == (rc, err, shown.format(**ids))
