"""Landed data as Parquet (ingest.store): the layout other engines read, and all-or-nothing per load
however a process dies between writing a load's files and moving them into place."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from gpu_ledger.cli import main
from gpu_ledger.ingest.errors import LegacyStore
from gpu_ledger.ingest.runner import ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.read.status import status


def _query_range(path: Path, values: list[list]) -> Path:
    metric = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-1", "Hostname": "node-a", "gpu": "0"}
    result = [{"metric": metric, "values": values}]
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}))
    return path


# two samples either side of midnight UTC, so the load spans two day partitions
ACROSS_MIDNIGHT = [[1790899170, "40"], [1790899230, "60"]]  # 2026-10-01 23:59:30Z, 2026-10-02 00:00:30Z


def _files(landed: Path, table: str) -> list[Path]:
    return sorted((landed / table).rglob("*.parquet"))


def _loaded(store: RawStore) -> set[str]:
    return {
        r[0]
        for r in store.con.sql("select load_id from raw.ingest_manifest where status = 'loaded'").fetchall()
    }


def test_samples_land_as_parquet_partitioned_by_utc_day(tmp_path: Path):
    landed = tmp_path / "landed"
    with RawStore(tmp_path / "landed.duckdb") as store:
        (outcome,) = ingest([_query_range(tmp_path / "util.json", ACROSS_MIDNIGHT)], store, progress=False)
        assert outcome.status == "loaded"
        days = store.con.sql(
            "select day, count(*) from raw.dcgm_samples group by day order by day"
        ).fetchall()
        (load_id,) = _loaded(store)
    assert [str(d) for d, _ in days] == ["2026-10-01", "2026-10-02"]
    assert [f.parent.name for f in _files(landed, "dcgm_samples")] == ["day=2026-10-01", "day=2026-10-02"]
    assert all(
        f.name.startswith(load_id) for f in _files(landed, "dcgm_samples") + _files(landed, "dcgm_series")
    )
    assert not any((landed / ".pending").iterdir())
    # any engine reads the files alone: no day column inside them, the folder carries it
    read = duckdb.sql(
        "select count(*), min(_load_id) "
        f"from read_parquet('{landed}/dcgm_samples/*/*.parquet', hive_partitioning = true)"
    ).fetchall()
    assert read == [(2, load_id)]
    # and the manifest, snapshotted for engines that cannot read landed.duckdb
    snapshot = duckdb.sql(
        f"select load_id, status from '{landed}/ingest_manifest/manifest.parquet'"
    ).fetchall()
    assert snapshot == [(load_id, "loaded")]


def test_a_changed_file_replaces_its_earlier_load_files_and_all(tmp_path: Path):
    landed = tmp_path / "landed"
    path = _query_range(tmp_path / "util.json", ACROSS_MIDNIGHT)
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([path], store, progress=False)
        _query_range(path, ACROSS_MIDNIGHT[:1])
        (outcome,) = ingest([path], store, progress=False)
        assert outcome.replaced == [str(path.resolve())]
        (current,) = _loaded(store)
        assert store.con.sql("select count(*) from raw.dcgm_samples").fetchall() == [(1,)]
    assert {f.name.split("_")[0] for f in _files(landed, "dcgm_samples") + _files(landed, "dcgm_series")} == {
        current
    }


@pytest.mark.parametrize("dies_in", ["_move_in", "_delete_files"])
def test_a_reader_sees_the_rows_of_the_loads_the_manifest_calls_loaded_whenever_ingest_dies(
    tmp_path: Path, monkeypatch, dies_in: str
):
    """Issue 31: after kill -9, 2 of 21 trials left a load the manifest called loaded whose rows no reader
    saw until the store was opened again (its files were moved in after the commit). A load replacing
    another dies as its files move into place, or as the replaced load's files are deleted: a reader
    opening landed.duckdb alone sees the rows of exactly the loads the manifest calls loaded, and the
    next store only tidies files."""
    db = tmp_path / "landed.duckdb"
    path = _query_range(tmp_path / "util.json", ACROSS_MIDNIGHT)
    with RawStore(db) as store:
        ingest([path], store, progress=False)

    def die(*args):
        raise KeyboardInterrupt  # as abrupt as it gets inside Python

    monkeypatch.setattr(RawStore, dies_in, die)
    _query_range(path, [[1790899170, "10"]])
    store = RawStore(db)
    with pytest.raises(KeyboardInterrupt):
        ingest([path], store, progress=False)
    store.con.close()  # no commit of what was open, no snapshot, no cleanup: what kill -9 leaves
    monkeypatch.undo()

    def read() -> tuple[list, list]:
        """(load, rows) the manifest calls loaded, and (load, rows) a reader of the samples sees."""
        with duckdb.connect(str(db), read_only=True) as con:
            loaded = "select load_id, rows from raw.ingest_manifest where status = 'loaded' order by 1"
            seen = "select _load_id, count(*) from raw.dcgm_samples group by 1 order by 1"
            return con.sql(loaded).fetchall(), con.sql(seen).fetchall()

    loaded, seen = read()
    assert seen == loaded
    with RawStore(db):
        pass
    assert read() == (loaded, seen)
    (current,) = (load_id for load_id, _ in loaded)
    assert {f.name.split("_")[0] for f in _files(tmp_path / "landed", "dcgm_samples")} == {current}
    assert not any((tmp_path / "landed" / ".pending").iterdir())


def test_a_committed_load_left_pending_by_an_earlier_version_is_moved_in(tmp_path: Path, monkeypatch):
    """Before issue 31 a load's files were moved in after its commit, so a kill could leave them
    pending: the next store moves them in."""
    db = tmp_path / "landed.duckdb"
    monkeypatch.setattr(RawStore, "place_load", lambda self, load_id: None)
    with RawStore(db) as store:
        ingest([_query_range(tmp_path / "util.json", [[1790899170, "10"]])], store, progress=False)
    monkeypatch.undo()
    assert any((tmp_path / "landed" / ".pending").iterdir())
    with RawStore(db) as store:
        assert store.con.sql("select count(*), sum(value) from raw.dcgm_samples").fetchall() == [(1, 10.0)]
    assert not any((tmp_path / "landed" / ".pending").iterdir())


def test_files_of_no_current_load_are_removed_when_the_store_opens(tmp_path: Path):
    """A kill before the commit leaves pending files; a kill after it, the replaced load's files."""
    db = tmp_path / "landed.duckdb"
    with RawStore(db) as store:
        ingest([_query_range(tmp_path / "util.json", ACROSS_MIDNIGHT)], store, progress=False)
    landed = tmp_path / "landed"
    orphan = landed / ".pending" / "deadbeef" / "dcgm_samples" / "day=2026-10-03" / "deadbeef_0_0.parquet"
    orphan.parent.mkdir(parents=True)
    stale = landed / "dcgm_samples" / "day=2026-10-01" / "cafe_0_0.parquet"
    for file in (orphan, stale):
        duckdb.sql(f"copy (select 1::bigint as series_id) to '{file}' (format parquet)")
    with RawStore(db) as store:
        assert store.con.sql("select count(*) from raw.dcgm_samples").fetchall() == [(2,)]
    assert not orphan.exists() and not stale.exists()
    assert not any((landed / ".pending").iterdir())


