-- grain: one row per pod attempt (job_key) that holds GPU devices through Kubernetes DRA ResourceClaims
{#-
    What a pod holds through DRA (stg_kubernetes__resource_claims): the devices of every claim reserved
    for it, as the claim's latest allocated snapshot gives them (the pods of every snapshot: a claim
    may serve pods one after another). A claim the scheduler made for a pod's extended resource
    (`nvidia.com/mig-1g.12gb` backed by DRA) is left out: the pod's own request already says it.
    - claimed_gpus: whole GPUs; claimed_mig_devices: MIG devices, and their one mig_profile;
      claimed_mig_gpus: the GPUs those MIG devices are on; mig_profile_id: their one GPU instance profile
      ID, as a static MIG device's name gives it (`gpu-1-mig-19-4-1`), which int_workloads__attempts
      reads as a profile with the GPU's model where nothing names it. mig_compute_pct: the compute slices of its
      MIG devices over those of their GPUs (g/7 each), where every device's profile is known: the part
      of each GPU a pod holding several slices (4g + 2g of one A100) declared, as one profile's g/7 is.
    - sharing_mode: mig (a MIG device), mps or time_slicing (the sharing strategy NVIDIA's driver
      applies to the device, or several pods on one claim: they take turns on its GPUs), else
      exclusive; mps_active_thread_pct: the MPS share each client may use.
#}
with claims as (
    select * from {{ ref('stg_kubernetes__resource_claims') }}
),

allocated as (
    select *
    from claims
    where
        device_name is not null
        and not coalesce(is_extended_resource_claim, false)
),

latest_devices as (
    select *
    from (
        select
            allocated.*,
            dense_rank() over (
                partition by allocated.cluster, allocated.claim_uid order by allocated.snapshot_at desc
            ) as snapshot_rank
        from allocated
    ) as ranked
    where snapshot_rank = 1
),

claim_pods as (
    select distinct
        allocated.cluster,
        allocated.claim_uid,
        pod_rows.pod_uid
    from allocated,
        {{ unnest_rows('allocated.reserved_for_pod_uids', 'pod_rows', 'pod_uid') }}
),

claim_sizes as (
    select
        cluster,
        claim_uid,
        count(*) as pods_on_claim
    from claim_pods
    group by 1, 2
),

pod_devices as (
    select
        claim_pods.cluster,
        claim_pods.pod_uid,
        latest_devices.claim_uid || '/' || latest_devices.device_name as device_key,
        latest_devices.device_pool || '/' || cast(latest_devices.gpu_index as {{ dbt.type_string() }}) as gpu_key,
        latest_devices.is_mig,
        latest_devices.mig_profile,
        latest_devices.mig_profile_id,
        latest_devices.sharing_strategy,
        latest_devices.mps_active_thread_pct,
        claim_sizes.pods_on_claim
    from claim_pods
    inner join latest_devices
        on
            claim_pods.cluster = latest_devices.cluster
            and claim_pods.claim_uid = latest_devices.claim_uid
    inner join claim_sizes
        on
            claim_pods.cluster = claim_sizes.cluster
            and claim_pods.claim_uid = claim_sizes.claim_uid
),

final as (
    select
        'kubernetes:' || cluster || ':' || pod_uid as job_key,
        cast(count(distinct case when not is_mig then device_key end) as integer) as claimed_gpus,
        cast(count(distinct case when is_mig then device_key end) as integer) as claimed_mig_devices,
        cast(count(distinct case when is_mig then coalesce(gpu_key, device_key) end) as integer) as claimed_mig_gpus,
        case
            when min(case when is_mig then 1 else 0 end) = 1 and count(distinct mig_profile) = 1
                then min(mig_profile)
        end as mig_profile,
        case
            when
                min(case when is_mig then 1 else 0 end) = 1
                and count(mig_profile_id) = count(*)
                and count(distinct mig_profile_id) = 1
                then min(mig_profile_id)
        end as mig_profile_id,
        case
            when max(case when is_mig then 1 else 0 end) = 1 then 'mig'
            when max(case when sharing_strategy = 'MPS' then 1 else 0 end) = 1 then 'mps'
            when max(case when sharing_strategy = 'TimeSlicing' then 1 else 0 end) = 1 then 'time_slicing'
            when max(pods_on_claim) > 1 then 'time_slicing'
            else 'exclusive'
        end as sharing_mode,
        max(case when sharing_strategy = 'MPS' then mps_active_thread_pct end) as mps_active_thread_pct,
        case
            when
                min(case when is_mig then 1 else 0 end) = 1
                and count(mig_profile) = count(*)
                and count(gpu_key) = count(*)
                then cast(
                    100.0 * sum({{ mig_compute_slices('mig_profile') }}) / (7.0 * count(distinct gpu_key)) as double
                )
        end as mig_compute_pct
    from pod_devices
    group by 1
)

select * from final
