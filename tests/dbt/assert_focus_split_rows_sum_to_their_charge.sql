-- Fails for any billing row whose rows in the FOCUS 1.3 dataset (its allocated charges, or the row itself when
-- it is not split) do not sum to it in every summable metric, to the cent, or whose AllocatedRatios do not
-- add up to 1: the split-cost allocation lost or invented money.
{%- set summable = focus_summable_columns() %}
with origin as (
    select
        {{ focus_charge_key() }} as charge_key,
        {%- for name in summable %}
        {{ name }},
        {%- endfor %}
        1 as origin_rows
    from {{ ref('fct_billing_focus') }}
),

allocated as (
    select
        {{ focus_charge_key() }} as charge_key,
        {%- for name in summable %}
        sum({{ name }}) as {{ name }},
        {%- endfor %}
        sum(
            case
                when AllocatedMethodId is null then 1
                else cast({{ json_text('AllocatedMethodDetails', '$.Elements[0].AllocatedRatio') }} as double)
            end
        ) as ratio_sum
    from {{ ref('fct_billing_focus_allocated') }}
    group by {{ focus_charge_key() }}
)

select
    coalesce(origin.charge_key, allocated.charge_key) as charge_key,
    allocated.ratio_sum
from origin
full outer join allocated
    on origin.charge_key = allocated.charge_key
where
    origin.charge_key is null
    or allocated.charge_key is null
    or abs(allocated.ratio_sum - 1) > 0.000001
    {%- for name in summable %}
    or abs(coalesce(origin.{{ name }}, 0) - coalesce(allocated.{{ name }}, 0)) > 0.005
    {%- endfor %}
