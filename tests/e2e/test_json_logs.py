"""A process's log is JSON lines only (``CALLWRIGHT_LOG_FORMAT=json``, the default): a worker or a
server that cannot reach its database fails with one ``process.failed`` line and exit code 1, and a
server's start-up (the embedded database, granian's main and worker processes, the application)
writes nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.service import base_env, free_port, offline_server, run_cli

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/x"  # a port nothing listens on

pytestmark = pytest.mark.e2e


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every non-empty line of ``text``, each of which must be one JSON object."""
    lines = [line for line in text.splitlines() if line.strip()]
    not_json = [line for line in lines if not _is_json_object(line)]
    assert not_json == [], "\n".join(not_json)
    return [json.loads(line) for line in lines]


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def test_a_worker_that_cannot_reach_its_database_logs_one_json_failure_and_exits_1(tmp_path: Path):
    env = base_env(database_url=UNREACHABLE, database_wait_seconds="1",
                   data_dir=str(tmp_path / "var"), log_level="info")

    done = run_cli(env, "worker")

    assert done.returncode == 1, done.stderr
    lines = json_lines(done.stderr)
    [failed] = [line for line in lines if line["event"] == "process.failed"]
    assert {k: failed[k] for k in ("level", "command", "error")} == {
        "level": "error", "command": "worker", "error": "OperationalError"}
    assert failed["exception"].startswith("Traceback (most recent call last):")
    assert "127.0.0.1" in failed["exception"] and done.stdout == ""


def test_a_server_whose_worker_cannot_create_its_tables_logs_json_lines_only_and_exits_1(tmp_path: Path):
    env = base_env(database_url=UNREACHABLE, database_wait_seconds="1", data_dir=str(tmp_path / "var"),
                   host="127.0.0.1", port=str(free_port()), log_level="info")

    done = run_cli(env, "serve")  # granian's worker process fails creating the tables; the server stops

    assert done.returncode == 1, done.stderr
    lines = json_lines(done.stdout + done.stderr)
    [failed] = [line for line in lines if line["event"] == "process.failed"]
    assert (failed["command"], failed["error"]) == ("serve", "OperationalError")
    assert "Connection refused" in failed["exception"]
    assert any(line.get("logger") == "_granian" and line["event"] == "Unexpected exit from worker-1" for line in lines)


def test_a_server_s_start_up_is_logged_in_json_lines_only():
    with offline_server("callwright-json-logs-", log_level="info") as server:
        lines = json_lines(server.output())  # everything up to the first /healthz answer, and a little more

    events = [(line.get("logger"), line["event"]) for line in lines]
    assert (None, "serve.starting") in events
    assert any(logger == "_granian" and event.startswith("Listening at: ") for logger, event in events), events
    assert any(logger and logger.startswith("_granian") and event == "Started worker-1" for logger, event in events)
    assert all(line["timestamp"] and line["level"] for line in lines)
