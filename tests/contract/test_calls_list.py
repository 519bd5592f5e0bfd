"""SPEC.md Calls: ``GET /v1/calls`` (filters, sorts, paging, server cap) and
``GET /v1/calls/export.csv`` (columns in order, streamed CSV, formula-safe cells) over HTTP."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from litestar.testing import TestClient

from entrypoints.bootstrap import Container
from tests.support.call_requests import LONDON, LONDON_2, LONDON_3, call_body, wait_until_ended
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

CSV_COLUMNS = ["call_id", "created_at", "to", "from", "objective", "status", "confidence", "duration_seconds",
               "cost_total", "error_code", "recording_url"]


@pytest.fixture(scope="module")
def tenant(client: TestClient[Any], container: Container) -> Account:
    made = new_tenant(client, container)
    # A/B routing off: every call gets the default engine alpha_25, which the voice_engine filter below expects
    pinned = client.patch("/v1/tenants/me", json={"voice_ab_disabled": True}, headers=made.headers)
    assert pinned.status_code == 200, pinned.text
    return made


@pytest.fixture(scope="module")
def calls(client: TestClient[Any], tenant: Account) -> dict[str, str]:
    """Three ended calls: one completed (confidence 1.0), one failed by a machine, one with an objective
    that looks like a spreadsheet formula."""
    made = {
        "completed": client.post("/v1/calls", json=call_body(to=LONDON), headers=tenant.headers).json()["call_id"],
        "machine": client.post("/v1/calls", json=call_body(
            to=LONDON_2, simulation={"answered_by": "machine_start"}), headers=tenant.headers).json()["call_id"],
        "formula": client.post("/v1/calls", json=call_body(
            to=LONDON_3, objective="=HYPERLINK(\"http://x\",\"y\")"), headers=tenant.headers).json()["call_id"],
    }
    for call_id in made.values():
        wait_until_ended(client, tenant.headers, call_id)
    return made


def listed(client: TestClient[Any], tenant: Account, **params: Any) -> dict[str, Any]:
    response = client.get("/v1/calls", params=params, headers=tenant.headers)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_call_is_listed_right_after_it_is_created(client, container):
    """Read-your-writes: the list waits (bounded) for the projection to reach the create."""
    fresh = new_tenant(client, container)
    call_id = client.post("/v1/calls", json=call_body(), headers=fresh.headers).json()["call_id"]
    page = listed(client, fresh)
    assert [row["call_id"] for row in page["data"]] == [call_id]
    assert set(page) == {"data", "next_cursor", "total", "limit", "offset"} and page["total"] == 1
    assert page["next_cursor"] is None


def test_list_rows_carry_the_spec_fields(client, tenant, calls):
    row = next(r for r in listed(client, tenant)["data"] if r["call_id"] == calls["completed"])
    for field in ("call_id", "status", "to", "from", "objective", "confidence", "duration_seconds", "cost_total",
                  "error_code", "recording_url", "created_at", "mode", "direction", "voice_engine"):
        assert field in row
    assert row["status"] == "completed" and row["to"] == LONDON and row["confidence"] == 1.0
    assert row["created_at"].endswith("Z")


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status": "completed"}, {"completed", "formula"}),
        ({"status": "failed"}, {"machine"}),
        ({"has_outcome": "true"}, {"completed", "formula"}),
        ({"has_outcome": "false"}, {"machine"}),
        ({"to_prefix": LONDON_2[:-2]}, {"machine"}),
        ({"min_confidence": "0.5"}, {"completed", "formula"}),
        ({"mode": "simulated", "direction": "outbound", "voice_engine": "alpha_25"}, {"completed", "machine", "formula"}),
        ({"start": "2026-11-02T12:00:00Z", "end": "2026-11-02T12:00:01Z"}, {"completed", "machine", "formula"}),
        ({"end": "2026-11-02T12:00:00Z"}, set()),
    ],
)
def test_filters_select_the_calls(client, tenant, calls, params, expected):
    page = listed(client, tenant, **params)
    names = {name for name, call_id in calls.items() if call_id in {row["call_id"] for row in page["data"]}}
    assert names == expected and page["total"] == len(expected)


def test_sort_duration_desc_puts_the_longest_call_first(client, tenant, calls):
    rows = listed(client, tenant, sort="duration_desc")["data"]
    durations = [row["duration_seconds"] for row in rows if row["duration_seconds"] is not None]
    assert durations == sorted(durations, reverse=True)


def test_paging_and_the_server_cap(client, tenant, calls):
    first = listed(client, tenant, limit=1, offset=0)
    second = listed(client, tenant, limit=1, offset=1)
    assert first["total"] == second["total"] == 3
    assert first["data"][0]["call_id"] != second["data"][0]["call_id"]
    assert listed(client, tenant)["limit"] == 25  # SPEC.md Limits: default 25
    assert listed(client, tenant, limit=1000)["limit"] == 200  # a server cap of 200 rows


@pytest.mark.parametrize(
    ("query", "loc"),
    [("limit=0", "limit"), ("offset=-1", "offset"), ("status=done", "status"), ("sort=sideways", "sort"),
     ("min_confidence=2", "min_confidence"), ("start=2026-11-02T12:00:00", "start"), ("to_prefix=abc", "to_prefix")],
)
def test_bad_query_values_are_422_naming_the_parameter(client, tenant, query, loc):
    response = client.get(f"/v1/calls?{query}", headers=tenant.headers)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["query", loc]


def test_tenants_see_only_their_calls(client, container, tenant, calls):
    other = new_tenant(client, container)
    assert listed(client, other)["total"] == 0


def test_export_is_csv_with_the_spec_columns_in_order(client, tenant, calls):
    response = client.get("/v1/calls/export.csv", headers=tenant.headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == CSV_COLUMNS
    by_id = {row[0]: dict(zip(CSV_COLUMNS, row)) for row in rows[1:]}
    assert set(by_id) == set(calls.values())
    assert by_id[calls["completed"]]["to"] == LONDON  # a validated + number is written as it is
    assert by_id[calls["formula"]]["objective"] == "'=HYPERLINK(\"http://x\",\"y\")"  # defused
    assert by_id[calls["machine"]]["error_code"] == "machine_detected"


def test_export_honours_status_and_limit(client, tenant, calls):
    failed = list(csv.reader(io.StringIO(client.get("/v1/calls/export.csv", params={"status": "failed"},
                                                    headers=tenant.headers).text)))
    assert [row[0] for row in failed[1:]] == [calls["machine"]]
    one = list(csv.reader(io.StringIO(client.get("/v1/calls/export.csv", params={"limit": 1},
                                                 headers=tenant.headers).text)))
    assert len(one) == 2


def test_export_with_include_outcome_appends_one_column_per_outcome_field(client, tenant, calls):
    response = client.get("/v1/calls/export.csv", params={"include": "outcome"}, headers=tenant.headers)
    assert response.status_code == 200, response.text
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == [*CSV_COLUMNS, "outcome.confirmed"]  # the union of the exported calls' fields, sorted
    by_id = {row[0]: dict(zip(rows[0], row)) for row in rows[1:]}
    assert by_id[calls["completed"]]["outcome.confirmed"] == "true"
    assert by_id[calls["machine"]]["outcome.confirmed"] == ""  # a failed call has no outcome


def test_export_without_include_keeps_exactly_the_spec_columns_and_refuses_unknown_includes(client, tenant, calls):
    plain = list(csv.reader(io.StringIO(client.get("/v1/calls/export.csv", headers=tenant.headers).text)))
    assert plain[0] == CSV_COLUMNS and all(len(row) == len(CSV_COLUMNS) for row in plain)
    refused = client.get("/v1/calls/export.csv", params={"include": "transcript"}, headers=tenant.headers)
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["query", "include"]


def test_list_and_export_need_calls_read(client, tenant):
    headers = scoped_key(client, tenant, ["calls:create"])
    for path in ("/v1/calls", "/v1/calls/export.csv"):
        response = client.get(path, headers=headers)
        assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
