-- grain: one row per job attempt × GPU (× MIG instance) that names it: DCGM labels, or a generic job's own GPUs
{#-
    The most precise evidence of which GPUs a job attempt held (interface §5): DCGM series whose labels
    name the attempt, on Kubernetes its pod uid (anywhere, any time), else its pod name and namespace
    on one of its nodes while it ran; on Slurm hpc_job = the job id or raw id on one of its nodes while
    it ran. A MIG instance carries share g / its GPU's compute slices (g from its profile's `<g>g` prefix,
    the GPU's from the job's GPU model: int_workloads__jobs), a whole GPU the
    job's own gpu_share (1, or what it declared it may use of the GPU: int_workloads__jobs). A
    generic-CSV job's own gpu_uuids count the same way (evidence scheduler_spread: the scheduler's word).
    Attempts no evidence names are spread over their nodes (int_workloads__job_gpu_intervals).
#}
{%- set label_conditions = {
    'pod_uid': "holds.scheduler = 'kubernetes' and consumers.pod_uid = holds.job_id",
    'pod_name': "holds.scheduler = 'kubernetes' and consumers.pod_uid is null"
        ~ " and consumers.pod_name = holds.name and consumers.pod_namespace = holds.namespace",
    'hpc_job': "holds.scheduler = 'slurm' and consumers.hpc_job_id in (holds.job_id, holds.job_id_raw)",
} %}
with holds as (
    select * from {{ ref('int_workloads__job_holds') }}
),

consumers as (
    select * from {{ ref('int_workloads__dcgm_gpu_consumers') }}
),
{% for label, condition in label_conditions.items() %}
{{ label }}_matches as (
    -- series labelled with the attempt's {{ label }}
    select
        holds.job_key,
        consumers.gpu_uuid,
        consumers.gpu_index,
        consumers.hostname,
        consumers.mig_instance_id,
        consumers.mig_profile
    from holds
    inner join consumers
        on
            {{ condition }}
            {%- if label != 'pod_uid' %}
            and (consumers.hostname is null or {{ contains_item('holds.hostnames', 'consumers.hostname') }})
            and (consumers.first_sample_at is null or holds.held_until > consumers.first_sample_at)
            and (consumers.last_sample_at is null or holds.started_at <= consumers.last_sample_at)
            {%- endif %}
),
{% endfor %}
generic_device_matches as (
    select
        holds.job_key,
        device.gpu_uuid,
        cast(null as integer) as gpu_index,
        case when holds.host_count = 1 then {{ first_item('holds.hostnames') }} end as hostname,
        cast(null as integer) as mig_instance_id,
        holds.mig_profile
    from holds,
        {{ unnest_rows('holds.gpu_uuids', 'device', 'gpu_uuid') }}
    where holds.scheduler = 'generic'
),

labelled_gpus as (
    select distinct * from (
        {%- for label in label_conditions %}
        select * from {{ label }}_matches
        union all
        {%- endfor %}
        select * from generic_device_matches
    ) as matches
),

final as (
    select
        holds.job_key,
        coalesce(labelled_gpus.gpu_uuid, labelled_gpus.hostname || ':' || cast(labelled_gpus.gpu_index as string))
            as gpu_uuid,
        labelled_gpus.hostname,
        labelled_gpus.mig_instance_id,
        labelled_gpus.mig_profile,
        coalesce(
            cast({{ mig_compute_slices('labelled_gpus.mig_profile') }} as double) / holds.gpu_compute_slices,
            holds.slice_share
        ) as share,
        holds.started_at,
        holds.held_until as ended_at,
        case when holds.scheduler = 'generic' then 'scheduler_spread' else 'dcgm_labels' end as evidence
    from holds
    inner join labelled_gpus
        on holds.job_key = labelled_gpus.job_key
)

select * from final
