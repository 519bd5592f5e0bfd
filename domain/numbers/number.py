"""Phone numbers of a tenant (SPEC.md Number): the configuration of one line, the claim that makes
an E.164 belong to at most one active number across all tenants, and a tenant's list of numbers.

Settings live in one mapping per event (the fields of ``settings.NumberSettings``), so the surface
can grow (flows, SMS, voicemail, hours) without new event types: older events read later fields'
defaults.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import NumberDisconnectedError, NumberTakenError
from domain.numbers import configuration
from domain.numbers.settings import FIELDS, NumberSettings

BYO = "byo"  # bring your own: a number of the tenant's verified carrier account
MANAGED = "managed"  # bought by the service on its managed carrier sub-account (docs/numbers.md)

if TYPE_CHECKING:  # a number reads each setting as an attribute of its own (``_reads_settings``)
    _Settings = NumberSettings
else:
    _Settings = object


def _reads_settings(cls: type[Number]) -> type[Number]:
    """Each setting as a read-only attribute of the number, read from its ``configured`` value."""
    for name in FIELDS:
        setattr(cls, name, property(operator.attrgetter(f"configured.{name}")))
    return cls


@_reads_settings
class Number(TenantAggregate, _Settings):
    """A random UUID (SPEC.md: "The identifier is a UUID"); the public id is its canonical string."""

    @staticmethod
    def id_of(number_id: str) -> uuid.UUID:
        """``ValueError`` when ``number_id`` is no UUID."""
        return uuid.UUID(number_id)

    @classmethod
    def register(cls, *, tenant_id: str, e164: str, fields: Mapping[str, Any], by: str, at: datetime,
                 source: str = BYO, provider_sid: str | None = None,
                 flow_exists: configuration.FlowExists | None = None) -> Number:
        """A new number with ``fields`` over the defaults; ``NumberConfigurationError`` lists every
        problem of ``fields``."""
        checked = configuration.check(fields, own_e164=e164, flow_exists=flow_exists)
        settings = {**configuration.defaults_for(e164), **checked}
        return cls(tenant_id=tenant_id, e164=e164, source=source, settings=settings, by=by, at=at,
                   provider_sid=provider_sid)

    @event("Registered")
    def __init__(self, tenant_id: str, e164: str, source: str, settings: dict[str, Any], by: str,
                 at: datetime, provider_sid: str | None = None) -> None:
        self.tenant_id = tenant_id
        self.e164 = e164
        self.source = source
        self.provider_sid = provider_sid  # managed: the carrier's id of the bought number (PN…)
        self.created_by = by
        self.created_at = at
        self.updated_at: datetime | None = None
        self.disconnected_at: datetime | None = None
        self.disconnected_by: str | None = None
        self.configured = NumberSettings.of(settings)  # the settings; each also reads as an attribute

    # What the greeting's audio was last rendered from: {greeting, voice_id, sha256, bytes}.
    greeting_rendered: dict[str, Any] | None = None

    @property
    def greeting_audio_fresh(self) -> bool:
        """The greeting's audio says the greeting as it stands (true when there is none to say)."""
        if self.greeting is None or not self.greeting.strip():
            return True
        rendered = self.greeting_rendered
        return rendered is not None and (rendered["greeting"], rendered["voice_id"]) == (self.greeting,
                                                                                        self.greeting_voice_id)

    def greeting_audio_rendered(self, *, greeting: str, voice_id: str | None, sha256: str, size: int,
                                at: datetime) -> bool:
        """Record the audio rendered for ``greeting`` in ``voice_id``; False (nothing recorded) when
        the greeting changed meanwhile or this audio is already recorded."""
        if (greeting, voice_id) != (self.greeting, self.greeting_voice_id) or self.greeting_audio_fresh:
            return False
        self._greeting_rendered(greeting=greeting, voice_id=voice_id, sha256=sha256, size=size, at=at)
        return True

    @event("GreetingRendered")
    def _greeting_rendered(self, greeting: str, voice_id: str | None, sha256: str, size: int, at: datetime) -> None:
        self.greeting_rendered = {"greeting": greeting, "voice_id": voice_id, "sha256": sha256, "bytes": size}

    @property
    def number_id(self) -> str:
        return str(self.id)

    @property
    def active(self) -> bool:
        return self.disconnected_at is None

    def settings(self) -> dict[str, Any]:
        """Every setting by name, in order (copies)."""
        return self.configured.as_dict()

    def update(self, fields: Mapping[str, Any], *, by: str, at: datetime,
               flow_exists: configuration.FlowExists | None = None) -> dict[str, Any]:
        """The fields that really changed (none: no event); ``NumberConfigurationError`` lists every
        problem of ``fields``."""
        if not self.active:
            raise NumberDisconnectedError(f"number {self.number_id} was disconnected")
        checked = configuration.check(fields, own_e164=self.e164, current=self.settings(), flow_exists=flow_exists)
        changes = {name: value for name, value in checked.items() if value != getattr(self, name)}
        if changes:
            self._updated(changes=changes, by=by, at=at)
        return changes

    @event("Updated")
    def _updated(self, changes: dict[str, Any], by: str, at: datetime) -> None:
        self.configured = NumberSettings.changed(self.configured, changes)
        self.updated_at = at

    def disconnect(self, *, by: str, at: datetime) -> bool:
        if not self.active:
            return False
        self._disconnected(by=by, at=at)
        return True

    @event("Disconnected")
    def _disconnected(self, by: str, at: datetime) -> None:
        self.disconnected_at = at
        self.disconnected_by = by


