"""Kubernetes snapshots: `kubectl get pods -A -o json` and `kubectl get nodes -o json`.

Recognised by content: a JSON (or `-o yaml`) document whose `kind` is `List` (items of kind Pod or
Node, or `PodList`/`NodeList` as the API itself answers), or a single `Pod` / `Node` object.

The API's answer carries no time of its own, so a snapshot's time (`snapshot_at`) comes from the
file name when it holds a UTC stamp as collectors write them (`pods-20261001T060000Z.json`,
`nodes-2026-10-01T06:00:00Z.json`), else from the file's modification time; `snapshot_time_source`
says which (`file_name` or `file_mtime`), so a doubtful time can be found later. The same time is the
snapshot's identity beside its content: two snapshots with identical content taken at different times
are two observations, while the same file found again in another folder (same name, or same mtime as
`cp -p` and `rsync -t` keep) is the same one and lands once.

YAML: `kubectl get ... -o yaml` output is the same objects and is accepted. A YAML *manifest* (what
`kubectl apply` reads, like dcgm-exporter's tests/gpu-pod.yaml) describes a wish, not something that
ran: it has no uid, no node, no status. It is rejected with an error that says so, rather than
landed as a pod that never existed or reported as an unknown format.

`raw.k8s_pods` (one row per pod per snapshot): GPU requests are read from each container's
`resources.limits`, falling back to `requests` (extended resources must be equal in both), summed
over app containers and maxed with init containers, as the scheduler counts them. `nvidia.com/gpu`
(and its time-slicing rename `nvidia.com/gpu.shared`) is `gpu_request`; a MIG slice
`nvidia.com/mig-<g>g.<m>gb` gives `mig_profile` and `mig_count`; `gpu_resources` keeps every
`nvidia.com/*` request. HAMi's requests of part of a GPU (`nvidia.com/gpucores`, `gpumem`,
`gpumem-percentage`) are per GPU each container holds, so they are not summed: `gpu_resources` keeps
their mean over the pod's GPUs (each container's value weighted by its `nvidia.com/gpu`).
`disruption` is true when the pod has a `DisruptionTarget` condition with status True (node shutdown,
spot reclaim, preemption, eviction). `claim_templates` and `claim_names`: its DRA claims (pod_claims.py).

`raw.k8s_nodes` (one row per node per snapshot): `spec.providerID` gives the cloud and instance:
`aws:///<az>/i-...` -> instance_id `i-...`; `azure:///subscriptions/.../virtualMachines/<vm>` ->
`<vm>`, and for scale sets `.../virtualMachineScaleSets/<ss>/virtualMachines/<n>` -> `<ss>_<n>`
(Azure's VM instance name); `gce://<project>/<zone>/<name>` -> `<name>`. `capacity_type` is
normalised to spot / on_demand / reserved from Karpenter's `karpenter.sh/capacity-type`, EKS managed
node groups' `eks.amazonaws.com/capacityType`, AKS `kubernetes.azure.com/scalesetpriority` (an AKS
node without it is regular priority: on_demand) and GKE's `cloud.google.com/gke-spot` /
`gke-preemptible`; `capacity_type_label` keeps the value as found. `hami_gpu_indexes`: hami_register.

DRA's ResourceClaims, their templates and DeviceClasses (DRA_KINDS) are `kubernetes_claims`' to land.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.schedulers import hami_register, pod_claims
from gpu_ledger.ingest.sniff import Sniff, open_text

POD_KINDS = ("Pod", "PodList")
NODE_KINDS = ("Node", "NodeList")
# Dynamic Resource Allocation's claims and specs: kubernetes_claims lands or refuses them, never pods
DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass")
_STAMP_COMPACT = re.compile(r"(\d{8}T\d{6})(?:\.\d+)?Z")
_STAMP_ISO = re.compile(r"(\d{4}-\d\d-\d\d[T_ ]\d\d[:\-]?\d\d[:\-]?\d\d)(?:\.\d+)?Z")
_MIG = re.compile(r"^nvidia\.com/mig-(\d+g\.\d+gb)$")
_MIG_COUNT = re.compile(r"^nvidia\.com/mig-(\d+g\.\d+gb)\.count$")  # a node label: MIG devices of a profile
# HAMi's requests of part of each GPU a container holds: percent of its cores, MiB and percent of its memory
HAMI_PER_GPU = ("nvidia.com/gpucores", "nvidia.com/gpumem", "nvidia.com/gpumem-percentage")
_JSON_KIND = re.compile(r'"kind"\s*:\s*"(\w+)"')
_YAML_KIND = re.compile(r"^kind:\s*(\w+)\s*$", re.M)
_YAML_COMMENTS = re.compile(r"^(?:#[^\n]*(?:\n\s*|$))+")  # the comment lines a YAML file may open with

LABELS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
COUNTS = pl.List(pl.Struct({"key": pl.String, "value": pl.Int64}))  # landed as map(varchar, bigint)
POD_SCHEMA: dict[str, pl.DataType] = {
    "snapshot_at": pl.Datetime("us", "UTC"),
    "snapshot_time_source": pl.String,
    "uid": pl.String,
    "namespace": pl.String,
    "name": pl.String,
    "node_name": pl.String,
    "phase": pl.String,
    "reason": pl.String,
    "message": pl.String,
    "labels": LABELS,
    "owner_kind": pl.String,
    "owner_name": pl.String,
    "created_at": pl.Datetime("us", "UTC"),
    "started_at": pl.Datetime("us", "UTC"),
    "finished_at": pl.Datetime("us", "UTC"),
    "deleted_at": pl.Datetime("us", "UTC"),
    "exit_code": pl.Int32,
    "container_reason": pl.String,
    "restart_count": pl.Int32,
    "disruption": pl.Boolean,
    "disruption_reason": pl.String,
    "gpu_request": pl.Int64,
    "mig_profile": pl.String,
    "mig_count": pl.Int64,
    "gpu_resources": COUNTS,
    "containers": pl.List(pl.String),
    **pod_claims.COLUMNS,
    "qos_class": pl.String,
    "_source_file": pl.String,
    "_source_row": pl.Int64,
}
NODE_SCHEMA: dict[str, pl.DataType] = {
    "snapshot_at": pl.Datetime("us", "UTC"),
    "snapshot_time_source": pl.String,
    "name": pl.String,
    "uid": pl.String,
    "provider_id": pl.String,
    "provider": pl.String,
    "instance_id": pl.String,
    "instance_type": pl.String,
    "region": pl.String,
    "zone": pl.String,
    "capacity_type": pl.String,
    "capacity_type_label": pl.String,
    "node_pool": pl.String,
    "gpu_product": pl.String,
    "gpu_count": pl.Int64,
    "gpu_memory_mib": pl.Int64,
    "gpu_replicas": pl.Int64,
    "gpu_sharing_strategy": pl.String,
    "mig_strategy": pl.String,
    "mig_devices": COUNTS,
    "hami_gpu_indexes": COUNTS,
    "capacity_gpus": pl.Int64,
    "allocatable_gpus": pl.Int64,
    "ready": pl.Boolean,
    "unschedulable": pl.Boolean,
    "labels": LABELS,
    "created_at": pl.Datetime("us", "UTC"),
    "_source_file": pl.String,
    "_source_row": pl.Int64,
}


# ------------------------------------------------------------------------------------------ detection


def head_kind(s: Sniff) -> tuple[str, str | None]:
    """('json'|'yaml'|'', top-level kind) from the head, without parsing the whole file."""
    text = s.text.lstrip()
    if text.startswith("{"):
        # kubectl sorts keys (apiVersion, items, kind): a List's own kind follows its items, so look
        # for the item kind too; the last "kind" in a short head may be an item's ownerReference
        kinds = _JSON_KIND.findall(text)
        if '"apiVersion"' not in text[:200]:
            return "json", None
        top = "List" if '"items"' in text[:300] else (kinds[0] if kinds else None)
        return "json", top
    if _YAML_COMMENTS.sub("", text).startswith(("apiVersion:", "kind:", "items:", "---")):
        m = _YAML_KIND.search(text)
        return "yaml", m.group(1) if m else None
    return "", None


def item_kind(s: Sniff) -> str | None:
    """The kind of the objects in the file: Pod, Node or one of DRA_KINDS (the first such item's kind
    for a List or a YAML stream)."""
    syntax, top = head_kind(s)
    if not syntax:
        return None
    known = ("Pod", "Node", *DRA_KINDS)
    if top is not None and top.removesuffix("List") in known:
        return top.removesuffix("List")
    if top == "List" or syntax == "yaml":
        pattern = _JSON_KIND if syntax == "json" else re.compile(r"^\s*-?\s*kind:\s*(\w+)\s*$", re.M)
        for kind in pattern.findall(s.text):  # an API server's List names its items' kind: PodList
            if kind.removesuffix("List") in known:
                return kind.removesuffix("List")
    return None


_EMPTY_LIST = re.compile(
    r'^\{\s*"apiVersion"\s*:\s*"v1"\s*,\s*"items"\s*:\s*\[\s*\]\s*,\s*"kind"\s*:\s*"List"'
)


def detect_pods(s: Sniff) -> bool:
    """Pods, or kubectl's empty `List` (a namespace or cluster with no pods is a normal snapshot;
    an empty node list is not, so an empty List is taken as pods and lands nothing)."""
    return item_kind(s) == "Pod" or bool(_EMPTY_LIST.match(s.text.lstrip()))


def detect_nodes(s: Sniff) -> bool:
    return item_kind(s) == "Node"


# ------------------------------------------------------------------------------------------ reading


def read_items(ctx: LoadContext, kind: str, specs: tuple[str, ...] = (), status: bool = True) -> list[dict]:
    """The file's objects of `kind`, each checked to be a snapshot of one that exists (a uid, and a status
    where `status`); an object of a kind in `specs` (what the objects are made from) is refused first."""
    with open_text(ctx.path) as f:
        text = f.read()
    syntax, _ = head_kind(ctx.sniff)
    try:
        if syntax == "yaml":
            import yaml  # only for `-o yaml`; the JSON path never needs it

            docs = [d for d in yaml.safe_load_all(text) if d is not None]
            doc = docs[0] if len(docs) == 1 else {"kind": "List", "items": docs}
        else:
            doc = json.loads(text)
    except Exception as exc:
        line = getattr(exc, "lineno", None) or getattr(getattr(exc, "problem_mark", None), "line", None)
        raise ctx.error(
            f"not readable as {syntax or 'JSON'}: {exc}", line=line, expected="kubectl output"
        ) from exc
    if not isinstance(doc, dict):
        raise ctx.error("the document is not an object", expected=f"a Kubernetes {kind} or List")
    items = doc.get("items") if doc.get("kind", "").endswith("List") else [doc]
    if not isinstance(items, list):
        raise ctx.error("`items` is not a list", column="items", expected=f"a list of {kind} objects")
    wanted = f"`kubectl get {kind.lower()}s -o json` output"
    for i, item in enumerate(items, start=1):
        if isinstance(item, dict) and item.get("kind") in specs:
            name = (item.get("metadata") or {}).get("name", "?")
            raise ctx.error(
                f"item {i} ({name}) is a {item['kind']}: a spec (what kubectl apply reads), not a snapshot "
                f"of what ran",
                line=i,
                column="kind",
                expected=wanted,
            )
    for i, item in enumerate(items, start=1):
        if not isinstance(item, dict) or item.get("kind", kind) != kind:
            got = item.get("kind") if isinstance(item, dict) else type(item).__name__
            raise ctx.error(f"item {i} is a {got}", line=i, column="kind", expected=f"only {kind} objects")
        meta = item.get("metadata") or {}
        if not meta.get("uid") or (status and "status" not in item):
            raise ctx.error(
                f"item {i} ({meta.get('name', '?')}) has no metadata.uid or status: this is a manifest "
                "(what kubectl apply reads), not a snapshot of what ran",
                line=i,
                column="metadata.uid",
                expected=wanted,
            )
    return items


def snapshot_time(path: Path) -> tuple[datetime, str]:
    """The snapshot's UTC instant from the file name, else the file's modification time."""
    name = path.name
    m = _STAMP_COMPACT.search(name)
    if m:
        return datetime.strptime(m.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=UTC), "file_name"
    m = _STAMP_ISO.search(name)
    if m:
        digits = re.sub(r"\D", "", m.group(1))
        return datetime.strptime(digits, "%Y%m%d%H%M%S").replace(tzinfo=UTC), "file_name"
    return datetime.fromtimestamp(path.stat().st_mtime, UTC), "file_mtime"


def timestamp(ctx: LoadContext, value: object, row: int, column: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        raise ctx.error(
            f"{value!r} is not a timestamp", line=row, column=column, expected="RFC 3339"
        ) from None


def _count(ctx: LoadContext, value: object, row: int, column: str) -> int:
    """An extended-resource quantity: a whole number (device plugins do not allow fractions)."""
    text = str(value)
    if text.isdigit():
        return int(text)
    if text.endswith("k") and text[:-1].isdigit():
        return int(text[:-1]) * 1000
    raise ctx.error(f"{value!r} is not a whole device count", line=row, column=column, expected="an integer")


def controller_owner(meta: dict) -> dict:
    """The object's controlling owner reference, else its first one, else {}."""
    owners = meta.get("ownerReferences") or []
    return next((o for o in owners if o.get("controller")), owners[0] if owners else {})


