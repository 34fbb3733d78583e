"""The gpu-ledger command as a user meets it, through the real entry point: every subcommand listed and
documented in docs/interface.md's table, global options before or after the command, shell completion, one
exit status per outcome, usage errors that create nothing, logging."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from gpu_ledger.cli import home_dir, main
from gpu_ledger.simulator.fleet import minimum_gpus
from tests.reliability.processes import children, running, wait_for
from tests.terminal import REPO, gpu_ledger

pytestmark = pytest.mark.minutes(2)

CONTRACT_COMMANDS = (
    "demo",
    "simulate",
    "ingest",
    "pull",
    "build",
    "validate",
    "app",
    "sql",
    "export",
    "status",
    "publish",
    "metrics",
    "job",
    "notify",
    "statement",
    "run",
    "mailprog",
)
JOBS_CSV = "job_id,scheduler,submitted_at,gpus\nj-1,ray,2026-10-01T00:00:00Z,1\n"


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _commands(help_text: str) -> list[str]:
    """The commands a --help lists: its Commands: section, up to the first blank line."""
    if "Commands:" not in help_text:
        return []
    section = help_text.split("Commands:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  ([a-z]+)(?: {2,}|$)", section, re.MULTILINE)


def test_help_lists_every_contract_command():
    result = gpu_ledger("--help", check=True)
    assert sorted(_commands(result.stdout)) == sorted(CONTRACT_COMMANDS)


def test_global_options_go_before_or_after_the_command(tmp_path: Path):
    home = tmp_path / "home"
    for args in (
        ["--home", str(home), "status"],
        ["status", "--home", str(home)],
        ["-v", "status", "--home", str(home)],
        ["--home", str(home), "status", "--quiet"],
        ["--home", str(tmp_path / "other"), "status", "--home", str(home)],  # the command's own wins
    ):
        result = gpu_ledger(*args, env={**dict(os.environ), "GPU_LEDGER_HOME": str(tmp_path / "env")})
        assert result.returncode == 0, (args, result.stderr)
        assert f"Nothing landed in {home} yet" in result.stdout, args


def test_home_comes_from_flag_then_environment_then_default(monkeypatch, tmp_path):
    monkeypatch.delenv("GPU_LEDGER_HOME", raising=False)
    assert str(home_dir(None)) == ".gpu-ledger"
    monkeypatch.setenv("GPU_LEDGER_HOME", str(tmp_path))
    assert home_dir(None) == tmp_path
    assert str(home_dir("elsewhere")) == "elsewhere"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["frobnicate"], "No such command 'frobnicate'"),
        (["build", "--engine", "oracle"], "'oracle' is not one of 'duckdb', 'spark'"),
        (["simulate", "--start", "01/10/2026"], "expected a date like 2026-10-01, got '01/10/2026'"),
        (["sql", "--format", "xml", "select 1"], "'xml' is not one of 'table', 'csv', 'json'"),
        (["simulate", "--gpus", "0"], "0 is not in the range x>=1"),
        (["ingest"], "Missing argument 'PATH...'"),
    ],
)
def test_a_usage_error_exits_2_with_the_reason(tmp_path: Path, args: list[str], message: str):
    result = gpu_ledger(*args, "--home", str(tmp_path / "home"))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "home").exists()


def test_shell_completion_completes_commands_options_and_choices():
    script = Path(sys.executable).with_name("gpu-ledger")

    def complete(words: str) -> list[str]:
        env = {**dict(os.environ), "_GPU_LEDGER_COMPLETE": "bash_complete", "COMP_WORDS": words}
        env["COMP_CWORD"] = str(len(words.split()) - (0 if words.endswith(" ") else 1))
        done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=True)
        return [line.split(",", 1)[1] for line in done.stdout.splitlines()]

    source = subprocess.run(
        [str(script)],
        env={**dict(os.environ), "_GPU_LEDGER_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
    )
    assert (
        source.returncode == 0 and "complete -o nosort -F _gpu_ledger_completion gpu-ledger" in source.stdout
    )
    assert complete("gpu-ledger bu") == ["build"]
    assert complete("gpu-ledger build --eng") == ["--engine"]
    assert complete("gpu-ledger build --engine ") == ["duckdb", "spark"]
    assert complete("gpu-ledger export ") == ["focus"]


def test_simulate_writes_into_home_by_default(tmp_path, capsys):
    code = main(
        [
            "simulate",
            "--home",
            str(tmp_path),
            "--gpus",
            str(minimum_gpus()),
            "--days",
            "1",
            "--interval",
            "1800",
            "--quiet",
        ]
    )
    assert code == 0
    summary = json.loads((tmp_path / "simulated" / "ground_truth" / "simulation.json").read_text())
    assert summary["interval_s"] == 1800
    assert "Ground truth:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "7"], "--interval must divide an hour"),
        (["--interval", "4"], "--interval below 8 s"),
    ],
)
def test_simulate_rejects_impossible_settings(tmp_path, capsys, args, message):
    assert main(["simulate", "--out", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir()), "nothing is written for rejected settings"


def test_simulate_rejects_a_malformed_date(capsys):
    assert main(["simulate", "--start", "01/10/2026"]) == 2
    assert "expected a date like 2026-10-01" in capsys.readouterr().err


def test_ingest_of_a_path_that_does_not_exist_creates_nothing(tmp_path: Path):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS_CSV)
    home = tmp_path / "home"
    result = gpu_ledger("ingest", "--home", str(home), str(jobs), str(tmp_path / "typo"))
    assert result.returncode == 2
    assert _one_line(result.stderr) == (
        f"gpu-ledger ingest: {tmp_path / 'typo'}: no such file or folder (nothing was ingested)"
    )
    assert not home.exists(), "a refused ingest created the home"


def test_export_refuses_a_file_type_it_cannot_write(tmp_path: Path):
    out = tmp_path / "focus.xlsx"
    result = gpu_ledger("export", "focus", "--home", str(tmp_path), "--out", str(out))
    assert result.returncode == 2
    assert _one_line(result.stderr) == (
        "gpu-ledger export focus: cannot write focus.xlsx: name the file .csv, .csv.gz (CSV) or "
        ".parquet (Parquet)"
    )
    assert not out.exists()


def test_export_refuses_a_folder_that_does_not_exist(tmp_path: Path):
    """A typo in --out's folder is refused in one line, not made into a new folder."""
    out = tmp_path / "no-such-dir" / "focus.csv"
    result = gpu_ledger("export", "focus", "--home", str(tmp_path), "--out", str(out))
    assert result.returncode == 2
    assert _one_line(result.stderr) == (
        f"gpu-ledger export focus: cannot write {out}: there is no folder {out.parent} (make it first)"
    )
    assert not out.parent.exists()


