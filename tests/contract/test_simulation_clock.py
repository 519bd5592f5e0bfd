"""``simulation.at``: a simulated call takes place at a chosen instant, so a test call shows what a
live call would do at that hour (SPEC.md call hours, 08:00-21:00 in the callee's local time). The
rules stay the same; only the instant they are judged at moves. The FakeClock starts at 12:00 UTC:
07:00 in New York, outside call hours."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import TestClient

from entrypoints.bootstrap import Container
from tests.support.call_requests import LONDON, NEW_YORK, batch_body, call_body, only_problem, wait_until_ended
from tests.support.setup import Account, new_tenant
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

TEN_AM_NEW_YORK = "2026-11-02T15:00:00Z"
THREE_AM_LONDON = "2026-11-03T03:00:00Z"


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    return new_tenant(client, container)


def create(client: TestClient[Any], account: Account, body: dict[str, Any]) -> Any:
    return client.post("/v1/calls", json=body, headers=account.headers)


def test_a_simulated_call_outside_call_hours_is_refused_and_told_about_simulation_at(client, account):
    problem = only_problem(create(client, account, call_body(to=NEW_YORK)))

    assert (problem["type"], problem["loc"]) == ("outside_call_hours", ["body", "to"])
    assert "simulation.at" in problem["msg"] and "2026-11-02T13:00:00Z" in problem["msg"]  # 08:00 in New York


def test_a_live_call_outside_call_hours_is_not_told_about_simulation_at(client, account):
    problem = only_problem(create(client, account, call_body(to=NEW_YORK, mode="live", simulation=None)))

    assert problem["type"] in ("outside_call_hours", "carrier_not_configured")
    assert "simulation.at" not in problem["msg"]


def test_a_simulated_call_at_an_hour_inside_call_hours_runs_to_its_outcome(client, account):
    created = create(client, account, call_body(to=NEW_YORK, simulation={"facts": {"confirmed": True},
                                                                         "at": TEN_AM_NEW_YORK}))
    assert created.status_code == 201, created.text

    record = wait_until_ended(client, account.headers, created.json()["call_id"])

    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": True})


def test_simulation_at_outside_call_hours_is_refused_like_a_live_call_then(client, account):
    problem = only_problem(create(client, account, call_body(to=LONDON, simulation={"facts": {"confirmed": True},
                                                                                     "at": THREE_AM_LONDON})))

    assert problem["type"] == "outside_call_hours" and "03:00 in Europe/London" in problem["msg"]


def test_suppressions_are_judged_at_simulation_at(client, account):
    number = "+442079460077"
    added = client.post("/v1/suppressions", headers=account.headers,
                        json={"e164": number, "expires_at": "2026-11-02T18:00:00Z"})
    assert added.status_code == 201, added.text

    before = create(client, account, call_body(to=number, simulation={"at": "2026-11-02T17:00:00Z"}))
    after = create(client, account, call_body(to=number, simulation={"at": "2026-11-02T19:00:00Z"}))

    assert only_problem(before)["type"] == "suppressed"
    assert after.status_code == 201, after.text


def test_a_batch_shares_its_simulation_at(client, account):
    answer = client.post("/v1/calls/batch", headers=account.headers, json=batch_body(
        [{"to": NEW_YORK}], simulation={"facts": {"confirmed": True}, "at": TEN_AM_NEW_YORK}))

    assert answer.status_code == 207, answer.text
    assert answer.json()["accepted"] == 1


@pytest.mark.parametrize("body,loc", [
    (call_body(mode="live", simulation={"at": TEN_AM_NEW_YORK}), ["body", "simulation"]),
    (call_body(simulation={"at": "2026-11-02T15:00:00"}), ["body", "simulation", "at"]),
    (call_body(simulation={"at": "tomorrow"}), ["body", "simulation", "at"]),
])
def test_simulation_at_must_be_an_instant_with_a_zone_on_a_simulated_call(client, account, body, loc):
    problem = only_problem(create(client, account, body))

    assert problem["loc"] == loc


@pytest.mark.parametrize("clock_at", ["2026-11-02T12:00:00+00:00", "2026-11-03T02:30:00+00:00"])
def test_the_readme_example_gives_the_same_call_inside_and_outside_call_hours(pg_server, tmp_path, clock_at):
    """README "A simulated call": the example takes place at its own ``simulation.at``, so it gives
    the same outcome at noon and at 02:30 in London (outside call hours)."""
    from datetime import datetime

    from tests.fakes.clock import FakeClock
    from tests.support.readme import first_call_body
    from tests.support.shared_app import shared_app

    with shared_app(pg_server, tmp_path / "var", clock=FakeClock(datetime.fromisoformat(clock_at))) as (http, built):
        account = new_tenant(http, built)
        created = create(http, account, first_call_body())
        assert created.status_code == 201, created.text
        record = wait_until_ended(http, account.headers, created.json()["call_id"])

    assert record["status"] == "completed", record
    assert record["outcome"] == {"confirmed": True, "callback_at": "2026-12-01T14:30:00Z", "channel": "email"}
