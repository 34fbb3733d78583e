{#-
    Telemetry helpers. Engine-specific SQL is in the dispatched macros these call
    (macros/text/text_sql.sql), so that the models stay portable.
-#}

{#- Compute slices (g) of a MIG profile name, read from its `<g>g` prefix (`7g.79gb` -> 7);
    null when the name has no such prefix. The one reading of a profile, for DCGM series and
    scheduler requests alike. -#}
{% macro mig_compute_slices(profile) -%}
    {{ regexp_int(profile, '^\s*(\d+)g') }}
{%- endmacro %}

{#- Compute slices a whole GPU has under MIG, given its model's gpu_models.mig_compute_slices (4 on an
    A30): 7, the A100's, H100's, H200's and B200's, where the model is unknown or lists none. A slice of
    g compute slices is g / this of its GPU. -#}
{% macro gpu_compute_slices(model_mig_compute_slices) -%}
    cast(coalesce({{ model_mig_compute_slices }}, 7) as integer)
{%- endmacro %}

{#- What a cumulative counter (an energy meter, a token count) adds from one reading to the next: nothing
    after a series' last reading, the difference while it grows, and the next reading itself after a
    decrease, which is a reset (the counter started again from zero), as Prometheus' increase() reads one. -#}
{% macro counter_increase(value, next_value) -%}
    case
        when {{ next_value }} is null then 0
        when {{ next_value }} >= {{ value }} then {{ next_value }} - {{ value }}
        else {{ next_value }}
    end
{%- endmacro %}
