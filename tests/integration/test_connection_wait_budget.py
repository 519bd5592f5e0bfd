"""A request's connection waits share one budget (issue 30 item 9; ARCHITECTURE.md §9, SPEC.md
``503 database_unavailable``): with the database away, a request that needs a connection from two
pools waits ``wait_seconds`` in all, not once per pool; a pool with a connection ready still hands
it over once the budget is spent."""

from __future__ import annotations

import socket
import time

import pytest
from psycopg_pool import PoolTimeout

from adapters.postgres.database import DatabaseConfig
from adapters.postgres.pools import async_pool, sync_pool
from application import wait_budget


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unreachable() -> DatabaseConfig:
    """Nothing listens on the port: every connection attempt is refused at once."""
    return DatabaseConfig(host="127.0.0.1", port=_closed_port(), wait_seconds=1.0)


def _refused(pool) -> float:
    started = time.monotonic()
    with pytest.raises(PoolTimeout):
        with pool.connection():
            pass
    return time.monotonic() - started


def test_two_pools_wait_one_budget_in_all(unreachable):
    first = sync_pool(unreachable, max_size=1, min_size=0, name="first")
    second = sync_pool(unreachable, max_size=1, min_size=0, name="second")
    try:
        alone = _refused(first)
        assert alone >= 0.9  # without a budget the pool's own timeout (1 s) is waited
        with wait_budget.budget(0.6):
            started = time.monotonic()
            _refused(first)
            _refused(second)
            both = time.monotonic() - started
        assert 0.5 <= both < 0.9, both  # one 0.6 s budget, not 1 s + 1 s
    finally:
        first.close(timeout=0)
        second.close(timeout=0)


async def _async_refused(pool) -> None:
    with pytest.raises(PoolTimeout):
        async with pool.connection():
            pass


def test_async_pools_read_the_same_budget(unreachable):
    import asyncio

    async def scenario() -> float:
        first = async_pool(unreachable, max_size=1, min_size=0, name="first")
        second = async_pool(unreachable, max_size=1, min_size=0, name="second")
        await first.open(wait=False)
        await second.open(wait=False)
        try:
            with wait_budget.budget(0.6):
                started = time.monotonic()
                await _async_refused(first)
                await _async_refused(second)
                return time.monotonic() - started
        finally:
            await first.close(timeout=0)
            await second.close(timeout=0)

    both = asyncio.run(scenario())
    assert 0.5 <= both < 0.9, both


def test_a_spent_budget_still_takes_a_ready_connection(pg_server):
    pool = sync_pool(pg_server, max_size=1, min_size=1, name="ready")
    try:
        pool.wait(timeout=5)
        with wait_budget.budget(0.0):
            with pool.connection() as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.close()
