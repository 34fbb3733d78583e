{#-
    How a model that adds only what is new each build is materialized: `config(materialized=
    incremental_materialization(), unique_key=..., batch_...=...)` (see day_batches.sql).
    DuckDB: day_batches, deleting and re-inserting the re-read window one batch of days at a time.
    Spark: a table rebuilt in full. Its Parquet tables can neither delete nor merge (dbt-spark offers
    merge on Delta, Iceberg or Hudi only), and `gpu-ledger build --engine spark` starts each build
    from an empty warehouse. A cluster with Delta or Iceberg overrides this to incremental with
    incremental_strategy 'merge'.
-#}
{% macro incremental_materialization() -%}
    {{ return(adapter.dispatch('incremental_materialization', 'gpu_ledger')()) }}
{%- endmacro %}

{% macro default__incremental_materialization() -%}
    {{ return('day_batches') }}
{%- endmacro %}

{% macro spark__incremental_materialization() -%}
    {{ return('table') }}
{%- endmacro %}
