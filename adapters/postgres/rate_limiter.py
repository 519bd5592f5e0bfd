"""Fixed-window rate limiter shared by every process through one PostgreSQL table."""

from __future__ import annotations

import itertools
from datetime import datetime

from psycopg_pool import ConnectionPool

from adapters.memory.rate_limiter import decide
from application.ports import RateDecision

DDL = """
CREATE TABLE IF NOT EXISTS rate_limit_windows (
    bucket text NOT NULL,
    window_start bigint NOT NULL,
    hits integer NOT NULL,
    PRIMARY KEY (bucket, window_start)
)
"""

HIT = """INSERT INTO rate_limit_windows AS w (bucket, window_start, hits) VALUES (%s, %s, 1)
ON CONFLICT (bucket, window_start) DO UPDATE SET hits = w.hits + 1
RETURNING hits"""

PRUNE = "DELETE FROM rate_limit_windows WHERE window_start < %s"
PRUNE_EVERY = 1000  # hits of one process between two prunes of windows older than a day
_hits = itertools.count(1)


def time_to_prune() -> bool:
    """Every PRUNE_EVERY-th hit of this process (shared by both limiters' paths)."""
    return next(_hits) % PRUNE_EVERY == 0


class PostgresRateLimiter:
    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    def create_table(self) -> None:
        with self._pool.connection() as conn:
            conn.execute(DDL)

    def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision:
        window_start = int(now.timestamp()) // window_seconds * window_seconds
        with self._pool.connection() as conn:
            row = conn.execute(HIT, (bucket, window_start), prepare=True).fetchone()
            if time_to_prune():
                conn.execute(PRUNE, (window_start - 86_400,))
        hits = int(row[0]) if row else 1
        return decide(hits, limit=limit, window_start=window_start, window_seconds=window_seconds, now=now)
