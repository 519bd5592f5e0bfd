"""SPEC.md Authentication §5 (scopes) and §6 (number_ids): every row of the scope table is enforced.

The resource routes do not exist yet in this slice, so a small app puts stand-in handlers at each
path of the table behind the real ``AuthMiddleware``, the real guard and the real error mapping.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar, Request, delete, get, patch, post
from litestar.middleware import DefineMiddleware
from litestar.testing import TestClient

from application.accounts import keys, registration
from application.accounts.administration import approve_user
from application.accounts.authentication import authenticate_key
from application.errors import PermissionDeniedError
from application.principal import API_KEY, Principal
from domain.accounts import scopes
from entrypoints.bootstrap import Container
from entrypoints.http.auth import AuthMiddleware, principal_of, requires_scope
from entrypoints.http.errors import EXCEPTION_HANDLERS
from entrypoints.http.services import Admission
from tests.support.setup import PASSWORD

NUMBER_A = "0f8fad5b-d9cb-469f-a165-70867728950e"
NUMBER_B = "7c9e6679-7425-40de-944b-e07fc1f90ae7"

# (method, route template, a concrete path, required scope): the rows of SPEC.md's scope table.
SCOPE_TABLE: list[tuple[str, str, str, str]] = [
    ("POST", "/v1/calls", "/v1/calls", scopes.CALLS_CREATE),
    ("POST", "/v1/calls/batch", "/v1/calls/batch", scopes.CALLS_CREATE),
    ("GET", "/v1/calls", "/v1/calls", scopes.CALLS_READ),
    ("GET", "/v1/calls/{call_id:str}", "/v1/calls/cll_0123456789abcdef0123456789abcdef", scopes.CALLS_READ),
    ("GET", "/v1/calls/export.csv", "/v1/calls/export.csv", scopes.CALLS_READ),
    ("GET", "/v1/webhooks", "/v1/webhooks", scopes.WEBHOOKS_READ),
    ("GET", "/v1/webhooks/{webhook_id:str}/deliveries", "/v1/webhooks/wh_1/deliveries", scopes.WEBHOOKS_READ),
    ("POST", "/v1/webhooks", "/v1/webhooks", scopes.WEBHOOKS_WRITE),
    ("POST", "/v1/webhooks/{webhook_id:str}/deliveries/{delivery_id:str}/retry", "/v1/webhooks/wh_1/deliveries/dlv_1/retry",
     scopes.WEBHOOKS_WRITE),
    ("DELETE", "/v1/webhooks/{webhook_id:str}", "/v1/webhooks/wh_1", scopes.WEBHOOKS_WRITE),
    ("PATCH", "/v1/numbers/{number_id:str}", f"/v1/numbers/{NUMBER_A}", scopes.NUMBERS_WRITE),
    ("POST", "/v1/numbers/{number_id:str}/sms/preview", f"/v1/numbers/{NUMBER_A}/sms/preview", scopes.NUMBERS_WRITE),
    ("POST", "/v1/providers/carrier/verify", "/v1/providers/carrier/verify", scopes.PROVIDERS_WRITE),
    ("POST", "/v1/providers/select-number", "/v1/providers/select-number", scopes.PROVIDERS_WRITE),
    # Scopes the spec leaves open (Authentication §10): provisioning buys a number (docs/wizard.md).
    ("POST", "/v1/wizard/provision", "/v1/wizard/provision", scopes.NUMBERS_WRITE),
    # Web Push (docs/push.md): listing devices, and subscribing, unsubscribing, acknowledging.
    ("GET", "/v1/push/subscriptions", "/v1/push/subscriptions", scopes.PUSH_READ),
    ("POST", "/v1/push/subscribe", "/v1/push/subscribe", scopes.PUSH_WRITE),
    ("POST", "/v1/push/unsubscribe", "/v1/push/unsubscribe", scopes.PUSH_WRITE),
    ("POST", "/v1/push/delivered", "/v1/push/delivered", scopes.PUSH_WRITE),
]

SCOPE_SETS: list[tuple[str, ...]] = [
    *[(scope,) for scope in scopes.ALL_SCOPES],
    (scopes.CALLS_CREATE, scopes.CALLS_READ),
    (scopes.WEBHOOKS_READ, scopes.WEBHOOKS_WRITE, scopes.NUMBERS_WRITE),
]

_DECORATORS = {"GET": get, "POST": post, "PATCH": patch, "DELETE": delete}


def _stand_in(method: str, template: str, scope: str) -> Any:
    """A handler that answers 200 once the guard let the request through."""

    async def handler(request: Request[Any, Any, Any]) -> dict[str, Any]:
        number_id = request.path_params.get("number_id")
        if number_id is not None:  # number configuration and SMS: §6 restriction
            principal_of(request).require_number(number_id)
        return {"route": f"{method} {template}"}

    handler.__name__ = f"{method.lower()}_{abs(hash(template))}"
    return _DECORATORS[method](template, guards=[requires_scope(scope)], status_code=200, name=handler.__name__)(handler)


class SharedTable:
    """Fresh reads without the server's request gate: each hit one upsert of the shared rate table,
    and no accounts head to vouch for a remembered key (every key is looked up)."""

    def __init__(self, container: Container) -> None:
        self.limiter = container.rate_limiter

    async def hit(self, bucket: str, *, limit: int, window_seconds: int, now: Any) -> Any:
        return self.limiter.hit(bucket, limit=limit, window_seconds=window_seconds, now=now)

    async def accounts_head(self) -> int:
        return -1


def scope_table_app(container: Container) -> Litestar:
    """Wired like ``entrypoints.http.app.create_app``: auth middleware, then guards, one error mapping."""
    admission = Admission(accounts=container.accounts, fresh=SharedTable(container),  # type: ignore[arg-type]
                          tier_limit=container.settings.tier_limit, clock=container.clock)
    return Litestar(
        route_handlers=[_stand_in(method, template, scope) for method, template, _, scope in SCOPE_TABLE],
        middleware=[DefineMiddleware(AuthMiddleware, admission=admission)],
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=None,
    )


class Tenant:
    def __init__(self, container: Container) -> None:
        self.container = container
        done = registration.register(container.accounts, email="scopes@example.com", password=PASSWORD, name=None)
        approve_user(container.accounts, done.user.user_id, by="test")
        self.owner = authenticate_key(container.accounts, done.key.secret, method="POST", path="/auth/api-keys")

    def key(self, key_scopes: tuple[str, ...] | None, number_ids: tuple[str, ...] | None = None) -> dict[str, str]:
        issued = keys.issue_key(self.container.accounts, self.owner, name=None, scopes=key_scopes, number_ids=number_ids)
        return {"Authorization": f"Bearer {issued.secret}"}


@pytest.fixture
def tenant(container: Container) -> Tenant:
    return Tenant(container)


@pytest.fixture
def stand_ins(container: Container) -> Iterator[TestClient[Any]]:
    with TestClient(scope_table_app(container), raise_server_exceptions=False) as test_client:
        yield test_client


def call(client: TestClient[Any], method: str, path: str, headers: dict[str, str]) -> Any:
    return client.request(method, path, headers=headers, json={} if method in ("POST", "PATCH") else None)


def test_a_key_without_scopes_passes_every_route(stand_ins, tenant):
    """SPEC.md Resources › API key: scopes null means all permissions."""
    headers = tenant.key(None)
    for method, template, path, _ in SCOPE_TABLE:
        response = call(stand_ins, method, path, headers)
        assert response.status_code == 200, (method, path, response.text)
        assert response.json() == {"route": f"{method} {template}"}  # the stand-in of that very row answered

    anonymous = stand_ins.post("/v1/calls", json={})
    assert anonymous.status_code == 401  # authentication comes before any guard
    assert anonymous.json()["error"]["code"] == "missing_credentials"


def test_every_route_answers_only_keys_holding_its_scope(stand_ins, tenant):
    """SPEC.md Authentication §5: a request outside the key's scopes returns 403."""
    wrong: list[str] = []
    for key_scopes in SCOPE_SETS:
        headers = tenant.key(key_scopes)
        for method, _, path, required in SCOPE_TABLE:
            response = call(stand_ins, method, path, headers)
            if required in key_scopes:
                ok = response.status_code == 200
            else:
                ok = response.status_code == 403 and response.json() == {"error": {
                    "code": "insufficient_scope", "message": f"this API key lacks the scope '{required}'"}}
            if not ok:
                wrong.append(f"{key_scopes} {method} {path} -> {response.status_code} {response.text}")
    assert wrong == []


