"""``client.webhooks.verify_signature``: a receiver holding a client finds the check on the webhooks
resource (``Client`` and ``AsyncClient``), the module function itself, sending nothing.
SPEC.md Events §4–§5: ``X-Service-Signature`` is ``sha256=`` and the hex HMAC-SHA256 of
``<timestamp>.<raw_body>`` with the endpoint secret; a receiver verifies before processing, compares
in constant time and rejects a timestamp more than about 5 minutes old."""

from __future__ import annotations

import asyncio
import inspect
import time

import httpx
import pytest

import callwright_client
from callwright_client import AsyncClient, Client, InvalidSignature
from domain.webhooks import signing
from tests.client.support import LOOPBACK

SECRET = "whsec_receiver-resource"
BODY = b'{"id":"evt_1","type":"call.completed","created_at":"2026-11-28T10:00:00Z","data":{"call_id":"cll_1"}}'


def delivery(timestamp: int, body: bytes = BODY, secret: str = SECRET) -> dict[str, str]:
    """The headers the service's sender puts on one attempt."""
    return signing.headers(secret, timestamp, body, event_type="call.completed", delivery_uuid="d-1")


def nothing_sent(seen: list[httpx.Request]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    return httpx.MockTransport(handler)


def test_the_sync_client_verifies_a_delivery_on_its_webhooks_resource() -> None:
    """SPEC.md Events §5: a genuine delivery gives its event; a changed body, another secret or a
    timestamp more than 5 minutes old is refused. No request leaves the client."""
    seen: list[httpx.Request] = []
    now = int(time.time())
    with Client("sk_live_x", LOOPBACK, transport=nothing_sent(seen)) as client:
        event = client.webhooks.verify_signature(BODY, delivery(now), SECRET)
        assert event == callwright_client.verify_signature(BODY, delivery(now), SECRET)
        assert event["data"]["call_id"] == "cll_1"
        assert client.webhooks.verify_signature(BODY.decode(), delivery(now), secret=SECRET)["id"] == "evt_1"
        for body, headers, secret in ((BODY.replace(b"cll_1", b"cll_2"), delivery(now), SECRET),
                                      (BODY, delivery(now), "whsec_another"),
                                      (BODY, delivery(now - 301), SECRET)):
            with pytest.raises(InvalidSignature):
                client.webhooks.verify_signature(body, headers, secret)
        # the tolerance and the clock are the module function's too
        assert client.webhooks.verify_signature(BODY, delivery(1_000), SECRET, now=1_200)["id"] == "evt_1"
        with pytest.raises(InvalidSignature):
            client.webhooks.verify_signature(BODY, delivery(1_000), SECRET, 60, now=1_200)
    assert seen == []


def test_the_async_client_has_it_too_as_a_plain_call() -> None:
    """SPEC.md Events §5 on ``AsyncClient().webhooks``: the same check, not awaited (no I/O)."""
    seen: list[httpx.Request] = []

    async def scenario() -> dict[str, object]:
        async with AsyncClient("sk_live_x", LOOPBACK, transport=nothing_sent(seen)) as client:
            assert not inspect.iscoroutinefunction(client.webhooks.verify_signature)
            with pytest.raises(InvalidSignature):
                client.webhooks.verify_signature(BODY, delivery(int(time.time()), secret="whsec_old"), SECRET)
            return client.webhooks.verify_signature(BODY, delivery(int(time.time())), SECRET)

    assert asyncio.run(scenario())["type"] == "call.completed"
    assert seen == []


def test_the_resource_method_is_the_typed_module_function() -> None:
    """One check wherever it is found: the same signature, annotations and documentation."""
    with Client("sk_live_x", LOOPBACK) as sync_client:
        methods = (sync_client.webhooks.verify_signature, AsyncClient("sk_live_x", LOOPBACK).webhooks.verify_signature)
    for method in methods:
        assert method is callwright_client.verify_signature
        hints = inspect.signature(method)
        assert list(hints.parameters) == ["body", "headers", "secret", "tolerance", "now"]
        assert hints.return_annotation == "dict[str, Any]"
        assert method.__doc__ and "X-Service-Signature" in method.__doc__
