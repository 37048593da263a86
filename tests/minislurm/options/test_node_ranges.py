"""``sbatch -N min-max`` with ``-n``: accepted when the tasks fit on max nodes, as 22.05.8.

Measured on real 22.05.8 (reference cluster: 4 CPUs per node): ``-N1-3 -n6`` and
``-N1-2 -n5`` are accepted (``-N1-3 -n6`` then runs on n[1-3], 2 CPUs each);
``-N1 -n6`` and ``-N1-2 -n9`` are refused with the node-configuration line alone (the
``CPU count per node can not be satisfied`` line is only for a per-node need such as
``-c5`` or ``--ntasks-per-node=5``: capture b_sbatch_errors).  minislurm refused
``-N1-3 -n6`` and printed the CPU-count line for all four.  The same submissions run on
minislurm's embedded cluster and on real Slurm.  (A held ``-H -N1 -n6`` is accepted by
real Slurm: the node configuration is tested when the job is scheduled; not modelled.)
"""

from __future__ import annotations

from pathlib import Path

from captures import reference_cluster
from realslurm import RealSlurm

NODE_CONFIG = (
    "sbatch: error: Batch job submission failed: Requested node configuration is not available")
CASES = [  # (options, rc, stderr)
    ("-N1-3 -n6 --mem=300", 0, ""),
    ("-N1-3 -n6", 0, ""),
    ("-N1-2 -n5", 0, ""),
    ("-N2-3 -n6 --mem=300", 0, ""),
    ("-N1 -n6", 1, NODE_CONFIG),
    ("-N1-2 -n9", 1, NODE_CONFIG),
    ("-N1 -c5", 1, "sbatch: error: CPU count per node can not be satisfied\n" + NODE_CONFIG),
]


def test_node_ranges_on_minislurm(tmp_path: Path) -> None:
    cluster = reference_cluster(tmp_path)
    for opts, rc, err in CASES:
        res = cluster.run(f"sbatch {opts} --wrap 'sleep 30'")
        assert (res.returncode, res.stderr.strip()) == (rc, err), opts
    cluster.advance(2)
    assert cluster.run("squeue -h -j 1 -o '%t %N %C'").stdout.split() == ["R", "n[1-3]", "6"]


def test_node_ranges_on_real_slurm(real_slurm: RealSlurm) -> None:
    ids = []
    for opts, rc, err in CASES:
        res = real_slurm.run(f"sbatch --parsable {opts} --wrap 'sleep 30'")
        assert (res.rc, res.stderr.strip()) == (rc, err), opts
        if rc == 0:
            ids.append(res.stdout.strip())
    real_slurm.run(f"scancel {' '.join(ids)}")
