"""getopt_long as sbatch/srun/salloc use it: names, abbreviations, glibc's error texts."""

from __future__ import annotations

import pytest

from minislurm.errors import OptionError
from minislurm.options import InfoExit, SbatchInvocation, parse_sbatch, parse_srun
from minislurm.options.getopt import GetoptError, HasArg, LongOption, getopt_long
from minislurm.options.table import options_for

SCRIPT = b"#!/bin/bash\necho hi\n"
TRY = 'Try "sbatch --help" for more information'


def sbatch(*args: str, env: dict[str, str] | None = None) -> SbatchInvocation:
    """parse_sbatch with the script given on stdin."""
    return parse_sbatch(list(args), env=env or {}, stdin=SCRIPT, cwd="/home/u", now=0)


def sbatch_error(*args: str) -> tuple[int, str]:
    with pytest.raises(OptionError) as e:
        sbatch(*args)
    return e.value.exit_code, e.value.message


def test_long_options_take_values_with_equals_or_as_next_word() -> None:
    assert sbatch("--job-name=a").options.job_name == "a"
    assert sbatch("--job-name", "b").options.job_name == "b"
    assert sbatch("-Jc").options.job_name == "c"
    assert sbatch("-J", "d").options.job_name == "d"


def test_unique_prefixes_abbreviate_long_options() -> None:
    assert sbatch("--job=x").options.job_name == "x"
    assert sbatch("--part", "gpu").options.partition == "gpu"
    assert sbatch("--ntasks-per-n=2").options.ntasks_per_node == 2


def test_an_exact_name_beats_longer_ones() -> None:
    """``--gpus`` is a full name although ``--gpus-per-node`` starts with it."""
    assert sbatch("--gpus=2").options.gpus == "2"
    assert sbatch("--mem=1G").options.mem_mb == 1024


def test_short_options_cluster() -> None:
    opts = sbatch("-HvN2").options
    assert (opts.hold, opts.verbose, opts.nodes_min) == (True, 1, 2)


@pytest.mark.parametrize(("args", "first_line"), [
    (("--foo",), "sbatch: unrecognized option '--foo'"),
    (("--foo=bar",), "sbatch: unrecognized option '--foo=bar'"),
    (("-Z",), "sbatch: invalid option -- 'Z'"),
    (("-N",), "sbatch: option requires an argument -- 'N'"),
    (("--time",), "sbatch: option '--time' requires an argument"),
    (("--hold=yes",), "sbatch: option '--hold' doesn't allow an argument"),
    (("--mem-per",), "sbatch: option '--mem-per' is ambiguous; possibilities: "
                     "'--mem-per-cpu' '--mem-per-gpu'"),
    (("--label",), "sbatch: unrecognized option '--label'"),  # srun only
])
def test_getopt_errors_exit_255_with_the_help_hint(args: tuple[str, ...], first_line: str) -> None:
    assert sbatch_error(*args) == (255, f"{first_line}\n{TRY}")


def test_srun_errors_name_srun() -> None:
    with pytest.raises(OptionError) as e:
        parse_srun(["--foo", "true"], env={})
    assert e.value.message == ("srun: unrecognized option '--foo'\n"
                               'Try "srun --help" for more information')


def test_options_stop_at_the_script() -> None:
    inv = parse_sbatch(["-J", "x", "job.sh", "-N", "3", "--bogus"], env={}, cwd="/w",
                       read_file=lambda p: SCRIPT, now=0)
    assert inv.script_args == ("-N", "3", "--bogus")
    assert inv.options.nodes_min is None


def test_double_dash_ends_the_options() -> None:
    inv = parse_srun(["-n2", "--", "-weird-command"], env={})
    assert inv.command == ("-weird-command",)
    assert inv.options.ntasks == 2


def test_version_help_and_usage_print_and_exit_zero() -> None:
    with pytest.raises(InfoExit) as e:
        sbatch("-V")
    assert (e.value.stdout, e.value.exit_code) == ("slurm 22.05.8\n", 0)
    with pytest.raises(InfoExit) as e:
        sbatch("--help")
    assert e.value.stdout.startswith("Usage: sbatch")
    with pytest.raises(InfoExit) as e:
        sbatch("--usage")
    assert e.value.stdout.startswith("Usage: sbatch")


def test_help_before_a_bad_option_still_wins() -> None:
    with pytest.raises(InfoExit):
        sbatch("--help", "--nosuch")


def test_every_command_has_its_own_table() -> None:
    names = {cmd: {o.name for o in options_for(cmd)} for cmd in ("sbatch", "srun", "salloc")}
    assert {"array", "wrap", "parsable", "wait", "requeue"} <= names["sbatch"]
    assert "array" not in names["srun"] and "label" in names["srun"]
    assert "no-shell" in names["salloc"] and "wrap" not in names["salloc"]


def test_getopt_reports_what_it_found_before_an_error() -> None:
    longs = [LongOption("alpha", HasArg.NO, "alpha")]
    with pytest.raises(GetoptError) as e:
        getopt_long(["--alpha", "-q"], {}, longs, "prog")
    assert e.value.message == "prog: invalid option -- 'q'"
    assert [p.key for p in e.value.found] == ["alpha"]


def test_optional_arguments_only_attach() -> None:
    """``--nice`` alone means 100; ``--nice 5`` leaves 5 as the script name."""
    assert sbatch("--nice").options.nice == 100
    assert sbatch("--nice=-20").options.nice == -20
    inv = parse_sbatch(["--nice", "x.sh"], env={}, cwd="/w", read_file=lambda p: SCRIPT, now=0)
    assert inv.script_name == "x.sh"
