-- grain: one row per gpu (gpu_id)
{#-
    What a kWh of each GPU's energy emits: its grid's carbon intensity and its data centre's PUE, the
    factors of the carbon_kg_co2e macro. The grid figure is seeds/grid_carbon_intensity's row for the
    GPU's provider and region (on-prem: the asset register's site), regions compared in lower case
    without spaces ("East US" is eastus); a GPU whose region has no row (or no known region) takes the
    world average `carbon_fallback_grid_gco2e_per_kwh`, flagged. PUE: an on-prem asset's own (the
    asset register's, which its power cost uses too), else the seed's for the region, else
    `carbon_fallback_pue`.
#}

with

gpus as (
    select * from {{ ref('int_inventory__gpus') }}
),

grid as (
    select * from {{ ref('grid_carbon_intensity') }}
),

assets as (
    select * from {{ ref('stg_onprem__assets') }}
),

final as (
    select
        -- ids
        gpus.gpu_id,
        -- dimensions
        gpus.provider,
        gpus.region,
        grid.grid_zone,
        case
            when assets.pue is not null then 'asset_register'
            when grid.pue is not null then 'grid_carbon_intensity'
            else 'fallback'
        end as pue_source,
        -- flags
        grid.grid_gco2e_per_kwh is null as is_fallback_grid_intensity,
        -- numerics
        cast(
            coalesce(grid.grid_gco2e_per_kwh, {{ var('carbon_fallback_grid_gco2e_per_kwh') }}) as double
        ) as grid_gco2e_per_kwh,
        cast(coalesce(assets.pue, grid.pue, {{ var('carbon_fallback_pue') }}) as double) as pue
    from gpus
    left join assets
        on gpus.asset_id = assets.asset_id
    left join grid
        on
            gpus.provider = grid.provider
            and lower(replace(gpus.region, ' ', '')) = lower(grid.region)
)

select * from final
