{#-
    What makes a billed instance look like a GPU or AI-accelerator instance when neither the bill's
    own attributes nor the catalogue (seeds/gpu_instance_catalogue) say how many GPUs it has. Such an
    instance is flagged (x_IsGpuInstance true, x_GpuCount null), never taken for a CPU instance.

    Instance families, matched on the lower-cased instance type:
    - AWS: p*, g*, gr*, trn*, inf*, dl* (`p5e.48xlarge`, `g6e.xlarge`, `trn2.48xlarge`, `dl1.24xlarge`);
    - Azure: the N series, Standard_NC*, ND*, NV*, NG* (`Standard_ND96isr_H200_v5`);
    - GCP: accelerator-optimised a2, a3, a4 (a4x) and g2+ machine types (`a3-megagpu-8g`, `g2-standard-4`;
      not `g1-small`, a shared-core VM);
    - OCI: BM.GPU* and VM.GPU* shapes.
    SKU text, matched on the lower-cased SKU meter and charge description: gpu, nvidia, tesla, radeon,
    instinct, trainium, inferentia, gaudi.
-#}
{% macro accelerator_instance_type(instance_type) -%}
    coalesce({{ regexp_contains(
        'lower(' ~ instance_type ~ ')',
        '^((p[0-9]|g[0-9]|gr[0-9]|trn[0-9]|inf[0-9]|dl[0-9])[a-z0-9-]*\.[a-z0-9-]+$|standard_n[cdvg][a-z]*[0-9]|(a[2-9][a-z]?|g[2-9])-[a-z]+|(bm|vm)\.gpu)'
    ) }}, false)
{%- endmacro %}

{% macro accelerator_sku_text(sku_text) -%}
    coalesce({{ regexp_contains(
        'lower(' ~ sku_text ~ ')', '(gpu|nvidia|tesla|radeon|instinct|trainium|inferentia|gaudi)'
    ) }}, false)
{%- endmacro %}
