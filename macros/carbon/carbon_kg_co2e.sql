{#- The one carbon formula (docs/warehouse.md "Carbon"): kg CO2e = energy_kwh x PUE x grid gCO2e/kWh / 1000. DCGM measures
    the GPU's own energy; PUE scales it to what the data centre drew for it (cooling, power conversion), and
    the grid's intensity turns that into emissions (location-based). Every model that reports carbon calls
    this with a GPU's factors from int_carbon__gpu_factors. -#}
{% macro carbon_kg_co2e(energy_kwh, pue, grid_gco2e_per_kwh) -%}
    ({{ energy_kwh }}) * ({{ pue }}) * ({{ grid_gco2e_per_kwh }}) / 1000.0
{%- endmacro %}