class NumberClaim(TenantAggregate):
    """Which active number holds an E.164, across every tenant: one per E.164 (uuid5 of it), so
    inbound routing and the uniqueness check are one read. A released claim can be taken again,
    by any tenant: ``tenant_id`` is the latest holder's, and each event names the tenant it concerns."""

    @staticmethod
    def create_id(e164: str) -> uuid.UUID:
        return ids.deterministic("number-claim", e164)

    @event("Claimed")
    def __init__(self, tenant_id: str, e164: str, number_id: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.e164 = e164
        self.number_id: str | None = number_id
        self.claimed_at = at

    @property
    def held(self) -> bool:
        return self.number_id is not None

    def claim(self, *, tenant_id: str, number_id: str, at: datetime) -> None:
        if self.held:
            raise NumberTakenError(f"{self.e164} is already registered as an active number")
        self._reclaimed(tenant_id=tenant_id, number_id=number_id, at=at)

    @event("Reclaimed")
    def _reclaimed(self, tenant_id: str, number_id: str, at: datetime) -> None:
        self.tenant_id = tenant_id
        self.number_id = number_id
        self.claimed_at = at

    def release(self, number_id: str, *, at: datetime) -> bool:
        """Only the holder releases; a stale release (the E.164 was claimed again) changes nothing."""
        if self.number_id != number_id:
            return False
        self._released(number_id=number_id, at=at)
        return True

    @event("Released")
    def _released(self, number_id: str, at: datetime) -> None:
        self.number_id = None


class TenantNumberIndex(TenantAggregate):
    """A tenant's active numbers in registration order, each with its position (the list cursor),
    saved with each registration and disconnection: listing reads one aggregate, no table scan."""

    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.deterministic("tenant-numbers", tenant_id)

    @event("Started")
    def __init__(self, tenant_id: str) -> None:
        self.tenant_id = tenant_id
        self.registered = 0
        self.positions: dict[str, int] = {}

    def add(self, number_id: str) -> None:
        if number_id not in self.positions:
            self._added(number_id=number_id)

    @event("Added")
    def _added(self, number_id: str) -> None:
        self.registered += 1
        self.positions = {**self.positions, number_id: self.registered}

    def remove(self, number_id: str) -> None:
        if number_id in self.positions:
            self._removed(number_id=number_id)

    @event("Removed")
    def _removed(self, number_id: str) -> None:
        self.positions = dict(self.positions)
        del self.positions[number_id]

    def after(self, position: int) -> list[tuple[int, str]]:
        """``(position, number_id)`` of the active numbers registered after ``position``, oldest first."""
        return sorted((p, number_id) for number_id, p in self.positions.items() if p > position)
