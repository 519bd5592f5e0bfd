"""The README's calls walk-through against a real ``callwright serve`` process: a simulated call
with boolean, datetime and enum fields runs to ``completed``; it is listed and exported, also
through the ``callwright calls`` client and ``callwright demo``."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator

import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, offline_server, run_cli
from tests.support.readme import first_call_body

pytestmark = pytest.mark.e2e



@pytest.fixture
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-e2e-calls-") as started:
        yield started


def test_a_simulated_call_runs_to_a_typed_outcome_and_is_listed_and_exported(server: ServeProcess) -> None:
    """The README's own request (read from README.md): it takes place at its ``simulation.at``, so
    it completes at whatever hour the test runs."""
    body = {**first_call_body(), "metadata": {"crm_id": "A-17"}}
    to = body["to"]
    key = approved_key(server, "calls@example.com")
    headers = bearer(key)
    with server.client() as http:
        created = http.post("/v1/calls", headers={**headers, "Idempotency-Key": "walkthrough-1"}, json=body)
        assert created.status_code == 201, created.text
        call_id = created.json()["call_id"]
        deadline = time.monotonic() + 20
        while True:
            record = http.get(f"/v1/calls/{call_id}", headers=headers).json()
            if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert record["status"] == "completed", record
        assert record["outcome"] == {"confirmed": True, "callback_at": "2026-12-01T14:30:00Z", "channel": "email"}
        assert record["confidence"] == 1.0 and record["cost_voice"] == "0.0000" and record["metadata"] == {"crm_id": "A-17"}

        listed = http.get("/v1/calls", headers=headers, params={"status": "completed"}).json()
        assert [row["call_id"] for row in listed["data"]] == [call_id] and listed["total"] == 1
        exported = http.get("/v1/calls/export.csv", headers=headers)
        rows = list(csv.reader(io.StringIO(exported.text)))
        assert rows[0][:3] == ["call_id", "created_at", "to"] and rows[1][0] == call_id and rows[1][2] == to

    client_env = {**server.env, "OPENPHN_API_KEY": key, "CALLWRIGHT_BASE_URL": server.base_url}
    watched = run_cli(client_env, "calls", "watch", call_id)
    assert watched.returncode == 0, watched.stderr
    assert "[completed]" in watched.stdout and '"channel": "email"' in watched.stdout
    exported_cli = run_cli(client_env, "calls", "export", "--status", "completed")
    assert exported_cli.returncode == 0 and call_id in exported_cli.stdout
    listed_cli = run_cli(client_env, "calls", "list")
    assert listed_cli.returncode == 0 and call_id in listed_cli.stdout


def test_demo_runs_a_simulated_call_offline(tmp_path) -> None:
    env = base_env(data_dir=str(tmp_path / "var"))
    env.pop("ANTHROPIC_API_KEY", None)
    done = run_cli(env, "demo")
    assert done.returncode == 0, done.stderr
    assert "[completed]" in done.stdout and '"confirmed": true' in done.stdout
    assert not (tmp_path / "var").exists()  # the demo works in a scratch folder of its own
