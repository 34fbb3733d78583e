"""Kubernetes DRA ResourceClaims (`kubectl get resourceclaims -A -o json`, or `-o yaml`).

No real allocated claim exists as a file: the claims here are made from the fields of the one public
example (a comment in NVIDIA's k8s-dra-driver-gpu, demo/specs/extended-resources/mig-1g-12gb.yaml) and
the sharing config of its gpu-test5.yaml, both read by path under /work/shared when present.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
REAL_DRA = SAMPLES.parent / "real-world" / "set3" / "k8s-dra-driver-gpu"
NVIDIA = "gpu.nvidia.com"
COLUMNS = (
    "name, owner_kind, owner_name, is_extended_resource_claim, result_index, request, device_class, driver, "
    "pool, device, gpu_index, is_mig, mig_profile, sharing_strategy, mps_active_thread_pct, "
    "reserved_for_uids, reserved_for_names"
)


@pytest.fixture
def store(tmp_path: Path):
    with RawStore(tmp_path / "home" / "landed.duckdb") as s:
        yield s


def one(store: RawStore, path: Path) -> Outcome:
    (outcome,) = ingest([path], store, progress=False)
    return outcome


def claims(store: RawStore) -> list[tuple]:
    return store.con.sql(
        f"select {COLUMNS} from raw.k8s_resource_claims order by name, result_index"
    ).fetchall()


def write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2) if name.endswith(".json") else yaml.safe_dump(doc))
    return path


def sharing(request: str, strategy: str, source: str | None = None, **mps: int) -> dict:
    """An opaque GpuConfig for one request, as gpu-test5.yaml writes it (source: as status repeats it)."""
    shared: dict = {"strategy": strategy}
    if strategy == "TimeSlicing":
        shared["timeSlicingConfig"] = {"interval": "Long"}
    if mps:
        shared["mpsConfig"] = mps
    parameters = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "sharing": shared}
    config = {"requests": [request], "opaque": {"driver": NVIDIA, "parameters": parameters}}
    return config | ({"source": source} if source else {})


def claim(
    name: str,
    requests: list[dict],
    results: list[tuple[str, str, str]] | None,
    pods: Sequence[str] = (),
    config: Sequence[dict] = (),
    allocation_config: Sequence[dict] = (),
    api: str = "resource.k8s.io/v1",
) -> dict:
    """A ResourceClaim as the API server prints it; results are (request, pool, device), None: pending."""
    status: dict = {}
    if results is not None:
        devices: dict = {
            "results": [{"device": d, "driver": NVIDIA, "pool": p, "request": r} for r, p, d in results]
        }
        if allocation_config:
            devices["config"] = list(allocation_config)
        status["allocation"] = {"devices": devices}
        status["reservedFor"] = [{"name": p, "resource": "pods", "uid": f"uid-{p}"} for p in pods]
    return {
        "apiVersion": api,
        "kind": "ResourceClaim",
        "metadata": {
            "creationTimestamp": "2026-10-01T05:58:00Z",
            "name": name,
            "namespace": "gpu-test",
            "ownerReferences": [{"apiVersion": "v1", "controller": True, "kind": "Pod", "name": pods[0]}]
            if pods
            else [],
            "uid": f"uid-{name}",
        },
        "spec": {"devices": {"requests": requests, **({"config": list(config)} if config else {})}},
        "status": status,
    }


def exactly(name: str, device_class: str = NVIDIA) -> dict:
    return {
        "name": name,
        "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": device_class},
    }


def real_mig_claim() -> dict:
    """The scheduler-made claim in mig-1g-12gb.yaml's comment, field for field."""
    doc = claim(
        "mig-1g12gb-pod-extended-resources-8r9k5",
        [exactly("container-0-request-0", "mig-1g-12gb.gpu.nvidia.com")],
        [("container-0-request-0", "kind-dra-1-worker", "gpu-1-mig-19-4-1")],
        ["mig-1g12gb-pod"],
    )
    doc["metadata"] |= {
        "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
        "generateName": "mig-1g12gb-pod-extended-resources-",
        "namespace": "extended-resource-mig-1g12gb",
    }
    doc["status"]["reservedFor"][0]["uid"] = "6c01cc40-3527-43a9-a241-89c9e7d18921"
    return doc


