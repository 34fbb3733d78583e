{#-
    Telemetry helpers. Engine-specific SQL is in the dispatched macros these call
    (macros/text/text_sql.sql), so that the models stay portable.
-#}

{#- Compute slices (g of 7) of a MIG profile name, read from its `<g>g` prefix (`7g.79gb` -> 7);
    null when the name has no such prefix. The one reading of a profile, for DCGM series and
    scheduler requests alike. -#}
{% macro mig_compute_slices(profile) -%}
    {{ regexp_int(profile, '^\s*(\d+)g') }}
{%- endmacro %}

