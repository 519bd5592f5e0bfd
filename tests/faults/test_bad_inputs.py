"""The bounded inputs of issue 13 (item 5) sent to a running ``callwright serve`` as an operator
or a careless client would: instants past the calendar, outcome schemas over their limits, NUL
characters in free JSON, malformed requests. Each is answered 4xx with a JSON error body (422s in
SPEC.md's ``detail`` shape, naming the loc), quickly, never a 5xx; afterwards the server is
healthy and its log holds no traceback. The in-process twins of several of these are in
``tests/contract``; this module goes through real HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.service import ServeProcess, approved_key, bearer, offline_server
from tests.support.readme import first_call_body

pytestmark = pytest.mark.e2e
UNLIMITED = '{"standard": 1000000}'
RANGE = {"ge": "0001-01-02T00:00:00Z", "lt": "9999-12-01T00:00:00Z"}
QUICK = 5.0  # seconds: a refusal is cheap, whatever the size of what is refused


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-bad-inputs-", rate_limit_tiers=UNLIMITED) as process:
        yield process


@pytest.fixture(scope="module")
def headers(server: ServeProcess) -> dict[str, str]:
    return bearer(approved_key(server, "inputs@example.com"))


@pytest.fixture(scope="module")
def http(server: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30.0, trust_env=False) as client:
        yield client


def refused(response: httpx.Response, *statuses: int) -> dict[str, Any]:
    """A 4xx (one of ``statuses`` when given) with a JSON error body: the body."""
    what = f"{response.request.method} {str(response.request.url)[:120]} -> {response.status_code} {response.text[:300]}"
    assert 400 <= response.status_code < 500, what
    if statuses:
        assert response.status_code in statuses, what
    assert response.headers.get("content-type", "").startswith("application/json"), what
    body = response.json()
    assert isinstance(body, dict), what
    if response.status_code == 422:
        assert isinstance(body.get("detail"), list) and body["detail"], what
        for problem in body["detail"]:
            assert {"loc", "msg", "type", "input", "ctx"} <= set(problem), what
    else:
        assert isinstance(body.get("error"), dict) and body["error"].get("code"), what
    return body


def problems(response: httpx.Response) -> list[tuple[list[Any], str, dict[str, Any]]]:
    return [(p["loc"], p["type"], p["ctx"]) for p in refused(response, 422)["detail"]]


def call(**overrides: Any) -> dict[str, Any]:
    """The README's first call with ``overrides``: valid as it stands (see the first test)."""
    return {**first_call_body(), **overrides}


def test_the_base_call_is_accepted(http: httpx.Client, headers: dict[str, str]) -> None:
    """The control: what the other tests change is the only thing wrong with their requests."""
    response = http.post("/v1/calls", json=call(), headers=headers)
    assert response.status_code == 201, response.text
    assert http.get("/v1/calls", params={"start": "2026-01-01T00:00:00Z"}, headers=headers).status_code == 200


@pytest.mark.parametrize(("name", "value"), [
    ("start", "9999-12-31T23:59:59-14:00"),
    ("end", "9999-12-31T23:59:59-14:00"),
    ("start", "0001-01-01T00:00:00+14:00"),
    ("end", "0001-01-01T00:00:00+14:00"),
])
def test_a_list_instant_past_the_calendar_is_422(http: httpx.Client, headers: dict[str, str], name: str,
                                                  value: str) -> None:
    response = http.get("/v1/calls", params={name: value}, headers=headers)  # httpx encodes the "+"
    assert problems(response) == [(["query", name], "datetime_out_of_range", RANGE)]


def test_an_enum_of_100000_values_is_refused_quickly(http: httpx.Client, headers: dict[str, str]) -> None:
    schema = {"reason": {"type": "enum", "values": [f"r{n}" for n in range(100_000)]}}  # about 790 KB of JSON
    started = time.monotonic()
    response = http.post("/v1/calls", json=call(outcome_schema=schema), headers=headers)
    took = time.monotonic() - started

    refused(response, 422, 413)
    assert took < QUICK, f"refused after {took:.1f} s"
    if response.status_code == 422:
        found = {(tuple(loc), kind): ctx for loc, kind, ctx in problems(response)}
        assert found[(("body", "outcome_schema", "reason", "values"), "too_long")] == {"max_length": 100}


def test_an_enum_value_over_the_length_limit_is_422_at_its_place(http: httpx.Client, headers: dict[str, str]) -> None:
    schema = {"pick": {"type": "enum", "values": ["a", "b" * 101]}}
    response = http.post("/v1/calls", json=call(outcome_schema=schema), headers=headers)
    assert problems(response) == [(["body", "outcome_schema", "pick", "values", 1], "string_too_long",
                                   {"max_length": 100})]


