"""``calls_list_v1``: one row per call, with an index for every filter and sort of ``GET /v1/calls``;
its counts tables (COUNTS_TABLES): calls per tenant and filter value, and per UTC day or month,
to-number prefix or confidence bucket, so a page's ``total`` need not count a million rows. Every
list index leads with ``tenant_id``.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.sql import SQL, Composed, Identifier

from projections.view import SqlView

_TIEBREAK = "created_at DESC, call_id DESC"
# The filters whose combinations the counts tables answer exactly (queries.COUNTED_FILTERS); each
# table but the first adds one key of its own (CountsTable.key).
_FILTERS = "status, mode, direction, voice_engine, has_outcome"
_FILTERS_DDL = (
    "status text NOT NULL, mode text NOT NULL, direction text NOT NULL, voice_engine text NOT NULL, "
    "has_outcome boolean NOT NULL"
)
# What a counts table may key on, of a row written to calls_list_v1.
_COUNTED_COLUMNS = f"tenant_id, {_FILTERS}, created_at, to_number, confidence"

# A to_prefix of up to this many characters ('+44', '+4420', '+442071') is summed from the prefix
# counts; a longer one matches few enough calls to count them in calls_list_v1_to_idx. One more
# character would add a counts row to every write, and up to ten times the distinct prefixes.
PREFIX_COUNTED = 7
# Confidence buckets per unit: a power of two, so that a bucket's bounds (k / 128) are exact
# doubles and floor(confidence * 128) puts a value in a bucket with no rounding at its edges.
CONFIDENCE_BUCKETS = 128


@dataclass(frozen=True)
class CountsTable:
    """Calls per tenant and equality filter values and, if ``key`` is given, per the ``value`` of
    that key for a row of ``calls_list_v1``; ``expand`` may make several keys of one row (one per
    prefix length), and rows that fail ``counted`` are left out (they never match the filter)."""

    name: str  # the table is calls_list_v1_<name>; also its placeholder in the DDL
    key: str = ""  # "column type"
    value: str = ""
    expand: str = ""
    counted: str = ""

    @property
    def columns(self) -> str:
        """The primary key: tenant first (every read is a tenant's), then the own key for ranges."""
        own = f"{self.key.split()[0]}, " if self.key else ""
        return f"tenant_id, {own}{_FILTERS}"

    def ddl(self) -> str:
        own = f"{self.key} NOT NULL, " if self.key else ""
        return (
            f"CREATE TABLE IF NOT EXISTS {{schema}}.{{{self.name}}} (tenant_id text NOT NULL, {own}"
            f"{_FILTERS_DDL}, calls bigint NOT NULL, PRIMARY KEY ({self.columns}))"
        )

    def add(self) -> str:
        """Adds the ``delta`` of the rows of ``moved`` (a CTE of _COUNTED_COLUMNS), one upsert per
        group; groups whose rows cancel out (an update that kept the counted values) write nothing."""
        own = f"{self.value} AS {self.key.split()[0]}, " if self.key else ""
        rows = " ".join(filter(None, ("moved", self.expand, self.counted and f"WHERE {self.counted}")))
        return (
            f"INSERT INTO {{schema}}.{{{self.name}}} AS c ({self.columns}, calls) "
            f"SELECT tenant_id, {own}{_FILTERS}, sum(delta) FROM {rows} "
            f"GROUP BY {self.columns} HAVING sum(delta) <> 0 "
            f"ON CONFLICT ({self.columns}) DO UPDATE SET calls = c.calls + EXCLUDED.calls"
        )

    def backfill(self) -> str:
        """Counts every row if this table is empty: it was just created next to rows written before
        it existed. Once a row has been counted its counts row stays (at zero, if need be), so a
        table in step is never empty while there are rows to count: later starts change nothing."""
        # In a DO block, so that the scan of every row is not even planned (nor JIT-compiled) when
        # the table is in step.
        return (
            f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM {{schema}}.{{{self.name}}}) THEN "
            f"WITH moved AS (SELECT {_COUNTED_COLUMNS}, 1 AS delta FROM {{schema}}.{{table}}) {self.add()}; "
            "END IF; END $$"
        )


