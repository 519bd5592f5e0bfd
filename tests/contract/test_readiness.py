"""``/readyz``: lag as time, "degraded" apart from "not ready", and an answer within a second
whatever the database does (issue 13, items 1 and 4)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest
from eventsourcing.domain import Aggregate
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.readiness import ReadinessProbe
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures

FOLLOWERS = {"audit_events_v1", "api_keys_v1", "calls_list_v1", "suppressions_v1", "call_runner"}


class Marker(Aggregate):
    """An event no follower handles: it only moves the log's head."""


def add_events(container, count: int) -> int:
    return container.accounts.commit(*[Marker() for _ in range(count)])


@pytest.fixture
def stopped(client, container) -> Iterator[SimpleNamespace]:
    """A follower of the accounts log that does not move (as one stopped or stuck would)."""
    follower = SimpleNamespace(app=container.accounts, position=add_events(container, 1), error=None,
                               name="stopped", poke=lambda *args, **kwargs: None)
    container.reactors["stopped"] = follower
    services = client.app.state.services
    try:
        yield follower
    finally:
        del container.reactors["stopped"]
        client.app.state.services = services


def test_readyz_reports_the_database_and_every_follower(client):
    response = client.get("/readyz")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready"
    assert body["max_lag_seconds"] == 30.0
    assert body["checks"]["database"] == "ok"
    followers = body["checks"]["followers"]
    assert FOLLOWERS <= set(followers)
    for check in followers.values():
        assert isinstance(check["behind_events"], int) and check["behind_events"] >= 0
        assert isinstance(check["lag_seconds"], int | float) and 0 <= check["lag_seconds"] < 30
        assert check["error"] is None


def test_a_follower_far_behind_in_events_but_young_in_time_is_ready(client, container, stopped):
    add_events(container, 1500)

    response = client.get("/readyz")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready"
    check = body["checks"]["followers"]["stopped"]
    assert check["behind_events"] >= 1500
    assert 0 <= check["lag_seconds"] < 30
    assert check["oldest_unprocessed_at"].endswith("Z")


def test_a_follower_behind_by_more_than_the_threshold_in_seconds_is_degraded_and_still_200(client, container,
                                                                                            stopped):
    add_events(container, 3)
    later = datetime.now(timezone.utc) + timedelta(seconds=120)
    probing(client, wall_clock=lambda: later)

    response = client.get("/readyz")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["database"] == "ok"
    check = body["checks"]["followers"]["stopped"]
    assert check["behind_events"] >= 3
    assert check["lag_seconds"] >= 110
    assert check["error"] is None


def test_a_failing_follower_is_degraded_not_pulled(client, stopped):
    stopped.position = stopped.app.head()
    stopped.error = RuntimeError("boom")

    response = client.get("/readyz")

    assert response.status_code == 200, response.text
    assert response.json()["status"] == "degraded"
    assert response.json()["checks"]["followers"]["stopped"]["error"] == "RuntimeError"


class Hanging:
    """A database check that never ends (a database that accepted the connection and went quiet)."""

    async def snapshot(self, positions: Any) -> Any:
        await asyncio.sleep(30)


def answer_in_time(client) -> tuple[float, Any]:
    started = time.monotonic()
    response = client.get("/readyz")
    return time.monotonic() - started, response


def probing(client, **changes: Any) -> Any:
    """The app's services with /readyz's ``changes`` (its database check, its clock); the services before."""
    services = client.app.state.services
    client.app.state.services = replace(services, readiness=replace(services.readiness, **changes))
    return services


def test_a_database_that_does_not_answer_is_not_ready_within_a_second(client, container):
    services = probing(client, probe=Hanging())
    try:
        elapsed, response = answer_in_time(client)
    finally:
        client.app.state.services = services

    assert elapsed < 1.0
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["status"] == "not_ready"
    assert body["checks"]["database"] == "timeout"
    assert FOLLOWERS <= set(body["checks"]["followers"])
    assert all(check["lag_seconds"] is None for check in body["checks"]["followers"].values())


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that takes connections and never says a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again once the socket is


@pytest.mark.parametrize("port_fixture", ["closed_port", "silent_port"])
def test_an_unreachable_database_is_not_ready_within_a_second(request, client, container, port_fixture):
    port = request.getfixturevalue(port_fixture)
    conninfo = f"host=127.0.0.1 port={port} dbname=nowhere user=nobody connect_timeout=5"

    async def open_pool() -> AsyncConnectionPool:
        pool = AsyncConnectionPool(conninfo, min_size=1, max_size=2, open=False)
        await pool.open(wait=False)
        return pool

    pool = client.blocking_portal.call(open_pool)
    services = probing(client, probe=ReadinessProbe(pool, schema="public", tables={"Accounts": "accounts_events"}))
    try:
        elapsed, response = answer_in_time(client)
    finally:
        client.app.state.services = services
        client.blocking_portal.call(pool.close, 1.0)

    assert elapsed < 1.0
    assert response.status_code == 503, response.text
    assert response.json()["status"] == "not_ready"
    assert response.json()["checks"]["database"] in {"timeout", "unavailable"}


def test_readyz_is_typed_in_openapi_with_its_503(client):
    document = client.get("/schema/openapi.json").json()
    responses = document["paths"]["/readyz"]["get"]["responses"]

    for status in ("200", "503"):
        schema = responses[status]["content"]["application/json"]["schema"]
        assert schema["$ref"] == "#/components/schemas/ReadinessResponse"
    body = document["components"]["schemas"]["ReadinessResponse"]
    assert set(body["required"]) == {"status", "max_lag_seconds", "checks"}


def test_readyz_lists_each_pool_of_the_process_with_its_budget(client, container):
    """Issue 29: each pool's maximum is the role's share of its connection budget."""
    pools = client.get("/readyz").json()["checks"]["pools"]

    assert {"core", "events_accounts", "events_calling", "views", "reads"} <= set(pools)
    for name, check in pools.items():
        assert check["max"] == container.pool_sizes[name], name
        assert 0 <= check["in_use"] <= check["size"] <= check["max"]
        assert check["exhausted"] is False


def test_an_exhausted_pool_is_degraded_and_named(client, container):
    """Every connection lent out and uses waiting: still serving (200), but ``degraded``."""
    container.pool_stats["core_exhausted"] = lambda: {"pool_max": 3, "pool_size": 3, "pool_available": 0,
                                                       "requests_waiting": 2}
    try:
        response = client.get("/readyz")
    finally:
        del container.pool_stats["core_exhausted"]

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["pools"]["core_exhausted"] == {"max": 3, "size": 3, "in_use": 3, "waiting": 2,
                                                         "exhausted": True}
