"""Operability over HTTP: liveness, the OpenAPI document and its offline docs page,
Prometheus metrics, and the ``X-Request-Id`` every answer carries (ARCHITECTURE.md §10–11)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from litestar.testing import TestClient

from tests.support.setup import Account, signup
from tests.support.shared_app import app, client, container, mail  # noqa: F401 - module-scoped fixtures

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


@pytest.fixture(scope="module")
def pending(client: TestClient[Any]) -> Account:
    return signup(client)


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in {"src", "href"} and value:
                self.urls.append(value)


def references(html: str) -> list[str]:
    parser = _References()
    parser.feed(html)
    return parser.urls


# --- health --------------------------------------------------------------------------------


def test_healthz_answers_200(client):
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


# /readyz: tests/contract/test_readiness.py


# --- OpenAPI and docs ----------------------------------------------------------------------


def test_openapi_document_is_3_1_and_lists_the_auth_and_v1_routes(client):
    response = client.get("/schema/openapi.json")

    assert response.status_code == 200
    document = response.json()
    assert re.fullmatch(r"3\.1\.\d+", document["openapi"])
    assert document["info"]["version"] == "0.1.0"
    paths = document["paths"]
    expected = {
        "/auth/signup": "post", "/auth/login": "post", "/auth/logout": "post", "/auth/me": "get",
        "/auth/api-keys": "post", "/auth/api-keys/{key_id}": "delete", "/auth/api-keys/{key_id}/rotate": "post",
        "/auth/verify-email": "post", "/auth/resend-verification": "post", "/auth/forgot-password": "post",
        "/auth/reset-password": "post", "/v1/audit-events": "get",
    }
    for path, method in expected.items():
        assert method in paths.get(path, {}), f"{method.upper()} {path} missing from the OpenAPI document"
    assert "get" in paths["/auth/api-keys"]
    operation_ids = [op["operationId"] for item in paths.values() for op in item.values() if isinstance(op, dict) and "operationId" in op]
    assert len(operation_ids) == len(set(operation_ids))


def test_openapi_document_describes_validation_errors_in_the_spec_shape(client):
    """SPEC.md Errors: 422 is {detail: [{loc, msg, type, input, ctx}]}; no framework 400 shape."""
    document = client.get("/schema/openapi.json").json()
    signup = document["paths"]["/auth/signup"]["post"]["responses"]
    assert "400" not in signup
    assert signup["422"]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/ValidationError"
    item = document["components"]["schemas"]["ValidationError"]["properties"]["detail"]["items"]
    assert set(item["required"]) == {"loc", "msg", "type", "input", "ctx"}


def test_openapi_document_leaves_out_metrics_and_static_assets(client):
    paths = client.get("/schema/openapi.json").json()["paths"]

    assert "/metrics" not in paths
    assert not any(path.startswith("/schema/assets") for path in paths)


def test_docs_page_references_only_local_urls(client):
    """The docs must work without a network: no asset from a CDN or any other host."""
    response = client.get("/schema")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    # Only the examples of the embedded OpenAPI document name a host, a reserved one (RFC 2606).
    hosts = {urlsplit(url).hostname or "" for url in re.findall(r"https?://[^\s\"'<>]+", html)}
    assert not {host for host in hosts if host != "example.com" and not host.endswith(".example.com")}
    urls = references(html)
    assert urls, "the docs page references no script or stylesheet"
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, url
        assert url.startswith("/"), url


def test_every_asset_of_the_docs_page_answers_200(client):
    html = client.get("/schema").text

    urls = references(html)
    assert any(url.endswith(".js") for url in urls) and any(url.endswith(".css") for url in urls)
    for url in urls:
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert len(asset.content) > 1000, url


# --- metrics -------------------------------------------------------------------------------


def test_metrics_expose_request_counts_by_route_template(client, pending):
    client.get("/healthz")
    client.delete("/auth/api-keys/key_" + "0" * 32, headers=pending.headers)
    client.get("/no/such/route-4711")

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert "# TYPE callwright_http_requests_total counter" in text
    assert re.search(r'callwright_http_requests_total\{method="GET",route="/healthz",status="200"\} [1-9]', text)
    assert re.search(r'callwright_http_requests_total\{method="DELETE",route="/auth/api-keys/\{key_id[^"]*\}",status="404"\}', text)
    assert "callwright_http_request_duration_seconds_bucket" in text
    # raw paths never become label values (unbounded cardinality, and paths may carry ids)
    assert "route-4711" not in text and "key_" + "0" * 32 not in text


# --- request ids ---------------------------------------------------------------------------


def test_every_answer_carries_a_request_id(client, pending):
    answers = {
        "200": client.get("/healthz"),
        "201": client.post("/auth/signup", json={"email": "rid@example.com", "password": "correct horse battery"}),
        "401": client.get("/v1/audit-events"),
        "401 bad key": client.get("/auth/me", headers={"Authorization": "Bearer sk_live_" + "A" * 32}),
        "403": client.get("/v1/audit-events", headers=pending.headers),
        "404": client.get("/no/such/route"),
        "405": client.put("/healthz"),
        "422": client.post("/auth/signup", json={}),
        "422 json": client.post("/auth/signup", content=b"{", headers={"Content-Type": "application/json"}),
        "docs": client.get("/schema"),
        "metrics": client.get("/metrics"),
    }

    for what, response in answers.items():
        assert REQUEST_ID.match(response.headers.get("x-request-id", "")), what
    assert answers["401"].status_code == 401 and answers["404"].status_code == 404 and answers["403"].status_code == 403
    ids = [response.headers["x-request-id"] for response in answers.values()]
    assert len(set(ids)) == len(ids), "request ids repeat"


def test_a_valid_incoming_request_id_is_echoed(client):
    for incoming in ("req-123", "4bf92f3577b34da6a3ce929d0e0e4736", "trace:abc.DEF_9-x"):
        for response in (client.get("/healthz", headers={"X-Request-Id": incoming}),
                         client.get("/v1/audit-events", headers={"X-Request-Id": incoming})):
            assert response.headers["x-request-id"] == incoming


@pytest.mark.parametrize(
    "incoming",
    ["has space", "x" * 129, "<script>", "a/b", "", "semi;colon", "caf\u00e9"],
    ids=["space", "too-long", "markup", "slash", "empty", "semicolon", "non-ascii"],
)
def test_an_invalid_incoming_request_id_is_replaced(client, incoming):
    response = client.get("/healthz", headers={"X-Request-Id": incoming.encode("utf-8")})  # type: ignore[dict-item]

    echoed = response.headers["x-request-id"]
    assert echoed != incoming
    assert REQUEST_ID.match(echoed)
    assert len(response.headers.get_list("x-request-id")) == 1
