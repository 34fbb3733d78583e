-- grain: one row per gpu_id per clock hour
with

gpu_hours as (
    select * from {{ ref('int_attribution__gpu_hours') }}
),

final as (
    select
        -- ids
        gpu_id,
        instance_id,
        provider,
        account_id,
        commitment_id,
        -- dimensions
        pricing_category,
        owner_team,
        owner_project,
        is_monitored,
        is_billed,
        -- usage
        provisioned_seconds,
        telemetry_seconds,
        busy_gpu_hours,
        avg_gpu_util_pct,
        max_fb_used_mib,
        energy_kwh,
        -- money
        {{ money('effective_cost') }} as effective_cost,
        {{ money('billed_cost') }} as billed_cost,
        {{ money('list_cost') }} as list_cost,
        {{ money('depreciation_cost') }} as depreciation_cost,
        {{ money('power_cost') }} as power_cost,
        {{ money('facility_cost') }} as facility_cost,
        {{ money('staff_cost') }} as staff_cost,
        -- timestamps
        hour_start
    from gpu_hours
)

select * from final
