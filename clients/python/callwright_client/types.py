"""Typed views of the API's answers.

Each is a frozen dataclass of the fields a program usually reads, plus ``raw``: the whole JSON
object as answered. The server adds fields without a new version (SPEC.md Versioning), so nothing
it sends is lost: a field this release does not name is still in ``raw``. A field the answer
lacks is None (``POST /v1/calls`` answers only ``call_id`` and ``status``). Times are the API's
ISO 8601 strings and money its decimal strings, as sent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Raw = dict[str, Any]
TERMINAL = ("completed", "failed")


def _from_json(cls: type[T], data: Raw, aliases: dict[str, str] | None = None) -> T:
    """An instance of the dataclass ``cls`` from an answer: each field from its key (or its alias)."""
    names = aliases or {}
    values = {f.name: data.get(names.get(f.name, f.name)) for f in dataclasses.fields(cls)  # type: ignore[arg-type]
              if f.name != "raw"}
    return cls(**values, raw=data)


@dataclass(frozen=True)
class Call:
    """A call record (``GET /v1/calls/{id}``); ``from_number`` is the answer's ``from``."""

    call_id: str
    status: str
    to: str | None = None
    from_number: str | None = None
    objective: str | None = None
    outcome: Raw | None = None
    partial_outcome: Raw | None = None
    transcript: str | None = None
    confidence: float | None = None
    duration_seconds: int | None = None
    cost_voice: str | None = None
    cost_extraction: str | None = None
    cost_total: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    direction: str | None = None
    mode: str | None = None
    voice_engine: str | None = None
    language: str | None = None
    metadata: Raw | None = None
    variables: Raw | None = None
    template_id: str | None = None
    flow_id: str | None = None
    # Every other field of the record too (a test checks them against the OpenAPI document's CallRecord).
    recording_url: str | None = None
    voice_id: str | None = None
    consent_type: str | None = None
    answered_by: str | None = None
    outcome_schema: Raw | None = None
    flow_version: int | None = None
    routing: Raw | None = None  # an inbound call's {action, reason, destination}
    sms: list[Raw] | None = None  # post-call messages: {template_id, to, body, status, sent_at}
    raw: Raw = field(default_factory=dict, repr=False)

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_json(cls, data: Raw) -> Call:
        return _from_json(cls, data, {"from_number": "from"})


@dataclass(frozen=True)
class BatchResult:
    """``POST /v1/calls/batch`` (207): one result per item, in order, accepted or rejected."""

    accepted: int
    rejected: int
    items: list[Raw]
    raw: Raw = field(default_factory=dict, repr=False)

    @property
    def call_ids(self) -> list[str]:
        return [item["call_id"] for item in self.items if item.get("call_id")]

    @classmethod
    def from_json(cls, data: Raw) -> BatchResult:
        return cls(accepted=int(data.get("accepted") or 0), rejected=int(data.get("rejected") or 0),
                   items=list(data.get("items") or []), raw=data)


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: ``next_cursor`` is None on the last. ``total``, ``limit`` and ``offset``
    are there for the offset-paged lists (calls, webhook deliveries)."""

    data: list[T]
    next_cursor: str | None = None
    total: int | None = None
    limit: int | None = None
    offset: int | None = None
    raw: Raw = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Number:
    """A phone number of the account (``/v1/numbers``); every setting is in ``raw``."""

    id: str
    e164: str | None = None
    source: str | None = None
    active: bool | None = None
    objective: str | None = None
    language: str | None = None
    timezone: str | None = None
    voice_engine: str | None = None
    flow_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    disconnected_at: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> Number:
        return _from_json(cls, data)


@dataclass(frozen=True)
class WebhookEndpoint:
    """A webhook endpoint; ``secret`` is set only in the answer that created it."""

    id: str
    url: str | None = None
    description: str | None = None
    events: list[str] | None = None
    active: bool | None = None
    created_at: str | None = None
    deleted_at: str | None = None
    disabled: Raw | None = None
    rotation_grace_ends_at: str | None = None
    secret: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> WebhookEndpoint:
        return _from_json(cls, data)


@dataclass(frozen=True)
class ApiKey:
    """An API key: ``secret`` only when just created or rotated (then ``old_key_id`` and
    ``old_key_expires_at`` name the key it replaces); ``status`` in lists and after a revoke."""

    key_id: str
    name: str | None = None
    prefix: str | None = None
    scopes: list[str] | None = None
    number_ids: list[str] | None = None
    status: str | None = None
    created_at: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None
    rotated_from: str | None = None
    rotated_to: str | None = None
    secret: str | None = None
    old_key_id: str | None = None
    old_key_expires_at: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> ApiKey:
        return _from_json(cls, data)


@dataclass(frozen=True)
class Suppression:
    """A number never to call; ``status`` is ``removed`` in the answer of a removal."""

    e164: str
    reason: str | None = None
    expires_at: str | None = None
    added_by: str | None = None
    added_at: str | None = None
    removed_at: str | None = None
    active: bool | None = None
    status: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> Suppression:
        return _from_json(cls, data)


@dataclass(frozen=True)
class Template:
    """A reusable call configuration (``template_id`` of a call)."""

    id: str
    name: str | None = None
    description: str | None = None
    objective: str | None = None
    context: str | None = None
    outcome_schema: Raw | None = None
    tools: list[Raw] | None = None
    consent_type: str | None = None
    voice_engine: str | None = None
    language: str | None = None
    created_at: str | None = None
    created_by: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> Template:
        return _from_json(cls, data)


@dataclass(frozen=True)
class Flow:
    """A conversation graph; a list row lacks ``graph_json`` and ``published``."""

    id: str
    name: str | None = None
    state: str | None = None
    draft_version: int | None = None
    graph_json: Raw | None = None
    published_version: int | None = None
    published: Raw | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: Raw = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Raw) -> Flow:
        return _from_json(cls, data)
