"""Commits on the event loop (application/group_commit.py ``LoopGroupCommitter``,
adapters/postgres/event_appender.py) and the hot path's database reads
(adapters/postgres/request_gate.py): the same rows as eventsourcing's recorder, grouped, each
command still succeeding or failing alone."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.event_appender import AsyncEventAppender
from adapters.postgres.request_gate import RequestGate
from application.errors import ConflictError
from application.group_commit import LoopGroupCommitter
from domain.calls.suppression import SuppressionEntry, SuppressionIndex
from entrypoints.bootstrap import Container
from tests.fakes.clock import FakeClock

TENANT = "ten_" + "b" * 32


def entry(number: str, clock: FakeClock) -> SuppressionEntry:
    return SuppressionEntry(tenant_id=TENANT, e164=number, reason=None, expires_at=None, by="test", at=clock())


@asynccontextmanager
async def appender_for(container: Container) -> AsyncIterator[tuple[AsyncConnectionPool, AsyncEventAppender]]:
    pool = AsyncConnectionPool(container.database.conninfo(), min_size=1, max_size=4, open=False,
                               kwargs={"autocommit": True})
    await pool.open(wait=True)
    try:
        appender = AsyncEventAppender(pool, schema=container.database.schema,
                                      table=container.calling.recorder.events_table_name)
        await appender.create_function()
        yield pool, appender
    finally:
        await pool.close()


def stored(topic: str = "test:Event", originator: uuid.UUID | None = None, version: int = 1) -> StoredEvent:
    return StoredEvent(originator_id=originator or uuid.uuid4(), originator_version=version, topic=topic,
                       state=b'{"n": 1}')


# --- the appender ----------------------------------------------------------------------------------


def test_appended_rows_are_what_the_recorder_reads_and_the_last_id_is_returned(container):
    events = [stored("a:A"), stored("b:B"), stored("c:C")]

    async def scenario() -> int:
        async with appender_for(container) as (_, appender):
            return await appender.append(events)

    last = asyncio.run(scenario())

    read = container.calling.recorder.select_notifications(start=0, limit=10)
    assert [(n.originator_id, n.topic, n.state) for n in read] == [(e.originator_id, e.topic, e.state) for e in events]
    assert last == read[-1].id == max(n.id for n in read)


def test_a_batch_with_one_recorded_event_saves_nothing(container):
    taken = uuid.uuid4()

    async def scenario() -> None:
        async with appender_for(container) as (_, appender):
            await appender.append([stored(originator=taken)])
            with pytest.raises(IntegrityError):
                await appender.append([stored("fresh:F"), stored(originator=taken)])

    asyncio.run(scenario())

    assert [n.originator_id for n in container.calling.recorder.select_notifications(start=0, limit=10)] == [taken]


def test_processes_starting_at_once_define_the_function_without_failing(container):
    async def scenario() -> None:
        async with appender_for(container) as (pool, appender):
            others = [AsyncEventAppender(pool, schema=container.database.schema,
                                         table=container.calling.recorder.events_table_name) for _ in range(4)]
            await asyncio.gather(*(other.create_function() for other in others))
            assert await appender.append([stored()]) > 0

    asyncio.run(scenario())


def test_loop_and_thread_writers_interleave_without_losing_or_reordering_events(container, clock):
    """The recorder (threads) and the appender (loop) both hold the table lock per transaction:
    notification ids come out unique, and each writer's events keep their order."""
    calling = container.calling
    numbers = [f"+4420718{i:05d}" for i in range(40)]

    async def scenario() -> list[int]:
        async with appender_for(container) as (_, appender):
            async def loop_writer() -> list[int]:
                return [await appender.append([stored(f"loop:{i}")]) for i in range(40)]

            thread = asyncio.to_thread(lambda: [calling.commit(entry(n, clock)) for n in numbers])
            loop_ids, _ = await asyncio.gather(loop_writer(), thread)
            return loop_ids

    loop_ids = asyncio.run(scenario())

    read = calling.recorder.select_notifications(start=0, limit=200)
    assert len(read) == 80 and len({n.id for n in read}) == 80
    loop_topics = [n.topic for n in read if n.topic.startswith("loop:")]
    assert loop_topics == [f"loop:{i}" for i in range(40)] and loop_ids == sorted(loop_ids)


# --- the group committer on the loop ---------------------------------------------------------------


