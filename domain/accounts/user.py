"""User aggregate and the e-mail index that makes e-mail addresses unique."""

from __future__ import annotations

import re
import uuid
from datetime import datetime

from eventsourcing.domain import event

from domain import ids
from domain.base import TenantAggregate
from domain.errors import WeakPasswordError

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024
_EMAIL = re.compile(r"^[^@\s\x00-\x1f]{1,64}@[^@\s\x00-\x1f]+\.[^@\s\x00-\x1f]+$")


def normalize_email(email: str) -> str:
    return email.strip().lower()


def is_valid_email(email: str) -> bool:
    return len(email) <= 254 and _EMAIL.match(email) is not None


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise WeakPasswordError(f"password must have at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise WeakPasswordError(f"password must have at most {MAX_PASSWORD_LENGTH} characters")


class User(TenantAggregate):
    @staticmethod
    def create_id(user_id: str) -> uuid.UUID:
        return ids.from_public(ids.USER, user_id)

    @event("Registered")
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        email: str,
        name: str | None,
        password_hash: str,
        is_admin: bool,
        at: datetime,
    ) -> None:
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.email = email
        self.name = name
        self.password_hash = password_hash
        self.is_admin = is_admin
        self.registered_at = at
        self.email_verified_at: datetime | None = None
        self.last_login_at: datetime | None = None
        self.password_changed_at: datetime | None = None

    def verify_email(self, now: datetime) -> bool:
        if self.email_verified_at is not None:
            return False
        self._email_verified(at=now)
        return True

    @event("EmailVerified")
    def _email_verified(self, at: datetime) -> None:
        self.email_verified_at = at

    def change_password(self, password_hash: str, reason: str, now: datetime) -> None:
        self._password_changed(password_hash=password_hash, reason=reason, at=now)

    @event("PasswordChanged")
    def _password_changed(self, password_hash: str, reason: str, at: datetime) -> None:
        self.password_hash = password_hash
        self.password_changed_at = at

    def accepts_session_issued_at(self, issued_at: datetime) -> bool:
        """Sessions issued before the last password change are void (tokens carry whole seconds)."""
        if self.password_changed_at is None:
            return True
        return issued_at >= self.password_changed_at.replace(microsecond=0)

    def record_login(self, jti: str, client_ip: str | None, now: datetime) -> None:
        self._logged_in(jti=jti, client_ip=client_ip, at=now)

    @event("LoggedIn")
    def _logged_in(self, jti: str, client_ip: str | None, at: datetime) -> None:
        self.last_login_at = at

    def record_logout(self, jti: str, now: datetime) -> None:
        self._logged_out(jti=jti, at=now)

    @event("LoggedOut")
    def _logged_out(self, jti: str, at: datetime) -> None:
        pass


class EmailIndex(TenantAggregate):
    """Index aggregate: its id is derived from the address, so a second sign-up conflicts."""

    @staticmethod
    def create_id(email: str) -> uuid.UUID:
        return ids.deterministic("email", email)

    @event("Claimed")
    def __init__(self, tenant_id: str, email: str, user_id: str) -> None:
        self.tenant_id = tenant_id
        self.email = email
        self.user_id = user_id
