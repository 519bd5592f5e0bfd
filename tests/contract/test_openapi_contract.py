"""The OpenAPI document as a contract (issue 18 item 4): operation ids that name the client's
methods, a typed schema and an example (valid against it) on every body and 2xx answer,
``outcome_schema`` typed field by field, and real answers that decode with the documented types.
Its error answers: test_openapi_refusals.py."""

from __future__ import annotations

import inspect
import re
from typing import Any

import msgspec
import pytest

from tests.support.openapi_document import operations, resolved, validator
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

APP_SETTINGS = {"webhook_allow_private": True, "webhook_allow_http": True, "webhook_timeout_seconds": 0.5}


@pytest.fixture(scope="module")
def document(client) -> dict[str, Any]:
    return client.get("/schema/openapi.json").json()


# --- operation ids ---------------------------------------------------------------------------------

class Sent(Exception):
    pass


class Recorder:
    """Stands in for the client's sender: keeps the request a resource method builds, sends nothing."""

    spec: Any = None

    def run(self, operation: Any) -> Any:
        self.spec = operation.spec
        raise Sent

    def pages(self, build: Any, params: Any) -> Any:
        self.spec = build(dict(params)).spec
        raise Sent

    def download(self, spec: Any, path: Any) -> Any:
        self.spec = spec
        raise Sent


# Client methods that are another's operation: a page of a list, or a loop of reads.
SAME_OPERATION = {"calls.list_page": "calls_list", "numbers.list_page": "numbers_list", "calls.wait": "calls_get"}
ARGUMENTS = {"items": [], "graph_json": {}, "path": "/dev/null"}


def _operation_id(document: dict[str, Any], method: str, path: str) -> str:
    candidates = [(template.count("{"), item[method.lower()]["operationId"])
                  for template, item in document["paths"].items() if method.lower() in item
                  and re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)), path)]
    assert candidates, (method, path)
    return min(candidates)[1]


