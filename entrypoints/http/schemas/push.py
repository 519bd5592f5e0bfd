"""Bodies and answers of ``/v1/push`` (SPEC.md Other endpoints named, Events 12; docs/push.md).

``subscription`` is what a browser's ``PushSubscription.toJSON()`` gives (``expirationTime`` is
accepted and not kept)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from domain.push.notification import STATUSES
from domain.push.subscription import AUTH_BYTES, MAX_LABEL, MAX_NUMBERS, P256DH_BYTES, key_problem
from entrypoints.http.schemas.api_keys import NumberId
from entrypoints.http.schemas.calls import Strict
from entrypoints.http.schemas.text import safe_text

ENDPOINT = "https://push.example.com/send/dQw4w9WgXcQ:APA91bHun4MxP5egoKMwt2KZFBaFUH"
P256DH = "BGNxP9AVLNOTMHTvXwWXFfbURXj7y-bWuF4LGDJnrwe5vr0nRgk65dyQ2xfklXb01FTXuwijMnueT49yFafCcwE"
AUTH = "AMbMfW5H9kJf02yRaIOLTA"
NUMBER_ID = "7c099ecf-fa26-449b-afb7-0c8248dfc735"
SUBSCRIPTION_ID = "psub_1c6b7d3f0a2e4b5c8d9e0f1a2b3c4d5e"
NOTIFICATION_ID = "pntf_9e8d7c6b5a4f4e3d2c1b0a9f8e7d6c5b"
CALL_ID = "cll_46ccef74c3fa4d6faf236adc582c43b0"
AT = "2026-03-08T14:30:00Z"


def _key(length: int, point: bool = False):  # noqa: ANN202 - a validator
    def check(value: str) -> str:
        if (problem := key_problem(value, length, point=point)) is not None:
            raise PydanticCustomError("invalid_push_key", problem)
        return value
    return AfterValidator(check)


Endpoint = Annotated[str, StringConstraints(min_length=1, max_length=2048), AfterValidator(safe_text)]


class PushKeys(Strict):
    p256dh: Annotated[str, StringConstraints(min_length=1, max_length=200), _key(P256DH_BYTES, point=True),
                      Field(description="The device's P-256 public key, base64url (65 bytes)", examples=[P256DH])]
    auth: Annotated[str, StringConstraints(min_length=1, max_length=100), _key(AUTH_BYTES),
                    Field(description="The device's authentication secret, base64url (16 bytes); kept sealed",
                          examples=[AUTH])]


class BrowserSubscription(Strict):
    endpoint: Annotated[Endpoint, Field(description="The push service URL; it must pass the webhook URL policy "
                                                    "(https, a public address)", examples=[ENDPOINT])]
    expirationTime: float | None = None  # noqa: N815 - the browser's own name
    keys: PushKeys


class PushSubscribeRequest(Strict):
    subscription: BrowserSubscription
    number_ids: Annotated[list[NumberId], Field(min_length=1, max_length=MAX_NUMBERS, examples=[[NUMBER_ID]],
                                                description=("The numbers whose live inbound calls this device is "
                                                             "told of; they replace the device's numbers"))]
    device_label: Annotated[str, StringConstraints(min_length=1, max_length=MAX_LABEL), AfterValidator(safe_text),
                            Field(examples=["Front desk tablet"])] | None = None


class PushUnsubscribeRequest(Strict):
    endpoint: Annotated[Endpoint, Field(examples=[ENDPOINT])]


class PushDeliveredRequest(Strict):
    notification_id: Annotated[str, StringConstraints(min_length=1, max_length=64), Field(examples=[NOTIFICATION_ID])]


class VapidKey(msgspec.Struct, kw_only=True):
    public_key: Annotated[str, msgspec.Meta(
        description="The VAPID public key (base64url, uncompressed P-256 point): the browser's applicationServerKey",
        examples=["BFOjFhw1fB0r1iBpWYKMmkgUBJR0Y7e1jUOjHDECKo6oqZFjfcGFIcRCFpVXdQNcJeJFxmtOjsudg4rsmnPUdcw"])]


class PushFailure(msgspec.Struct, kw_only=True):
    notification_id: Annotated[str, msgspec.Meta(examples=[NOTIFICATION_ID])]
    response_status: Annotated[int | None, msgspec.Meta(examples=[503], description=(
        "The push service's status; null when it gave no answer"))]
    error: Annotated[str | None, msgspec.Meta(examples=["the push service answered 503"])]
    at: Annotated[str, msgspec.Meta(examples=[AT])]


Unset = msgspec.Meta(examples=[None])  # the example is an active device: never failed, tombstoned or unsubscribed


Status = Annotated[str, msgspec.Meta(description="active, tombstoned (sent nothing until it subscribes again) "
                                                 "or unsubscribed", examples=["active"])]


class PushSubscriptionView(msgspec.Struct, kw_only=True):
    id: Annotated[str, msgspec.Meta(examples=[SUBSCRIPTION_ID])]
    endpoint: Annotated[str, msgspec.Meta(examples=[ENDPOINT])]
    device_label: Annotated[str | None, msgspec.Meta(examples=["Front desk tablet"])]
    number_ids: Annotated[list[str], msgspec.Meta(examples=[[NUMBER_ID]])]
    status: Status
    failure_count: Annotated[int, msgspec.Meta(ge=0, le=5, examples=[0], description=(
        "Failed notifications since the last one sent; 5 tombstones (a 404 or 410 sets it at once)"))]
    tombstoned_at: Annotated[str | None, Unset]
    tombstone_reason: Annotated[str | None, Unset]
    created_at: Annotated[str, msgspec.Meta(examples=[AT])]
    subscribed_at: Annotated[str, msgspec.Meta(examples=[AT])]
    unsubscribed_at: Annotated[str | None, Unset]
    last_notified_at: Annotated[str, msgspec.Meta(examples=[AT])] | None
    last_delivered_at: Annotated[str, msgspec.Meta(examples=[AT], description=(
        "When the device last acknowledged a notification (POST /v1/push/delivered)"))] | None
    last_failure: Annotated[PushFailure | None, Unset]


class PushSubscriptionsPage(msgspec.Struct, kw_only=True):
    data: list[PushSubscriptionView]
    next_cursor: str | None


class PushNotificationView(msgspec.Struct, kw_only=True):
    notification_id: Annotated[str, msgspec.Meta(examples=[NOTIFICATION_ID])]
    subscription_id: Annotated[str, msgspec.Meta(examples=[SUBSCRIPTION_ID])]
    call_id: Annotated[str, msgspec.Meta(examples=[CALL_ID])]
    number_id: Annotated[str, msgspec.Meta(examples=[NUMBER_ID])]
    from_: Annotated[str, msgspec.Meta(examples=["+14155550142"])] = msgspec.field(name="from")
    started_at: Annotated[str, msgspec.Meta(examples=[AT])]
    status: Annotated[str, msgspec.Meta(examples=["sent"], description=f"One of {', '.join(STATUSES)}")]
    sent_at: Annotated[str, msgspec.Meta(examples=[AT])] | None
    delivered_at: Annotated[str, msgspec.Meta(examples=[AT])] | None
