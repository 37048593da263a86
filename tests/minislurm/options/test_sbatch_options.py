"""sbatch's options, their values and their error texts (slurm_opt.c, sbatch/opt.c)."""

from __future__ import annotations

import pytest

from minislurm.errors import OptionError, SbatchError
from minislurm.options import SignalSpec, parse_sbatch
from minislurm.options.model import SbatchInvocation

OK = b"#!/bin/bash\necho hi\n"


def sbatch(*args: str, script: bytes = OK, env: dict[str, str] | None = None,
           cwd: str = "/home/u") -> SbatchInvocation:
    """sbatch ARGS job.sh, the script read from an in-memory file."""
    files = {"/home/u/job.sh": script}

    def read(path: str) -> bytes:
        if path not in files:
            raise FileNotFoundError(path)
        return files[path]
    return parse_sbatch([*args, "job.sh"], env=env or {}, cwd=cwd, now=1767600000,
                        read_file=read)


def error(*args: str, script: bytes = OK, env: dict[str, str] | None = None) -> tuple[int, str]:
    with pytest.raises(OptionError) as e:
        sbatch(*args, script=script, env=env)
    return e.value.exit_code, e.value.message


# --- resources -----------------------------------------------------------------

@pytest.mark.parametrize(("arg", "lo", "hi"), [("2", 2, 2), ("2-4", 2, 4), ("1k", 1024, 1024),
                                              ("0", 0, None), ("0-3", 0, 3), ("-3", 1, 3),
                                              ("1km", 2**30, 2**30), ("3-2k", 3, 2048)])
def test_node_counts(arg: str, lo: int, hi: int | None) -> None:
    opts = sbatch(f"-N{arg}").options
    assert (opts.nodes_min, opts.nodes_max) == (lo, hi)


@pytest.mark.parametrize(("arg", "message"), [
    ("3-2", "Maximum node count 2 is less than minimum node count 3"),
    ("x", '"x" is not a valid node count'),
    ("2-y", '"y" is not a valid node count'),
])
def test_bad_node_counts(arg: str, message: str) -> None:
    assert error(f"--nodes={arg}") == (255, f"sbatch: error: {message}")


@pytest.mark.parametrize(("arg", "mb"), [("500", 500), ("500M", 500), ("2G", 2048),
                                         ("2g", 2048), ("1T", 1048576), ("1500K", 2),
                                         ("0", 0), ("10GB", 10240)])
def test_memory_units_default_to_megabytes(arg: str, mb: int) -> None:
    assert sbatch(f"--mem={arg}").options.mem_mb == mb


@pytest.mark.parametrize("opt", ["--mem", "--mem-per-cpu", "--mem-per-gpu", "--tmp"])
def test_bad_memory(opt: str) -> None:
    assert error(f"{opt}=lots") == (255, f"sbatch: error: Invalid {opt} specification")
    assert error(f"{opt}=-1") == (255, f"sbatch: error: Invalid {opt} specification")


def test_memory_options_are_mutually_exclusive_on_the_command_line() -> None:
    assert error("--mem=1G", "--mem-per-cpu=100") == (
        1, "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")


def test_a_command_line_memory_option_clears_the_environments() -> None:
    opts = sbatch("--mem-per-cpu=100", env={"SBATCH_MEM_PER_NODE": "2G"}).options
    assert (opts.mem_mb, opts.mem_per_cpu_mb) == (None, 100)


@pytest.mark.parametrize(("opt", "name"), [("-n", "--ntasks"), ("-c", "--cpus-per-task"),
                                           ("--ntasks-per-node=", "--ntasks-per-node")])
def test_counts_must_be_positive_and_exit_1(opt: str, name: str) -> None:
    """parse_int calls exit(1) (capture b_sbatch_errors/42_ntasks_zero)."""
    for bad in ("0", "-2", "two", "3x"):
        message = f'sbatch: error: Invalid numeric value "{bad}" for {name}.'
        assert error(f"{opt}{bad}") == (1, message)