def test_a_store_of_an_earlier_version_is_refused_with_what_to_do(tmp_path: Path):
    db = tmp_path / "landed.duckdb"
    with duckdb.connect(str(db)) as con:
        con.sql("create schema raw")
        con.sql("create table raw.dcgm_samples (series_id ubigint, ts timestamptz, value double)")
    with pytest.raises(LegacyStore, match="before landed data was Parquet: ingest the source files again"):
        RawStore(db)


def test_the_command_line_says_so_in_one_line(tmp_path: Path, capsys):
    with duckdb.connect(str(tmp_path / "landed.duckdb")) as con:
        con.sql("create schema raw")
        con.sql("create table raw.focus (BilledCost decimal(18, 2))")
    assert main(["status", "--home", str(tmp_path)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("gpu-ledger status: ")
    assert line.endswith("ingest the source files again into a new --home")


def test_status_reads_the_telemetry_window_from_the_first_and_last_days(tmp_path: Path):
    later = [[1790899170 + 2 * 86_400, "5"]]  # 2026-10-03 23:59:30Z, in a file of its own
    with RawStore(tmp_path / "landed.duckdb") as store:
        ingest([_query_range(tmp_path / "a.json", ACROSS_MIDNIGHT)], store, progress=False)
        ingest([_query_range(tmp_path / "b.json", later)], store, progress=False)
        assert [str(d) for d in store.partitions("dcgm_samples")] == [
            "2026-10-01",
            "2026-10-02",
            "2026-10-03",
        ]
        telemetry = next(g for g in status(store) if g.group == "telemetry")
    assert f"{telemetry.data_from:%Y-%m-%dT%H:%M:%S}" == "2026-10-01T23:59:30"
    assert f"{telemetry.data_to:%Y-%m-%dT%H:%M:%S}" == "2026-10-03T23:59:30"
