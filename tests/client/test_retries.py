"""Retries, backoff and ``Idempotency-Key`` against ``httpx.MockTransport`` (answers made in-process):
what is sent again, after how long, and what is never sent twice."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import httpx
import pytest

from callwright_client import APIConnectionError, Client, NotFoundError, RateLimitError, ServerError, ValidationError
from callwright_client._retry import delay
from tests.client.support import LOOPBACK, call_json

Handler = Callable[[httpx.Request], httpx.Response]


def scripted(*answers: httpx.Response | Exception) -> tuple[list[httpx.Request], httpx.MockTransport]:
    """A transport answering each request with the next of ``answers`` (the last one repeats)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers[min(len(seen), len(answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return seen, httpx.MockTransport(handler)


def error(status: int, code: str, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": {"code": code, "message": f"{code} happened"}})


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The client's waits, recorded instead of slept."""
    waited: list[float] = []
    monkeypatch.setattr("callwright_client._sync.time.sleep", waited.append)
    return waited


def test_a_429_is_retried_after_its_retry_after() -> None:
    stamps: list[float] = []
    answers = [error(429, "rate_limited", **{"Retry-After": "0.1"}), httpx.Response(200, json=call_json())]

    def handler(request: httpx.Request) -> httpx.Response:
        stamps.append(time.monotonic())
        return answers[len(stamps) - 1]

    with Client("sk_live_test", LOOPBACK, transport=httpx.MockTransport(handler), backoff=5.0) as client:
        call = client.calls.get("cll_1")
    assert call.call_id == "cll_1" and len(stamps) == 2
    assert 0.1 <= stamps[1] - stamps[0] < 2.0  # Retry-After, not the 5 s backoff


def test_429_after_every_retry_is_a_rate_limit_error(sleeps: list[float]) -> None:
    seen, transport = scripted(error(429, "rate_limited", **{"Retry-After": "7"}))
    with Client("sk_live_test", LOOPBACK, transport=transport, max_retries=2) as client:
        with pytest.raises(RateLimitError) as raised:
            client.calls.get("cll_1")
    assert len(seen) == 3 and sleeps == [7.0, 7.0]
    assert raised.value.retry_after == 7.0 and raised.value.code == "rate_limited" and raised.value.status == 429


def test_backoff_doubles_and_every_wait_is_capped_at_30_s(sleeps: list[float]) -> None:
    seen, transport = scripted(error(502, "upstream"), error(502, "upstream"), error(503, "busy", **{"Retry-After": "99"}),
                               httpx.Response(200, json=call_json()))
    with Client("sk_live_test", LOOPBACK, transport=transport, backoff=0.25) as client:
        client.calls.get("cll_1")
    assert len(seen) == 4 and sleeps == [0.25, 0.5, 30.0]
    assert delay(10, 0.5) == 30.0 and delay(0, 0.5, retry_after=-3) == 0.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_4xx_are_never_retried(status: int, sleeps: list[float]) -> None:
    seen, transport = scripted(error(status, "refused"))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client, pytest.raises(Exception) as raised:
        client.calls.create(to="+442071838750")
    assert len(seen) == 1 and sleeps == [] and getattr(raised.value, "status", None) == status


def test_a_422_lists_its_problems() -> None:
    detail = [{"loc": ["body", "to"], "msg": "Field required", "type": "missing", "input": None, "ctx": {}}]
    _, transport = scripted(httpx.Response(422, json={"detail": detail}))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client, pytest.raises(ValidationError) as raised:
        client.calls.create(objective="x")
    assert raised.value.detail == detail and "body.to: Field required" in str(raised.value)


def test_a_call_create_is_retried_with_one_idempotency_key(sleeps: list[float]) -> None:
    seen, transport = scripted(httpx.ReadError("connection reset"), error(500, "internal"),
                               httpx.Response(201, json=call_json()))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client:
        assert client.calls.create(to="+442071838750").call_id == "cll_1"
    keys = {request.headers["Idempotency-Key"] for request in seen}
    assert len(seen) == 3 and len(keys) == 1 and len(next(iter(keys))) == 32


def test_creates_the_server_does_not_deduplicate_are_not_sent_again_once_it_may_have_acted(
        sleeps: list[float]) -> None:
    """A webhook, key, template or flow create has an Idempotency-Key its route ignores: after a 5xx
    or a dropped answer it might exist already, so the error is the caller's to judge."""
    seen, transport = scripted(httpx.ReadError("connection reset"))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client, pytest.raises(APIConnectionError):
        client.webhooks.create("https://example.com/hooks")
    assert len(seen) == 1 and seen[0].headers["Idempotency-Key"]
    seen, transport = scripted(error(500, "internal"))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client, pytest.raises(ServerError):
        client.api_keys.create(name="x")
    assert len(seen) == 1


def test_a_connection_never_made_is_retried_for_any_request(sleeps: list[float]) -> None:
    seen, transport = scripted(httpx.ConnectError("refused"), error(503, "database_unavailable", **{"Retry-After": "1"}),
                               httpx.Response(201, json={"id": "tpl_1", "name": "t"}))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client:
        assert client.templates.create(name="t").id == "tpl_1"
    assert len(seen) == 3 and sleeps == [0.5, 1.0]


def test_connection_errors_end_as_api_connection_error_after_the_retries(sleeps: list[float]) -> None:
    seen, transport = scripted(httpx.ConnectError("refused"))
    with Client("sk_live_test", LOOPBACK, transport=transport, max_retries=1) as client:
        with pytest.raises(APIConnectionError) as raised:
            client.calls.list_page()
    assert len(seen) == 2 and raised.value.status is None and "ConnectError" in str(raised.value)


def test_a_caller_given_idempotency_key_is_sent_as_given() -> None:
    seen, transport = scripted(httpx.Response(207, json={"accepted": 1, "rejected": 0, "items": [
        {"to": "+442071838750", "call_id": "cll_1", "status": "queued"}]}))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client:
        result = client.calls.batch([{"to": "+442071838750"}], idempotency_key="order-17", objective="x")
    assert result.call_ids == ["cll_1"] and seen[0].headers["Idempotency-Key"] == "order-17"
    assert json.loads(seen[0].content) == {"objective": "x", "items": [{"to": "+442071838750"}]}


def test_reads_carry_no_idempotency_key_and_404_is_not_found() -> None:
    seen, transport = scripted(error(404, "call_not_found"))
    with Client("sk_live_test", LOOPBACK, transport=transport) as client, pytest.raises(NotFoundError) as raised:
        client.calls.get("cll_2")
    assert "Idempotency-Key" not in seen[0].headers and raised.value.code == "call_not_found"