def test_gpu_and_gres_requests_are_kept_as_written() -> None:
    """slurmctld validates them (b_sbatch_errors 01/03/05/11/13 fail at submission)."""
    opts = sbatch("--gres=gpu:a100:2", "-G", "a100:4", "--gpus-per-node=2",
                  "--gpus-per-task=1", "--cpus-per-gpu=8", "--mem-per-gpu=10G").options
    assert (opts.gres, opts.gpus, opts.gpus_per_node, opts.gpus_per_task) == (
        "gpu:a100:2", "a100:4", "2", "1")
    assert (opts.cpus_per_gpu, opts.mem_per_gpu_mb) == (8, 10240)


def test_exclusive_and_oversubscribe() -> None:
    assert sbatch("--exclusive").options.exclusive == "exclusive"
    assert sbatch("--exclusive=user").options.exclusive == "user"
    assert sbatch("-s").options.exclusive == "oversubscribe"
    assert error("--exclusive=nope") == (255, "sbatch: error: Invalid --exclusive specification")


@pytest.mark.parametrize("dist", ["block", "cyclic", "plane=4", "block:cyclic",
                                  "cyclic:block:fcyclic", "arbitrary", "block,Pack"])
def test_distributions(dist: str) -> None:
    assert sbatch(f"-m{dist}").options.distribution == dist


@pytest.mark.parametrize("dist", ["random", "block:block:block:block",
                                  "block,maybe", "arbitrary:cyclic:foo"])
def test_bad_distributions(dist: str) -> None:
    assert error(f"--distribution={dist}") == (
        255, "sbatch: error: Invalid --distribution specification")


@pytest.mark.parametrize("dist", ["plane", "plane=0", "plane=3:cyclic"])
def test_bad_plane_sizes(dist: str) -> None:
    """A plane without a valid size says so first (measured on 22.05.8;
    tests/minislurm/options/test_plane.py)."""
    assert error(f"--distribution={dist}") == (
        255, "sbatch: error: Invalid plane size or size not specified\n"
        "sbatch: error: Invalid --distribution specification")


# --- time ------------------------------------------------------------------------

def test_time_limits() -> None:
    opts = sbatch("-t", "1-12:00:00", "--time-min=30").options
    assert (opts.time_limit, opts.time_limit_set, opts.time_min) == (2160, True, 30)
    unset = sbatch().options
    assert (unset.time_limit, unset.time_limit_set) == (None, False)
    unlimited = sbatch("--time=UNLIMITED").options
    assert (unlimited.time_limit, unlimited.time_limit_set) == (None, True)
    assert error("--time-min=soon") == (255, "sbatch: error: Invalid --time-min specification")


def test_begin() -> None:
    assert sbatch("--begin=now+1hour").options.begin == 1767603600
    assert sbatch("-b", "2026-01-06T10:00:00").options.begin == 1767693600
    assert error("--begin=whenever") == (
        255, "Invalid time specification (pos=0): whenever\n"
             "sbatch: error: Invalid --begin specification")


def test_deadline_before_begin_is_refused() -> None:
    assert error("--begin=now+2hours", "--deadline=now+1hour") == (
        1, "sbatch: error: Incompatible begin and deadline time specification")


# --- queue -------------------------------------------------------------------------

def test_queue_options() -> None:
    opts = sbatch("-p", "gpu", "-q", "high", "-A", "ml", "--reservation=r1", "-H",
                  "--nice=10", "--priority=TOP", "--comment", "c", "--requeue",
                  "--kill-on-invalid-dep=yes", "--mail-type=END,fail",
                  "--mail-user=a@b").options
    assert (opts.partition, opts.qos, opts.account, opts.reservation) == ("gpu", "high", "ml",
                                                                           "r1")
    assert (opts.hold, opts.nice, opts.priority, opts.comment) == (True, 10, "TOP", "c")
    assert (opts.requeue, opts.kill_on_invalid_dep) == (True, True)
    assert (opts.mail_type, opts.mail_user) == ("END,FAIL", "a@b")
    assert sbatch("--no-requeue").options.requeue is False


