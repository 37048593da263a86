"""``sbatch`` option processing (src/sbatch/opt.c and sbatch.c, Slurm 22.05).

The order is Slurm's:

1. first pass over the command line (``process_options_first_pass``):
   getopt errors, ``--help``/``--usage``/``--version``, ``--wrap``, ``-v``
   and ``-Q``; the first non-option word is the script, the rest its
   arguments;
2. the script is read and checked (``_get_script_buffer``): missing file,
   empty, whitespace only, no ``#!``, DOS line breaks (all exit 1);
3. second pass (``process_options_second_pass``): ``#SBATCH`` directives,
   then ``SBATCH_*`` variables, then the command line again, so the command
   line wins over the environment, which wins over the script;
4. ``_opt_verify``: cross-option checks.

Option value errors exit 255 (``exit(-1)``), script errors exit 1.
"""

from __future__ import annotations

import os
import posixpath
import time
from collections.abc import Callable, Mapping, Sequence

from minislurm.common import hostlist
from minislurm.errors import HostlistError, OptionError, SbatchError
from minislurm.options import values as V
from minislurm.options.builder import CLI, SCRIPT, OptionBuilder
from minislurm.options.directives import parse_directives
from minislurm.options.env import apply_env
from minislurm.options.getopt import GetoptError, HasArg, ParsedOption, getopt_long
from minislurm.options.model import SbatchInvocation
from minislurm.options.table import OptionSpec, by_key, getopt_tables

PROG = "sbatch"

WRAP_HEADER = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"
"""``_script_wrap`` (sbatch.c): the script sbatch builds for ``--wrap``."""

ReadFile = Callable[[str], bytes]


def _try_help(prog: str) -> str:
    return f'Try "{prog} --help" for more information'


def run_getopt(argv: Sequence[str], command: str, prog: str) -> tuple[list[ParsedOption], int]:
    """getopt_long over ``argv`` with ``command``'s table; a getopt error
    becomes glibc's line plus Slurm's ``Try "... --help"`` hint (exit 255)."""
    shorts, longs = getopt_tables(command)
    try:
        return getopt_long(argv, shorts, longs, prog)
    except GetoptError as e:
        specs = by_key(command)
        for parsed in e.found:  # --help before the bad option still wins
            spec = specs[parsed.key]
            if spec.early and spec.name in ("help", "usage", "version"):
                spec.setter(OptionBuilder(prog, cwd="/", now=0), parsed.arg)
        raise OptionError(f"{e.message}\n{_try_help(prog)}", 255) from None


def apply_options(b: OptionBuilder, parsed: Sequence[ParsedOption],
                  specs: Mapping[str, OptionSpec], *, early: bool | None) -> None:
    """Run the setters of ``parsed``: only early-pass options
    (``early=True``), only the others (``early=False``), or all (``None``)."""
    for p in parsed:
        spec = specs[p.key]
        if early is None or spec.early == early:
            spec.setter(b, option_arg(spec, p))


def option_arg(spec: OptionSpec, parsed: ParsedOption) -> str | None:
    """The argument a setter gets: an empty one of an optional-argument option is
    no argument (22.05.8: ``--nice=`` is nice 100, ``--exclusive=`` and ``--no-kill=``
    are the bare flags)."""
    if spec.has_arg is HasArg.OPTIONAL and parsed.arg == "":
        return None
    return parsed.arg


def _default_read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _find_script(name: str, cwd: str, env: Mapping[str, str],
                 exists: Callable[[str], bool]) -> str:
    """``search_path(cwd, cmd, ..., R_OK)``: the script as an absolute path."""
    if "/" in name:
        return name if name.startswith("/") else posixpath.normpath(posixpath.join(cwd, name))
    candidate = posixpath.join(cwd, name)
    if exists(candidate):
        return candidate
    for d in env.get("PATH", "").split(":"):
        if d and exists(posixpath.join(d, name)):
            return posixpath.join(d, name)
    return name


def check_script(data: bytes, prog: str = PROG) -> str:
    """``_get_script_buffer``'s checks; returns the script as text."""
    def fail(*lines: str) -> SbatchError:
        return SbatchError("\n".join(f"{prog}: error: {line}" for line in lines), 1)

    if not data:
        raise fail("Batch script is empty!")
    if not data.strip(b" \t\n\r\v\f"):
        raise fail("Batch script contains only whitespace!")
    if not data.startswith(b"#!"):
        raise fail("This does not look like a batch script.  The first",
                   "line must start with #! followed by the path to an interpreter.",
                   "For instance: #!/bin/sh")
    if b"\r\n" in data:
        raise fail("Batch script contains DOS line breaks (\\r\\n)",
                   "instead of expected UNIX line breaks (\\n).")
    return data.decode("utf-8", errors="surrogateescape")


