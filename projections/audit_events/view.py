"""``audit_events_v1``: one row per audited account event, newest first per tenant, each tenant's
rows hash-chained in log order (domain/audit_chain.py): ``prev_hash`` and ``hash`` are written by
the insert itself, from the tenant's latest row, in the projection's transaction."""

from __future__ import annotations

from psycopg.sql import SQL, Composed, Identifier

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
        "ALTER TABLE {schema}.{table} ADD COLUMN IF NOT EXISTS prev_hash text",
        "ALTER TABLE {schema}.{table} ADD COLUMN IF NOT EXISTS hash text",
        # Rows projected before the chain existed have no hash: the trail is projected again from
        # the start of the log (the follower starts from its tracking), chained this time.
        "DO $$ BEGIN IF EXISTS (SELECT FROM {schema}.{table} WHERE hash IS NULL) THEN "
        "DELETE FROM {schema}.{table}; DELETE FROM {schema}.{tracking}; END IF; END $$",
        "CREATE INDEX IF NOT EXISTS audit_events_v1_subject_idx ON {schema}.{table} (tenant_id, subject, notification_id)",
    )

    def sql(self, statement: str) -> Composed:
        return SQL(statement).format(schema=Identifier(self.datastore.schema), table=Identifier(self.table),
                                     tracking=Identifier(f"{self.table}_tracking"))

    def insert_statement(self) -> Composed:
        """One row, chained to the tenant's latest (or the genesis); ``canonical`` is the row's
        canonical JSON (audit_chain.canonical), hashed here as audit_chain.link hashes it."""
        return self.sql(
            "INSERT INTO {schema}.{table} "
            "(audit_id, notification_id, tenant_id, type, actor, subject, occurred_at, data, prev_hash, hash) "
            "SELECT %(id)s, %(notification_id)s, %(tenant_id)s, %(type)s, %(actor)s, %(subject)s, %(at)s, %(data)s, "
            "prev.hash, encode(sha256(convert_to(prev.hash || %(canonical)s, 'UTF8')), 'hex') FROM (SELECT COALESCE("
            "(SELECT hash FROM {schema}.{table} WHERE tenant_id = %(tenant_id)s ORDER BY notification_id DESC LIMIT 1), "
            "%(genesis)s) AS hash) AS prev ON CONFLICT (audit_id) DO NOTHING"
        )
