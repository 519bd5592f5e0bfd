"""Helpers for the ``/v1/calls`` tests: request bodies, polling, counting calls. Setting up the
tenant that makes them is ``tests/support/setup.py``."""

from __future__ import annotations

import time
from typing import Any

from eventsourcing.utils import get_topic
from litestar.testing import TestClient

from domain.calls.call import Call
from entrypoints.bootstrap import Container

LONDON = "+442071838750"  # 12:00 in London when the FakeClock starts: inside call hours
LONDON_2 = "+442079460958"
LONDON_3 = "+442079460001"
NEW_YORK = "+12125551234"  # 07:00 in New York when the FakeClock starts: outside call hours

SCHEMA: dict[str, Any] = {"confirmed": {"type": "boolean"}}
ABSENT: Any = object()  # an override that leaves the field out of the body


def call_body(**overrides: Any) -> dict[str, Any]:
    """A simulated call that passes every creation rule at the FakeClock's start."""
    body: dict[str, Any] = {
        "to": LONDON,
        "objective": "Confirm the appointment",
        "outcome_schema": SCHEMA,
        "consent_type": "prior_express",
        "mode": "simulated",
        "simulation": {"facts": {"confirmed": True}},
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ABSENT}


def batch_body(items: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    """A batch of ``items`` sharing the fields of ``call_body``."""
    return {**call_body(to=ABSENT, **overrides), "items": items}


def queued_call_ids(container: Container, tenant_id: str) -> list[str]:
    """Every call of the tenant the write side holds, read from the Calling log itself."""
    calling = container.calling
    found: list[str] = []
    start = 1
    while True:
        page = calling.recorder.select_notifications(start=start, limit=500, topics=[get_topic(Call.Queued)])
        for notification in page:
            event = calling.mapper.to_domain_event(notification)
            if event.tenant_id == tenant_id:
                found.append(event.call_id)
        if len(page) < 500:
            return found
        start = page[-1].id + 1


def queued_notification_ids(container: Container, call_ids: list[str]) -> list[int]:
    """Positions of the calls' ``Queued`` events in the Calling log, in log order."""
    wanted = set(call_ids)
    calling = container.calling
    positions = []
    for notification in calling.recorder.select_notifications(start=1, limit=100_000, topics=[get_topic(Call.Queued)]):
        if calling.mapper.to_domain_event(notification).call_id in wanted:
            positions.append(notification.id)
    return positions


def wait_until_ended(client: TestClient[Any], headers: dict[str, str], call_id: str, timeout: float = 5.0) -> dict[str, Any]:
    """Poll ``GET /v1/calls/{id}`` until the call is terminal (simulated calls take a fraction of a second)."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.get(f"/v1/calls/{call_id}", headers=headers)
        assert response.status_code == 200, response.text
        record = response.json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.02)


def problems(response: Any) -> list[dict[str, Any]]:
    """The ``detail`` list of a 422, checked against SPEC.md's validation error shape."""
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"detail"}, body
    for item in body["detail"]:
        assert set(item) == {"loc", "msg", "type", "input", "ctx"}, item
        assert isinstance(item["msg"], str) and item["msg"]
        assert isinstance(item["ctx"], dict)
    return body["detail"]


def only_problem(response: Any) -> dict[str, Any]:
    found = problems(response)
    assert len(found) == 1, found
    return found[0]


def error_code(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return body["error"]["code"]
