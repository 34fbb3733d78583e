{#-
    The projection every recommendation rule (int_recommendations__spot_moves, __idle_machines,
    __rightsized_machines, __inference_pools) ends with, so that fct_purchasing_recommendations is a
    plain union of them: the 29 columns in one order, as the rule marts publish them. The rule's last
    CTE names the columns it has a value for; the ones in `absent` (what the rule does not give, such
    as commit_instances outside buy_commitment) are typed nulls. A figure is cast to its type; a name
    typed `name` is a string, cast only when null; a column without a type every rule must give.
-#}
{% macro recommendation_columns(absent=[]) -%}
    {%- set columns = [
        ('recommendation_type', none), ('action', none), ('provider', none), ('region', none),
        ('instance_type', none), ('instance_family', none), ('gpu_model', none), ('workload_class', none),
        ('team', none), ('project', none), ('resource_id', 'name'), ('target_instance_type', 'name'),
        ('price_source', none), ('lookback_start', none), ('lookback_end', none),
        ('lookback_days', 'double'), ('p50_gpus', 'double'), ('p95_gpus', 'double'), ('peak_gpus', 'double'),
        ('avg_gpu_util_pct', 'double'), ('interruption_rate', 'double'), ('retry_overhead_pct', 'double'),
        ('idle_hours', 'double'), ('commit_instances', 'integer'), ('discount_pct', 'double'),
        ('target_gpu_hourly_cost', 'double'), ('current_monthly_cost', 'double'),
        ('projected_monthly_cost', 'double'), ('rationale', none),
    ] %}
    {%- for name, type in columns %}
        {%- if name in absent and type is none %}
            {{- exceptions.raise_compiler_error('recommendation_columns: every rule gives ' ~ name) }}
        {%- elif name in absent %}
        cast(null as {{ dbt.type_string() if type == 'name' else type }}) as {{ name }}
        {%- elif type in (none, 'name') %}
        {{ name }}
        {%- else %}
        cast({{ name }} as {{ type }}) as {{ name }}
        {%- endif %}{{ ',' if not loop.last }}
    {%- endfor %}
{%- endmacro %}