def _labels(d: dict | None) -> list[dict[str, str]]:
    return [{"key": str(k), "value": str(v)} for k, v in sorted((d or {}).items())]


def _gpu_requests(ctx: LoadContext, spec: dict, row: int) -> dict[str, int]:
    def of(container: dict) -> dict[str, int]:
        res = container.get("resources") or {}
        wanted = {**(res.get("requests") or {}), **(res.get("limits") or {})}
        return {
            k: _count(ctx, v, row, f"resources.{k}") for k, v in wanted.items() if k.startswith("nvidia.com/")
        }

    total: dict[str, int] = {}
    per_gpu: dict[str, tuple[int, int]] = {}  # HAMi's per-GPU requests: (sum of value x GPUs, GPUs)
    for c in spec.get("containers") or []:
        wanted = of(c)
        gpus = max(wanted.get("nvidia.com/gpu", 0), 1)
        for k, v in wanted.items():
            if k in HAMI_PER_GPU:
                weighted, weight = per_gpu.get(k, (0, 0))
                per_gpu[k] = (weighted + v * gpus, weight + gpus)
            else:
                total[k] = total.get(k, 0) + v
    total |= {k: round(weighted / weight) for k, (weighted, weight) in per_gpu.items()}
    for c in spec.get("initContainers") or []:
        for k, v in of(c).items():
            total[k] = max(total.get(k, 0), v)
    return total


