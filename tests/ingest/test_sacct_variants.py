"""sacct as real sites and collectors write it: every real sample without flags, JobIDRaw-only field
lists, UTC offsets in times, recognised collector lists, and generated rows of awkward values."""

from __future__ import annotations

import re
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_ledger.ingest.base import LoadContext, Options
from gpu_ledger.ingest.errors import IngestError
from gpu_ledger.ingest.formats.schedulers import slurm_sacct
from gpu_ledger.ingest.formats.schedulers.sacct_fields import COLLECTOR_LISTS
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore
from tests.samples import SONAR_SACCT_FIELDS

XDMOD = "Open XDMoD shredder"
SONAR = "NordicHPC Sonar"
# file -> (rows, the collector list recognised, or None for a file with a header)
REAL_SAMPLES = {
    "slurm2sql_test-data1.csv": (5, None),
    "sonar_fox_sacct_output_2025.txt": (301, SONAR),
    "sonar_fox_sacct_output_2024.txt": (96, SONAR),
    "xdmod_accounting-logs.log": (4, XDMOD),
    "xdmod_accounting-logs-with-job-arrays.log": (6, XDMOD),
    "xdmod_non-ended-job-state.log": (2, XDMOD),
    "xdmod_unknown-job-state.log": (2, XDMOD),
    "xdmod_utf8-multibyte-chars.log": (1, XDMOD),
}
RAW_ONLY = "JobIDRaw|User|Account|State|Start|End|AllocTRES|NodeList|JobName"


@pytest.fixture
def store(tmp_path: Path):
    with RawStore(tmp_path / "home" / "landed.duckdb") as s:
        yield s


def one(store: RawStore, path: Path, **options: object) -> Outcome:
    (outcome,) = ingest([path], store, options=Options(**options), progress=False)
    return outcome


def rows(store: RawStore, sql: str) -> list[tuple]:
    return store.con.sql(sql).fetchall()


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------- real samples


@pytest.mark.parametrize("name", sorted(REAL_SAMPLES))
def test_every_real_sacct_sample_lands_without_flags(samples: Path, store: RawStore, name: str) -> None:
    count, collector = REAL_SAMPLES[name]
    out = one(store, samples / "slurm" / name)
    assert (out.status, out.format, out.rows) == ("loaded", "slurm_sacct", count), out.error
    if collector is None:
        assert out.notes == []
    else:
        (note,) = out.notes
        assert f"read as the {collector} field list" in note and "--sacct-fields" in note
    # a recognised list is not saved: it is recognised again, and a user's own default stays theirs
    saved = (
        rows(store, "select value from raw.ingest_settings") if "ingest_settings" in store.tables() else []
    )
    assert saved == []


def test_recognised_lists_read_the_samples_as_the_explicit_lists_do(samples: Path, tmp_path: Path) -> None:
    xdmod_fields = next(c.fields for c in COLLECTOR_LISTS if c.name == XDMOD)
    for name, fields in (
        ("sonar_fox_sacct_output_2025.txt", SONAR_SACCT_FIELDS),
        ("xdmod_accounting-logs.log", xdmod_fields),
    ):
        with RawStore(tmp_path / f"a-{name}.duckdb") as bare, RawStore(tmp_path / f"b-{name}.duckdb") as told:
            assert one(bare, samples / "slurm" / name).status == "loaded"
            assert one(told, samples / "slurm" / name, sacct_fields=fields).notes == []
            sql = "select * exclude (_load_id) from raw.slurm_sacct order by _source_row"
            assert rows(bare, sql) == rows(told, sql)
    assert next(c.fields for c in COLLECTOR_LISTS if c.name == SONAR) == SONAR_SACCT_FIELDS


def test_unknown_states_land_flagged_not_rejected(samples: Path, store: RawStore) -> None:
    # xdmod's FOO/BAR: a month of accounting must not be refused for one state word a newer Slurm
    # (or a test) prints; the rows land with state_known false and dbt gives them no end reason
    assert one(store, samples / "slurm" / "xdmod_unknown-job-state.log").status == "loaded"
    got = rows(store, "select job_id, state, state_known, start_at is null from raw.slurm_sacct order by 1")
    assert got == [("3451067", "FOO", False, False), ("3483276", "BAR", False, True)]