def test_export_refuses_a_focus_version_it_cannot_write(tmp_path: Path):
    out = tmp_path / "focus.csv"
    result = gpu_ledger(
        "export", "focus", "--home", str(tmp_path), "--out", str(out), "--focus-version", "1.5"
    )
    assert result.returncode == 2
    assert "Invalid value for '--focus-version': '1.5' is not one of '1.2', '1.3', '1.4'." in result.stderr
    assert not out.exists()


def test_export_of_focus_1_4_needs_a_built_warehouse_and_makes_no_folder_without_one(tmp_path: Path):
    out = tmp_path / "focus-1.4"
    result = gpu_ledger(
        "export", "focus", "--home", str(tmp_path), "--out", str(out), "--focus-version", "1.4"
    )
    assert result.returncode == 2
    assert _one_line(result.stderr) == (
        f"gpu-ledger export focus: no warehouse at {tmp_path / 'warehouse.duckdb'}: "
        "run `gpu-ledger build` first"
    )
    assert not out.exists()


def test_export_of_focus_1_3_needs_a_built_warehouse(tmp_path: Path):
    out = tmp_path / "focus.csv"
    result = gpu_ledger(
        "export", "focus", "--home", str(tmp_path), "--out", str(out), "--focus-version", "1.3"
    )
    assert result.returncode == 2
    assert _one_line(result.stderr) == (
        f"gpu-ledger export focus: no warehouse at {tmp_path / 'warehouse.duckdb'}: "
        "run `gpu-ledger build` first"
    )
    assert not out.exists()


