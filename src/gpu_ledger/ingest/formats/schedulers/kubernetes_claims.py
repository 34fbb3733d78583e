"""Kubernetes DRA ResourceClaims: `kubectl get resourceclaims -A -o json` (or `-o yaml`).

Dynamic Resource Allocation (resource.k8s.io, GA in Kubernetes 1.34) gives a pod its GPUs through a
ResourceClaim instead of the `nvidia.com/gpu` extended resource, so `raw.k8s_pods` alone does not say
which pods held which GPU. A claim's `status.allocation.devices.results` names each device it was given
(`driver`, `pool`: the node for NVIDIA's driver, `device`), and `status.reservedFor` the pods that use it:
several pods on one claim share its devices.

Recognised by content as kubernetes.py recognises pods: a `List` or `ResourceClaimList` of ResourceClaims,
or one ResourceClaim, JSON or YAML; its snapshot time is the file name's stamp, else the file's mtime
(kubernetes.snapshot_time). A ResourceClaimTemplate or a DeviceClass is what claims are made from, and a
claim without a uid is a manifest: each is refused in one line as a spec, not what ran. (A claim with a
uid but no status, as a pending one may be printed, is a claim that exists.)

`raw.k8s_resource_claims`: one row per claim per allocated device per snapshot, and one row with null
device fields for a claim not yet allocated, so that a pending claim is seen.
- `device_class` is the request's `exactly.deviceClassName` (v1), `deviceClassName` (v1beta1) or, for a
  `firstAvailable` subrequest (result request `<request>/<subrequest>`), the subrequest's.
- `gpu_index` is the n of NVIDIA's device names `gpu-<n>` (a whole GPU) and `gpu-<n>-mig-...` (a MIG
  device on it): the GPU's index on the node (some driver releases use its minor number, the n of
  /dev/nvidia<n>, which is the same on most machines); null for a name of any other shape.
- `mig_profile` is read from the device name where it carries one (`gpu-0-mig-1g12gb-19-4` of newer
  drivers' dynamic MIG -> 1g.12gb; `gpu-0-mig-1g10gb-me-20-0` -> 1g.10gb+me), else from a device class
  named for it (`mig-1g-12gb.gpu.nvidia.com` -> 1g.12gb), else from the request's CEL selector on the
  profile attribute, as NVIDIA's examples ask the class `mig.nvidia.com` for a slice
  (`device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`): a static MIG device's name
  (`gpu-1-mig-19-4-1`: the GPU's minor, GPU instance profile ID, placement start and size) says no
  profile. `is_mig` says the device is a MIG device by its name, its class or such a selector.
- `mig_profile_id` is the GPU instance profile ID a MIG device's name carries (`gpu-1-mig-19-4-1` -> 19,
  `gpu-0-mig-1g12gb-19-4` -> 19), the ID `nvidia-smi mig -lgip` lists: with the GPU's model it names the
  profile where nothing else does (seeds/mig_profile_ids.csv, int_workloads__attempts).
- `sharing_strategy` (TimeSlicing, MPS) and `mps_active_thread_pct` come from the opaque config the
  driver applies to the device, as NVIDIA's driver picks it: of the allocation's configs (the class's
  before the claim's; the claim's own `spec.devices.config` when the allocation repeats none), the last
  one for the device's driver that names the result's request, or names no request and is of the
  device's kind (a GpuConfig for a whole GPU, a MigDeviceConfig for a MIG device).
"""

from __future__ import annotations

import re

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.schedulers.kubernetes import (
    controller_owner,
    item_kind,
    land_snapshot,
    read_items,
    snapshot_time,
    timestamp,
)
from gpu_ledger.ingest.sniff import Sniff

TABLE = "k8s_resource_claims"
SPEC_KINDS = ("ResourceClaimTemplate", "DeviceClass")
EXTENDED_RESOURCE = "resource.kubernetes.io/extended-resource-claim"
_GPU_DEVICE = re.compile(r"^gpu-([0-9]{1,9})(-mig-(.+))?$")
_NAME_PROFILE = re.compile(r"^(\d+g)(\d+gb)(-me)?-(\d+)(?:-\d+)*$")  # the -mig- part of newer drivers' names
_STATIC_NAME = re.compile(r"^(\d+)-\d+-\d+$")  # static MIG: profile ID, placement start and size
_CLASS_PROFILE = re.compile(r"^mig-(\d+g)[-.](\d+gb)\.")
_SELECTOR_PROFILE = re.compile(
    r"device\.attributes\[(['\"])gpu\.nvidia\.com\1\]\.profile\s*==\s*(['\"])(\d+g)\.(\d+gb)(\+me)?\2"
)