# ------------------------------------------------------------------------------------- field lists


def test_jobidraw_only_field_list_given_or_in_a_header(tmp_path: Path, store: RawStore) -> None:
    lines = [
        "7001|ann|phys|COMPLETED|2026-10-01T01:00:00|2026-10-01T02:00:00|cpu=8,gres/gpu:a100=2,gres/gpu=2|gpu-[01-02]|train",
        "7001.batch|||COMPLETED|2026-10-01T01:00:00|2026-10-01T02:00:00|cpu=8,gres/gpu=2|gpu-01|batch",
        "7002|bob|phys|RUNNING|2026-10-01T01:30:00|Unknown|cpu=4,gres/gpu=1|gpu-03|a|b",
    ]
    bare = write(tmp_path, "bare.txt", "\n".join(lines) + "\n")
    out = one(store, bare, sacct_fields=tuple(RAW_ONLY.split("|")))
    assert (out.status, out.rows) == ("loaded", 3), out.error
    headed = write(tmp_path, "headed.txt", RAW_ONLY + "\n" + "\n".join(lines).replace("700", "800") + "\n")
    assert one(store, headed).rows == 3
    got = rows(
        store,
        "select job_id, job_id_raw, base_job_id, step_id, allocation_job_id, alloc_gpus, gpu_type, job_name "
        "from raw.slurm_sacct order by job_id",
    )
    assert got[:3] == [
        ("7001", "7001", "7001", None, "7001", 2, "a100", "train"),
        ("7001.batch", "7001.batch", "7001", "batch", "7001", 2, None, "batch"),
        ("7002", "7002", "7002", None, "7002", 1, None, "a|b"),
    ]
    assert [g[0] for g in got[3:]] == ["8001", "8001.batch", "8002"]


def test_a_field_list_without_any_job_id_is_refused(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "x.txt", "7001|ann|COMPLETED|2026-10-01T01:00:00\n")
    out = one(store, path, sacct_fields=("JobName", "User", "State", "Start"))
    assert out.status == "rejected"
    assert "is not a sacct field list" in out.error and "JobID or JobIDRaw" in out.error


def test_explicit_fields_and_a_fitting_saved_default_win_over_recognition(
    samples: Path, tmp_path: Path, store: RawStore
) -> None:
    sonar = samples / "slurm" / "sonar_fox_sacct_output_2024.txt"
    # a user's own 32-field list (a Sonar-shaped file read with other names) is theirs to choose
    own = ("JobID", "JobIDRaw", *[f"X{i}" for i in range(29)], "JobName")
    out = one(store, sonar, sacct_fields=own)
    assert (out.status, out.notes) == ("loaded", [])
    assert rows(store, "select count(*) from raw.slurm_sacct where state is not null")[0][0] == 0
    head = write(tmp_path, "head.txt", "\n".join(sonar.read_text(encoding="utf-8").splitlines()[:50]) + "\n")
    out = one(store, head)  # the saved default fits (32 fields): it wins, silently
    assert (out.status, out.rows, out.notes) == ("loaded", 50, [])
    # read with the user's names throughout: no State column, Sonar's user names under x0
    assert rows(store, "select count(*), count(state), count(extra['x0']) from raw.slurm_sacct") == [
        (96 + 50, 0, rows(store, "select count(*) from raw.slurm_sacct where step_id is null")[0][0])
    ]


def test_a_saved_default_that_cannot_fit_gives_way_to_a_recognised_list(
    samples: Path, store: RawStore
) -> None:
    assert one(store, samples / "slurm" / "xdmod_accounting-logs.log", sacct_fields=next(
        c.fields for c in COLLECTOR_LISTS if c.name == XDMOD
    )).status == "loaded"  # fmt: skip
    out = one(store, samples / "slurm" / "sonar_fox_sacct_output_2025.txt")
    assert (out.status, out.rows) == ("loaded", 301)
    (note,) = out.notes
    assert SONAR in note and "the saved default (26 fields) does not fit" in note


def test_a_headerless_file_no_list_fits_asks_for_fields(
    samples: Path, tmp_path: Path, store: RawStore
) -> None:
    # Sonar's shape, but Priority is not a number: not Sonar's list after all
    line = (samples / "slurm" / "sonar_fox_sacct_output_2025.txt").read_text().splitlines()[0]
    values = line.split("|")
    values[30] = "high"
    out = one(store, write(tmp_path, "odd.txt", "|".join(values) + "\n"))
    assert out.status == "rejected" and out.notes == []
    assert ":1:" in out.error and "--sacct-fields" in out.error and "Sonar" in out.error


