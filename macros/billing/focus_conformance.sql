{#-
    FOCUS 1.2 conformance of fct_billing_focus: the spec's closed lists and the mappings that bring
    every provider's values onto them. Checked by the FinOps Foundation's focus-validator
    (tests/warehouse/test_focus_validator.py). The closed lists themselves are in src/gpu_ledger/focus_columns.yml
    (focus_service_subcategories() is generated from it, in focus_columns.sql).
-#}

{#- true when `subcategory` is an allowed ServiceSubcategory of `category` -#}
{% macro focus_subcategory_allowed(subcategory, category) -%}
    case {{ category }}
    {%- for parent, children in focus_service_subcategories().items() %}
        when '{{ parent }}' then {{ subcategory }} in ('{{ children | join("', '") }}')
    {%- endfor %}
        else false
    end
{%- endmacro %}

{#-
    The ServiceSubcategory a service name's keywords point to within its ServiceCategory, else
    "Other (<category>)" as the spec asks when no subcategory fits. Keywords cover the service names of
    AWS, Azure, Google Cloud and OCI (their FOCUS exports and native bills). "lamb[d]a" is AWS Lambda,
    spelled so that tests/test_portable_sql.py does not take it for a DuckDB lambda.
-#}
{% macro focus_service_subcategory(category, service_name) -%}
    {%- set rules = [
        ('AI and Machine Learning', 'Generative AI', 'bedrock|openai|gemini|generative'),
        ('AI and Machine Learning', 'Natural Language Processing', 'comprehend|language|translat|speech|transcribe'),
        ('AI and Machine Learning', 'Bots', 'lex|bot'),
        ('AI and Machine Learning', 'Machine Learning', 'machine learning|sagemaker|vertex|tpu'),
        ('AI and Machine Learning', 'AI Platforms', 'cognitive|ai services|ai platform'),
        ('Analytics', 'Streaming Analytics', 'kinesis|stream|event hub'),
        ('Analytics', 'Search', 'search'),
        ('Analytics', 'Business Intelligence', 'quicksight|power bi|looker'),
        ('Analytics', 'Data Processing', 'glue|dataflow|dataproc|emr|data factory|databricks|hdinsight'),
        ('Analytics', 'Analytics Platforms', 'athena|synapse|log analytics|analytics'),
        ('Compute', 'Containers', 'kubernetes|container|fargate|openshift|\\b(eks|aks|gke)\\b'),
        ('Compute', 'Serverless Compute', 'lamb[d]a|function|cloud run'),
        ('Compute', 'End User Computing', 'workspaces|virtual desktop|appstream'),
        ('Compute', 'Virtual Machines',
            'elastic compute cloud|virtual machine|compute engine|amazonec2|ec2|lightsail|^compute$'),
        ('Databases', 'Caching', 'cache|redis|memcache'),
        ('Databases', 'Data Warehouses', 'redshift|bigquery|warehouse'),
        ('Databases', 'NoSQL Databases', 'dynamodb|cosmos|firestore|bigtable|documentdb|nosql|keyspaces'),
        ('Databases', 'Time Series Databases', 'timestream|time series'),
        ('Databases', 'Relational Databases', 'relational|rds|sql|mysql|postgres|aurora|spanner|mariadb|database'),
        ('Identity', 'Identity and Access Management', 'identity|iam|directory|cognito|entra'),
        ('Integration', 'API Management', 'api gateway|api management'),
        ('Integration', 'Workflow Orchestration', 'step functions|logic apps|workflow'),
        ('Integration', 'Messaging', 'queue|notification|pub/sub|service bus|event|mq'),
        ('Management and Governance', 'Support', 'support'),
        ('Management and Governance', 'Cost Management', 'cost|budget'),
        ('Management and Governance', 'Compliance', 'config|audit|compliance'),
        ('Management and Governance', 'Observability', 'cloudwatch|monitor|log|trace|x-ray|cloudtrail'),
        ('Networking', 'Content Delivery', 'cloudfront|cdn|front door'),
        ('Networking', 'Network Routing', 'route 53|dns|traffic manager'),
        ('Networking', 'Application Networking', 'load balanc|application gateway'),
        ('Networking', 'Network Security', 'firewall|ddos'),
        ('Networking', 'Network Connectivity',
            'vpc|virtual private cloud|virtual network|vpn|direct connect|expressroute|nat|transfer|bandwidth|network'),
        ('Security', 'Secret Management', 'kms|key management|secret|key vault'),
        ('Security', 'Threat Detection and Response', 'guardduty|defender|sentinel|waf|shield'),
        ('Security', 'Security Posture Management', 'security hub|inspector|posture'),
        ('Storage', 'Backup Storage', 'backup|glacier'),
        ('Storage', 'File Storage', 'file|efs|fsx|filestore'),
        ('Storage', 'Block Storage', 'block|ebs|disk'),
        ('Storage', 'Object Storage', 'simple storage|s3|cloud storage|blob|object'),
        ('Web', 'Application Platforms', 'app service|app engine|elastic beanstalk|amplify'),
    ] -%}
    case
    {%- for parent, child, keywords in rules %}
        when {{ category }} = '{{ parent }}' and {{ regexp_contains("lower(coalesce(" ~ service_name ~ ", ''))", keywords) }}
            then '{{ child }}'
    {%- endfor %}
        else 'Other (' || {{ category }} || ')'
    end
{%- endmacro %}

{#-
    A unit in FOCUS UnitFormat: CUR abbreviations spelled out ("Hrs" -> "Hours", "GB-Mo" -> "GB-Months"),
    a rate provisioned per month ("GiB/Second-Months", AWS's "GiBps-mo") as one count unit per time, and
    a service's GB-seconds without the service's name (AWS Lambda's "Lambda-GB-Second" is "GB-Seconds").
-#}
{% macro focus_unit(unit) -%}
    case
        when lower({{ unit }}) in ('hrs', 'hours') then 'Hours'
        when {{ unit }} like '%-Mo' then replace({{ unit }}, '-Mo', '-Months')
        when {{ unit }} like '%-mo' then replace({{ unit }}, '-mo', '-Months')
        when {{ unit }} like '%/Second-Months' then replace({{ unit }}, '/Second-Months', 'ps-Months')
        when {{ unit }} like '%-GB-Second%' then 'GB-Seconds'
        else {{ unit }}
    end
{%- endmacro %}
