-- grain: one row per gpu_id per clock hour its machine was billed or its telemetry observed
{#-
    What each GPU-hour cost and how it was used. A cloud GPU-hour carries its instance-hour's
    amortised cost divided by the instance's GPUs (its bill's or catalogue's count; for an accelerator
    whose count is unknown, the GPUs the inventory holds for it: those DCGM sees, else one
    placeholder); an on-prem GPU-hour carries its share of the
    asset's depreciation, facility and staff cost plus its own power: the GPU's DCGM energy in the
    hour x the site's PUE x its electricity price. Hours observed without any bill (no billing
    source loaded) keep their usage at zero cost, flagged `is_billed = false`.
    Incremental by day (materialization day_batches over int_telemetry__gpu_hours): an hour's row
    needs that hour's telemetry and instance-hour, and the inventory and asset register whole. A
    build rewrites the days the GPU-hours rewrote, the days whose instance-hours changed (a restated
    bill re-opens the days it restates), and the days after the newest held, of telemetry or of
    bills; a change in the inventory's or the assets' columns read here rebuilds it whole.
#}
{{
    config(
        materialized=incremental_materialization(),
        batch_time_column='hour_start',
        batch_input='int_telemetry__gpu_hours',
        batch_reopen_inputs={
            'int_billing__gpu_instance_hours': {'day': utc_date('hour_start')},
            'int_inventory__gpus': {'columns': [
                'gpu_id', 'provider', 'instance_id', 'account_id', 'asset_id', 'is_monitored'
            ]},
            'stg_onprem__assets': {'columns': ['asset_id', 'pue', 'electricity_price_per_kwh']},
        },
        batch_rows=var('telemetry_batch_samples'),
        on_schema_change='append_new_columns',
    )
}}

with

-- within a batch, the batch's days only
instance_hours as (
    select * from {{ ref('int_billing__gpu_instance_hours') }}
    where {{ batch_window('hour_start') }}
),

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

telemetry as (
    select * from {{ ref('int_telemetry__gpu_hours') }}
    where mig_instance_id is null and {{ batch_window('hour_start') }}
),

assets as (
    select * from {{ ref('stg_onprem__assets') }}
),

instance_gpus as (
    select
        provider,
        lower(instance_id) as instance_key,
        count(*) as gpus
    from gpus
    where instance_id is not null
    group by provider, lower(instance_id)
),

instance_hours_split as (
    select
        instance_hours.*,
        coalesce(instance_hours.gpu_count, instance_gpus.gpus) as split_gpus
    from instance_hours
    left join instance_gpus
        on
            instance_hours.provider = instance_gpus.provider
            and lower(instance_hours.instance_id) = instance_gpus.instance_key
),

billed as (
    select
        gpus.gpu_id,
        instance_hours.hour_start,
        instance_hours.provider,
        {{ attribution_account_id(
            'instance_hours.provider', 'instance_hours.billing_account_id', 'instance_hours.sub_account_id'
        ) }} as account_id,
        instance_hours.instance_id,
        instance_hours.pricing_category,
        instance_hours.commitment_id,
        instance_hours.tag_team,
        instance_hours.tag_project,
        instance_hours.tag_environment,
        cast(instance_hours.usage_seconds as double) as provisioned_seconds,
        cast(instance_hours.effective_cost as double) / instance_hours.split_gpus as effective_cost,
        cast(instance_hours.billed_cost as double) / instance_hours.split_gpus as billed_cost,
        cast(instance_hours.list_cost as double) / instance_hours.split_gpus as list_cost,
        cast(instance_hours.depreciation_cost as double) / instance_hours.split_gpus as depreciation_cost,
        cast(instance_hours.facility_cost as double) / instance_hours.split_gpus as facility_cost,
        cast(instance_hours.staff_cost as double) / instance_hours.split_gpus as staff_cost
    from instance_hours_split as instance_hours
    inner join gpus
        on
            instance_hours.provider = gpus.provider
            and lower(instance_hours.instance_id) = lower(gpus.instance_id)
),

hours as (
    select
        coalesce(billed.gpu_id, telemetry.gpu_uuid) as gpu_id,
        coalesce(billed.hour_start, telemetry.hour_start) as hour_start,
        billed.provider,
        billed.account_id,
        billed.instance_id,
        billed.pricing_category,
        billed.commitment_id,
        billed.tag_team,
        billed.tag_project,
        billed.tag_environment,
        billed.provisioned_seconds,
        billed.effective_cost,
        billed.billed_cost,
        billed.list_cost,
        billed.depreciation_cost,
        billed.facility_cost,
        billed.staff_cost,
        telemetry.telemetry_seconds,
        telemetry.busy_gpu_hours,
        telemetry.avg_gpu_util_pct,
        telemetry.max_fb_used_mib,
        telemetry.energy_kwh,
        billed.gpu_id is not null as is_billed
    from billed
    full outer join telemetry
        on
            billed.gpu_id = telemetry.gpu_uuid
            and billed.hour_start = telemetry.hour_start
),

joined as (
    select
        hours.*,
        coalesce(hours.instance_id, gpus.instance_id) as gpu_instance_id,
        coalesce(hours.provider, gpus.provider) as gpu_provider,
        coalesce(hours.account_id, gpus.account_id) as gpu_account_id,
        gpus.is_monitored,
        case
            when coalesce(hours.provider, gpus.provider) = 'onprem' and hours.is_billed
                then coalesce(hours.energy_kwh, 0) * assets.pue * assets.electricity_price_per_kwh
            else 0
        end as power_cost
    from hours
    left join gpus
        on hours.gpu_id = gpus.gpu_id
    left join assets
        on gpus.asset_id = assets.asset_id
),

final as (
    select
        -- ids
        gpu_id,
        gpu_instance_id as instance_id,
        gpu_provider as provider,
        gpu_account_id as account_id,
        commitment_id,
        -- dimensions
        case when gpu_provider = 'onprem' then 'Owned' else pricing_category end as pricing_category,
        coalesce(tag_team, '{{ var("unallocated_owner") }}') as owner_team,
        coalesce(tag_project, '{{ var("unallocated_owner") }}') as owner_project,
        tag_environment as owner_environment,
        is_monitored,
        is_billed,
        -- usage
        coalesce(provisioned_seconds, telemetry_seconds, 0) as provisioned_seconds,
        coalesce(telemetry_seconds, 0) as telemetry_seconds,
        coalesce(busy_gpu_hours, 0) as busy_gpu_hours,
        avg_gpu_util_pct,
        max_fb_used_mib,
        coalesce(energy_kwh, 0) as energy_kwh,
        -- money: an on-prem GPU-hour's effective, billed and list cost all include its own power
        coalesce(depreciation_cost, 0) as depreciation_cost,
        coalesce(facility_cost, 0) as facility_cost,
        coalesce(staff_cost, 0) as staff_cost,
        power_cost,
        coalesce(effective_cost, 0) + power_cost as effective_cost,
        coalesce(billed_cost, 0) + power_cost as billed_cost,
        coalesce(list_cost, 0) + power_cost as list_cost,
        -- timestamps
        hour_start
    from joined
)

select * from final