CLAIM_SCHEMA: dict[str, pl.DataType] = {
    "snapshot_at": pl.Datetime("us", "UTC"),
    "snapshot_time_source": pl.String,
    "uid": pl.String,
    "namespace": pl.String,
    "name": pl.String,
    "owner_kind": pl.String,
    "owner_name": pl.String,
    "is_extended_resource_claim": pl.Boolean,
    "result_index": pl.Int32,
    "request": pl.String,
    "device_class": pl.String,
    "driver": pl.String,
    "pool": pl.String,
    "device": pl.String,
    "gpu_index": pl.Int32,
    "is_mig": pl.Boolean,
    "mig_profile": pl.String,
    "mig_profile_id": pl.Int32,
    "sharing_strategy": pl.String,
    "mps_active_thread_pct": pl.Int32,
    "reserved_for_uids": pl.List(pl.String),
    "reserved_for_names": pl.List(pl.String),
    "created_at": pl.Datetime("us", "UTC"),
    "_source_file": pl.String,
    "_source_row": pl.Int64,
}


def detect(s: Sniff) -> bool:
    """ResourceClaims, or the DRA specs this format refuses as such (templates, device classes)."""
    return item_kind(s) in ("ResourceClaim", *SPEC_KINDS)


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def _selected_profile(request: dict) -> str | None:
    """The MIG profile a request's CEL selectors ask for (`...profile == '1g.5gb'`), if one does."""
    for selector in map(_dict, _list(request.get("selectors"))):
        found = _SELECTOR_PROFILE.search(str(_dict(selector.get("cel")).get("expression") or ""))
        if found:
            return f"{found.group(3)}.{found.group(4)}{found.group(5) or ''}"
    return None


def _request_classes(devices: dict) -> dict[str, tuple[str | None, str | None]]:
    """(device class, MIG profile its selectors ask for) per request name (and per
    `<request>/<subrequest>` of a firstAvailable list)."""
    classes: dict[str, tuple[str | None, str | None]] = {}
    for request in map(_dict, _list(devices.get("requests"))):
        name, exactly = _str(request.get("name")), _dict(request.get("exactly"))
        asked = exactly or request  # v1 nests the request in `exactly`; v1beta1 spells it on the request
        classes[str(name)] = (_str(asked.get("deviceClassName")), _selected_profile(asked))
        for sub in map(_dict, _list(request.get("firstAvailable"))):
            classes[f"{name}/{sub.get('name')}"] = (_str(sub.get("deviceClassName")), _selected_profile(sub))
    return classes


def _configs(spec_devices: dict, allocated: dict) -> list[dict]:
    """The opaque configs in the order the driver weighs them (the last that applies wins)."""
    given = list(map(_dict, _list(allocated.get("config"))))
    from_class = [c for c in given if c.get("source") == "FromClass"]
    from_claim = [c for c in given if c.get("source") != "FromClass"]
    return from_class + (from_claim or list(map(_dict, _list(spec_devices.get("config")))))


def _sharing(
    ctx: LoadContext, configs: list[dict], result: dict, is_mig: bool, row: int
) -> tuple[str | None, int | None]:
    """(strategy, MPS active thread percent) of the config the driver applies to the result's device."""
    request = str(result.get("request"))
    for config in reversed(configs):
        opaque = _dict(config.get("opaque"))
        if opaque.get("driver") != result.get("driver"):  # another driver's, or not an opaque config
            continue
        params = _dict(opaque.get("parameters"))
        named = [str(r) for r in _list(config.get("requests"))]
        if named and request not in named and request.partition("/")[0] not in named:
            continue
        if not named and params.get("kind") == ("GpuConfig" if is_mig else "MigDeviceConfig"):
            continue
        sharing = _dict(params.get("sharing"))
        strategy = _str(sharing.get("strategy"))
        pct = _dict(sharing.get("mpsConfig")).get("defaultActiveThreadPercentage")
        if strategy != "MPS" or pct is None:
            return strategy, None
        if not re.fullmatch(r"[0-9]{1,3}", str(pct)) or int(str(pct)) > 100:
            raise ctx.error(
                f"{pct!r} is not a percentage",
                line=row,
                column="sharing.mpsConfig.defaultActiveThreadPercentage",
                expected="an integer from 0 to 100",
            )
        return strategy, int(str(pct))
    return None, None


