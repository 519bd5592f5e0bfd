"""``flows_v1``: one row per flow with its summary (state, versions), kept by ``FlowsProjection``."""

from __future__ import annotations

from projections.view import SqlView


class FlowsView(SqlView):
    table = "flows_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            tenant_id text NOT NULL,
            flow_id text NOT NULL,
            position bigint NOT NULL,  -- the Drafted event's place in the log: creation order, no ties
            name text NOT NULL,
            state text NOT NULL,
            draft_version integer NOT NULL,
            published_version integer,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            version integer NOT NULL,
            PRIMARY KEY (tenant_id, flow_id)
        )
        """,
        "CREATE INDEX IF NOT EXISTS flows_v1_newest_idx ON {schema}.{table} (tenant_id, position DESC)",
    )
