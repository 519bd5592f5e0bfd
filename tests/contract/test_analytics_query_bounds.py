"""``/v1/analytics/*`` query parameters the schemathesis run answered 500 to, now 422s.

- At the ends of the calendar: an ``end`` near year 1 overflowed the default 7-day window, and
  ``compare=prior`` the window before ``start``. An instant outside the range the calls list allows
  is a 422 naming it with the range in ctx; a default window near the first instant is shorter; a
  prior window that would begin before it is a 422 on ``compare``.
- A ``number_id`` with a NUL reached PostgreSQL (which refuses it in text): it takes an id's
  characters only.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st

from tests.support.call_requests import problems
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

RANGE = {"ge": "0001-01-02T00:00:00Z", "lt": "9999-12-01T00:00:00Z"}
ZONES = st.builds(lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-14 * 60, 14 * 60))
AWARE = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
                     timezones=ZONES)


@pytest.fixture(scope="module")
def tenant(client, container) -> Account:
    return new_tenant(client, container)


def report(client, tenant: Account, name: str = "volume-by-status", **params: Any) -> Any:
    return client.get(f"/v1/analytics/{name}", params=params, headers=tenant.headers)


@pytest.mark.parametrize("name", ["start", "end"])
@pytest.mark.parametrize("value", ["0001-01-01T12:00:00Z", "9999-12-15T00:00:00Z", "9999-12-31T23:59:59-14:00"])
def test_an_instant_past_the_calendar_is_a_422_with_the_allowed_range(client, tenant, name, value):
    (problem,) = problems(report(client, tenant, **{name: value}))
    assert (problem["loc"], problem["type"], problem["ctx"]) == (["query", name], "datetime_out_of_range", RANGE)


@pytest.mark.parametrize("path", ["volume-by-status", "volume-by-status.csv", "cost-breakdown"])
def test_a_default_window_near_the_first_instant_is_shorter_not_a_500(client, tenant, path):
    response = report(client, tenant, path, end="0001-01-03T01:05:03Z")
    assert response.status_code == 200, response.text
    if not path.endswith(".csv"):
        assert (response.json()["start"], response.json()["end"]) == ("0001-01-02T00:00:00Z", "0001-01-03T01:05:03Z")


def test_a_prior_window_before_the_first_instant_is_a_422_on_compare(client, tenant):
    (problem,) = problems(report(client, tenant, start="0001-01-03T00:00:00Z", end="0001-02-01T00:00:00Z",
                                 compare="prior"))
    assert (problem["loc"], problem["type"], problem["ctx"]) == (["query", "compare"], "datetime_out_of_range", RANGE)
    fits = report(client, tenant, start="0001-02-01T00:00:00Z", end="0001-02-08T00:00:00Z", compare="prior")
    assert fits.status_code == 200, fits.text
    assert fits.json()["prior"]["start"] == "0001-01-25T00:00:00Z"


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.none() | AWARE, end=st.none() | AWARE, compare=st.sampled_from([None, "prior"]),
       interval=st.sampled_from([None, "hour", "week"]))
def test_no_aware_instant_is_ever_a_500(client, tenant, start, end, compare, interval):
    params = {name: value.isoformat() for name, value in (("start", start), ("end", end)) if value is not None}
    params.update({name: value for name, value in (("compare", compare), ("interval", interval)) if value})
    response = report(client, tenant, **params)
    assert response.status_code in (200, 422), response.text


@pytest.mark.parametrize("path", ["top-failures.csv", "cost-breakdown"])
@pytest.mark.parametrize("number_id", ["x\x00y", "\u00e1\u00c7", "a b", "a" * 65])
def test_a_number_id_with_other_than_an_ids_characters_is_a_422(client, tenant, path, number_id):
    (problem,) = problems(report(client, tenant, path, number_id=number_id))
    assert problem["loc"] == ["query", "number_id"]


def test_a_number_id_filter_answers(client, tenant):
    response = report(client, tenant, "cost-breakdown", number_id="0b6c1f5e-4d8a-4f0e-9a55-1c2d3e4f5a6b")
    assert response.status_code == 200, response.text
    assert response.json()["filters"] == {"number_id": "0b6c1f5e-4d8a-4f0e-9a55-1c2d3e4f5a6b"}
