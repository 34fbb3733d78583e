-- grain: one row per gpu_id per clock hour whose holders' sharing nothing says
{#
    GPU-hours whose split among their holders rests on no declared or measured share (interface §5:
    a GPU whose sharing is unknown says so, it never silently becomes exclusive). Their cost is split
    as int_attribution__allocations splits it (by the time each holder held the GPU); this mart says
    where that split is a guess, and why:
    - claim_share_unknown: a holder is a pod whose DRA claims were never seen (it ran between two
      claims snapshots) and nothing else says what they hold (sharing_mode dra): it is charged a GPU
      of its node per claim;
    - undeclared_overlap: several jobs, each said to hold the GPU alone (exclusive), held it at once
      for more than the hour;
    - no_declared_share: several jobs shared it (time-slicing, MPS, a vGPU guest) and at least one
      declared no share, so the hour was split equally by time held.
#}
with

allocations as (
    select * from {{ ref('int_attribution__allocations') }}
    where consumer_type = 'job'
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

holders as (
    select
        allocations.gpu_id,
        allocations.hour_start,
        allocations.job_key,
        allocations.sharing_mode,
        allocations.split_basis,
        allocations.share * allocations.allocated_seconds as held_seconds,
        allocations.cost,
        jobs.is_share_declared
    from allocations
    inner join jobs
        on allocations.job_key = jobs.job_key
),

gpu_hour_holders as (
    select
        gpu_id,
        hour_start,
        cast(count(distinct job_key) as integer) as holders,
        cast(count(distinct case
            when sharing_mode = 'dra' or (sharing_mode <> 'mig' and not is_share_declared) then job_key
        end) as integer) as undeclared_holders,
        max(case when sharing_mode = 'dra' then 1 else 0 end) = 1 as has_unknown_claim,
        min(case when sharing_mode = 'exclusive' then 1 else 0 end) = 1 as is_all_exclusive,
        max(split_basis) as split_basis,
        sum(held_seconds) / 3600.0 as held_gpu_hours,
        sum(cost) as cost
    from holders
    group by gpu_id, hour_start
),

final as (
    select
        -- ids
        gpu_id,
        -- dimensions
        case
            when has_unknown_claim then 'claim_share_unknown'
            when is_all_exclusive then 'undeclared_overlap'
            else 'no_declared_share'
        end as reason,
        -- numerics
        holders,
        undeclared_holders,
        cast(held_gpu_hours as double) as held_gpu_hours,
        {{ money('cost') }} as cost,
        -- timestamps
        hour_start
    from gpu_hour_holders
    where
        has_unknown_claim
        or (
            holders > 1
            and split_basis = 'equal'
            and undeclared_holders > 0
            and (not is_all_exclusive or held_gpu_hours > 1.001)
        )
)

select * from final
