"""The label vocabulary of telemetry: which labels carry which typed column, for DCGM's series (both
dcgm-exporter namings), inference servers' (vLLM, TGI) and HAMi's vGPU monitor, and the tables each kind
of series lands in (gpu_ledger.ingest.telemetry lands them)."""

from __future__ import annotations

# dcgm-exporter 1.x (and --use-old-namespace) metric names -> the current ones
OLD_METRIC_NAMES = {
    "dcgm_gpu_utilization": "DCGM_FI_DEV_GPU_UTIL",
    "dcgm_mem_copy_utilization": "DCGM_FI_DEV_MEM_COPY_UTIL",
    "dcgm_fb_used": "DCGM_FI_DEV_FB_USED",
    "dcgm_fb_free": "DCGM_FI_DEV_FB_FREE",
    "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
    "dcgm_total_energy_consumption": "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "dcgm_fi_prof_gr_engine_active": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "dcgm_fi_prof_pipe_tensor_active": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP",
}

# typed column -> label names that carry it, first present wins. Where Prometheus renamed the
# exporter's own pod labels to exported_* (honorLabels off), the exported_* ones are the workload's.
LABEL_COLUMNS = {
    "gpu_uuid": ("UUID", "uuid", "gpu_uuid"),
    "gpu_index": ("gpu",),
    "hostname": ("Hostname", "hostname"),
    "model_name": ("modelName", "model_name"),
    "pci_bus_id": ("pci_bus_id",),
    "device": ("device",),
    "mig_profile": ("GPU_I_PROFILE",),
    "gpu_instance_id": ("GPU_I_ID",),
    "pod": ("exported_pod", "pod", "pod_name"),
    "namespace": ("exported_namespace", "namespace", "pod_namespace"),
    "container": ("exported_container", "container", "container_name"),
    "pod_uid": ("pod_uid",),
    "hpc_job": ("hpc_job",),
    "driver_version": ("DCGM_FI_DRIVER_VERSION",),
    "scrape_job": ("job",),
    "scrape_instance": ("instance",),
}
# With honorLabels off, Prometheus renames the exporter's pod labels to exported_* and the plain ones name
# the target: the dcgm-exporter pod itself. A series of an idle GPU has no exported_* labels then, and its
# plain labels still name the exporter, recognisable by the exporter's container name.
EXPORTER_POD_LABELS = ("pod", "namespace", "container")
EXPORTER_CONTAINERS = ("nvidia-dcgm-exporter", "dcgm-exporter")

# metric-name prefix -> the inference server that exposes it (vLLM names its metrics `vllm:*`, TGI `tgi_*`)
INFERENCE_SERVERS = {"vllm:": "vllm", "tgi_": "tgi"}
# the inference servers' series the marts read (their names as Prometheus stores them): token and request
# counters, and vLLM's running-requests gauge
INFERENCE_METRICS = (
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:request_success_total",
    "vllm:num_requests_running",
    "tgi_request_input_length_sum",
    "tgi_request_generated_tokens_sum",
    "tgi_request_success",
)
# typed column of raw.inference_series -> label names that carry it, first present wins. The pod labels
# are the ones Prometheus' Kubernetes discovery puts on the scraped server pod; `engine` is vLLM V1's
# engine-core index (one series per data-parallel engine); TGI names no model on its series.
INFERENCE_LABEL_COLUMNS = {
    "model_name": ("model_name",),
    "engine": ("engine",),
    "finished_reason": ("finished_reason",),
    "pod": ("pod", "pod_name"),
    "namespace": ("namespace", "pod_namespace"),
    "container": ("container", "container_name"),
    "scrape_job": ("job",),
    "scrape_instance": ("instance",),
}
# HAMi's vGPU monitor (the hami-device-plugin's vgpu-monitor, `:9394/metrics`): per container and device
# it shares, the SM utilisation (0-100) and the device memory used and allowed. Its legacy names
# (podnamespace/podname/ctrname/vdeviceid/deviceuuid labels; `--legacy-metrics` in newer releases)
# and the current `hami_*` names (namespace/pod/container/vdevice_index/device_uuid) -> what it measures
HAMI_METRICS = {
    "Device_utilization_desc_of_container": "sm_util_pct",
    "hami_container_device_utilization_ratio": "sm_util_pct",
    "vGPU_device_memory_usage_in_bytes": "memory_used_bytes",
    "hami_vgpu_memory_used_bytes": "memory_used_bytes",
    "vGPU_device_memory_limit_in_bytes": "memory_limit_bytes",
    "hami_vgpu_memory_limit_bytes": "memory_limit_bytes",
}
# typed column of raw.hami_series -> label names that carry it, first present wins. The current names'
# pod labels collide with the scraped target's: with honorLabels off, Prometheus renames them exported_*
HAMI_LABEL_COLUMNS = {
    "gpu_uuid": ("deviceuuid", "device_uuid"),
    "vdevice_index": ("vdeviceid", "vdevice_index"),
    "pod": ("podname", "exported_pod", "pod"),
    "namespace": ("podnamespace", "exported_namespace", "namespace"),
    "container": ("ctrname", "exported_container", "container"),
    "scrape_job": ("job",),
    "scrape_instance": ("instance",),
}
# the tables each kind of series lands in: (series table, samples table)
DESTINATIONS = {
    "dcgm": ("dcgm_series", "dcgm_samples"),
    "inference": ("inference_series", "inference_samples"),
    "hami": ("hami_series", "hami_samples"),
}