def test_a_selected_build_needs_a_full_build_first(tmp_path: Path):
    for extra in ([], ["--full-refresh"]):
        result = gpu_ledger("build", "--home", str(tmp_path), "--select", "dim_gpus", *extra)
        assert result.returncode == 2
        assert "run gpu-ledger build without --select first" in _one_line(result.stderr)
    assert not (tmp_path / "warehouse.duckdb").exists()


def test_publish_without_a_dbt_build_says_what_to_run(tmp_path: Path):
    result = gpu_ledger("publish", "--home", str(tmp_path))
    assert result.returncode == 2
    assert "run `dbt build` from" in _one_line(result.stderr)


def test_the_demo_checks_its_port_before_any_work(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result = gpu_ledger("demo", "--home", str(tmp_path / "home"), "--port", str(port), "--quiet")
    assert result.returncode == 2
    assert time.monotonic() - started < 30, "the demo simulated or built before it found the port taken"
    line = _one_line(result.stderr)
    assert f"port {port} on 127.0.0.1 is not available" in line and "make demo PORT=" in line
    assert not (tmp_path / "home" / "simulated").exists()
    # make demo passes PORT on
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo", "PORT=8502"], cwd=REPO, capture_output=True, text=True
    )
    assert any(line.endswith("gpu-ledger demo --port 8502") for line in dry.stdout.splitlines()), dry.stdout