# ------------------------------------------------------------------------------------- time offsets


HEADER = "JobID|State|Submit|Start|End|JobName"


@pytest.mark.parametrize(
    ("printed", "utc"),
    [
        ("2022-02-21T14:37:02+0100", datetime(2022, 2, 21, 13, 37, 2, tzinfo=UTC)),
        ("2022-02-21T14:37:02+01:00", datetime(2022, 2, 21, 13, 37, 2, tzinfo=UTC)),
        ("2022-02-21T14:37:02Z", datetime(2022, 2, 21, 14, 37, 2, tzinfo=UTC)),
        ("2022-02-21T09:37:02-0500", datetime(2022, 2, 21, 14, 37, 2, tzinfo=UTC)),
        ("2022-02-21T14:37:02", datetime(2022, 2, 21, 20, 37, 2, tzinfo=UTC)),  # naive: --timezone (CST)
    ],
)
def test_an_explicit_offset_wins_over_timezone(
    tmp_path: Path, store: RawStore, printed: str, utc: datetime
) -> None:
    path = write(tmp_path, "t.txt", f"{HEADER}\n1|COMPLETED|{printed}|{printed}|Unknown|x\n")
    out = one(store, path, timezone="America/Chicago")
    assert out.status == "loaded", out.error
    assert rows(store, "select submit_at, start_at, end_at from raw.slurm_sacct") == [(utc, utc, None)]


def test_offset_times_across_a_dst_change_and_headerless(tmp_path: Path, store: RawStore) -> None:
    # a Berlin host with SLURM_TIME_FORMAT=%Y-%m-%dT%H:%M:%S%z through the October 2026 change: the
    # wall time 02:30 happens twice, the offsets tell which
    line = "5|COMPLETED|2026-10-25T02:30:00+0200|2026-10-25T02:30:00+0200|2026-10-25T02:30:00+0100|x"
    path = write(tmp_path, "dst.txt", line + "\n")
    assert slurm_sacct.detect(Sniff.of(path))
    out = one(store, path, sacct_fields=tuple(HEADER.split("|")), timezone="Asia/Tokyo")
    assert out.status == "loaded", out.error
    start, end = rows(store, "select start_at, end_at from raw.slurm_sacct")[0]
    assert (start, end) == (
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 25, 1, 30, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    "printed", ["2022-02-21T14:37:02+9999", "2022-02-21T14:37:02+01", "2022-02-21T14:37:02 +0100"]
)
def test_a_malformed_offset_is_a_one_line_error(tmp_path: Path, store: RawStore, printed: str) -> None:
    path = write(tmp_path, "t.txt", f"{HEADER}\n1|COMPLETED|2022-02-21T14:37:02|{printed}|Unknown|x\n")
    out = one(store, path)
    assert out.status == "rejected"
    assert out.error.startswith(f"{path}:2: column 'start': {printed!r} is not a sacct time")
    assert "\n" not in out.error


def test_the_simulators_frankfurt_cluster_prints_offsets(tmp_path: Path) -> None:
    from gpu_ledger.simulator.writers.slurm import OFFSET_TIME_ZONES, format_time

    zone = next(iter(OFFSET_TIME_ZONES.values()))
    summer, winter = datetime(2026, 10, 1, 0, 56, 36, tzinfo=UTC), datetime(2026, 10, 26, 0, 0, tzinfo=UTC)
    assert format_time(summer, zone=zone) == "2026-10-01T02:56:36+0200"
    assert format_time(winter, zone=zone) == "2026-10-26T01:00:00+0100"
    assert format_time(summer) == "2026-10-01T00:56:36"


# ------------------------------------------------------------------------------------- generated rows

ZONE = "Europe/Oslo"
NULL = object()  # the value lands as NULL
BAD = object()  # the file must be rejected naming this line and field


def _whole(text: str) -> object:
    text = text.strip()
    if text == "":
        return NULL
    return int(text) if re.fullmatch(r"[0-9]+", text) and int(text) <= 2**53 else BAD


