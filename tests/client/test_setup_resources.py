"""``client.wizard`` and ``client.push`` against ``httpx.MockTransport`` (answers made in-process):
the requests they build, the typed answers, the provision's ``Idempotency-Key`` repeated on every
retry (a 409 ``provision_in_progress`` waited out), the subscriptions' pages, and the async client."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from callwright_client import (
    AsyncClient,
    Client,
    ConflictError,
    Number,
    Provisioned,
    PushNotification,
    PushSubscription,
    ValidationError,
    WizardDraft,
)
from callwright_client import async_resources, resources
from tests.client.support import LOOPBACK

Handler = Callable[[httpx.Request], httpx.Response]
DESCRIPTION = "Acme Dental is a family dental practice in Austin, Texas. Patients call to book checkups."
CONFIG = {"greeting": "Thanks for calling Acme Dental!", "objective": "Book the caller's visit",
          "timezone": "America/Chicago", "sms_enabled": True, "transfer_destinations": []}
NUMBER = {"id": "7c099ecf-fa26-449b-afb7-0c8248dfc735", "e164": "+15125550100", "source": "managed",
          "active": True, "greeting": CONFIG["greeting"], "timezone": "America/Chicago"}
ENDPOINT = "https://push.example.com/send/device-1"
P256DH = "BGNxP9AVLNOTMHTvXwWXFfbURXj7y-bWuF4LGDJnrwe5vr0nRgk65dyQ2xfklXb01FTXuwijMnueT49yFafCcwE"
AUTH = "AMbMfW5H9kJf02yRaIOLTA"
AT = "2026-03-08T14:30:00Z"


def subscription_json(number: int = 1, **fields: Any) -> dict[str, Any]:
    return {"id": f"psub_{number:032d}", "endpoint": f"{ENDPOINT}-{number}", "device_label": None,
            "number_ids": [NUMBER["id"]], "status": "active", "failure_count": 0, "tombstoned_at": None,
            "tombstone_reason": None, "created_at": AT, "subscribed_at": AT, "unsubscribed_at": None,
            "last_notified_at": None, "last_delivered_at": None, "last_failure": None, **fields}


NOTIFICATION = {"notification_id": "pntf_1", "subscription_id": "psub_1", "call_id": "cll_1",
                "number_id": NUMBER["id"], "from": "+14155550142", "started_at": AT, "status": "sent",
                "sent_at": AT, "delivered_at": AT, "later_field": 1}


def recorded(handler: Handler) -> tuple[list[httpx.Request], httpx.MockTransport]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return seen, httpx.MockTransport(record)


def scripted(*answers: httpx.Response | Exception) -> tuple[list[httpx.Request], httpx.MockTransport]:
    """Each request answered by the next of ``answers`` (the last one repeats)."""
    count = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        count[0] += 1
        answer = answers[min(count[0], len(answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    return recorded(handler)


def in_progress(retry_after: str | None = "2") -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(409, headers=headers, json={"error": {"code": "provision_in_progress",
                                                                "message": "a request with this key is buying"}})


def body(request: httpx.Request) -> Any:
    return json.loads(request.content)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waited: list[float] = []
    monkeypatch.setattr("callwright_client._sync.time.sleep", waited.append)
    return waited


def provision(client: Client, **extra: Any) -> Provisioned:
    return client.wizard.provision(business_name="Acme Dental", business_description=DESCRIPTION,
                                   area_code="512", config=CONFIG, **extra)


# --- wizard -------------------------------------------------------------------------------------

def test_generate_posts_the_description_and_answers_a_typed_draft() -> None:
    answer = {"verdict": "supported", "reason": "Supported: a dental practice", "config": CONFIG}
    seen, transport = recorded(lambda request: httpx.Response(200, json=answer))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        draft = client.wizard.generate(DESCRIPTION)
    assert (seen[0].method, seen[0].url.path) == ("POST", "/v1/wizard/generate")
    assert body(seen[0]) == {"business_description": DESCRIPTION}
    assert "Idempotency-Key" not in seen[0].headers  # it stores nothing: there is nothing to deduplicate
    assert isinstance(draft, WizardDraft) and draft.supported and draft.config == CONFIG and draft.raw == answer


def test_an_unsupported_draft_has_its_verdict_and_no_config() -> None:
    answer = {"verdict": "unsupported", "reason": "Debt collection is not supported", "config": None}
    _, transport = recorded(lambda request: httpx.Response(200, json=answer))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        draft = client.wizard.generate("We collect overdue debts")
    assert (draft.verdict, draft.config, draft.supported) == ("unsupported", None, False)


def test_generate_is_sent_again_after_a_lost_answer(sleeps: list[float]) -> None:
    answer = {"verdict": "needs_review", "reason": "A person reviews it", "config": CONFIG}
    seen, transport = scripted(httpx.ReadError("connection reset"), httpx.Response(502, json={"error": {
        "code": "generator_unavailable", "message": "try again"}}), httpx.Response(200, json=answer))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        assert client.wizard.generate(DESCRIPTION).verdict == "needs_review"
    assert len(seen) == 3


def test_provision_posts_its_fields_with_an_idempotency_key_and_answers_the_number() -> None:
    answer = {"tenant_id": "ten_1", "number": NUMBER}
    seen, transport = recorded(lambda request: httpx.Response(200, json=answer))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        made = provision(client)
        again = provision(client, idempotency_key="acme-line-1")
    assert (seen[0].method, seen[0].url.path) == ("POST", "/v1/wizard/provision")
    assert body(seen[0]) == {"business_name": "Acme Dental", "business_description": DESCRIPTION,
                             "area_code": "512", "config": CONFIG}
    assert len(seen[0].headers["Idempotency-Key"]) == 32 and seen[1].headers["Idempotency-Key"] == "acme-line-1"
    assert isinstance(made, Provisioned) and made.tenant_id == "ten_1" and made.raw == answer
    assert isinstance(made.number, Number) and made.number.e164 == "+15125550100"
    assert made.number.raw["greeting"] == CONFIG["greeting"] and again == made


def test_a_provision_whose_answer_was_lost_is_sent_again_with_the_same_key(sleeps: list[float]) -> None:
    """The route honours the key: the repeat answers the first result and buys nothing."""
    seen, transport = scripted(httpx.ReadError("connection reset"), httpx.Response(500, json={"error": {
        "code": "internal", "message": "internal error"}}), httpx.Response(200, json={"tenant_id": "ten_1",
                                                                                     "number": NUMBER}))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        assert provision(client).number.id == NUMBER["id"]
    keys = {request.headers["Idempotency-Key"] for request in seen}
    assert len(seen) == 3 and len(keys) == 1 and sleeps == [0.5, 1.0]


def test_provision_in_progress_is_waited_out_after_its_retry_after(sleeps: list[float]) -> None:
    seen, transport = scripted(in_progress("2"), in_progress("3"),
                               httpx.Response(200, json={"tenant_id": "ten_1", "number": NUMBER}))
    with Client("sk_live_x", LOOPBACK, transport=transport, backoff=5.0) as client:
        made = provision(client, idempotency_key="acme-line-1")
    assert made.number.id == NUMBER["id"] and sleeps == [2.0, 3.0]
    assert [request.headers["Idempotency-Key"] for request in seen] == ["acme-line-1"] * 3
    assert len({request.content for request in seen}) == 1


def test_provision_still_in_progress_after_every_retry_is_a_conflict_error(sleeps: list[float]) -> None:
    seen, transport = scripted(in_progress("1"))
    with Client("sk_live_x", LOOPBACK, transport=transport, max_retries=2) as client:
        with pytest.raises(ConflictError) as raised:
            provision(client)
    assert len(seen) == 3 and sleeps == [1.0, 1.0]
    assert (raised.value.status, raised.value.code) == (409, "provision_in_progress")


@pytest.mark.parametrize(("answer", "error"), [
    (in_progress(None), ConflictError),  # no Retry-After: nothing says a repeat would help
    (httpx.Response(409, json={"error": {"code": "idempotency_key_reused", "message": "another body"}}),
     ConflictError),
    (httpx.Response(422, json={"detail": [{"loc": ["body", "business_description"], "msg": "needs review",
                                           "type": "use_case_needs_review"}]}), ValidationError),
])
def test_other_refusals_of_a_provision_are_never_retried(answer: httpx.Response, error: type[Exception],
                                                         sleeps: list[float]) -> None:
    seen, transport = scripted(answer)
    with Client("sk_live_x", LOOPBACK, transport=transport) as client, pytest.raises(error):
        provision(client)
    assert len(seen) == 1 and sleeps == []


def test_a_409_with_retry_after_is_final_for_a_create_the_server_does_not_deduplicate(sleeps: list[float]) -> None:
    seen, transport = scripted(in_progress("1"))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client, pytest.raises(ConflictError):
        client.webhooks.create("https://example.com/hooks")
    assert len(seen) == 1 and sleeps == []


# --- push ---------------------------------------------------------------------------------------

def test_the_vapid_key_is_its_public_key() -> None:
    seen, transport = recorded(lambda request: httpx.Response(200, json={"public_key": P256DH}))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        assert client.push.vapid_key() == P256DH
    assert (seen[0].method, seen[0].url.path) == ("GET", "/v1/push/vapid-key")


def test_subscribe_sends_the_browser_subscription_and_answers_the_device() -> None:
    seen, transport = recorded(lambda request: httpx.Response(201 if len(seen) == 1 else 200,
                                                              json=subscription_json(device_label="Front desk")))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        created = client.push.subscribe(ENDPOINT, P256DH, AUTH, (n for n in [NUMBER["id"]]), device_label="Front desk")
        client.push.subscribe(ENDPOINT, P256DH, AUTH, [NUMBER["id"]])
    assert (seen[0].method, seen[0].url.path) == ("POST", "/v1/push/subscribe")
    assert body(seen[0]) == {"subscription": {"endpoint": ENDPOINT, "keys": {"p256dh": P256DH, "auth": AUTH}},
                             "number_ids": [NUMBER["id"]], "device_label": "Front desk"}
    assert "device_label" not in body(seen[1])  # left out, not null: the server's default
    assert isinstance(created, PushSubscription) and created.id == "psub_" + "0" * 31 + "1"
    assert (created.status, created.failure_count, created.tombstoned_at, created.device_label) == (
        "active", 0, None, "Front desk")


def test_a_subscribe_whose_answer_was_lost_is_sent_again(sleeps: list[float]) -> None:
    """One subscription per endpoint: subscribing again leaves the device as the first did."""
    seen, transport = scripted(httpx.ReadError("connection reset"), httpx.Response(201, json=subscription_json()))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        client.push.subscribe(ENDPOINT, P256DH, AUTH, [NUMBER["id"]])
    assert len(seen) == 2 and seen[0].content == seen[1].content


def test_unsubscribe_and_delivered_post_their_one_field() -> None:
    gone = subscription_json(status="unsubscribed", unsubscribed_at=AT)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=gone if request.url.path.endswith("unsubscribe") else NOTIFICATION)

    seen, transport = recorded(handler)
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        left = client.push.unsubscribe(ENDPOINT)
        acknowledged = client.push.delivered("pntf_1")
    assert [(r.method, r.url.path, body(r)) for r in seen] == [
        ("POST", "/v1/push/unsubscribe", {"endpoint": ENDPOINT}),
        ("POST", "/v1/push/delivered", {"notification_id": "pntf_1"})]
    assert isinstance(left, PushSubscription) and left.status == "unsubscribed" and left.unsubscribed_at == AT
    assert isinstance(acknowledged, PushNotification) and acknowledged.from_number == "+14155550142"
    assert acknowledged.delivered_at == AT and acknowledged.raw["later_field"] == 1


def test_subscriptions_follow_next_cursor_page_by_page() -> None:
    tombstoned = subscription_json(3, status="tombstoned", failure_count=5, tombstoned_at=AT,
                                   tombstone_reason="the push service answered 410",
                                   last_failure={"notification_id": "pntf_9", "response_status": 410,
                                                 "error": "gone", "at": AT})
    pages = {None: {"data": [subscription_json(1), subscription_json(2)], "next_cursor": "c1"},
             "c1": {"data": [tombstoned], "next_cursor": None}}
    seen, transport = recorded(lambda request: httpx.Response(200, json=pages[request.url.params.get("cursor")]))
    with Client("sk_live_x", LOOPBACK, transport=transport) as client:
        listed = list(client.push.subscriptions(limit=2))
    assert [r.url.path for r in seen] == ["/v1/push/subscriptions"] * 2
    assert [dict(r.url.params) for r in seen] == [{"limit": "2"}, {"limit": "2", "cursor": "c1"}]
    assert [s.id for s in listed] == [subscription_json(n)["id"] for n in (1, 2, 3)]
    last = listed[-1]
    assert (last.status, last.failure_count, last.tombstoned_at) == ("tombstoned", 5, AT)
    assert last.last_failure and last.last_failure["response_status"] == 410


# --- the async client ---------------------------------------------------------------------------

def answer_of(request: httpx.Request) -> httpx.Response:
    path = request.url.path
    answers: dict[str, Any] = {
        "/v1/wizard/generate": {"verdict": "supported", "reason": "Supported", "config": CONFIG},
        "/v1/wizard/provision": {"tenant_id": "ten_1", "number": NUMBER},
        "/v1/push/vapid-key": {"public_key": P256DH},
        "/v1/push/subscribe": subscription_json(),
        "/v1/push/unsubscribe": subscription_json(status="unsubscribed"),
        "/v1/push/delivered": NOTIFICATION,
        "/v1/push/subscriptions": {"data": [subscription_json()], "next_cursor": None},
    }
    return httpx.Response(200, json=answers[path])


def test_the_async_client_sends_the_same_requests_and_answers_the_same_types() -> None:
    sync_seen, sync_transport = recorded(answer_of)
    async_seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        async_seen.append(request)
        return answer_of(request)

    def run_sync() -> list[Any]:
        with Client("sk_live_x", LOOPBACK, transport=sync_transport) as client:
            return [client.wizard.generate(DESCRIPTION), provision(client, idempotency_key="k1"),
                    client.push.vapid_key(), client.push.subscribe(ENDPOINT, P256DH, AUTH, [NUMBER["id"]], "Desk"),
                    client.push.unsubscribe(ENDPOINT), client.push.delivered("pntf_1"),
                    list(client.push.subscriptions())]

    async def run_async() -> list[Any]:
        async with AsyncClient("sk_live_x", LOOPBACK, transport=httpx.MockTransport(handler)) as client:
            return [await client.wizard.generate(DESCRIPTION),
                    await client.wizard.provision(business_name="Acme Dental", business_description=DESCRIPTION,
                                                  area_code="512", config=CONFIG, idempotency_key="k1"),
                    await client.push.vapid_key(),
                    await client.push.subscribe(ENDPOINT, P256DH, AUTH, [NUMBER["id"]], "Desk"),
                    await client.push.unsubscribe(ENDPOINT), await client.push.delivered("pntf_1"),
                    [s async for s in client.push.subscriptions()]]

    assert asyncio.run(run_async()) == run_sync()

    def shape(request: httpx.Request) -> tuple[Any, ...]:
        return (request.method, str(request.url), request.content, request.headers.get("Idempotency-Key"))

    assert [shape(r) for r in async_seen] == [shape(r) for r in sync_seen]
    for sync_class, async_class in ((resources.Wizard, async_resources.AsyncWizard),
                                    (resources.Push, async_resources.AsyncPush)):
        methods = {m for m in vars(sync_class) if not m.startswith("_")}
        assert methods == {m for m in vars(async_class) if not m.startswith("_")}
        for method in methods:
            assert inspect.signature(getattr(sync_class, method)).parameters.keys() == inspect.signature(
                getattr(async_class, method)).parameters.keys()
