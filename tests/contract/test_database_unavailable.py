"""A database that cannot be reached is answered ``503 database_unavailable`` with ``Retry-After``,
typed in OpenAPI; every other failure stays a 500 that reveals nothing (issue 13, item 1). The
outages themselves, injected into a running server, are in ``tests/faults``."""

from __future__ import annotations

import psycopg
import pytest
from eventsourcing import persistence
from psycopg_pool import PoolTimeout

from entrypoints.http.controllers import calls as calls_controller
from tests.support.setup import approve, signup
from tests.support.shared_app import app, client, container  # noqa: F401 - module-scoped fixtures


@pytest.fixture(scope="module")
def headers(client, container) -> dict[str, str]:
    account = signup(client)
    approve(container, account)
    return {"Authorization": f"Bearer {account.api_key}"}


def _raising(exc: BaseException):
    async def current_call(*args, **kwargs):  # the read by id's own database work
        raise exc
    return current_call


@pytest.mark.parametrize("exc", [
    PoolTimeout("couldn't get a connection after 3.00 sec"),
    psycopg.OperationalError("connection refused"),
    persistence.OperationalError("terminating connection due to administrator command"),
], ids=["pool_timeout", "driver", "eventsourcing"])
def test_an_unreachable_database_is_a_503_with_retry_after(client, headers, monkeypatch, exc):
    monkeypatch.setattr(calls_controller, "current_call", _raising(exc))

    response = client.get("/v1/calls/cll_0123456789abcdef0123456789abcdef", headers=headers)

    assert response.status_code == 503, response.text
    assert response.json() == {"error": {"code": "database_unavailable",
                                         "message": "the database cannot be reached; try again shortly"}}
    assert int(response.headers["retry-after"]) > 0


def test_an_outage_raised_from_another_error_is_still_a_503(client, headers, monkeypatch):
    try:
        try:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        except psycopg.OperationalError as cause:
            raise RuntimeError("while loading the call") from cause
    except RuntimeError as wrapped:
        monkeypatch.setattr(calls_controller, "current_call", _raising(wrapped))

    assert client.get("/v1/calls/cll_0123456789abcdef0123456789abcdef", headers=headers).status_code == 503


@pytest.mark.parametrize("exc", [psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
                                 RuntimeError("a bug")], ids=["statement_timeout", "bug"])
def test_errors_of_a_database_that_answered_stay_500(client, headers, monkeypatch, exc):
    monkeypatch.setattr(calls_controller, "current_call", _raising(exc))

    response = client.get("/v1/calls/cll_0123456789abcdef0123456789abcdef", headers=headers)

    assert response.status_code == 500
    assert response.json() == {"error": {"code": "internal_error", "message": "internal error"}}
    assert "retry-after" not in response.headers


def test_every_route_that_uses_the_database_documents_its_503(client):
    document = client.get("/schema/openapi.json").json()
    operations = [(path, method, op) for path, item in document["paths"].items()
                  for method, op in item.items() if method in ("get", "post", "put", "patch", "delete")]

    for path, method, operation in operations:
        if path in ("/healthz", "/readyz"):
            continue
        answer = operation["responses"].get("503")
        assert answer is not None, f"{method.upper()} {path} lacks its 503"
        assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
        assert "Retry-After" in answer["headers"]
