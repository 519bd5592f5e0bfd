"""``api_keys_v1``: every key of a tenant, redacted (prefix and metadata, never the secret)."""

from __future__ import annotations

from projections.view import SqlView


class ApiKeysView(SqlView):
    table = "api_keys_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            key_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            user_id text NOT NULL,
            name text,
            prefix text NOT NULL,
            scopes jsonb,
            number_ids jsonb,
            created_at timestamptz NOT NULL,
            expires_at timestamptz,
            revoked_at timestamptz,
            rotated_to text,
            rotated_from text,
            last_used_during_grace_at timestamptz,
            version integer NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS api_keys_v1_tenant_idx ON {schema}.{table} (tenant_id, created_at DESC)",
    )
