"""The simulated fleet's files, read the way the real tools' files read: same shapes as the real samples.

The writer tests check each format on hand-made fleets; these check what `simulate` actually wrote
for a whole fleet, against the real upstream samples in ../shared/samples (skipped when absent).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest

from tests.samples import SONAR_SACCT_FIELDS

# SLURM_TIME_FORMAT's default, or with %z appended (the simulated Frankfurt cluster prints offsets)
SACCT_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d([+-]\d{4})?|Unknown|None)$")
DCGM_LINE = re.compile(r'^(DCGM_FI_[A-Z_]+)\{((?:[A-Za-z_]+="[^"]*",?)+)\} (-?[0-9.]+)$')


def _sample_dcgm_lines(samples: Path) -> list[str]:
    text = (samples / "dcgm" / "datadog_integrations-core_dcgm_fixture_metrics.txt").read_text()
    # the fixture's maintainers hand-wrote a few label-less lines; the exporter's own lines carry labels
    return [line for line in text.splitlines() if line.startswith("DCGM_FI_") and "{" in line]


def test_dcgm_snapshots_have_the_real_exporters_line_shape(sim: Path, samples: Path):
    real = _sample_dcgm_lines(samples)
    assert all(DCGM_LINE.match(line) for line in real), "the pattern describes the real exporter"
    real_first_labels = {DCGM_LINE.match(line).group(2).split("=")[0] for line in real}
    lines = [
        line
        for p in sim.glob("telemetry/metrics/*.prom")
        for line in p.read_text().splitlines()
        if line[:1] != "#"
    ]
    assert lines
    for line in lines:
        match = DCGM_LINE.match(line)
        assert match, line
        assert match.group(2).split("=")[0] in real_first_labels
    sentinel = [line for line in lines if line.endswith(" 9223372036854775794")]
    assert len(sentinel) == 1, "one DCGM blank sentinel is planted on the on-prem node"


def test_query_range_files_are_prometheus_matrices_of_dcgm_series(sim: Path, samples: Path):
    counters = (samples / "dcgm" / "dcgm-exporter_default-counters.csv").read_text()
    counters += (samples / "dcgm" / "dcgm-exporter_dcp-metrics-included.csv").read_text()
    known = set(re.findall(r"DCGM_FI_[A-Z_]+", counters))
    # the DCGM metrics' folders (the vLLM counters beside them: tests/simulator/test_inference_servers.py)
    for path in sim.glob("telemetry/prometheus/*/DCGM_FI_*/2026-10-04.json.gz"):
        body = json.loads(gzip.decompress(path.read_bytes()))
        assert body["status"] == "success" and body["data"]["resultType"] == "matrix"
        name = path.parent.name
        assert name in known
        for series in body["data"]["result"]:
            assert series["metric"]["__name__"] == name
            assert {"UUID", "gpu", "modelName", "Hostname"} <= set(series["metric"])
            assert len(series["values"]) <= 11_000
            t, v = series["values"][0]
            assert isinstance(t, int) and isinstance(v, str)


def test_mig_series_carry_gpu_instance_labels_and_no_gpu_util(sim: Path):
    mig = []
    for path in sim.glob("telemetry/prometheus/eks-*/DCGM_FI_PROF_GR_ENGINE_ACTIVE/*.json.gz"):
        mig += [
            s["metric"]
            for s in json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]
            if "GPU_I_PROFILE" in s["metric"]
        ]
    assert {m["GPU_I_PROFILE"] for m in mig} == {"3g.40gb", "2g.20gb", "1g.10gb"}
    mig_uuids = {m["UUID"] for m in mig}
    for path in sim.glob("telemetry/prometheus/eks-*/DCGM_FI_DEV_GPU_UTIL/*.json.gz"):
        util = json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]
        assert not mig_uuids & {s["metric"]["UUID"] for s in util}


def test_sacct_reads_like_the_real_parsable2_output(sim: Path, samples: Path):
    real_header = (samples / "slurm" / "slurm2sql_test-data1.csv").read_text().splitlines()[0].split("|")
    known_fields = (
        set(real_header) | set(SONAR_SACCT_FIELDS) | {"Cluster", "WCKey", "QOS", "Eligible", "ReqTRES"}
    )
    (path,) = sim.glob("schedulers/slurm/*.txt")
    lines = path.read_text().splitlines()
    header = lines[0].split("|")
    assert set(header) <= known_fields, set(header) - known_fields
    assert header[-1] == "JobName", "JobName last: it may contain '|'"
    rows = [line.split("|", len(header) - 1) for line in lines[1:]]
    assert all(len(r) == len(header) for r in rows)
    col = {name: i for i, name in enumerate(header)}
    for r in rows:
        for field in ("Submit", "Start", "End"):
            assert SACCT_TIME.match(r[col[field]]), (field, r[col[field]])
    ids = [r[col["JobID"]] for r in rows]
    assert any(i.endswith(".batch") for i in ids) and any(i.endswith(".extern") for i in ids)
    assert any(re.fullmatch(r"\d+_\d+", i) for i in ids), "array tasks"
    states = {r[col["State"]] for r in rows}
    assert {"COMPLETED", "FAILED", "TIMEOUT", "RUNNING", "PENDING", "REQUEUED"} <= states
    assert any(s.startswith("CANCELLED by ") for s in states)
    assert any("|None assigned|" in line for line in lines)
    assert any(re.search(r"\|h100-\[\d\d-\d\d\]\|", line) for line in lines), "multi-node hostlist"


def test_pods_and_nodes_carry_the_contract_labels_and_gpu_requests(sim: Path, samples: Path):
    manifest = (samples / "k8s" / "dcgm-exporter_tests_gpu-pod.yaml").read_text()
    assert "nvidia.com/gpu" in manifest
    pods = {}
    for path in sim.glob("schedulers/kubernetes/*/pods-*.json"):
        body = json.loads(path.read_text())
        assert body["kind"] == "List" and body["apiVersion"] == "v1"
        for pod in body["items"]:
            pods[pod["metadata"]["uid"]] = pod
    requests = {k for p in pods.values() for c in p["spec"]["containers"] for k in c["resources"]["limits"]}
    assert {"nvidia.com/gpu", "nvidia.com/mig-3g.40gb", "nvidia.com/mig-1g.10gb"} <= requests
    labelled = [p for p in pods.values() if "team-id" in p["metadata"].get("labels", {})]
    assert {"team-id", "project-id", "workload-type", "environment"} <= set(labelled[0]["metadata"]["labels"])
    assert any(not p["metadata"].get("labels") for p in pods.values()), "unlabelled sandbox pods"
    reclaimed = [
        p for p in pods.values() if any(c["type"] == "DisruptionTarget" for c in p["status"]["conditions"])
    ]
    assert reclaimed and all(p["status"]["phase"] == "Failed" for p in reclaimed)
    nodes = [
        n
        for path in sim.glob("schedulers/kubernetes/*/nodes-*.json")
        for n in json.loads(path.read_text())["items"]
    ]
    assert all(n["spec"]["providerID"].split(":")[0] in ("aws", "azure") for n in nodes)
    capacity = {n["metadata"]["labels"].get("karpenter.sh/capacity-type") for n in nodes}
    assert {"spot", "reserved"} <= capacity


def test_eventbridge_events_have_the_real_keys(sim: Path, samples: Path):
    for kind, sample in (
        ("EC2 Spot Instance Interruption Warning", "nth_spot_interruption_warning_example.json"),
        ("EC2 Instance State-change Notification", "nth_ec2_state_change_example.json"),
    ):
        real = json.loads((samples / "aws-events" / sample).read_text())
        ours = [
            json.loads(line) for p in sim.glob("events/aws/*.jsonl") for line in p.read_text().splitlines()
        ]
        ours = [e for e in ours if e["detail-type"] == kind]
        assert ours, kind
        assert set(ours[0]) == set(real) and set(ours[0]["detail"]) == set(real["detail"])


def test_focus_export_uses_the_columns_of_the_real_focus_sample(sim: Path, samples: Path):
    with (samples / "billing" / "focus1.0_sample_1000rows_aws_azure_oci.csv").open(newline="") as f:
        real = set(next(csv.reader(f))) - {"Id"}
    (path,) = sim.glob("billing/azure/**/*.csv")
    ours = pl.read_csv(path, infer_schema_length=0)
    assert real <= set(ours.columns), real - set(ours.columns)
    assert set(ours["ProviderName"]) == {"Microsoft"}
    assert {"Usage", "Credit", "Purchase"} <= set(ours["ChargeCategory"])


def test_bills_add_up(sim: Path):
    """Amortised, each provider's bill is its GPU cost, its unused commitments and its other charges."""
    rec = pl.read_csv(sim / "ground_truth" / "reconciliation.csv")
    expected = {
        p: rec.filter(pl.col("provider") == p)
        .select(pl.sum("gpu_cost") + pl.sum("unused_commitment_cost") + pl.sum("other_charges"))
        .item()
        for p in ("aws", "azure")
    }
    manifests = [json.loads(p.read_text()) for p in sim.glob("billing/aws/**/*Manifest.json")]
    final = max(manifests, key=lambda m: m["exportTime"])
    files = [str(sim / "billing" / "aws" / f.split("/", 3)[3]) for f in final["dataFiles"]]
    aws = duckdb.sql(f"""
        select sum(case line_item_line_item_type
            when 'SavingsPlanCoveredUsage' then savings_plan_savings_plan_effective_cost
            when 'SavingsPlanRecurringFee'
                then savings_plan_total_commitment_to_date - savings_plan_used_commitment
            when 'SavingsPlanNegation' then 0 when 'SavingsPlanUpfrontFee' then 0
            when 'DiscountedUsage' then reservation_effective_cost
            when 'RIFee' then reservation_unused_amortized_upfront_fee_for_billing_period
                              + reservation_unused_recurring_fee
            else line_item_unblended_cost end)
        from read_parquet({files})""").fetchall()[0][0]
    (azure_path,) = sim.glob("billing/azure/**/*.csv")
    azure = pl.read_csv(azure_path)["EffectiveCost"].sum()
    assert aws == pytest.approx(expected["aws"], abs=0.01)
    assert azure == pytest.approx(expected["azure"], abs=0.01)
