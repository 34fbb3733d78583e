"""A corpus of bad input (interface §3, "Bad input gets a clear error"; issue 17, failure 5).

Every case is one file. They are ingested in one batch, interleaved with good files of every group,
and each must be rejected alone: one line that names the file (and its line where a row applies),
says what is wrong and what was expected; the good files of the batch still land; the CLI exits 1 and
never prints a traceback. Billing seeds come from a small simulated fleet, so that they stay valid as
the billing formats evolve; the rest are written here by hand.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from gpu_ledger.cli import main
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.store import RawStore
from gpu_ledger.simulator.generate import simulate
from gpu_ledger.simulator.model import SimulationConfig

REPO = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------------------------------------ good seeds
GPU = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-1", "Hostname": "node-a", "gpu": "0"}
T0 = 1_790_000_000  # 2026-09-21


def query_range(values: list[list], metric: dict | None = None, result_type: str = "matrix") -> bytes:
    result = [{"metric": metric or GPU, "values": values}]
    return json.dumps({"status": "success", "data": {"resultType": result_type, "result": result}}).encode()


SNAPSHOT = (
    "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
    'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-7",Hostname="node-b"} 42\n'
    'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-7",Hostname="node-b"} 1024\n'
)
TSDB_DUMP = '{__name__="DCGM_FI_DEV_GPU_UTIL", UUID="GPU-8", Hostname="node-c"} 5 1790000000000\n'
OPENMETRICS = 'DCGM_FI_DEV_GPU_UTIL{UUID="GPU-9",Hostname="node-d"} 5 1790000000.000\n# EOF\n'
NVIDIA_SMI = (
    "timestamp, name, index, uuid, utilization.gpu [%], memory.used [MiB], power.draw [W], hostname\n"
    "2026/07/14 08:12:53.353, NVIDIA A100-SXM4-80GB, 0, GPU-aaa, 97 %, 19818 MiB, 331.95 W, dgx-01\n"
)
SACCT = (
    "JobID|JobIDRaw|Cluster|User|Account|State|ExitCode|Submit|Start|End|ElapsedRaw|NCPUS|AllocTRES|NodeList"
    "|JobName\n"
    "101|101|c1|ann|phys|COMPLETED|0:0|2026-03-29T00:30:00|2026-03-29T01:00:00|2026-03-29T03:30:00|9000|8|"
    "cpu=8,gres/gpu=2|gpu-[01-02]|train\n"
)
JOBS = (
    "job_id,scheduler,cluster,user,team,project,workload_class,submitted_at,started_at,ended_at,state,gpus\n"
    "ray-1,ray,ray-prod,ann,nlp,chat,training,2026-10-01T00:00:00Z,2026-10-01T00:05:00Z,"
    "2026-10-01T03:00:00Z,SUCCEEDED,8\n"
)
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "trainer-0", "namespace": "ml", "uid": "uid-1"},
    "spec": {
        "nodeName": "node-a",
        "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
    },
    "status": {"phase": "Running", "startTime": "2026-10-01T00:00:00Z"},
}


def pods(*items: dict) -> bytes:
    return json.dumps({"apiVersion": "v1", "items": list(items), "kind": "List"}, indent=4).encode()


EVENT = {
    "version": "0",
    "id": "e-1",
    "detail-type": "EC2 Spot Instance Interruption Warning",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-10-01T00:00:00Z",
    "region": "us-east-1",
    "resources": ["arn:aws:ec2:us-east-1b:instance/i-0abc"],
    "detail": {"instance-id": "i-0abc", "instance-action": "terminate"},
}
BUSINESS_VALUE = "month,project,value,currency,basis\n2026-10,ranking,1250.00,USD,uplift\n"
REQUESTS = (
    "date,project,model,model_version,environment,requests\n2026-10-01,ranking,ranker,v4,production,900\n"
)
DEPLOYMENTS = (
    "model,model_version,project,training_run_id,training_completed_at,deployed_at,environment\n"
    "ranker,v4,ranking,,,2026-10-02T00:00:00Z,production\n"
)

# the good files of the batch: name -> (content, format)
GOOD: dict[str, tuple[bytes, str]] = {
    "good-util.json": (query_range([[T0, "50"], [T0 + 30, "60"]]), "prometheus_query_range"),
    "good-node-b-2026-10-01T000000Z.prom": (SNAPSHOT.encode(), "dcgm_metrics"),
    "good-dump.txt": (TSDB_DUMP.encode(), "promtool_tsdb_dump"),
    "good-openmetrics.txt": (OPENMETRICS.encode(), "promtool_dump_openmetrics"),
    "good-nvidia-smi.csv": (NVIDIA_SMI.encode(), "nvidia_smi_query_gpu"),
    "good-sacct.txt": (SACCT.encode(), "slurm_sacct"),
    "good-jobs.csv": (JOBS.encode(), "generic_jobs_csv"),
    "good-pods-20261001T000000Z.json": (pods(POD), "k8s_pods"),
    "good-events.json": (json.dumps(EVENT).encode(), "eventbridge_json"),
    "good-business_value.csv": (BUSINESS_VALUE.encode(), "business_value_csv"),
    "good-inference_requests.csv": (REQUESTS.encode(), "inference_requests_csv"),
    "good-model_deployments.csv": (DEPLOYMENTS.encode(), "model_deployments_csv"),
    # NaN is no reading (issue 31: it rejected the file): dropped, the file's other samples land
    "good-util-nan.json": (query_range([[T0, "NaN"], [T0 + 30, "60"]]), "prometheus_query_range"),
    "good-node-y-2026-10-01T000000Z.prom": (SNAPSHOT.replace("} 1024", "} NaN").encode(), "dcgm_metrics"),
}


# ------------------------------------------------------------------------------------------ the corpus
Seeds = dict[str, bytes]


@dataclass(frozen=True)
class Case:
    name: str  # the file's name in the batch
    make: Callable[[Seeds], bytes]  # its content, from the seeds
    says: tuple[str, ...]  # what the one-line message must say (after the file and line)
    line: int | None = None  # the line or row it must name, where one applies

    @property
    def id(self) -> str:
        return self.name.split(".")[0]


def raw(content: bytes | str) -> Callable[[Seeds], bytes]:
    data = content.encode() if isinstance(content, str) else content
    return lambda seeds: data


def swap(text: str, old: str, new: str) -> Callable[[Seeds], bytes]:
    assert old in text, old
    return raw(text.replace(old, new, 1))


def seed(name: str, change: Callable[[bytes], bytes]) -> Callable[[Seeds], bytes]:
    return lambda seeds: change(seeds[name])


def _parquet(frame: pl.DataFrame) -> bytes:
    out = io.BytesIO()
    frame.write_parquet(out)
    return out.getvalue()


def _delimit(content: bytes, delimiter: bytes) -> bytes:
    """A CSV re-written with another delimiter, as a spreadsheet in another locale saves it."""
    frame = pl.read_csv(io.BytesIO(content), infer_schema=False)
    out = io.BytesIO()
    frame.write_csv(out, separator=delimiter.decode())
    return out.getvalue()


UNKNOWN = "format not recognised from its content: "
FINITE = "expected a finite reading"
GOOD_UTIL = query_range([[T0, "50"]])

CASES: list[Case] = [
    # --- nothing a format could claim: empty, blank, binary, other documents, wrong encoding
    Case("empty.csv", raw(b""), ("the file is empty", "expected at least a header or one record")),
    Case("blank.txt", raw(" \n\n\t\n"), (UNKNOWN + "blank: only whitespace",)),
    Case("binary.bin", raw(bytes(range(256)) * 8), (UNKNOWN + "binary data (starts with bytes 00 01 02",)),
    Case(
        "workbook.xlsx", raw(b"PK\x03\x04" + b"\x00" * 200), (UNKNOWN + "a ZIP archive (an Excel workbook?)",)
    ),
    Case("invoice.pdf", raw(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), (UNKNOWN + "a PDF document",)),
    Case("chart.png", raw(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64), (UNKNOWN + "a PNG image",)),
    Case("export.csv.bz2", raw(b"BZh91AY&SY" + b"\x01" * 64), (UNKNOWN + "bzip2-compressed data",)),
    Case(
        "login.json",
        raw("<!DOCTYPE html>\n<html><head><title>Sign in - Grafana</title></head><body></body></html>\n"),
        (UNKNOWN + "an HTML page titled 'Sign in - Grafana'",),
    ),
    Case("feed.xml", raw('<?xml version="1.0"?>\n<feed></feed>\n'), (UNKNOWN + "an XML document",)),
    Case("utf16.csv", raw(BUSINESS_VALUE.encode("utf-16")), (UNKNOWN + "UTF-16 text",)),
    Case("hello.txt", raw("hello world\n"), (UNKNOWN + "text starting 'hello world'",)),
    Case(
        "unknown-header.csv",
        raw("foo,bar,baz\n1,2,3\n"),
        (UNKNOWN + "comma-delimited text (3 fields) whose first line 'foo,bar,baz' matches no known header",),
    ),
    Case(
        "nul-bytes.csv",
        raw(BUSINESS_VALUE.replace("ranking", "rank\x00ing")),
        ("a NUL byte",),
        line=2,
    ),
    Case(
        "latin1-business_value.csv",
        raw(BUSINESS_VALUE.replace("uplift", "caf\xe9 uplift").encode("latin-1")),
        ("not UTF-8 text: byte 0xe9 cannot be decoded", "expected UTF-8"),
        line=2,
    ),
    # --- JSON that is not data
    Case("empty-object.json", raw("{}"), (UNKNOWN + "empty JSON ({})",)),
    Case("empty-array.json", raw("[]"), (UNKNOWN + "empty JSON ([])",)),
    Case("unparsable.json", raw('{"status": "succ'), (UNKNOWN + "JSON that does not parse (",)),
    Case(
        "prometheus-error.json",
        raw(
            '{"status":"error","errorType":"bad_data",'
            '"error":"invalid parameter \\"query\\": 1:5: parse error: unexpected <EOF>"}'
        ),
        (
            UNKNOWN + 'a Prometheus error answer (bad_data: \'invalid parameter "query": 1:5: parse error: '
            "unexpected <EOF>'), not data",
        ),
    ),
    Case(
        "prometheus-timeout.json",
        raw('{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}'),
        (UNKNOWN + "a Prometheus error answer (timeout: 'query timed out in expression evaluation')",),
    ),
    Case(
        "instant-query.json",
        raw(query_range([[T0, "1"]], result_type="vector")),
        (UNKNOWN + "a Prometheus answer of resultType 'vector', not a query_range matrix",),
    ),
    Case(
        "json-object.json", raw('{"foo": 1, "bar": [2]}'), (UNKNOWN + "a JSON object with keys 'foo', 'bar'",)
    ),
    # --- wrong delimiter
    Case(
        "comma-sacct.txt",
        raw(SACCT.replace("|", ",").replace("cpu=8,gres/gpu=2", "gres/gpu=2")),
        (UNKNOWN + "comma-delimited text that would be slurm_sacct if it were pipe-delimited",),
    ),
    Case(
        "semicolon-business_value.csv",
        raw(BUSINESS_VALUE.replace(",", ";")),
        (UNKNOWN + "semicolon-delimited text that would be business_value_csv if it were comma-delimited",),
    ),
    Case(
        "tab-jobs.tsv",
        raw(JOBS.replace(",", "\t")),
        (UNKNOWN + "tab-delimited text that would be generic_jobs_csv if it were comma-delimited",),
    ),
    Case(
        "semicolon-focus.csv",
        seed("focus_csv", lambda b: _delimit(b, b";")),
        (UNKNOWN + "semicolon-delimited text that would be focus if it were comma-delimited",),
    ),
    # --- truncated and corrupt containers
    Case(
        "truncated-cur.parquet",
        seed("cur_parquet", lambda b: b[: len(b) // 2]),
        (UNKNOWN + "a truncated Parquet file (it starts with PAR1 but has no footer)",),
    ),
    Case(
        "other-columns.parquet",
        raw(_parquet(pl.DataFrame({"alpha": [1], "beta": ["x"]}))),
        (UNKNOWN + "a Parquet file whose columns match no known format",),
    ),
    Case(
        "truncated-util.json.gz",
        raw(gzip.compress(GOOD_UTIL)[:-12]),
        ("the gzip stream is corrupt or truncated", "expected a complete gzip stream"),
    ),
    Case(
        "corrupt.csv.gz",
        raw(b"\x1f\x8b" + b"not deflate at all" * 4),
        ("the gzip stream is corrupt or truncated", "expected a complete gzip stream"),
    ),
    # --- Prometheus query_range: values and times
    Case("util-plus-inf.json", raw(query_range([[T0, "+Inf"]])), ("has value +Inf at 2026-09-21", FINITE)),
    Case("util-minus-inf.json", raw(query_range([[T0, "-Inf"]])), ("has value -Inf", FINITE)),
    Case("util-negative.json", raw(query_range([[T0, "-5"]])), ("has value -5 at", "expected 0 to 100")),
    Case("util-250.json", raw(query_range([[T0, "250"]])), ("has value 250 at", "expected 0 to 100")),
    Case(
        "engine-active-ratio.json",
        raw(query_range([[T0, "1.5"]], {**GPU, "__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE"})),
        ("column 'DCGM_FI_PROF_GR_ENGINE_ACTIVE'", "has value 1.5", "expected 0 to 1"),
    ),
    Case(
        "power-negative.json",
        raw(query_range([[T0, "-1"]], {**GPU, "__name__": "DCGM_FI_DEV_POWER_USAGE"})),
        ("column 'DCGM_FI_DEV_POWER_USAGE'", "expected at least 0"),
    ),
    Case(
        "future.json",
        raw(query_range([[4_102_444_800, "5"]])),
        ("column 'timestamp'", "has a sample at 2100-01-01T00:00:00Z", "(a clock or unit error?)"),
    ),
    Case(
        "milliseconds.json",
        raw(query_range([[T0 * 1000, "5"]])),
        ("column 'timestamp'", "has a sample at 58692-11-03T14:13:20Z", "(a clock or unit error?)"),
    ),
    Case("before-epoch.json", raw(query_range([[-86_400, "5"]])), ("has a sample at 1969-12-31T00:00:00Z",)),
    Case(
        "not-a-number.json",
        raw(query_range([[T0, "abc"]])),
        ("column 'values': series 1, point 1: value 'abc' is not a number",),
    ),
    Case(
        "duplicate-sample.json",
        raw(
            json.dumps(
                {
                    "status": "success",
                    "data": {
                        "resultType": "matrix",
                        "result": [
                            {"metric": GPU, "values": [[T0, "1"]]},
                            {"metric": GPU, "values": [[T0, "2"]]},
                        ],
                    },
                }
            )
        ),
        ("has 2 samples at", "expected one sample per series and time"),
    ),
    Case(
        "out-of-order.json",
        raw(query_range([[T0 + 30, "1"], [T0, "2"]])),
        ("series 1, point 2: timestamp", "is not after the previous one"),
    ),
    Case(
        "truncated-matrix.json",
        raw(query_range([[T0, "1"], [T0 + 30, "2"]])[:-25]),
        ("not a readable Prometheus query_range answer",),
    ),
    # --- dcgm-exporter snapshots
    Case(
        "node-x-2026-10-01T000000Z.prom",
        swap(SNAPSHOT, "} 42", "} +Inf"),
        ("column 'DCGM_FI_DEV_GPU_UTIL'", "has value +Inf at 2026-10-01T00:00:00Z", FINITE),
    ),
    Case(
        "node-z-2026-10-01T000000Z.prom",
        swap(SNAPSHOT, "} 1024", "} 12MiB"),
        ("value '12MiB' is not a number",),
        line=4,
    ),
    Case(
        "node-w-2026-10-01T000000Z.prom",
        swap(SNAPSHOT, 'UUID="GPU-7",Hostname="node-b"} 1024', 'UUID="GPU-7",UUID="GPU-8"} 1024'),
        ("malformed metric name or labels",),
        line=4,
    ),
    Case(
        "node-v-2026-10-01T000000Z.prom",
        swap(SNAPSHOT, 'Hostname="node-b"} 1024', 'Hostname="node-b} 1024'),
        ("expected",),
        line=4,
    ),
    Case(
        "node-2026-13-45T250000Z.prom",
        raw(SNAPSHOT),
        ("bad timestamp in the file name", "expected a valid date and time"),
    ),
    # --- promtool dumps
    Case(
        "dump-bad-time.txt",
        swap(TSDB_DUMP, "1790000000000", "17900x0000000"),
        (UNKNOWN + "Prometheus text whose first sample line '{__name__=",),
    ),
    Case(
        "openmetrics-ms.txt",
        swap(OPENMETRICS, "1790000000.000", "1790000000000"),
        ("looks like milliseconds",),
        line=1,
    ),
    Case(
        "openmetrics-truncated.txt",
        swap(OPENMETRICS, "# EOF\n", ""),
        ("the file does not end with '# EOF'",),
    ),
    Case(
        "dump-inf.txt",
        swap(TSDB_DUMP, "} 5 ", "} +Inf "),
        ("has value +Inf", FINITE),
    ),
    # --- nvidia-smi logs
    Case("smi-util-150.csv", swap(NVIDIA_SMI, "97 %", "150 %"), ("has value 150", "expected 0 to 100")),
    Case("smi-util-text.csv", swap(NVIDIA_SMI, "97 %", "high %"), ("utilization.gpu",), line=2),
    Case(
        "smi-bad-time.csv",
        swap(NVIDIA_SMI, "2026/07/14 08:12:53.353", "yesterday noon"),
        ("timestamp",),
        line=2,
    ),
    # --- Slurm sacct
    Case(
        "sacct-bad-start.txt",
        swap(SACCT, "2026-03-29T01:00:00", "2026-03-29T25:00:00"),
        ("'2026-03-29T25:00:00'",),
        2,
    ),
    Case("sacct-elapsed-text.txt", swap(SACCT, "|9000|", "|nine|"), ("'nine'",), line=2),
    Case("sacct-short-line.txt", swap(SACCT, "|gpu-[01-02]|train", ""), ("fields",), line=2),
    # --- generic jobs CSV
    Case(
        "jobs-gpus-text.csv", swap(JOBS, ",8\n", ",eight\n"), ("column 'gpus': 'eight' does not fit",), line=2
    ),
    Case(
        "jobs-negative-gpus.csv",
        swap(JOBS, ",8\n", ",-8\n"),
        ("column 'gpus': '-8' does not fit", "expected a whole number"),
        line=2,
    ),
    Case(
        "jobs-ends-before-start.csv",
        swap(JOBS, "2026-10-01T03:00:00Z", "2026-09-30T03:00:00Z"),
        ("column 'ended_at'", "is before started_at"),
        line=2,
    ),
    Case(
        "jobs-duplicate-header.csv",
        raw(JOBS.replace(",gpus\n", ",gpus,gpus\n").replace(",8\n", ",8,8\n")),
        ("column 'gpus': the header names this column twice", "expected each column once"),
        line=1,
    ),
    Case("jobs-bad-class.csv", swap(JOBS, ",training,", ",learning,"), ("column 'workload_class'",), line=2),
    Case(
        "jobs-future-year.csv",
        swap(JOBS, "2026-10-01T00:00:00Z", "20261-10-01T00:00:00Z"),
        ("column 'submitted_at'",),
        line=2,
    ),
    # --- kubectl snapshots
    Case(
        "pods-truncated.json", raw(pods(POD)[:-40]), ("not readable as json", "expected kubectl output"), 28
    ),
    Case(
        "pods-manifest.json",
        raw(pods({k: v for k, v in POD.items() if k != "status"})),
        ("this is a manifest", "expected `kubectl get pods -o json` output"),
        line=1,
    ),
    Case(
        "pods-bad-start.json",
        raw(pods({**POD, "status": {"phase": "Running", "startTime": "yesterday"}})),
        ("column 'status.startTime'", "'yesterday' is not a timestamp", "expected RFC 3339"),
        line=1,
    ),
    Case(
        "pods-fraction-gpu.json",
        raw(
            pods(
                {
                    **POD,
                    "spec": {
                        "containers": [{"name": "m", "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]
                    },
                }
            )
        ),
        ("column 'resources.nvidia.com/gpu'", "'0.5' is not a whole device count"),
        line=1,
    ),
    Case(
        "pods-items-object.json",
        raw(json.dumps({"apiVersion": "v1", "items": {"a": 1}, "kind": "List"}, indent=4)),
        (UNKNOWN + "a JSON object with keys 'apiVersion', 'items', 'kind'",),
    ),
    # --- EventBridge
    Case(
        "event-no-id.json",
        raw(json.dumps({k: v for k, v in EVENT.items() if k != "id"})),
        ("column 'id': missing key", "expected an EventBridge event envelope"),
        line=1,
    ),
    Case("event-bad-time.json", raw(json.dumps({**EVENT, "time": "not a time"})), ("column 'time'",), line=1),
    Case(
        "events-truncated.jsonl",
        raw(json.dumps(EVENT) + "\n" + json.dumps({**EVENT, "id": "e-2"})[:-30] + "\n"),
        ("expected",),
        line=2,
    ),
    # --- business CSVs
    Case(
        "value-nan.csv",
        swap(BUSINESS_VALUE, "1250.00", "NaN"),
        ("column 'value': 'NaN' does not fit",),
        line=2,
    ),
    Case(
        "value-inf.csv",
        swap(BUSINESS_VALUE, "1250.00", "inf"),
        ("column 'value': 'inf' does not fit",),
        line=2,
    ),
    Case(
        "value-huge.csv",
        swap(BUSINESS_VALUE, "1250.00", "1e400"),
        ("column 'value': '1e400' does not fit",),
        2,
    ),
    Case("value-month-13.csv", swap(BUSINESS_VALUE, "2026-10", "2026-13"), ("column 'month'",), line=2),
    Case(
        "value-no-project.csv",
        raw("month,value,currency,basis\n2026-10,1.00,USD,x\n"),
        (UNKNOWN + "comma-delimited text (4 fields) whose first line 'month,value,currency,basis' matches",),
    ),
    Case(
        "requests-negative.csv",
        swap(REQUESTS, ",900\n", ",-5\n"),
        ("column 'requests': '-5' does not fit", "expected a whole number"),
        line=2,
    ),
    Case(
        "deployments-bad-time.csv",
        swap(DEPLOYMENTS, "2026-10-02T00:00:00Z", "2026-10-02 at noon"),
        ("column 'deployed_at'",),
        line=2,
    ),
    # --- billing, from the simulator's own deliveries
    Case(
        "focus-cut.csv",
        seed("focus_csv", lambda b: b[: b.index(b"\n", len(b) // 2) - 40] + b"\n"),
        ("malformed CSV", "(expected FOCUS"),
        line=14,
    ),
    Case(
        "focus-cost-text.csv",
        seed("focus_csv", lambda b: _replace_cell(b, "BilledCost", "twelve")),
        ("column 'BilledCost'", "'twelve'"),
        line=3,
    ),
]


def _replace_cell(content: bytes, column: str, value: str) -> bytes:
    frame = pl.read_csv(io.BytesIO(content), infer_schema=False)
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 1).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)
    )
    out = io.BytesIO()
    frame.write_csv(out)
    return out.getvalue()


# files that are no readable file at all, made in the batch folder by `_specials`
SPECIALS = {
    "dangling-link.json": "a symbolic link to",
    "named-pipe": "a named pipe in a folder (name it on the command line to read it)",
    "unix.sock": "a socket, not a file",
    # issue 31: a loop of links stopped the batch with a traceback
    "loop-a.json": "a symbolic link loop: a link to loop-b.json, which leads back to it",
    "loop-b.json": "a symbolic link loop: a link to loop-a.json, which leads back to it",
    "loop-self.json": "a symbolic link loop: a link to loop-self.json, which leads back to it",
    "loop-folder": "a symbolic link loop: a link to a folder it lies in",
}


def _specials(folder: Path) -> None:
    (folder / "dangling-link.json").symlink_to(folder / "no-such-file.json")
    (folder / "loop-a.json").symlink_to("loop-b.json")
    (folder / "loop-b.json").symlink_to("loop-a.json")
    (folder / "loop-self.json").symlink_to("loop-self.json")
    (folder / "loop-folder").symlink_to(".")
    os.mkfifo(folder / "named-pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "unix.sock"))  # the socket file stays when the socket is closed


# ------------------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Seeds:
    """Billing deliveries as the simulator writes them: a CUR 2.0 Parquet and a FOCUS CSV."""
    out = tmp_path_factory.mktemp("sim")
    start = datetime(2026, 10, 1, tzinfo=UTC)
    simulate(
        SimulationConfig(out=out, gpus=3, days=1, interval_s=900, seed=7, start=start), show_progress=False
    )
    return {
        "cur_parquet": next(out.glob("billing/aws/**/*.parquet")).read_bytes(),
        "focus_csv": next(out.glob("billing/azure/**/part_*.csv")).read_bytes(),
    }


@pytest.fixture(scope="module")
def batch(seeds: Seeds, tmp_path_factory) -> Path:
    """One folder: every bad case, with the good files between them (names sort them apart)."""
    folder = tmp_path_factory.mktemp("batch")
    for i, case in enumerate(CASES):
        (folder / f"{i:03d}-{case.name}").write_bytes(case.make(seeds))
    for i, (name, (content, _)) in enumerate(GOOD.items()):
        (folder / f"{i * 7:03d}a-{name}").write_bytes(content)
    _specials(folder)
    return folder


@pytest.fixture(scope="module")
def landed(batch: Path, tmp_path_factory) -> dict[str, Outcome]:
    """The whole batch ingested once; outcomes by file name."""
    with RawStore(tmp_path_factory.mktemp("home") / "landed.duckdb") as store:
        outcomes = ingest([batch], store, progress=False)
    return {o.path.name: o for o in outcomes}


# ------------------------------------------------------------------------------------------ the checks
def test_the_corpus_is_large_and_distinct():
    assert len(CASES) + len(SPECIALS) >= 60
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_file_is_rejected_alone_with_a_clear_line(case: Case, landed: dict[str, Outcome], batch: Path):
    name = f"{CASES.index(case):03d}-{case.name}"
    outcome = landed[name]
    assert outcome.status == "rejected", f"{name} was {outcome.status}"
    message = outcome.error
    where = f"{batch / name}:{case.line}: " if case.line else f"{batch / name}: "
    assert message.startswith(where), message
    assert "\n" not in message and "Traceback" not in message
    assert "(expected " in message, message
    for phrase in case.says:
        assert phrase in message, message


@pytest.mark.parametrize("name", SPECIALS)
def test_what_is_not_a_readable_file_is_rejected_alone(name: str, landed: dict[str, Outcome], batch: Path):
    outcome = landed[name]
    assert outcome.status == "rejected"
    assert outcome.error.startswith(f"{batch / name}: {SPECIALS[name]}")
    assert outcome.error.endswith("(expected a file or folder this user may read)")


def test_the_good_files_of_the_batch_land(landed: dict[str, Outcome]):
    good = {name.split("-", 1)[1]: o for name, o in landed.items() if name[3:5] == "a-"}
    assert {name: (o.status, o.format) for name, o in good.items()} == {
        name: ("loaded", fmt) for name, (_, fmt) in GOOD.items()
    }
    assert all(o.rows > 0 for o in good.values())


def test_the_cli_reports_every_rejection_on_one_line_and_exits_1(batch: Path, tmp_path: Path, capsys):
    code = main(["ingest", "--home", str(tmp_path / "home"), "--quiet", str(batch)])
    out, err = capsys.readouterr()
    assert code == 1
    assert len(err.splitlines()) == len(CASES) + len(SPECIALS)
    assert all(line.startswith(f"rejected: {batch}/") for line in err.splitlines())
    assert f"{len(GOOD)} loaded, {len(CASES) + len(SPECIALS)} rejected" in out


def test_no_traceback_from_the_process(batch: Path, landed: dict[str, Outcome], tmp_path: Path):
    """A sample of the batch through a real process: exit 1, and stderr holds only the rejections."""
    picked = [batch / f"{i:03d}-{CASES[i].name}" for i in range(0, len(CASES), 8)]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpu_ledger.cli",
            "ingest",
            "--home",
            str(tmp_path / "home"),
            "--quiet",
            *picked,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"rejected: {landed[p.name].error}" for p in picked]


def test_a_bad_stream_is_rejected_by_its_name(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "gpu_ledger.cli", "ingest", "--home", str(tmp_path / "home"), "--quiet", "-"],
        input='{"status":"error","errorType":"bad_data","error":"bad query"}',
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "rejected: -: format not recognised from its content: a Prometheus error answer (bad_data: "
        "'bad query'), not data (expected one of: "
    )