def claim_list(*items: dict) -> dict:
    """`kubectl get resourceclaims -A -o json`: a v1 List (its kind after its items, as kubectl sorts)."""
    return {"apiVersion": "v1", "items": list(items), "kind": "List", "metadata": {"resourceVersion": ""}}


def the_list() -> dict:
    unseen = claim("unseen", [exactly("gpu")], None)
    del unseen["status"]  # kubectl prints a pending claim's `status: {}`; one without is pending too
    return claim_list(
        claim(
            "shared-gpu",
            [exactly("ts-gpu")],
            [("ts-gpu", "node-a", "gpu-0")],
            ["pod0", "pod1"],
            config=[sharing("ts-gpu", "TimeSlicing")],
        ),
        claim(
            "mps-gpu",
            [exactly("mps-gpu")],
            [("mps-gpu", "node-a", "gpu-1")],
            ["pod2"],
            config=[sharing("mps-gpu", "MPS", defaultActiveThreadPercentage=50)],
            allocation_config=[sharing("mps-gpu", "MPS", "FromClaim", defaultActiveThreadPercentage=50)],
        ),
        real_mig_claim(),
        claim("waiting", [exactly("gpu")], None),
        unseen,
        claim(
            "old-api",
            [{"name": "gpus", "deviceClassName": NVIDIA, "count": 2}],
            [("gpus", "node-b", "gpu-2"), ("gpus", "node-b", "gpu-3")],
            ["trainer"],
            api="resource.k8s.io/v1beta1",
        ),
    )


EXPECTED = [
    ("mig-1g12gb-pod-extended-resources-8r9k5", "Pod", "mig-1g12gb-pod", True, 1, "container-0-request-0",
     "mig-1g-12gb.gpu.nvidia.com", NVIDIA, "kind-dra-1-worker", "gpu-1-mig-19-4-1", 1, True, "1g.12gb",
     None, None, ["6c01cc40-3527-43a9-a241-89c9e7d18921"], ["mig-1g12gb-pod"]),
    ("mps-gpu", "Pod", "pod2", False, 1, "mps-gpu", NVIDIA, NVIDIA, "node-a", "gpu-1", 1, False, None,
     "MPS", 50, ["uid-pod2"], ["pod2"]),
    ("old-api", "Pod", "trainer", False, 1, "gpus", NVIDIA, NVIDIA, "node-b", "gpu-2", 2, False, None,
     None, None, ["uid-trainer"], ["trainer"]),
    ("old-api", "Pod", "trainer", False, 2, "gpus", NVIDIA, NVIDIA, "node-b", "gpu-3", 3, False, None,
     None, None, ["uid-trainer"], ["trainer"]),
    ("shared-gpu", "Pod", "pod0", False, 1, "ts-gpu", NVIDIA, NVIDIA, "node-a", "gpu-0", 0, False, None,
     "TimeSlicing", None, ["uid-pod0", "uid-pod1"], ["pod0", "pod1"]),
    ("unseen", None, None, False, None, None, None, None, None, None, None, None, None,
     None, None, [], []),
    ("waiting", None, None, False, None, None, None, None, None, None, None, None, None,
     None, None, [], []),
]  # fmt: skip


