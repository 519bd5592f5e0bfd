"""``audit_events_v1``: one row per audited account event, newest first per tenant."""

from __future__ import annotations

from projections.view import SqlView


class AuditEventsView(SqlView):
    table = "audit_events_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            audit_id text PRIMARY KEY,
            notification_id bigint NOT NULL,
            tenant_id text NOT NULL,
            type text NOT NULL,
            actor text NOT NULL,
            subject text NOT NULL,
            occurred_at timestamptz NOT NULL,
            data jsonb NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS audit_events_v1_tenant_idx ON {schema}.{table} (tenant_id, notification_id DESC)",
    )

    def insert_statement(self):
        return self.sql(
            "INSERT INTO {schema}.{table} "
            "(audit_id, notification_id, tenant_id, type, actor, subject, occurred_at, data) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (audit_id) DO NOTHING"
        )
