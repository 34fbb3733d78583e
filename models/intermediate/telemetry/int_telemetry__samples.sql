-- grain: one row per series (series_id) per sample time (sampled_at)
{#-
    Ephemeral: the bulk of the telemetry stays in the landed store and is read where it is used
    (a view would survive in the published warehouse, which has no staging schema to read).
    The hour models call the same macro with a time bound, so an incremental build reads only the
    hours it rebuilds; see macros/telemetry/telemetry_samples.sql for the dedup and step rules.
#}
{{ config(materialized='ephemeral') }}

{{ telemetry_samples() }}
