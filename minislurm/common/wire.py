"""The wire's two limits, shared by `minislurm.common.rpc` and a command's quick path.

Kept apart from `minislurm.common.rpc` (which imports ``socketserver``, ``threading`` and
``json``) so that `minislurm.cli.transport.quick_forward`, which a learner's ``squeue``
runs first, reads them without importing the server side.
"""

from __future__ import annotations

#: ``sizeof(struct sockaddr_un.sun_path)`` on Linux: a Unix socket's address holds at most
#: this many bytes, a longer path fails with ``AF_UNIX path too long``.
SUN_PATH_MAX = 108

#: Largest request or answer accepted (a batch script plus its environment fits easily).
MAX_MESSAGE = 64 * 1024 * 1024
