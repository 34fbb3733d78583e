{#-
    Engine-specific SQL used by the purchasing recommendations (intermediate/recommendations and
    fct_purchasing_recommendations). Each is dispatched so that another adapter can supply its own
    spelling (CONTRACT §7); the default is DuckDB's.
-#}

{#- One row per clock hour in [start_ts, end_ts), as a select-list expression (both on the hour). -#}
{% macro recommendations_hour_series(start_ts, end_ts) -%}
    {{ return(adapter.dispatch('recommendations_hour_series', 'gpu_ledger')(start_ts, end_ts)) }}
{%- endmacro %}
{% macro default__recommendations_hour_series(start_ts, end_ts) -%}
    unnest(generate_series({{ start_ts }}, {{ end_ts }} - interval 1 hour, interval 1 hour))
{%- endmacro %}

{#- An instant a whole number of days earlier. -#}
{% macro recommendations_days_before(ts, days) -%}
    {{ return(adapter.dispatch('recommendations_days_before', 'gpu_ledger')(ts, days)) }}
{%- endmacro %}
{% macro default__recommendations_days_before(ts, days) -%}
    ({{ ts }} - to_days(cast({{ days }} as integer)))
{%- endmacro %}

{#-
    The instance family of a cloud instance type: AWS `p4d.24xlarge` -> `p4d`; GCP `a2-highgpu-1g`
    -> `a2`; Azure `Standard_NC24ads_A100_v4` -> `NCads_A100_v4` (the size digits dropped);
    anything else (on-prem server models) is its own family.
-#}
{% macro recommendations_instance_family(provider, instance_type) -%}
    {{ return(adapter.dispatch('recommendations_instance_family', 'gpu_ledger')(provider, instance_type)) }}
{%- endmacro %}
{% macro default__recommendations_instance_family(provider, instance_type) -%}
    case
        when {{ provider }} = 'aws' and strpos({{ instance_type }}, '.') > 0
            then split_part({{ instance_type }}, '.', 1)
        when {{ provider }} = 'gcp' and strpos({{ instance_type }}, '-') > 0
            then split_part({{ instance_type }}, '-', 1)
        when {{ provider }} = 'azure'
            then regexp_replace(
                regexp_replace({{ instance_type }}, '^Standard_', ''), '^([A-Za-z]+)[0-9]+', '\1'
            )
        else {{ instance_type }}
    end
{%- endmacro %}

{#- A number as text with thousands separators and `decimals` decimals (for rationales). -#}
{% macro recommendations_format_number(expression, decimals=0) -%}
    {{ return(adapter.dispatch('recommendations_format_number', 'gpu_ledger')(expression, decimals)) }}
{%- endmacro %}
{% macro default__recommendations_format_number(expression, decimals=0) -%}
    format('{:,.{{ decimals }}f}', cast({{ expression }} as double))
{%- endmacro %}

{#- An instant as `YYYY-MM-DD HH:MM UTC` text. -#}
{% macro recommendations_format_instant(ts) -%}
    {{ return(adapter.dispatch('recommendations_format_instant', 'gpu_ledger')(ts)) }}
{%- endmacro %}
{% macro default__recommendations_format_instant(ts) -%}
    (strftime(timezone('UTC', {{ ts }}), '%Y-%m-%d %H:%M') || ' UTC')
{%- endmacro %}
