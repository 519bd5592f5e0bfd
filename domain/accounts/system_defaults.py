"""``SystemDefaults``: the operator's system-wide settings, one aggregate with a fixed id.

Until an operator first changes them they do not exist as events, and the built-in values apply
(``VoiceDefaults()``: engine ``alpha_25``, A/B weights alpha_25 1 : alpha_31 1). They belong to no
tenant; their events carry ``tenant_id = "system"``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.calls.engine_choice import VoiceDefaults, check_engine, weights_from

SYSTEM_TENANT = "system"


class SystemDefaults(TenantAggregate):
    @staticmethod
    def create_id() -> uuid.UUID:
        return ids.deterministic("system_defaults", "singleton")

    @event("Started")
    def __init__(self, at: datetime, tenant_id: str = SYSTEM_TENANT) -> None:
        self.tenant_id = tenant_id
        self.started_at = at
        self.voice = VoiceDefaults()
        self.updated_at: datetime | None = None
        self.updated_by: str | None = None

    def change_voice(self, *, voice_engine_default: str, voice_ab_weights: Mapping[str, float], by: str,
                     now: datetime) -> bool:
        """Replace the default engine and the A/B weights (an engine left out of the weights gets 0);
        the same values again record nothing."""
        check_engine(voice_engine_default)
        changed = VoiceDefaults(voice_engine_default=voice_engine_default,
                                voice_ab_weights=weights_from(voice_ab_weights))
        if changed == self.voice:
            return False
        self._voice_defaults_changed(voice_engine_default=voice_engine_default,
                                     voice_ab_weights=changed.weights_dict(), by=by, at=now)
        return True

    @event("VoiceDefaultsChanged")
    def _voice_defaults_changed(self, voice_engine_default: str, voice_ab_weights: dict[str, float], by: str,
                                at: datetime) -> None:
        self.voice = VoiceDefaults.recorded(voice_engine_default, voice_ab_weights)
        self.updated_at = at
        self.updated_by = by
