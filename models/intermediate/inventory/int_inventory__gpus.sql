-- grain: one row per gpu (gpu_id)
{#-
    Who each GPU is, across sources. A GPU DCGM reports is identified by its UUID and placed on a
    machine through its Hostname: the Kubernetes node of that name (the node seen closest in time,
    as node names can be reused) gives the cloud instance (spec.providerID), else the on-prem asset
    register's hostname gives the asset; Slurm's NodeList hosts give the Slurm cluster.
    A GPU's cluster: the Kubernetes cluster of its node (the folder its `kubectl get nodes` snapshot
    lies in, one folder per cluster, as for pods), else the asset register's cluster, else the Slurm
    cluster whose jobs ran on its host; its node pool from the node's pool label.
    Machines known to have GPUs (Kubernetes nodes' gpu.count, asset register gpu_count, billed GPU
    instances, whose bill also gives the account) get one row per GPU slot that no monitored GPU fills, `<instance_id or host>:<index>`,
    is_monitored false: a GPU billed but never seen by DCGM still exists, and still costs.
    Hosts are matched case-insensitively; on-prem and Slurm hosts on their short name (before the
    first dot), since Slurm names nodes short and DCGM may report the FQDN.
    A GPU's identity (gpu_identity_source): DCGM's model name where telemetry sees it, else the
    machine's: the bill (GPU count it states), the catalogue by instance type, the Kubernetes node's
    GPU product label, the asset register. A billed accelerator instance whose GPU count nobody knows
    (is_unknown_accelerator) gets one placeholder GPU, `<instance_id>:0`, that carries its whole cost,
    unless DCGM sees its GPUs; a GPU whose model nobody names is flagged the same way.
#}

with

telemetry_hours as (
    select * from {{ ref('int_telemetry__gpu_hours') }}
    where mig_instance_id is null
),

dcgm_series as (
    select * from {{ ref('stg_dcgm__series') }}
),

kubernetes_nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

onprem_assets as (
    select * from {{ ref('stg_onprem__assets') }}
),