def _directives(b: OptionBuilder, text: str, filename: str,
                specs: Mapping[str, OptionSpec]) -> None:
    """``_opt_batch_script``: the ``#SBATCH`` words go through getopt too."""
    words = [w for d in parse_directives(text, filename=filename, prog=b.prog) for w in d.words]
    if not words:
        return
    parsed, optind = run_getopt(words, PROG, b.prog)
    b.source = SCRIPT
    apply_options(b, parsed, specs, early=False)
    b.source = CLI
    if optind < len(words):
        b.fail(f"Invalid directive found in batch script: {words[optind]}")


def parse_sbatch(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes | str | None = None,
    cwd: str,
    now: int | None = None,
    read_file: ReadFile | None = None,
) -> SbatchInvocation:
    """Parse ``sbatch`` arguments (``argv`` without the program name).

    ``stdin`` is the script when no script file is named (``None`` = empty
    input); ``read_file`` reads a script file (default: the real file system,
    relative paths against ``cwd``); ``now`` is the clock for ``--begin``.
    Raises `OptionError`/`SbatchError` with sbatch's stderr and exit code, or
    `minislurm.options.table.InfoExit` for ``--help``/``--usage``/``--version``.
    """
    now = int(time.time()) if now is None else now
    specs = by_key(PROG)
    b = OptionBuilder(PROG, cwd=cwd, now=now, env=env)

    # 1. first pass
    parsed, optind = run_getopt(argv, PROG, PROG)
    apply_options(b, parsed, specs, early=True)
    script_args = tuple(argv[optind:])
    wrap = b.get("wrap")
    if wrap is not None and script_args:
        b.fail("Script arguments not permitted with --wrap option", 1)

    # 2. the script
    reader = read_file or _default_read
    script_path: str | None = None
    if wrap is not None:
        text = WRAP_HEADER + wrap + "\n"
        name = "wrap"
    else:
        if script_args:
            script_path = _find_script(script_args[0], cwd, env, _exists_with(reader))
            try:
                data = reader(script_path)
            except OSError:
                raise SbatchError(f"{PROG}: error: Unable to open file {script_args[0]}",
                                  1) from None
            name = posixpath.basename(script_args[0])
        else:
            data = stdin.encode() if isinstance(stdin, str) else (stdin or b"")
            name = "sbatch"
        text = check_script(data)
        # fatal() names the script by its base name, or "stdin" (22.05.8)
        _directives(b, text, posixpath.basename(script_path) if script_path else "stdin", specs)

    # 3. environment, then the command line again
    apply_env(b, PROG, env)
    apply_options(b, parsed, specs, early=False)

    # 4. verification
    warnings = _verify(b)
    return SbatchInvocation(b.build(), text, name, script_args[1:], script_path, warnings)


def _exists_with(reader: ReadFile) -> Callable[[str], bool]:
    if reader is _default_read:
        return os.path.isfile

    def exists(path: str) -> bool:
        try:
            reader(path)
        except OSError:
            return False
        return True
    return exists


def _verify(b: OptionBuilder) -> tuple[str, ...]:
    """``_opt_verify`` and ``validate_options_salloc_sbatch_srun``; returns the
    ``Warning:`` lines sbatch prints (``info()``), in order.

    Like Slurm, the checks that only mark the options unverified go on, and
    their errors and warnings come out together before sbatch exits 1
    (``-w n[1-3] -N2 -n1``: the node count error, then the nnodes warning)."""
    b.validate_memory()
    lines: list[str] = []
    failed = False
    if b.get("quiet") and b.get("verbose"):
        lines.append(f"{b.prog}: error: don't specify both --verbose (-v) and --quiet (-Q)")
        failed = True
    verify_hint(b)
    base = b.get("chdir") or b.cwd
    for field in ("output", "error", "input"):
        value = b.get(field)
        if value is not None and not value.startswith("/"):  # _fullpath: "<dir>/<name>"
            origin = b.origin[field]
            b.set(field, f"{base}/{value}")
            b.origin[field] = origin
    failed = verify_counts(b, lines) or failed
    if failed:
        raise OptionError("\n".join(lines), 1)
    begin, deadline = b.get("begin"), b.get("deadline")
    if begin and deadline and deadline < begin:
        b.fail("Incompatible begin and deadline time specification", 1)
    to_job_desc_uint16(b)
    return tuple(lines)


