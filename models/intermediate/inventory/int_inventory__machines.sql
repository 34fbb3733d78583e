-- grain: one row per machine (machine_key): a Kubernetes node's instance, an on-prem asset, or a billed instance neither knows
{#-
    The machines GPUs live on, and what each source says of their GPUs:
    - a Kubernetes node's cloud instance (spec.providerID; the Azure subscription or GCP project read
      from it), its cluster (the folder its `kubectl get nodes` snapshot lies in, one per cluster) and
      node pool; its GPUs: count from the node, model from the catalogue by instance type, else the
      node's GPU product label;
    - an on-prem asset of the register, its cluster (the register's, else the Slurm cluster that ran
      jobs on its host) and its GPUs;
    - a billed GPU instance (int_inventory__billed_instances) that neither names.
    Each with its bill's facts where it was billed (bill_*). Hosts are matched case-insensitively, on-prem
    and Slurm hosts on their short name (before the first dot).
#}
with kubernetes_nodes as (
    select * from {{ ref('stg_kubernetes__nodes') }}
),

onprem_assets as (
    select * from {{ ref('stg_onprem__assets') }}
),

slurm_hosts as (
    select * from {{ ref('int_inventory__slurm_hosts') }}
),

billed_instances as (
    select * from {{ ref('int_inventory__billed_instances') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

instance_catalogue as (
    select * from {{ ref('gpu_instance_catalogue') }}
),

node_instances as (
    select
        node_name,
        instance_id,
        max(provider) as provider,
        max(provider_id) as provider_id,
        max(region) as region,
        max(instance_type) as instance_type,
        max(capacity_type) as capacity_type,
        max(gpu_product) as gpu_product,
        max(gpu_count) as gpu_count,
        max(cluster) as cluster,
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
        cast(null as {{ dbt.type_string() }}) as slurm_cluster,
        node_instances.cluster,
        node_instances.node_pool,
        node_instances.first_seen_at,
        node_instances.last_seen_at,
        'kubernetes' as identity_source
    from node_instances
    left join instance_catalogue
        on node_instances.instance_type = instance_catalogue.instance_type
    left join gpu_models as product_models
        on
            lower(replace(node_instances.gpu_product, '-', ' '))
            = lower(replace(product_models.dcgm_model_name, '-', ' '))
    where node_instances.instance_id is not null
),

onprem_machines as (
    select
        onprem_assets.asset_id as machine_key,
        onprem_assets.hostname as host,
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
        cast(null as {{ dbt.type_string() }}) as kubernetes_node_name,
        slurm_hosts.slurm_cluster,
        coalesce(onprem_assets.cluster_name, slurm_hosts.slurm_cluster) as cluster,
        cast(null as {{ dbt.type_string() }}) as node_pool,
        slurm_hosts.first_seen_at,
        slurm_hosts.last_seen_at,
        'onprem_assets' as identity_source
    from onprem_assets
    left join slurm_hosts
        on lower({{ dbt.split_part('onprem_assets.hostname', "'.'", 1) }}) = slurm_hosts.short_host_key
),

billed_only_machines as (
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
            select lower(cloud_machines.instance_id) from cloud_machines
            union all
            select lower(onprem_machines.asset_id) from onprem_machines
        )
),

machines as (
    select * from cloud_machines
    union all
    select * from onprem_machines
    union all
    select * from billed_only_machines
),

final as (
    select
        machines.*,
        lower(machines.host) as host_key,
        lower({{ dbt.split_part('machines.host', "'.'", 1) }}) as short_host_key,
        billed_instances.instance_key is not null as is_billed,
        billed_instances.gpu_model as bill_gpu_model,
        cast(billed_instances.gpu_count as integer) as bill_gpu_count,
        billed_instances.gpu_identity_source as bill_gpu_identity_source
    from machines
    left join billed_instances
        on
            machines.provider = billed_instances.provider
            and lower(machines.instance_id) = billed_instances.instance_key
)

select * from final
