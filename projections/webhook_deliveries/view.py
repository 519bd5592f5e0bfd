"""``webhook_deliveries_v1``: one row per delivery, as the aggregate stands after its last event:
the history routes page it per endpoint, and the dispatcher finds what is due in it."""

from __future__ import annotations

from projections.view import SqlView


class WebhookDeliveriesView(SqlView):
    table = "webhook_deliveries_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            delivery_uuid uuid PRIMARY KEY,
            delivery_id text NOT NULL,
            tenant_id text NOT NULL,
            endpoint_id text NOT NULL,
            call_id text NOT NULL,
            event_id text NOT NULL,
            event_type text NOT NULL,
            status text NOT NULL,
            attempts jsonb NOT NULL,
            next_attempt_at timestamptz,
            due_at timestamptz,
            created_at timestamptz NOT NULL,
            version integer NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS webhook_deliveries_v1_endpoint_idx ON {schema}.{table} "
        "(tenant_id, endpoint_id, created_at DESC, delivery_uuid)",
        "CREATE INDEX IF NOT EXISTS webhook_deliveries_v1_due_idx ON {schema}.{table} (due_at) "
        "WHERE due_at IS NOT NULL",
    )
