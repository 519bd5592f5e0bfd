"""Who is calling: an API key or a dashboard session, with what it may do."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from application.errors import PermissionDeniedError
from domain.accounts import scopes as scope_rules

API_KEY = "api_key"
SESSION = "session"


@dataclass(frozen=True, kw_only=True)
class Principal:
    kind: str
    tenant_id: str
    user_id: str
    verification_status: str
    tier: str
    key_id: str | None = None
    scopes: tuple[str, ...] | None = None
    number_ids: tuple[str, ...] | None = None
    jti: str | None = None
    session_expires_at: datetime | None = None

    @property
    def actor(self) -> str:
        """How audit events name this caller."""
        return self.key_id if self.kind == API_KEY and self.key_id else self.user_id

    def allows(self, scope: str) -> bool:
        return self.kind == SESSION or scope_rules.allows(self.scopes, scope)

    def require_scope(self, scope: str) -> None:
        if not self.allows(scope):
            raise PermissionDeniedError(
                f"this API key lacks the scope '{scope}'", code="insufficient_scope"
            )

    def may_use_number(self, number_id: str) -> bool:
        if self.number_ids is None:
            return True
        try:
            canonical = str(uuid.UUID(number_id))
        except ValueError:
            return False
        return canonical in self.number_ids

    def require_number(self, number_id: str) -> None:
        """SPEC.md Authentication §6: a restricted key may only target its numbers."""
        if not self.may_use_number(number_id):
            raise PermissionDeniedError(
                f"this API key may not use number {number_id}", code="number_not_allowed"
            )