def test_audit_trail_route_needs_the_audit_read_scope(client, account):
    created = client.post("/auth/api-keys", headers=account.headers, json={"scopes": ["calls:read"]}).json()
    refused = client.get("/v1/audit-events", headers={"Authorization": f"Bearer {created['secret']}"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "insufficient_scope"

    auditor = client.post("/auth/api-keys", headers=account.headers, json={"scopes": ["audit:read"]}).json()
    assert client.get("/v1/audit-events", headers={"Authorization": f"Bearer {auditor['secret']}"}).status_code == 200
    assert client.get("/v1/audit-events", headers=account.headers).status_code == 200


def test_wizard_generate_takes_any_key_and_provision_takes_numbers_write(client, account):
    """docs/wizard.md: generating a configuration changes nothing (any valid key); provisioning buys a
    number (numbers:write). On the real routes, with an empty body: past the guard it is a 422."""
    for scope in scopes.ALL_SCOPES:
        secret = client.post("/auth/api-keys", headers=account.headers, json={"scopes": [scope]}).json()["secret"]
        headers = {"Authorization": f"Bearer {secret}"}
        generated = client.post("/v1/wizard/generate", headers=headers, json={"business_description": "A dentist"})
        assert generated.status_code == 200, (scope, generated.text)
        provisioned = client.post("/v1/wizard/provision", headers=headers, json={})
        expected = 422 if scope == scopes.NUMBERS_WRITE else 403
        assert provisioned.status_code == expected, (scope, provisioned.text)


# --- number_ids: SPEC.md Authentication §6 ---------------------------------------------------------


def test_a_number_restricted_key_may_only_target_its_numbers(stand_ins, tenant, container):
    """SPEC.md Authentication §6: number configuration and SMS endpoints reject numbers outside number_ids."""
    headers = tenant.key((scopes.NUMBERS_WRITE,), number_ids=(NUMBER_A,))
    principal = authenticate_key(container.accounts, headers["Authorization"].removeprefix("Bearer "),
                                 method="GET", path="/v1/numbers")
    assert principal.number_ids == (NUMBER_A,) and principal.scopes == (scopes.NUMBERS_WRITE,)

    assert call(stand_ins, "PATCH", f"/v1/numbers/{NUMBER_A}", headers).status_code == 200
    assert call(stand_ins, "POST", f"/v1/numbers/{NUMBER_A}/sms/preview", headers).status_code == 200
    for method, path in (("PATCH", f"/v1/numbers/{NUMBER_B}"), ("POST", f"/v1/numbers/{NUMBER_B}/sms/preview")):
        response = call(stand_ins, method, path, headers)
        assert response.status_code == 403, path
        assert response.json()["error"]["code"] == "number_not_allowed"

    unrestricted = tenant.key((scopes.NUMBERS_WRITE,))
    assert call(stand_ins, "PATCH", f"/v1/numbers/{NUMBER_B}", unrestricted).status_code == 200


def _principal(number_ids: tuple[str, ...] | None) -> Principal:
    return Principal(kind=API_KEY, tenant_id="ten_x", user_id="usr_x", verification_status="approved", tier="standard",
                     key_id="key_x", scopes=None, number_ids=number_ids)


def test_principal_number_restriction_is_checked():
    restricted = _principal((NUMBER_A,))
    assert restricted.may_use_number(NUMBER_A)
    assert not restricted.may_use_number(NUMBER_B)
    restricted.require_number(NUMBER_A)
    with pytest.raises(PermissionDeniedError) as refused:
        restricted.require_number(NUMBER_B)
    assert refused.value.code == "number_not_allowed"

    unrestricted = _principal(None)
    assert unrestricted.may_use_number(NUMBER_B)
    unrestricted.require_number(NUMBER_B)

    nothing = _principal(())
    assert not nothing.may_use_number(NUMBER_A)