def test_claims_land_one_row_per_allocated_device(tmp_path: Path, store: RawStore) -> None:
    """Whole GPUs shared by two pods (TimeSlicing) and by MPS at 50%, the real MIG claim, pending claims
    (one row each, no device; with `status: {}` or none) and v1beta1's request shape (deviceClassName
    on the request)."""
    path = write(tmp_path, "resourceclaims-20261001T060000Z.json", the_list())
    assert registry.detect(Sniff.of(path)).name == "k8s_resource_claims"  # not pods: owners name Pods
    out = one(store, path)
    assert (out.status, out.format, out.rows) == ("loaded", "k8s_resource_claims", 7)
    assert claims(store) == EXPECTED
    got = store.con.sql(
        "select distinct snapshot_at, snapshot_time_source, created_at, _source_file "
        "from raw.k8s_resource_claims"
    ).fetchall()
    created = datetime(2026, 10, 1, 5, 58, tzinfo=UTC)
    assert got == [(datetime(2026, 10, 1, 6, tzinfo=UTC), "file_name", created, str(path))]


def test_the_landed_columns_are_the_documented_source(tmp_path: Path, store: RawStore) -> None:
    """raw.k8s_resource_claims has the columns and types of its dbt source (what an empty build uses)."""
    assert one(store, write(tmp_path, "resourceclaims.json", the_list())).status == "loaded"
    sources = yaml.safe_load(
        (ROOT / "models" / "staging" / "kubernetes" / "_kubernetes__sources.yml").read_text()
    )
    (table,) = [t for t in sources["sources"][0]["tables"] if t["name"] == "k8s_resource_claims"]
    landed = store.con.sql(
        "select column_name, data_type from information_schema.columns "
        "where table_name = 'k8s_resource_claims' order by ordinal_position"
    ).fetchall()
    assert landed == [(c["name"], c["data_type"].upper()) for c in table["columns"]]


def test_yaml_and_a_single_claim_without_a_stamp(tmp_path: Path, store: RawStore) -> None:
    """`-o yaml` lands the same rows as `-o json`; one claim (`kubectl get resourceclaim x -o json`)
    in a file whose name has no stamp takes the file's modification time, and lands once."""
    as_yaml = write(tmp_path, "resourceclaims-2026-10-01T06:00:00Z.yaml", the_list())
    assert yaml.safe_load(as_yaml.read_text())["items"][0]["kind"] == "ResourceClaim"
    assert (one(store, as_yaml).format, claims(store)) == ("k8s_resource_claims", EXPECTED)
    single = write(tmp_path, "claim.json", real_mig_claim())
    os.utime(single, (1_790_000_000, 1_790_000_000))
    assert [one(store, single).status for _ in range(2)] == ["loaded", "unchanged"]
    got = store.con.sql(
        "select snapshot_at, snapshot_time_source, count(*) from raw.k8s_resource_claims "
        "group by all order by 2 desc"
    ).fetchall()
    assert got == [
        (datetime(2026, 10, 1, 6, tzinfo=UTC), "file_name", 7),
        (datetime.fromtimestamp(1_790_000_000, UTC), "file_mtime", 1),
    ]


def test_a_device_name_of_another_shape_lands_without_a_gpu_index(tmp_path: Path, store: RawStore) -> None:
    """Only `gpu-<n>` and `gpu-<n>-mig-...` name a GPU's index; a newer driver's MIG name carries its
    profile (`gpu-0-mig-1g12gb-19-4`); other names (another driver's, a VFIO device) land as found."""
    doc = claim_list(
        claim(
            "other",
            [exactly("gpu"), exactly("vfio"), exactly("mig", "mig.gpu.nvidia.com")],
            [("gpu", "node-c", "0000-3b-00-0"), ("vfio", "node-c", "gpu-vfio-3"),
             ("mig", "node-c", "gpu-0-mig-1g12gb-19-4")],
            ["p"],
        )
    )  # fmt: skip
    out = one(store, write(tmp_path, "resourceclaims-20261001T060000Z.json", doc))
    assert (out.status, out.rows) == ("loaded", 3)
    got = store.con.sql(
        "select device, gpu_index, is_mig, mig_profile from raw.k8s_resource_claims order by result_index"
    ).fetchall()
    assert got == [
        ("0000-3b-00-0", None, False, None),
        ("gpu-vfio-3", None, False, None),
        ("gpu-0-mig-1g12gb-19-4", 0, True, "1g.12gb"),
    ]


