-- grain: one row per job attempt × GPU (× MIG instance) × interval it held it
{#-
    Which GPUs a job attempt held, from the most precise evidence (interface §5):
    1. dcgm_labels: DCGM series whose labels name the attempt (int_workloads__job_labelled_gpus, with a
       generic-CSV job's own gpu_uuids).
    2. scheduler_spread: when no series names the attempt, its allocation is spread over its nodes:
       a node gets gpus_allocated / nodes GPUs (N), spread evenly over the node's M GPUs, share N / M
       on each (a MIG request counts its slices' g/G (G = its GPU's compute slices, 7 or 4 on an A30)). M and the GPU ids come from the GPUs DCGM saw
       on the node during the attempt, else the node's GPU count (ids `<instance_id>:<index>`, or
       `<hostname>:<index>` where only the host is known), else N itself. A host the scheduler names
       but no pod node gives (a Slurm node) is looked up in the machines by its short name
       (int_inventory__machines: an on-prem asset of that hostname gives its asset id and GPU count),
       so a job on a server without DCGM is charged on that server's GPUs.
    Start and end are the scheduler's (not sample times); an attempt still running holds its GPUs
    to the end of the observation window (int_workloads__job_holds).
#}
with holds as (
    select * from {{ ref('int_workloads__job_holds') }}
),

labelled_intervals as (
    select * from {{ ref('int_workloads__job_labelled_gpus') }}
),

consumers as (
    select * from {{ ref('int_workloads__dcgm_gpu_consumers') }}
),

machines as (
    select * from {{ ref('int_inventory__machines') }}
),

named_machines as (
    select
        short_host_key,
        max(instance_id) as instance_id,
        max(gpu_count) as gpu_count
    from machines
    group by 1
    having count(*) = 1
),

unlabelled as (
    select holds.*
    from holds
    where
        holds.job_key not in (select labelled_intervals.job_key from labelled_intervals)
        and holds.gpus_allocated > 0
        and holds.host_count > 0
),

unlabelled_host_rows as (
    select
        unlabelled.job_key,
        unlabelled.instance_id,
        unlabelled.node_gpu_count,
        unlabelled.started_at,
        unlabelled.held_until,
        host.hostname,
        unlabelled.gpus_allocated * unlabelled.slice_share / unlabelled.host_count as gpus_on_host
    from unlabelled,
        {{ unnest_rows('unlabelled.hostnames', 'host', 'hostname') }}
),

unlabelled_hosts as (
    select
        unlabelled_host_rows.job_key,
        coalesce(unlabelled_host_rows.instance_id, named_machines.instance_id) as instance_id,
        coalesce(unlabelled_host_rows.node_gpu_count, named_machines.gpu_count) as node_gpu_count,
        unlabelled_host_rows.started_at,
        unlabelled_host_rows.held_until,
        unlabelled_host_rows.hostname,
        unlabelled_host_rows.gpus_on_host
    from unlabelled_host_rows
    left join named_machines
        on
            unlabelled_host_rows.instance_id is null
            and lower({{ dbt.split_part('unlabelled_host_rows.hostname', "'.'", 1) }})
            = named_machines.short_host_key
),

host_dcgm_gpus as (
    select distinct
        unlabelled_hosts.job_key,
        unlabelled_hosts.hostname,
        consumers.gpu_uuid
    from unlabelled_hosts
    inner join consumers
        on
            unlabelled_hosts.hostname = consumers.hostname
            and consumers.gpu_uuid is not null
            and (consumers.first_sample_at is null or unlabelled_hosts.held_until > consumers.first_sample_at)
            and (consumers.last_sample_at is null or unlabelled_hosts.started_at <= consumers.last_sample_at)
),

host_gpu_counts as (
    select
        unlabelled_hosts.job_key,
        unlabelled_hosts.hostname,
        count(host_dcgm_gpus.gpu_uuid) as dcgm_gpu_count
    from unlabelled_hosts
    left join host_dcgm_gpus
        on
            unlabelled_hosts.job_key = host_dcgm_gpus.job_key
            and unlabelled_hosts.hostname = host_dcgm_gpus.hostname
    group by 1, 2
),

spread_known_gpus as (
    select
        unlabelled_hosts.job_key,
        host_dcgm_gpus.gpu_uuid,
        unlabelled_hosts.hostname,
        unlabelled_hosts.gpus_on_host / host_gpu_counts.dcgm_gpu_count as share,
        unlabelled_hosts.started_at,
        unlabelled_hosts.held_until
    from unlabelled_hosts
    inner join host_gpu_counts
        on
            unlabelled_hosts.job_key = host_gpu_counts.job_key
            and unlabelled_hosts.hostname = host_gpu_counts.hostname
    inner join host_dcgm_gpus
        on
            unlabelled_hosts.job_key = host_dcgm_gpus.job_key
            and unlabelled_hosts.hostname = host_dcgm_gpus.hostname
    where host_gpu_counts.dcgm_gpu_count > 0
),

spread_unknown_hosts as (
    select
        unlabelled_hosts.*,
        cast(greatest(
            coalesce(unlabelled_hosts.node_gpu_count, 0),
            ceil(unlabelled_hosts.gpus_on_host),
            1
        ) as bigint) as assumed_gpu_count
    from unlabelled_hosts
    inner join host_gpu_counts
        on
            unlabelled_hosts.job_key = host_gpu_counts.job_key
            and unlabelled_hosts.hostname = host_gpu_counts.hostname
    where host_gpu_counts.dcgm_gpu_count = 0
),

spread_assumed_gpus as (
    select
        spread_unknown_hosts.job_key,
        coalesce(spread_unknown_hosts.instance_id, spread_unknown_hosts.hostname) || ':' || cast(gpu_slot.i as string)
            as gpu_uuid,
        spread_unknown_hosts.hostname,
        spread_unknown_hosts.gpus_on_host / spread_unknown_hosts.assumed_gpu_count as share,
        spread_unknown_hosts.started_at,
        spread_unknown_hosts.held_until
    from spread_unknown_hosts,
        {{ integer_rows('spread_unknown_hosts.assumed_gpu_count', 'gpu_slot', 'i') }}
),

spread_intervals as (
    select
        job_key,
        gpu_uuid,
        hostname,
        cast(null as integer) as mig_instance_id,
        cast(null as string) as mig_profile,
        cast(share as double) as share,
        started_at,
        held_until as ended_at,
        'scheduler_spread' as evidence
    from (
        select * from spread_known_gpus
        union all
        select * from spread_assumed_gpus
    ) as spread
),

final as (
    select
        job_key,
        gpu_uuid,
        hostname,
        mig_instance_id,
        mig_profile,
        share,
        started_at,
        ended_at,
        evidence
    from labelled_intervals
    union all
    select * from spread_intervals
)

select * from final
