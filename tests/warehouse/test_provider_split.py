"""fct_provider_split_reconciliation against the simulator's truth of AWS's split.

The simulated EKS cluster's CUR 2.0 export carries AWS split cost allocation data (simulator.provider_split:
each pod's requests weighed against its instance's, the unrequested rest spread over the pods); its truth
is ground_truth/provider_split.csv, per UTC day x instance x pod. The mart must find every pod's split and
unused cost to the cent, invent none, and name a reason for every difference of a cent from our split.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow

CENT = 0.005  # "to the cent": closer than half a cent


@pytest.fixture(scope="module")
def con(sim: Path, warehouse: Path):
    con = duckdb.connect(str(warehouse), read_only=True)
    truth = sim / "ground_truth" / "provider_split.csv"
    con.execute(f"create temp view truth as select * from read_csv('{truth}', header = true)")
    yield con
    con.close()


def test_the_provider_split_of_every_pod_day_is_the_simulators_to_the_cent(con):
    pods = con.execute("select count(*) from truth").fetchone()[0]
    assert pods > 50  # the fleet's EKS pods ran on its instances most days
    missing, wrong = con.execute(
        """
        select
            count(*) filter (where m.consumer is null),
            count(*) filter (
                where abs(m.provider_split_cost - t.split_cost) >= 0.005
                or abs(m.provider_unused_cost - t.unused_cost) >= 0.005
            )
        from truth as t
        left join marts.fct_provider_split_reconciliation as m
            on m.charge_date = t.charge_date
            and m.parent_resource_id = t.parent_resource_id
            and m.consumer = t.job_key
        """
    ).fetchone()
    assert (missing, wrong) == (0, 0)
    invented = con.execute(
        """
        select count(*) from marts.fct_provider_split_reconciliation as m
        where m.is_in_provider_split and not exists (
            select 1 from truth as t
            where t.charge_date = m.charge_date and t.parent_resource_id = m.parent_resource_id
                and t.job_key = m.consumer
        )
        """
    ).fetchone()[0]
    assert invented == 0
    totals = con.execute(
        """
        select
            (select sum(split_cost + unused_cost) from truth),
            (select sum(provider_cost) from marts.fct_provider_split_reconciliation)
        """
    ).fetchone()
    assert totals[0] == pytest.approx(float(totals[1]), abs=CENT)


def test_every_difference_from_our_split_has_its_reason(con):
    rows = con.execute(
        """
        select reason, count(*), sum(cost_difference)
        from marts.fct_provider_split_reconciliation
        where abs(cost_difference) >= 0.01
        group by reason
        """
    ).fetchall()
    reasons = {reason: (n, float(total)) for reason, n, total in rows}
    assert None not in reasons, reasons
    # AWS weighs CPU and memory requests and spreads the unrequested capacity over the pods; we keep
    # idle GPU time apart: all three show on a fleet with idle GPUs and pods of many shapes
    assert {"idle_kept_apart", "requests_weighting"} <= set(reasons), reasons
    assert reasons["idle_kept_apart"][1] < 0  # our idle is cost the provider gave to pods
    # every pod the provider split is one we attribute: no difference comes from a consumer we lack
    unmatched = con.execute(
        """
        select count(*) from marts.fct_provider_split_reconciliation
        where reason = 'unmatched_consumer' and is_in_provider_split
        """
    ).fetchone()[0]
    assert unmatched == 0
