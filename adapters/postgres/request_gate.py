"""The database work of a request's hot path, done on the event loop with no thread hand-off.

Handing a request to a thread costs two context switches and a GIL hand-over each way; on a
busy server those switches, not the queries, were most of the CPU a create used. These reads
and the rate-limit write go through the app's async pool instead.

They are also coalesced, as saves are by group commit: while one statement is in flight, the
requests that arrive queue up, and the next statement answers all of them: every rate-limit hit,
the accounts log head and the versions asked for. Each request still gets the answer of a
statement that started after it arrived, so what it reads is as fresh as a query of its own. An
idle server runs one statement per request, at once; a busy one runs one per round trip.

Per-key rate limits come here only for a slice of a key's budget at a time (``rate_leases``);
the requests in between are counted in memory.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from adapters.memory.rate_limiter import decide
from adapters.postgres.rate_leases import RateLeases
from adapters.postgres.rate_limiter import PRUNE, time_to_prune
from application.ports import RateDecision

# Rows are upserted in key order so that two processes' statements lock them in the same order.
# Each (bucket, window) comes once, with its number of hits; the caller numbers the hits within it.
_STATEMENT = """
WITH asked AS (
    SELECT * FROM unnest(%(buckets)s::text[], %(windows)s::bigint[], %(counts)s::integer[]) AS a(bucket, window_start, n)
), hit AS (
    INSERT INTO rate_limit_windows AS w (bucket, window_start, hits)
    SELECT bucket, window_start, n FROM asked ORDER BY bucket, window_start
    ON CONFLICT (bucket, window_start) DO UPDATE SET hits = w.hits + EXCLUDED.hits
    RETURNING bucket, window_start, hits
)
SELECT 'h', bucket, window_start, hits FROM hit
UNION ALL
SELECT 'v', originator_id::text, NULL, max(originator_version) FROM {calling}
    WHERE originator_id = ANY(%(aggregates)s::uuid[]) GROUP BY originator_id
UNION ALL
SELECT 'a', NULL, NULL, (SELECT max(notification_id) FROM {accounts})
"""


# A round that only asks for versions (reads of one call) needs neither the upsert nor the head.
_VERSIONS = """
SELECT 'v', originator_id::text, NULL, max(originator_version) FROM {calling}
    WHERE originator_id = ANY(%(aggregates)s::uuid[]) GROUP BY originator_id
"""


@dataclass
class _Round:
    """The questions of the requests waiting for the next statement."""

    hits: list[tuple[tuple[str, int], int, asyncio.Future[tuple[int, int]]]] = field(default_factory=list)
    versions: list[tuple[UUID, asyncio.Future[int | None]]] = field(default_factory=list)
    heads: list[asyncio.Future[int]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.hits) + len(self.versions) + len(self.heads)


class RequestGate:
    def __init__(self, pool: AsyncConnectionPool, *, schema: str, accounts_events: str, calling_events: str) -> None:
        self._pool = pool
        # Rendered once: psycopg caches the parsing of a plain string, not of a ``Composed``.
        self._statement = sql.SQL(_STATEMENT).format(
            accounts=sql.Identifier(schema, accounts_events), calling=sql.Identifier(schema, calling_events),
        ).as_string()
        self._versions = sql.SQL(_VERSIONS).format(calling=sql.Identifier(schema, calling_events)).as_string()
        self._round = _Round()
        self._running = False
        self._leases = RateLeases(self.reserve)

    async def hit_and_accounts_head(self, bucket: str, *, limit: int, window_seconds: int,
                                    now: datetime) -> tuple[RateDecision, int]:
        """Count one request in ``bucket`` (shared with ``PostgresRateLimiter``) and read the accounts
        log's head in the same statement."""
        window_start = int(now.timestamp()) // window_seconds * window_seconds
        hits, head = await self.reserve(bucket, window_start, 1)
        decision = decide(hits, limit=limit, window_start=window_start, window_seconds=window_seconds, now=now)
        return decision, head

    async def reserve(self, bucket: str, window_start: int, count: int) -> tuple[int, int]:
        """Add ``count`` hits to the bucket's window: the window's total up to and including them (the
        hits of one statement are ordered by arrival), and the accounts log's head."""
        future: asyncio.Future[tuple[int, int]] = self._ask()
        self._round.hits.append(((bucket, window_start), count, future))
        return await future

    async def hit(self, bucket: str, *, limit: int, window_seconds: int, now: datetime) -> RateDecision:
        """Count one request from this process's lease of the bucket's budget (``RateLeases``)."""
        return await self._leases.hit(bucket, limit=limit, window_seconds=window_seconds, now=now)

    async def calling_version(self, aggregate_id: UUID) -> int | None:
        """The version of one Calling aggregate as committed now; ``None`` if it does not exist."""
        future: asyncio.Future[int | None] = self._ask()
        self._round.versions.append((aggregate_id, future))
        return await future

    async def accounts_head(self) -> int:
        """The accounts log's head as committed now."""
        future: asyncio.Future[int] = self._ask()
        self._round.heads.append(future)
        return await future

    def _ask(self) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        if not self._running:
            self._running = True
            loop.create_task(self._run())
        return loop.create_future()

    async def _run(self) -> None:
        """Answer rounds until nobody waits; the first round starts as soon as its asker yields."""
        try:
            await asyncio.sleep(0)  # let the asker queue its question
            while self._round:
                asked, self._round = self._round, _Round()
                await self._answer(asked)
        finally:
            self._running = False

    async def _answer(self, asked: _Round) -> None:
        counts: Counter[tuple[str, int]] = Counter()
        for key, count, _ in asked.hits:
            counts[key] += count
        keys = sorted(counts)
        params = {
            "buckets": [bucket for bucket, _ in keys], "windows": [window for _, window in keys],
            "counts": [counts[key] for key in keys], "aggregates": list({aggregate for aggregate, _ in asked.versions}),
        }
        try:
            async with self._pool.connection() as conn:
                if asked.hits or asked.heads:
                    cursor = await conn.execute(self._statement, params, prepare=True)
                else:
                    cursor = await conn.execute(self._versions, {"aggregates": params["aggregates"]}, prepare=True)
                rows = await cursor.fetchall()
                if asked.hits and time_to_prune():
                    await conn.execute(PRUNE, (min(window for _, window in keys) - 86_400,))
        except Exception as exc:  # every waiter fails alike (the database is down)
            for future in [*(f for *_, f in asked.hits), *(f for _, f in asked.versions), *asked.heads]:
                if not future.done():
                    future.set_exception(exc)
            return
        totals: dict[tuple[str, int], int] = {}
        versions: dict[str, int] = {}
        head = 0
        for kind, key, window, value in rows:
            if kind == "h":
                totals[(key, window)] = value
            elif kind == "v":
                versions[key] = value
            else:
                head = int(value or 0)
        numbered: Counter[tuple[str, int]] = Counter()
        for key, count, future in asked.hits:  # the hits of one bucket are numbered in arrival order
            numbered[key] += count
            hits = totals[key] - counts[key] + numbered[key]
            if not future.done():  # a request that gave up (client gone) still counted
                future.set_result((hits, head))
        for aggregate, future in asked.versions:
            if not future.done():
                future.set_result(versions.get(str(aggregate)))
        for future in asked.heads:
            if not future.done():
                future.set_result(head)
