"""Integration tests against real upstream components (a real Slurm cluster with accounting, ...)."""
