"""Real Slurm 22.05 on this host, started by the test suite (see harness.py).

In tests, use the session fixture from tests/conftest.py::

    @pytest.mark.realslurm
    def test_something(real_slurm):
        res = real_slurm.run("sbatch --wait --wrap 'echo hi'", cwd=tmp_dir)
        res.stdout, res.stderr, res.rc          # Result
        real_slurm.wait_job(job_id)             # final JobState
        real_slurm.conf_path, real_slurm.env    # SLURM_CONF, fixed environment

By hand: ``scripts/realslurm start|status|env|stop`` (cli.py).

Modules: harness (RealSlurm life cycle and commands), daemons (one start function
per daemon), conf + templates/ (slurm.conf, gres.conf, slurmdbd.conf rendered
from the reference), ports (free port blocks), procs (finding and ending the
run's processes), replay (running a capture's command like the capture runner),
normalize (mapping ids/paths/ports back to the captures'), differential
(``run_batch``: the real side of minislurm-vs-Slurm comparisons), cli.
"""

from .harness import HarnessUnavailable, RealSlurm, Result, fixed_environment

__all__ = ["HarnessUnavailable", "RealSlurm", "Result", "fixed_environment"]
