{#-
    The rows of `rows` (a CTE or relation with load_id), each with load_recency: the rank of its load
    among the loads that landed rows of the same `partition_by`, the load ingested last first
    (stg_ingest__loads.loaded_at; load ids are random, so the id only breaks a tie, then `then_by`).
    Keep load_recency = 1 for what the latest export says: a re-exported request, bucket or map row
    counts once, as it was last delivered. `ranking`: row_number (one row per partition) or dense_rank
    (every row of the latest load). Qualify columns in partition_by and then_by with `rows`.
-#}
{% macro rows_by_load_recency(rows, partition_by, ranking='row_number', then_by=none) -%}
    select
        {{ rows }}.*,
        {{ ranking }}() over (
            partition by {{ partition_by }}
            order by loads.loaded_at desc, {{ rows }}.load_id desc{% if then_by %}, {{ then_by }}{% endif %}
        ) as load_recency
    from {{ rows }}
    left join {{ ref('stg_ingest__loads') }} as loads on {{ rows }}.load_id = loads.load_id
{%- endmacro %}
