"""Turns account events into audit rows: who did what to which key, user or tenant, and when."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import Tracking
from psycopg.types.json import Jsonb

from domain import audit_chain, ids
from domain.accounts.api_key import ApiKey
from domain.accounts.tenant import Tenant
from domain.accounts.user import User
from domain.timestamps import iso
from projections.audit_events.view import AuditEventsView
from projections.view import pg_text

Row = tuple[str, str, str, dict[str, Any]]  # type, actor, subject, data


def _key_id(event: Any) -> str:
    return ids.to_public(ids.API_KEY, event.originator_id)


def _issued(e: ApiKey.Issued) -> Row:
    data = {"prefix": e.prefix, "name": e.name, "scopes": e.scopes, "number_ids": e.number_ids}
    if e.rotated_from:
        data["rotated_from"] = e.rotated_from
    return "api_key.issued", e.issued_by, _key_id(e), data


def _rotated(e: Any) -> Row:
    return "api_key.rotated", e.by, _key_id(e), {"successor_key_id": e.successor_key_id, "expires_at": iso(e.expires_at)}


def _rotated_used(e: Any) -> Row:
    return "api_key.rotated_key_used", _key_id(e), _key_id(e), {"method": e.method, "path": e.path}


def _revoked(e: Any) -> Row:
    return "api_key.revoked", e.by, _key_id(e), {}


def _signed_up(e: User.Registered) -> Row:
    return "user.registered", e.user_id, e.user_id, {"email": e.email, "is_admin": e.is_admin}


def _login(e: Any) -> Row:
    user_id = ids.to_public(ids.USER, e.originator_id)
    return "user.login", user_id, user_id, {"client_ip": e.client_ip}


def _logout(e: Any) -> Row:
    user_id = ids.to_public(ids.USER, e.originator_id)
    return "user.logout", user_id, user_id, {}


def _email_verified(e: Any) -> Row:
    user_id = ids.to_public(ids.USER, e.originator_id)
    return "user.email_verified", user_id, user_id, {}


def _password_changed(e: Any) -> Row:
    user_id = ids.to_public(ids.USER, e.originator_id)
    return "user.password_changed", user_id, user_id, {"reason": e.reason}


def _approved(e: Any) -> Row:
    return "tenant.approved", e.by, e.tenant_id, {}


def _voice_settings(e: Any) -> Row:
    return "tenant.voice_settings_changed", e.by, e.tenant_id, {
        "voice_engine_default": e.voice_engine_default, "voice_ab_disabled": e.voice_ab_disabled}


HANDLERS: dict[type, Callable[[Any], Row]] = {
    ApiKey.Issued: _issued,
    ApiKey.Rotated: _rotated,
    ApiKey.RotatedKeyUsed: _rotated_used,
    ApiKey.Revoked: _revoked,
    User.Registered: _signed_up,
    User.LoggedIn: _login,
    User.LoggedOut: _logout,
    User.EmailVerified: _email_verified,
    User.PasswordChanged: _password_changed,
    Tenant.Approved: _approved,
    Tenant.VoiceSettingsChanged: _voice_settings,
}


def audit_id(event: Any) -> str:
    return "aud_" + uuid.uuid5(event.originator_id, str(event.originator_version)).hex


class AuditEventsProjection:
    name = "audit_events_v1"
    handles = tuple(HANDLERS)

    def __init__(self, view: AuditEventsView) -> None:
        self.view = view
        self._insert = view.insert_statement()

    def process_event(self, event: Any, tracking: Tracking) -> None:
        handler = HANDLERS.get(type(event))
        if handler is None:  # unknown events still advance tracking
            self.view.insert_tracking(tracking)
            return
        kind, actor, subject, data = handler(event)
        at = getattr(event, "at", event.timestamp)
        row = {"id": audit_id(event), "tenant_id": pg_text(event.tenant_id), "type": kind, "actor": pg_text(actor),
               "subject": pg_text(subject), "occurred_at": iso(at), "data": pg_text(data)}
        params = {**row, "notification_id": tracking.notification_id, "at": at, "data": Jsonb(row["data"]),
                  "canonical": audit_chain.canonical(row), "genesis": audit_chain.GENESIS}
        self.view.write([(self._insert, params)], tracking)
