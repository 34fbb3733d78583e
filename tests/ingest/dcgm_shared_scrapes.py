# ruff: noqa: E501  (sample lines are kept whole, as the exporter prints them)
"""dcgm-exporter `/metrics` scrapes of a time-sliced GPU with `--kubernetes-virtual-gpus`, in the real spelling.

Hand-made after dcgm-exporter's own code and issues (https://github.com/NVIDIA/dcgm-exporter):
- PR #432 (4.4 to 4.5): each pod holding a replica of the GPU gets a copy of every device series, with
  `pod`, `namespace`, `container` and `vgpu` (the replica, from the device plugin's `<UUID>::<n>` device
  id) labels; the device's own series is gone. Issue #587 shows the copies (every pod the same value).
- PR #594 (merged December 2025, 4.6): `isPerProcessMetric` is true for DCGM_FI_DEV_GPU_UTIL and
  DCGM_FI_DEV_FB_USED: each pod's series carries its own value (NVML's per-process SM utilisation and
  memory, in MiB, summed over the pod's processes; 0 for a pod without one) and the device's own series
  stays beside them; every other field is still copied. `pod_uid` (PR #531,
  `--kubernetes-enable-pod-uid`) names the pod; a pod holding several replicas repeats its value on each
  (issue #725: `DCGM_FI_DEV_FB_USED{UUID="GPU-…",pod_uid="…",vgpu="5",…} 10056`).
"""

from __future__ import annotations

HOST = "ip-10-0-7-21.ec2.internal"
GPU = "GPU-3bc239e1-4cc8-97e4-e817-5a36dfd2885e"
DEVICE = (
    f'gpu="0",UUID="{GPU}",pci_bus_id="00000000:31:00.0",device="nvidia0",modelName="NVIDIA L4",'
    f'Hostname="{HOST}",DCGM_FI_DRIVER_VERSION="570.172.08"'
)
# pod -> (namespace, container, pod uid, the replicas it holds)
PODS = {
    "search-embedder-6d5f8b7c9d-x2k4p": (
        "search-serving",
        "embedder",
        "1843d150-7a2e-4c61-9b0f-2d6e8a3c5f17",
        ("0", "3"),
    ),
    "recsys-reranker-5b7c9d8f6-q9w2m": (
        "recsys-serving",
        "reranker",
        "9b1e4c7a-3d5f-4e28-8a6b-0c2d4f6e8a91",
        ("1",),
    ),
}

FAMILIES = (
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
)


def scrape(device: dict[str, float], pods: dict[str, dict[str, float]] | None) -> str:
    """One scrape of the node: `device` is the GPU's own reading per field; `pods` each pod's own reading
    of the per-process fields (dcgm-exporter since PR #594), or None for the copies of PR #432."""
    lines = []
    for name, kind, help_text in FAMILIES:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        if pods is not None:
            lines.append(f"{name}{{{DEVICE}}} {device[name]:g}")
        for pod, (namespace, container, uid, replicas) in PODS.items():
            own = pods is not None and name in pods[pod]
            value = pods[pod][name] if own else device[name]
            for vgpu in replicas:
                labels = f'container="{container}",namespace="{namespace}",pod="{pod}"'
                if pods is not None:
                    labels += f',pod_uid="{uid}"'
                lines.append(f'{name}{{{DEVICE},{labels},vgpu="{vgpu}"}} {value:g}')
    return "\n".join(lines) + "\n"
