"""The OpenAPI document's error answers (issue 18 item 4): every 409 an operation can answer (a
reused Idempotency-Key, a call already ended, a deleted webhook, a taken e-mail or number, a key
rotated already, a concurrent change), the 413 of every body over the limit, one ``Error`` body
for all but 422; and refusals the service really gives are among those documented."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tests.support.openapi_document import ERROR, operations
from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def document(client) -> dict[str, Any]:
    return client.get("/schema/openapi.json").json()


CONFLICTS = {
    ("post", "/v1/calls/{call_id}/cancel"): "call_already_ended",
    ("patch", "/v1/webhooks/{endpoint_id}"): "webhook_deleted",
    ("post", "/v1/webhooks/{endpoint_id}/rotate-secret"): "webhook_deleted",
    ("post", "/v1/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry"): "webhook_deleted",
    ("delete", "/v1/webhooks/{endpoint_id}"): "conflict",
    ("post", "/auth/signup"): "email_taken",
    ("post", "/auth/api-keys/{key_id}/rotate"): "key_already_rotated",
    ("delete", "/auth/api-keys/{key_id}"): "conflict",
    ("post", "/v1/numbers/byo"): "number_taken",
    ("delete", "/v1/numbers/byo/{number_id}"): "conflict",
    ("patch", "/v1/numbers/{number_id}"): "conflict",
    ("delete", "/v1/numbers/{number_id}"): "conflict",
}


def test_every_conflict_and_body_limit_is_documented_with_the_error_body(document):
    keyed = set()
    for path, method, operation in operations(document):
        responses = operation["responses"]
        if any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", ())):
            assert "idempotency_key_reused" in responses["409"]["description"], (method, path)
            keyed.add((method, path))
        if (method, path) in CONFLICTS:
            assert CONFLICTS[method, path] in responses["409"]["description"], (method, path)
        if "requestBody" in operation:
            assert "payload_too_large" in responses["413"]["description"], (method, path)
            assert "Connection" in responses["413"]["headers"], (method, path)
        for status, answer in responses.items():
            if status >= "4" and status != "422" and (path, status) != ("/readyz", "503"):
                assert answer["content"]["application/json"]["schema"] == {"$ref": ERROR}, (method, path, status)
    assert keyed >= {("post", "/v1/calls"), ("post", "/v1/calls/batch"), ("post", "/v1/numbers")}
    assert {"ErrorBody", "ErrorDetail"}.isdisjoint(document["components"]["schemas"])
    assert sum(1 for *_, op in operations(document) if "409" in op["responses"]) >= 30


def test_refusals_the_service_gives_are_the_ones_documented(client, container, document):
    from tests.support.call_requests import call_body, wait_until_ended
    from tests.support.setup import PASSWORD, new_tenant

    tenant = new_tenant(client, container)

    def documented(method: str, path: str, answer: Any) -> None:
        assert str(answer.status_code) in document["paths"][path][method]["responses"], (path, answer.text)
        if answer.status_code != 422:
            msgspec.json.decode(answer.content, type=ErrorShape)

    keyed = {**tenant.headers, "Idempotency-Key": "contract-1"}
    assert client.post("/v1/calls", json=call_body(), headers=keyed).status_code == 201
    reused = client.post("/v1/calls", json=call_body(objective="Another"), headers=keyed)
    assert reused.status_code == 409
    documented("post", "/v1/calls", reused)
    call_id = client.post("/v1/calls", json=call_body(), headers=tenant.headers).json()["call_id"]
    wait_until_ended(client, tenant.headers, call_id)
    documented("post", "/v1/calls/{call_id}/cancel", client.post(f"/v1/calls/{call_id}/cancel",
                                                                 headers=tenant.headers))
    documented("post", "/auth/signup", client.post("/auth/signup", json={"email": tenant.email,
                                                                         "password": PASSWORD}))
    documented("post", "/auth/login", client.post("/auth/login", json={"email": tenant.email, "password": "wrong!"}))
    documented("post", "/auth/verify-email", client.post("/auth/verify-email", json={"token": "no-such-token"}))
    too_large = client.post("/v1/templates", content=b"[" + b" " * 1_000_001 + b"]",
                            headers={**tenant.headers, "Content-Type": "application/json"})
    assert too_large.status_code == 413
    documented("post", "/v1/templates", too_large)


class ErrorDetail(msgspec.Struct):
    code: str
    message: str


class ErrorShape(msgspec.Struct):
    error: ErrorDetail
