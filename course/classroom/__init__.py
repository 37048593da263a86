"""Running a class: a real JupyterHub with one JupyterLab and one minislurm cluster per learner.

``python -m course class up --config class.yaml`` (``down``, ``status``, ``passwd``,
``up --demo``).  Modules: :mod:`.config` (class.yaml), :mod:`.passwords` (the
hashed password file), :mod:`.hubauth` (the JupyterHub authenticator over it),
:mod:`.hubconfig` (the generated ``jupyterhub_config.py``), :mod:`.image` (what a
learner's server may see: the course without answer material), :mod:`.singleuser`
(a learner's server: cluster up, JupyterLab, cluster down), :mod:`.deploy`
(up/down/status), :mod:`.cli`.  See docs/classroom.md.
"""
