"""A call's history over HTTP (issue 17 item 1; docs/events.md "A call's history"):
``GET /v1/calls/{id}/events`` lists every stored event in the API's words, oldest first, paged by a
cursor, masked as the record is; ``GET /v1/calls/{id}?as_of=`` answers the record as it stood then."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from eventsourcing.application import project_aggregate

from application.calling.lifecycle import CallRead
from domain.accounts import scopes
from domain.calls.call import Call
from entrypoints.http.serializers import call_record_json
from tests.support.call_requests import LONDON, call_body, error_code, only_problem, problems, wait_until_ended
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

UNKNOWN = "cll_0123456789abcdef0123456789abcdef"
PIN = "4821"
KEYPAD_FLOW: dict[str, Any] = {
    "start": "pin",
    "nodes": [
        {"id": "pin", "type": "question", "text": "Please enter your 4 digit code.", "field": "pin",
         "field_type": "string", "keypad": {"ending_mode": "fixed_length", "length": 4}},
        {"id": "bye", "type": "end", "text": "Thank you."},
    ],
    "edges": [{"from": "pin", "to": "bye"}],
}


@pytest.fixture(scope="module")
def tenant(client, container) -> Account:
    return new_tenant(client, container)


def ended_call(client, tenant: Account, **overrides: Any) -> dict[str, Any]:
    created = client.post("/v1/calls", json=call_body(**overrides), headers=tenant.headers)
    assert created.status_code == 201, created.text
    return wait_until_ended(client, tenant.headers, created.json()["call_id"])


def history(client, tenant: Account, call_id: str, **params: Any) -> list[dict[str, Any]]:
    """Every event of the call, walked page by page through next_cursor."""
    events: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = client.get(f"/v1/calls/{call_id}/events", headers=tenant.headers,
                          params={**params, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200, page.text
        body = page.json()
        assert set(body) == {"data", "next_cursor"}
        events += body["data"]
        cursor = body["next_cursor"]
        if cursor is None:
            return events


@pytest.fixture(scope="module")
def completed(client, tenant) -> dict[str, Any]:
    record = ended_call(client, tenant)
    assert record["status"] == "completed", record
    return record


def test_the_events_of_a_completed_call_come_oldest_first_with_their_names(client, tenant, completed):
    events = history(client, tenant, completed["call_id"])

    assert [event["seq"] for event in events] == list(range(1, len(events) + 1))
    names = [event["type"] for event in events]
    assert names[0] == "call.queued" and names[-1] == "call.completed", names
    assert {"call.started", "call.answered", "call.turn", "call.ended", "call.outcome_extracted"} <= set(names)
    assert names.index("call.turn") < names.index("call.ended") < names.index("call.outcome_extracted")
    for event in events:
        assert set(event) == {"seq", "type", "at", "by", "data"}
        assert event["at"].endswith("Z") and datetime.fromisoformat(event["at"])
        assert not {"originator_id", "originator_version", "timestamp"} & set(event["data"])
    assert [event["at"] for event in events] == sorted(event["at"] for event in events)


def test_the_events_say_who_caused_them_and_carry_their_fields(client, tenant, completed):
    events = history(client, tenant, completed["call_id"])
    queued, finished = events[0], events[-1]

    assert queued["by"] == tenant.key_id and queued["data"]["created_by"] == tenant.key_id
    assert queued["data"]["call_id"] == completed["call_id"] and queued["data"]["to"] == LONDON
    assert queued["data"]["outcome_schema"] == completed["outcome_schema"]
    assert finished["by"] == "callwright"
    assert finished["data"]["cost_total"] == completed["cost_total"]  # money as the record shows it
    turns = [event["data"]["speaker"] + ": " + event["data"]["text"] for event in events if event["type"] == "call.turn"]
    assert "\n".join(turns) == completed["transcript"]


def test_pages_follow_the_cursor_without_gaps_or_repeats(client, tenant, completed):
    whole = history(client, tenant, completed["call_id"])
    first = client.get(f"/v1/calls/{completed['call_id']}/events", params={"limit": 2}, headers=tenant.headers).json()

    assert [event["seq"] for event in first["data"]] == [1, 2] and first["next_cursor"]
    assert history(client, tenant, completed["call_id"], limit=2) == whole
    assert history(client, tenant, completed["call_id"], limit=len(whole)) == whole


def test_a_cursor_of_another_call_or_a_made_up_one_is_a_422(client, tenant, completed):
    other = ended_call(client, tenant)
    cursor = client.get(f"/v1/calls/{other['call_id']}/events", params={"limit": 1},
                        headers=tenant.headers).json()["next_cursor"]
    for bad in (cursor, "bm90LWEtY3Vyc29y"):
        response = client.get(f"/v1/calls/{completed['call_id']}/events", params={"cursor": bad},
                              headers=tenant.headers)
        assert only_problem(response)["loc"] == ["query", "cursor"]


@pytest.mark.parametrize("limit", [0, 201])
def test_limit_lies_between_1_and_200(client, tenant, completed, limit):
    response = client.get(f"/v1/calls/{completed['call_id']}/events", params={"limit": limit}, headers=tenant.headers)
    assert problems(response)[0]["loc"] == ["query", "limit"]


def test_a_call_answered_by_a_machine_shows_machine_detected(client, tenant):
    record = ended_call(client, tenant, simulation={"answered_by": "machine_start"})
    assert record["error_code"] == "machine_detected", record

    events = history(client, tenant, record["call_id"])
    names = [event["type"] for event in events]
    assert "call.machine_detected" in names and "call.answered" not in names
    detected = events[names.index("call.machine_detected")]
    assert detected["data"]["answered_by"] == "machine_start"
    assert names[-1] == "call.failed" and events[-1]["data"]["error_code"] == "machine_detected"


def test_keypad_digits_never_appear_in_the_history(client, tenant):
    flow = client.post("/v1/flows", json={"name": "Pin", "graph_json": KEYPAD_FLOW}, headers=tenant.headers)
    assert flow.status_code == 201, flow.text
    published = client.post(f"/v1/flows/{flow.json()['id']}/publish", headers=tenant.headers)
    assert published.status_code in (200, 201), published.text
    created = client.post("/v1/calls", headers=tenant.headers, json={
        "to": LONDON, "flow_id": flow.json()["id"], "consent_type": "prior_express", "mode": "simulated",
        "simulation": {"facts": {"pin": PIN}, "at": "2026-12-01T10:00:00Z"}})
    assert created.status_code == 201, created.text
    record = wait_until_ended(client, tenant.headers, created.json()["call_id"], timeout=10)
    assert record["status"] == "completed" and record["outcome"] == {"pin": PIN}, record

    events = history(client, tenant, record["call_id"])
    keypad = [event for event in events if event["type"] == "call.keypad_collected"]
    assert [event["data"]["digits"] for event in keypad] == ["****"]
    spoken = [event for event in events if event["type"] in ("call.turn", "call.keypad_collected")]
    assert spoken and PIN not in json.dumps(spoken)
    assert "[keypad: ****]" in json.dumps(spoken)


def test_another_tenants_call_and_an_unknown_one_are_the_same_404(client, container, tenant, completed):
    stranger = new_tenant(client, container)
    for headers, call_id in ((stranger.headers, completed["call_id"]), (tenant.headers, UNKNOWN)):
        listed = client.get(f"/v1/calls/{call_id}/events", headers=headers)
        read = client.get(f"/v1/calls/{call_id}", headers=headers)
        assert (listed.status_code, read.status_code) == (404, 404)
        assert error_code(listed) == error_code(read) == "call_not_found"
        assert listed.json() == read.json()


def test_reading_the_history_needs_calls_read(client, tenant, completed):
    creator = scoped_key(client, tenant, [scopes.CALLS_CREATE])
    reader = scoped_key(client, tenant, [scopes.CALLS_READ])

    refused = client.get(f"/v1/calls/{completed['call_id']}/events", headers=creator)
    assert refused.status_code == 403 and error_code(refused) == "insufficient_scope"
    assert client.get(f"/v1/calls/{completed['call_id']}/events", headers=reader).status_code == 200


def test_as_of_now_is_the_record_itself(client, tenant, completed):
    now = datetime.now(timezone.utc).isoformat()
    response = client.get(f"/v1/calls/{completed['call_id']}", params={"as_of": now}, headers=tenant.headers)
    assert response.status_code == 200, response.text
    assert response.json() == client.get(f"/v1/calls/{completed['call_id']}", headers=tenant.headers).json()


def test_as_of_each_event_shows_the_call_as_it_stood_then(client, tenant, completed):
    events = history(client, tenant, completed["call_id"])

    def as_of(at: str) -> dict[str, Any]:
        response = client.get(f"/v1/calls/{completed['call_id']}", params={"as_of": at}, headers=tenant.headers)
        assert response.status_code == 200, response.text
        return response.json()

    queued = as_of(events[0]["at"])
    assert (queued["status"], queued["transcript"], queued["started_at"]) == ("queued", "", None)
    ended = events[[event["type"] for event in events].index("call.ended")]
    before_outcome = as_of(ended["at"])
    assert before_outcome["status"] == "in_progress" and before_outcome["transcript"] == completed["transcript"]
    assert as_of(events[-1]["at"]) == completed


def test_as_of_the_instants_the_record_and_its_history_show(client, container, tenant):
    """SPEC.md Call: ``created_at`` is the instant the call was queued. The record shows the
    instant its ``Queued`` event is stored at, so ``as_of=created_at`` (and a millisecond later)
    answers the queued record, a microsecond before it the 404 of a call not yet made; and
    ``as_of`` equal to any event's ``at`` answers the record right after that event."""
    created = client.post("/v1/calls", json=call_body(), headers=tenant.headers)
    assert created.status_code == 201, created.text
    call_id = created.json()["call_id"]
    created_at = datetime.fromisoformat(
        client.get(f"/v1/calls/{call_id}", headers=tenant.headers).json()["created_at"])

    def as_of(moment: datetime) -> Any:
        return client.get(f"/v1/calls/{call_id}", params={"as_of": moment.isoformat()}, headers=tenant.headers)

    for moment in (created_at, created_at + timedelta(milliseconds=1)):
        queued = as_of(moment)
        assert queued.status_code == 200, (moment, queued.text)
        assert (queued.json()["status"], queued.json()["created_at"]) == (
            "queued", created_at.isoformat().replace("+00:00", "Z"))
    early = as_of(created_at - timedelta(microseconds=1))
    assert early.status_code == 404 and error_code(early) == "call_not_found"

    record = wait_until_ended(client, tenant.headers, call_id)
    events = history(client, tenant, call_id)
    assert events[0]["at"] == record["created_at"]  # one instant: the record's and its first event's
    stored = [container.calling.mapper.to_domain_event(item)
              for item in container.calling.recorder.select_events(Call.create_id(call_id))]
    for event in events:
        # The record after this event (and after any other event stored at the very same instant).
        last = max(e["seq"] for e in events if e["at"] == event["at"])
        expected = project_aggregate(None, [e for e in stored if e.originator_version <= last])
        answered = as_of(datetime.fromisoformat(event["at"]))
        assert answered.status_code == 200, (event, answered.text)
        assert answered.json() == json.loads(call_record_json(CallRead(expected))), event
    assert as_of(datetime.fromisoformat(events[-1]["at"])).json() == record


