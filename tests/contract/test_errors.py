"""SPEC.md Errors and Resources › Validation error, ARCHITECTURE.md §9: every 422 has the
``{detail: [{loc, msg, type, input, ctx}]}`` shape (body, query, path), other errors are
``{error: {code, message}}``, and no malformed input ever makes the service answer 500."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings as hypothesis_settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from application.accounts.registration import register
from entrypoints.bootstrap import Container
from tests.support.setup import PASSWORD, Account, approve, signup
from tests.support.shared_app import app, client, container, mail  # noqa: F401 - module-scoped fixtures

# --- one app for the whole module: these tests only read shapes, so they can share it -------


@pytest.fixture(scope="module")
def account(client: TestClient[Any], container: Container) -> Account:
    created = signup(client)
    approve(container, created)
    return created


@dataclass(frozen=True)
class Callers:
    """Credentials that get a request past authentication, so bodies reach the handlers."""

    key: dict[str, str]
    session: dict[str, str]
    admin_key: dict[str, str]


@pytest.fixture(scope="module")
def callers(client: TestClient[Any], container: Container, account: Account) -> Callers:
    admin = register(container.accounts, email="root@example.com", password=PASSWORD, name=None, admin=True, by="test")
    login = client.post("/auth/login", json={"email": account.email, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return Callers(
        key=account.headers,
        session={"Authorization": f"Bearer {login.json()['access_token']}"},
        admin_key={"Authorization": f"Bearer {admin.key.secret}"},
    )


def assert_unprocessable(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"detail"}
    assert isinstance(body["detail"], list) and body["detail"]
    for item in body["detail"]:
        assert set(item) == {"loc", "msg", "type", "input", "ctx"}, item
        assert isinstance(item["loc"], list) and item["loc"]
        assert all(isinstance(part, (str, int)) for part in item["loc"])
        assert isinstance(item["msg"], str) and item["msg"]
        assert isinstance(item["type"], str) and item["type"]
        assert isinstance(item["ctx"], dict)
    return body["detail"]


def post_raw(client: TestClient[Any], path: str, content: bytes, content_type: str = "application/json", **headers: str) -> Any:
    return client.post(path, content=content, headers={"Content-Type": content_type, **headers})


# --- 422 shape -----------------------------------------------------------------------------


def test_validation_error_lists_every_problem_of_the_body(client):
    """SPEC.md Resources › Validation error and ARCHITECTURE.md §9: listing every error."""
    response = client.post(
        "/auth/signup", json={"email": "not-an-email", "password": "short", "name": "", "plan": "gold"}
    )

    errors = assert_unprocessable(response)
    by_loc = {tuple(e["loc"]): e for e in errors}
    assert set(by_loc) == {("body", "email"), ("body", "password"), ("body", "name"), ("body", "plan")}
    assert by_loc[("body", "password")]["type"] == "string_too_short"
    assert by_loc[("body", "password")]["input"] == "short"
    assert by_loc[("body", "name")]["type"] == "string_too_short"
    assert by_loc[("body", "plan")]["type"] == "extra_forbidden"


def test_validation_error_reports_missing_fields_each_with_its_loc(client):
    errors = assert_unprocessable(client.post("/auth/signup", json={}))

    assert {tuple(e["loc"]): e["type"] for e in errors} == {("body", "email"): "missing", ("body", "password"): "missing"}


def test_wrongly_typed_fields_are_422_with_their_input(client):
    errors = assert_unprocessable(client.post("/auth/login", json={"email": 7, "password": ["x"]}))

    by_loc = {tuple(e["loc"]): e for e in errors}
    assert set(by_loc) == {("body", "email"), ("body", "password")}
    assert by_loc[("body", "email")]["input"] == 7
    assert by_loc[("body", "password")]["input"] == ["x"]


def test_malformed_json_is_422_json_invalid(client):
    for raw in (b'{"email": "a@example.com",', b"{'email': 1}", b"not json", b'{"a": 1} trailing'):
        [error] = assert_unprocessable(post_raw(client, "/auth/signup", raw))
        assert error["type"] == "json_invalid", raw
        assert error["loc"] == ["body"]


def test_an_empty_body_where_one_is_required_is_422_missing_body(client):
    [error] = assert_unprocessable(post_raw(client, "/auth/signup", b""))

    assert error["loc"] == ["body"]
    assert error["type"] == "missing"


@pytest.mark.parametrize("raw", [b"[]", b'["email", "password"]', b'"a string"', b"42", b"true", b"null"])
def test_json_that_is_not_an_object_is_422(client, raw):
    errors = assert_unprocessable(post_raw(client, "/auth/signup", raw))

    assert all(e["loc"][0] == "body" for e in errors)


@pytest.mark.parametrize("value", ["abc", "0", "1000", "-1", "1.5", ""])
def test_bad_limit_on_audit_events_is_422_at_query_limit(client, account, value):
    """SPEC.md Errors: 422 for query parameters too, in the same shape."""
    response = client.get("/v1/audit-events", params={"limit": value}, headers=account.headers)

    [error] = assert_unprocessable(response)
    assert error["loc"] == ["query", "limit"]
    assert error["input"] == value


def test_bad_cursor_on_audit_events_is_422_at_query_cursor(client, account):
    response = client.get("/v1/audit-events", params={"cursor": "not-a-cursor"}, headers=account.headers)

    [error] = assert_unprocessable(response)
    assert error["loc"] == ["query", "cursor"]


def test_malformed_key_id_in_the_path_is_422_at_path_key_id(client, account):
    for path in ("/auth/api-keys/not-an-id", "/auth/api-keys/key_123/rotate", "/auth/api_keys/not-an-id"):
        method = client.post if path.endswith("/rotate") else client.delete
        [error] = assert_unprocessable(method(path, headers=account.headers))
        assert error["loc"] == ["path", "key_id"], path
        assert error["input"] in {"not-an-id", "key_123"}


def test_well_formed_but_unknown_key_id_is_404(client, account):
    response = client.delete("/auth/api-keys/key_" + "0" * 32, headers=account.headers)

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "api_key_not_found"


def test_unknown_route_is_404_with_an_error_code(client):
    response = client.get("/no/such/route")

    assert response.status_code == 404
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == "not_found"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_wrong_method_is_405_with_an_error_code(client):
    response = client.put("/auth/signup", json={})

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_missing_credentials_is_401_with_an_error_code(client):
    response = client.get("/v1/audit-events")

    assert response.status_code == 401
    assert response.json() == {"error": {"code": "missing_credentials", "message": response.json()["error"]["message"]}}


# --- robustness: nothing a client sends may become a 500 ----------------------------------

KEY_SUFFIX = "A" * 32
WEIRD_AUTHORIZATIONS: list[bytes] = [
    b"",
    b"Bearer",
    b"Bearer ",
    b"bearer    ",
    b"Basic eHl6OnNlY3JldA==",
    b"Basic xyz",
    b"Token sk_live_" + KEY_SUFFIX.encode(),
    b"Bearer sk_live_",
    b"Bearer sk_live_" + b"A" * 31,
    b"Bearer sk_live_" + b"A" * 33,
    b"Bearer sk_live_" + KEY_SUFFIX.encode(),
    b"Bearer sk_live_" + b"\xff" * 32,
    b"Bearer sk_live_" + "é".encode() * 16,
    b"Bearer \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
    b"Bearer \x80\x81\xfe\xff",
    b"Bearer " + b"x" * 10_240,
    b"Bearer eyJ" + b"a" * 10_240 + b".b.c",
    b"Bearer eyJ.eyJ.",
    b"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1c3JfeCIsInRpZCI6InRlbl94IiwianRpIjoiMSIsImV4cCI6OTk5OTk5OTk5OX0.",
    b"Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA",
    b"Bearer eyJ\xff.\xff.\xff",
    b"Bearer a.b.c",
    b"Bearer sk_live_" + KEY_SUFFIX.encode() + b" extra",
    b"Bearer\tsk_live_" + KEY_SUFFIX.encode(),
]

NESTED = b"[" * 5000 + b"]" * 5000
HUGE_INT = b"9" * 5000
WEIRD_JSON_BODIES: list[bytes] = [
    b"",
    b" ",
    b"{",
    b"}",
    b"null",
    b"[]",
    b'"x"',
    b"1e400",
    b"\xef\xbb\xbf{}",
    b'{"email": "\xff\xfe@example.com", "password": "\xc3\x28 invalid utf8"}',
    b'{"email": "a\\u0000b@example.com", "password": "correct\\u0000horse battery"}',
    b'{"email": "nul@example.com\\u0000", "password": "correct horse battery", "name": "n\\u0000ame"}',
    b'{"email": "\\ud800@example.com", "password": "\\ud800\\udfff\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800"}',
    b'{"email": "sur@example.com", "password": "\\udc00\\udc00\\udc00\\udc00\\udc00\\udc00\\udc00\\udc00\\udc00\\udc00", "name": "\\ud83d"}',
    b'{"token": "\\ud800"}',
    b'{"token": "\\u0000"}',
    b'{"token": "\\ud800", "password": "\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800\\ud800"}',
    b'{"token": "a\\u0000", "password": "a\\u0000aaaaaaaaaaaa"}',
    b'{"name": "\\ud800"}',
    b'{"name": "key\\u0000name"}',
    b'{"scopes": ["\\ud800"], "number_ids": ["\\u0000"]}',
    b'{"scopes": ["calls:read\\u0000"]}',
    b'{"number_ids": ["00000000-0000-0000-0000-00000000000\\u0000"]}',
    b'{"email": 1e400, "password": -1e400, "name": 1e-400}',
    b'{"email": ' + HUGE_INT + b', "password": ' + HUGE_INT + b"}",
    b'{"token": 123456789012345678901234567890123456789012345678901234567890}',
    b'{"name": ' + NESTED + b"}",
    NESTED,
    b'{"email": {"$ne": null}, "password": {"$gt": ""}}',
    b'{"email": "a@example.com", "email": "b@example.com", "password": "correct horse battery"}',
    b'{"email": "' + b"a" * 200_000 + b'@example.com", "password": "correct horse battery"}',
    b'{"password": "' + b"p" * 100_000 + b'", "token": "t"}',
    b'{"' + b"k" * 10_000 + b'": 1}',
    b"[" + b"{}," * 10_000 + b"{}]",
]

OTHER_CONTENT: list[tuple[str, bytes]] = [
    ("text/plain", b'{"email": "plain@example.com", "password": "correct horse battery"}'),
    ("application/x-www-form-urlencoded", b"email=form%40example.com&password=correct+horse+battery"),
    ("multipart/form-data; boundary=xyz", b'--xyz\r\nContent-Disposition: form-data; name="email"\r\n\r\na@b.c\r\n--xyz--\r\n'),
    ("multipart/form-data", b"garbage"),
    ("application/xml", b"<email>x</email>"),
    ("application/json; charset=utf-16", '{"email": "x@example.com"}'.encode("utf-16")),
    ("application/json; charset=latin-1", b'{"email": "\xe9@example.com", "password": "correct horse battery"}'),
    ("", b""),
    ("\x00", b"{}"),
    ("application/octet-stream", bytes(range(256))),
]

WEIRD_PATH_VALUES = [
    "not-an-id",
    "key_" + "0" * 32,
    "key_" + "g" * 32,
    "usr_" + "0" * 32,
    "usr_",
    "_",
    "%00",
    "%ff%fe",
    "%ed%a0%80",
    "%e2%80%ae",
    "..%2f..%2fetc",
    "a" * 5000,
]


HTML_PAGES = ("/schema", "/verify-email", "/reset-password", "/app")  # /app: the dashboard


def _operations(client: TestClient[Any]) -> list[tuple[str, str]]:
    """Every (method, path template) the app routes, static files left out."""
    found = []
    for route in client.app.routes:
        if route.path.startswith("/schema/assets"):
            continue
        for method in sorted(getattr(route, "methods", ())):
            if method not in {"OPTIONS", "HEAD"}:
                found.append((method, route.path))
    assert len(found) >= 20
    return found


def _concrete_paths(template: str) -> list[str]:
    if "{" not in template:
        return [template]
    head, _, rest = template.partition("{")
    _, _, tail = rest.partition("}")
    return [head + value + tail for value in WEIRD_PATH_VALUES]


def _sample_path(template: str, index: int = 1) -> str:
    paths = _concrete_paths(template)
    return paths[index % len(paths)]


def _assert_never_500(responses: list[tuple[str, Any]]) -> None:
    failures = [f"{what} -> {r.status_code} {r.text[:200]}" for what, r in responses if r.status_code >= 500]
    assert not failures, "\n".join(failures[:20])
    for what, response in responses:
        # The docs UI under /schema, the pages e-mailed links open and the dashboard answer HTML; the API JSON.
        if response.status_code >= 400 and not any(f" {page}" in what for page in HTML_PAGES):
            assert response.headers.get("content-type", "").startswith("application/json"), f"{what}: {response.text[:200]}"
            body = response.json()
            assert ("detail" in body) if response.status_code == 422 else ("error" in body), f"{what}: {response.text[:200]}"


def test_no_authorization_header_is_ever_answered_with_500(client, callers):
    """Authentication §1–3 and Errors: bad credentials are a 401, never a server error."""
    responses = []
    for method, template in _operations(client):
        path = _sample_path(template)
        for authorization in WEIRD_AUTHORIZATIONS:
            response = client.request(method, path, headers={"Authorization": authorization}, json={})  # type: ignore[dict-item]
            responses.append((f"{method} {path} Authorization={authorization[:40]!r}", response))
    _assert_never_500(responses)
    assert any(r.status_code == 401 for _, r in responses)


def test_no_request_body_is_ever_answered_with_500(client, callers):
    responses = []
    posts = [(m, t) for m, t in _operations(client) if m in {"POST", "DELETE", "PATCH", "PUT"}]
    for method, template in posts:
        path = _sample_path(template)
        headers = callers.admin_key if template.startswith("/v1/admin") else callers.key
        for raw in WEIRD_JSON_BODIES:
            response = client.request(method, path, content=raw, headers={**headers, "Content-Type": "application/json"})
            responses.append((f"{method} {path} body={raw[:60]!r}", response))
        for content_type, raw in OTHER_CONTENT:
            response = client.request(method, path, content=raw, headers={**headers, "Content-Type": content_type})
            responses.append((f"{method} {path} {content_type!r} body={raw[:40]!r}", response))
    _assert_never_500(responses)
    assert any(r.status_code == 422 for _, r in responses)


def test_no_path_or_query_value_is_ever_answered_with_500(client, callers):
    # An earlier test's sign-up body may have left the dashboard's session cookie in this module's
    # client: with it, /app/calls/live is a live stream, which this buffering client would wait out.
    client.cookies.clear()
    responses = []
    for method, template in _operations(client):
        headers = callers.admin_key if template.startswith("/v1/admin") else callers.key
        for path in _concrete_paths(template):
            response = client.request(method, path, headers=headers)
            responses.append((f"{method} {path[:80]}", response))
        for auth in (callers.session, {}):
            response = client.request(method, _sample_path(template, 0), headers=auth)
            responses.append((f"{method} {template} with {sorted(auth)}", response))
    for query in ("limit=%00", "limit=99999999999999999999999", "limit=1e400", "cursor=%ff", "cursor=" + "9" * 30,
                  "cursor=99999999999999999999", "cursor=%C2%B2", "cursor=%D9%A3", "type=%00", "type=" + "t" * 100, "limit=1&limit=2", "limit=%ed%a0%80"):
        responses.append((f"GET /v1/audit-events?{query[:60]}", client.get(f"/v1/audit-events?{query}", headers=callers.key)))
    _assert_never_500(responses)


def test_a_nul_character_in_a_name_is_422(client, callers):
    response = post_raw(client, "/auth/api-keys", b'{"name": "key\\u0000name"}', **callers.key)

    [error] = assert_unprocessable(response)
    assert error["loc"] == ["body", "name"]


def test_a_rotated_key_used_on_a_path_with_a_nul_does_not_stop_the_audit_trail(client, callers):
    """Authentication §7: every grace-time use is audit-logged, even on a hostile path."""
    created = client.post("/auth/api-keys", json={"name": "to rotate"}, headers=callers.key).json()
    client.post(f"/auth/api-keys/{created['key_id']}/rotate", headers=callers.key)
    old = {"Authorization": f"Bearer {created['secret']}"}

    assert client.delete("/auth/api-keys/key%00%ff", headers=old).status_code == 422

    events = client.get("/v1/audit-events", params={"type": "api_key.rotated_key_used"}, headers=callers.key)
    assert events.status_code == 200
    assert [e["data"]["path"] for e in events.json()["items"]] == ["/auth/api-keys/key\ufffd\ufffd"]
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.text


# hypothesis: arbitrary JSON values in the known field names, at every body-taking route

FIELD_NAMES = ["email", "password", "name", "token", "scopes", "number_ids", "limit", "cursor", "to", "objective",
               "outcome_schema", "consent_type", "mode", "simulation", "items", "metadata", "variables", "e164",
               "expires_at", "voice_engine", "language", "from_number"]
weird_text = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None), max_size=40
) | st.sampled_from(["\x00", "\ud800", "\udfff", "a@b.co", "x" * 3000, "sk_live_" + KEY_SUFFIX, "eyJ.eyJ.x"])
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | weird_text
json_value = st.recursive(
    json_leaf, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(weird_text, inner, max_size=4), max_leaves=12
)
bodies = st.dictionaries(st.sampled_from(FIELD_NAMES) | weird_text, json_value, max_size=5) | json_value


def _to_json_text(value: Any) -> bytes:
    # ensure_ascii keeps lone surrogates as \\udxxx escapes, the way a hostile client sends them
    return json.dumps(value, ensure_ascii=True).encode("ascii")


@hypothesis_settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies, route=st.integers(min_value=0, max_value=10_000), who=st.sampled_from(["key", "session", "none"]))
def test_arbitrary_json_bodies_never_cause_a_500(client, callers, body, route, who):
    posts = [(m, t) for m, t in _operations(client) if m in {"POST", "DELETE"}]
    method, template = posts[route % len(posts)]
    path = _sample_path(template, route)
    headers = {"key": callers.key, "session": callers.session, "none": {}}[who]
    if template.startswith("/v1/admin") and who == "key":
        headers = callers.admin_key

    response = client.request(method, path, content=_to_json_text(body), headers={**headers, "Content-Type": "application/json"})

    _assert_never_500([(f"{method} {path} {body!r:.200}", response)])


VALID_CALL = {
    "to": "+442071838750", "objective": "Confirm", "consent_type": "prior_express", "mode": "simulated",
    "outcome_schema": {"ok": {"type": "boolean"}, "when": {"type": "enum", "values": ["am", "pm"]}},
    "simulation": {"facts": {"ok": True}, "answered_by": "human"}, "metadata": {"a": 1}, "variables": {"name": "Ada"},
}
schema_fields = st.dictionaries(weird_text, st.dictionaries(st.sampled_from(["type", "optional", "description", "values"])
                                                            | weird_text, json_value, max_size=4) | json_value, max_size=4)


@hypothesis_settings(max_examples=int(os.environ.get("CALLWRIGHT_FUZZ_EXAMPLES", "60")), deadline=None, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(VALID_CALL) + ["items", "voice_engine", "language", "from_number", "voice_id"]),
       value=json_value | schema_fields, batch=st.booleans())
def test_a_call_request_with_any_one_field_gone_wrong_never_causes_a_500(client, callers, field, value, batch):
    """SPEC.md Errors: a bad call request is a 422 (or a 207 with rejected items), never a 500."""
    body: dict[str, Any] = {**VALID_CALL, field: value}
    path = "/v1/calls"
    if batch:
        body = {k: v for k, v in body.items() if k not in ("to",)}
        body.setdefault("items", [{"to": VALID_CALL["to"]}])
        path = "/v1/calls/batch"
    response = client.post(path, content=_to_json_text(body), headers={**callers.key, "Content-Type": "application/json"})

    _assert_never_500([(f"POST {path} {field}={value!r:.200}", response)])