def run_committer(append: Callable[[list[Any]], Any], batches: list[list[Any]]) -> list[Any]:
    async def scenario() -> list[Any]:
        committer = LoopGroupCommitter(lambda event: event, append)
        return await asyncio.gather(*(committer.submit(batch) for batch in batches), return_exceptions=True)

    return asyncio.run(scenario())


def test_commands_arriving_during_an_append_go_together_in_the_next():
    appends: list[list[str]] = []

    async def append(events: list[str]) -> int:
        appends.append(events)
        await asyncio.sleep(0.01)
        return len(appends)

    async def scenario() -> list[int]:
        committer = LoopGroupCommitter(lambda event: event, append)
        first = asyncio.ensure_future(committer.submit(["alone"]))
        await asyncio.sleep(0.001)  # its append is in flight now
        rest = [committer.submit([f"e{i}"]) for i in range(19)]
        return await asyncio.gather(first, *rest)

    results = asyncio.run(scenario())

    assert appends == [["alone"], [f"e{i}" for i in range(19)]]
    assert results == [1] + [2] * 19


def test_a_conflicting_command_fails_alone_and_the_others_are_saved():
    saved: list[str] = []

    async def append(events: list[str]) -> int:
        if "bad" in events:
            raise IntegrityError("duplicate")
        saved.extend(events)
        return len(saved)

    results = run_committer(append, [["a"], ["bad"], ["c"]])

    assert isinstance(results[1], IntegrityError)
    assert isinstance(results[0], int) and isinstance(results[2], int)
    assert sorted(saved) == ["a", "c"]


def test_every_command_of_a_group_fails_when_the_database_fails():
    async def append(_: list[str]) -> int:
        raise OSError("database unavailable")

    results = run_committer(append, [["a"], ["b"], ["c"]])

    assert all(isinstance(result, OSError) for result in results)


# --- the application: commits from threads join the loop's groups ---------------------------------


def test_commits_from_threads_are_appended_by_the_loop_and_poke_followers(container, clock):
    calling = container.calling
    appended: list[int] = []
    pokes: list[frozenset[str]] = []
    calling.on_saved(lambda _position, topics: pokes.append(topics))

    async def scenario() -> list[int]:
        async with appender_for(container) as (_, appender):
            async def counting(events: list[StoredEvent]) -> int:
                appended.append(len(events))
                return await appender.append(events)

            calling.commits.attach_loop(counting)
            try:
                numbers = [f"+4420719{i:05d}" for i in range(16)]
                return await asyncio.gather(*(asyncio.to_thread(calling.commit, entry(n, clock)) for n in numbers))
            finally:
                calling.commits.detach_loop()

    positions = asyncio.run(scenario())

    assert sum(appended) == 16 and all(p > 0 for p in positions)
    assert calling.known_head >= max(positions)
    assert pokes[-16:] == [frozenset({"domain.calls.suppression:SuppressionEntry.Added"})] * 16


def test_commit_async_turns_a_lost_race_into_a_conflict(container, clock):
    calling = container.calling
    calling.commit(entry("+442071830000", clock))
    stale_a = calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, "+442071830000"))
    stale_b = calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, "+442071830000"))
    stale_a.remove("a", clock())
    stale_b.remove("b", clock())

    async def scenario() -> list[Any]:
        async with appender_for(container) as (_, appender):
            calling.commits.attach_loop(appender.append)
            try:
                return await asyncio.gather(calling.commit_async(stale_a), calling.commit_async(stale_b),
                                            return_exceptions=True)
            finally:
                calling.commits.detach_loop()

    results = asyncio.run(scenario())

    assert sorted(type(r).__name__ for r in results) == ["ConflictError", "int"]
    assert any(isinstance(r, ConflictError) and r.code == "conflict" for r in results)


# --- the request gate ------------------------------------------------------------------------------


def test_the_gate_counts_requests_and_reads_the_accounts_head_in_one_statement(container, clock):
    async def scenario() -> list[tuple[Any, int]]:
        async with appender_for(container) as (pool, _):
            gate = RequestGate(pool, schema=container.database.schema,
                               accounts_events=container.accounts.recorder.events_table_name,
                               calling_events=container.calling.recorder.events_table_name)
            return [await gate.hit_and_accounts_head("key:k", limit=2, window_seconds=60, now=clock())
                    for _ in range(3)]

    answers = asyncio.run(scenario())

    assert [d.remaining for d, _ in answers] == [1, 0, 0] and [d.allowed for d, _ in answers] == [True, True, False]
    assert {head for _, head in answers} == {container.accounts.head()}
    # The same table as the thread limiter: its next hit in this window is the fourth.
    assert container.rate_limiter.hit("key:k", limit=10, window_seconds=60, now=clock()).remaining == 6


