"""Scheduler formats: who ran what, where and when (Slurm sacct, Kubernetes snapshots, a generic CSV)."""

from gpu_ledger.ingest.formats.schedulers import jobs_csv, kubernetes, kubernetes_claims, slurm_sacct

FORMATS = (slurm_sacct.FORMAT, kubernetes.PODS, kubernetes.NODES, kubernetes_claims.FORMAT, jobs_csv.FORMAT)
