"""The simulated fleet's GPUs cut below the pod (simulator.partitioned_pools), end to end against the
simulator's ground truth, to the cent:

- DRA MIG: an A100 cut 4g.40gb + 2g.20gb + 1g.10gb whose slices NVIDIA's DRA driver gives out, one
  ResourceClaim per pod asking the class `mig.nvidia.com` for a profile by CEL selector (the device's
  static name, `gpu-0-mig-5-0-4`, names none): each pod is `mig` with its profile and pays g/7; the
  pod that ran between two claims snapshots, its claim in none, takes its profile from its template's
  claims for the other pods and pays its g/7 too; the 2g.20gb slice's pods, whose claims ask for any
  MIG device and name no profile, are known by their device's GPU instance profile ID alone
  (`gpu-0-mig-14-4-2`: 14 on an A100 80GB is 2g.20gb) and pay 2/7;
- vGPU guests: Azure NVadsA10 v5 VMs whose DCGM names their GPU `NVIDIA A10-4Q` / `NVIDIA A10-12Q`: the
  GPU is an A10 share of 4/24 and 12/24 of its frame buffer, each pod on it is `vgpu` and pays the VM's
  bill for the time it ran (a remote workstation that held its guest all window pays all of it).
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.warehouse.homes import query

MIG_PODS = r"^(lora-sweep|detector-eval|query-embedder)-"
VGPU_PODS = r"^(cad-workstation|tile-render)-"


@pytest.fixture(scope="module")
def pods(sim: Path, warehouse: Path) -> pl.DataFrame:
    """The simulated pods of the partitioned pools: their ground truth beside the warehouse's figures."""
    truth = pl.read_csv(
        sim / "ground_truth" / "jobs.csv",
        schema_overrides={"job_id": pl.String, "mig_profile": pl.String, "gpu_sharing": pl.String},
    ).filter((pl.col("scheduler") == "kubernetes") & pl.col("cost").is_not_null())
    ours = pl.DataFrame(
        query(
            warehouse,
            """select d.job_key, d.name, d.sharing_mode, d.mig_profile, d.gpu_share, d.gpus_allocated,
                    d.gpu_model, coalesce(f.cost, 0)
                from marts.dim_jobs as d left join marts.fct_job_costs as f using (job_key)
                where d.scheduler = 'kubernetes'""",
        ),
        schema=[
            "job_key",
            "name",
            "sharing_mode",
            "our_mig_profile",
            "share",
            "gpus",
            "gpu_model",
            "cost_ours",
        ],
        orient="row",
    )
    joined = truth.join(ours, on="job_key", how="inner")
    return joined.filter(pl.col("name").str.contains(f"{MIG_PODS}|{VGPU_PODS}"))


def test_dra_mig_pods_are_mig_slices_and_pay_their_part_to_the_cent(pods: pl.DataFrame):
    mig = pods.filter(pl.col("name").str.contains(MIG_PODS))
    assert sorted(mig["mig_profile"].unique()) == ["1g.10gb", "2g.20gb", "4g.40gb"], "no DRA MIG pods"
    assert mig.height >= 9
    assert (mig["sharing_mode"] == "mig").all(), mig.filter(pl.col("sharing_mode") != "mig")
    assert (mig["our_mig_profile"] == mig["mig_profile"]).all()
    assert (mig["gpus"] == 1).all() and (mig["gpu_model"] == "A100-PCIE-80GB").all()
    slices = mig["mig_profile"].str.extract(r"^(\d)g", 1).cast(pl.Float64)
    assert ((mig["share"] - slices / 7).abs() < 1e-12).all()
    worst = (mig["cost_ours"].cast(pl.Float64) - mig["cost"]).abs().max()
    assert worst < 0.005, f"a DRA MIG pod's cost differs from the ground truth by {worst}"


