{#- The AllocatedMethodId of GPU Ledger's split-cost allocation in the FOCUS 1.3 export
    (fct_billing_focus_allocated; docs/warehouse.md, "FOCUS 1.3 export" documents the method under this id): a GPU
    instance's bill line divided among the consumers of its GPU-hours by held GPU time x share of the
    GPU, idle taking the time no job held. -#}
{% macro focus_allocated_method_id() -%}
    {{ return('GpuLedger-HeldGpuTimeShare-1') }}
{%- endmacro %}

{#- The prefix of the AllocatedTags keys GPU Ledger defines (FOCUS: a data generator's tag keys carry a
    documented prefix of their own, so they never collide with the resource's Tags). -#}
{% macro focus_allocated_tag_prefix() -%}
    {{ return('gpu-ledger/') }}
{%- endmacro %}

{#- The key of one charge of fct_billing_focus (its unique key): the load and source row it came from, its
    charge period start and category. The FOCUS 1.3 split rows of a charge carry its key, so the export
    and its tests group them by this one expression. -#}
{% macro focus_charge_key() -%}
    x_Source || '|' || coalesce(x_LoadId, '') || '|' || coalesce(cast(x_SourceRow as string), '') || '|'
    || cast(ChargePeriodStart as string) || '|' || ChargeCategory
{%- endmacro %}
