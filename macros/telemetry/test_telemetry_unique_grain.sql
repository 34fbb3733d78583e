{#- Generic test: no two rows share the grain's columns (nulls count as equal, as a grain with
    `mig_instance_id` null for the whole GPU needs). -#}
{% test telemetry_unique_grain(model, columns) %}
select
    {% for column in columns %}{{ column }}, {% endfor %}
    count(*) as rows_at_grain
from {{ model }}
group by {% for column in columns %}{{ column }}{{ ", " if not loop.last }}{% endfor %}
having count(*) > 1
{% endtest %}
