"""The simulator's NVIDIA vGPU guests (catalogue.vgpu_profile): which VM sizes are guests, of which profile,
and what their driver reports, as the guests of Azure's NVadsA10 v5 series print it."""

from __future__ import annotations

import pytest

from gpu_ledger.simulator import catalogue


@pytest.mark.parametrize(
    ("instance_type", "profile", "name", "framebuffer_mib"),
    [
        ("Standard_NV6ads_A10_v5", "A10-4Q", "NVIDIA A10-4Q", 4096),
        ("Standard_NV12ads_A10_v5", "A10-8Q", "NVIDIA A10-8Q", 8192),
        ("Standard_NV18ads_A10_v5", "A10-12Q", "NVIDIA A10-12Q", 12288),
        ("Standard_NV36ads_A10_v5", "A10-24Q", "NVIDIA A10-24Q", 24576),  # all of the A10, still a vGPU
        ("Standard_NV36adms_A10_v5", "A10-24Q", "NVIDIA A10-24Q", 24576),
        ("Standard_NV72ads_A10_v5", "A10-24Q", "NVIDIA A10-24Q", 24576),  # two A10-24Q
        ("Standard_NC24ads_A100_v4", None, "NVIDIA A100 80GB PCIe", None),  # whole GPUs
        ("VM.GPU.A10.1", None, "NVIDIA A10", None),  # OCI passes its A10 through whole
    ],
)
def test_a_vgpu_guest_names_its_gpu_by_its_profile(instance_type, profile, name, framebuffer_mib):
    assert catalogue.vgpu_profile(instance_type) == profile
    assert catalogue.dcgm_model_name(instance_type) == name
    assert catalogue.vgpu_framebuffer_mib(name) == framebuffer_mib


def test_every_catalogued_guest_is_a_fraction_of_its_gpu():
    """The seed catalogue's frame buffer of each guest size divides its parent's memory (a vGPU profile
    is a fixed fraction: 1/6, 1/3, 1/2, 1)."""
    guests = [t for t in catalogue.catalogued_instance_types() if catalogue.vgpu_profile(t)]
    assert len(guests) == 6
    for instance_type in guests:
        spec = catalogue.instance_types()[instance_type]
        parent = catalogue.gpu_models()[spec["gpu_model"]]["memory_gb"]
        assert parent % spec["gpu_memory_gb"] == 0, instance_type
