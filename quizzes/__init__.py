"""Quiz engine and question banks for the minislurm course."""
