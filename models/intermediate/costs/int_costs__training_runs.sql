-- grain: one row per training run (run_key)
{#-
    The true cost of a training run across its attempts (retries after spot reclaims, requeues,
    failures). A run is a run_key whose attempts include training work; team and project are its
    first attempt's. interruption_overhead_pct = 100 x interrupted_attempts_cost /
    completed_attempt_cost: what the interruptions added on top of the attempt that finished; null
    while no attempt has completed (or the completed attempts cost nothing). energy_kwh,
    carbon_kg_co2e and carbon_fallback_energy_kwh sum the attempts' (int_costs__jobs). Where the run
    reports the tokens or samples it trained on (business training_runs.csv; a run reported again keeps
    its largest counts, which only grow), its cost, energy and carbon are also given per billion tokens
    and per million samples.
#}

with

job_costs as (
    select * from {{ ref('int_costs__jobs') }}
),

training_runs as (
    select distinct run_key
    from job_costs
    where workload_class = 'training'
),

attempts as (
    select
        job_costs.*,
        row_number() over (partition by job_costs.run_key order by job_costs.attempt, job_costs.job_key)
            as attempt_order
    from job_costs
    inner join training_runs
        on job_costs.run_key = training_runs.run_key
),

reported_work as (
    select
        run_id,
        max(tokens_processed) as tokens_processed,
        max(samples_processed) as samples_processed
    from {{ ref('stg_business__training_runs') }}
    group by run_id
),

first_attempts as (
    select
        run_key,
        team,
        project
    from attempts
    where attempt_order = 1
),

runs as (
    select
        run_key,
        count(*) as attempts,
        count(case when end_reason = 'interrupted' then 1 end) as interrupted_attempts,
        count(case when end_reason = 'completed' then 1 end) > 0 as completed,
        sum(case when end_reason = 'completed' then cost else 0 end) as completed_attempt_cost,
        sum(case when end_reason = 'interrupted' then cost else 0 end) as interrupted_attempts_cost,
        sum(cost) as true_cost,
        {{ exact_sum('energy_kwh') }} as energy_kwh,
        {{ exact_sum('carbon_kg_co2e') }} as carbon_kg_co2e,
        {{ exact_sum('carbon_fallback_energy_kwh') }} as carbon_fallback_energy_kwh,
        min(started_at) as first_started_at,
        -- a run with an attempt still running or waiting has not ended
        case when count(*) = count(ended_at) then max(ended_at) end as last_ended_at
    from attempts
    group by run_key
),

final as (
    select
        -- ids
        runs.run_key,
        -- dimensions
        first_attempts.team,
        first_attempts.project,
        -- counts
        cast(runs.attempts as integer) as attempts,
        cast(runs.interrupted_attempts as integer) as interrupted_attempts,
        runs.completed,
        -- money
        {{ money('runs.completed_attempt_cost') }} as completed_attempt_cost,
        {{ money('runs.interrupted_attempts_cost') }} as interrupted_attempts_cost,
        {{ money('runs.true_cost') }} as true_cost,
        cast(
            case
                when runs.completed
                    then
                        100 * cast(runs.interrupted_attempts_cost as double)
                        / nullif(cast(runs.completed_attempt_cost as double), 0)
            end as double
        ) as interruption_overhead_pct,
        -- energy and carbon
        cast(runs.energy_kwh as double) as energy_kwh,
        cast(runs.carbon_kg_co2e as double) as carbon_kg_co2e,
        cast(runs.carbon_fallback_energy_kwh as double) as carbon_fallback_energy_kwh,
        -- work done, and per unit of it
        cast(reported_work.tokens_processed as bigint) as tokens_processed,
        cast(reported_work.samples_processed as bigint) as samples_processed,
        {{ money('runs.true_cost * 1e9 / nullif(reported_work.tokens_processed, 0)') }} as cost_per_billion_tokens,
        cast(runs.energy_kwh * 1e9 / nullif(reported_work.tokens_processed, 0) as double)
            as energy_kwh_per_billion_tokens,
        cast(runs.carbon_kg_co2e * 1e9 / nullif(reported_work.tokens_processed, 0) as double)
            as carbon_kg_co2e_per_billion_tokens,
        {{ money('runs.true_cost * 1e6 / nullif(reported_work.samples_processed, 0)') }} as cost_per_million_samples,
        cast(runs.energy_kwh * 1e6 / nullif(reported_work.samples_processed, 0) as double)
            as energy_kwh_per_million_samples,
        cast(runs.carbon_kg_co2e * 1e6 / nullif(reported_work.samples_processed, 0) as double)
            as carbon_kg_co2e_per_million_samples,
        -- timestamps
        runs.first_started_at,
        runs.last_ended_at
    from runs
    inner join first_attempts
        on runs.run_key = first_attempts.run_key
    left join reported_work
        on runs.run_key = reported_work.run_id
)

select * from final
