# ruff: noqa: E501  (sample rows are kept whole, as the gateways write them)
"""LLM gateway request logs: LiteLLM's spend logs (CSV and JSON), the generic request log, the tenant map.

The LiteLLM sample has every column of its `LiteLLM_SpendLogs` table (schema.prisma) in the table's
order, as `COPY "LiteLLM_SpendLogs" TO ... CSV HEADER` writes it, with hand-made rows: a self-hosted
vLLM request, a request to OpenAI, a failure, one without a key. Bad files are refused in one line
naming the file, the line and the column.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_ledger.ingest import registry
from gpu_ledger.ingest.base import Options
from gpu_ledger.ingest.runner import Outcome, ingest
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.store import RawStore

LITELLM_HEADER = "request_id,call_type,api_key,spend,total_tokens,prompt_tokens,completion_tokens,startTime,endTime,completionStartTime,model,model_id,model_group,custom_llm_provider,api_base,user,metadata,cache_hit,cache_key,request_tags,team_id,end_user,requester_ip_address,messages,response,session_id,status,proxy_server_request"
LITELLM_CSV = f"""{LITELLM_HEADER}
chatcmpl-7f3a,acompletion,88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b,0.0,1530,1200,330,2026-10-01 09:15:02.113,2026-10-01 09:15:04.871,2026-10-01 09:15:02.402,meta-llama/Llama-3.1-8B-Instruct,c1f0,llama-8b,hosted_vllm,http://llama-8b.serving.svc:8000/v1,alice,"{{""user_api_key_alias"": ""search-bot"", ""user_api_key_team_alias"": ""search""}}",False,,[],team-search,,10.0.3.7,{{}},{{}},s-1,success,{{}}
chatcmpl-81bb,acompletion,a73dc2a0b4d3f0b9c3a4f5e6d7c8b9a0f1e2d3c4b5a69788f9e0d1c2b3a4f5e6,0.00275,900,600,300,2026-10-01T10:00:00Z,2026-10-01T10:00:03Z,,gpt-4o,,gpt-4o,openai,https://api.openai.com/v1,,{{}},False,,[],team-ads,,,{{}},{{}},,success,{{}}
chatcmpl-9c01,acompletion,88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b,0.0,0,0,0,2026-10-01 11:00:00,2026-10-01 11:00:30,,meta-llama/Llama-3.1-8B-Instruct,c1f0,llama-8b,hosted_vllm,http://llama-8b.serving.svc:8000/v1,alice,{{}},,,[],team-search,,,{{}},{{}},,failure,{{}}
chatcmpl-a410,acompletion,,0.0,50,40,10,2026-10-01 12:00:00,2026-10-01 12:00:01,,meta-llama/Llama-3.1-8B-Instruct,,llama-8b,hosted_vllm,,,{{}},,,[],,,,{{}},{{}},,success,{{}}
"""


@pytest.fixture
def store(tmp_path: Path):
    with RawStore(tmp_path / "home" / "landed.duckdb") as s:
        yield s


def one(store: RawStore, path: Path) -> Outcome:
    (outcome,) = ingest([path], store, options=Options(), progress=False)
    return outcome


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def format_of(path: Path) -> str:
    return registry.detect(Sniff.of(path)).name


def test_litellm_csv_export_lands_its_requests(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "spend_logs.csv", LITELLM_CSV)
    assert format_of(path) == "litellm_spend_logs"
    outcome = one(store, path)
    assert outcome.error is None and outcome.rows == 4
    got = store.con.sql(
        "select request_id, api_key, team_id, model, model_group, api_base, prompt_tokens, completion_tokens,"
        " spend, strftime(start_time at time zone 'UTC', '%Y-%m-%d %H:%M:%S'), status, _source_row"
        " from raw.litellm_spend_logs order by _source_row"
    ).fetchall()
    assert got[0] == (
        "chatcmpl-7f3a", "88dc28d0f030c55ed4ab77ed8faf098196cb1c05df778539800c9f1243fe6b4b", "team-search",
        "meta-llama/Llama-3.1-8B-Instruct", "llama-8b", "http://llama-8b.serving.svc:8000/v1", 1200, 330,
        0.0, "2026-10-01 09:15:02", "success", 2,
    )  # fmt: skip
    assert got[1][8] == pytest.approx(0.00275) and got[1][9] == "2026-10-01 10:00:00"
    assert got[2][10] == "failure"
    assert got[3][1] is None and got[3][5] is None  # no key, no api_base: landed empty


def test_litellm_json_answer_lands_the_same_rows(tmp_path: Path, store: RawStore) -> None:
    rows = [
        {
            "request_id": "chatcmpl-7f3a",
            "call_type": "acompletion",
            "api_key": "88dc28d0",
            "spend": 0.0,
            "total_tokens": 1530,
            "prompt_tokens": 1200,
            "completion_tokens": 330,
            "startTime": "2026-10-01T09:15:02.113000+00:00",
            "endTime": "2026-10-01T09:15:04.871000+00:00",
            "model": "meta-llama/Llama-3.1-8B-Instruct",
            "model_group": "llama-8b",
            "api_base": "http://llama-8b.serving.svc:8000/v1",
            "user": "alice",
            "metadata": {"user_api_key_alias": "search-bot", "tags": ["prod"]},
            "request_tags": [],
            "team_id": "team-search",
            "end_user": None,
        },
        {
            "request_id": "chatcmpl-81bb",
            "api_key": "a73dc2a0",
            "prompt_tokens": 600,
            "completion_tokens": 300,
            "startTime": "2026-10-01T10:00:00Z",
            "model": "gpt-4o",
        },
    ]
    for name, text in [
        ("logs.json", json.dumps(rows)),
        ("page.json", json.dumps({"data": rows, "total": 2, "page": 1})),
        ("logs.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n"),
    ]:
        path = write(tmp_path, name, text)
        assert format_of(path) == "litellm_spend_logs", name
        outcome = one(store, path)
        assert outcome.error is None and outcome.rows == 2, name
    got = store.con.sql(
        "select distinct request_id, team_id, prompt_tokens, metadata, _source_row from raw.litellm_spend_logs"
        " order by all"
    ).fetchall()
    assert got == [
        ("chatcmpl-7f3a", "team-search", 1200, '{"user_api_key_alias":"search-bot","tags":["prod"]}', 1),
        ("chatcmpl-81bb", None, 600, None, 2),
    ]


GENERIC_CSV = """timestamp,tenant,model,input_tokens,output_tokens,api_base,status
2026-10-01T09:00:00Z,key-ads,meta-llama/Llama-3.1-8B-Instruct,1000,200,http://llama-8b.serving.svc:8000/v1,success
2026-10-01T09:30:00+02:00,key-search,meta-llama/Llama-3.1-8B-Instruct,500,100,,
"""


def test_generic_request_log_csv_and_jsonl(tmp_path: Path, store: RawStore) -> None:
    csv_path = write(tmp_path, "requests.csv", GENERIC_CSV)
    jsonl = '{"timestamp": "2026-10-01T09:00:00Z", "tenant": "key-ads", "team": "ads", "model": "m", "input_tokens": 10, "output_tokens": 2}\n'
    jsonl_path = write(tmp_path, "requests.jsonl", jsonl)
    assert format_of(csv_path) == format_of(jsonl_path) == "gateway_requests"
    assert one(store, csv_path).rows == 2 and one(store, jsonl_path).rows == 1
    got = store.con.sql(
        "select tenant, team, strftime(requested_at at time zone 'UTC', '%H:%M'), input_tokens, status"
        " from raw.gateway_requests order by all"
    ).fetchall()
    assert got == [
        ("key-ads", "ads", "09:00", 10, None),
        ("key-ads", None, "09:00", 1000, "success"),
        ("key-search", None, "07:30", 500, None),
    ]


def test_tenant_map_lands(tmp_path: Path, store: RawStore) -> None:
    path = write(tmp_path, "tenants.csv", "tenant,team,project\n88dc28d0,search,chat-search\nteam-ads,ads,\n")
    assert format_of(path) == "gateway_tenants_csv"
    assert one(store, path).rows == 2
    assert store.con.sql(
        "select * exclude (_source_file, _load_id) from raw.gateway_tenants order by 1"
    ).fetchall() == [
        ("88dc28d0", "search", "chat-search", 2),
        ("team-ads", "ads", None, 3),
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "negative.csv",
            LITELLM_CSV.replace(",1200,330,", ",-1200,330,"),
            "negative.csv:2: column 'prompt_tokens': '-1200' does not fit (expected a whole number ≥ 0)",
        ),
        (
            "no_time.json",
            '[{"request_id": "r", "api_key": "k", "startTime": "yesterday", "prompt_tokens": 1, "completion_tokens": 1}]',
            "no_time.json:1: column 'startTime': 'yesterday' does not fit",
        ),
        (
            "extra.jsonl",
            '{"timestamp": "2026-10-01T09:00:00Z", "tenant": "a", "model": "m", "input_tokens": 1, "output_tokens": 1, "cost": 2}\n',
            "extra.jsonl: column 'cost': unknown column 'cost'",
        ),
        (
            "bad_status.csv",
            GENERIC_CSV.replace("success", "ok"),
            "bad_status.csv:2: column 'status': 'ok' does not fit (expected one of success, failure)",
        ),
        (
            "broken.jsonl",
            '{"timestamp": "2026-10-01T09:00:00Z", "tenant": "a", "model": "m", "input_tokens": 1, "output_tokens": 1}\n{"timestamp": ',
            "broken.jsonl:2: not JSON",
        ),
    ],
)
def test_a_bad_file_is_refused_in_one_line(
    tmp_path: Path, store: RawStore, name: str, text: str, message: str
) -> None:
    outcome = one(store, write(tmp_path, name, text))
    assert outcome.error is not None
    error = str(outcome.error)
    assert "\n" not in error and message in error
    assert outcome.rows == 0
