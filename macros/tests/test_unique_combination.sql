{#- Generic test: no two rows share the values of `columns` (nulls count as equal, as a grain with a
    null MIG instance for the whole GPU needs). -#}
{% test unique_combination(model, columns) %}
select
    {{ columns | join(', ') }},
    count(*) as rows_at_grain
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