def _time(text: str) -> object:
    text = text.strip()
    if text in ("", "Unknown", "None"):
        return NULL
    m = re.fullmatch(
        r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(Z|[+-][0-9]{2}:?[0-9]{2})?", text
    )
    if m is None:
        return BAD
    try:
        wall = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return BAD
    if m.group(2):
        offset = m.group(2).replace("Z", "+0000").replace(":", "")
        hours, minutes = int(offset[1:3]), int(offset[3:5])
        if hours > 23 or minutes > 59:
            return BAD
        return datetime.strptime(m.group(1) + offset, "%Y-%m-%dT%H:%M:%S%z").astimezone(UTC)
    local = wall.replace(tzinfo=ZoneInfo(ZONE))
    if local.astimezone(UTC).astimezone(ZoneInfo(ZONE)).replace(tzinfo=None) != wall:
        return BAD  # a wall time in the spring DST gap
    return local.astimezone(UTC)  # fold=0: the first of an autumn fold's two times


def _exit(text: str) -> object:
    text = text.strip()
    if text == "":
        return NULL
    return text if re.fullmatch(r"[0-9]{1,3}:[0-9]{1,3}", text) else BAD


def _state(text: str) -> object:
    text = text.strip()
    if text == "":
        return NULL
    m = re.fullmatch(r"([A-Z][A-Z_]*)(?: by [0-9]{1,10})?\+?", text)
    return m.group(1) if m else BAD


def _gpus(text: str) -> object:
    text = text.strip()
    total, typed = None, 0
    for item in text.split(",") if text else []:
        key, _, value = item.partition("=")
        if key == "gres/gpu" or key.startswith("gres/gpu:"):
            if not re.fullmatch(r"[0-9]+", value) or int(value) > 2**53:
                return BAD
            total = int(value) if key == "gres/gpu" else total
            typed += int(value) if key != "gres/gpu" else 0
    return total if total is not None else typed


def _duration(text: str) -> object:
    text = text.strip()
    if text in ("", "UNLIMITED", "Partition_Limit", "INVALID", "NONE"):
        return NULL
    shape = r"(?:([0-9]{1,6})-)?(?:([0-9]{1,6}):)??(?:([0-9]{1,6}):)?([0-9]{1,6})(?:\.[0-9]+)?"
    m = re.fullmatch(shape, text)
    if m is None:
        return BAD
    d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    return d * 86400 + h * 3600 + mi * 60 + s


def _job_id(text: str) -> object:
    text = text.strip()
    shape = r"[0-9]+(?:_(?:[0-9]+|\[[^\]]*\]))?(?:\+[0-9]{1,9})?(?:\.[^.|]+)?"
    return text if re.fullmatch(shape, text) else BAD


@dataclass(frozen=True)
class Column:
    field: str  # sacct field name (the header)
    column: str  # raw.slurm_sacct column it lands in
    oracle: object  # printed text -> expected value, NULL or BAD
    values: tuple[str, ...]  # what generated rows print


AWKWARD = ("", " ", "\t", "Unknown", "None", "NULL", "n/a", "-1", "9" * 30, "٣")
COLUMNS = (
    Column(
        "JobID",
        "job_id",
        _job_id,
        ("101", "101_7", "101_[1-3]", "101.batch", "101+0", " 102 ", "x1", *AWKWARD),
    ),
    Column(
        "State",
        "state",
        _state,
        (
            "COMPLETED",
            "CANCELLED by 1001",
            "FOO",
            "RUNNING+",
            "running",
            "CANCELLED by 99999999999",
            *AWKWARD,
        ),
    ),
    Column(
        "Start",
        "start_at",
        _time,
        (
            "2026-10-01T12:00:00",
            "2026-10-01T12:00:00+0100",
            "2026-10-01T12:00:00+01:00",
            "2026-10-01T12:00:00Z",
            "2026-10-01T12:00:00-1200",
            "2026-03-29T02:30:00",
            "2026-10-25T02:30:00",
            "0001-01-01T00:00:00Z",
            "2999-12-31T23:59:59-1400",
            "2026-13-01T00:00:00",
            "2026-10-01 12:00:00",
            "2026-10-01T12:00:00+2500",
            " 2026-10-01T12:00:00 ",
            *AWKWARD,
        ),  # fmt: skip
    ),
    Column(
        "NCPUS", "ncpus", _whole, ("0", "8", " 8 ", str(2**53), str(2**53 + 1), "1.5", "+8", "8e3", *AWKWARD)
    ),
    Column("ExitCode", "exit_code", _exit, ("0:0", "1:15", "255:0", "1234:0", "-1:0", "0", *AWKWARD)),
    Column(
        "Elapsed",
        "elapsed_s",
        _duration,
        (
            "00:00:00",
            "1-02:03:04",
            "03:04",
            "59",
            "999999-23:59:59",
            "1234567-00:00:00",
            "-00:01:00",
            "UNLIMITED",
            *AWKWARD,
        ),
    ),
    Column(
        "AllocTRES",
        "alloc_gpus",
        _gpus,
        (
            "cpu=8,gres/gpu=2",
            "cpu=8,gres/gpu:a100=4",
            "gres/gpu:a100=1,gres/gpu=1",
            "billing=x,cpu=1",
            "gres/gpu=-1",
            "gres/gpu=",
            f"gres/gpu={'9' * 30}",
            "gres/gpu=٣",
            *AWKWARD,
        ),  # fmt: skip
    ),
)
FIELDS = "|".join(c.field for c in COLUMNS) + "|JobName"


