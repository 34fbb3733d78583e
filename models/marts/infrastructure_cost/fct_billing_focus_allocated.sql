-- grain: one row per billing row of fct_billing_focus x its allocated consumer: a GPU instance's usage row that GPU Ledger attributes is split into one row per job attempt that held its GPUs and one for the idle rest; every other row once, as it is
{#-
    The FOCUS 1.3 cost and usage dataset (`gpu-ledger export focus --focus-version 1.3`): fct_billing_focus
    with the columns FOCUS 1.3 added, and every GPU charge we attribute replaced by its allocated charges
    (FOCUS 1.3 "data generator-calculated split cost allocation": the origin charge is split into
    allocated charges from which it can be derived). The split applies fct_gpu_hour_allocations' rule, so
    a team's GPU cost here is the cost the marts give it:

    - a usage row of a GPU instance covers instance-hours (pro rata over its charge period, as
      int_billing__gpu_instance_hours spreads it); each instance-hour is shared equally by the instance's
      billed GPU-hours (fct_gpu_hours), and each GPU-hour by its consumers in proportion to their
      cost_share (on the GPU-hour's split_basis: held time x share of the GPU, or measured use; idle the
      rest); AllocatedMethodDetails' x_SplitBasis says which (the basis the row's GPU-hours share, else
      `mixed`; `unallocated` for idle on GPU-hours no job held);
    - a consumer's AllocatedRatio is the sum of those parts over the row's GPU-hours, normalised over the
      row's consumers so that the ratios add up to 1;
    - every summable metric (focus_summable_columns()) is the origin's x AllocatedRatio at 10 decimals,
      the largest consumer taking the rounding remainder, so the split rows sum to the origin charge
      exactly; dimensions and unit prices repeat the origin's.

    A GPU row no GPU-hour attributes (no GPUs known for its instance) stays whole, as every non-GPU row.
    The YAML says which reading of FOCUS 1.3 each new column takes.
-#}
{%- set columns = focus_1_3_columns() %}
{%- set summable = focus_summable_columns() %}
{%- set prefix = focus_allocated_tag_prefix() %}
with focus as (
    select * from {{ ref('fct_billing_focus') }}
),

drawdown as (
    select * from {{ ref('int_billing__commitment_drawdown') }}
),

-- each row with the contract of the commitment it names, where the Contract Commitment dataset states one
billing as (
    select
        focus.*,
        drawdown.contract_id,
        {{ focus_charge_key() }} as charge_key
    from focus
    left join drawdown
        on
            focus.CommitmentDiscountId = drawdown.commitment_id
            and {{ utc_date('focus.ChargePeriodStart') }} = drawdown.day
),

gpu_hours as (
    select * from {{ ref('fct_gpu_hours') }}
),

allocations as (
    select * from {{ ref('fct_gpu_hour_allocations') }}
),

jobs as (
    select * from {{ ref('dim_jobs') }}
),

pod_days as (
    select * from {{ ref('int_inference__pod_days') }}
),

-- what each serving pod (its job attempt) served each UTC day
job_day_tokens as (
    select
        job_key,
        day,
        case when min(model_name) = max(model_name) then min(model_name) end as model_id,
        {{ exact_sum('input_tokens') }} as input_tokens,
        {{ exact_sum('output_tokens') }} as output_tokens
    from pod_days
    where job_key is not null
    group by job_key, day
),

-- the rows int_billing__gpu_instance_hours spreads over instance-hours: usage of a GPU instance
gpu_charges as (
    select
        charge_key,
        {{ focus_provider('ProviderName') }} as provider,
        x_InstanceId as instance_id,
        ChargePeriodStart as charge_period_start,
        ChargePeriodEnd as charge_period_end,
        {{ unnest_hour_starts('ChargePeriodStart', 'ChargePeriodEnd') }} as hour_start
    from billing
    where
        x_IsGpuInstance
        and x_InstanceId is not null
        and ChargeCategory = 'Usage'
        and coalesce(CommitmentDiscountStatus, '') <> 'Unused'
),

charge_hours as (
    select
        charge_key,
        provider,
        instance_id,
        hour_start,
        {{ seconds_between(
            'greatest(charge_period_start, hour_start)',
            'least(charge_period_end, hour_start + interval 1 hour)'
        ) }} as covered_seconds,
        {{ seconds_between('charge_period_start', 'charge_period_end') }} as period_seconds
    from gpu_charges
),

