"""The controller's clock is said by its creator, not guessed from ``env.now``."""

from __future__ import annotations

import pytest
import simpy
from ctld_helpers import REF_CONF

from minislurm.conf import parse_config
from minislurm.ctld import DEFAULT_EPOCH, SIMULATED, WALL_CLOCK, Controller
from minislurm.daemon.realtime import realtime_environment

CFG = parse_config(REF_CONF, "slurm.conf")
NOW = 1_767_700_000  # an epoch time


def test_a_simulated_clock_starts_at_its_epoch_whatever_simpy_time_it_starts_at() -> None:
    # the old guess (env.now < 1e9) took an environment started at NOW for the wall clock
    ctl = Controller(CFG, simpy.Environment(initial_time=NOW), clock=SIMULATED, epoch=100)
    assert ctl.now == NOW + 100
    assert Controller(CFG, simpy.Environment(), clock=SIMULATED).now == DEFAULT_EPOCH


def test_the_wall_clock_is_simpy_time() -> None:
    # the old guess added the epoch to a wall clock that read a small number
    ctl = Controller(CFG, simpy.Environment(initial_time=5), clock=WALL_CLOCK)
    assert ctl.now == 5
    assert ctl.at(NOW) == NOW


def test_an_environment_declaring_its_wall_clock_start_is_the_wall_clock() -> None:
    ctl = Controller(CFG, realtime_environment(lambda: NOW + 0.4))
    assert ctl.now == NOW
    assert ctl.started_at == NOW  # its periodic checks count from there
    assert Controller(CFG).now == DEFAULT_EPOCH  # a plain environment: simulated


def test_an_unknown_clock_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown clock 'utc'"):
        Controller(CFG, clock="utc")
