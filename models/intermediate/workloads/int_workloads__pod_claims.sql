-- grain: one row per pod attempt (job_key) that holds GPU devices through Kubernetes DRA ResourceClaims
{#-
    What a pod holds through DRA (stg_kubernetes__resource_claims): the devices of every claim reserved
    for it, as the claim's latest allocated snapshot gives them (the pods of every snapshot: a claim
    may serve pods one after another). A claim the scheduler made for a pod's extended resource
    (`nvidia.com/mig-1g.12gb` backed by DRA) is left out: the pod's own request already says it.
    A pod that ran between two claims snapshots was never seen in a claim, though its pod snapshots
    name its claims (stg_kubernetes__pods.claim_names, claim_templates). It holds what the evidence
    says, in order: the claim it names, where that claim was seen serving other pods; else the devices
    of a claim made from its one template for another pod (a template's claims ask for the same
    devices: its class and CEL selectors), the latest such, where all of the template's claims agree
    on one kind of device. Else nothing says its share: sharing_mode `dra`, one GPU of its node per
    claim, share unknown (int_data_health__unknown_gpu_sharing flags it).
    - claimed_gpus: whole GPUs; claimed_mig_devices: MIG devices, and their one mig_profile;
      claimed_mig_gpus: the GPUs those MIG devices are on; mig_profile_id: their one GPU instance profile
      ID, as a static MIG device's name gives it (`gpu-1-mig-19-4-1`), which int_workloads__attempts
      reads as a profile with the GPU's model where nothing names it. mig_compute_slices_per_gpu: the
      compute slices of its MIG devices per GPU they are on, where every device's profile is known; over
      the GPU model's compute slices (int_workloads__attempts) they are the part of each GPU a pod holding
      several slices (4g + 2g of one A100: 6/7) declared, as one profile's g is.
    - sharing_mode: mig (a MIG device), mps or time_slicing (the sharing strategy NVIDIA's driver
      applies to the device, or several pods on one claim: they take turns on its GPUs), dra (claims
      nothing says the devices of), else exclusive; mps_active_thread_pct: the MPS share each client
      may use. claim_evidence: the strongest evidence of what it holds: claim (its own claim seen),
      named_claim, template, none.
#}
with claims as (
    select * from {{ ref('stg_kubernetes__resource_claims') }}
),