def test_the_config_the_driver_applies_gives_the_sharing(tmp_path: Path, store: RawStore) -> None:
    """The allocation's configs, the class's before the claim's, the last that applies winning: a class
    config for every request loses to the claim's for the request; a GpuConfig for every request is not
    a MIG device's; a firstAvailable subrequest (`<request>/<subrequest>`) takes its own class."""
    every = sharing("x", "TimeSlicing", "FromClass")
    every["requests"] = []
    mps = sharing("gpu", "MPS", "FromClaim", defaultActiveThreadPercentage=30)
    pick = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": NVIDIA},
            {"name": "slice", "deviceClassName": "mig-3g-40gb.gpu.nvidia.com"},
        ],
    }
    doc = claim_list(
        claim("a", [exactly("gpu")], [("gpu", "n", "gpu-4")], ["p"], allocation_config=[mps, every]),
        claim("b", [exactly("other")], [("other", "n", "gpu-5")], ["p"], allocation_config=[mps, every]),
        claim("c", [pick], [("gpu/slice", "n", "gpu-6-mig-9-0-4")], ["p"], allocation_config=[every]),
    )
    assert one(store, write(tmp_path, "resourceclaims-20261001T060000Z.json", doc)).status == "loaded"
    got = store.con.sql(
        "select name, device_class, mig_profile, sharing_strategy, mps_active_thread_pct "
        "from raw.k8s_resource_claims order by name"
    ).fetchall()
    assert got == [
        ("a", NVIDIA, None, "MPS", 30),
        ("b", NVIDIA, None, "TimeSlicing", None),
        ("c", "mig-3g-40gb.gpu.nvidia.com", "3g.40gb", None, None),
    ]


def test_a_bad_mps_percentage_names_the_item(tmp_path: Path, store: RawStore) -> None:
    config = [sharing("gpu", "MPS", defaultActiveThreadPercentage=150)]
    doc = claim_list(claim("a", [exactly("gpu")], [("gpu", "n", "gpu-0")], ["p"], config=config))
    path = write(tmp_path, "resourceclaims.json", doc)
    assert one(store, path).error == (
        f"{path}:1: column 'sharing.mpsConfig.defaultActiveThreadPercentage': 150 is not a percentage "
        "(expected an integer from 0 to 100)"
    )


def test_an_empty_claim_list_lands_nothing(tmp_path: Path, store: RawStore) -> None:
    """An API server's own empty ResourceClaimList (kubectl prints an empty List, which pods take)."""
    doc = {"apiVersion": "resource.k8s.io/v1", "items": [], "kind": "ResourceClaimList"}
    out = one(store, write(tmp_path, "resourceclaims-20261001T060000Z.json", doc))
    assert (out.status, out.format, out.rows) == ("loaded", "k8s_resource_claims", 0)


TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "multiple-gpus", "namespace": "gpu-test5"},
    "spec": {"spec": {"devices": {"requests": [exactly("ts-gpu")]}}},
}


