"""``/v1/analytics/*`` over HTTP (issue 16; SPEC.md Analytics, Versioning §2): calls the service ran
are in the reports, JSON and CSV agree, ``compare=prior`` wraps the answer and nothing else does,
``calls:read`` is required, a tenant sees only its calls, and bad windows get a 422 naming every
problem. The figures themselves are checked in tests/integration/test_analytics_reports.py.
"""

from __future__ import annotations

import csv
import io
import time
from typing import Any

import pytest

from domain.accounts import scopes
from tests.support.call_requests import call_body, error_code, problems
from tests.support.setup import Account, new_tenant, scoped_key
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

REPORTS = ("volume-by-status", "latency-percentiles", "cost-breakdown", "top-failures", "outcome-quality")
END = "2026-11-03T00:00:00Z"  # the FakeClock's day is 2026-11-02: its calls are in [END - 7 days, END)


@pytest.fixture(scope="module")
def tenant(client, container) -> Account:
    tenant = new_tenant(client, container)
    ids = [client.post("/v1/calls", json=call_body(**extra), headers=tenant.headers).json()["call_id"]
           for extra in ({}, {}, {"simulation": {"facts": {"confirmed": True}, "answered_by": "machine_start"}})]
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        records = [client.get(f"/v1/calls/{i}", headers=tenant.headers).json() for i in ids]
        if all(r["status"] in ("completed", "failed") for r in records):
            break
        time.sleep(0.02)
    return tenant


def get(client, tenant: Account, path: str, **params: Any) -> Any:
    return client.get(f"/v1/analytics/{path}", params={"end": END, **params}, headers=tenant.headers)


def test_the_services_calls_are_in_the_volume_report(client, tenant):
    body = get(client, tenant, "volume-by-status").json()
    assert (body["report"], body["start"], body["end"], body["interval"]) == (
        "volume-by-status", "2026-10-27T00:00:00Z", END, "day")
    assert len(body["data"]) == 7 * 2  # 7 days by 2 statuses, zeros included
    last = {row["status"]: row["calls"] for row in body["data"] if row["bucket"] == "2026-11-02T00:00:00Z"}
    assert last == {"completed": 2, "failed": 1}


def test_every_report_answers_with_its_rows_and_failures_name_the_error(client, tenant):
    for report in REPORTS:
        response = get(client, tenant, report)
        assert response.status_code == 200, response.text
        assert set(response.json()) == {"report", "start", "end", "interval", "group_by", "filters", "data"}
    failures = get(client, tenant, "top-failures").json()["data"]
    assert failures == [{"error_code": "machine_detected", "failures": 1, "calls": 3, "share_pct": 33.33}]
    (quality,) = get(client, tenant, "outcome-quality").json()["data"]
    assert (quality["calls"], quality["completed"], quality["confidence_calls"]) == (3, 2, 2)


def test_compare_prior_wraps_the_answer_and_mirrors_it(client, tenant):
    plain = get(client, tenant, "cost-breakdown", group_by="voice_engine").json()
    body = get(client, tenant, "cost-breakdown", group_by="voice_engine", compare="prior").json()
    assert set(body) == {"current", "prior", "delta_pct"} and body["current"] == plain
    assert (body["prior"]["start"], body["prior"]["end"]) == ("2026-10-20T00:00:00Z", "2026-10-27T00:00:00Z")
    assert all(row["calls"] == 0 for row in body["prior"]["data"])
    assert all(value is None for row in body["delta_pct"]["data"] for name, value in row.items() if name != "voice_engine")


@pytest.mark.parametrize("report", REPORTS)
def test_the_csv_streams_the_same_rows(client, tenant, report):
    response = get(client, tenant, f"{report}.csv", compare="prior")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert response.headers["content-disposition"] == f'attachment; filename="{report}.csv"'
    rows = list(csv.DictReader(io.StringIO(response.text)))
    data = get(client, tenant, report).json()["data"]
    assert len(rows) == len(data)
    if rows:
        assert all(f"prior_{name}" in rows[0] and f"delta_pct_{name}" in rows[0] for name in ("calls",)
                   if "calls" in data[0])


def test_another_tenant_sees_none_of_these_calls(client, container):
    stranger = new_tenant(client, container)
    body = get(client, stranger, "volume-by-status").json()
    assert all(row["calls"] == 0 for row in body["data"])


def test_without_calls_read_the_reports_are_refused(client, tenant):
    headers = scoped_key(client, tenant, [scopes.CALLS_CREATE])
    for path in ("volume-by-status", "outcome-quality.csv"):
        response = client.get(f"/v1/analytics/{path}", headers=headers)
        assert response.status_code == 403 and error_code(response) == "insufficient_scope"
    reader = scoped_key(client, tenant, [scopes.CALLS_READ])
    assert client.get("/v1/analytics/top-failures", headers=reader).status_code == 200


def test_the_default_window_is_the_last_seven_days(client, tenant):
    body = client.get("/v1/analytics/cost-breakdown", headers=tenant.headers).json()
    assert (body["start"], body["end"], body["interval"]) == ("2026-10-26T12:00:00Z", "2026-11-02T12:00:00Z", None)


@pytest.mark.parametrize(("params", "expected"), [
    ({"start": "2026-11-03T00:00:00Z"}, [(["query", "start"], "window_empty")]),
    ({"start": "2025-09-01T00:00:00Z"}, [(["query", "start"], "window_too_long")]),
    ({"start": "2026-09-01T00:00:00Z", "interval": "hour"}, [(["query", "interval"], "too_many_buckets")]),
    ({"start": "2026-11-01T00:00:00"}, [(["query", "start"], "timezone_missing")]),
    ({"start": "2024-01-01T00:00:00Z", "group_by": "status"},
     [(["query", "start"], "window_too_long"), (["query", "group_by"], "group_by_not_supported")]),
])
def test_a_bad_window_or_grouping_is_a_422_naming_every_problem(client, tenant, params, expected):
    found = problems(get(client, tenant, "volume-by-status", **params))
    assert [(p["loc"], p["type"]) for p in found] == expected


def test_top_failures_takes_no_group_by_and_unknown_values_are_refused(client, tenant):
    assert problems(get(client, tenant, "top-failures", group_by="mode"))[0]["type"] == "group_by_not_supported"
    assert get(client, tenant, "volume-by-status", interval="month").status_code == 422
    assert get(client, tenant, "volume-by-status", group_by="objective").status_code == 422
    assert get(client, tenant, "volume-by-status", compare="next").status_code == 422


def test_the_openapi_document_types_every_report(client):
    paths = client.get("/schema/openapi.json").json()["paths"]
    for report in REPORTS:
        operation = paths[f"/v1/analytics/{report}"]["get"]
        assert {"200", "403", "422", "503"} <= set(operation["responses"])
        schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert len(schema["oneOf"]) == 2  # the report, or {current, prior, delta_pct}
        names = {p["name"] for p in operation["parameters"]}
        assert {"start", "end", "interval", "group_by", "compare", "direction", "mode", "voice_engine",
                "number_id"} <= names
        assert "text/csv" in paths[f"/v1/analytics/{report}.csv"]["get"]["responses"]["200"]["content"]
