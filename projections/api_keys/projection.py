"""Keeps ``api_keys_v1`` in step with ApiKey events; updates are guarded by event version."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking
from psycopg.types.json import Jsonb

from domain import ids
from domain.accounts.api_key import ApiKey
from projections.api_keys.view import ApiKeysView
from projections.view import pg_text


def _json(value: Any) -> Jsonb | None:
    return Jsonb(pg_text(list(value))) if value is not None else None


class ApiKeysProjection:
    name = "api_keys_v1"
    handles = (ApiKey.Issued, ApiKey.Rotated, ApiKey.RotatedKeyUsed, ApiKey.Revoked)

    def __init__(self, view: ApiKeysView) -> None:
        self.view = view
        self._insert = view.sql(
            "INSERT INTO {schema}.{table} (key_id, tenant_id, user_id, name, prefix, scopes, number_ids, "
            "created_at, rotated_from, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (key_id) DO NOTHING"
        )
        guard = " WHERE key_id = %(key_id)s AND version < %(version)s"
        self._rotated = view.sql(
            "UPDATE {schema}.{table} SET rotated_to = %(rotated_to)s, expires_at = %(expires_at)s, "
            "version = %(version)s" + guard
        )
        self._used = view.sql(
            "UPDATE {schema}.{table} SET last_used_during_grace_at = %(at)s, version = %(version)s" + guard
        )
        self._revoked = view.sql(
            "UPDATE {schema}.{table} SET revoked_at = %(at)s, version = %(version)s" + guard
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        key_id = ids.to_public(ids.API_KEY, event.originator_id)
        common = {"key_id": key_id, "version": event.originator_version}
        if isinstance(event, ApiKey.Issued):
            params: Any = (
                key_id, event.tenant_id, event.user_id, pg_text(event.name), event.prefix,
                _json(event.scopes), _json(event.number_ids), event.at, event.rotated_from,
                event.originator_version,
            )
            statement = self._insert
        elif isinstance(event, ApiKey.Rotated):
            statement, params = self._rotated, {**common, "rotated_to": event.successor_key_id, "expires_at": event.expires_at}
        elif isinstance(event, ApiKey.RotatedKeyUsed):
            statement, params = self._used, {**common, "at": event.at}
        elif isinstance(event, ApiKey.Revoked):
            statement, params = self._revoked, {**common, "at": event.at}
        else:
            self.view.insert_tracking(tracking)
            return
        self.view.write([(statement, params)], tracking)
