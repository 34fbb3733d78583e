{#-
    Engine-specific SQL that only the purchasing recommendations need (intermediate/recommendations),
    dispatched so that another adapter can supply its own spelling (interface §7); the default is
    DuckDB's. The generic time, text and list pieces they use are in macros/time, macros/text and
    macros/lists.
-#}

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
{% macro spark__recommendations_instance_family(provider, instance_type) -%}
    case
        when {{ provider }} = 'aws' and instr({{ instance_type }}, '.') > 0
            then split_part({{ instance_type }}, '.', 1)
        when {{ provider }} = 'gcp' and instr({{ instance_type }}, '-') > 0
            then split_part({{ instance_type }}, '-', 1)
        when {{ provider }} = 'azure'
            then regexp_replace(
                regexp_replace({{ instance_type }}, '^Standard_', ''), '^([A-Za-z]+)[0-9]+', '$1'
            )
        else {{ instance_type }}
    end
{%- endmacro %}
