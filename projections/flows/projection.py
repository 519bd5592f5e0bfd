"""Keeps ``flows_v1`` in step with Flow events (version-guarded, so a replay changes nothing)."""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import Tracking

from domain.flows.flow import DRAFT, PUBLISHED, Flow
from projections.flows.view import FlowsView
from projections.view import pg_text


class FlowsProjection:
    name = "flows_v1"
    handles = (Flow.Drafted, Flow.DraftEdited, Flow.Published)

    def __init__(self, view: FlowsView) -> None:
        self.view = view
        self._drafted = view.sql(
            "INSERT INTO {schema}.{table} (tenant_id, flow_id, position, name, state, draft_version, created_at, "
            "updated_at, version) VALUES (%(tenant_id)s, %(flow_id)s, %(position)s, %(name)s, %(state)s, 1, %(at)s, "
            "%(at)s, %(version)s) ON CONFLICT (tenant_id, flow_id) DO NOTHING"
        )
        self._edited = view.sql(
            "UPDATE {schema}.{table} SET name = %(name)s, draft_version = %(draft_version)s, updated_at = %(at)s, "
            "version = %(version)s WHERE tenant_id = %(tenant_id)s AND flow_id = %(flow_id)s AND version < %(version)s"
        )
        self._published = view.sql(
            "UPDATE {schema}.{table} SET state = %(state)s, published_version = %(published_version)s, "
            "updated_at = %(at)s, version = %(version)s "
            "WHERE tenant_id = %(tenant_id)s AND flow_id = %(flow_id)s AND version < %(version)s"
        )

    def process_event(self, event: Any, tracking: Tracking) -> None:
        common = {"tenant_id": event.tenant_id, "flow_id": Flow.public_id(event.originator_id), "at": event.at,
                  "version": event.originator_version}
        if isinstance(event, Flow.Drafted):
            self.view.write([(self._drafted, {**common, "position": tracking.notification_id,
                                              "name": pg_text(event.name), "state": DRAFT})], tracking)
        elif isinstance(event, Flow.DraftEdited):
            self.view.write([(self._edited, {**common, "name": pg_text(event.name),
                                             "draft_version": event.draft_version})], tracking)
        elif isinstance(event, Flow.Published):
            self.view.write([(self._published, {**common, "state": PUBLISHED, "published_version": event.version})],
                            tracking)
        else:
            self.view.insert_tracking(tracking)
