{#-
    The billing provider registry (dbt_project.yml, vars `billing_focus_parts` and `billing_providers`; docs/adding.md
    "Add a billing provider"): which FOCUS parts int_billing__focus_lines unions and int_billing__data_window
    spans, which ingest formats they map, and the provider key of every ProviderName spelling.
-#}

{#- The FOCUS parts, each a dict: model, formats (the ingest formats whose rows it maps: its rows' x_Source),
    usage_window (whether its usage charges set the data window; default true). -#}
{% macro billing_focus_parts() -%}
    {%- set parts = [] -%}
    {%- for part in var('billing_focus_parts') -%}
        {%- do parts.append({
            'model': part['model'],
            'formats': part.get('formats', []),
            'usage_window': part.get('usage_window', true),
        }) -%}
    {%- endfor -%}
    {{ return(parts) }}
{%- endmacro %}

{#- Every ingest format a FOCUS part maps (the x_Source values of int_billing__focus_lines). -#}
{% macro billing_formats() -%}
    {%- set formats = [] -%}
    {%- for part in billing_focus_parts() -%}
        {%- do formats.extend(part['formats']) -%}
    {%- endfor -%}
    {{ return(formats) }}
{%- endmacro %}

{#- billing_formats() as a SQL list's items (`'aws_cur', 'focus'`), for `format in (...)`. -#}
{% macro billing_formats_sql() -%}
    '{{ billing_formats() | join("', '") }}'
{%- endmacro %}

{#- The provider keys the registry names (billing_providers). -#}
{% macro billing_provider_keys() -%}
    {{ return(var('billing_providers').keys() | list) }}
{%- endmacro %}

{#- The warehouse's provider key (aws, azure, gcp, oci, onprem, ...) of a FOCUS ProviderName: the registry's
    key whose names hold it (any case), else the name in lower case. -#}
{% macro focus_provider(provider_name) -%}
    case
    {%- for key, provider in var('billing_providers').items() %}
        when lower({{ provider_name }}) in ('{{ provider['names'] | join("', '") | lower }}') then '{{ key }}'
    {%- endfor %}
        else lower({{ provider_name }})
    end
{%- endmacro %}

{#-
    InvoiceIssuerName spelled as the provider's own entity ("Amazon Web Services, Inc." for AWS) becomes
    the ProviderName spelling: the FOCUS validator reads a different name as a third party that collects
    the payment (BilledCost must then be 0). A provider's own entities are the registry's
    `own_invoice_issuers` (LIKE patterns, lower case); a genuine third party (a reseller) keeps its name.
-#}
{% macro focus_invoice_issuer(provider_name, invoice_issuer_name) -%}
    case
        when {{ invoice_issuer_name }} is null then {{ provider_name }}
        when lower({{ invoice_issuer_name }}) = lower({{ provider_name }}) then {{ provider_name }}
        when case {{ focus_provider(provider_name) }}
        {%- for key, provider in var('billing_providers').items() if provider.get('own_invoice_issuers') %}
            when '{{ key }}' then
            {%- for issuer in provider['own_invoice_issuers'] %}
                {{ 'or ' if not loop.first }}lower({{ invoice_issuer_name }}) like '{{ issuer }}'
            {%- endfor %}
        {%- endfor %}
            else false
        end then {{ provider_name }}
        else {{ invoice_issuer_name }}
    end
{%- endmacro %}

{#-
    The select list of a FOCUS part: every column of focus_columns(), in order, each the SQL expression
    `expressions` gives for it (a dict: column name -> expression) or a typed null. A name that is no FOCUS
    column, or a column every part must fill (focus_part_required()) left out, stops the build:

        select
            {{ focus_part_columns({
                'BilledCost': 'cost',
                'ProviderName': "'Toy Cloud'",
                ...
            }) }}
        from charges
-#}
{% macro focus_part_columns(expressions) -%}
    {%- set columns = focus_columns() -%}
    {%- set names = [] -%}
    {%- for name, kind in columns -%}
        {%- do names.append(name) -%}
    {%- endfor -%}
    {%- set unknown = expressions.keys() | reject('in', names) | list -%}
    {%- if unknown -%}
        {{ exceptions.raise_compiler_error(model.name ~ ": not FOCUS columns: " ~ unknown | join(', ')) }}
    {%- endif -%}
    {%- set missing = focus_part_required() | reject('in', expressions.keys() | list) | list -%}
    {%- if missing -%}
        {{ exceptions.raise_compiler_error(model.name ~ ": a FOCUS part must fill " ~ missing | join(', ')) }}
    {%- endif -%}
    {%- for name, kind in columns %}
        {%- if name in expressions %}
        {{ expressions[name] }} as {{ name }}
        {%- elif kind == 'tags' %}
        {{ as_string_map('null') }} as {{ name }}
        {%- elif kind == 'json' %}
        cast(null as {{ sql_type('varchar') }}) as {{ name }}
        {%- else %}
        cast(null as {{ focus_type(kind) }}) as {{ name }}
        {%- endif %}{{ "," if not loop.last }}
    {%- endfor %}
{%- endmacro %}
