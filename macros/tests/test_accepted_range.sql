{#- Generic test: every non-null value of the column lies within [min_value, max_value] (either bound may be
    left out). Physical figures (grid intensity, PUE, kg CO2e) have bounds outside which a value is an
    error in the data, not a fact. -#}
{% test accepted_range(model, column_name, min_value=none, max_value=none) %}
select {{ column_name }}
from {{ model }}
where
    {%- if min_value is not none %}
        {{ column_name }} < {{ min_value }}
    {%- endif %}
    {%- if min_value is not none and max_value is not none %} or{% endif %}
    {%- if max_value is not none %}
        {{ column_name }} > {{ max_value }}
    {%- endif %}
{% endtest %}
