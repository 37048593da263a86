"""Item types, one module each: choice, numeric (+ units), text, sbatch, scheduler."""