def _device(
    name: str | None, device_class: str | None, selected: str | None
) -> tuple[int | None, bool | None, str | None, int | None]:
    """(gpu_index, is_mig, mig_profile, mig_profile_id) from NVIDIA's device name, the request's device
    class and the profile its selectors ask for."""
    if name is None:
        return None, None, None, None
    m = _GPU_DEVICE.match(name)
    named = _NAME_PROFILE.match(m.group(3)) if m and m.group(3) else None
    static = _STATIC_NAME.match(m.group(3)) if m and m.group(3) else None
    by_class = _CLASS_PROFILE.match(device_class or "")
    if named:
        profile: str | None = f"{named.group(1)}.{named.group(2)}" + ("+me" if named.group(3) else "")
    elif by_class:
        profile = f"{by_class.group(1)}.{by_class.group(2)}"
    else:
        profile = selected
    profile_id = named.group(4) if named else static.group(1) if static else None
    return (
        int(m.group(1)) if m else None,
        bool(m and m.group(2)) or by_class is not None or selected is not None,
        profile,
        None if profile_id is None else int(profile_id),
    )


def _claim_rows(ctx: LoadContext, claim: dict, row: int) -> list[dict]:
    meta, spec, status = _dict(claim.get("metadata")), _dict(claim.get("spec")), _dict(claim.get("status"))
    owner = controller_owner(meta)
    reserved = [
        r
        for r in map(_dict, _list(status.get("reservedFor")))
        if r.get("resource", "pods") == "pods" and not r.get("apiGroup")
    ]
    common = {
        "uid": _str(meta.get("uid")),
        "namespace": _str(meta.get("namespace")),
        "name": _str(meta.get("name")),
        "owner_kind": _str(owner.get("kind")),
        "owner_name": _str(owner.get("name")),
        "is_extended_resource_claim": str(_dict(meta.get("annotations")).get(EXTENDED_RESOURCE)) == "true",
        "reserved_for_uids": [_str(r.get("uid")) for r in reserved],
        "reserved_for_names": [_str(r.get("name")) for r in reserved],
        "created_at": timestamp(ctx, meta.get("creationTimestamp"), row, "metadata.creationTimestamp"),
        "_source_row": row,
    }
    spec_devices = _dict(spec.get("devices"))
    allocated = _dict(_dict(status.get("allocation")).get("devices"))
    results = [_dict(r) for r in _list(allocated.get("results"))]
    if not results:
        return [common]
    classes, configs = _request_classes(spec_devices), _configs(spec_devices, allocated)
    rows = []
    for i, result in enumerate(results, start=1):
        request, device = _str(result.get("request")), _str(result.get("device"))
        device_class, selected = classes.get(request or "", (None, None))
        gpu_index, is_mig, mig_profile, mig_profile_id = _device(device, device_class, selected)
        strategy, pct = _sharing(ctx, configs, result, bool(is_mig), row)
        rows.append(
            common
            | {
                "result_index": i,
                "request": request,
                "device_class": device_class,
                "driver": _str(result.get("driver")),
                "pool": _str(result.get("pool")),
                "device": device,
                "gpu_index": gpu_index,
                "is_mig": is_mig,
                "mig_profile": mig_profile,
                "mig_profile_id": mig_profile_id,
                "sharing_strategy": strategy,
                "mps_active_thread_pct": pct,
            }
        )
    return rows


def load(ctx: LoadContext) -> None:
    rows: list[dict] = []
    row = 0
    try:
        for row, claim in enumerate(read_items(ctx, "ResourceClaim", specs=SPEC_KINDS, status=False), 1):
            rows.extend(_claim_rows(ctx, claim, row))
    except (AttributeError, KeyError, TypeError) as exc:  # an object where a list is, and the like
        raise ctx.error(
            f"a field is not of its type: {exc}",
            line=row or None,
            expected="ResourceClaims as kubectl prints them",
        ) from exc
    land_snapshot(ctx, TABLE, rows, CLAIM_SCHEMA)


FORMAT = Format(
    name="k8s_resource_claims",
    group="scheduler",
    description="kubectl get resourceclaims -A -o json (or -o yaml) snapshot: DRA claims and their devices",
    detect=detect,
    load=load,
    observed_at=lambda path, options: snapshot_time(path)[0],
    independent=True,
)
