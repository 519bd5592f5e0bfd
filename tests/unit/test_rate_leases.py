"""Per-key rate limits counted in memory from leases of the shared budget (adapters/postgres/rate_leases.py):
exact where one process serves a key, never above the budget across processes, refused early by at
most one slice per other process."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone

from adapters.postgres.rate_leases import RateLeases, largest_slice

NOW = datetime(2026, 11, 2, 12, 0, 0, tzinfo=timezone.utc)


class Table:
    """``rate_limit_windows`` as the gate's upsert leaves it: every reservation adds its count."""

    def __init__(self) -> None:
        self.hits: dict[tuple[str, int], int] = {}
        self.statements = 0

    async def reserve(self, bucket: str, window_start: int, count: int) -> tuple[int, int]:
        self.statements += 1
        await asyncio.sleep(0)
        total = self.hits[(bucket, window_start)] = self.hits.get((bucket, window_start), 0) + count
        return total, 0


def run(coroutine):
    return asyncio.run(coroutine)


def test_one_process_counts_every_request_exactly_with_few_round_trips():
    table = Table()
    leases = RateLeases(table.reserve)

    async def spend(n: int, now: datetime = NOW):
        return [await leases.hit("key:k", limit=1000, window_seconds=60, now=now) for _ in range(n)]

    decisions = run(spend(1001))
    assert [d.remaining for d in decisions[:3]] == [999, 998, 997]
    assert [d.allowed for d in decisions] == [True] * 1000 + [False]
    assert decisions[999].remaining == 0 and decisions[-1].retry_after == 60
    assert table.statements <= 1000 // largest_slice(1000) + 8  # slices of 1, 2, 4, ... up to 62
    before = table.statements
    assert not run(spend(50))[-1].allowed and table.statements == before  # a spent window asks nothing more
    assert run(spend(1, NOW + timedelta(seconds=60)))[0].remaining == 999  # the next window starts afresh


def test_concurrent_requests_of_one_process_are_numbered_without_gaps():
    table = Table()
    leases = RateLeases(table.reserve)

    async def burst():
        return await asyncio.gather(*(leases.hit("key:k", limit=40, window_seconds=60, now=NOW) for _ in range(50)))

    decisions = run(burst())
    assert sum(d.allowed for d in decisions) == 40
    assert sorted(d.remaining for d in decisions if d.allowed) == list(range(40))


def test_processes_sharing_a_budget_never_admit_more_and_refuse_early_by_at_most_a_slice_each():
    for seed in range(30):
        rng = random.Random(seed)
        table = Table()
        processes = [RateLeases(table.reserve) for _ in range(rng.randint(2, 4))]
        limit = rng.choice([3, 60, 100, 1000])

        async def load():
            async def one(leases: RateLeases):
                return await leases.hit("key:k", limit=limit, window_seconds=60, now=NOW)
            picks = [rng.choice(processes) for _ in range(2 * limit + 20)]
            return await asyncio.gather(*(one(p) for p in picks))

        admitted = sum(d.allowed for d in run(load()))
        assert admitted <= limit, (seed, admitted, limit)
        assert admitted >= limit - (len(processes) - 1) * largest_slice(limit), (seed, admitted, limit)


def test_a_larger_limit_mid_window_asks_the_table_again():
    table = Table()
    leases = RateLeases(table.reserve)

    async def spend(n: int, limit: int):
        return [await leases.hit("key:k", limit=limit, window_seconds=60, now=NOW) for _ in range(n)]

    assert [d.allowed for d in run(spend(4, 3))] == [True, True, True, False]
    # the refused fourth request was counted too, as in the shared table: one more of five is left
    assert [d.allowed for d in run(spend(3, 5))] == [True, False, False]
