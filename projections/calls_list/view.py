"""``calls_list_v1``: one row per call, with an index for every filter and sort of ``GET /v1/calls``;
``calls_list_v1_counts`` and ``_daily_counts``: calls per tenant, filter value (and UTC day), so a
page's ``total`` need not count a million rows. Every list index leads with ``tenant_id``.
"""

from __future__ import annotations

from psycopg.sql import SQL, Composed, Identifier

from projections.view import SqlView

_TIEBREAK = "created_at DESC, call_id DESC"
# The filters whose combinations the counts tables answer exactly (queries.COUNTED_FILTERS); the
# daily table adds the UTC day of created_at, for start/end.
_FILTERS = "status, mode, direction, voice_engine, has_outcome"
_FILTERS_DDL = (
    "status text NOT NULL, mode text NOT NULL, direction text NOT NULL, voice_engine text NOT NULL, "
    "has_outcome boolean NOT NULL"
)
_DIMENSIONS = f"tenant_id, {_FILTERS}"


def _count_moved(moved: str) -> str:
    """One statement adding the rows moved (+1 new, -1 old) to both counts tables."""
    rows = f"{_DIMENSIONS}, (created_at AT TIME ZONE 'UTC')::date AS day"
    return f"""
                WITH moved AS ({moved.format(rows=rows)}),
                by_day AS (
                    INSERT INTO {{schema}}.{{daily_counts}} AS c ({_DIMENSIONS}, day, calls)
                    SELECT {_DIMENSIONS}, day, sum(delta) FROM moved GROUP BY {_DIMENSIONS}, day
                    HAVING sum(delta) <> 0
                    ON CONFLICT (tenant_id, day, {_FILTERS})
                    DO UPDATE SET calls = c.calls + EXCLUDED.calls
                )
                INSERT INTO {{schema}}.{{counts}} AS c ({_DIMENSIONS}, calls)
                SELECT {_DIMENSIONS}, sum(delta) FROM moved GROUP BY {_DIMENSIONS} HAVING sum(delta) <> 0
                ON CONFLICT ({_DIMENSIONS}) DO UPDATE SET calls = c.calls + EXCLUDED.calls;"""


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
        # to_prefix: LIKE 'prefix%' uses a btree only with pattern ops, whatever the collation. The
        # equality filters ride along (INCLUDE), so a total with a prefix is an index-only count.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_to_idx ON {schema}.{table} "
        f"(tenant_id, to_number text_pattern_ops) INCLUDE ({_FILTERS})",
        # A sort by a measure puts calls without one (not ended yet) last in both directions.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_desc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds DESC NULLS LAST, {_TIEBREAK})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_asc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds ASC NULLS LAST, {_TIEBREAK})",
        # confidence_desc, and the min_confidence/max_confidence range (index-only totals, as above).
        "CREATE INDEX IF NOT EXISTS calls_list_v1_confidence_idx ON {schema}.{table} "
        f"(tenant_id, confidence DESC NULLS LAST, {_TIEBREAK}) INCLUDE ({_FILTERS})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_cost_idx ON {schema}.{table} "
        f"(tenant_id, cost_total DESC NULLS LAST, {_TIEBREAK})",
        # The watchdog (overdue.py) reads the live calls of every tenant: few rows, a small index.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_live_idx ON {schema}.{table} (created_at) "
        "WHERE status IN ('queued', 'in_progress')",
        f"""
        CREATE TABLE IF NOT EXISTS {{schema}}.{{counts}} (
            tenant_id text NOT NULL,
            {_FILTERS_DDL},
            calls bigint NOT NULL,
            PRIMARY KEY ({_DIMENSIONS})
        )
        """,
        f"""
        CREATE TABLE IF NOT EXISTS {{schema}}.{{daily_counts}} (
            tenant_id text NOT NULL,
            day date NOT NULL,
            {_FILTERS_DDL},
            calls bigint NOT NULL,
            PRIMARY KEY (tenant_id, day, {_FILTERS})
        )
        """,
        # Statement-level, from the transition tables: one upsert per write and table, whoever
        # writes (the projection, a bulk load), and nothing at all for a replayed event.
        f"""
        CREATE OR REPLACE FUNCTION {{schema}}.{{count_rows}}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                {_count_moved("SELECT {rows}, 1 AS delta FROM new_rows")}
            ELSIF TG_OP = 'UPDATE' THEN
                {_count_moved("SELECT {rows}, 1 AS delta FROM new_rows UNION ALL SELECT {rows}, -1 FROM old_rows")}
            ELSE
                {_count_moved("SELECT {rows}, -1 AS delta FROM old_rows")}
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
            daily_counts=Identifier(f"{self.table}_daily_counts"),
            count_rows=Identifier(f"{self.table}_count_rows"),
        )
