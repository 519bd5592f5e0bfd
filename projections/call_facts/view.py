"""``call_facts_v1``: one row per terminal call, what the analytics reports read (docs/analytics.md).

Beside it:
- ``call_facts_v1_open``: what is known of each call not yet terminal (staged from its events);
  the call's terminal event moves the row into ``call_facts_v1`` with the end's status and costs.
- ``call_facts_v1_numbers``: which tenant's number holds each E.164 (from NumberClaim events), so
  a fact names the number a call was made from (outbound) or to (inbound).
- ``call_facts_v1_daily`` and the other ROLLUPS: the facts summed per tenant, UTC day and a few
  dimensions, kept by a statement-level trigger (a fact is only ever inserted), so a report over
  whole days reads a few hundred rows a day, not every call.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg.sql import SQL, Composed, Identifier

from projections.view import SqlView

CONFIDENCE_BUCKETS = 10  # bucket k holds k/10 <= confidence < (k+1)/10; 1.0 is in the last one


@dataclass(frozen=True)
class Rollup:
    """The facts summed per tenant, UTC day and ``keys`` (table ``call_facts_v1_<name>``): a report
    whose filters and groups are all among the keys reads it for the whole days of its window."""

    name: str
    keys: tuple[str, ...]

    def ddl(self) -> str:
        keys = ", ".join(f"{key} text NOT NULL" for key in self.keys)
        sums = ", ".join(f"{name} {_SUM_TYPES.get(name, 'bigint')} NOT NULL" for name in ROLLUP_SUMS)
        return (f"CREATE TABLE IF NOT EXISTS {{schema}}.{{{self.name}}} (tenant_id text NOT NULL, day date NOT NULL, "
                f"{keys}, {sums}, PRIMARY KEY (tenant_id, day, {', '.join(self.keys)}))")

    def add(self, rows: str) -> str:
        """Adds the facts of ``rows`` (a table or a transition table): one upsert per key."""
        # A NULL (error_code of a completed call, number_id, country) is kept as '': a key is never NULL.
        values = ", ".join(f"COALESCE({key}, '')" for key in self.keys)
        sums = ", ".join(f"sum(COALESCE({expression}, 0))" for expression in ROLLUP_SUMS.values())
        updates = ", ".join(f"{name} = r.{name} + EXCLUDED.{name}" for name in ROLLUP_SUMS)
        keys = ", ".join(self.keys)
        return (
            f"INSERT INTO {{schema}}.{{{self.name}}} AS r (tenant_id, day, {keys}, {', '.join(ROLLUP_SUMS)}) "
            f"SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date, {values}, {sums} FROM {rows} "
            f"GROUP BY {', '.join(str(i + 1) for i in range(2 + len(self.keys)))} "
            f"ON CONFLICT (tenant_id, day, {keys}) DO UPDATE SET {updates}"
        )


# Each keeps a few of the dimensions: all of them in one key would be about a row per call. The
# first holds every low-cardinality one (about 165 rows a day on a million calls a year); the
# others one wide dimension each, with what every report breaks down by (status, error_code).
# A report whose keys no rollup holds (number_id with voice_engine, say) reads the facts.
ROLLUPS = (
    Rollup("daily", ("status", "direction", "mode", "voice_engine", "error_code")),
    Rollup("daily_numbers", ("status", "error_code", "number_id")),
    Rollup("daily_countries", ("status", "error_code", "country")),
)
# The rollups' sums, each the sum of the same expression over facts (source.py reads either).
ROLLUP_SUMS: dict[str, str] = {
    "calls": "1",
    "cost_voice": "cost_voice",
    "cost_extraction": "cost_extraction",
    "cost_total": "cost_total",
    "confidence_sum": "confidence::numeric",  # exact: a mean's rounding must not hang on the order of a sum
    "confidence_calls": "(confidence IS NOT NULL)::int",
    # least() skips a NULL (least(NULL, 9) is 9): a call without a confidence is in no bucket.
    **{f"confidence_{k}": f"CASE WHEN least(floor(confidence * {CONFIDENCE_BUCKETS}), {CONFIDENCE_BUCKETS - 1}) = {k} "
                          "AND confidence IS NOT NULL THEN 1 ELSE 0 END" for k in range(CONFIDENCE_BUCKETS)},
    "optional_fields": "CASE WHEN status = 'completed' THEN fields_optional ELSE 0 END",
    "optional_filled": "CASE WHEN status = 'completed' THEN optional_filled ELSE 0 END",
}
_SUM_TYPES = {"cost_voice": "numeric", "cost_extraction": "numeric", "cost_total": "numeric",
              "confidence_sum": "numeric"}


class CallFactsView(SqlView):
    table = "call_facts_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            call_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            created_at timestamptz NOT NULL,
            ended_at timestamptz NOT NULL,
            direction text NOT NULL,
            mode text NOT NULL,
            status text NOT NULL,
            error_code text,
            voice_engine text NOT NULL,
            number_id text,
            to_country text,
            from_country text,
            country text,
            duration_seconds integer,
            first_audio_ms integer,
            confidence double precision,
            cost_voice numeric NOT NULL,
            cost_extraction numeric NOT NULL,
            cost_total numeric NOT NULL,
            fields_filled integer NOT NULL,
            fields_required integer NOT NULL,
            fields_optional integer NOT NULL,
            optional_filled integer NOT NULL,
            template_id text,
            flow_id text,
            flow_version integer
        )
        """,
        # The window of every report; the latency columns ride along, so counting a year of values
        # for the percentiles reads this index alone (an index-only scan), not the wide rows.
        "CREATE INDEX IF NOT EXISTS call_facts_v1_created_idx ON {schema}.{table} (tenant_id, created_at) "
        "INCLUDE (duration_seconds, first_audio_ms)",
        "CREATE INDEX IF NOT EXISTS call_facts_v1_number_idx ON {schema}.{table} (tenant_id, number_id, created_at)",
        "CREATE INDEX IF NOT EXISTS call_facts_v1_country_idx ON {schema}.{table} (tenant_id, country, created_at)",
        """
        CREATE TABLE IF NOT EXISTS {schema}.{open} (
            call_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            created_at timestamptz NOT NULL,
            direction text NOT NULL,
            mode text NOT NULL,
            voice_engine text NOT NULL,
            number_id text,
            to_country text,
            from_country text,
            required_fields text[] NOT NULL,
            optional_fields text[] NOT NULL,
            filled_fields text[] NOT NULL DEFAULT '{{}}',
            confidence double precision,
            duration_seconds integer,
            ended_at timestamptz,
            session_opened_at timestamptz,
            first_agent_at timestamptz,
            template_id text,
            flow_id text,
            flow_version integer,
            version integer NOT NULL
        )
        """,
        "CREATE TABLE IF NOT EXISTS {schema}.{numbers} (claim_id uuid PRIMARY KEY, e164 text NOT NULL, "
        "tenant_id text NOT NULL, number_id text)",
        "CREATE INDEX IF NOT EXISTS call_facts_v1_numbers_e164_idx ON {schema}.{numbers} (e164)",
        *(rollup.ddl() for rollup in ROLLUPS),
        f"""
        CREATE OR REPLACE FUNCTION {{schema}}.{{roll_up}}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            {"; ".join(rollup.add("new_rows") for rollup in ROLLUPS)};
            RETURN NULL;
        END
        $$
        """,
        "CREATE OR REPLACE TRIGGER roll_up AFTER INSERT ON {schema}.{table} REFERENCING NEW TABLE AS new_rows "
        "FOR EACH STATEMENT EXECUTE FUNCTION {schema}.{roll_up}()",
        # A rollup created beside facts written before it starts from them (as the calls list's
        # counts tables do): once it holds a row it is in step, and later starts change nothing.
        *(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM {{schema}}.{{{rollup.name}}}) THEN "
          f"{rollup.add('{schema}.{table}')}; END IF; END $$" for rollup in ROLLUPS),
    )

    def sql(self, statement: str) -> Composed:
        return SQL(statement).format(
            schema=Identifier(self.datastore.schema), table=Identifier(self.table),
            open=Identifier(f"{self.table}_open"), numbers=Identifier(f"{self.table}_numbers"),
            roll_up=Identifier(f"{self.table}_roll_up"),
            **{rollup.name: Identifier(f"{self.table}_{rollup.name}") for rollup in ROLLUPS},
        )
