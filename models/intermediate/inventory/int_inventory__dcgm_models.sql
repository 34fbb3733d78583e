-- grain: one row per GPU model name DCGM reports (model_name)
{#-
    Which catalogue GPU each DCGM model name is. A name is the catalogue model whose DCGM name it is
    (case, spaces and `-` aside). An NVIDIA vGPU guest's driver names its virtual GPU after the
    physical one and its profile, `GRID <GPU>-<frame buffer GB><series>` or `NVIDIA ...` (`GRID A100-10C`:
    10 GB of an A100's memory, C-series for compute; Q, B and A are the other series; letters after
    the GPU, as in A100D or H100XM, name a variant): its model is the parent's, the catalogue model
    of the longest family the GPU part starts with whose memory holds the frame buffer, the smallest
    such, SXM before PCIe (A100-10C -> A100-SXM4-40GB, A100D-80C -> A100-SXM4-80GB), and vgpu_share
    the frame buffer over the parent's memory (10/40). A name neither way resolves keeps a null model
    (fct_unknown_accelerators lists it).
#}
with dcgm_series as (
    select * from {{ ref('stg_dcgm__series') }}
),

gpu_models as (
    select * from {{ ref('gpu_models') }}
),

names as (
    select distinct model_name
    from dcgm_series
    where model_name is not null
),

vgpu_names as (
    select
        model_name,
        lower({{ regexp_group('model_name', '^(?:GRID|NVIDIA) ([A-Za-z]+[0-9]+[A-Za-z]*)-[0-9]+[ABCQ]$') }})
            as parent_key,
        {{ regexp_int('model_name', '^(?:GRID|NVIDIA) [A-Za-z]+[0-9]+[A-Za-z]*-([0-9]+)[ABCQ]$') }}
            as framebuffer_gb,
        {{ regexp_group('model_name', '^(?:GRID|NVIDIA) [A-Za-z]+[0-9]+[A-Za-z]*-([0-9]+[ABCQ])$') }}
            as vgpu_profile
    from names
),

catalogue as (
    select
        gpu_model,
        memory_gb,
        dcgm_model_name,
        {{ regexp_group('lower(gpu_model)', '^([a-z]+[0-9]+[a-z]*)') }} as family
    from gpu_models
),

-- a vGPU's parent: the longest catalogue family its GPU part starts with, then the smallest model
-- of that family whose memory holds the frame buffer, SXM before PCIe
vgpu_parents as (
    select
        model_name,
        gpu_model,
        vgpu_profile,
        framebuffer_gb,
        memory_gb
    from (
        select
            vgpu_names.model_name,
            vgpu_names.vgpu_profile,
            vgpu_names.framebuffer_gb,
            catalogue.gpu_model,
            catalogue.memory_gb,
            row_number() over (
                partition by vgpu_names.model_name
                order by
                    length(catalogue.family) desc,
                    catalogue.memory_gb asc,
                    case when lower(catalogue.gpu_model) like '%pcie%' then 1 else 0 end,
                    catalogue.gpu_model asc
            ) as parent_rank
        from vgpu_names
        inner join catalogue
            on
                vgpu_names.parent_key like catalogue.family || '%'
                and vgpu_names.framebuffer_gb <= catalogue.memory_gb
        where vgpu_names.parent_key is not null
    ) as ranked
    where parent_rank = 1
),

final as (
    select
        names.model_name,
        coalesce(exact.gpu_model, vgpu_parents.gpu_model) as gpu_model,
        exact.gpu_model is null and vgpu_parents.gpu_model is not null as is_vgpu,
        case when exact.gpu_model is null then vgpu_parents.vgpu_profile end as vgpu_profile,
        case
            when exact.gpu_model is null
                then cast(vgpu_parents.framebuffer_gb as double) / vgpu_parents.memory_gb
        end as vgpu_share
    from names
    left join catalogue as exact
        on lower(replace(names.model_name, '-', ' ')) = lower(replace(exact.dcgm_model_name, '-', ' '))
    left join vgpu_parents
        on names.model_name = vgpu_parents.model_name
)

select * from final
