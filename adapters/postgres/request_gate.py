"""The database work of a request's hot path, done on the event loop with no thread hand-off.

Handing a request to a thread costs two context switches and a GIL hand-over each way; on a
busy server those switches, not the queries, were most of the CPU a create used. These reads
and the rate-limit write go through the app's async pool instead, one round trip each.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from adapters.memory.rate_limiter import decide
from adapters.postgres.rate_limiter import HIT, PRUNE, time_to_prune
from application.ports import RateDecision

# The hit and the head are read by one statement: the head is at least what was committed
# before the request arrived, so a cached lookup checked against it is as fresh as a reload.
_HIT_AND_HEAD = f"WITH hit AS ({HIT}) SELECT hit.hits, (SELECT max(notification_id) FROM {{events}}) FROM hit"

_VERSION = "SELECT max(originator_version) FROM {events} WHERE originator_id = %s"


class RequestGate:
    def __init__(self, pool: AsyncConnectionPool, *, schema: str, accounts_events: str, calling_events: str) -> None:
        self._pool = pool
        # Rendered once: psycopg caches the parsing of a plain string, not of a ``Composed``.
        self._hit_and_head = sql.SQL(_HIT_AND_HEAD).format(events=sql.Identifier(schema, accounts_events)).as_string()
        self._version = sql.SQL(_VERSION).format(events=sql.Identifier(schema, calling_events)).as_string()

    async def hit_and_accounts_head(self, bucket: str, *, limit: int, window_seconds: int,
                                    now: datetime) -> tuple[RateDecision, int]:
        """Count one request in ``bucket`` (shared with ``PostgresRateLimiter``) and read the accounts
        log's head in the same statement."""
        window_start = int(now.timestamp()) // window_seconds * window_seconds
        async with self._pool.connection() as conn:
            cursor = await conn.execute(self._hit_and_head, (bucket, window_start), prepare=True)
            hits, head = await cursor.fetchone()
            if time_to_prune():
                await conn.execute(PRUNE, (window_start - 86_400,))
        decision = decide(int(hits), limit=limit, window_start=window_start, window_seconds=window_seconds, now=now)
        return decision, int(head or 0)

    async def calling_version(self, aggregate_id: UUID) -> int | None:
        """The version of one Calling aggregate as committed now; ``None`` if it does not exist."""
        async with self._pool.connection() as conn:
            cursor = await conn.execute(self._version, (aggregate_id,), prepare=True)
            row = await cursor.fetchone()
        return None if row is None or row[0] is None else int(row[0])
