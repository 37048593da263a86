"""What every part of minislurm shares, like Slurm's ``src/common``.

Pure parsers and small models with no clock and no controller; every layer
above may import them, they import only `minislurm.errors` and each other:

* `minislurm.common.hostlist` -- ``hostlist.c``: ``n[1-4]`` ranges;
* `minislurm.common.timespec` -- ``parse_time.c``: ``--time``, ``--begin``, dates;
* `minislurm.common.jobarray` -- ``--array`` (slurmctld's ``_valid_array_inx``);
* `minislurm.common.filenames` -- ``-o/-e/-i`` patterns (``src/slurmd/common/fname.c``);
* `minislurm.common.gres` -- ``gres.c``: ``--gres`` and a node's ``Gres=``;
* `minislurm.common.layout` -- ``slurm_step_layout.c``: which task runs on which node;
* `minislurm.common.billing` -- ``TRESBillingWeights`` (``assoc_mgr_tres_weighted``);
* `minislurm.common.accounts` -- associations and QOS (``assoc_mgr.c``'s cache of slurmdbd);
* `minislurm.common.jobacct` -- ``slurm_jobacct_gather.c`` / jobacct_gather/linux usage;
* `minislurm.common.rpc` -- ``slurm_protocol_api.c``: the wire between commands and daemons;
* `minislurm.common.wire` -- the wire's limits, without the server side (a command's quick path).

The package imports none of them itself, so a forwarded command that needs only
`minislurm.common.wire` stays fast.
"""
