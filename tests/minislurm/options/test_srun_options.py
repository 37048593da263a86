"""srun and salloc: environment first, then the command line, then the command."""

from __future__ import annotations

import pytest

from minislurm.errors import OptionError
from minislurm.options import parse_salloc, parse_srun


def test_srun_step_options_and_command() -> None:
    inv = parse_srun(["-N2", "--ntasks-per-node=2", "--gres=gpu:2", "-l", "-u", "--mpi=pmix",
                      "-o", "task%t.env", "bash", "-c", "env"], env={})
    opts = inv.options
    assert (opts.nodes_min, opts.ntasks_per_node, opts.gres) == (2, 2, "gpu:2")
    assert (opts.label, opts.unbuffered, opts.mpi, opts.output) == (True, True, "pmix",
                                                                    "task%t.env")
    assert inv.command == ("bash", "-c", "env")
    assert inv.job_name == "bash"  # capture a1: SLURM_JOB_NAME is the command


def test_srun_takes_the_allocation_from_the_environment() -> None:
    env = {"SLURM_JOB_ID": "7", "SLURM_NTASKS": "4", "SLURM_NNODES": "2",
           "SLURM_CPUS_PER_TASK": "2", "SLURM_JOB_NAME": "job.sh", "SLURM_MEM_PER_CPU": "1000"}
    opts = parse_srun(["hostname"], env=env).options
    assert (opts.jobid, opts.ntasks, opts.nodes_min, opts.cpus_per_task) == ("7", 4, 2, 2)
    assert (opts.job_name, opts.mem_per_cpu_mb) == ("job.sh", 1000)
    step = parse_srun(["-n1", "-N1", "--gpus=1", "hostname"], env=env).options
    assert (step.ntasks, step.nodes_min, step.gpus) == (1, 1, "1")


def test_srun_mem_drops_an_inherited_mem_per_cpu() -> None:
    """arg_set_mem: srun "silently stomps" on --mem-per-cpu from the environment."""
    opts = parse_srun(["--mem=2G", "true"], env={"SLURM_MEM_PER_CPU": "1000"}).options
    assert (opts.mem_mb, opts.mem_per_cpu_mb) == (2048, None)


def test_srun_specific_options() -> None:
    opts = parse_srun(["-K", "--overlap", "--exact", "--cpu-bind=cores", "-W", "30",
                       "--multi-prog", "conf"], env={}).options
    assert (opts.kill_on_bad_exit, opts.overlap, opts.exact, opts.cpu_bind) == (1, True, True,
                                                                                "cores")
    assert opts.multi_prog and ("wait", "30") in opts.other


def test_srun_without_a_command() -> None:
    """22.05.8: ``srun -n2`` -> ``srun: fatal: No command given to execute.``, exit 1."""
    with pytest.raises(OptionError) as e:
        parse_srun(["-n2"], env={})
    assert (e.value.exit_code, e.value.message) == (1, "srun: fatal: No command given to execute.")


def test_sbatch_only_options_are_unknown_to_srun() -> None:
    with pytest.raises(OptionError) as e:
        parse_srun(["--array=1-3", "true"], env={})
    assert e.value.message.startswith("srun: unrecognized option '--array=1-3'")
    assert e.value.exit_code == 255


def test_salloc() -> None:
    inv = parse_salloc(["-N1", "--gpus=2", "-I30", "--no-shell"], env={"SALLOC_PARTITION": "gpu"})
    assert (inv.options.nodes_min, inv.options.gpus, inv.options.immediate) == (1, "2", 30)
    assert inv.options.partition == "gpu" and inv.command == ()
    assert inv.job_name == "interactive"
    cmd = parse_salloc(["-p", "debug", "srun", "hostname"], env={"SALLOC_PARTITION": "gpu"})
    assert cmd.options.partition == "debug" and cmd.command == ("srun", "hostname")
    with pytest.raises(OptionError) as e:
        parse_salloc(["--time=soon"], env={})
    assert e.value.message == "salloc: error: Invalid --time specification"