def test_as_of_before_the_call_was_created_is_a_404(client, tenant, completed):
    response = client.get(f"/v1/calls/{completed['call_id']}", params={"as_of": "2000-01-01T00:00:00Z"},
                          headers=tenant.headers)
    assert response.status_code == 404 and error_code(response) == "call_not_found"


def test_as_of_of_another_tenants_call_is_the_same_404(client, container, completed):
    stranger = new_tenant(client, container)
    now = datetime.now(timezone.utc).isoformat()
    response = client.get(f"/v1/calls/{completed['call_id']}", params={"as_of": now}, headers=stranger.headers)
    assert response.status_code == 404 and error_code(response) == "call_not_found"


def test_as_of_without_a_time_zone_is_a_422(client, tenant, completed):
    response = client.get(f"/v1/calls/{completed['call_id']}", params={"as_of": "2026-11-02T12:00:00"},
                          headers=tenant.headers)
    problem = only_problem(response)
    assert (problem["loc"], problem["type"]) == (["query", "as_of"], "timezone_aware")


def test_the_openapi_document_types_the_history(client):
    document = client.get("/schema/openapi.json").json()
    events = document["paths"]["/v1/calls/{call_id}/events"]["get"]
    schema = events["responses"]["200"]["content"]["application/json"]["schema"]
    page = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    assert set(page["properties"]) == {"data", "next_cursor"}
    view = document["components"]["schemas"][page["properties"]["data"]["items"]["$ref"].rsplit("/", 1)[1]]
    assert set(view["properties"]) == {"seq", "type", "at", "by", "data"}
    read = document["paths"]["/v1/calls/{call_id}"]["get"]
    assert "as_of" in {parameter["name"] for parameter in read["parameters"]}
