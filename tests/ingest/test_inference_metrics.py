# ruff: noqa: E501  (sample lines are kept whole, as the servers print them)
"""Inference servers' token counters: vLLM and TGI `/metrics` scrapes and Prometheus query_range answers.

Hand-made captures with the real metric names and label sets (vLLM V1: `model_name` and `engine` on
every series, `finished_reason` on request_success, the Python client's `python_gc_*` families first
and a `_created` twin of every counter; TGI: histograms' `_sum`/`_count`, no model label; Prometheus'
pod labels on the query_range series). They land in raw.inference_series / raw.inference_samples,
beside the DCGM tables, which a file of DCGM and vLLM series both feeds; bad input is named.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

VLLM_SCRAPE = """\
# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 12873.0
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.234567e+06
# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7900001e+09
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 345678.0
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2100.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="meta-llama/Llama-3.1-8B-Instruct"} 37.0
vllm:request_success_total{engine="0",finished_reason="abort",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
"""

TGI_SCRAPE = """\
# TYPE tgi_request_success counter
tgi_request_success 412
# TYPE tgi_request_input_length histogram
tgi_request_input_length_bucket{le="1024"} 400
tgi_request_input_length_bucket{le="+Inf"} 412
tgi_request_input_length_sum 198233
tgi_request_input_length_count 412
# TYPE tgi_request_generated_tokens histogram
tgi_request_generated_tokens_bucket{le="+Inf"} 412
tgi_request_generated_tokens_sum 80011
tgi_request_generated_tokens_count 412
"""


def _land(tmp_path: Path, path: Path) -> tuple[Outcome, RawStore]:
    store = RawStore(tmp_path / "landed.duckdb")
    [outcome] = ingest([path], store, options=Options(), progress=False)
    return outcome, store


def _inference(store: RawStore) -> pl.DataFrame:
    return store.con.sql(
        """
        select s.* exclude (labels), p.ts, p.value, p.day
        from raw.inference_samples p join (select distinct * exclude (_load_id) from raw.inference_series) s
        using (series_id) order by s.metric, s.finished_reason, p.ts
        """
    ).pl()


def _range_answer(series: list[tuple[dict, list[tuple[float, str]]]]) -> str:
    result = [{"metric": m, "values": [[t, v] for t, v in points]} for m, points in series]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}})


POD = {
    "container": "vllm",
    "endpoint": "http",
    "engine": "0",
    "instance": "10.0.3.17:8000",
    "job": "support-ai/vllm",
    "model_name": "support-llm-8b",
    "namespace": "support-ai",
    "pod": "support-llm-main-6f7d8-x2k9p",
}


def test_vllm_scrape_is_recognised_and_lands_beside_dcgm(tmp_path: Path) -> None:
    path = tmp_path / "support-llm-main-6f7d8-x2k9p-2026-10-08T235500Z.prom"
    path.write_text(VLLM_SCRAPE)
    assert registry.detect(Sniff.of(path)).name == "inference_metrics"
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "loaded", outcome.error
    got = _inference(store)
    stamp = datetime(2026, 10, 8, 23, 55, tzinfo=UTC)
    assert set(got["ts"].dt.convert_time_zone("UTC").to_list()) == {stamp}
    assert set(got["server"]) == {"vllm"} and set(got["model_name"]) == {"meta-llama/Llama-3.1-8B-Instruct"}
    assert set(got["engine"]) == {"0"}
    by_metric = {(r["metric"], r["finished_reason"]): r["value"] for r in got.iter_rows(named=True)}
    assert by_metric[("vllm:prompt_tokens_total", None)] == 1234567.0
    assert by_metric[("vllm:generation_tokens_total", None)] == 345678.0
    assert by_metric[("vllm:request_success_total", "stop")] == 2100.0
    assert by_metric[("vllm:request_success_total", "length")] == 37.0
    # the client's `_created` twin is kept as a series of its own, never as tokens
    assert by_metric[("vllm:prompt_tokens_created", None)] == 1790000100.0
    # the Python client's own families are no inference-server metric: they land as before
    others = store.con.sql("select distinct metric from raw.dcgm_series").fetchall()
    assert others == [("python_gc_objects_collected_total",)]
    assert "python_gc_objects_collected_total" not in set(got["metric"])
    assert got["day"].unique().to_list() == [stamp.date()]


def test_tgi_scrape_lands_histogram_sums_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "tgi-1790000000.prom"
    path.write_text(TGI_SCRAPE)
    assert registry.detect(Sniff.of(path)).name == "inference_metrics"
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "loaded", outcome.error
    got = _inference(store)
    values = dict(zip(got["metric"], got["value"], strict=False))
    assert values["tgi_request_input_length_sum"] == 198233
    assert values["tgi_request_generated_tokens_sum"] == 80011
    assert values["tgi_request_success"] == 412
    assert set(got["server"]) == {"tgi"} and got["model_name"].null_count() == got.height
    assert "dcgm_series" not in store.tables()  # nothing else was in the file


def test_query_range_counters_with_a_reset_land_every_reading(tmp_path: Path) -> None:
    """A counter that drops (the server restarted inside the pod) lands as read: the marts treat the
    drop as a reset. DCGM series in the same answer land in the DCGM tables."""
    t0 = 1790000000
    answer = _range_answer(
        [
            (
                {"__name__": "vllm:prompt_tokens_total", **POD},
                [(t0, "1000"), (t0 + 30, "4000"), (t0 + 60, "250"), (t0 + 90, "900")],
            ),
            ({"__name__": "vllm:generation_tokens_total", **POD}, [(t0, "10"), (t0 + 30, "70.5")]),
            (
                {"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-1", "Hostname": "h", "pod": POD["pod"]},
                [(t0, "55")],
            ),
        ]
    )
    path = tmp_path / "range.json"
    path.write_text(answer)
    assert registry.detect(Sniff.of(path)).name == "prometheus_query_range"
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "loaded", outcome.error
    assert outcome.rows == 7
    got = _inference(store)
    prompt = got.filter(pl.col("metric") == "vllm:prompt_tokens_total")
    assert prompt["value"].to_list() == [1000, 4000, 250, 900]
    first = prompt.row(0, named=True)
    assert (first["namespace"], first["pod"], first["container"], first["model_name"]) == (
        "support-ai",
        POD["pod"],
        "vllm",
        "support-llm-8b",
    )
    assert (first["scrape_job"], first["scrape_instance"]) == ("support-ai/vllm", "10.0.3.17:8000")
    assert store.con.sql("select count(*) from raw.dcgm_samples").fetchall() == [(1,)]
    assert store.con.sql("select distinct metric from raw.dcgm_series").fetchall() == [
        ("DCGM_FI_DEV_GPU_UTIL",)
    ]
    # ingesting it again changes nothing
    [again] = ingest([path], store, options=Options(), progress=False)
    assert again.status == "skipped" or again.rows == 0
    assert store.con.sql("select count(*) from raw.inference_samples").fetchall() == [(6,)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"-5"', "has value -5 at 2026-09-21T14:13:20Z (expected at least 0)"),
        ('"+Inf"', "has value +Inf at 2026-09-21T14:13:20Z"),
    ],
)
def test_impossible_token_counts_are_named(tmp_path: Path, value: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":'
        '"vllm:generation_tokens_total","namespace":"support-ai","pod":"p-1"},"values":[[1790000000,'
        + value
        + "]]}]}}"
    )
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert "series 1 (vllm:generation_tokens_total, pod support-ai/p-1)" in outcome.error, outcome.error
    assert message in outcome.error, outcome.error
    assert "inference_samples" not in store.tables()


def test_a_broken_vllm_scrape_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "vllm-1790000000.prom"
    path.write_text(VLLM_SCRAPE + 'vllm:generation_tokens_total{model_name="m"} lots\n')
    outcome, store = _land(tmp_path, path)
    assert outcome.status == "rejected"
    assert (
        outcome.error
        == f"{path}:21: value 'lots' is not a number (expected a number (NaN, +Inf allowed) in metric{{label=\"value\",...}} value)"
    )
    assert "inference_samples" not in store.tables()