billed_gpu_hours as (
    select
        gpu_id,
        provider,
        instance_id,
        hour_start,
        count(*) over (partition by provider, instance_id, hour_start) as instance_gpus
    from gpu_hours
    where is_billed
),

-- each consumer's part of each instance-hour, summed over the instance's billed GPU-hours: per second of
-- the hour a row covers, its share of the row's cost (cost_share / the instance's GPUs, per second of
-- the row's period), GPU-hours held (a job: its share of the GPU x the seconds it held it; idle: the
-- seconds no job held) and measured busy. Summed per instance-hour before any billing row joins, so
-- that the rows join instance-hours on their whole key.
instance_hour_consumers as (
    select
        billed_gpu_hours.provider,
        billed_gpu_hours.instance_id,
        billed_gpu_hours.hour_start,
        allocations.consumer,
        max(allocations.consumer_type) as consumer_type,
        max(allocations.job_key) as job_key,
        max(allocations.team) as team,
        max(allocations.project) as project,
        max(allocations.workload_class) as workload_class,
        max(allocations.environment) as environment,
        min(allocations.split_basis) as first_split_basis,
        max(allocations.split_basis) as last_split_basis,
        {{ exact_sum('allocations.cost_share / billed_gpu_hours.instance_gpus') }} as cost_share,
        {{ exact_sum('allocations.held_gpu_hours') }} as held_gpu_hours,
        {{ exact_sum('allocations.busy_gpu_hours') }} as busy_gpu_hours
    from billed_gpu_hours
    inner join allocations
        on
            billed_gpu_hours.gpu_id = allocations.gpu_id
            and billed_gpu_hours.hour_start = allocations.hour_start
    group by
        billed_gpu_hours.provider,
        billed_gpu_hours.instance_id,
        billed_gpu_hours.hour_start,
        allocations.consumer
),

-- each consumer's part of each row, instance-hour by instance-hour, within the part of the hour the
-- row covers
consumer_parts as (
    select
        charge_hours.charge_key,
        instance_hour_consumers.consumer,
        instance_hour_consumers.consumer_type,
        instance_hour_consumers.job_key,
        instance_hour_consumers.team,
        instance_hour_consumers.project,
        instance_hour_consumers.workload_class,
        instance_hour_consumers.environment,
        instance_hour_consumers.first_split_basis,
        instance_hour_consumers.last_split_basis,
        instance_hour_consumers.cost_share * charge_hours.covered_seconds / charge_hours.period_seconds as part,
        instance_hour_consumers.held_gpu_hours * charge_hours.covered_seconds / 3600.0 as held_gpu_hours,
        instance_hour_consumers.busy_gpu_hours * charge_hours.covered_seconds / 3600.0 as busy_gpu_hours
    from charge_hours
    inner join instance_hour_consumers
        on
            charge_hours.provider = instance_hour_consumers.provider
            and charge_hours.instance_id = instance_hour_consumers.instance_id
            and charge_hours.hour_start = instance_hour_consumers.hour_start
),

consumer_totals as (
    select
        charge_key,
        consumer,
        max(consumer_type) as consumer_type,
        max(job_key) as job_key,
        max(team) as team,
        max(project) as project,
        max(workload_class) as workload_class,
        max(environment) as environment,
        -- the split's basis over the row's GPU-hours: the one they share, else mixed
        case
            when min(first_split_basis) = max(last_split_basis) then min(first_split_basis)
            when min(first_split_basis) is not null then 'mixed'
        end as split_basis,
        {{ exact_sum('part') }} as part,
        {{ exact_sum('held_gpu_hours') }} as held_gpu_hours,
        {{ exact_sum('busy_gpu_hours') }} as busy_gpu_hours
    from consumer_parts
    group by charge_key, consumer
    -- a consumer with no part gets no row: idle on a GPU-hour its jobs filled keeps the float residue of
    -- 1 - the jobs' parts (about 1e-16, and not the same on every engine), far below any real part
    having {{ exact_sum('part') }} > 1e-12
),

ratios as (
    select
        *,
        part / {{ exact_sum('part', over='partition by charge_key') }} as allocated_ratio,
        row_number() over (partition by charge_key order by part desc, consumer asc) as part_rank
    from consumer_totals
),

