{#- The warehouse's provider key for a FOCUS row: from the raw source where it names one provider,
    else from FOCUS ProviderName. -#}
{% macro focus_provider(provider_name, source) -%}
    case
        when {{ source }} in ('aws_cur', 'aws_cur_legacy') then 'aws'
        when {{ source }} = 'azure_cost' then 'azure'
        when {{ source }} = 'gcp_billing' then 'gcp'
        when {{ source }} = 'onprem_assets' then 'onprem'
        when lower({{ provider_name }}) in ('aws', 'amazon web services') then 'aws'
        when lower({{ provider_name }}) in ('microsoft', 'azure', 'microsoft azure') then 'azure'
        when lower({{ provider_name }}) in ('google cloud', 'gcp', 'google') then 'gcp'
        when lower({{ provider_name }}) in ('oracle', 'oci', 'oracle cloud infrastructure') then 'oci'
        when lower({{ provider_name }}) = 'on-premises' then 'onprem'
        else lower({{ provider_name }})
    end
{%- endmacro %}
