"""A call's life after creation (SPEC.md Calls, States › Call status and the answering-machine
rule; ARCHITECTURE.md §7): simulated calls run to ``completed`` or ``failed``, can be cancelled
while they have not ended, and the watchdog ends calls stuck past their maximum duration."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from adapters.email.outbox import MemoryEmailSender
from adapters.postgres.database import DatabaseConfig
from application.calling import runner
from application.calling.lifecycle import WATCHDOG_GRACE, fail_overdue
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.http.app import create_app
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.postgres import drop_schema, fresh_schema
from tests.support.call_requests import LONDON, call_body, error_code, wait_until_ended
from tests.support.setup import FAST_HASHER, Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

SCHEMA = {
    "confirmed": {"type": "boolean"},
    "visit_time": {"type": "datetime"},
    "mood": {"type": "enum", "values": ["happy", "annoyed"]},
    "party_size": {"type": "integer"},
    "dishes": {"type": "array"},
}
FACTS = {
    "confirmed": True,
    "visit_time": "2026-11-05T15:00:00+01:00",
    "mood": "annoyed",
    "party_size": 4,
    "dishes": ["soup", "bread"],
}
OBJECTIVE = "Check the dinner reservation"


def run_body(**overrides: Any) -> dict[str, Any]:
    return call_body(**{"objective": OBJECTIVE, "outcome_schema": SCHEMA, "simulation": {"facts": FACTS}, **overrides})


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


@contextmanager
def app_without_reactors(pg_server: DatabaseConfig, data_dir: Path) -> Iterator[tuple[TestClient[Any], Container]]:
    """No call runner and no watchdog: a created call stays ``queued`` until a test moves it."""
    config = fresh_schema(pg_server)
    settings = Settings(data_dir=data_dir, secret_key="test-secret-key-0123456789abcdef",
                        rate_limit_tiers={"standard": 1_000_000})
    built = bootstrap(settings, database=config, clock=FakeClock(), email=MemoryEmailSender(), hasher=FAST_HASHER,
                      projections=False)
    try:
        with TestClient(create_app(built, start_projections=False), raise_server_exceptions=False) as test_client:
            yield test_client, built
    finally:
        built.close()
        drop_schema(config)


@pytest.fixture(scope="module")
def still(pg_server: DatabaseConfig, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Container, Account]]:
    with app_without_reactors(pg_server, tmp_path_factory.mktemp("still")) as (still_client, still_container):
        yield still_client, still_container, new_tenant(still_client, still_container)


def run_call(client: TestClient[Any], account: Account, body: dict[str, Any]) -> dict[str, Any]:
    created = client.post("/v1/calls", json=body, headers=account.headers)
    assert created.status_code == 201, created.text
    record = wait_until_ended(client, account.headers, created.json()["call_id"])
    assert record["status"] in ("completed", "failed"), record
    return record


def transcript_lines(record: dict[str, Any]) -> list[str]:
    return record["transcript"].splitlines() if record["transcript"] else []


# --- a simulated call runs to the end ----------------------------------------------------------


def test_a_simulated_call_completes_with_a_typed_outcome(client, account):
    record = run_call(client, account, run_body())

    assert record["status"] == "completed"
    assert record["outcome"] == {
        "confirmed": True,
        "visit_time": "2026-11-05T14:00:00Z",  # normalized to UTC
        "mood": "annoyed",
        "party_size": 4,
        "dishes": ["soup", "bread"],
    }
    assert record["error_code"] is None
    assert record["answered_by"] == "human"


def test_confidence_is_one_when_every_fact_is_known(client, account):
    record = run_call(client, account, run_body())

    assert isinstance(record["confidence"], float) and record["confidence"] == 1.0


def test_the_transcript_is_agent_and_callee_lines(client, account):
    record = run_call(client, account, run_body())

    lines = transcript_lines(record)
    assert lines[0].startswith("agent: ") and OBJECTIVE in lines[0]
    assert all(line.startswith(("agent: ", "callee: ")) for line in lines)
    assert sum(line.startswith("callee: ") for line in lines) == len(SCHEMA)
    assert "callee: Yes." in lines
    assert lines[-1].startswith("agent: ") and "Goodbye" in lines[-1]


def test_a_simulated_call_has_a_duration_and_spends_no_voice_minutes(client, account):
    record = run_call(client, account, run_body())

    assert isinstance(record["duration_seconds"], int) and record["duration_seconds"] > 0
    assert record["cost_voice"] == "0.0000"
    assert Decimal(record["cost_total"]) == Decimal(record["cost_voice"]) + Decimal(record["cost_extraction"])
    assert record["started_at"] is not None and record["ended_at"] is not None


def test_optional_fields_without_a_fact_are_null_and_lower_confidence(client, account):
    # The callee admits it does not know; that admission is not itself the answer.
    schema = {"confirmed": {"type": "boolean"}, "dietary_notes": {"type": "string", "optional": True},
              "allergies": {"type": "array", "optional": True}, "guests": {"type": "integer", "optional": True}}
    body = run_body(outcome_schema=schema, simulation={"facts": {"confirmed": False}})

    record = run_call(client, account, body)

    assert record["status"] == "completed"
    assert record["outcome"] == {"confirmed": False, "dietary_notes": None, "allergies": None, "guests": None}
    assert 0.0 <= record["confidence"] < 1.0


@pytest.mark.parametrize("missing", ["party_size", "dishes", "visit_time", "confirmed", "mood"])
def test_a_required_field_the_callee_cannot_answer_fails_extraction(client, account, missing):
    facts = {name: value for name, value in FACTS.items() if name != missing}

    record = run_call(client, account, run_body(simulation={"facts": facts}))

    assert record["status"] == "failed"
    assert record["error_code"] == "extraction_failed"
    assert record["outcome"] is None
    assert "callee: Sorry, I don't know that." in transcript_lines(record)


def test_a_required_string_the_callee_cannot_answer_fails_extraction(client, account):
    schema = {"confirmed": {"type": "boolean"}, "dietary_notes": {"type": "string"}}

    record = run_call(client, account, run_body(outcome_schema=schema, simulation={"facts": {"confirmed": True}}))

    assert (record["status"], record["error_code"], record["outcome"]) == ("failed", "extraction_failed", None)


@pytest.mark.parametrize(("answered_by", "code"), [
    ("machine_start", "machine_detected"),
    ("machine_end_beep", "machine_detected"),
    ("machine_end_silence", "machine_detected"),
    ("machine_end_other", "machine_detected"),
    ("fax", "fax_detected"),
])
def test_a_machine_or_fax_answer_abandons_the_call_without_audio_or_message(client, account, answered_by, code):
    # SPEC.md answering-machine rule: abandoned, with no audio spent and no message left.
    record = run_call(client, account, run_body(simulation={"facts": FACTS, "answered_by": answered_by}))

    assert record["status"] == "failed"
    assert record["error_code"] == code
    assert record["answered_by"] == answered_by
    assert record["transcript"] == ""
    assert record["outcome"] is None
    assert record["cost_voice"] == record["cost_total"] == "0.0000"


def test_an_unknown_answer_is_treated_as_human(client, account):
    # SPEC.md: "unknown" means detection timed out; the call is treated as human.
    record = run_call(client, account, run_body(simulation={"facts": FACTS, "answered_by": "unknown"}))

    assert record["status"] == "completed"
    assert record["answered_by"] == "unknown"
    assert record["confidence"] == 1.0
    assert transcript_lines(record)


def test_nobody_answering_fails_the_call(client, account):
    record = run_call(client, account, run_body(simulation={"facts": FACTS, "answered_by": "no_answer"}))

    assert (record["status"], record["error_code"], record["transcript"]) == ("failed", "no_answer", "")


# --- a queued call, cancel ------------------------------------------------------------------


def test_a_queued_call_shows_no_outcome_yet(still):
    client, _container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]

    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()

    assert record["status"] == "queued"
    assert record["outcome"] is None and record["confidence"] is None and record["duration_seconds"] is None
    assert record["transcript"] == "" and record["error_code"] is None and record["recording_url"] is None
    assert (record["cost_voice"], record["cost_extraction"], record["cost_total"]) == ("0.0000", "0.0000", "0.0000")


def test_a_queued_call_can_be_cancelled(still):
    client, _container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]

    cancelled = client.post(f"/v1/calls/{call_id}/cancel", headers=tenant.headers)

    assert cancelled.status_code == 200, cancelled.text
    assert (cancelled.json()["status"], cancelled.json()["error_code"]) == ("failed", "cancelled")
    record = client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()
    assert (record["status"], record["error_code"], record["outcome"]) == ("failed", "cancelled", None)


def test_a_cancelled_call_is_never_run(still):
    client, container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]
    client.post(f"/v1/calls/{call_id}/cancel", headers=tenant.headers)

    assert runner.claim(container.calling, call_id) is None
    assert client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()["transcript"] == ""


def test_cancelling_an_ended_call_is_a_409(client, account):
    record = run_call(client, account, run_body())

    again = client.post(f"/v1/calls/{record['call_id']}/cancel", headers=account.headers)

    assert again.status_code == 409
    assert error_code(again) == "call_already_ended"
    assert client.get(f"/v1/calls/{record['call_id']}", headers=account.headers).json() == record


def test_cancelling_twice_is_a_409(still):
    client, _container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]
    assert client.post(f"/v1/calls/{call_id}/cancel", headers=tenant.headers).status_code == 200

    again = client.post(f"/v1/calls/{call_id}/cancel", headers=tenant.headers)

    assert again.status_code == 409
    assert error_code(again) == "call_already_ended"


def test_another_tenant_cannot_cancel_a_call(still):
    client, container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]
    other = new_tenant(client, container)

    response = client.post(f"/v1/calls/{call_id}/cancel", headers=other.headers)

    assert response.status_code == 404
    assert error_code(response) == "call_not_found"
    assert client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()["status"] == "queued"


def test_a_key_without_calls_create_cannot_cancel(still):
    client, _container, tenant = still
    call_id = client.post("/v1/calls", json=run_body(), headers=tenant.headers).json()["call_id"]

    response = client.post(f"/v1/calls/{call_id}/cancel", headers=scoped_key(client, tenant, ["calls:read"]))

    assert response.status_code == 403
    assert client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()["status"] == "queued"


# --- the watchdog ---------------------------------------------------------------------------


def test_the_watchdog_fails_stuck_calls_with_timeout_and_leaves_ended_ones_alone(still):
    client, container, tenant = still
    calling = container.calling

    def create() -> str:
        created = client.post("/v1/calls", json=run_body(to=LONDON), headers=tenant.headers)
        assert created.status_code == 201, created.text
        return created.json()["call_id"]

    queued, stuck, completed, cancelled = create(), create(), create(), create()
    assert runner.claim(calling, stuck) is not None  # claimed by a runner that then died
    claimed = runner.claim(calling, completed)
    assert claimed is not None
    runner.run(calling, claimed)
    client.post(f"/v1/calls/{cancelled}/cancel", headers=tenant.headers)
    everything = [queued, stuck, completed, cancelled]
    limit = timedelta(seconds=calling.ports.max_call_seconds) + WATCHDOG_GRACE

    container.clock.advance(limit - timedelta(seconds=1))
    assert fail_overdue(calling, everything) == []
    container.clock.advance(timedelta(seconds=1))
    ended = fail_overdue(calling, everything)

    assert sorted(ended) == sorted([queued, stuck])
    records = {call_id: client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json() for call_id in everything}
    for call_id in (queued, stuck):
        assert (records[call_id]["status"], records[call_id]["error_code"]) == ("failed", "timeout")
        assert records[call_id]["outcome"] is None
    assert (records[completed]["status"], records[completed]["error_code"]) == ("completed", None)
    assert records[completed]["outcome"]["party_size"] == 4
    assert (records[cancelled]["status"], records[cancelled]["error_code"]) == ("failed", "cancelled")
    assert fail_overdue(calling, everything) == []  # a second pass changes nothing
