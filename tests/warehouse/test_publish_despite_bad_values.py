"""One source's values never stop the others from publishing.

Every value a mart's data test would reject is either normalised at ingest (a Parquet `''` is NULL) or
rejects its own file there, with its row and column. So a home holding a small simulated fleet, a FOCUS
Parquet export with `''` in its closed-list columns, and FOCUS files carrying each value the mart's tests
refuse, builds and publishes: the bad files are named by ingest, every other row reaches the marts.
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpu_ledger.build.duckdb_engine import build
from gpu_ledger.home import Home
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig

pytestmark = pytest.mark.slow
START = datetime(2026, 10, 1, tzinfo=UTC)

FOCUS = {
    "BilledCost": "12.5",
    "BillingAccountId": "acct-parquet",
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargeCategory": "Usage",
    "ChargePeriodStart": "2026-10-01T03:00:00Z",
    "ChargePeriodEnd": "2026-10-01T04:00:00Z",
    "CommitmentDiscountCategory": "",
    "CommitmentDiscountId": "",
    "CapacityReservationStatus": "",
    "PricingCategory": "",
    "ProviderName": "Acme Cloud",
    "ServiceName": "Object storage",
    "ServiceCategory": "Storage",
    "ChargeFrequency": "Usage-Based",
}
# each value the mart's tests refuse, planted in a file of its own
PLANTED = {
    "ChargeCategory": "Refund",
    "PricingCategory": "Free",
    "CommitmentDiscountCategory": "Hours",
    "CapacityReservationStatus": "Idle",
    "ChargeFrequency": "Daily",
    "BilledCost": "",
    "ChargePeriodStart": "",
    "BillingPeriodStart": " ",
}


def _parquet(path, rows):
    pq.write_table(pa.table({k: pa.array([r[k] for r in rows], pa.string()) for k in rows[0]}), path)
    return path


def test_bad_values_reject_their_files_and_everything_else_publishes(tmp_path):
    sim = tmp_path / "sim"
    simulate(
        SimulationConfig(out=sim, gpus=3, days=1, interval_s=900, seed=3, start=START), show_progress=False
    )
    extra = tmp_path / "exports"
    extra.mkdir()
    good = _parquet(extra / "good.parquet", [FOCUS, {**FOCUS, "ChargePeriodStart": "2026-10-01T04:00:00Z"}])
    bad = {
        column: _parquet(extra / f"bad-{column}.parquet", [FOCUS, {**FOCUS, column: value}])
        for column, value in PLANTED.items()
    }
    home = Home(tmp_path / "home")
    with RawStore(home.raw_db) as store:
        outcomes = {o.path: o for o in ingest([sim, extra], store, progress=False)}
    for column, path in bad.items():
        assert outcomes[path].status == "rejected"
        assert f"column '{column}': data row 2" in outcomes[path].error, outcomes[path].error
    assert outcomes[good].status == "loaded"
    rejected = {p for p, o in outcomes.items() if o.status == "rejected"}
    assert rejected == set(bad.values()), "only the planted files are rejected"

    result = build(home)
    assert result.success, result.output[-3000:]
    with duckdb.connect(str(home.warehouse), read_only=True) as con:
        parquet_rows = con.sql(
            'select count(*), sum("BilledCost"), count("CommitmentDiscountCategory") '
            "from marts.fct_billing_focus where \"BillingAccountId\" = 'acct-parquet'"
        ).fetchall()[0]
        simulated = con.sql("select count(*) from marts.fct_gpu_hours").fetchall()[0][0]
    assert parquet_rows == (2, 25.0, 0)
    assert simulated > 0, "the simulated fleet's sources published beside the FOCUS export"
