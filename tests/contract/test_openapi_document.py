"""The OpenAPI document as a contract (issue 18 item 4, in part): security only where it applies,
every keyed route's 401 and 429 (with the rate headers), the ``call.completed`` delivery as an
OpenAPI 3.1 webhook, carrier callbacks and aliases left out, tags in reading order."""

from __future__ import annotations

from tests.support.shared_app import app, client, container  # noqa: F401 - fixtures

METHODS = ("get", "put", "post", "delete", "patch")


def document(client) -> dict:
    return client.get("/schema/openapi.json").json()


def test_public_routes_show_no_padlock_and_keyed_routes_their_401_and_429(client):
    paths = document(client)["paths"]
    for path in ("/auth/signup", "/auth/login", "/healthz", "/readyz"):
        for method, operation in paths[path].items():
            assert operation.get("security") == [], (path, method)
    for path, item in paths.items():
        if not path.startswith(("/v1/", "/auth/api-keys", "/auth/me")):
            continue
        for method in METHODS:
            if method not in item:
                continue
            responses = item[method]["responses"]
            assert {"401", "403", "429"} <= set(responses), (path, method)
            assert "{" not in path or "404" in responses, (path, method)
            assert responses["401"]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Error"
            assert {"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(
                responses["429"]["headers"]), (path, method)
            assert "security" not in item[method] or item[method]["security"], (path, method)


def test_carrier_callbacks_and_aliases_are_served_but_not_documented(client):
    paths = document(client)["paths"]
    assert not [path for path in paths if path.startswith(("/webhooks/carrier/", "/auth/api_keys"))]
    assert "/auth/api-keys" in paths
    assert client.get("/auth/api_keys").status_code == 401  # still served


def test_the_call_completed_delivery_is_a_webhook_with_its_signed_headers(client):
    hook = document(client)["webhooks"]["call.completed"]["post"]
    headers = {parameter["name"] for parameter in hook["parameters"] if parameter["in"] == "header"}
    assert headers == {"X-Service-Signature", "X-Service-Timestamp", "X-Service-Event", "X-Service-Delivery-Id"}
    payload = hook["requestBody"]["content"]["application/json"]["schema"]
    assert set(payload["required"]) == {"id", "type", "created_at", "data"}
    assert payload["properties"]["type"]["const"] == "call.completed"


def test_tags_come_calls_first(client):
    tags = [tag["name"] for tag in document(client)["tags"]]
    assert tags[0] == "calls" and tags.index("calls") < tags.index("numbers") < tags.index("api keys")


def test_call_answers_are_typed_and_real_records_decode_as_documented(client, container):
    import time

    import msgspec

    from entrypoints.http.schemas.call_record import BatchAnswer, CallRecord
    from tests.support.call_requests import LONDON_2, batch_body, call_body
    from tests.support.setup import new_tenant

    paths = document(client)["paths"]
    schemas = document(client)["components"]["schemas"]

    def schema(path: str, method: str, status: str) -> dict:
        ref = paths[path][method]["responses"][status]["content"]["application/json"]["schema"]["$ref"]
        return schemas[ref.rsplit("/", 1)[1]]

    assert set(schema("/v1/calls", "post", "201")["properties"]) == {"call_id", "status"}
    assert set(schema("/v1/calls/batch", "post", "207")["properties"]) == {"accepted", "rejected", "items"}
    record_fields = set(schema("/v1/calls/{call_id}", "get", "200")["properties"])
    assert record_fields == set(schema("/v1/calls/{call_id}/cancel", "post", "200")["properties"])

    tenant = new_tenant(client, container)
    done = client.post("/v1/calls", json=call_body(), headers=tenant.headers).json()["call_id"]
    machine = client.post("/v1/calls", json=call_body(simulation={"facts": {"confirmed": True},
                                                                  "answered_by": "machine_start"}),
                          headers=tenant.headers).json()["call_id"]
    deadline = time.monotonic() + 15
    records: list[bytes] = []
    while time.monotonic() < deadline:
        records = [client.get(f"/v1/calls/{call}", headers=tenant.headers).content for call in (done, machine)]
        if all(msgspec.json.decode(raw)["status"] in ("completed", "failed") for raw in records):
            break
        time.sleep(0.05)
    for raw in records:
        decoded = msgspec.json.decode(raw, type=CallRecord)  # every field of the answer, typed as documented
        assert set(msgspec.json.decode(raw)) == record_fields and decoded.status in ("completed", "failed")
    batch = client.post("/v1/calls/batch", json=batch_body([{"to": LONDON_2}, {"to": "+1"}]), headers=tenant.headers)
    answer = msgspec.json.decode(batch.content, type=BatchAnswer)
    assert (answer.accepted, answer.rejected) == (1, 1) and answer.items[1].error is not None