pods as (
    select * from {{ ref('stg_kubernetes__pods') }}
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

-- the claims each pod that started names, as its latest snapshot since it started gives them
pod_claim_lists as (
    select *
    from (
        select
            cluster,
            pod_uid,
            pod_namespace,
            claim_names,
            claim_templates,
            row_number() over (
                partition by cluster, pod_uid order by snapshot_at desc, load_id desc
            ) as snapshot_rank
        from pods
        where
            {{ item_count('claim_names') }} > 0
            and started_at is not null
    ) as ranked
    where snapshot_rank = 1
),

-- the template each seen claim was made from: its pod's one template
templates_of_claims as (
    select distinct
        claim_pods.cluster,
        claim_pods.claim_uid,
        pod_claim_lists.pod_namespace,
        {{ first_item('pod_claim_lists.claim_templates') }} as template_name
    from claim_pods
    inner join pod_claim_lists
        on
            claim_pods.cluster = pod_claim_lists.cluster
            and claim_pods.pod_uid = pod_claim_lists.pod_uid
    where
        {{ item_count('pod_claim_lists.claim_templates') }} = 1
        and {{ first_item('pod_claim_lists.claim_templates') }} is not null
),

-- a template whose claims all hold one kind of device, and its latest claim
template_claims as (
    select
        templates_of_claims.cluster,
        templates_of_claims.pod_namespace,
        templates_of_claims.template_name,
        max(templates_of_claims.claim_uid) as claim_uid
    from templates_of_claims
    inner join latest_devices
        on
            templates_of_claims.cluster = latest_devices.cluster
            and templates_of_claims.claim_uid = latest_devices.claim_uid
    group by 1, 2, 3
    having count(distinct coalesce(
        latest_devices.mig_profile,
        cast(latest_devices.mig_profile_id as {{ dbt.type_string() }}),
        case when latest_devices.is_mig then 'mig' else 'gpu' end
    )) = 1
),

seen_pods as (
    select distinct
        cluster,
        pod_uid
    from claim_pods
),

unseen_pods as (
    select pod_claim_lists.*
    from pod_claim_lists
    left join seen_pods
        on
            pod_claim_lists.cluster = seen_pods.cluster
            and pod_claim_lists.pod_uid = seen_pods.pod_uid
    where seen_pods.pod_uid is null
),

-- an unseen pod's claims: the named claim seen serving other pods, else its template's latest claim
borrowed as (
    select distinct
        unseen_pods.cluster,
        unseen_pods.pod_uid,
        latest_devices.claim_uid,
        'named_claim' as claim_evidence
    from unseen_pods
    inner join latest_devices
        on
            unseen_pods.cluster = latest_devices.cluster
            and unseen_pods.pod_namespace = latest_devices.claim_namespace
            and {{ contains_item('unseen_pods.claim_names', 'latest_devices.claim_name') }}
    union all
    select
        unseen_pods.cluster,
        unseen_pods.pod_uid,
        template_claims.claim_uid,
        'template' as claim_evidence
    from unseen_pods
    inner join template_claims
        on
            unseen_pods.cluster = template_claims.cluster
            and unseen_pods.pod_namespace = template_claims.pod_namespace
            and {{ first_item('unseen_pods.claim_templates') }} = template_claims.template_name
    where {{ item_count('unseen_pods.claim_templates') }} = 1
),

pod_evidence as (
    select
        cluster,
        claim_uid,
        pod_uid,
        'claim' as claim_evidence
    from claim_pods
    union all
    select
        cluster,
        claim_uid,
        pod_uid,
        min(claim_evidence) as claim_evidence
    from borrowed
    group by 1, 2, 3
),

pod_devices as (
    select
        pod_evidence.cluster,
        pod_evidence.pod_uid,
        pod_evidence.claim_evidence,
        latest_devices.claim_uid || '/' || latest_devices.device_name as device_key,
        latest_devices.device_pool || '/' || cast(latest_devices.gpu_index as {{ dbt.type_string() }}) as gpu_key,
        latest_devices.is_mig,
        latest_devices.mig_profile,
        latest_devices.mig_profile_id,
        latest_devices.sharing_strategy,
        latest_devices.mps_active_thread_pct,
        -- a named claim seen serving other pods is shared with them
        case pod_evidence.claim_evidence
            when 'claim' then claim_sizes.pods_on_claim
            when 'named_claim' then claim_sizes.pods_on_claim + 1
            else 1
        end as pods_on_claim
    from pod_evidence
    inner join latest_devices
        on
            pod_evidence.cluster = latest_devices.cluster
            and pod_evidence.claim_uid = latest_devices.claim_uid
    inner join claim_sizes
        on
            pod_evidence.cluster = claim_sizes.cluster
            and pod_evidence.claim_uid = claim_sizes.claim_uid
),

held as (
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
                    sum({{ mig_compute_slices('mig_profile') }}) / count(distinct gpu_key) as double
                )
        end as mig_compute_slices_per_gpu,
        min(claim_evidence) as claim_evidence
    from pod_devices
    group by 1
),

-- unseen pods no claim speaks for: a GPU of their node per claim, share unknown
unknown as (
    select
        'kubernetes:' || unseen_pods.cluster || ':' || unseen_pods.pod_uid as job_key,
        cast({{ item_count('unseen_pods.claim_names') }} as integer) as claimed_gpus,
        cast(0 as integer) as claimed_mig_devices,
        cast(0 as integer) as claimed_mig_gpus,
        cast(null as {{ dbt.type_string() }}) as mig_profile,
        cast(null as integer) as mig_profile_id,
        'dra' as sharing_mode,
        cast(null as integer) as mps_active_thread_pct,
        cast(null as double) as mig_compute_slices_per_gpu,
        'none' as claim_evidence
    from unseen_pods
    left join borrowed
        on
            unseen_pods.cluster = borrowed.cluster
            and unseen_pods.pod_uid = borrowed.pod_uid
    where borrowed.pod_uid is null
),

final as (
    select * from held
    union all
    select * from unknown
)

select * from final
