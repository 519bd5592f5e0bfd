"""Rate limits from leases of the shared budget through the request gate, with two gates on one
database standing for two API processes (adapters/postgres/rate_leases.py, request_gate.py)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from psycopg_pool import AsyncConnectionPool

from adapters.postgres.rate_leases import largest_slice
from adapters.postgres.request_gate import RequestGate
from entrypoints.bootstrap import Container


async def gates(container: Container, n: int) -> tuple[list[AsyncConnectionPool], list[RequestGate]]:
    pools, made = [], []
    for _ in range(n):
        pool = AsyncConnectionPool(container.database.conninfo(), min_size=1, max_size=4, open=False,
                                   kwargs={"autocommit": True})
        await pool.open(wait=True)
        pools.append(pool)
        made.append(RequestGate(pool, schema=container.database.schema,
                                accounts_events=container.accounts.recorder.events_table_name,
                                calling_events=container.calling.recorder.events_table_name))
    return pools, made


def test_two_processes_never_admit_more_than_the_budget_and_lose_at_most_a_slice(container, clock):
    limit = 200

    async def scenario() -> list[Any]:
        pools, (first, second) = await gates(container, 2)
        try:
            rng = random.Random(7)
            picks = [rng.choice((first, second)) for _ in range(limit + 100)]
            decisions = []
            for start in range(0, len(picks), 16):  # 16 requests in flight at a time
                decisions += await asyncio.gather(*(gate.hit("key:shared", limit=limit, window_seconds=60, now=clock())
                                                    for gate in picks[start:start + 16]))
            return decisions
        finally:
            for pool in pools:
                await pool.close()

    admitted = sum(decision.allowed for decision in asyncio.run(scenario()))

    assert limit - largest_slice(limit) <= admitted <= limit
    # The thread limiter shares the table: every admitted request and every slice is in it.
    assert not container.rate_limiter.hit("key:shared", limit=limit, window_seconds=60, now=clock()).allowed


def test_one_process_counts_exactly_and_asks_the_database_once_per_slice(container, clock, monkeypatch):
    statements: list[int] = []

    async def scenario() -> list[Any]:
        pools, (gate,) = await gates(container, 1)
        answer = gate._answer

        async def counted(asked: Any) -> None:
            statements.append(len(asked.hits))
            await answer(asked)

        monkeypatch.setattr(gate, "_answer", counted)
        try:
            return [await gate.hit("key:alone", limit=1600, window_seconds=60, now=clock()) for _ in range(1601)]
        finally:
            await pools[0].close()

    decisions = asyncio.run(scenario())

    assert [d.remaining for d in decisions[:1600]] == list(range(1599, -1, -1))
    assert not decisions[-1].allowed
    assert len(statements) < 40  # slices of 1, 2, 4, ... 100, then one that finds the window spent