@pytest.mark.parametrize(
    ("name", "doc", "says"),
    [
        ("templates.json", {"apiVersion": "v1", "items": [TEMPLATE], "kind": "List"},
         ":1: column 'kind': item 1 (multiple-gpus) is a ResourceClaimTemplate: a spec"),
        ("classes.yaml", {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                          "metadata": {"name": "gpu.nvidia.com"}, "spec": {"selectors": []}},
         ":1: column 'kind': item 1 (gpu.nvidia.com) is a DeviceClass: a spec"),
        ("claim.yaml", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": "single-gpu", "namespace": "gpu-test1"},
                        "spec": {"devices": {"requests": [exactly("gpu")]}}},
         ":1: column 'metadata.uid': item 1 (single-gpu) has no metadata.uid or status: this is a manifest"),
    ],
)  # fmt: skip
def test_specs_and_manifests_are_refused_in_one_line(
    tmp_path: Path, store: RawStore, name: str, doc: dict, says: str
) -> None:
    path = write(tmp_path, name, doc)
    out = one(store, path)
    assert (out.status, out.format) == ("rejected", "k8s_resource_claims")
    assert out.error.startswith(f"{path}{says}") and "\n" not in out.error
    assert out.error.endswith("(expected `kubectl get resourceclaims -o json` output)")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("mig-1g-12gb.yaml", "item 2 (mig-1g-12gb.gpu.nvidia.com) is a DeviceClass: a spec"),
        ("gpu-test5.yaml", "item 2 (multiple-gpus) is a ResourceClaimTemplate: a spec"),
    ],
)
def test_the_real_dra_examples_are_refused_as_specs(name: str, says: str, store: RawStore) -> None:
    """NVIDIA's examples (a Namespace, a DeviceClass or ResourceClaimTemplate, and a Pod, with their
    comments first; the allocated claim in mig-1g-12gb.yaml is only a comment) are what kubectl apply
    reads, not what ran."""
    path = REAL_DRA / name
    if not path.is_file():
        pytest.skip(f"real-world file not found: {path}")
    out = one(store, path)
    assert (out.status, out.format) == ("rejected", "k8s_resource_claims")
    assert out.error == (
        f"{path}:2: column 'kind': {says} (what kubectl apply reads), not a snapshot of what ran "
        "(expected `kubectl get resourceclaims -o json` output)"
    )


MIG_SAMPLE = Path(__file__).parent / "samples" / "resourceclaims-mig-20261001T060000Z.json"


def test_mig_devices_take_their_profile_from_the_name_or_the_requests_selector(store: RawStore) -> None:
    """`kubectl get resourceclaims -A -o json` of pods that ask the class `mig.nvidia.com` for MIG
    slices by profile, as NVIDIA's examples and issue #897 (an H100 PCIe cut 4g+2g+1g under one
    parentUUID constraint) write them: a static MIG device's name (`gpu-0-mig-5-0-4`: minor, GPU
    instance profile ID, placement) says no profile, so the request's CEL selector gives it; a
    dynamic MIG device's name carries it, `+me` spelled `-me`."""
    out = one(store, MIG_SAMPLE)
    assert (out.status, out.format, out.rows) == ("loaded", "k8s_resource_claims", 5)
    got = store.con.sql(
        "select name, request, device_class, device, gpu_index, is_mig, mig_profile, mig_profile_id, "
        "reserved_for_names from raw.k8s_resource_claims order by name, result_index"
    ).fetchall()
    mig, pod1 = "mig.nvidia.com", "mig-claiming-pod-1-mig-devices-x7k2q"
    assert got == [
        ("dyn-mig-pod-mig-devices-b5w9c", "mig", mig, "gpu-1-mig-1g10gb-me-20-0", 1, True, "1g.10gb+me", 20,
         ["dyn-mig-pod"]),
        ("inference-7d9f8-mig-devices-4nq8v", "mig", mig, "gpu-1-mig-9-4-4", 1, True, "3g.40gb", 9,
         ["inference-7d9f8"]),
        (pod1, "mig-4g-40gb", mig, "gpu-0-mig-5-0-4", 0, True, "4g.40gb", 5,
         ["mig-claiming-pod-1"]),
        (pod1, "mig-2g-20gb", mig, "gpu-0-mig-14-4-2", 0, True, "2g.20gb", 14,
         ["mig-claiming-pod-1"]),
        (pod1, "mig-1g-10gb", mig, "gpu-0-mig-19-6-1", 0, True, "1g.10gb", 19,
         ["mig-claiming-pod-1"]),
    ]  # fmt: skip


