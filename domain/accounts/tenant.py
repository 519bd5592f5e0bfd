"""Tenant aggregate: the verification gate (SPEC.md §9), the rate-limit tier and the voice settings
(SPEC.md Tenant: ``voice_engine_default`` and the A/B kill switch ``voice_ab_disabled``)."""

from __future__ import annotations

import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls.engine_choice import check_engine

PENDING_REVIEW = "pending_review"
APPROVED = "approved"
DEFAULT_TIER = "standard"


class Tenant(TenantAggregate):
    @staticmethod
    def create_id(tenant_id: str) -> uuid.UUID:
        return ids.from_public(ids.TENANT, tenant_id)

    @event("Registered")
    def __init__(
        self, tenant_id: str, name: str, tier: str, verification_status: str, at: datetime
    ) -> None:
        self.tenant_id = tenant_id
        self.name = name
        self.tier = tier
        self.verification_status = verification_status
        self.registered_at = at
        self.approved_at: datetime | None = None
        self.approved_by: str | None = None
        self.voice_engine_default: str | None = None  # None: the system default applies
        self.voice_ab_disabled = False
        self.voice_settings_changed_at: datetime | None = None

    @property
    def is_approved(self) -> bool:
        return self.verification_status == APPROVED

    def approve(self, by: str, now: datetime) -> bool:
        """Approve the tenant; approving an approved tenant changes nothing."""
        if self.is_approved:
            return False
        self._approved(by=by, at=now)
        return True

    @event("Approved")
    def _approved(self, by: str, at: datetime) -> None:
        self.verification_status = APPROVED
        self.approved_at = at
        self.approved_by = by

    def change_voice_settings(self, *, voice_engine_default: str | None, voice_ab_disabled: bool, by: str,
                              now: datetime) -> bool:
        """Set both voice settings (the caller passes the current value of one it keeps); a change
        to the values they already have records nothing."""
        if voice_engine_default is not None:
            check_engine(voice_engine_default)
        if (voice_engine_default, voice_ab_disabled) == (self.voice_engine_default, self.voice_ab_disabled):
            return False
        self._voice_settings_changed(voice_engine_default=voice_engine_default,
                                     voice_ab_disabled=bool(voice_ab_disabled), by=by, at=now)
        return True

    @event("VoiceSettingsChanged")
    def _voice_settings_changed(self, voice_engine_default: str | None, voice_ab_disabled: bool, by: str,
                                at: datetime) -> None:
        self.voice_engine_default = voice_engine_default
        self.voice_ab_disabled = voice_ab_disabled
        self.voice_settings_changed_at = at