def test_a_schema_over_the_size_limit_is_422(http: httpx.Client, headers: dict[str, str]) -> None:
    # 40 fields (of 50 allowed), each described in 450 characters (of 500): about 19 KB, over 16 KB.
    schema = {f"field_{n}": {"type": "string", "description": "d" * 450} for n in range(40)}
    response = http.post("/v1/calls", json=call(outcome_schema=schema), headers=headers)
    assert problems(response) == [(["body", "outcome_schema"], "too_long", {"max_bytes": 16_384})]


@pytest.mark.parametrize(("metadata", "loc"), [
    ({"crm": "a\u0000b"}, ["body", "metadata", "crm"]),
    ({"crm": {"ids": ["ok", "x\u0000"]}}, ["body", "metadata", "crm", "ids", 1]),
    ({"cr\u0000m": "ok"}, ["body", "metadata", "cr\u0000m", "[key]"]),
    ({"crm": {"in\u0000ner": 1}}, ["body", "metadata", "crm", "in\u0000ner", "[key]"]),
], ids=["value", "nested-value", "key", "nested-key"])
def test_a_nul_in_metadata_is_422_at_its_loc(http: httpx.Client, headers: dict[str, str], metadata: dict[str, Any],
                                             loc: list[Any]) -> None:
    response = http.post("/v1/calls", json=call(metadata=metadata), headers=headers)
    assert [(found, kind) for found, kind, _ in problems(response)] == [(loc, "value_error")]


@pytest.mark.parametrize("at", ["9999-12-31T23:59:59.999999-14:00", "0001-01-01T00:00:00+14:00",
                                "9999-12-31T23:00:00Z"])
def test_a_simulation_instant_past_the_calendar_is_422(http: httpx.Client, headers: dict[str, str], at: str) -> None:
    body = call()
    body["simulation"] = {**body["simulation"], "at": at}
    response = http.post("/v1/calls", json=body, headers=headers)
    assert problems(response) == [(["body", "simulation", "at"], "datetime_out_of_range", RANGE)]


@pytest.mark.parametrize(("content", "content_type"), [
    (b'{"to": "+442071838750",', "application/json"),  # cut short
    (b"{'to': '+442071838750'}", "application/json"),  # not JSON
    (b'{"to": 1} trailing', "application/json"),
    (b"\xff\xfe{}", "application/json"),  # not UTF-8
    (b"[" * 100_000 + b"]" * 100_000, "application/json"),  # nested past any recursion limit
    (b"", "application/json"),  # no body
    (b"[]", "application/json"),  # not an object
    (b'"a call"', "application/json"),
    (b"null", "application/json"),
    (b"to=%2B442071838750&objective=x", "application/x-www-form-urlencoded"),  # wrong content type
    (b'{"to": "+442071838750"}', "text/plain"),
    (b"<call/>", "application/xml"),
], ids=["truncated", "quotes", "trailing", "not-utf8", "deep", "empty", "array", "string", "null", "form",
        "text-plain", "xml"])
@pytest.mark.parametrize("path", ["/v1/calls", "/v1/calls/batch"])
def test_a_malformed_request_is_4xx(http: httpx.Client, headers: dict[str, str], path: str, content: bytes,
                                    content_type: str) -> None:
    response = http.post(path, content=content, headers={**headers, "Content-Type": content_type})
    refused(response)


def test_a_body_over_the_cap_is_413(http: httpx.Client, headers: dict[str, str]) -> None:
    body = call(metadata={"padding": "x" * 1_100_000})  # the server reads at most 1,000,000 bytes of a body
    started = time.monotonic()
    response = http.post("/v1/calls", json=body, headers=headers)
    refused(response, 413)
    assert time.monotonic() - started < QUICK
    # The rest of the body was never read: the server says it closes the connection, so that the
    # client's next request goes on a new one instead of meeting a disconnect.
    assert response.headers.get("connection") == "close"


def test_the_server_is_healthy_afterwards_and_logged_no_traceback(server: ServeProcess, http: httpx.Client,
                                                                  headers: dict[str, str]) -> None:
    # Module order: this runs after every refusal above.
    assert http.get("/healthz").status_code == 200
    assert http.post("/v1/calls", json=call(), headers=headers).status_code == 201
    log = server.output()
    assert "Traceback" not in log, log[-5000:]
    assert '"level":"critical"' not in log.replace(" ", ""), log[-5000:]