def test_app_checks_its_port_first(tmp_path: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = gpu_ledger("app", "--home", str(tmp_path), "--port", str(taken.getsockname()[1]))
    assert result.returncode == 2
    assert "is not available" in _one_line(result.stderr)


def _start_app(home: Path, log: Path) -> tuple[subprocess.Popen, int]:
    """`gpu-ledger app` on a free port, in a process group of its own, its output in `log`, once the
    server answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with log.open("w") as out:
        app = subprocess.Popen(
            [sys.executable, "-m", "gpu_ledger.cli", "app", "--home", str(home), "--port", str(port)],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for(lambda: _answers(port) or app.poll() is not None, 120, "the app to answer")
    assert app.poll() is None, log.read_text()
    return app, port


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def _stop_group(app: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):  # the group is gone already
        os.killpg(app.pid, signal.SIGKILL)
    app.wait()


def test_the_app_starts_without_streamlit_warnings(tmp_path: Path):
    log = tmp_path / "app.log"
    app, _ = _start_app(tmp_path / "home", log)
    try:
        os.killpg(app.pid, signal.SIGINT)  # Ctrl+C, as a terminal sends it
        app.wait(timeout=30)
    finally:
        _stop_group(app)
    printed = log.read_text()
    assert "GPU Ledger reports on http://127.0.0.1:" in printed
    assert "No runtime found" not in printed, printed


def test_a_killed_app_stops_its_server_and_frees_its_port(tmp_path: Path):
    app, port = _start_app(tmp_path / "home", tmp_path / "app.log")
    try:
        server = children(app.pid)
        assert server
        os.kill(app.pid, signal.SIGTERM)  # kill <pid>: the command only, not its group
        app.wait(timeout=30)
        wait_for(lambda: not any(running(pid) for pid in server), 10, "the server to stop with the app")
        assert not _answers(port), f"port {port} still served after the app was killed"
    finally:
        _stop_group(app)


def test_verbose_says_what_each_stage_does_and_writers_log_in_the_home(tmp_path: Path):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text(JOBS_CSV)
    home = tmp_path / "home"
    quiet = gpu_ledger("ingest", "--home", str(home), "--quiet", str(jobs))
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    log = home / "logs" / "gpu-ledger.log"
    assert f"INFO gpu_ledger.ingest.runner: loaded {jobs} as generic_jobs_csv, 1 rows" in log.read_text()

    jobs.write_text(JOBS_CSV + "j-2,ray,2026-10-01T01:00:00Z,2\n")
    loud = gpu_ledger("--verbose", "ingest", "--home", str(home), str(jobs), "--quiet")
    assert loud.returncode == 0
    assert re.search(
        rf"^\d\d:\d\d:\d\d ingest.runner: loaded {jobs} as generic_jobs_csv, 2 rows", loud.stderr, re.M
    )
    assert "replacing the earlier load" in loud.stderr
    assert log.read_text().count("gpu_ledger.cli: gpu-ledger ingest") == 2
    # the read-only commands write nothing into the home
    gpu_ledger("sql", "--home", str(tmp_path / "reader"), "select 1")
    assert not (tmp_path / "reader").exists()


def test_the_interface_command_table_matches_help():
    """Every row of the command table in docs/interface.md is a command whose --help has the row's
    description and every option the row names; every command --help lists has its row."""
    interface = (REPO / "docs" / "interface.md").read_text()
    table = interface.split("## 6. Commands", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `gpu-ledger ([^`]+)` \| (.+) \|$", table, re.MULTILINE)
    assert rows
    documented = {}
    for usage, description in rows:
        words = usage.split()
        command = " ".join(w for w in words[:2] if re.fullmatch(r"[a-z]+", w))
        documented[command] = (usage, description)
    top = gpu_ledger("--help", check=True).stdout
    leaves = []
    for name in _commands(top):
        children = _commands(gpu_ledger(name, "--help", check=True).stdout)
        leaves += [f"{name} {child}" for child in children] or [name]
    assert sorted(documented) == sorted(leaves)
    for command, (usage, description) in documented.items():
        help_text = " ".join(gpu_ledger(*command.split(), "--help", check=True).stdout.split())
        assert " ".join(description.replace("\\|", "|").split()) in help_text, command
        for option in re.findall(r"--[a-z][a-z-]*", usage):
            assert option in help_text, (command, option)
    for option in ("--home", "--verbose", "--quiet", "--version"):
        assert option in top and option in table, option


@pytest.mark.slow
def test_a_small_simulated_fleet_ingests_whole_and_builds(tmp_path, capsys):
    """What a new user tries first: simulate a few GPUs, ingest the whole output, build. The fleet keeps
    the behaviours that fit and names the ones it left out; ingest lands every input file, skips the
    ground truth (its folder is marked) and exits 0."""
    out, home = tmp_path / "sim", tmp_path / "home"
    assert main(["simulate", "--out", str(out), "--gpus", "3", "--days", "1", "--interval", "900"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "ground_truth" / "simulation.json").read_text())
    assert summary["left_out"], "a 3-GPU fleet cannot hold every planted behaviour"
    for pool in summary["left_out"]:
        assert f"{pool['behaviour']} ({pool['pool']}, needs {pool['needs_gpus']} GPUs)" in printed
    assert 0 < summary["gpus"] <= 3 + 1  # about 3: autoscaled inference may add a node
    assert main(["ingest", "--home", str(home), "--quiet", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "rejected" not in printed and "ground_truth" not in printed
    assert main(["build", "--home", str(home)]) == 0
    out, err = capsys.readouterr()
    assert "Built and published" in out and "Nothing landed" not in err


def test_ctrl_c_while_duckdb_runs_a_query_of_the_command_is_one_line_and_130(capsys):
    """DuckDB takes the SIGINT a query is running under and raises RuntimeError('Query interrupted'), not
    KeyboardInterrupt: a command stopped there says one line and exits 130, as one stopped anywhere else."""
    import threading

    import click
    import duckdb

    from gpu_ledger.cli.common import INTERRUPTED, guarded

    @click.command("count")
    @guarded
    def count() -> int:
        duckdb.connect().sql("select count(*) from range(10000000000) a, range(10) b").fetchall()
        return 0

    # Python's own Ctrl+C handler, whatever an earlier test of this process left installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        assert count.main(args=[], prog_name="gpu-ledger", standalone_mode=False) == INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, previous)
    err = capsys.readouterr().err
    assert err.endswith(": interrupted\n") and err.count("\n") == 1, err
