"""Log lines an operator searches by (JSON, ``service_log``): refusals name the key and tenant
when the key was recognised, the request line carries what granian's access line would, and a
call's life is logged step by step with its ids, duration and error code."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from entrypoints.settings import Settings
from tests.support.call_requests import call_body, wait_until_ended
from tests.support.setup import signup


@pytest.fixture
def settings(tmp_path: Path, request: pytest.FixtureRequest) -> Settings:
    """A budget of 4 requests a minute for the rate-limit test, the default for the others."""
    tiers = {"standard": 4} if "rate_limited" in request.node.name else {"standard": 1000}
    return Settings(data_dir=tmp_path / "var", secret_key="test-secret-key-0123456789abcdef", rate_limit_tiers=tiers)


def lines(service_log, event: str) -> list[dict[str, Any]]:
    return [line for line in map(json.loads, service_log.getvalue().splitlines()) if line["event"] == event]


def request_line(service_log, status: int) -> dict[str, Any]:
    return [line for line in lines(service_log, "http.request") if line["status"] == status][-1]


def test_the_request_line_carries_what_an_access_log_would(client, account, service_log):
    client.get("/v1/calls", headers={**account.headers, "X-Request-Id": "req-42"})

    line = request_line(service_log, 200)
    assert {k: line[k] for k in ("method", "path", "route", "request_id", "key_id", "tenant_id")} == {
        "method": "GET", "path": "/v1/calls", "route": "/v1/calls", "request_id": "req-42",
        "key_id": account.key_id, "tenant_id": account.tenant_id}
    assert line["duration_ms"] >= 0 and line["timestamp"] and line["level"] == "info"


def test_a_revoked_key_is_refused_with_its_id_and_tenant_on_the_line(client, account, service_log):
    other = client.post("/auth/api-keys", json={"scopes": ["calls:read"]}, headers=account.headers).json()
    client.delete(f"/auth/api-keys/{other['key_id']}", headers=account.headers)

    refused = client.get("/v1/calls", headers={"Authorization": f"Bearer {other['secret']}"})
    unknown = client.get("/v1/calls", headers={"Authorization": "Bearer sk_live_" + "A" * 32})

    assert (refused.status_code, unknown.status_code) == (401, 401)
    lines_401 = [line for line in lines(service_log, "http.request") if line["status"] == 401]
    assert [(line["error_code"], line["key_id"], line["tenant_id"]) for line in lines_401] == [
        ("api_key_revoked", other["key_id"], account.tenant_id), ("invalid_api_key", None, None)]
    assert other["secret"] not in service_log.getvalue()


def test_a_pending_account_and_a_missing_scope_are_refused_with_the_key_named(client, account, service_log):
    pending = signup(client)
    reader = client.post("/auth/api-keys", json={"scopes": ["calls:read"]}, headers=account.headers).json()

    assert client.get("/v1/calls", headers=pending.headers).status_code == 403
    first = request_line(service_log, 403)
    assert client.post("/v1/webhooks", json={"url": "https://example.com/h"},
                       headers={"Authorization": f"Bearer {reader['secret']}"}).status_code == 403
    second = request_line(service_log, 403)

    assert (first["error_code"], first["key_id"], first["tenant_id"]) == (
        "account_pending_review", pending.key_id, pending.tenant_id)
    assert (second["key_id"], second["tenant_id"]) == (reader["key_id"], account.tenant_id)


def test_a_rate_limited_request_names_the_key_and_tenant(client, account, service_log):
    statuses = [client.get("/v1/calls", headers=account.headers).status_code for _ in range(6)]

    assert 429 in statuses
    line = request_line(service_log, 429)
    assert (line["error_code"], line["key_id"], line["tenant_id"]) == (
        "rate_limited", account.key_id, account.tenant_id)


def test_a_calls_life_is_logged_step_by_step_with_its_ids(client, account, service_log):
    done = client.post("/v1/calls", json=call_body(), headers=account.headers).json()["call_id"]
    failed = client.post("/v1/calls", json=call_body(simulation={"answered_by": "machine_start"}),
                         headers=account.headers).json()["call_id"]
    wait_until_ended(client, account.headers, done)
    wait_until_ended(client, account.headers, failed)

    def steps(call_id: str) -> list[dict[str, Any]]:
        return [line for line in map(json.loads, service_log.getvalue().splitlines())
                if line["event"].startswith("call.") and line.get("call_id") == call_id]

    # A step is logged once its commit has returned: a reader may see the call end a moment before
    # the runner's thread writes the line.
    deadline = time.monotonic() + 5
    while (not {"call.completed", "call.failed"} <= {line["event"] for line in steps(done) + steps(failed)}
           and time.monotonic() < deadline):
        time.sleep(0.01)
    completed, machine = steps(done), steps(failed)
    assert [line["event"] for line in completed][0] == "call.queued"
    assert [line["event"] for line in completed][-1] == "call.completed"
    assert "call.started" in [line["event"] for line in completed]
    assert all(line["tenant_id"] == account.tenant_id for line in completed + machine)
    end = completed[-1]
    assert end["status"] == "completed" and end["error_code"] is None and "duration_seconds" in end
    assert (machine[-1]["event"], machine[-1]["error_code"]) == ("call.failed", "machine_detected")