@st.composite
def sacct_row(draw: st.DrawFn) -> tuple[str, ...]:
    """A row whose fields are well formed except up to two drawn from every value (awkward ones
    included), so that most rows land and their meaning is checked, and rejections stay pinpointed."""
    wild = draw(st.sets(st.sampled_from(range(len(COLUMNS))), max_size=2))
    return tuple(
        draw(st.sampled_from(c.values if i in wild else [v for v in c.values if c.oracle(v) is not BAD]))
        for i, c in enumerate(COLUMNS)
    )


def _load(folder: Path, text: str) -> tuple[RawStore, Path, Exception | None]:
    """Land `text` with the format's own load (not the runner, which wraps any exception); it is recorded
    as loaded and its files moved into place, as the runner commits a load (raw views read loaded loads)."""
    path = folder / "sacct.txt"
    path.write_text(text, encoding="utf-8")
    store = RawStore(folder / "landed.duckdb")
    ctx = LoadContext(path, Sniff.of(path), store, uuid.uuid4().hex, Options(timezone=ZONE))
    try:
        slurm_sacct.load(ctx)
    except Exception as exc:  # noqa: BLE001  (the property is about which exceptions escape)
        return store, path, exc
    store.record(load_id=ctx.load_id, path=str(path), size_bytes=len(text), sha256="", status="loaded")
    store.place_load(ctx.load_id)
    return store, path, None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(sacct_row(), min_size=1, max_size=4))
def test_generated_rows_land_with_their_meaning_or_are_one_line_errors(
    generated: list[tuple[str, ...]],
) -> None:
    text = FIELDS + "\n" + "".join("|".join(values) + "|job\n" for values in generated)
    expected = [[c.oracle(v) for c, v in zip(COLUMNS, values, strict=True)] for values in generated]
    bad = {
        (line, c.field.lower())
        for line, exp in enumerate(expected, start=2)
        for c, e in zip(COLUMNS, exp, strict=True)
        if e is BAD
    }
    with tempfile.TemporaryDirectory(prefix="sacct-prop-") as folder:
        store, path, error = _load(Path(folder), text)
        try:
            _check(store, path, error, expected, bad)
        finally:
            store.close()


def _check(
    store: RawStore,
    path: Path,
    error: Exception | None,
    expected: list[list[object]],
    bad: set[tuple[int, str]],
) -> None:
    """Rejected with a one-line IngestError at a bad (line, field), or landed with every value's meaning."""
    if bad:
        assert isinstance(error, IngestError), f"expected a rejection, got {error!r}"
        assert "\n" not in str(error) and str(error).startswith(f"{path}:")
        assert (error.line, error.column) in bad, (str(error), bad)
        return
    assert error is None, f"{type(error).__name__}: {error}"
    landed = store.con.sql(
        "select " + ", ".join(c.column for c in COLUMNS) + " from raw.slurm_sacct order by _source_row"
    ).fetchall()
    assert landed == [tuple(None if e is NULL else e for e in exp) for exp in expected]
