"""``suppressions_v1``: a tenant's suppressed numbers with who added them and when."""

from __future__ import annotations

from projections.view import SqlView


class SuppressionsView(SqlView):
    table = "suppressions_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            tenant_id text NOT NULL,
            e164 text NOT NULL,
            reason text,
            expires_at timestamptz,
            added_by text NOT NULL,
            added_at timestamptz NOT NULL,
            removed_by text,
            removed_at timestamptz,
            version integer NOT NULL,
            PRIMARY KEY (tenant_id, e164)
        )
        """,
    )