def verify_counts(b: OptionBuilder, lines: list[str]) -> bool:
    """The node and task counts of ``_opt_verify`` (sbatch, srun and salloc alike,
    except where noted); appends error and ``Warning:`` lines to ``lines`` and
    returns whether one was an error. Measured on 22.05.8:

    * ``-w`` makes the minimum node count at least the number of distinct hosts
      (srun first cuts a list longer than ``-N``'s maximum, with an error line);
    * ``invalid number of tasks (-n N)``, ``invalid number of cpus per task (-c N)``,
      ``invalid number of nodes (-N min-max)`` (the ``int`` values; srun also
      ``ntasks-per-node is 0``);
    * with both counts, the maximum node count is at most the task count, and fewer
      tasks than nodes give ``Warning: can't run 1 processes on 2 nodes, setting
      nnodes to 1`` (srun inside a 2-node job too) and shrink a ``-w`` list."""
    hosts = _nodes_from_nodelist(b, lines)
    failed = False

    def error(message: str) -> None:
        nonlocal failed
        failed = True
        lines.append(f"{b.prog}: error: {message}")

    ntasks, cpus = b.get("ntasks"), b.get("cpus_per_task")
    lo, hi = b.get("nodes_min"), b.get("nodes_max") or 0
    if ntasks is not None and ntasks < 0:
        error(f"invalid number of tasks (-n {ntasks})")
    if cpus is not None and cpus <= 0:
        error(f"invalid number of cpus per task (-c {cpus})")
    if lo is not None and (lo < 0 or hi < 0 or (hi and lo > hi)):
        error(f"invalid number of nodes (-N {lo}-{hi})")
    if b.prog == "srun" and b.get("ntasks_per_node") == 0:
        error("ntasks-per-node is 0")
    if lo is not None and ntasks is not None:  # "massage the numbers"
        if ntasks < hi:
            b.set("nodes_max", ntasks)
        if ntasks < lo:
            lines.append(f"{b.prog}: Warning: can't run {ntasks} processes on {lo} nodes, "
                         f"setting nnodes to {ntasks}")
            b.set("nodes_min", ntasks)
            b.set("nodes_max", ntasks)
            if len(hosts) > ntasks > 0:  # the -w list shrinks to the first hosts
                b.set("nodelist", hostlist.compress(hosts[:ntasks]))
    return failed


UINT16_FIELDS = ("cpus_per_task", "ntasks_per_node", "ntasks_per_gpu", "mincpus")
"""Options ``job_desc_msg_t`` carries as ``uint16_t`` (cpus_per_task,
ntasks_per_node, ntasks_per_tres, pn_min_cpus)."""


def to_job_desc_uint16(b: OptionBuilder) -> None:
    """``fill_job_desc_from_opts``: the ``int`` options go into ``uint16_t`` fields,
    0 meaning unset (22.05.8: ``--ntasks-per-node=65537`` is 1, ``=4294967296`` and
    ``=2147483648`` none at all, ``-c 65536`` the default 1)."""
    for field in UINT16_FIELDS:
        value = b.get(field)
        if value is not None and not 0 < value < 2**16:
            if value % 2**16:
                b.set(field, value % 2**16)
            else:
                b.reset(field)


def verify_hint(b: OptionBuilder) -> None:
    """``verify_hint`` (exit 1), unless ``validate_hint_option`` drops ``--hint``
    for ``--ntasks-per-core``, ``--threads-per-core`` or ``-B`` given with it."""
    hint = b.other.get("hint")
    if hint is None or any(o in b.other for o in ("ntasks-per-core", "threads-per-core",
                                                   "extra-node-info")):
        return
    try:
        V.verify_hint(hint)
    except OptionError as e:
        b.fail(e.message, e.exit_code)


def _nodes_from_nodelist(b: OptionBuilder, lines: list[str]) -> list[str]:
    """``-w``: at least as many nodes as the list names, duplicates counted once
    (``hostlist_create``/``hostlist_uniq``; a list it cannot read ends the command
    with the hostlist error and ``memory allocation failure``, exit 1); srun cuts
    a list longer than ``-N``'s maximum. Returns the hosts, sorted and unique."""
    nodelist = b.get("nodelist")
    if nodelist is None:
        return []
    try:
        hosts = hostlist.expand(hostlist.ranged(nodelist, uniq=True))
    except HostlistError as e:
        errors = [f"{b.prog}: {ln}" for ln in e.message.splitlines() if ln.startswith("error:")]
        errors.append(f"{b.prog}: error: memory allocation failure")
        raise OptionError("\n".join(errors), 1) from None
    hi = b.get("nodes_max")
    if b.prog == "srun" and hi and len(hosts) > hi:
        lines.append(f"{b.prog}: error: Required nodelist includes more nodes than permitted "
                     f"by max-node count ({len(hosts)} > {hi}). Eliminating nodes from the "
                     "nodelist.")
        hosts = hosts[:hi]
        b.set("nodelist", hostlist.compress(hosts))
    lo = b.get("nodes_min")
    b.set("nodes_min", len(hosts) if lo is None else max(len(hosts), lo))
    return hosts
