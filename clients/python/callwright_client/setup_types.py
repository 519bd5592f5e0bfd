"""Typed views of the answers of the setup routes: the onboarding wizard (``/v1/wizard``) and Web
Push (``/v1/push``). As in ``types``: frozen dataclasses of the fields a program usually reads, the
whole answer in ``raw``, a field the answer lacks None."""

from __future__ import annotations

from dataclasses import dataclass, field

from callwright_client.types import Number, Raw, _from_json

SUPPORTED = "supported"


@dataclass(frozen=True)
class WizardDraft:
    """``POST /v1/wizard/generate``: ``verdict`` is ``supported``, ``needs_review`` (shown, but
    ``wizard.provision`` refuses it) or ``unsupported`` (``config`` is None). ``config`` is a Number
    configuration that ``numbers.update`` and ``wizard.provision`` accept as it is."""

    verdict: str
    reason: str | None = None
    config: Raw | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @property
    def supported(self) -> bool:
        return self.verdict == SUPPORTED

    @classmethod
    def from_json(cls, data: Raw) -> WizardDraft:
        return _from_json(cls, data)


@dataclass(frozen=True)
class Provisioned:
    """``POST /v1/wizard/provision``: the account and the number bought and configured for it."""

    tenant_id: str
    number: Number
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> Provisioned:
        return cls(tenant_id=str(data.get("tenant_id") or ""), number=Number.from_json(data.get("number") or {}),
                   raw=data)


@dataclass(frozen=True)
class PushSubscription:
    """A device told of live inbound calls to ``number_ids``. ``status``: ``active``, ``tombstoned``
    (after ``failure_count`` reached 5, or a 404 or 410 of its push service) or ``unsubscribed``;
    ``last_failure`` is ``{notification_id, response_status, error, at}``."""

    id: str
    endpoint: str | None = None
    device_label: str | None = None
    number_ids: list[str] | None = None
    status: str | None = None
    failure_count: int | None = None
    tombstoned_at: str | None = None
    tombstone_reason: str | None = None
    created_at: str | None = None
    subscribed_at: str | None = None
    unsubscribed_at: str | None = None
    last_notified_at: str | None = None
    last_delivered_at: str | None = None
    last_failure: Raw | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> PushSubscription:
        return _from_json(cls, data)


@dataclass(frozen=True)
class PushNotification:
    """A notification of a live inbound call to one device (``POST /v1/push/delivered`` answers it,
    ``delivered_at`` set); ``from_number`` is the answer's ``from``, the caller."""

    notification_id: str
    subscription_id: str | None = None
    call_id: str | None = None
    number_id: str | None = None
    from_number: str | None = None
    started_at: str | None = None
    status: str | None = None
    sent_at: str | None = None
    delivered_at: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> PushNotification:
        return _from_json(cls, data, {"from_number": "from"})
