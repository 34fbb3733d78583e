"""Telling GPU owners what their GPUs cost and what to do (issue 32).

`job_report.job_report` writes one job's priced efficiency report; `send.notify` sends each owner of
`owners.yml` (`config`) a digest of a period (`digest`) by email and webhooks (`channels`), once per
fact (`state`); `mailprog` queues the jobs Slurm's end-of-job mail names and sends each its report
once it is in the warehouse. Everything reads the published warehouse read-only.
"""
