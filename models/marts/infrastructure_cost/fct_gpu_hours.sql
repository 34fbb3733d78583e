-- grain: one row per gpu_id per clock hour
{#-
    Incremental by day (materialization day_batches over int_attribution__gpu_hours): a build
    rewrites the days that model rewrote and the days after the newest held; a change in the
    inventory's columns read here rebuilds it whole.
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='hour_start',
        batch_input='int_attribution__gpu_hours',
        batch_reopen_inputs={
            'int_inventory__gpus': {'columns': ['gpu_id', 'is_unknown_accelerator']},
        },
        batch_rows=var('telemetry_batch_samples'),
        on_schema_change='append_new_columns',
    )
}}

with

-- within a batch, the batch's days only
gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
    where {{ batch_window('hour_start') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

final as (
    select
        -- ids
        gpu_hours.gpu_id,
        gpu_hours.instance_id,
        gpu_hours.provider,
        gpu_hours.account_id,
        gpu_hours.commitment_id,
        -- dimensions
        gpu_hours.pricing_category,
        gpu_hours.owner_team,
        gpu_hours.owner_project,
        gpu_hours.is_monitored,
        coalesce(gpus.is_unknown_accelerator, true) as is_unknown_accelerator,
        gpu_hours.is_billed,
        -- usage
        gpu_hours.provisioned_seconds,
        gpu_hours.telemetry_seconds,
        gpu_hours.busy_gpu_hours,
        gpu_hours.avg_gpu_util_pct,
        gpu_hours.max_fb_used_mib,
        gpu_hours.energy_kwh,
        -- money
        {{ money('gpu_hours.effective_cost') }} as effective_cost,
        {{ money('gpu_hours.billed_cost') }} as billed_cost,
        {{ money('gpu_hours.list_cost') }} as list_cost,
        {{ money('gpu_hours.depreciation_cost') }} as depreciation_cost,
        {{ money('gpu_hours.power_cost') }} as power_cost,
        {{ money('gpu_hours.facility_cost') }} as facility_cost,
        {{ money('gpu_hours.staff_cost') }} as staff_cost,
        -- timestamps
        gpu_hours.hour_start
    from gpu_hours
    left join gpus
        on gpu_hours.gpu_id = gpus.gpu_id
)

select * from final
