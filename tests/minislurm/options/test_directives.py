"""How sbatch reads ``#SBATCH`` lines (src/sbatch/opt.c ``_opt_batch_script``)."""

from __future__ import annotations

import pytest

from minislurm.errors import OptionError
from minislurm.options import sbatch_directives
from minislurm.options.directives import parse_directives


def test_only_lines_before_the_first_command_count() -> None:
    script = "#!/bin/bash\n#SBATCH -J first\n\n# note\necho hi\n#SBATCH -J ignored\n"
    assert sbatch_directives(script) == ["-J", "first"]


@pytest.mark.parametrize(("line", "words"), [
    ("#SBATCH -J x", ["-J", "x"]),
    ("#SBATCH  -J x", ["-J", "x"]),
    ("#SBATCH\t-J x", ["-J", "x"]),
    ("#SBATCH-J x", ["-J", "x"]),
    ("#SBATCH -J x -t 8 -N 2", ["-J", "x", "-t", "8", "-N", "2"]),
    ('#SBATCH --job-name="quoted name"', ["--job-name=quoted name"]),
    ("#SBATCH --job-name='single quoted'", ["--job-name=single quoted"]),
    ("#SBATCH -J trail # a comment", ["-J", "trail"]),
    ("#SBATCH --time=9 #another", ["--time=9"]),
    ('#SBATCH -J "a # not a comment"', ["-J", "a # not a comment"]),
    (r'#SBATCH -J a\"b', ["-J", 'a"b']),     # backslash escapes a quote...
    (r"#SBATCH -J a\ b", ["-J", "a", "b"]),   # ...but not a blank (get_argument)
    ("#SBATCH", []),
])
def test_word_splitting(line: str, words: list[str]) -> None:
    assert sbatch_directives(f"#!/bin/sh\n{line}\n") == words


@pytest.mark.parametrize("line", ["# SBATCH -J x", "#sbatch -J x", "  #SBATCH -J x",
                                  "##SBATCH -J x"])
def test_lines_that_are_only_comments(line: str) -> None:
    assert sbatch_directives(f"#!/bin/sh\n{line}\n#SBATCH -p p\n") == ["-p", "p"]


def test_whitespace_only_lines_do_not_end_the_scan() -> None:
    assert sbatch_directives("#!/bin/sh\n   \n\t\n#SBATCH -J w\n") == ["-J", "w"]


def test_set_e_ends_the_scan() -> None:
    assert sbatch_directives("#!/bin/bash\nset -e\n#SBATCH -J after\n") == []


def test_line_numbers_are_kept() -> None:
    found = parse_directives("#!/bin/sh\n\n#SBATCH -N 2\n#SBATCH -n 4\n")
    assert [(d.lineno, d.words) for d in found] == [(3, ("-N", "2")), (4, ("-n", "4"))]


def test_unmatched_quote_is_fatal() -> None:
    with pytest.raises(OptionError) as e:
        parse_directives('#!/bin/sh\n#SBATCH -J "open\n', filename="/w/job.sh")
    assert e.value.exit_code == 1
    assert e.value.message == 'sbatch: fatal: /w/job.sh: line 2: Unmatched `"` in [ "open]'


def test_hetjob_separator_ends_the_first_component() -> None:
    assert sbatch_directives("#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\n") == [
        "-N1"]