def test_array_and_dependency_texts_pass_to_the_controller() -> None:
    """Capture b_sbatch_errors 34/38: slurmctld rejects bad ones, not sbatch."""
    opts = sbatch("--array=abc", "--dependency=foo:1").options
    assert (opts.array, opts.dependency) == ("abc", "foo:1")
    opts = sbatch("-a", "0-7%2", "-d", "afterok:12?afterany:13").options
    assert (opts.array, opts.dependency) == ("0-7%2", "afterok:12?afterany:13")


@pytest.mark.parametrize(("arg", "spec"), [
    ("USR1", SignalSpec(10, 60)),
    ("SIGUSR2@120", SignalSpec(12, 120)),
    ("B:TERM@30", SignalSpec(15, 30, batch_only=True)),
    ("R:10", SignalSpec(10, 60, reservation=True)),
    ("RB:USR1@5", SignalSpec(10, 5, batch_only=True, reservation=True)),
])
def test_signals(arg: str, spec: SignalSpec) -> None:
    assert sbatch(f"--signal={arg}").options.signal == spec


@pytest.mark.parametrize("arg", ["NOPE", "USR1@x", "0", "USR1@99999", "B:"])
def test_bad_signals(arg: str) -> None:
    assert error(f"--signal={arg}") == (255, "sbatch: error: Invalid --signal specification")


@pytest.mark.parametrize(("args", "message"), [
    (("--open-mode=sometimes",), "Invalid --open-mode specification"),
    (("--nice=9999999999",), "Invalid --nice value, out of range (+/- 2147483645)"),
    (("--priority=-1",), "Priority must be >= 0"),
    (("--mail-type=LUNCH",), "Invalid --mail-type specification"),
    (("--kill-on-invalid-dep=maybe",), "Invalid --kill-on-invalid-dep specification"),
    (("--gres-flags=bogus",), "Invalid --gres-flags specification"),
])
def test_value_errors_exit_255(args: tuple[str, ...], message: str) -> None:
    assert error(*args) == (255, f"sbatch: error: {message}")


# --- files, names, client behaviour --------------------------------------------------

def test_paths_are_made_absolute_against_chdir() -> None:
    opts = sbatch("-o", "out-%j.txt", "-e", "/abs/err", "-i", "none", "-D", "sub").options
    assert opts.chdir == "/home/u/sub"
    assert (opts.output, opts.error, opts.input) == ("/home/u/sub/out-%j.txt", "/abs/err",
                                                     "/dev/null")
    assert sbatch("--output=o.txt").options.output == "/home/u/o.txt"
    assert sbatch("--open-mode=append").options.open_mode == "append"


def test_client_flags() -> None:
    opts = sbatch("--parsable", "--test-only", "-W", "--export=NONE", "-Q").options
    assert (opts.parsable, opts.test_only, opts.wait, opts.export, opts.quiet) == (
        True, True, True, "NONE", True)
    assert sbatch("-vvv").options.verbose == 3
    assert error("-v", "-Q") == (1, "sbatch: error: don't specify both --verbose (-v) and "
                                    "--quiet (-Q)")


def test_accepted_but_unmodelled_options_are_recorded() -> None:
    opts = sbatch("--cpu-freq=high", "--hint=nomultithread", "-S", "1").options
    assert opts.other == (("cpu-freq", "high"), ("hint", "nomultithread"), ("core-spec", "1"))


def test_wrap_refuses_script_arguments() -> None:
    with pytest.raises(OptionError) as e:
        parse_sbatch(["--wrap=true", "x.sh"], env={}, cwd="/", now=0)
    assert (e.value.exit_code, e.value.message) == (
        1, "sbatch: error: Script arguments not permitted with --wrap option")


