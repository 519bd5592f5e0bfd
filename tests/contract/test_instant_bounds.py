"""Instants at the ends of the calendar: ``GET /v1/calls``'s ``start`` and ``end``, ``simulation.at``
and a suppression's ``expires_at``. One whose conversion to UTC (or to the callee's zone) or whose
month/day buckets would overflow is a 422 naming it, with the allowed range in ctx; never a 500."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from entrypoints.bootstrap import Container
from domain.instants import in_range
from projections.calls_list.filters import CallFilters
from projections.calls_list.totals import total_query
from tests.support.call_requests import call_body
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

ZONES = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-14 * 60, 14 * 60))
AWARE = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
                     timezones=ZONES)


@pytest.fixture(scope="module")
def tenant(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


@pytest.mark.parametrize("name", ["start", "end"])
@pytest.mark.parametrize("value", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00",
                                   "9999-12-15T00:00:00Z", "0001-01-01T12:00:00Z"])
def test_an_instant_past_the_calendar_is_422_with_the_allowed_range(client, tenant, name, value):
    response = client.get("/v1/calls", params={name: value}, headers=tenant.headers)
    assert response.status_code == 422, response.text
    (problem,) = response.json()["detail"]
    assert problem["loc"] == ["query", name]
    assert problem["type"] == "datetime_out_of_range"
    assert problem["ctx"] == {"ge": "0001-01-02T00:00:00Z", "lt": "9999-12-01T00:00:00Z"}


@pytest.mark.parametrize("value", ["0001-01-02T00:00:00Z", "0001-01-01T12:00:00-14:00", "9999-11-30T23:59:59Z"])
def test_instants_at_the_edges_of_the_range_are_listed(client, tenant, value):
    for name in ("start", "end"):
        assert client.get("/v1/calls", params={name: value}, headers=tenant.headers).status_code == 200


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.none() | AWARE, end=st.none() | AWARE)
def test_no_aware_instant_is_ever_a_500(client, tenant, start, end):
    params = {name: value.isoformat() for name, value in (("start", start), ("end", end)) if value is not None}
    response = client.get("/v1/calls", params=params, headers=tenant.headers)
    assert response.status_code in (200, 422), response.text


@hypothesis_settings(max_examples=500, deadline=None)
@given(start=st.none() | AWARE, end=st.none() | AWARE)
def test_the_total_of_every_accepted_range_is_computed_without_overflow(start, end):
    if all(moment is None or in_range(moment) for moment in (start, end)):
        total_query("tenant", CallFilters(start=start, end=end))


@pytest.mark.parametrize("value", ["9999-12-31T23:59:59.999999-14:00", "0001-01-01T00:00:00+14:00",
                                   "9999-12-31T23:00:00Z"])
def test_a_body_instant_past_the_calendar_is_422_with_the_allowed_range(client, tenant, value):
    call = client.post("/v1/calls", json=call_body(simulation={"at": value}), headers=tenant.headers)
    suppression = client.post("/v1/suppressions", json={"e164": "+442071838751", "expires_at": value},
                              headers=tenant.headers)

    for response, loc in ((call, ["body", "simulation", "at"]), (suppression, ["body", "expires_at"])):
        assert response.status_code == 422, response.text
        assert [(p["loc"], p["type"], p["ctx"]) for p in response.json()["detail"]] == [
            (loc, "datetime_out_of_range", {"ge": "0001-01-02T00:00:00Z", "lt": "9999-12-01T00:00:00Z"})]


@hypothesis_settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=AWARE)
def test_no_simulation_instant_is_ever_a_500(client, tenant, at):
    response = client.post("/v1/calls", json=call_body(simulation={"at": at.isoformat()}), headers=tenant.headers)
    assert response.status_code in (201, 422), response.text
