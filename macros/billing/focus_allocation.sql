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

{#- FOCUS 1.3/1.4 ContractApplied of a row of fct_billing_focus_allocated (`row` names its relation, `cost` and
    `quantity` its EffectiveCost and CommitmentDiscountQuantity, the allocated ones on a split row): on usage
    a commitment covered (CommitmentDiscountStatus Used), the spec's object of one element: ContractId (the
    Contract Commitment dataset's ContractId where it names the commitment, else the commitment itself, which
    the spec allows), ContractCommitmentId (CommitmentDiscountId), ContractCommitmentAppliedCost (the row's
    EffectiveCost), ContractCommitmentAppliedQuantity and ContractCommitmentAppliedUnit (its
    CommitmentDiscountQuantity and CommitmentDiscountUnit, both null unless the bill states both); the numbers
    to 6 decimals, the same on every engine (Spark's decimal arithmetic keeps 8); null on every other row.
    Keys spelled `ContractId` / `ContractCommitmentId` as FOCUS 1.4 spells them: the Contract Applied Object's
    table and example and its JSON schema (FOCUS_Spec, specification/schemas/datasets/cost_and_usage/
    contractappliedobjectschema.json, `required: ["ContractId", "ContractCommitmentId"]`, other keys refused
    unless `x_`); 1.3's table wrote `ContractID` / `ContractCommitmentID` against its own prose. -#}
{% macro focus_contract_applied(row, cost, quantity) -%}
    case
        when
            {{ row }}.CommitmentDiscountId is not null
            and {{ row }}.ChargeCategory = 'Usage'
            and {{ row }}.CommitmentDiscountStatus = 'Used'
            then {{ json_elements([
                ('ContractId', 'coalesce(' ~ row ~ '.contract_id, ' ~ row ~ '.CommitmentDiscountId)'),
                ('ContractCommitmentId', row ~ '.CommitmentDiscountId'),
                ('ContractCommitmentAppliedCost', 'round(cast(' ~ cost ~ ' as double), 6)'),
                ('ContractCommitmentAppliedQuantity',
                    'case when ' ~ row ~ '.CommitmentDiscountUnit is not null then round(cast(' ~ quantity ~ ' as double), 6) end'),
                ('ContractCommitmentAppliedUnit',
                    'case when ' ~ quantity ~ ' is not null then ' ~ row ~ '.CommitmentDiscountUnit end'),
            ]) }}
    end
{%- endmacro %}