# --- the script ------------------------------------------------------------------

@pytest.mark.parametrize(("script", "message"), [
    (b"", "sbatch: error: Batch script is empty!"),
    (b" \n\t\n", "sbatch: error: Batch script contains only whitespace!"),
    (b"echo hi\n", "sbatch: error: This does not look like a batch script.  The first\n"
                   "sbatch: error: line must start with #! followed by the path to an "
                   "interpreter.\nsbatch: error: For instance: #!/bin/sh"),
    (b"#!/bin/sh\r\necho\r\n", "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
                               "sbatch: error: instead of expected UNIX line breaks (\\n)."),
])
def test_script_checks_exit_1(script: bytes, message: str) -> None:
    with pytest.raises(SbatchError) as e:
        sbatch(script=script)
    assert (e.value.exit_code, e.value.message) == (1, message)


def test_missing_script_file() -> None:
    with pytest.raises(SbatchError) as e:
        parse_sbatch(["nosuch.sh"], env={}, cwd="/nonexistent-dir", now=0)
    assert (e.value.exit_code, e.value.message) == (1, "sbatch: error: Unable to open file "
                                                       "nosuch.sh")


def test_script_errors_come_before_option_value_errors() -> None:
    """The script is read between the two passes: a bad --time is never seen."""
    with pytest.raises(SbatchError) as e:
        sbatch("--time=abc", script=b"")
    assert e.value.message == "sbatch: error: Batch script is empty!"


def test_directives_environment_command_line_precedence() -> None:
    script = b"#!/bin/bash\n#SBATCH -p script -J script -t 5\necho\n"
    env = {"SBATCH_PARTITION": "env", "SBATCH_JOB_NAME": "env"}
    opts = sbatch("-J", "cli", script=script, env=env).options
    assert (opts.partition, opts.job_name, opts.time_limit) == ("env", "cli", 5)


def test_early_options_in_directives_are_ignored() -> None:
    """``#SBATCH --help`` or ``-v`` do nothing: they belong to the first pass."""
    opts = sbatch(script=b"#!/bin/bash\n#SBATCH --help -v\n#SBATCH -J x\n").options
    assert (opts.job_name, opts.verbose) == ("x", 0)


def test_a_non_option_word_in_a_directive() -> None:
    assert error(script=b"#!/bin/bash\n#SBATCH -J x oops\n") == (
        255, "sbatch: error: Invalid directive found in batch script: oops")


def test_a_bad_value_in_a_directive() -> None:
    """Capture f1 sub_bad_value: ``#SBATCH --time=xyz`` -> exit 255."""
    assert error(script=b"#!/bin/bash\n#SBATCH --time=xyz\n") == (
        255, "sbatch: error: Invalid --time specification")


def test_environment_flags_and_values() -> None:
    env = {"SBATCH_REQUEUE": "1", "SBATCH_WAIT": "yes", "SBATCH_OVERCOMMIT": "no",
           "SBATCH_EXCLUSIVE": "", "SBATCH_DEBUG": "2", "SBATCH_ARRAY_INX": "1-3",
           "SBATCH_GPUS_PER_NODE": "4", "SBATCH_OUTPUT": "o.log"}
    opts = sbatch(env=env).options
    assert (opts.requeue, opts.wait, opts.overcommit, opts.exclusive) == (True, True, False,
                                                                          "exclusive")
    assert (opts.verbose, opts.array, opts.gpus_per_node, opts.output) == (
        2, "1-3", "4", "/home/u/o.log")
    held = sbatch(script=b"#!/bin/sh\n#SBATCH --requeue\n", env={"SBATCH_REQUEUE": "no"})
    assert held.options.requeue is None  # a false flag variable resets the option
    assert error(env={"SBATCH_TIMELIMIT": "later"}) == (
        255, "sbatch: error: Invalid --time specification")
