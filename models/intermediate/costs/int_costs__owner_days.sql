-- grain: one row per UTC day x team x project x workload_class x environment
{#-
    Showback and chargeback: each day's GPU cost by who consumed it. Job rows come from the job
    attempts' GPU-hours (int_costs__job_gpu_hours) under their team, project, workload class and
    environment. Idle (what no job held, int_attribution__allocations) follows `idle_cost_policy`:
    - own_consumer (default): idle is its own line, workload_class 'idle', under the machine's
      team / project / environment tags; shared_idle_cost is 0.
    - share: each day's idle cost is spread over that day's job rows in proportion to their cost
      and shown in shared_idle_cost (as Kubecost shares idle); a day without job cost keeps its
      idle rows.
    Either way Σ total_cost over a day's rows = the day's GPU cost.
#}

{%- set policy = var('idle_cost_policy') -%}
{%- if policy not in ['own_consumer', 'share'] -%}
    {{ exceptions.raise_compiler_error(
        "idle_cost_policy must be own_consumer or share, not '" ~ policy ~ "'"
    ) }}
{%- endif %}

with

job_gpu_hours as (
    select * from {{ ref('int_costs__job_gpu_hours') }}
),

jobs as (
    select * from {{ ref('int_workloads__jobs') }}
),

idle_allocations as (
    select * from {{ ref('int_attribution__allocations') }}
    where consumer_type = 'idle'
),

job_days as (
    select
        {{ utc_date('job_gpu_hours.hour_start') }} as day,
        jobs.team,
        jobs.project,
        jobs.workload_class,
        jobs.environment,
        'job' as consumer_type,
        {{ exact_sum('job_gpu_hours.gpu_hours') }} as gpu_hours,
        {{ exact_sum('job_gpu_hours.busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('job_gpu_hours.cost') }} as cost
    from job_gpu_hours
    inner join jobs
        on job_gpu_hours.job_key = jobs.job_key
    group by 1, 2, 3, 4, 5
),

-- idle's GPU-hours: the provisioned GPU-hours no job held (int_attribution__allocations.held_gpu_hours)
idle_days as (
    select
        {{ utc_date('hour_start') }} as day,
        team,
        project,
        'idle' as workload_class,
        environment,
        'idle' as consumer_type,
        {{ exact_sum('held_gpu_hours') }} as gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('cost') }} as cost
    from idle_allocations
    group by 1, 2, 3, 4, 5
),

consumer_days as (
    select * from job_days
    union all
    select * from idle_days
),

{%- if policy == 'share' %}

day_totals as (
    select
        day,
        {{ exact_sum("case when consumer_type = 'job' then cost else 0 end") }} as job_cost,
        {{ exact_sum("case when consumer_type = 'idle' then cost else 0 end") }} as idle_cost
    from consumer_days
    group by day
),
{%- endif %}

shared as (
    select
        consumer_days.day,
        consumer_days.team,
        consumer_days.project,
        consumer_days.workload_class,
        consumer_days.environment,
        consumer_days.gpu_hours,
        consumer_days.busy_gpu_hours,
        consumer_days.cost,
    {%- if policy == 'share' %}
        case
            when consumer_days.consumer_type = 'job' and day_totals.job_cost > 0
                then day_totals.idle_cost * consumer_days.cost / day_totals.job_cost
            else 0
        end as shared_idle_cost
    from consumer_days
    inner join day_totals
        on consumer_days.day = day_totals.day
    -- idle is carried by the jobs, except on a day without job cost
    where consumer_days.consumer_type = 'job' or day_totals.job_cost <= 0
{%- else %}
    0 as shared_idle_cost
from consumer_days
    {%- endif %}
),

final as (
    select
        -- dimensions
        day,
        team,
        project,
        workload_class,
        environment,
        -- usage
        cast(gpu_hours as double) as gpu_hours,
        cast(busy_gpu_hours as double) as busy_gpu_hours,
        -- money
        {{ money('cost') }} as cost,
        {{ money('shared_idle_cost') }} as shared_idle_cost,
        {{ money('cost + shared_idle_cost') }} as total_cost
    from shared
)

select * from final
