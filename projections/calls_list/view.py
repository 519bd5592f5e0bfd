"""``calls_list_v1``: one row per call, with an index for every filter and sort of ``GET /v1/calls``,
and ``calls_list_v1_counts``: calls per tenant and filter dimension, so a page's ``total`` does not
count a million rows. Every list index leads with ``tenant_id`` and ends with the order's tiebreak.
"""

from __future__ import annotations

from psycopg.sql import SQL, Composed, Identifier

from projections.view import SqlView

_TIEBREAK = "created_at DESC, call_id DESC"
# The filters whose combinations the counts table answers exactly (queries.COUNTED_FILTERS).
_DIMENSIONS = "tenant_id, status, mode, direction, voice_engine, has_outcome"


class CallsListView(SqlView):
    table = "calls_list_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            call_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            status text NOT NULL,
            mode text NOT NULL,
            direction text NOT NULL,
            voice_engine text NOT NULL,
            to_number text NOT NULL,
            from_number text NOT NULL,
            objective text NOT NULL,
            confidence double precision,
            duration_seconds integer,
            cost_total numeric,
            error_code text,
            recording_url text,
            has_outcome boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL,
            ended_at timestamptz,
            metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb,
            version integer NOT NULL
        )
        """,
        # created_desc (forward), created_asc (backward), start/end, and the ordered scan that the
        # low-cardinality filters (mode, direction, voice_engine, has_outcome) filter.
        f"CREATE INDEX IF NOT EXISTS calls_list_v1_created_idx ON {{schema}}.{{table}} (tenant_id, {_TIEBREAK})",
        # status, also a rare one (queued, in_progress): equality, then the default order.
        f"CREATE INDEX IF NOT EXISTS calls_list_v1_status_idx ON {{schema}}.{{table}} (tenant_id, status, {_TIEBREAK})",
        # to_prefix: LIKE 'prefix%' uses a btree only with pattern ops, whatever the collation.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_to_idx ON {schema}.{table} (tenant_id, to_number text_pattern_ops)",
        # A sort by a measure puts calls without one (not ended yet) last in both directions.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_desc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds DESC NULLS LAST, {_TIEBREAK})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_asc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds ASC NULLS LAST, {_TIEBREAK})",
        # confidence_desc, and the min_confidence/max_confidence range.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_confidence_idx ON {schema}.{table} "
        f"(tenant_id, confidence DESC NULLS LAST, {_TIEBREAK})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_cost_idx ON {schema}.{table} "
        f"(tenant_id, cost_total DESC NULLS LAST, {_TIEBREAK})",
        # The watchdog (overdue.py) reads the live calls of every tenant: few rows, a small index.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_live_idx ON {schema}.{table} (created_at) "
        "WHERE status IN ('queued', 'in_progress')",
        f"""
        CREATE TABLE IF NOT EXISTS {{schema}}.{{counts}} (
            tenant_id text NOT NULL,
            status text NOT NULL,
            mode text NOT NULL,
            direction text NOT NULL,
            voice_engine text NOT NULL,
            has_outcome boolean NOT NULL,
            calls bigint NOT NULL,
            PRIMARY KEY ({_DIMENSIONS})
        )
        """,
        # Statement-level, from the transition tables: one upsert per write, whoever writes (the
        # projection, a bulk load), and a no-op for a replayed event that changed no row.
        f"""
        CREATE OR REPLACE FUNCTION {{schema}}.{{count_rows}}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO {{schema}}.{{counts}} AS c ({_DIMENSIONS}, calls)
                SELECT {_DIMENSIONS}, count(*) FROM new_rows GROUP BY {_DIMENSIONS}
                ON CONFLICT ({_DIMENSIONS}) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
            ELSIF TG_OP = 'UPDATE' THEN
                INSERT INTO {{schema}}.{{counts}} AS c ({_DIMENSIONS}, calls)
                SELECT {_DIMENSIONS}, sum(delta) FROM (
                    SELECT {_DIMENSIONS}, 1 AS delta FROM new_rows
                    UNION ALL SELECT {_DIMENSIONS}, -1 FROM old_rows
                ) AS moved GROUP BY {_DIMENSIONS} HAVING sum(delta) <> 0
                ON CONFLICT ({_DIMENSIONS}) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
            ELSE
                INSERT INTO {{schema}}.{{counts}} AS c ({_DIMENSIONS}, calls)
                SELECT {_DIMENSIONS}, -count(*) FROM old_rows GROUP BY {_DIMENSIONS}
                ON CONFLICT ({_DIMENSIONS}) DO UPDATE SET calls = c.calls + EXCLUDED.calls;
            END IF;
            RETURN NULL;
        END
        $$
        """,
        "CREATE OR REPLACE TRIGGER count_inserted AFTER INSERT ON {schema}.{table} "
        "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {schema}.{count_rows}()",
        "CREATE OR REPLACE TRIGGER count_updated AFTER UPDATE ON {schema}.{table} "
        "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT "
        "EXECUTE FUNCTION {schema}.{count_rows}()",
        "CREATE OR REPLACE TRIGGER count_deleted AFTER DELETE ON {schema}.{table} "
        "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {schema}.{count_rows}()",
    )

    def sql(self, statement: str) -> Composed:
        return SQL(statement).format(
            schema=Identifier(self.datastore.schema),
            table=Identifier(self.table),
            counts=Identifier(f"{self.table}_counts"),
            count_rows=Identifier(f"{self.table}_count_rows"),
        )
