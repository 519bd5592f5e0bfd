"""Keeps ``templates_v1`` in step with Template events (version-guarded, so a replay changes nothing)."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking
from psycopg.types.json import Jsonb

from domain.templates.template import Template
from projections.templates.view import TemplatesView
from projections.view import pg_text
from domain.timestamps import iso


def template_record(event: Any) -> dict[str, Any]:
    """The API's Template from its ``Defined`` event (the same fields ``GET /v1/templates/{id}`` shows)."""
    return {"id": event.template_id, "name": event.name, "description": event.description,
            "objective": event.objective, "context": event.context, "outcome_schema": event.outcome_schema,
            "tools": event.tools, "consent_type": event.consent_type, "voice_engine": event.voice_engine,
            "language": event.language, "created_at": iso(event.at), "created_by": event.by}


class TemplatesProjection:
    name = "templates_v1"
    handles = (Template.Defined, Template.Deleted)

    def __init__(self, view: TemplatesView) -> None:
        self.view = view
        self._defined = view.sql(
            "INSERT INTO {schema}.{table} (tenant_id, template_id, position, created_at, record, version) "
            "VALUES (%(tenant_id)s, %(template_id)s, %(position)s, %(at)s, %(record)s, %(version)s) "
            "ON CONFLICT (tenant_id, template_id) DO NOTHING"
        )
        self._deleted = view.sql(
            "UPDATE {schema}.{table} SET deleted_at = %(at)s, version = %(version)s "
            "WHERE tenant_id = %(tenant_id)s AND template_id = %(template_id)s AND version < %(version)s"
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Template.Defined):
            params = {"tenant_id": event.tenant_id, "template_id": event.template_id, "at": event.at,
                      "position": tracking.notification_id,
                      "record": Jsonb(pg_text(template_record(event))), "version": event.originator_version}
            self.view.write([(self._defined, params)], tracking)
        elif isinstance(event, Template.Deleted):
            template_id = Template.public_id(event.originator_id)
            self.view.write([(self._deleted, {"tenant_id": event.tenant_id, "template_id": template_id,
                                              "at": event.at, "version": event.originator_version})], tracking)
        else:
            self.view.insert_tracking(tracking)
