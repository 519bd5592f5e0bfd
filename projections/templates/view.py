"""``templates_v1``: one row per template (its API record in ``record``), deleted ones marked."""

from __future__ import annotations

from projections.view import SqlView


class TemplatesView(SqlView):
    table = "templates_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            tenant_id text NOT NULL,
            template_id text NOT NULL,
            position bigint NOT NULL,  -- the Defined event's place in the log: creation order, no ties
            created_at timestamptz NOT NULL,
            deleted_at timestamptz,
            record jsonb NOT NULL,
            version integer NOT NULL,
            PRIMARY KEY (tenant_id, template_id)
        )
        """,
        "CREATE INDEX IF NOT EXISTS templates_v1_newest_idx ON {schema}.{table} (tenant_id, position DESC) "
        "WHERE deleted_at IS NULL",
    )