def test_the_gate_reads_an_aggregates_committed_version(container, clock):
    calling = container.calling
    index_id = SuppressionIndex.create_id(TENANT)

    async def version() -> int | None:
        async with appender_for(container) as (pool, _):
            gate = RequestGate(pool, schema=container.database.schema,
                               accounts_events=container.accounts.recorder.events_table_name,
                               calling_events=calling.recorder.events_table_name)
            return await gate.calling_version(index_id)

    assert asyncio.run(version()) is None
    index = SuppressionIndex(tenant_id=TENANT)
    index.list_number("+442071830000", None)
    calling.commit(index)
    clock.advance(timedelta(seconds=1))
    assert asyncio.run(version()) == index.version


def test_concurrent_requests_share_one_statement_and_count_every_hit_once(container, clock, monkeypatch):
    """Requests that arrive while a statement is in flight are answered by the next one: the hits
    of one bucket are numbered without gaps or repeats, and versions and the head come along."""
    calling = container.calling
    index = SuppressionIndex(tenant_id=TENANT)
    index.list_number("+442071830000", None)
    calling.commit(index)
    statements: list[str] = []

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with appender_for(container) as (pool, _):
            gate = RequestGate(pool, schema=container.database.schema,
                               accounts_events=container.accounts.recorder.events_table_name,
                               calling_events=calling.recorder.events_table_name)
            answer = gate._answer

            async def counted(asked: Any) -> None:
                statements.append(f"{len(asked.hits)} hits, {len(asked.versions)} versions")
                await answer(asked)

            monkeypatch.setattr(gate, "_answer", counted)
            hits = [gate.hit_and_accounts_head(f"key:{n % 2}", limit=20, window_seconds=60, now=clock())
                    for n in range(40)]
            versions = [gate.calling_version(index.id), gate.calling_version(SuppressionIndex.create_id("tnt_x"))]
            answers = await asyncio.gather(*hits, *versions)
            return answers[:40], answers[40:]

    hits, versions = asyncio.run(scenario())

    assert statements == ["40 hits, 2 versions"]
    for bucket in (0, 1):
        remaining = sorted(decision.remaining for decision, _ in hits[bucket::2])
        assert remaining == list(range(20))  # hits 1..20 of a limit of 20, each once
    assert {head for _, head in hits} == {container.accounts.head()}
    assert versions == [index.version, None]
    assert container.rate_limiter.hit("key:0", limit=30, window_seconds=60, now=clock()).remaining == 9


def test_the_gate_fails_every_waiter_of_a_statement_that_fails(container, clock):
    async def scenario() -> list[Any]:
        async with appender_for(container) as (pool, _):
            gate = RequestGate(pool, schema=container.database.schema,
                               accounts_events="no_such_table", calling_events=container.calling.recorder.events_table_name)
            return await asyncio.gather(
                gate.hit_and_accounts_head("key:f", limit=5, window_seconds=60, now=clock()),
                gate.calling_version(SuppressionIndex.create_id(TENANT)), return_exceptions=True,
            )

    answers = asyncio.run(scenario())

    assert [type(answer).__name__ for answer in answers] == ["UndefinedTable", "UndefinedTable"]
    # Nothing was counted: the statement is one transaction.
    assert container.rate_limiter.hit("key:f", limit=5, window_seconds=60, now=clock()).remaining == 4


def test_commit_from_the_loops_own_thread_does_not_wait_on_itself(container, clock):
    """A synchronous commit made on the loop's thread cannot hand its events to that loop (it would
    wait for itself): it saves directly."""
    calling = container.calling
    done = threading.Event()

    async def scenario() -> int:
        async with appender_for(container) as (_, appender):
            calling.commits.attach_loop(appender.append)
            try:
                position = calling.commit(entry("+442071839999", clock))
                done.set()
                return position
            finally:
                calling.commits.detach_loop()

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=30)) > 0 and done.is_set()
