-- grain: one row per UTC day x model x deployment (day, model, namespace, deployment)
{#
    Inference unit economics from the servers' own token counters: per model and deployment (the
    serving pods of one Kubernetes Deployment) and day, the tokens and requests served
    (int_inference__pod_token_days), beside the GPU time, cost and DCGM energy of the pods that served
    them (int_inference__pod_days). Two cost bases:
    - allocation: the pods' whole GPU cost, idle time included (what the GPUs held cost);
    - busy: each pod-day's cost x its busy / held GPU-hours (what the measured busy GPU time cost).
    Split between input and output tokens (var token_cost_output_weight, w, default 1): input share
    = input / (input + w x output tokens), output share = w x output / (input + w x output); w = 1 is
    by token count. cost per 1M input tokens = cost x input share x 1e6 / input tokens (null without
    input tokens), likewise output. Energy and carbon per token are over all tokens, input and output.
    model (named as in fct_model_unit_economics): the server's model_name label, else (TGI names none) the
    deployment.
#}
with

pod_days as (
    select * from {{ ref('int_inference__pod_days') }}
),

daily as (
    select
        day,
        coalesce(model_name, deployment) as model,  -- noqa: RF04
        pod_namespace as namespace,
        deployment,
        max(inference_server) as inference_server,
        count(distinct pod_name) as serving_pods,
        {{ exact_sum('input_tokens') }} as input_tokens,
        {{ exact_sum('output_tokens') }} as output_tokens,
        {{ exact_sum('requests') }} as requests,
        {{ exact_sum('held_gpu_hours') }} as held_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours,
        {{ exact_sum('energy_kwh') }} as energy_kwh,
        {{ exact_sum('carbon_kg_co2e') }} as carbon_kg_co2e,
        {{ exact_sum('allocation_cost') }} as allocation_cost,
        {{ exact_sum('busy_cost') }} as busy_cost
    from pod_days
    group by day, coalesce(model_name, deployment), pod_namespace, deployment
),

shares as (
    select
        *,
        input_tokens + output_tokens as tokens,
        case
            when input_tokens + {{ var('token_cost_output_weight') }} * output_tokens > 0
                then input_tokens / (input_tokens + {{ var('token_cost_output_weight') }} * output_tokens)
        end as input_cost_share
    from daily
),

final as (
    select
        -- dimensions
        day,
        model,
        namespace,
        deployment,
        inference_server,
        -- numerics
        cast(serving_pods as integer) as serving_pods,
        cast(input_tokens as bigint) as input_tokens,
        cast(output_tokens as bigint) as output_tokens,
        cast(requests as bigint) as requests,
        held_gpu_hours,
        busy_gpu_hours,
        energy_kwh,
        input_cost_share,
        case when tokens > 0 then energy_kwh * 3600000.0 / tokens end as energy_j_per_token,
        case when tokens > 0 then energy_kwh * 3600000.0 * 1000000.0 / tokens end as energy_j_per_1m_tokens,
        case when tokens > 0 then energy_kwh * 1000.0 * 1000000.0 / tokens end as energy_wh_per_1m_tokens,
        carbon_kg_co2e,
        case when tokens > 0 then carbon_kg_co2e * 1000000.0 / tokens end as carbon_kg_co2e_per_1m_tokens,
        case when held_gpu_hours > 0 then tokens / (held_gpu_hours * 3600.0) end as tokens_per_gpu_second,
        case when busy_gpu_hours > 0 then tokens / (busy_gpu_hours * 3600.0) end as tokens_per_busy_gpu_second,
        -- costs
        {{ money('allocation_cost') }} as allocation_cost,
        {{ money('busy_cost') }} as busy_cost,
        {{ money('case when input_tokens > 0 then busy_cost * input_cost_share * 1000000.0 / input_tokens end') }}
            as cost_per_1m_input_tokens_busy,
        {{ money(
            'case when output_tokens > 0 then busy_cost * (1 - input_cost_share) * 1000000.0 / output_tokens end'
        ) }} as cost_per_1m_output_tokens_busy,
        {{ money('case when input_tokens > 0 then allocation_cost * input_cost_share * 1000000.0 / input_tokens end') }}
            as cost_per_1m_input_tokens_allocation,
        {{ money(
            'case when output_tokens > 0 then allocation_cost * (1 - input_cost_share) * 1000000.0 / output_tokens end'
        ) }} as cost_per_1m_output_tokens_allocation
    from shares
)

select * from final