# ------------------------------------------------------------------------------------------ pods


def _pod_row(ctx: LoadContext, pod: dict, row: int) -> dict:
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    requests = _gpu_requests(ctx, spec, row)
    mig = sorted((m.group(1), n) for k, n in requests.items() if (m := _MIG.match(k)))
    owner = controller_owner(meta)
    finished, exit_code, c_reason, restarts = None, None, None, 0
    for cs in status.get("containerStatuses") or []:
        restarts += int(cs.get("restartCount") or 0)
        term = (cs.get("state") or {}).get("terminated")
        if term:
            end = timestamp(ctx, term.get("finishedAt"), row, "containerStatuses.state.terminated.finishedAt")
            if end is not None and (finished is None or end > finished):
                finished = end
            code = term.get("exitCode")
            if code is not None and (exit_code is None or (exit_code == 0 and code != 0)):
                exit_code, c_reason = int(code), term.get("reason")
    disruption = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "DisruptionTarget"), None
    )
    return {
        "uid": meta.get("uid"),
        "namespace": meta.get("namespace"),
        "name": meta.get("name"),
        "node_name": spec.get("nodeName"),
        "phase": status.get("phase"),
        "reason": status.get("reason"),
        "message": status.get("message"),
        "labels": _labels(meta.get("labels")),
        "owner_kind": owner.get("kind"),
        "owner_name": owner.get("name"),
        "created_at": timestamp(ctx, meta.get("creationTimestamp"), row, "metadata.creationTimestamp"),
        "started_at": timestamp(ctx, status.get("startTime"), row, "status.startTime"),
        "finished_at": finished,
        "deleted_at": timestamp(ctx, meta.get("deletionTimestamp"), row, "metadata.deletionTimestamp"),
        "exit_code": exit_code,
        "container_reason": c_reason,
        "restart_count": restarts,
        "disruption": disruption is not None and str(disruption.get("status")) == "True",
        "disruption_reason": disruption.get("reason") if disruption else None,
        "gpu_request": requests.get("nvidia.com/gpu", 0) + requests.get("nvidia.com/gpu.shared", 0),
        "mig_profile": mig[0][0] if mig else None,
        "mig_count": sum(n for p, n in mig if p == mig[0][0]) if mig else 0,
        "gpu_resources": [{"key": k, "value": v} for k, v in sorted(requests.items())],
        "containers": [c.get("name") for c in spec.get("containers") or []],
        **pod_claims.claim_columns(spec, status),
        "qos_class": status.get("qosClass"),
        "_source_row": row,
    }