-- each set of owner tags the split rows carry, as FOCUS AllocatedTags: built once per set (a few dozen),
-- not once per row, since a map to JSON is the dearest expression of the model
allocated_tag_sets as (
    select
        ratios.consumer_type,
        ratios.team,
        ratios.project,
        ratios.workload_class,
        ratios.environment,
        {{ map_to_json(string_map([
            (prefix ~ 'consumer', 'ratios.consumer_type'),
            (prefix ~ 'team', 'ratios.team'),
            (prefix ~ 'project', 'ratios.project'),
            (prefix ~ 'workload-class', 'ratios.workload_class'),
            (prefix ~ 'environment', 'ratios.environment'),
        ])) }} as allocated_tags
    from ratios
    group by ratios.consumer_type, ratios.team, ratios.project, ratios.workload_class, ratios.environment
),

split_charges as (
    select distinct charge_key from ratios
),

-- The select lists below are written column by column from focus_1_3_columns(): sqlfluff cannot lay out a
-- comma that Jinja writes, so indentation is not checked from here on.
-- noqa: disable=LT02
-- each consumer's amounts: the origin's x AllocatedRatio at 10 decimals, the largest consumer taking the
-- rounding remainder, so that the split rows sum to the origin exactly; and its job's tokens. All on narrow
-- rows, the wide FOCUS columns joined last; sums grouped, then joined back (a window costs several times more).
split_amounts as (
    select
        ratios.*,
        {{ utc_date('billing.ChargePeriodStart') }} as charge_day,
        {%- for name in summable %}
        cast(billing.{{ name }} * ratios.allocated_ratio as decimal(38, 10)) as split_{{ name }},
        billing.{{ name }} as billed_{{ name }}{{ "," if not loop.last }}
        {%- endfor %}
    from ratios
    inner join billing
        on ratios.charge_key = billing.charge_key
),

-- the sum of each charge's split amounts, whose difference from the origin its largest consumer takes
split_totals as (
    select
        charge_key,
        {%- for name in summable %}
        sum(split_{{ name }}) as split_total_{{ name }}{{ "," if not loop.last }}
        {%- endfor %}
    from split_amounts
    group by charge_key
),

-- GPU-hours each job attempt held each UTC day, over the charges that allocate it
job_day_held as (
    select
        job_key,
        charge_day,
        {{ exact_sum('held_gpu_hours') }} as held_gpu_hours
    from split_amounts
    where job_key is not null
    group by job_key, charge_day
),

allocated_amounts as (
    select
        {%- for name in summable %}
        case
            when split_amounts.part_rank = 1
                then
                    split_amounts.billed_{{ name }} + split_amounts.split_{{ name }}
                    - split_totals.split_total_{{ name }}
            else split_amounts.split_{{ name }}
        end as allocated_{{ name }},
        {%- endfor %}
        split_amounts.charge_key,
        split_amounts.consumer,
        split_amounts.consumer_type,
        split_amounts.job_key,
        split_amounts.team,
        split_amounts.project,
        split_amounts.workload_class,
        split_amounts.environment,
        split_amounts.split_basis,
        split_amounts.allocated_ratio,
        split_amounts.held_gpu_hours,
        split_amounts.busy_gpu_hours,
        -- a pod's day of tokens spread over the charges that allocate it GPU time that day, by GPU-hours held
        job_day_tokens.model_id,
        job_day_tokens.input_tokens * split_amounts.held_gpu_hours / nullif(job_day_held.held_gpu_hours, 0)
            as input_tokens,
        job_day_tokens.output_tokens * split_amounts.held_gpu_hours / nullif(job_day_held.held_gpu_hours, 0)
            as output_tokens
    from split_amounts
    inner join split_totals
        on split_amounts.charge_key = split_totals.charge_key
    left join job_day_tokens
        on
            split_amounts.job_key = job_day_tokens.job_key
            and split_amounts.charge_day = job_day_tokens.day
    left join job_day_held
        on
            split_amounts.job_key = job_day_held.job_key
            and split_amounts.charge_day = job_day_held.charge_day
),

split_parts as (
    select
        billing.*,
        {%- for name in summable %}
        allocated_amounts.allocated_{{ name }},
        {%- endfor %}
        allocated_amounts.consumer,
        allocated_amounts.consumer_type,
        allocated_amounts.job_key,
        allocated_amounts.team,
        allocated_amounts.project,
        allocated_amounts.workload_class,
        allocated_amounts.environment,
        allocated_amounts.split_basis,
        allocated_amounts.allocated_ratio,
        allocated_amounts.held_gpu_hours,
        allocated_amounts.busy_gpu_hours,
        allocated_amounts.model_id,
        allocated_amounts.input_tokens,
        allocated_amounts.output_tokens
    from billing
    inner join allocated_amounts
        on billing.charge_key = allocated_amounts.charge_key
),

