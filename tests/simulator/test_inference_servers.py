"""The simulated vLLM counters agree with the business feed and reset where the simulator says.

Read back from the query_range files as Prometheus would serve them: each serving pod's request
counter increases (a decrease is a restart: the new reading is the increase) sum, per day and project,
to the requests of inference_requests.csv, within the rounding of each step to whole requests; the
planted restart is a decrease inside one series; and the ground truth's tokens are those increases.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl


def _series(sim: Path, metric: str) -> list[tuple[dict, list[tuple[int, float]]]]:
    out = []
    for path in sorted(sim.glob(f"telemetry/prometheus/*/{metric}/*.json.gz")):
        for s in json.loads(gzip.decompress(path.read_bytes()))["data"]["result"]:
            out.append((s["metric"], [(int(t), float(v)) for t, v in s["values"]]))
    return out


def _increases(sim: Path, metric: str) -> pl.DataFrame:
    """Per pod (and finished_reason) and UTC day: the counter's increases, counted on the earlier reading."""
    points: dict[tuple, list[tuple[int, float]]] = {}
    labels: dict[tuple, dict] = {}
    for metric_labels, values in _series(sim, metric):
        key = tuple(sorted(metric_labels.items()))
        points.setdefault(key, []).extend(values)
        labels[key] = metric_labels
    rows = []
    for key, values in points.items():
        values.sort()
        for (t, v), (_, nxt) in zip(values, values[1:], strict=False):
            rows.append({**labels[key], "t": t, "increase": nxt - v if nxt >= v else nxt, "reset": nxt < v})
    return pl.DataFrame(rows).with_columns(pl.from_epoch("t", "s").dt.date().alias("day"))


def test_request_counters_follow_the_business_feed_and_reset_once(sim: Path) -> None:
    increases = _increases(sim, "vllm:request_success_total")
    assert set(increases["finished_reason"]) == {"stop", "length"}
    assert set(increases["container"]) == {"vllm"} and set(increases["engine"]) == {"0"}
    # the planted restart: one pod's counters drop mid-series, once per finished reason at most
    assert 1 <= increases.filter(pl.col("reset"))["pod"].n_unique() <= 1
    counted = increases.group_by("namespace", "day").agg(pl.col("increase").sum())
    business = pl.read_csv(sim / "business" / "inference_requests.csv", try_parse_dates=True)
    namespaces = {
        "ranking": "recsys-serving",
        "semantic-search": "search-serving",
        "support-chatbot": "support-ai",
    }
    wanted = (
        business.with_columns(pl.col("project").replace_strict(namespaces).alias("namespace"))
        .group_by("namespace", pl.col("date").alias("day"))
        .agg(pl.col("requests").sum())
    )
    both = wanted.join(counted, on=["namespace", "day"])
    assert both.height >= 3 * 6
    # rounding to whole requests per 5-minute step, and the last step of a pod that no reading shows
    for row in both.iter_rows(named=True):
        assert abs(row["increase"] - row["requests"]) <= max(0.01 * row["requests"], 300), row


def test_ground_truth_tokens_are_the_counters_increases(sim: Path) -> None:
    truth = pl.read_csv(sim / "ground_truth" / "inference_token_economics.csv", try_parse_dates=True)
    for metric, column in (
        ("vllm:prompt_tokens_total", "input_tokens"),
        ("vllm:generation_tokens_total", "output_tokens"),
    ):
        got = (
            _increases(sim, metric)
            .with_columns(pl.col("pod").str.replace(r"-[a-z0-9]{5,10}-[a-z0-9]{5}$", "").alias("deployment"))
            .group_by(pl.col("model_name").alias("model"), "namespace", "deployment", "day")
            .agg(pl.col("increase").sum())
        )
        joined = truth.join(got, on=["model", "namespace", "deployment", "day"], how="full", coalesce=True)
        assert joined.height == truth.height
        assert (joined["increase"].fill_null(0) - joined[column]).abs().max() == 0
    # only the chatbot generates text; the embedder and the re-ranker read prompts
    generated = truth.group_by("model").agg(pl.col("output_tokens").sum())
    assert dict(generated.iter_rows()) == {
        "support-llm-8b": generated.filter(pl.col("model") == "support-llm-8b")["output_tokens"][0],
        "embedder-large": 0,
        "ranker": 0,
    }
    assert truth.filter(pl.col("model") == "support-llm-8b")["output_tokens"].min() > 0