def land_snapshot(ctx: LoadContext, table: str, rows: list[dict], schema: dict[str, pl.DataType]) -> None:
    """One snapshot's rows, stamped with its time and file; the key-value lists land as maps."""
    at, source = snapshot_time(ctx.path)
    for r in rows:
        r.update(snapshot_at=at, snapshot_time_source=source, _source_file=str(ctx.path))
    frame = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    maps = [c for c, t in schema.items() if t in (LABELS, COUNTS)]
    replace = ", ".join(f"map_from_entries({c}) as {c}" for c in maps)
    ctx.land(table, ctx.store.con.sql(f"select * replace ({replace}) from frame") if maps else frame)


def load_pods(ctx: LoadContext) -> None:
    rows = [_pod_row(ctx, pod, i) for i, pod in enumerate(read_items(ctx, "Pod"), start=1)]
    land_snapshot(ctx, "k8s_pods", rows, POD_SCHEMA)


# ------------------------------------------------------------------------------------------ nodes


def parse_provider_id(provider_id: str | None) -> tuple[str | None, str | None]:
    """(provider, instance id) from a node's spec.providerID."""
    if not provider_id:
        return None, None
    scheme, _, rest = provider_id.partition("://")
    parts = [p for p in rest.split("/") if p]
    if scheme == "aws":
        return "aws", next(
            (p for p in reversed(parts) if p.startswith(("i-", "mi-"))), parts[-1] if parts else None
        )
    if scheme == "azure":
        lower = [p.lower() for p in parts]
        if "virtualmachinescalesets" in lower:
            i = lower.index("virtualmachinescalesets")
            if len(parts) > i + 3 and lower[i + 2] == "virtualmachines":
                return "azure", f"{parts[i + 1]}_{parts[i + 3]}"
        return "azure", parts[-1] if parts else None
    if scheme == "gce":
        return "gcp", parts[-1] if parts else None
    return scheme or None, parts[-1] if parts else None