slurm_jobs as (
    select * from {{ ref('stg_slurm__sacct') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

instance_catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

billing_hours as (
    select * from {{ ref('int_billing__gpu_instance_hours') }}
),

-- billed GPU instances: the bill knows every machine that cost money, monitored or not

billed_instances as (
    select
        provider,
        lower(instance_id) as instance_key,
        max(instance_id) as instance_id,
        max(hostname) as host,
        max({{ attribution_account_id('provider', 'billing_account_id', 'sub_account_id') }}) as account_id,
        max(region) as region,
        max(instance_type) as instance_type,
        max(gpu_model) as gpu_model,
        max(gpu_count) as gpu_count,
        min(gpu_identity_source) as gpu_identity_source,
        min(hour_start) as first_seen_at,
        max(hour_start) + interval 1 hour as last_seen_at
    from billing_hours
    group by provider, lower(instance_id)
),

-- monitored GPUs: seen by DCGM

gpu_seen as (
    select
        gpu_uuid,
        min(first_sampled_at) as first_seen_at,
        max(last_sampled_at) as last_seen_at
    from telemetry_hours
    group by gpu_uuid
),

gpu_latest_host as (
    select
        gpu_uuid,
        hostname
    from (
        select
            gpu_uuid,
            hostname,
            row_number() over (partition by gpu_uuid order by hour_start desc) as host_rank
        from telemetry_hours
        where hostname is not null
    ) as ranked
    where host_rank = 1
),

gpu_labels as (
    select
        gpu_uuid,
        max(gpu_index) as gpu_index,
        max(model_name) as dcgm_model_name,
        max(pci_bus_id) as pci_bus_id,
        count(mig_instance_id) > 0 as is_mig_enabled
    from dcgm_series
    where gpu_uuid is not null
    group by gpu_uuid
),

monitored_gpus as (
    select
        gpu_seen.gpu_uuid,
        gpu_latest_host.hostname,
        lower(gpu_latest_host.hostname) as host_key,
        lower({{ dbt.split_part('gpu_latest_host.hostname', "'.'", 1) }}) as short_host_key,
        gpu_labels.gpu_index,
        gpu_labels.dcgm_model_name,
        gpu_labels.is_mig_enabled,
        gpu_seen.first_seen_at,
        gpu_seen.last_seen_at
    from gpu_seen
    left join gpu_latest_host
        on gpu_seen.gpu_uuid = gpu_latest_host.gpu_uuid
    left join gpu_labels
        on gpu_seen.gpu_uuid = gpu_labels.gpu_uuid
),

-- machines: cloud instances (Kubernetes nodes), on-prem assets

node_instances as (
    select
        node_name,
        instance_id,
        lower(node_name) as host_key,
        max(provider) as provider,
        max(provider_id) as provider_id,
        max(region) as region,
        max(instance_type) as instance_type,
        max(capacity_type) as capacity_type,
        max(gpu_product) as gpu_product,
        max(gpu_count) as gpu_count,
        max({{ parent_folder('source_file') }}) as kubernetes_cluster,
        max(node_pool) as node_pool,
        min(snapshot_at) as first_seen_at,
        max(snapshot_at) as last_seen_at
    from kubernetes_nodes
    group by node_name, instance_id
),

cloud_machines as (
    select
        node_instances.instance_id as machine_key,
        node_instances.node_name as host,
        node_instances.host_key,
        node_instances.instance_id,
        cast(null as {{ dbt.type_string() }}) as asset_id,
        node_instances.provider,
        case
            when
                node_instances.provider = 'azure'
                and {{ dbt.split_part('node_instances.provider_id', "'/'", 4) }} = 'subscriptions'
                then {{ dbt.split_part('node_instances.provider_id', "'/'", 5) }}
            when node_instances.provider = 'gcp'
                then {{ dbt.split_part('node_instances.provider_id', "'/'", 3) }}
        end as account_id,
        node_instances.region,
        node_instances.instance_type,
        node_instances.capacity_type,
        coalesce(instance_catalogue.gpu_model, product_models.gpu_model) as gpu_model,
        cast(node_instances.gpu_count as integer) as gpu_count,
        case
            when instance_catalogue.gpu_model is not null then 'catalogue'
            when product_models.gpu_model is not null then 'kubernetes'
        end as gpu_identity_source,
        node_instances.node_name as kubernetes_node_name,
        node_instances.kubernetes_cluster as cluster,
        node_instances.node_pool,
        node_instances.first_seen_at,
        node_instances.last_seen_at
    from node_instances
    left join instance_catalogue
        on node_instances.instance_type = instance_catalogue.instance_type
    left join gpu_models as product_models
        on
            lower(replace(node_instances.gpu_product, '-', ' '))
            = lower(replace(product_models.dcgm_model_name, '-', ' '))
    where node_instances.instance_id is not null
),

slurm_hosts as (
    select
        lower({{ dbt.split_part('host', "'.'", 1) }}) as short_host_key,
        max(cluster) as slurm_cluster,
        min(started_at) as first_seen_at,
        max(coalesce(ended_at, started_at)) as last_seen_at
    from (
        select
            cluster,
            started_at,
            ended_at,
            {{ inventory_unnest('node_names', 'host') }}
        from slurm_jobs
    ) as job_hosts
    where host is not null
    group by lower({{ dbt.split_part('host', "'.'", 1) }})
),

onprem_machines as (
    select
        onprem_assets.asset_id as machine_key,
        onprem_assets.hostname as host,
        lower({{ dbt.split_part('onprem_assets.hostname', "'.'", 1) }}) as short_host_key,
        onprem_assets.asset_id as instance_id,
        onprem_assets.asset_id,
        'onprem' as provider,
        cast(null as {{ dbt.type_string() }}) as account_id,
        onprem_assets.site_id as region,
        onprem_assets.vendor_model as instance_type,
        'owned' as capacity_type,
        onprem_assets.gpu_model,
        cast(onprem_assets.gpu_count as integer) as gpu_count,
        'asset_register' as gpu_identity_source,
        slurm_hosts.slurm_cluster,
        coalesce(onprem_assets.cluster_name, slurm_hosts.slurm_cluster) as cluster,
        slurm_hosts.first_seen_at,
        slurm_hosts.last_seen_at
    from onprem_assets
    left join slurm_hosts
        on lower({{ dbt.split_part('onprem_assets.hostname', "'.'", 1) }}) = slurm_hosts.short_host_key
),

-- a monitored GPU's cloud machine: the node of its hostname seen closest to the GPU's own life

node_candidates as (
    select
        monitored_gpus.gpu_uuid,
        cloud_machines.machine_key,
        row_number() over (
            partition by monitored_gpus.gpu_uuid
            order by
                greatest(
                    0,
                    {{ seconds_between('monitored_gpus.last_seen_at', 'cloud_machines.first_seen_at') }},
                    {{ seconds_between('cloud_machines.last_seen_at', 'monitored_gpus.first_seen_at') }}
                ),
                cloud_machines.last_seen_at desc
        ) as match_rank
    from monitored_gpus
    inner join cloud_machines
        on monitored_gpus.host_key = cloud_machines.host_key
),

gpu_cloud_machine as (
    select
        gpu_uuid,
        machine_key
    from node_candidates
    where match_rank = 1
),

monitored as (
    select
        monitored_gpus.gpu_uuid as gpu_id,
        monitored_gpus.gpu_uuid,
        monitored_gpus.gpu_index,
        monitored_gpus.hostname as host,
        coalesce(cloud_machines.instance_id, onprem_machines.instance_id) as instance_id,
        onprem_machines.asset_id,
        coalesce(cloud_machines.provider, onprem_machines.provider) as provider,
        coalesce(cloud_machines.account_id, onprem_machines.account_id) as account_id,
        coalesce(cloud_machines.region, onprem_machines.region) as region,
        coalesce(cloud_machines.instance_type, onprem_machines.instance_type) as instance_type,
        coalesce(cloud_machines.capacity_type, onprem_machines.capacity_type) as capacity_type,
        coalesce(dcgm_models.gpu_model, cloud_machines.gpu_model, onprem_machines.gpu_model) as gpu_model,
        monitored_gpus.dcgm_model_name,
        monitored_gpus.is_mig_enabled,
        cloud_machines.kubernetes_node_name,
        coalesce(onprem_machines.slurm_cluster, slurm_hosts.slurm_cluster) as slurm_cluster,
        coalesce(cloud_machines.cluster, onprem_machines.cluster, slurm_hosts.slurm_cluster) as cluster,
        cloud_machines.node_pool,
        monitored_gpus.first_seen_at,
        monitored_gpus.last_seen_at,
        true as is_monitored,
        'dcgm' as identity_source,
        case
            when dcgm_models.gpu_model is not null then 'telemetry'
            else coalesce(cloud_machines.gpu_identity_source, onprem_machines.gpu_identity_source)
        end as gpu_identity_source,
        false as is_count_unknown
    from monitored_gpus
    left join gpu_cloud_machine
        on monitored_gpus.gpu_uuid = gpu_cloud_machine.gpu_uuid
    left join cloud_machines
        on gpu_cloud_machine.machine_key = cloud_machines.machine_key
    left join onprem_machines
        on
            gpu_cloud_machine.machine_key is null
            and monitored_gpus.short_host_key = onprem_machines.short_host_key
    left join slurm_hosts
        on monitored_gpus.short_host_key = slurm_hosts.short_host_key
    left join gpu_models as dcgm_models
        on
            lower(replace(monitored_gpus.dcgm_model_name, '-', ' '))
            = lower(replace(dcgm_models.dcgm_model_name, '-', ' '))
),

-- GPU slots of known machines that no monitored GPU fills

machines as (
    select
        machine_key,
        host,
        instance_id,
        asset_id,
        provider,
        account_id,
        region,
        instance_type,
        capacity_type,
        gpu_model,
        gpu_count,
        gpu_identity_source,
        kubernetes_node_name,
        cast(null as {{ dbt.type_string() }}) as slurm_cluster,
        cluster,
        node_pool,
        first_seen_at,
        last_seen_at,
        'kubernetes' as identity_source
    from cloud_machines

    union all

    select
        machine_key,
        host,
        instance_id,
        asset_id,
        provider,
        account_id,
        region,
        instance_type,
        capacity_type,
        gpu_model,
        gpu_count,
        gpu_identity_source,
        cast(null as {{ dbt.type_string() }}) as kubernetes_node_name,
        slurm_cluster,
        cluster,
        cast(null as {{ dbt.type_string() }}) as node_pool,
        first_seen_at,
        last_seen_at,
        'onprem_assets' as identity_source
    from onprem_machines

    union all

    select
        billed_instances.instance_id as machine_key,
        coalesce(billed_instances.host, billed_instances.instance_id) as host,
        billed_instances.instance_id,
        cast(null as {{ dbt.type_string() }}) as asset_id,
        billed_instances.provider,
        billed_instances.account_id,
        billed_instances.region,
        billed_instances.instance_type,
        cast(null as {{ dbt.type_string() }}) as capacity_type,
        billed_instances.gpu_model,
        cast(billed_instances.gpu_count as integer) as gpu_count,
        billed_instances.gpu_identity_source,
        cast(null as {{ dbt.type_string() }}) as kubernetes_node_name,
        cast(null as {{ dbt.type_string() }}) as slurm_cluster,
        cast(null as {{ dbt.type_string() }}) as cluster,
        cast(null as {{ dbt.type_string() }}) as node_pool,
        billed_instances.first_seen_at,
        billed_instances.last_seen_at,
        'billing' as identity_source
    from billed_instances
    where
        billed_instances.instance_key not in (
            select lower(instance_id) from cloud_machines
            union all
            select lower(asset_id) from onprem_machines
        )
),

machine_slots as (
    -- GPUs a machine holds: its own count, else its bill's or the catalogue's, else one placeholder
    -- for a billed accelerator whose count nobody knows
    select
        machines.*,
        coalesce(machines.gpu_model, billed_instances.gpu_model) as machine_gpu_model,
        coalesce(machines.gpu_count, cast(billed_instances.gpu_count as integer), 1) as slot_count,
        coalesce(machines.gpu_count, billed_instances.gpu_count) is null as is_count_unknown,
        case
            when coalesce(machines.gpu_count, billed_instances.gpu_count) is null then 'unknown'
            else coalesce(machines.gpu_identity_source, billed_instances.gpu_identity_source)
        end as machine_gpu_identity_source
    from machines
    left join billed_instances
        on
            machines.provider = billed_instances.provider
            and lower(machines.instance_id) = billed_instances.instance_key
    where coalesce(machines.gpu_count, billed_instances.gpu_count) is not null or billed_instances.instance_key is not null
),

gpu_slots as (
    select
        cast(generated_number - 1 as integer) as gpu_index
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
        coalesce(machine_slots.instance_id, machine_slots.host) || ':' || cast(gpu_slots.gpu_index as {{ dbt.type_string() }}) as gpu_id,
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
        on gpu_slots.gpu_index < machine_slots.slot_count
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
        cast(gpu_models.memory_gb as integer) as gpu_memory_gb,
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
    left join billed_instances
        on
            gpus.provider = billed_instances.provider
            and lower(gpus.instance_id) = billed_instances.instance_key
)

select * from final
