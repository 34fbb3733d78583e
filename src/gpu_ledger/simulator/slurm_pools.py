"""The on-prem Slurm partitions of whole GPUs: multi-node training, batch, arrays, interactive work and
every end state, each request placed greedily at the earliest time enough GPUs are free."""

from __future__ import annotations

import numpy as np

from gpu_ledger.simulator.builder import HOUR, FleetBuilder, Instance, k8s_labels
from gpu_ledger.simulator.fleet import Pool
from gpu_ledger.simulator.org import PROJECTS, SLURM_ACCOUNTS, TEAMS, UIDS, UNALLOCATED, cost_centre


def slurm_cluster(b: FleetBuilder, pool: Pool, nodes: int) -> None:
    """On-prem Slurm partition: multi-node training, batch, arrays, interactive, every end state."""
    hosts = [b.launch(pool, b.t0, None, "running") for _ in range(nodes)]
    free = np.full((nodes, 8), b.t0, dtype=np.int64)  # per node, per GPU: free from
    requests = _slurm_requests(b, pool, nodes)
    for req in sorted(requests, key=lambda r: r["submit"]):
        _schedule(b, pool, hosts, free, req)


def _slurm_requests(b: FleetBuilder, pool: Pool, nodes: int) -> list[dict]:
    reqs: list[dict] = []

    def add(**r) -> None:
        r.setdefault("array", None)
        r.setdefault("requeue_at", None)
        reqs.append(r)

    if pool.role == "slurm_training":
        per_job = min(4, max(2, nodes // 4))
        # each account trains once a week: nlp on Mondays, climate on Thursdays
        outcomes = ("requeued", "completed", "timeout", "completed")
        for account, weekday in (("nlp", 0), ("climate", 3)):
            for n, t in enumerate(b.weekdays_at((weekday,), 7.0)):
                add(
                    account=account,
                    submit=t + int(b.rng.integers(0, 7200)),
                    nodes=per_job,
                    gpus=8,
                    hours=float(b.rng.uniform(8, 30)),
                    limit_h=36,
                    outcome=outcomes[(n + weekday) % len(outcomes)],
                    behaviour="training",
                    level=float(b.rng.uniform(0.85, 0.95)),
                    fb=74000,
                    name=f"{account}-train",
                )
        rate_per_h = max(0.5, nodes * 0.15)
    else:
        rate_per_h = max(0.5, nodes * 0.3)
        for t in b.weekdays_at((1, 3), 13.0):
            tasks = int(b.rng.integers(6, 13))
            add(
                account="vision",
                submit=t,
                nodes=1,
                gpus=1,
                hours=float(b.rng.uniform(1, 3)),
                limit_h=4,
                outcome="completed",
                behaviour="batch",
                level=0.7,
                fb=22000,
                name="sweep-lr",
                array=tasks,
            )
        for t in b.weekdays_at((0, 1, 2, 3, 4), 9.5):
            add(
                account="bio",
                submit=t + int(b.rng.integers(0, 3600)),
                nodes=1,
                gpus=1,
                hours=6.0,
                limit_h=8,
                outcome="completed",
                behaviour="interactive",
                level=0.3,
                fb=15000,
                name="interactive",
            )
    # a steady stream of batch jobs with every end state
    t = b.t0
    outcomes = ["completed"] * 14 + ["failed", "cancelled", "timeout", "out_of_memory"]
    accounts = ("bio", "climate", "vision", "nlp", "guest")
    while True:
        t += int(b.rng.exponential(HOUR / rate_per_h))
        if t >= b.t1:
            break
        hours = float(b.rng.lognormal(np.log(3), 0.7))
        add(
            account=str(b.rng.choice(accounts, p=(0.3, 0.25, 0.2, 0.15, 0.1))),
            submit=t,
            nodes=1,
            gpus=int(b.rng.choice((1, 2, 4, 8), p=(0.4, 0.3, 0.2, 0.1))),
            hours=min(hours, 30),
            limit_h=24,
            outcome=str(b.rng.choice(outcomes)),
            behaviour="batch",
            level=float(b.rng.uniform(0.45, 0.85)),
            fb=int(b.rng.integers(8000, 60000)),
            name=str(b.rng.choice(("train.sh", "infer_batch", "md-sim", "preprocess", "eval|ablation"))),
        )
    # work submitted near the end that will still be pending
    for k in range(3):
        add(
            account="climate",
            submit=b.t1 - (k + 1) * 900,
            nodes=nodes,
            gpus=8,
            hours=12,
            limit_h=24,
            outcome="completed",
            behaviour="training",
            level=0.9,
            fb=70000,
            name="ensemble-full",
        )
    return reqs


def _schedule(b: FleetBuilder, pool: Pool, hosts: list[Instance], free: np.ndarray, req: dict) -> None:
    """Place one request greedily at the earliest time enough GPUs are free; record its attempts."""
    account = req["account"]
    project = SLURM_ACCOUNTS[account]
    team = PROJECTS[project] if project else UNALLOCATED
    owner_team = team if team != UNALLOCATED else "platform"
    user = str(b.rng.choice(TEAMS[owner_team].users))
    tasks = req["array"] or 1
    interactive = req["behaviour"] == "interactive"
    workload = "development" if interactive else ("training" if req["behaviour"] == "training" else "batch")
    environment = "development" if interactive else "production"
    b.slurm_job_id += 1
    array_parent = b.slurm_job_id
    if req["array"]:
        b.slurm_job_id += tasks
    for task in range(tasks):
        if req["array"]:
            job_id = f"{array_parent}_{task + 1}"
            raw = str(array_parent if task == tasks - 1 else array_parent + task + 1)
        else:
            job_id = raw = str(array_parent)
        submit = req["submit"]
        attempt = 0
        queue_t = submit
        while True:
            attempt += 1
            node_avail = np.sort(free, axis=1)  # per node, when the k-th GPU frees up
            if req["nodes"] > 1:
                ready = node_avail[:, -1]
                chosen = np.argsort(ready, kind="stable")[: req["nodes"]]
                start = max(queue_t, int(ready[chosen].max()))
            else:
                ready = node_avail[:, req["gpus"] - 1]
                chosen = np.array([int(np.argmin(ready))])
                start = max(queue_t, int(ready[chosen[0]]))
            start += 5
            # Slurm sites carry the project in the WCKey and the workload in the job comment
            common = dict(
                labels=k8s_labels(None, project, None, workload, environment, None) if project else [],
                scheduler="slurm",
                cluster=pool.cluster,
                job_id=job_id,
                job_id_raw=raw,
                name=req["name"],
                user=user,
                slurm_account=account,
                partition=pool.name,
                team=team,
                project=project or UNALLOCATED,
                cost_centre=cost_centre(team),
                workload_class=workload,
                environment=environment,
                capacity_type="owned",
                # a Slurm job is one run across its requeues
                run_id=job_id if workload == "training" else None,
                attempt=attempt,
                submitted_at=submit if attempt == 1 else queue_t,
                gpus_allocated=req["gpus"] * req["nodes"],
                gpu_model=hosts[0].row["gpu_model"],
                time_limit_min=int(req["limit_h"] * 60),
                cpus=28 * req["gpus"] * req["nodes"],
                mem_mb=240_000 * req["gpus"] * req["nodes"],
            )
            key = f"slurm:{pool.cluster}:{job_id}"
            if start >= b.t1:
                b.add_job(
                    **common,
                    job_key=key,
                    started_at=None,
                    ended_at=None,
                    state="PENDING",
                    end_reason="pending",
                    exit_code="0:0",
                    hostnames=[],
                )
                break
            run_s = int(req["hours"] * HOUR)
            limit_s = int(req["limit_h"] * HOUR)
            outcome = req["outcome"]
            if outcome == "requeued" and attempt == 1:
                duration, state, end_reason, exit_code = int(run_s * 0.4), "NODE_FAIL", "interrupted", "0:0"
            elif outcome == "requeued":
                duration, state, end_reason, exit_code = int(run_s * 0.65), "COMPLETED", "completed", "0:0"
            elif outcome == "timeout" or run_s > limit_s:
                duration, state, end_reason, exit_code = limit_s, "TIMEOUT", "timeout", "0:0"
            elif outcome == "failed":
                duration, state, end_reason, exit_code = int(run_s * 0.3), "FAILED", "failed", "1:0"
            elif outcome == "out_of_memory":
                duration, state, end_reason, exit_code = int(run_s * 0.2), "OUT_OF_MEMORY", "failed", "0:125"
            elif outcome == "cancelled":
                duration, end_reason, exit_code = int(run_s * 0.5), "cancelled", "0:0"
                state = f"CANCELLED by {UIDS[user]}"
            else:
                duration, state, end_reason, exit_code = run_s, "COMPLETED", "completed", "0:0"
            end = start + max(duration, 60)
            requeues = outcome == "requeued" and attempt == 1 and end < b.t1
            # attempts of a requeued job are told apart by their number
            job_key = f"{key}:{attempt}" if attempt > 1 or requeues else key
            hostnames, gpu_pick = [], []
            for node in chosen:
                order = np.argsort(free[node], kind="stable")[: req["gpus"]]
                gpu_pick.append((node, order))
                hostnames.append(hosts[node].row["hostname"])
                free[node, order] = end
            ended = b.clip(end)
            if ended is None:
                state, end_reason = "RUNNING", "running"
            b.add_job(
                **common,
                job_key=job_key,
                started_at=start,
                ended_at=ended,
                state=state,
                end_reason=end_reason,
                exit_code=exit_code,
                hostnames=hostnames,
            )
            for node, order in gpu_pick:
                for gpu in order:
                    b.allocate(
                        job_key,
                        hosts[node].gpu_uuids[int(gpu)],
                        None,
                        start,
                        end,
                        req["behaviour"],
                        req["level"],
                        req["fb"],
                    )
            if requeues:
                queue_t = end + 60
                continue
            break