def capacity_type(labels: dict[str, str], provider: str | None) -> tuple[str | None, str | None]:
    """(normalised capacity type, the label value it came from)."""
    if (v := labels.get("karpenter.sh/capacity-type")) is not None:
        return {"spot": "spot", "on-demand": "on_demand", "reserved": "reserved"}.get(v.lower()), v
    if (v := labels.get("eks.amazonaws.com/capacityType")) is not None:
        mapping = {"SPOT": "spot", "ON_DEMAND": "on_demand", "CAPACITY_BLOCK": "reserved"}
        return mapping.get(v.upper()), v
    if (v := labels.get("kubernetes.azure.com/scalesetpriority")) is not None:
        return ("spot" if v.lower() == "spot" else "on_demand"), v
    for key in ("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible"):
        if labels.get(key) == "true":
            return "spot", "true"
    if provider == "azure":
        return "on_demand", None
    return None, None


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value is not None and str(value).isdigit() else None


def _node_row(ctx: LoadContext, node: dict, row: int) -> dict:
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    provider, instance_id = parse_provider_id(spec.get("providerID"))
    cap, cap_label = capacity_type(labels, provider)
    mig_devices = {m[1]: int(v) for k, v in labels.items() if (m := _MIG_COUNT.match(k)) and v.isdigit()}
    capacity, allocatable = status.get("capacity") or {}, status.get("allocatable") or {}
    for k, v in capacity.items():
        if (m := _MIG.match(k)) and m.group(1) not in mig_devices:
            mig_devices[m.group(1)] = _count(ctx, v, row, f"status.capacity.{k}")
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    gpu_cap = capacity.get("nvidia.com/gpu", capacity.get("nvidia.com/gpu.shared"))
    gpu_alloc = allocatable.get("nvidia.com/gpu", allocatable.get("nvidia.com/gpu.shared"))
    return {
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "provider_id": spec.get("providerID"),
        "provider": provider,
        "instance_id": instance_id,
        "instance_type": labels.get("node.kubernetes.io/instance-type")
        or labels.get("beta.kubernetes.io/instance-type"),
        "region": labels.get("topology.kubernetes.io/region")
        or labels.get("failure-domain.beta.kubernetes.io/region"),
        "zone": labels.get("topology.kubernetes.io/zone")
        or labels.get("failure-domain.beta.kubernetes.io/zone"),
        "capacity_type": cap,
        "capacity_type_label": cap_label,
        "node_pool": labels.get("karpenter.sh/nodepool")
        or labels.get("eks.amazonaws.com/nodegroup")
        or labels.get("kubernetes.azure.com/agentpool")
        or labels.get("cloud.google.com/gke-nodepool"),
        "gpu_product": labels.get("nvidia.com/gpu.product"),
        "gpu_count": _int_or_none(labels.get("nvidia.com/gpu.count")),
        "gpu_memory_mib": _int_or_none(labels.get("nvidia.com/gpu.memory")),
        "gpu_replicas": _int_or_none(labels.get("nvidia.com/gpu.replicas")),
        "gpu_sharing_strategy": labels.get("nvidia.com/gpu.sharing-strategy"),
        "mig_strategy": labels.get("nvidia.com/mig.strategy"),
        "mig_devices": [{"key": k, "value": v} for k, v in sorted(mig_devices.items())],
        "hami_gpu_indexes": hami_register.gpu_indexes(meta.get("annotations")),
        "capacity_gpus": _count(ctx, gpu_cap, row, "status.capacity.nvidia.com/gpu") if gpu_cap else None,
        "allocatable_gpus": (gpu_alloc or None)
        and _count(ctx, gpu_alloc, row, "status.allocatable.nvidia.com/gpu"),
        "ready": None if ready is None else str(ready.get("status")) == "True",
        "unschedulable": bool(spec.get("unschedulable", False)),
        "labels": _labels(labels),
        "created_at": timestamp(ctx, meta.get("creationTimestamp"), row, "metadata.creationTimestamp"),
        "_source_row": row,
    }


def load_nodes(ctx: LoadContext) -> None:
    rows = [_node_row(ctx, node, i) for i, node in enumerate(read_items(ctx, "Node"), start=1)]
    land_snapshot(ctx, "k8s_nodes", rows, NODE_SCHEMA)


PODS = Format(
    name="k8s_pods",
    group="scheduler",
    description="kubectl get pods -A -o json (or -o yaml) snapshot: a List of Pods, or one Pod",
    detect=detect_pods,
    load=load_pods,
    observed_at=lambda path, options: snapshot_time(path)[0],
    independent=True,
)
NODES = Format(
    name="k8s_nodes",
    group="scheduler",
    description="kubectl get nodes -o json (or -o yaml) snapshot: a List of Nodes, or one Node",
    detect=detect_nodes,
    load=load_nodes,
    observed_at=lambda path, options: snapshot_time(path)[0],
    independent=True,
)
