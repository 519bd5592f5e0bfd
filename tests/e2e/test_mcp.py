"""The tool interface (issue 18 item 1; SPEC.md "Tool interface"): exactly four tools with the
spec's parameters; ``make_call`` makes the call a REST create makes; API refusals (422, 403) come
back as tool errors carrying the API's status, code and message; ``callwright mcp`` serves the
tools over stdio to a child-process client, and without a key says so and exits 2; ``callwright
serve`` hosts them over Streamable HTTP (``/mcp``) and SSE (``/mcp/sse``) with the caller's bearer,
and answers 401 to a missing, unknown or revoked key before any tool runs."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from callwright_client import AsyncClient
from entrypoints.mcp.tools import build_server
from tests.e2e.service import ServeProcess, approved_key, bearer, callwright_executable, offline_server
from tests.support.call_requests import call_body

pytestmark = pytest.mark.e2e

AT = "2026-12-01T10:00:00Z"  # inside London's call hours, whatever the hour the test runs
_accounts = itertools.count(1)


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-mcp-", rate_limit_tiers='{"standard": 1000000}') as started:
        yield started


@pytest.fixture
def key(server: ServeProcess) -> str:
    return approved_key(server, f"mcp-{next(_accounts)}@example.com")


def tools_of(server: ServeProcess, key: str) -> Any:
    async def client_for(_context: object) -> AsyncClient:
        return AsyncClient(key, server.base_url, transport=httpx.AsyncHTTPTransport())

    return build_server(client_for)


def call_arguments() -> dict[str, Any]:
    body = call_body()
    return {"to": body["to"], "objective": body["objective"], "outcome_schema": body["outcome_schema"],
            "consent_type": body["consent_type"], "mode": "simulated",
            "simulation": {**body["simulation"], "at": AT}}


def rest(server: ServeProcess, key: str, method: str, path: str, **options: Any) -> httpx.Response:
    with httpx.Client(base_url=server.base_url, transport=httpx.HTTPTransport()) as http:
        return http.request(method, path, headers={"Authorization": f"Bearer {key}"}, **options)


def finished(server: ServeProcess, key: str, call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while True:
        record = rest(server, key, "GET", f"/v1/calls/{call_id}").json()
        if record["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return record
        time.sleep(0.05)


def test_exactly_four_tools_with_the_specs_parameters(server, key):
    async def listed() -> dict[str, Any]:
        async with McpClient(tools_of(server, key)) as client:
            return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

    tools = asyncio.run(listed())
    assert set(tools) == {"make_call", "get_call", "list_calls", "list_numbers"}
    assert set(tools["make_call"]["required"]) == {"to", "objective", "outcome_schema", "consent_type"}
    assert {"voice_id", "voice_engine", "language", "from_number", "mode", "simulation", "metadata", "template_id",
            "flow_id"} <= set(tools["make_call"]["properties"])
    assert tools["get_call"]["required"] == ["call_id"]
    status = json.dumps(tools["list_calls"]["properties"]["status"])
    assert all(value in status for value in ("queued", "in_progress", "completed", "failed"))
    assert set(tools["list_calls"]["properties"]) == {"status", "limit", "offset"}
    assert set(tools["list_numbers"]["properties"]) == {"limit", "cursor"}


def test_make_call_makes_the_call_a_rest_create_makes(server, key):
    async def scenario() -> tuple[dict[str, Any], Any, Any]:
        async with McpClient(tools_of(server, key)) as client:
            made = await client.call_tool("make_call", call_arguments())
            assert not made.is_error, made.content
            call_id = made.structured_content["call_id"]
            finished(server, key, call_id)
            read = await client.call_tool("get_call", {"call_id": call_id})
            listed = await client.call_tool("list_calls", {"status": "completed", "limit": 5})
            return made.structured_content, read.structured_content, listed.structured_content

    made, read, listed = asyncio.run(scenario())
    assert made["status"] == "queued" and made["call_id"].startswith("cll_")
    by_rest = rest(server, key, "POST", "/v1/calls", json={**call_arguments()}).json()
    twin = finished(server, key, by_rest["call_id"])
    assert read == rest(server, key, "GET", f"/v1/calls/{made['call_id']}").json()
    same = ("status", "to", "objective", "outcome", "outcome_schema", "consent_type", "mode", "transcript")
    assert {name: read[name] for name in same} == {name: twin[name] for name in same}
    assert made["call_id"] in [call["call_id"] for call in listed["data"]]


def test_api_refusals_come_back_as_tool_errors_with_the_apis_words(server, key):
    reader = rest(server, key, "POST", "/auth/api-keys", json={"scopes": ["calls:read"]}).json()["secret"]

    async def scenario() -> tuple[Any, Any]:
        async with McpClient(tools_of(server, key)) as client:
            invalid = await client.call_tool("make_call", {**call_arguments(), "to": "+1"})
        async with McpClient(tools_of(server, reader)) as client:
            refused = await client.call_tool("make_call", call_arguments())
        return invalid, refused

    invalid, refused = asyncio.run(scenario())
    assert invalid.is_error and "HTTP 422" in invalid.content[0].text and "to:" in invalid.content[0].text
    assert refused.is_error and "HTTP 403 insufficient_scope" in refused.content[0].text
    assert "Traceback" not in invalid.content[0].text + refused.content[0].text


def test_stdio_serves_the_tools_to_a_child_process_client(server, key):
    created = rest(server, key, "POST", "/v1/calls", json=call_arguments()).json()
    parameters = StdioServerParameters(command=callwright_executable(), args=["mcp"], env={
        **{name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ},
        "OPENPHN_API_KEY": key, "CALLWRIGHT_BASE_URL": server.base_url})

    async def scenario() -> tuple[set[str], Any]:
        async with McpClient(parameters) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            return names, await client.call_tool("get_call", {"call_id": created["call_id"]})

    names, read = asyncio.run(scenario())
    assert names == {"make_call", "get_call", "list_calls", "list_numbers"}
    assert not read.is_error and read.structured_content["call_id"] == created["call_id"]


def test_stdio_without_a_key_says_which_variable_and_exits_2(tmp_path):
    env = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    done = subprocess.run([callwright_executable(), "mcp"], env={**env, "CALLWRIGHT_MCP_KEY_ENV": "MY_KEY"},
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert done.returncode == 2 and "MY_KEY" in done.stderr and done.stdout == ""


def hosted(server: ServeProcess, key: str | None, transport: str) -> Any:
    """A client transport to the hosted tool interface of ``server``, sending ``key`` as its bearer."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if transport == "sse":
        def loopback_client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
            return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, trust_env=False)

        return sse_client(f"{server.base_url}/mcp/sse", headers=headers, httpx_client_factory=loopback_client)
    return streamable_http_client(f"{server.base_url}/mcp", http_client=httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30.0), trust_env=False))


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
def test_hosted_transports_serve_the_tools_with_the_callers_key(server, key, transport):
    reader = rest(server, key, "POST", "/auth/api-keys", json={"scopes": ["calls:read"]}).json()["secret"]

    async def scenario() -> tuple[set[str], Any, Any, Any]:
        async with McpClient(hosted(server, key, transport)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            made = await client.call_tool("make_call", call_arguments())
            assert not made.is_error, made.content
            finished(server, key, made.structured_content["call_id"])
            read = await client.call_tool("get_call", {"call_id": made.structured_content["call_id"]})
        async with McpClient(hosted(server, reader, transport)) as client:
            refused = await client.call_tool("make_call", call_arguments())
        return names, made.structured_content, read.structured_content, refused

    names, made, read, refused = asyncio.run(scenario())
    assert names == {"make_call", "get_call", "list_calls", "list_numbers"}
    assert made["status"] == "queued" and read["status"] == "completed"
    assert read == rest(server, key, "GET", f"/v1/calls/{made['call_id']}").json()
    assert refused.is_error and "HTTP 403 insufficient_scope" in refused.content[0].text


def test_hosted_transports_answer_401_without_a_good_key(server, key):
    revoked = rest(server, key, "POST", "/auth/api-keys", json={"scopes": ["calls:read"]}).json()
    assert rest(server, key, "DELETE", f"/auth/api-keys/{revoked['key_id']}").status_code == 200
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    bad = {"none": {}, "garbage": {"Authorization": "Bearer nonsense"},
           "unknown": {"Authorization": "Bearer sk_live_" + "x" * 40},
           "revoked": {"Authorization": f"Bearer {revoked['secret']}"}}
    with httpx.Client(base_url=server.base_url, transport=httpx.HTTPTransport(), timeout=10) as http:
        for name, headers in bad.items():
            for method, path in (("POST", "/mcp"), ("GET", "/mcp/sse"), ("POST", "/mcp/messages/?session_id=0")):
                answer = http.request(method, path, headers={**accept, **headers}, json=initialize)
                assert answer.status_code == 401, (name, method, path, answer.text)
                assert answer.json()["error"]["code"] in ("missing_credentials", "invalid_api_key", "api_key_revoked")
                assert answer.headers["www-authenticate"].startswith("Bearer")
        assert http.get("/mcp/elsewhere", headers=bearer(key)).status_code == 404
        opened = http.post("/mcp", headers={**accept, **bearer(key)}, json=initialize)
        assert opened.status_code == 200, opened.text
        rebound = http.post("/mcp", headers={**accept, **bearer(key), "Host": "attacker.example"}, json=initialize)
        assert rebound.status_code in (403, 421), rebound.text  # DNS-rebinding protection stays on