def test_a_dra_pod_between_claims_snapshots_pays_its_slice_to_the_cent(pods: pl.DataFrame, sim: Path):
    """The 1g.10gb slice's pod from 1 to 4 hours into the window (partitioned_pools.SHORT_POD) was in
    no claims snapshot (every 6 hours from the window's start): its pod snapshot names the claim made
    from template mig-1g-10gb, whose claims for the slice's other pods say the profile."""
    at = [pl.col(c).str.to_datetime(time_zone="UTC").alias(c) for c in ("started_at", "ended_at")]
    short = (
        pods.filter(pl.col("name").str.starts_with("query-embedder-")).with_columns(at).sort("started_at")[:1]
    )
    hours = short.select(pl.col("started_at").dt.hour(), pl.col("ended_at").dt.hour())
    assert hours.rows() == [(1, 4)], "no DRA pod between two claims snapshots"
    assert short.select("sharing_mode", "our_mig_profile", "gpus").row(0) == ("mig", "1g.10gb", 1)
    assert abs(short["share"][0] - 1 / 7) < 1e-12
    assert short["cost"][0] > 0 and abs(float(short["cost_ours"][0]) - short["cost"][0]) < 0.005
    claims = "".join(p.read_text() for p in sim.glob("schedulers/kubernetes/*/resourceclaims-*.json"))
    assert short["name"][0] not in claims, "its claim was in a snapshot after all"


def test_dra_pods_whose_claims_name_no_profile_pay_their_slice_by_its_id(pods: pl.DataFrame, sim: Path):
    """The 2g.20gb slice's claims ask the class for any MIG device, no selector; only the static device
    they were allocated, named for its GPU instance profile ID, says the slice."""
    claims = [
        item
        for path in sim.glob("schedulers/kubernetes/*/resourceclaims-*.json")
        for item in json.loads(path.read_text())["items"]
        if item["metadata"]["name"].startswith("detector-eval-")
    ]
    assert claims, "no claims of the 2g.20gb slice's pods"
    for item in claims:
        (request,) = item["spec"]["devices"]["requests"]
        assert "selectors" not in request["exactly"]
        (result,) = item["status"]["allocation"]["devices"]["results"]
        assert result["device"] == "gpu-0-mig-14-4-2"
    by_id = pods.filter(pl.col("name").str.starts_with("detector-eval-"))
    assert by_id.height >= 2
    assert (by_id["sharing_mode"] == "mig").all() and (by_id["our_mig_profile"] == "2g.20gb").all()
    assert ((by_id["share"] - 2 / 7).abs() < 1e-12).all()
    worst = (by_id["cost_ours"].cast(pl.Float64) - by_id["cost"]).abs().max()
    assert worst < 0.005, f"a pod known by its device's profile ID differs from the ground truth by {worst}"


def test_vgpu_guests_are_a10_shares_by_frame_buffer(warehouse: Path):
    got = query(
        warehouse,
        """select instance_type, gpu_model, vgpu_profile, vgpu_share, gpu_memory_gb from marts.dim_gpus
            where instance_type like 'Standard_NV%ads_A10_v5' order by instance_type""",
    )
    assert got == [
        ("Standard_NV18ads_A10_v5", "A10", "12Q", 0.5, 12),
        ("Standard_NV6ads_A10_v5", "A10", "4Q", pytest.approx(4 / 24), 4),
    ]


def test_vgpu_pods_pay_their_guests_bill_to_the_cent(pods: pl.DataFrame, sim: Path, warehouse: Path):
    guests = pods.filter(pl.col("name").str.contains(VGPU_PODS))
    assert guests.height >= 3, "the simulated fleet has no vGPU guest pods"
    assert (guests["sharing_mode"] == "vgpu").all(), guests.filter(pl.col("sharing_mode") != "vgpu")
    assert (guests["gpu_model"] == "A10").all() and (guests["share"] == 1.0).all()
    worst = (guests["cost_ours"].cast(pl.Float64) - guests["cost"]).abs().max()
    assert worst < 0.005, f"a vGPU guest's pod's cost differs from the ground truth by {worst}"
    # the workstation held its guest all window: it pays the whole bill of its VM (warehouse and truth)
    (workstation,) = guests.filter(pl.col("name").str.starts_with("cad-workstation-"))["cost_ours"]
    (billed,) = query(
        warehouse,
        """select sum(h.effective_cost) from marts.fct_gpu_hours as h
            inner join marts.dim_gpus as g using (gpu_id)
            where g.instance_type = 'Standard_NV6ads_A10_v5'""",
    )[0]
    hours = pl.read_csv(sim / "ground_truth" / "gpu_hours.csv", infer_schema=False).filter(
        pl.col("instance_id").str.contains("nv6-a10-vgpu")
    )
    assert abs(float(workstation) - float(billed)) < 0.005
    assert abs(float(workstation) - hours["effective_cost"].cast(pl.Float64).sum()) < 0.005
