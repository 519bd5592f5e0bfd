"""``voice_model_stats_v1``: one row per call (engine, UTC day of creation, status, duration,
confidence, cost), so the admin statistics can take exact percentiles over any window of days.
"""

from __future__ import annotations

from projections.view import SqlView


class VoiceModelStatsView(SqlView):
    table = "voice_model_stats_v1"
    ddl = (
        """
        CREATE TABLE IF NOT EXISTS {schema}.{table} (
            call_id text PRIMARY KEY,
            tenant_id text NOT NULL,
            voice_engine text NOT NULL,
            mode text NOT NULL,
            direction text NOT NULL,
            day date NOT NULL,
            status text NOT NULL,
            duration_seconds integer,
            confidence double precision,
            cost_total numeric,
            version integer NOT NULL
        )
        """,
        # The statistics read terminal calls of a range of days, per engine.
        "CREATE INDEX IF NOT EXISTS voice_model_stats_v1_day_idx ON {schema}.{table} (day, voice_engine) "
        "WHERE status IN ('completed', 'failed')",
    )
