"""Keeps ``suppressions_v1`` in step with SuppressionEntry events (version-guarded upserts)."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from domain.calls.suppression import SuppressionEntry
from projections.suppressions.view import SuppressionsView
from projections.view import pg_text


class SuppressionsProjection:
    name = "suppressions_v1"
    handles = (SuppressionEntry.Added, SuppressionEntry.Readded, SuppressionEntry.Removed)

    def __init__(self, view: SuppressionsView) -> None:
        self.view = view
        self._added = view.sql(
            "INSERT INTO {schema}.{table} AS s (tenant_id, e164, reason, expires_at, added_by, added_at, version) "
            "VALUES (%(tenant_id)s, %(e164)s, %(reason)s, %(expires_at)s, %(by)s, %(at)s, %(version)s) "
            "ON CONFLICT (tenant_id, e164) DO UPDATE SET reason = EXCLUDED.reason, expires_at = EXCLUDED.expires_at, "
            "added_by = EXCLUDED.added_by, added_at = EXCLUDED.added_at, removed_by = NULL, removed_at = NULL, "
            "version = EXCLUDED.version WHERE s.version < EXCLUDED.version"
        )
        self._removed = view.sql(
            "UPDATE {schema}.{table} SET removed_by = %(by)s, removed_at = %(at)s, version = %(version)s "
            "WHERE tenant_id = %(tenant_id)s AND e164 = %(e164)s AND version < %(version)s"
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, (SuppressionEntry.Added, SuppressionEntry.Readded)):
            params = {"tenant_id": event.tenant_id, "e164": event.e164, "reason": pg_text(event.reason),
                      "expires_at": event.expires_at, "by": event.by, "at": event.at, "version": event.originator_version}
            self.view.write([(self._added, params)], tracking)
        elif isinstance(event, SuppressionEntry.Removed):
            self.view.write([(self._removed, {"tenant_id": event.tenant_id, "e164": event.e164,
                                              "by": event.by, "at": event.at, "version": event.originator_version})],
                            tracking)
        else:
            self.view.insert_tracking(tracking)

