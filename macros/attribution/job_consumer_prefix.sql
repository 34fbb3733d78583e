{#- The DCGM consumer key that names a job attempt, from int_workloads__jobs' columns: its pod on
    Kubernetes, its hpc_job on Slurm. A DCGM consumer names the job when it equals this key or continues
    it with '/' (a pod's uid follows its name). -#}
{% macro job_consumer_prefix() -%}
    case
        when scheduler = 'kubernetes' then 'pod:' || namespace || '/' || name
        else 'hpc_job:' || job_id
    end
{%- endmacro %}
