"""Run the interpreted package even where the compiled build (``scripts/compile``) is in place.

``PYTHONPATH=scripts/interpreted:$PWD python ...``: Python imports this module at start-up
(``site``), in every process that inherits the environment, subprocesses included.  It
puts a path hook first that, for the folders of the ``minislurm`` package in this
checkout, finds source and bytecode only, so ``minislurm/sched/backfill.py`` is imported
and ``backfill.cpython-311-x86_64-linux-gnu.so`` beside it is not.  Every other folder
(numpy's included) keeps Python's own finder.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    SOURCE_SUFFIXES,
    FileFinder,
    SourceFileLoader,
    SourcelessFileLoader,
)

_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))), "minislurm")
_SOURCE_ONLY = FileFinder.path_hook((SourceFileLoader, SOURCE_SUFFIXES),
                                    (SourcelessFileLoader, BYTECODE_SUFFIXES))


def _source_only(path: str) -> FileFinder:
    """The finder of one ``minislurm`` folder; ImportError hands any other path on."""
    real = os.path.realpath(path or ".")
    if real == _PACKAGE or real.startswith(_PACKAGE + os.sep):
        return _SOURCE_ONLY(path)
    raise ImportError("not a minislurm folder")


sys.path_hooks.insert(0, _source_only)
sys.path_importer_cache.clear()
