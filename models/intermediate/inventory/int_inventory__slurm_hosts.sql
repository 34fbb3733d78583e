-- grain: one row per Slurm host (short_host_key: its name before the first dot, lower case)
{#-
    The hosts Slurm jobs ran on (sacct NodeList, expanded), with the Slurm cluster and the span of the
    jobs: a GPU on such a host belongs to that cluster, and an on-prem asset of that name was in use
    from the first job's start to the last job's end. Slurm names nodes short; DCGM may report the FQDN.
#}
with slurm_jobs as (
    select * from {{ ref('stg_slurm__sacct') }}
),

job_hosts as (
    select
        slurm_jobs.cluster,
        slurm_jobs.started_at,
        slurm_jobs.ended_at,
        job_host.host
    from slurm_jobs,
        {{ unnest_rows('slurm_jobs.node_names', 'job_host', 'host') }}
),

final as (
    select
        lower({{ dbt.split_part('host', "'.'", 1) }}) as short_host_key,
        max(cluster) as slurm_cluster,
        min(started_at) as first_seen_at,
        max(coalesce(ended_at, started_at)) as last_seen_at
    from job_hosts
    where host is not null
    group by lower({{ dbt.split_part('host', "'.'", 1) }})
)

select * from final
