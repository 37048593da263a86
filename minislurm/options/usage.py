"""``--help`` and ``--usage`` texts (abridged from Slurm 22.05's sbatch/srun/salloc)."""

from __future__ import annotations

_USAGE = {
    "sbatch": "Usage: sbatch [-N nnodes] [-n ntasks]\n"
              "              [-c ncpus] [-r n] [-p partition] [--hold] [--parsable] [-t minutes]\n"
              "              [-D path] [--no-kill] [--overcommit]\n"
              "              [--input file] [--output file] [--error file]\n"
              "              [--array=index_values] [--dependency=type:jobid]\n"
              "              [--gres=list] [--gpus=n] [--mem=MB] [--mem-per-cpu=MB]\n"
              "              executable [args...]\n",
    "srun": "Usage: srun [-N nnodes] [-n ntasks] [-i in] [-o out] [-e err]\n"
            "            [-c ncpus] [-r n] [-p partition] [--hold] [-t minutes]\n"
            "            [-D path] [--immediate[=secs]] [--overcommit] [--no-kill]\n"
            "            [--label] [--unbuffered] [-m dist] [-J jobname]\n"
            "            [--jobid=id] [--gres=list] [--gpus=n] [--mpi=type]\n"
            "            executable [args...]\n",
    "salloc": "Usage: salloc [-N numnodes|[min nodes]-[max nodes]] [-n num-processors]\n"
              "              [[-c cpus-per-node] [-r n] [-p partition] [--hold] [-t minutes]\n"
              "              [--immediate[=secs]] [--no-kill] [--overcommit] [-D path]\n"
              "              [--gres=list] [--gpus=n] [--mem=MB]\n"
              "              [command [args...]]\n",
}

_HELP_BODY = """
Parallel run options:
  -a, --array=indexes         job array index values
  -A, --account=name          charge job to specified account
  -b, --begin=time            defer job until HH:MM MM/DD/YY
  -c, --cpus-per-task=ncpus   number of cpus required per task
  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied
  -D, --chdir=directory       set working directory for batch script
  -e, --error=err             file for batch script's standard error
  -H, --hold                  submit job in held state
  -J, --job-name=jobname      name of job
  -n, --ntasks=ntasks         number of tasks to run
      --nice[=value]          decrease scheduling priority by value
      --ntasks-per-node=n     number of tasks to invoke on each node
  -N, --nodes=N               number of nodes on which to run (N = min[-max])
  -o, --output=out            file for batch script's standard output
  -p, --partition=partition   partition requested
  -q, --qos=qos               quality of service
  -t, --time=minutes          time limit
  -W, --wait                  wait for completion of submitted job
      --wrap[=command string] wrap command string in a sh script and submit

GPU scheduling options:
      --cpus-per-gpu=n        number of CPUs required per allocated GPU
  -G, --gpus=n                count of GPUs required for the job
      --gpus-per-node=n       number of GPUs required per allocated node
      --gpus-per-task=n       number of GPUs required per spawned task
      --mem-per-gpu=n         real memory required per allocated GPU

Help options:
  -h, --help                  show this help message
      --usage                 display brief usage message

Other options:
  -V, --version               output version information and exit

"""


def usage_text(prog: str) -> str:
    """``--usage`` output."""
    return _USAGE.get(prog, _USAGE["sbatch"])


def help_text(prog: str) -> str:
    """``--help`` output (abridged)."""
    head = {
        "sbatch": "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n",
        "srun": "Usage: srun [OPTIONS(0)... [executable(0) [args(0)...]]] "
                "[ : [OPTIONS(N)...]] executable(N) [args(N)...]\n",
        "salloc": "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n",
    }
    return head.get(prog, head["sbatch"]) + _HELP_BODY
