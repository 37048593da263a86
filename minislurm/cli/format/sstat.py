"""What ``sstat`` (and sacct's usage columns) print for a step's gathered usage.

Field names and widths are sstat.c's ``fields[]`` (22.05.8); values follow what
real sstat printed for ``srun -n2`` tasks of a running job (tests/minislurm/cli/test_sstat.py):
memory in KB with Slurm's exact unit conversion (``64648K``; ``--noconvert``: bytes),
CPU times as ``00:00:05``, disk bytes raw, the ``TRESUsageIn*`` strings
``cpu=00:00:05,energy=0,fs/disk=1685855,mem=64554K,pages=0,vmem=67772K`` (their
``*Node``/``*Task`` variants name where the value was; a task id is printed the way
its TRES prints values, so cpu shows it as a time), ``TRESUsageOut*``
``energy=0,fs/disk=1714``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minislurm.common.jobacct import Extremes, StepStat
from minislurm.common.timespec import format_elapsed
from minislurm.errors import SlurmError

__all__ = [
    "DEFAULT_FIELDS",
    "FIELD_NAMES",
    "SstatField",
    "convert_num",
    "helpformat",
    "parse_fields",
    "usage_value",
]

#: sstat.c ``fields[]``: name -> width (negative: left-justified).
WIDTHS: dict[str, int] = {
    "AveCPU": 10, "AveCPUFreq": 10, "AveDiskRead": 12, "AveDiskWrite": 12, "AvePages": 10,
    "AveRSS": 10, "AveVMSize": 10, "ConsumedEnergy": 14, "ConsumedEnergyRaw": 17,
    "JobID": -12, "MaxDiskRead": 12, "MaxDiskReadNode": 15, "MaxDiskReadTask": 15,
    "MaxDiskWrite": 12, "MaxDiskWriteNode": 16, "MaxDiskWriteTask": 16, "MaxPages": 8,
    "MaxPagesNode": 12, "MaxPagesTask": 14, "MaxRSS": 10, "MaxRSSNode": 10, "MaxRSSTask": 10,
    "MaxVMSize": 10, "MaxVMSizeNode": 14, "MaxVMSizeTask": 14, "MinCPU": 10,
    "MinCPUNode": 10, "MinCPUTask": 10, "Nodelist": 20, "NTasks": 8, "Pids": 20,
    "ReqCPUFreq": 10, "ReqCPUFreqMin": 13, "ReqCPUFreqMax": 13, "ReqCPUFreqGov": 13,
    "TRESUsageInAve": 14, "TRESUsageInMax": 14, "TRESUsageInMaxNode": 18,
    "TRESUsageInMaxTask": 18, "TRESUsageInMin": 14, "TRESUsageInMinNode": 18,
    "TRESUsageInMinTask": 18, "TRESUsageInTot": 14, "TRESUsageOutAve": 15,
    "TRESUsageOutMax": 15, "TRESUsageOutMaxNode": 19, "TRESUsageOutMaxTask": 19,
    "TRESUsageOutMin": 15, "TRESUsageOutMinNode": 19, "TRESUsageOutMinTask": 19,
    "TRESUsageOutTot": 15,
}  # fmt: skip
FIELD_NAMES = tuple(WIDTHS)
#: sstat's ``STAT_FIELDS`` (no ``-o``).
DEFAULT_FIELDS = (
    "jobid,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,"
    "averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,"
    "avecpu,ntasks,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,"
    "maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,"
    "maxdiskwritenode,maxdiskwritetask,avediskwrite,tresusageinave,tresusageinmax,"
    "tresusageinmaxnode,tresusageinmaxtask,tresusageinmin,tresusageinminnode,"
    "tresusageinmintask,tresusageintot,tresusageoutave,tresusageoutmax,"
    "tresusageoutmaxnode,tresusageoutmaxtask,tresusageoutmin,tresusageoutminnode,"
    "tresusageoutmintask,tresusageouttot"
)

_UNITS = " KMGTP"


@dataclass(frozen=True, slots=True)
class SstatField:
    """One requested column (``Name[%width]``)."""

    name: str
    width: int


def parse_fields(spec: str, prog: str = "sstat") -> list[SstatField]:
    """``-o/--format``: names without case (an exact name first, else the first name
    it starts), ``%N`` widths; ``error: Invalid field requested: "X"`` (exit 1)."""
    out: list[SstatField] = []
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        name, pct, width_text = token.partition("%")
        exact = next((n for n in WIDTHS if n.lower() == name.lower()), None)
        match = exact or next((n for n in WIDTHS if n.lower().startswith(name.lower())), None)
        if match is None or not name:
            raise SlurmError(f'{prog}: error: Invalid field requested: "{name}"', 1)
        width = WIDTHS[match]
        if pct:
            digits = "".join(c for c in width_text.lstrip("-")[:3] if c.isdigit())
            width = int(digits or 0) * (-1 if width_text.startswith("-") else 1)
        out.append(SstatField(match, width))
    return out


def convert_num(value: float, unit: int, *, noconvert: bool = False) -> str:
    """``convert_num_unit2`` with ``CONVERT_NUM_UNIT_EXACT`` (sstat's default): ``value``
    counted in ``unit`` (0 none, 1 K, 2 M) moves up a unit only while it is a multiple
    of 512; 0 prints ``0``. ``--noconvert``: the number in base units (bytes)."""
    if noconvert:
        return str(int(value * 1024**unit))
    if value == 0:
        return "0"
    num = float(int(value))
    while num >= 1024 and unit < len(_UNITS) - 1 and int(num) % 512 == 0:
        num /= 1024
        unit += 1
    suffix = _UNITS[unit].strip()
    if num == int(num):
        return f"{int(num)}{suffix}"
    return f"{num:.2f}{suffix}"


def _time(seconds: float) -> str:
    return format_elapsed(int(seconds))


def _tres(cpu: str, disk: str, mem: str, pages: str, vmem: str, energy: str | None) -> str:
    parts = [f"cpu={cpu}", *([f"energy={energy}"] if energy is not None else []),
             f"fs/disk={disk}", f"mem={mem}", f"pages={pages}", f"vmem={vmem}"]
    return ",".join(parts)


def _mem(value: float, nc: bool) -> str:
    return convert_num(int(value), 1, noconvert=nc)


def _in_values(s: StepStat, kind: str, nc: bool) -> str:
    """``TRESUsageIn{Ave,Max,Min,Tot}``."""
    def pick(q: Extremes) -> float:
        return {"Ave": s.ave(q), "Max": q.max, "Min": q.min, "Tot": q.total}[kind]

    return _tres(_time(pick(s.cpu)), str(int(pick(s.read))), _mem(pick(s.rss), nc),
                 str(int(pick(s.pages))), _mem(pick(s.vsize), nc), "0")


def _where(s: StepStat, kind: str, what: str) -> str:
    """``TRESUsageIn{Max,Min}{Node,Task}``: the node names, or the task ids printed as
    each TRES prints its values (cpu as a time; no energy entry for tasks)."""
    qs = (s.cpu, s.read, s.rss, s.pages, s.vsize)
    if what == "Node":
        nodes = [q.max_node if kind == "Max" else q.min_node for q in qs]
        return _tres(nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[0])
    tasks = [q.max_task if kind == "Max" else q.min_task for q in qs]
    return _tres(_time(tasks[0]), str(tasks[1]), str(tasks[2]), str(tasks[3]), str(tasks[4]),
                 None)


def _out_values(s: StepStat, kind: str) -> str:
    """``TRESUsageOut*``: energy and bytes written."""
    w = s.write
    if kind in ("MaxNode", "MinNode"):
        node = w.max_node if kind == "MaxNode" else w.min_node
        return f"energy={node},fs/disk={node}"
    if kind in ("MaxTask", "MinTask"):
        return f"fs/disk={w.max_task if kind == 'MaxTask' else w.min_task}"
    value = {"Ave": s.ave(w), "Max": w.max, "Min": w.min, "Tot": w.total}[kind]
    return f"energy=0,fs/disk={int(value)}"


def usage_value(stat: StepStat, field: str, step_id: int | str, *,
                noconvert: bool = False) -> str:
    """The text of usage column ``field`` for a step (``step_id``: ``batch`` prints 0
    where a step prints ``Unknown``: the requested CPU frequencies)."""
    s, nc = stat, noconvert
    if field.startswith("TRESUsageIn"):
        rest = field.removeprefix("TRESUsageIn")
        if rest in ("Ave", "Max", "Min", "Tot"):
            return _in_values(s, rest, nc)
        return _where(s, rest[:3], rest[3:])
    if field.startswith("TRESUsageOut"):
        return _out_values(s, field.removeprefix("TRESUsageOut"))
    unknown = "0" if step_id == "batch" else "Unknown"
    simple: dict[str, Callable[[], str]] = {
        "AveCPU": lambda: _time(s.ave(s.cpu)),
        "AveCPUFreq": lambda: "0",
        "AveDiskRead": lambda: convert_num(int(s.ave(s.read)), 0, noconvert=nc),
        "AveDiskWrite": lambda: convert_num(int(s.ave(s.write)), 0, noconvert=nc),
        "AvePages": lambda: str(int(s.ave(s.pages))),
        "AveRSS": lambda: _mem(s.ave(s.rss), nc),
        "AveVMSize": lambda: _mem(s.ave(s.vsize), nc),
        "ConsumedEnergy": lambda: "0",
        "ConsumedEnergyRaw": lambda: "0",
        "MaxDiskRead": lambda: convert_num(s.read.max, 0, noconvert=nc),
        "MaxDiskReadNode": lambda: s.read.max_node,
        "MaxDiskReadTask": lambda: str(s.read.max_task),
        "MaxDiskWrite": lambda: convert_num(s.write.max, 0, noconvert=nc),
        "MaxDiskWriteNode": lambda: s.write.max_node,
        "MaxDiskWriteTask": lambda: str(s.write.max_task),
        "MaxPages": lambda: str(int(s.pages.max)),
        "MaxPagesNode": lambda: s.pages.max_node,
        "MaxPagesTask": lambda: str(s.pages.max_task),
        "MaxRSS": lambda: _mem(s.rss.max, nc),
        "MaxRSSNode": lambda: s.rss.max_node,
        "MaxRSSTask": lambda: str(s.rss.max_task),
        "MaxVMSize": lambda: _mem(s.vsize.max, nc),
        "MaxVMSizeNode": lambda: s.vsize.max_node,
        "MaxVMSizeTask": lambda: str(s.vsize.max_task),
        "MinCPU": lambda: _time(s.cpu.min),
        "MinCPUNode": lambda: s.cpu.min_node,
        "MinCPUTask": lambda: str(s.cpu.min_task),
        "Nodelist": lambda: s.nodelist,
        "NTasks": lambda: str(s.ntasks),
        "Pids": lambda: ",".join(str(p) for p in s.pids),
        "ReqCPUFreq": lambda: unknown,
        "ReqCPUFreqMin": lambda: unknown,
        "ReqCPUFreqMax": lambda: unknown,
        "ReqCPUFreqGov": lambda: unknown,
    }
    get = simple.get(field)
    return get() if get is not None else ""


def helpformat() -> str:
    """``sstat -e``: the names in sstat's table order, four per line in columns of 20
    (the last of a line 19 wide)."""
    names = list(FIELD_NAMES)
    lines = []
    for i in range(0, len(names), 4):
        row = names[i:i + 4]
        lines.append("".join(f"{n:<20}" for n in row[:-1]) + f"{row[-1]:<19}")
    return "".join(line + "\n" for line in lines)
