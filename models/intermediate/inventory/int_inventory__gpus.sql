-- grain: one row per gpu (gpu_id)
{#-
    Who each GPU is, across sources: the GPUs DCGM reports (int_inventory__monitored_gpus, placed on
    their machines there) and the GPU slots no monitored GPU fills on the machines known to have GPUs
    (int_inventory__machines: Kubernetes nodes' gpu.count, asset register gpu_count, billed GPU
    instances, whose bill also gives the account), `<instance_id or host>:<index>`, is_monitored false:
    a GPU billed but never seen by DCGM still exists, and still costs.
    A GPU's cluster: the Kubernetes cluster of its node (the folder its `kubectl get nodes` snapshot
    lies in, one folder per cluster, as for pods), else the asset register's cluster, else the Slurm
    cluster whose jobs ran on its host; its node pool from the node's pool label.
    A GPU's identity (gpu_identity_source): DCGM's model name where telemetry sees it, else the
    machine's: the bill (GPU count it states), the catalogue by instance type, the Kubernetes node's
    GPU product label, the asset register. A billed accelerator instance whose GPU count nobody knows
    (is_unknown_accelerator) gets one placeholder GPU, `<instance_id>:0`, that carries its whole cost,
    unless DCGM sees its GPUs; a GPU whose model nobody names is flagged the same way.
    An NVIDIA vGPU guest's GPU (int_inventory__dcgm_models) is its parent's model with its profile and
    its share of the parent (vgpu_share: frame buffer over the parent's memory), and its memory is its
    frame buffer.
#}

with

machines as (
    select * from {{ ref('int_inventory__machines') }}
),

monitored as (
    select * from {{ ref('int_inventory__monitored_gpus') }}
),

billed_instances as (
    select * from {{ ref('int_inventory__billed_instances') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

dcgm_models as (
    select * from {{ ref('int_inventory__dcgm_models') }}
),

machine_slots as (
    -- GPUs a machine holds: its own count, else its bill's or the catalogue's, else one placeholder
    -- for a billed accelerator whose count nobody knows
    select
        machines.*,
        coalesce(machines.gpu_model, machines.bill_gpu_model) as machine_gpu_model,
        coalesce(machines.gpu_count, machines.bill_gpu_count, 1) as slot_count,
        coalesce(machines.gpu_count, machines.bill_gpu_count) is null as is_count_unknown,
        case
            when coalesce(machines.gpu_count, machines.bill_gpu_count) is null then 'unknown'
            else coalesce(machines.gpu_identity_source, machines.bill_gpu_identity_source)
        end as machine_gpu_identity_source
    from machines
    where coalesce(machines.gpu_count, machines.bill_gpu_count) is not null or machines.is_billed
),

gpu_slots as (
    select cast(generated_number - 1 as integer) as gpu_index
    from ({{ dbt.generate_series(var('inventory_max_gpus_per_machine')) }}) as numbers
),

machine_monitored_gpus as (
    select
        instance_id,
        count(*) as monitored_gpus
    from monitored
    where instance_id is not null
    group by instance_id
),

unmonitored as (
    select
        coalesce(machine_slots.instance_id, machine_slots.host) || ':'
        || cast(gpu_slots.gpu_index as {{ dbt.type_string() }}) as gpu_id,
        cast(null as {{ dbt.type_string() }}) as gpu_uuid,
        gpu_slots.gpu_index,
        machine_slots.host,
        machine_slots.instance_id,
        machine_slots.asset_id,
        machine_slots.provider,
        machine_slots.account_id,
        machine_slots.region,
        machine_slots.instance_type,
        machine_slots.capacity_type,
        machine_slots.machine_gpu_model as gpu_model,
        cast(null as {{ dbt.type_string() }}) as dcgm_model_name,
        false as is_mig_enabled,
        machine_slots.kubernetes_node_name,
        machine_slots.slurm_cluster,
        machine_slots.cluster,
        machine_slots.node_pool,
        machine_slots.first_seen_at,
        machine_slots.last_seen_at,
        false as is_monitored,
        machine_slots.identity_source,
        machine_slots.machine_gpu_identity_source as gpu_identity_source,
        machine_slots.is_count_unknown
    from machine_slots
    inner join gpu_slots
        on machine_slots.slot_count > gpu_slots.gpu_index
    left join machine_monitored_gpus
        on machine_slots.instance_id = machine_monitored_gpus.instance_id
    where
        coalesce(machine_monitored_gpus.monitored_gpus, 0) < machine_slots.slot_count
        and not exists (
            select 1
            from monitored
            where
                monitored.instance_id = machine_slots.instance_id
                and monitored.gpu_index = gpu_slots.gpu_index
        )
),

gpus as (
    select * from monitored
    union all
    select * from unmonitored
),

final as (
    select
        -- ids
        gpus.gpu_id,
        gpus.gpu_uuid,
        gpus.gpu_index,
        gpus.host,
        gpus.instance_id,
        gpus.asset_id,
        gpus.kubernetes_node_name,
        gpus.slurm_cluster,
        gpus.cluster,
        gpus.node_pool,
        -- dimensions
        gpus.provider,
        coalesce(gpus.account_id, billed_instances.account_id) as account_id,
        gpus.region,
        gpus.instance_type,
        gpus.capacity_type,
        gpus.gpu_model,
        gpus.dcgm_model_name,
        cast(round(gpu_models.memory_gb * coalesce(dcgm_models.vgpu_share, 1)) as integer) as gpu_memory_gb,
        dcgm_models.vgpu_profile,
        dcgm_models.vgpu_share,
        case
            when gpus.provider = 'onprem' then 'on_prem'
            when gpus.provider is not null then 'cloud'
        end as ownership,
        gpus.identity_source,
        case when gpus.gpu_model is null then 'unknown' else gpus.gpu_identity_source end as gpu_identity_source,
        -- booleans
        gpus.is_mig_enabled,
        gpus.is_monitored,
        gpus.gpu_model is null or gpus.is_count_unknown as is_unknown_accelerator,
        gpus.is_count_unknown as is_gpu_count_unknown,
        -- timestamps
        gpus.first_seen_at,
        gpus.last_seen_at
    from gpus
    left join gpu_models
        on gpus.gpu_model = gpu_models.gpu_model
    left join dcgm_models
        on gpus.dcgm_model_name = dcgm_models.model_name
    left join billed_instances
        on
            gpus.provider = billed_instances.provider
            and lower(gpus.instance_id) = billed_instances.instance_key
)

select * from final
