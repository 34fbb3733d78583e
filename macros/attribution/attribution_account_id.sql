{#-
    The account a GPU's cost belongs to, the same for every provider's bill: the AWS usage account,
    the Azure subscription id (without its `/subscriptions/` prefix, as providerID spells it), the GCP
    project, and for on-prem the site that owns the asset.
-#}
{% macro attribution_account_id(provider, billing_account_id, sub_account_id) -%}
    case
        when {{ provider }} = 'onprem' then {{ billing_account_id }}
        when {{ provider }} = 'azure'
            then coalesce({{ regexp_group(sub_account_id, '/subscriptions/([^/]+)') }}, {{ sub_account_id }})
        else coalesce({{ sub_account_id }}, {{ billing_account_id }})
    end
{%- endmacro %}