split_rows as (
    select
    {%- for name, kind in columns %}
        {%- if name in summable %}
        split_parts.allocated_{{ name }} as {{ name }},
        {%- elif name == 'AllocatedMethodId' %}
        '{{ focus_allocated_method_id() }}' as AllocatedMethodId,
        {%- elif name == 'AllocatedMethodDetails' %}
        {{ json_elements([
            ('AllocatedRatio', 'split_parts.allocated_ratio'),
            ('UsageUnit', "'GPU-Hours'"),
            ('UsageQuantity', 'cast(round(cast(split_parts.held_gpu_hours as decimal(38, 9)), 6) as double)'),
            ('x_BusyGpuHours', 'cast(round(cast(split_parts.busy_gpu_hours as decimal(38, 9)), 6) as double)'),
            ('x_SharingMode', "coalesce(jobs.sharing_mode, 'unallocated')"),
            ('x_SplitBasis', "coalesce(split_parts.split_basis, 'unallocated')"),
        ]) }} as AllocatedMethodDetails,
        {%- elif name == 'AllocatedResourceId' %}
        -- FOCUS 1.3: null on the unallocated portion of the origin charge (idle)
        split_parts.job_key as AllocatedResourceId,
        {%- elif name == 'AllocatedResourceName' %}
        case
            when split_parts.job_key is not null then coalesce(jobs.name, split_parts.job_key)
        end as AllocatedResourceName,
        {%- elif name == 'AllocatedTags' %}
        allocated_tag_sets.allocated_tags as AllocatedTags,
        {%- elif name == 'ContractApplied' %}
        {{ focus_contract_applied(
            'split_parts', 'split_parts.allocated_EffectiveCost', 'split_parts.allocated_CommitmentDiscountQuantity'
        ) }} as ContractApplied,
        {%- elif name in ('ServiceProviderName', 'HostProviderName') %}
        split_parts.ProviderName as {{ name }},
        {%- else %}
        split_parts.{{ name }},
        {%- endif %}
    {%- endfor %}
        split_parts.model_id as x_ModelId,
        split_parts.input_tokens as x_InputTokens,
        split_parts.output_tokens as x_OutputTokens,
        split_parts.charge_key
    from split_parts
    left join jobs
        on split_parts.job_key = jobs.job_key
    inner join allocated_tag_sets
        on
            split_parts.consumer_type is not distinct from allocated_tag_sets.consumer_type
            and split_parts.team is not distinct from allocated_tag_sets.team
            and split_parts.project is not distinct from allocated_tag_sets.project
            and split_parts.workload_class is not distinct from allocated_tag_sets.workload_class
            and split_parts.environment is not distinct from allocated_tag_sets.environment
),

whole_rows as (
    select
    {%- for name, kind in columns %}
        {%- if name in ('ServiceProviderName', 'HostProviderName') %}
        billing.ProviderName as {{ name }},
        {%- elif name == 'ContractApplied' %}
        {{ focus_contract_applied('billing', 'billing.EffectiveCost', 'billing.CommitmentDiscountQuantity') }}
            as ContractApplied,
        {%- elif name.startswith('Allocated') %}
        cast(null as string) as {{ name }},
        {%- else %}
        billing.{{ name }},
        {%- endif %}
    {%- endfor %}
        cast(null as string) as x_ModelId,
        cast(null as double) as x_InputTokens,
        cast(null as double) as x_OutputTokens,
        billing.charge_key
    from billing
    left join split_charges
        on billing.charge_key = split_charges.charge_key
    where split_charges.charge_key is null
),

unioned as (
    select * from split_rows
    union all
    select * from whole_rows
),

final as (
    select
    {%- for name, kind in columns %}
        cast({{ name }} as {{ focus_type(kind) }}) as {{ name }},
    {%- endfor %}
        cast(x_ModelId as {{ focus_type('string') }}) as x_ModelId,
        cast(x_InputTokens as {{ focus_type('number') }}) as x_InputTokens,
        cast(x_OutputTokens as {{ focus_type('number') }}) as x_OutputTokens
    from unioned
)

select * from final