def test_a_selector_on_another_attribute_names_no_profile(tmp_path: Path, store: RawStore) -> None:
    """Only a selector comparing the profile attribute to a profile names one (v1beta1's request-level
    selectors too); a MIG device of a class that says nothing more is MIG of unknown profile, its static
    name's GPU instance profile ID kept (14: a 2g profile on every 7-slice GPU)."""
    by_uuid = {"cel": {"expression": "device.attributes['gpu.nvidia.com'].uuid == 'MIG-4d806f22'"}}
    old = {"name": "mig", "deviceClassName": "mig.nvidia.com", "count": 1, "selectors": [by_uuid]}
    profile = {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].profile == "2g.20gb"'}}
    doc = claim_list(
        claim("a", [old], [("mig", "n", "gpu-0-mig-14-4-2")], ["p"], api="resource.k8s.io/v1beta1"),
        claim("b", [old | {"selectors": [by_uuid, profile]}], [("mig", "n", "gpu-0-mig-14-0-2")], ["q"],
              api="resource.k8s.io/v1beta1"),
    )  # fmt: skip
    assert one(store, write(tmp_path, "resourceclaims-20261001T060000Z.json", doc)).status == "loaded"
    got = store.con.sql(
        "select name, is_mig, mig_profile, mig_profile_id from raw.k8s_resource_claims order by name"
    ).fetchall()
    assert got == [("a", True, None, 14), ("b", True, "2g.20gb", 14)]


def dra_pod(name: str, claims: list[dict], made: list[dict] | None) -> dict:
    """A finished pod as `kubectl get pods -o json` prints it, its containers using its DRA claims (the
    shape of NVIDIA's demo pods: `resources.claims` naming `spec.resourceClaims` entries)."""
    status = {"phase": "Succeeded", "startTime": "2026-10-01T07:00:00Z", "qosClass": "BestEffort"}
    if made is not None:
        status["resourceClaimStatuses"] = made
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"creationTimestamp": "2026-10-01T06:59:00Z", "name": name, "namespace": "gpu-test",
                     "uid": f"uid-{name}"},
        "spec": {
            "containers": [{"name": "ctr0", "image": "ubuntu:22.04",
                            "resources": {"claims": [{"name": c["name"]} for c in claims]}}],
            "nodeName": "node-a",
            "resourceClaims": claims,
        },
        "status": status,
    }  # fmt: skip


def test_pods_name_their_claims_and_the_templates_they_are_made_from(tmp_path: Path, store: RawStore) -> None:
    """A pod made its claim from a template (the claim's name is in status.resourceClaimStatuses, as the
    claim controller writes it: `<pod>-<entry>-<suffix>`), one naming a shared claim, one whose template
    claim is not made yet, and a pod without DRA: its claims are kept on the pod's row even when the
    claim itself is gone by the next claims snapshot."""
    doc = claim_list(
        dra_pod("pod0", [{"name": "gpu", "resourceClaimTemplateName": "mig-1g"}],
                [{"name": "gpu", "resourceClaimName": "pod0-gpu-7x2kq"}]),
        dra_pod("pod1", [{"name": "shared", "resourceClaimName": "shared-gpu"}], None),
        dra_pod("pod2", [{"name": "gpu", "resourceClaimTemplateName": "mig-1g"}], None),
        dra_pod("pod3", [], None),
    )  # fmt: skip
    assert one(store, write(tmp_path, "pods-20261001T120000Z.json", doc)).format == "k8s_pods"
    got = store.con.sql(
        "select name, claim_templates, claim_names from raw.k8s_pods order by name"
    ).fetchall()
    assert got == [
        ("pod0", ["mig-1g"], ["pod0-gpu-7x2kq"]),
        ("pod1", [None], ["shared-gpu"]),
        ("pod2", ["mig-1g"], [None]),
        ("pod3", [], []),
    ]