COUNTS_TABLES = (
    CountsTable("counts"),
    CountsTable("daily_counts", "day date", "(created_at AT TIME ZONE 'UTC')::date"),
    CountsTable("monthly_counts", "month date", "date_trunc('month', created_at AT TIME ZONE 'UTC')::date"),
    # '+', '+4', '+44', ...: one row per prefix length of the number, up to PREFIX_COUNTED.
    CountsTable("prefix_counts", "prefix text", "left(to_number, n)",
                expand=f"CROSS JOIN generate_series(1, least(length(to_number), {PREFIX_COUNTED})) AS n"),
    CountsTable("confidence_counts", "bucket integer", f"floor(confidence * {CONFIDENCE_BUCKETS})::integer",
                counted="confidence IS NOT NULL"),
)


def _count_moved(moved: str) -> str:
    """One statement adding the rows moved (+1 new, -1 old) to every counts table."""
    *others, last = COUNTS_TABLES
    upserts = "".join(f", {table.name} AS ({table.add()})" for table in others)
    return f"WITH moved AS ({moved.format(rows=_COUNTED_COLUMNS)}){upserts} {last.add()};"


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
            outcome jsonb,
            version integer NOT NULL
        )
        """,
        # Added after the first release: installs made before get the column, NULL on the rows
        # projected before it (docs: a rebuild of this view fills them from the log).
        "ALTER TABLE {schema}.{table} ADD COLUMN IF NOT EXISTS outcome jsonb",
        # created_desc (forward), created_asc (backward), start/end, and the ordered scan that the
        # low-cardinality filters (mode, direction, voice_engine, has_outcome) filter.
        f"CREATE INDEX IF NOT EXISTS calls_list_v1_created_idx ON {{schema}}.{{table}} (tenant_id, {_TIEBREAK})",
        # status, also a rare one (queued, in_progress): equality, then the default order.
        f"CREATE INDEX IF NOT EXISTS calls_list_v1_status_idx ON {{schema}}.{{table}} (tenant_id, status, {_TIEBREAK})",
        # to_prefix: LIKE 'prefix%' uses a btree only with pattern ops, whatever the collation. The
        # equality filters ride along (INCLUDE), so the total of a prefix longer than the prefix
        # counts keep is an index-only count.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_to_idx ON {schema}.{table} "
        f"(tenant_id, to_number text_pattern_ops) INCLUDE ({_FILTERS})",
        # A sort by a measure puts calls without one (not ended yet) last in both directions.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_desc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds DESC NULLS LAST, {_TIEBREAK})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_duration_asc_idx ON {schema}.{table} "
        f"(tenant_id, duration_seconds ASC NULLS LAST, {_TIEBREAK})",
        # confidence_desc, the min_confidence/max_confidence range, and the index-only counts of the
        # partial confidence buckets at the edges of a range (equality filters included, as above).
        "CREATE INDEX IF NOT EXISTS calls_list_v1_confidence_idx ON {schema}.{table} "
        f"(tenant_id, confidence DESC NULLS LAST, {_TIEBREAK}) INCLUDE ({_FILTERS})",
        "CREATE INDEX IF NOT EXISTS calls_list_v1_cost_idx ON {schema}.{table} "
        f"(tenant_id, cost_total DESC NULLS LAST, {_TIEBREAK})",
        # The watchdog (overdue.py) reads the live calls of every tenant: few rows, a small index.
        "CREATE INDEX IF NOT EXISTS calls_list_v1_live_idx ON {schema}.{table} (created_at) "
        "WHERE status IN ('queued', 'in_progress')",
        *(table.ddl() for table in COUNTS_TABLES),
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
        # A counts table added to a filled calls_list_v1 starts from its rows. After the triggers:
        # CREATE TRIGGER holds a lock that keeps writers out until this (one) transaction commits,
        # so no write falls between the backfill and the trigger that counts it.
        *(table.backfill() for table in COUNTS_TABLES),
    )

    def sql(self, statement: str) -> Composed:
        return SQL(statement).format(
            schema=Identifier(self.datastore.schema),
            table=Identifier(self.table),
            count_rows=Identifier(f"{self.table}_count_rows"),
            **{counts.name: Identifier(f"{self.table}_{counts.name}") for counts in COUNTS_TABLES},
        )
