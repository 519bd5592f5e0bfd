"""Web Push steps for tests: a tenant with a carrier account and numbers of its own (a line),
devices subscribed to it, inbound calls rung in by signed carrier callbacks, and the listing."""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass
from typing import Any

from litestar.testing import TestClient
from twilio.request_validator import RequestValidator

from application.calling.inbound import inbound_call_id
from entrypoints.bootstrap import Container
from tests.fakes.push_service import Device
from tests.fakes.twilio.rest import FakeAccount, FakeTwilio
from tests.support.setup import Account, carrier_tenant

_e164s = itertools.count(4000)
DEV_FLAGS = {"webhook_allow_private": True, "webhook_allow_http": True, "push_timeout_seconds": 0.5}


@dataclass
class Line:
    tenant: Account
    account: FakeAccount
    numbers: list[dict[str, Any]]

    @property
    def headers(self) -> dict[str, str]:
        return self.tenant.headers


def new_line(client: TestClient[Any], container: Container, fake: FakeTwilio, count: int = 2) -> Line:
    """A tenant whose verified carrier account holds ``count`` numbers, each registered as its own."""
    e164s = [f"+1415556{next(_e164s):04d}" for _ in range(count)]
    tenant, account = carrier_tenant(client, container, fake, [(e, f"Line {e[-4:]}") for e in e164s], select=False)
    numbers = []
    for e164 in e164s:
        registered = client.post("/v1/numbers/byo", json={"e164": e164}, headers=tenant.headers)
        assert registered.status_code == 201, registered.text
        numbers.append(registered.json())
    return Line(tenant, account, numbers)


def subscribe(client: TestClient[Any], headers: dict[str, str], device: Device, number_ids: list[str],
              **extra: Any) -> Any:
    return client.post("/v1/push/subscribe", json={"subscription": device.subscription(), "number_ids": number_ids,
                                                   **extra}, headers=headers)


def subscribed(client: TestClient[Any], headers: dict[str, str], device: Device, number_ids: list[str],
               **extra: Any) -> dict[str, Any]:
    answer = subscribe(client, headers, device, number_ids, **extra)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def listed(client: TestClient[Any], headers: dict[str, str], **query: Any) -> dict[str, Any]:
    answer = client.get("/v1/push/subscriptions", params=query, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def subscription_of(client: TestClient[Any], headers: dict[str, str], subscription_id: str) -> dict[str, Any]:
    return next(s for s in listed(client, headers, limit=200)["data"] if s["id"] == subscription_id)


def settled(client: TestClient[Any], headers: dict[str, str], subscription_id: str, ready: Any,
            timeout: float = 10.0) -> dict[str, Any]:
    """The subscription as listed once ``ready(subscription)`` holds."""
    deadline = time.monotonic() + timeout
    while True:
        found = subscription_of(client, headers, subscription_id)
        if ready(found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.02)


def ring(client: TestClient[Any], container: Container, line: Line, number: dict[str, Any],
         caller: str = "+14155550142") -> tuple[str, Any]:
    """An inbound call to ``number`` as the carrier announces it (signed): its call id and the answer."""
    sid = "CA" + uuid.uuid4().hex
    form = {"CallSid": sid, "AccountSid": line.account.sid, "From": caller, "To": number["e164"],
            "Direction": "inbound", "CallStatus": "ringing", "ApiVersion": "2010-04-01"}
    answer = signed_post(client, container, line, "/webhooks/carrier/inbound", form)
    return inbound_call_id(sid), answer


def signed_post(client: TestClient[Any], container: Container, line: Line, path: str, form: dict[str, str]) -> Any:
    signature = RequestValidator(line.account.auth_token).compute_signature(container.settings.base_url + path, form)
    return client.post(path, data=form, headers={"X-Twilio-Signature": signature})


def answered(container: Container, call_id: str, subscription_id: str, timeout: float = 10.0) -> Any:
    """The call's notification to the subscription once the push service's answer is written down."""
    from domain.push.notification import PENDING, PushNotification

    deadline = time.monotonic() + timeout
    while True:
        found = container.calling.find(PushNotification, PushNotification.create_id(call_id, subscription_id))
        if found is not None and found.status != PENDING:
            return found
        assert time.monotonic() < deadline, found and found.status
        time.sleep(0.02)


def devices_of(client: TestClient[Any], fake: FakeTwilio, tenant: Account, count: int) -> list[str]:
    """``count`` devices subscribed for a number of ``tenant`` (its carrier credentials verified at
    ``fake`` first); their endpoints are never sent to. The subscription ids, oldest first."""
    from tests.fakes.push_service import Device
    from tests.support.setup import verify_carrier

    e164 = f"+1415556{next(_e164s):04d}"
    account = fake.add_account(numbers=[(e164, "Line")])
    assert verify_carrier(client, tenant.headers, account.sid, account.auth_token).status_code == 200
    registered = client.post("/v1/numbers/byo", json={"e164": e164}, headers=tenant.headers)
    assert registered.status_code == 201, registered.text
    return [subscribed(client, tenant.headers, Device(endpoint=f"http://127.0.0.1:9/push/{e164}-{n}"),
                       [registered.json()["id"]])["id"] for n in range(count)]
