"""``scontrol``: view and modify Slurm state, split as Slurm's src/scontrol/ is.

* `scontrol` (scontrol.c): options, interactive mode, ``_process_command``,
  ``show``/``update``/``delete`` dispatch;
* `session` (scontrol.h): the globals and helpers every file shares;
* `info_job`, `info_node`, `info_part`, `info_res` (info_*.c): ``show ...``;
* `update_job`, `update_node`, `update_part` (update_*.c): ``update ...``, ``hold``,
  ``release``, ``requeue``;
* `create_res` (create_res.c): ``create reservation`` and reservation updates.

``python -m minislurm scontrol`` and ``bin/scontrol`` call `main`; commands in
process (`minislurm.sim.cluster.Cluster`, the daemon) call `run`.
"""

from __future__ import annotations

from minislurm.cli.scontrol.scontrol import USAGE, main, process, run
from minislurm.cli.scontrol.session import PROG, Session

__all__ = ["PROG", "USAGE", "Session", "main", "process", "run"]
