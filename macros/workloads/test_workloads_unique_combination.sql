{#- Fails for every combination of `columns` that appears more than once (nulls compare equal). -#}
{% test workloads_unique_combination(model, columns) %}
    select
        {{ columns | join(', ') }},
        count(*) as occurrences
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1
{% endtest %}
