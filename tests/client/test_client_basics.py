"""The client's set-up and shapes without a server (``httpx.MockTransport``): where the key and
URL come from, what every request carries, typed answers that keep every field, header paging,
downloads and the async client."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

import callwright_client
from callwright_client import AsyncClient, Call, Client, ConfigurationError, WaitTimeout
from tests.client.support import LOOPBACK, call_json

ENV = ("CALLWRIGHT_API_KEY", "OPENPHN_API_KEY", "CALLWRIGHT_BASE_URL")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def echo(seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=call_json())

    return httpx.MockTransport(handler)


def test_without_a_key_the_client_refuses_to_start(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Client()
    assert "CALLWRIGHT_API_KEY" in str(raised.value) and "OPENPHN_API_KEY" in str(raised.value)
    assert isinstance(raised.value, callwright_client.CallwrightError)


@pytest.mark.parametrize(("env", "expected"), [
    ({"OPENPHN_API_KEY": "sk_live_b"}, "sk_live_b"),
    ({"CALLWRIGHT_API_KEY": "sk_live_a"}, "sk_live_a"),
    ({"CALLWRIGHT_API_KEY": "sk_live_a", "OPENPHN_API_KEY": "sk_live_b"}, "sk_live_a"),  # as the CLI reads them
])
def test_the_key_and_the_server_come_from_the_environment(clean_env: pytest.MonkeyPatch, env: dict[str, str],
                                                          expected: str) -> None:
    for name, value in env.items():
        clean_env.setenv(name, value)
    clean_env.setenv("CALLWRIGHT_BASE_URL", "http://127.0.0.1:9/")
    seen: list[httpx.Request] = []
    with Client(transport=echo(seen)) as client:
        client.calls.get("cll_1")
        assert client.base_url == "http://127.0.0.1:9"
    assert seen[0].headers["Authorization"] == f"Bearer {expected}"
    assert str(seen[0].url) == "http://127.0.0.1:9/v1/calls/cll_1"


def test_the_default_server_is_local(clean_env: pytest.MonkeyPatch) -> None:
    with Client("sk_live_x", transport=echo([])) as client:
        assert client.base_url == "http://127.0.0.1:8000"


def test_every_request_names_the_client_and_its_httpx() -> None:
    seen: list[httpx.Request] = []
    with Client("sk_live_x", LOOPBACK, transport=echo(seen)) as client:
        client.calls.get("cll_1")
    assert seen[0].headers["User-Agent"] == f"callwright-python/{callwright_client.__version__} httpx/{httpx.__version__}"


def test_answers_keep_fields_this_release_does_not_name() -> None:
    body = {**call_json(status="completed", outcome={"ok": True}), "from": "+15550001111", "brand_new": [1, 2]}
    call = Call.from_json(body)
    assert call.from_number == "+15550001111" and call.outcome == {"ok": True} and call.ended
    assert call.raw["brand_new"] == [1, 2] and call.to is None


def test_filters_are_sent_as_the_api_reads_them() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"data": [], "next_cursor": None, "total": 0, "limit": 5, "offset": 0})

    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
        assert list(client.calls.list(has_outcome=True, start=start, status=None, limit=5)) == []
    assert dict(seen[0].url.params) == {"has_outcome": "true", "start": "2026-01-02T03:04:05+00:00", "limit": "5"}


def test_numbers_are_paged_by_the_x_next_cursor_header() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if "cursor" not in request.url.params:
            return httpx.Response(200, json=[{"id": "n1", "e164": "+1"}], headers={"X-Next-Cursor": "c2"})
        return httpx.Response(200, json=[{"id": "n2", "e164": "+2"}])

    with Client("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
        numbers = client.numbers.list(limit=1)
    assert [n.id for n in numbers] == ["n1", "n2"] and seen[1].url.params["cursor"] == "c2"
    assert seen[1].url.params["limit"] == "1"


class BrokenStream(httpx.SyncByteStream):
    """A body cut off after its first bytes."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        yield b"call_id,created_at\ncll_0,"
        raise httpx.ReadError("connection reset mid-body")


def test_a_download_cut_off_is_fetched_again_into_a_rewritten_file(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("callwright_client._sync.time.sleep", lambda seconds: None)
    answers = [httpx.Response(502, json={"error": {"code": "bad_gateway", "message": "try again"}}),
               httpx.Response(200, stream=BrokenStream()),
               httpx.Response(200, content=b"call_id,created_at\ncll_1,2026\n")]
    transport = httpx.MockTransport(lambda request: answers.pop(0))
    target = tmp_path / "calls.csv"
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        assert client.calls.export_csv(target, status="completed") == 30
    assert target.read_bytes() == b"call_id,created_at\ncll_1,2026\n" and answers == []


def test_wait_gives_up_with_the_last_record() -> None:
    with Client("sk_live_x", LOOPBACK, transport=echo([])) as client, pytest.raises(WaitTimeout) as raised:
        client.calls.wait("cll_1", timeout=0.05, interval=0.01)
    assert raised.value.call.status == "queued"


def test_the_async_client_has_the_same_resources() -> None:
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "POST":
            return httpx.Response(201, json=call_json())
        return httpx.Response(200, json=call_json(status="completed"))

    async def scenario() -> Call:
        async with AsyncClient("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
            created = await client.calls.create(to="+442071838750", simulation={"at": datetime(2026, 12, 1, 10)})
            return await client.calls.wait(created.call_id)

    assert asyncio.run(scenario()).status == "completed"
    assert json.loads(seen[0].content)["simulation"] == {"at": "2026-12-01T10:00:00"}
    assert len(seen[0].headers["Idempotency-Key"]) == 32
    public = {name for name in dir(Client("sk_live_x", LOOPBACK, transport=echo([]))) if not name.startswith("_")}
    assert public == {name for name in dir(AsyncClient("sk_live_x", LOOPBACK)) if not name.startswith("_")}