def test_operation_ids_are_unique_identifiers_that_name_the_client_methods(document):
    from callwright_client import Client
    from domain.analytics.reports import REPORTS

    ids = [operation.get("operationId", "") for _, _, operation in operations(document)]
    assert len(ids) >= 75 and len(set(ids)) == len(ids)
    assert all(name.isidentifier() and name == name.lower() for name in ids), ids
    assert {"auth_login", "health_check", "calls_export_csv", "analytics_volume_by_status_csv"} <= set(ids)

    sdk = Client(api_key="sk_live_test", base_url="http://127.0.0.1:9")
    checked = 0
    for attribute, resource in vars(sdk).items():

        if not hasattr(resource, "_sender"):
            continue
        recorder = resource._sender = Recorder()
        for name, method in inspect.getmembers(resource, inspect.ismethod):
            if name.startswith("_"):
                continue
            if (attribute, name) == ("analytics", "report"):
                calls = [((report,), f"analytics_{report.replace('-', '_')}") for report in REPORTS]
            else:
                wanted = [ARGUMENTS.get(p.name, "id_1") for p in inspect.signature(method).parameters.values()
                          if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
                calls = [(tuple(wanted), SAME_OPERATION.get(f"{attribute}.{name}", f"{attribute}_{name}"))]
            for arguments, expected in calls:
                with pytest.raises(Sent):
                    result = method(*arguments)
                    next(iter(result))  # an iterator of pages starts on its first read
                assert _operation_id(document, recorder.spec.method, recorder.spec.path) == expected, (attribute, name)
                checked += 1
    assert checked >= 35


# --- typed answers and examples --------------------------------------------------------------------

def _named(document: dict[str, Any], schema: dict[str, Any]) -> bool:
    """An object with named properties, an array of them, or a choice of them."""
    schema = resolved(document, schema)
    if "oneOf" in schema:  # an optional body: an object or null
        return all(_named(document, branch) for branch in schema["oneOf"] if branch.get("type") != "null")

    if schema.get("type") == "array":
        return _named(document, schema["items"])
    return schema.get("type") == "object" and bool(schema.get("properties"))


def test_every_answer_is_typed_and_every_body_and_answer_has_an_example(document):
    typed = examples = 0
    bodiless = set()
    for path, method, operation in operations(document):
        bodies = [media for media in operation.get("requestBody", {}).get("content", {}).values()]
        for status, answer in operation["responses"].items():
            for media_type, media in answer.get("content", {}).items():
                if not status.startswith("2"):
                    continue
                if media_type == "application/json":
                    assert _named(document, media["schema"]), (method, path, status)
                else:  # a download
                    assert media["schema"]["type"] == "string" and media.get("example"), (method, path)
                bodies.append(media)
        if all(_named(document, m["schema"]) or m["schema"].get("type") == "string" for m in bodies):
            typed += 1
        assert all("example" in media for media in bodies), (method, path)
        examples += bool(bodies)
        if not bodies:
            bodiless.add((method, path, *operation["responses"]))
    total = sum(1 for _ in operations(document))
    assert total >= 75 and typed == total and examples + len(bodiless) == total
    assert all(first == "204" for _, _, first, *_ in bodiless), bodiless  # no content: nothing to type
    assert {("delete", "/v1/templates/{template_id}"), ("delete", "/v1/numbers/byo/{number_id}")} <= {
        (method, path) for method, path, *_ in bodiless}


def test_every_example_is_valid_against_its_schema(document):
    hooks = [(name, "post", hook["post"]) for name, hook in document["webhooks"].items()]
    checked = 0
    for path, method, operation in (*operations(document), *hooks):
        media = [*operation.get("requestBody", {}).get("content", {}).values(),
                 *(m for status, answer in operation["responses"].items() if status.startswith("2")
                   for m in answer.get("content", {}).values())]
        for one in media:
            problems = [f"{list(e.absolute_path)}: {e.message}"
                        for e in validator(document, one["schema"]).iter_errors(one["example"])]
            assert not problems, (method, path, problems)
            checked += 1
    assert checked > 90 and "call.completed" in document["webhooks"]


def test_request_examples_are_bodies_the_service_accepts(client, container, document):
    from tests.support.setup import new_tenant

    tenant = new_tenant(client, container)

    def example(method: str, path: str) -> Any:
        return document["paths"][path][method]["requestBody"]["content"]["application/json"]["example"]

    for method, path, status in (("post", "/v1/calls", 201), ("post", "/v1/calls/batch", 207),
                                 ("post", "/v1/templates", 201), ("post", "/v1/flows", 201),
                                 ("post", "/v1/suppressions", 201), ("post", "/auth/api-keys", 201),
                                 ("patch", "/v1/tenants/me", 200)):
        answer = client.request(method.upper(), path, json=example(method, path), headers=tenant.headers)
        assert answer.status_code == status, (path, answer.text)
    flow = client.post("/v1/flows", json=example("post", "/v1/flows"), headers=tenant.headers).json()
    preview = client.post(f"/v1/flows/{flow['id']}/preview", json=example("post", "/v1/flows/{flow_id}/preview"),
                          headers=tenant.headers)
    assert preview.status_code == 200 and preview.json()["ok"], preview.text


# --- outcome_schema --------------------------------------------------------------------------------

def test_outcome_schema_is_a_map_of_typed_fields_wherever_it_appears(document):
    from domain.calls.outcome_limits import MAX_ENUM_VALUE_LENGTH, MAX_ENUM_VALUES
    from domain.calls.outcome_schema import MAX_DESCRIPTION, MAX_FIELDS
    from domain.calls.outcome_types import FIELD_NAME_PATTERN, FIELD_TYPES

    schemas = document["components"]["schemas"]
    field = schemas["OutcomeField"]
    assert field["required"] == ["type"] and field["additionalProperties"] is False
    assert field["properties"]["type"]["enum"] == list(FIELD_TYPES)
    assert field["properties"]["optional"] == {**field["properties"]["optional"], "type": "boolean", "default": False}
    assert field["properties"]["description"]["maxLength"] == MAX_DESCRIPTION
    values = field["properties"]["values"]
    assert (values["type"], values["items"]["type"], values["maxItems"], values["items"]["maxLength"]) == (
        "array", "string", MAX_ENUM_VALUES, MAX_ENUM_VALUE_LENGTH)
    requests = ("CallCreateRequest", "BatchRequest", "TemplateCreateRequest", "NumberPatch", "ByoNumberCreate")
    answers = ("CallRecord", "NumberView", "TemplateResponse", "CompiledView")
    for name in (*requests, *answers):
        for prop in ("outcome_schema", "voicemail_schema"):
            if prop not in schemas[name]["properties"]:
                continue
            typed = schemas[name]["properties"][prop]
            assert typed["additionalProperties"] == {"$ref": "#/components/schemas/OutcomeField"}, name
            assert typed["propertyNames"] == {"pattern": FIELD_NAME_PATTERN}, name
            assert typed["maxProperties"] == MAX_FIELDS, name
            assert typed.get("minProperties") == (1 if name in requests else None), name
            assert "object" in (typed.get("type"), *(b["type"] for b in typed.get("oneOf", ()))), name


@pytest.mark.parametrize("definition", [
    {"confirmed": {"type": "boolean", "optional": True, "description": "Will come"}},
    {"arrival": {"type": "enum", "values": ["car", "bus"]}},
    {"arrival": {"type": "enum"}},  # an enum needs values
    {"confirmed": {"type": "boolean", "values": ["yes"]}},  # values only for an enum
    {"confirmed": {"type": "yes_no"}},
    {"confirmed": {"optional": True}},
    {"Confirmed": {"type": "boolean"}},
    {"confirmed": {"type": "boolean", "required": True}},
    {},
])
def test_the_documented_outcome_schema_accepts_what_the_domain_accepts(document, definition):
    from domain.calls.outcome_schema import compile_schema
    from domain.errors import OutcomeSchemaError

    body = document["components"]["schemas"]["TemplateCreateRequest"]["properties"]["outcome_schema"]
    documented = validator(document, body).is_valid(definition)
    try:
        compile_schema(definition)
    except OutcomeSchemaError:
        accepted = False
    else:
        accepted = True
    assert documented == accepted


# --- real answers decode with the documented types -------------------------------------------------

def test_real_answers_decode_with_the_documented_types(client, container, fake, document):
    from entrypoints.http.schemas import calls, list_rows, numbers, operations as health, pages, providers, webhooks
    from tests.support.call_requests import call_body, wait_until_ended
    from tests.support.setup import carrier_tenant

    tenant, carrier = carrier_tenant(client, container, fake, [("+14155550100", "Main line")])
    headers = tenant.headers

    def answer(kind: type, method: str, path: str, **given: Any) -> Any:
        response = client.request(method, path, headers=headers, **given)
        assert response.status_code < 300, (path, response.text)
        decoded = msgspec.json.decode(response.content, type=kind)
        assert set(response.json()) == {f.encode_name for f in msgspec.structs.fields(kind)}, path
        return decoded

    verified = answer(providers.CarrierAccount, "POST", "/v1/providers/carrier/verify",
                      json={"account_sid": carrier.sid, "auth_token": carrier.auth_token})
    assert verified.phone_numbers[0].number == "+14155550100"
    answer(providers.CarrierAccount, "POST", "/v1/providers/select-number", json={"e164": "+14155550100"})
    assert answer(providers.CredentialStatus, "GET", "/v1/providers/carrier").last4
    answer(calls.SuppressionAdded, "POST", "/v1/suppressions", json={"e164": "+442079460001", "reason": "asked"})
    listed = answer(pages.SuppressionsPage, "GET", "/v1/suppressions")
    assert isinstance(listed.data[0], list_rows.SuppressionEntry)
    answer(calls.SuppressionRemoved, "DELETE", "/v1/suppressions/+442079460001")
    created = answer(webhooks.WebhookSecretResponse, "POST", "/v1/webhooks", json={"url": "http://127.0.0.1:9/x"})
    answer(webhooks.WebhookEndpointResponse, "DELETE", f"/v1/webhooks/{created.id}")
    call_id = client.post("/v1/calls", json=call_body(), headers=headers).json()["call_id"]
    wait_until_ended(client, headers, call_id)
    assert answer(pages.CallsPage, "GET", "/v1/calls").data[0].call_id == call_id
    assert answer(pages.AuditEventsPage, "GET", "/v1/audit-events").data
    assert answer(health.Liveness, "GET", "/healthz").status == "ok"
    assert answer(pages.DeliveriesPage, "GET", f"/v1/webhooks/{created.id}/deliveries").total == 0

    def example(method: str, path: str) -> Any:
        return document["paths"][path][method]["requestBody"]["content"]["application/json"]["example"]

    number = answer(numbers.NumberView, "POST", "/v1/numbers/byo", json=example("post", "/v1/numbers/byo"))
    patched = answer(numbers.NumberView, "PATCH", f"/v1/numbers/{number.id}",
                     json=example("patch", "/v1/numbers/{number_id}"))
    assert set(patched.outcome_schema) == set(example("patch", "/v1/numbers/{number_id}")["outcome_schema"])
    healthz = document["paths"]["/healthz"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert set(resolved(document, healthz)["properties"]) == {"status"}
