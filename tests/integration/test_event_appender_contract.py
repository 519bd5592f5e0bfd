"""Contract: the binary event appender (adapters/postgres/event_appender.py) does what
eventsourcing's own ``PostgresApplicationRecorder.insert_events`` does: the same rows, the same
table lock and the same notification. The appender re-implements library internals, so these
tests read the library's own statements and must fail loudly when a library upgrade changes them.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from adapters.postgres.database import DatabaseConfig
from adapters.postgres.event_appender import AsyncEventAppender
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.settings import Settings
from tests.support.setup import FAST_HASHER
from tests.postgres import drop_schema, fresh_schema

ROWS = "SELECT notification_id, originator_id, originator_version, topic, state FROM {} ORDER BY notification_id"


def events() -> list[StoredEvent]:
    first, second = uuid.uuid4(), uuid.uuid4()
    return [
        StoredEvent(originator_id=first, originator_version=1, topic="calls:Call.Queued", state=b'{"a": 1}'),
        StoredEvent(originator_id=first, originator_version=2, topic="calls:Call.Started", state=b"\x00\xffbinary"),
        StoredEvent(originator_id=second, originator_version=1, topic="calls:Call.Queued", state=b"{}"),
    ]


@pytest.fixture
def other(pg_server: DatabaseConfig, tmp_path: Path) -> Iterator[Container]:
    """A second service on a schema of its own: the appender writes there."""
    config = fresh_schema(pg_server)
    settings = Settings(data_dir=tmp_path / "other", secret_key="test-secret-key-0123456789abcdef")
    built = bootstrap(settings, database=config, email=None, hasher=FAST_HASHER, projections=False)
    try:
        yield built
    finally:
        built.close()
        drop_schema(config)


def recorder_of(container: Container) -> PostgresApplicationRecorder:
    recorder = container.calling.recorder
    assert isinstance(recorder, PostgresApplicationRecorder), "the contract is with the PostgreSQL recorder"
    return recorder


def appender_of(container: Container, pool: AsyncConnectionPool) -> AsyncEventAppender:
    assert container.database is not None
    return AsyncEventAppender(pool, schema=container.database.schema,
                              table=container.calling.recorder.events_table_name)


def rows(container: Container) -> list[tuple[object, ...]]:
    assert container.database is not None
    table = sql.Identifier(container.database.schema, container.calling.recorder.events_table_name)
    with psycopg.connect(container.database.conninfo()) as conn:
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                for row in conn.execute(sql.SQL(ROWS).format(table)).fetchall()]


def append_with_appender(container: Container, batch: list[StoredEvent]) -> int:
    async def scenario() -> int:
        assert container.database is not None
        async with AsyncConnectionPool(container.database.conninfo(), min_size=1, max_size=2, open=False,
                                       kwargs={"autocommit": True}) as pool:
            appender = appender_of(container, pool)
            await appender.create_function()
            return await appender.append(batch)

    return asyncio.run(scenario())


def test_the_appender_writes_the_rows_the_recorder_writes(container: Container, other: Container) -> None:
    batch = events()
    recorder_of(container).insert_events(batch)
    last = append_with_appender(other, batch)

    assert rows(other) == rows(container)
    assert [row[0] for row in rows(other)] == [1, 2, 3] and last == 3
    assert other.calling.recorder.select_notifications(start=0, limit=10)[1].state == b"\x00\xffbinary"


def test_the_appender_takes_the_lock_the_recorder_takes(container: Container) -> None:
    """The library locks the events table IN EXCLUSIVE MODE so notification ids commit in order;
    the appender must take that very lock (read from the library's own statements)."""
    recorder = recorder_of(container)
    assert container.database is not None
    library_locks = [statement.as_string() for statement in recorder.lock_table_statements]
    qualified = sql.Identifier(container.database.schema, recorder.events_table_name).as_string()
    # lock_timeout 0 is PostgreSQL's default (wait as long as it takes): the appender's connections keep it.
    assert library_locks == ["SET LOCAL lock_timeout = '0s'", f"LOCK TABLE {qualified} IN EXCLUSIVE MODE"]
    with psycopg.connect(container.database.conninfo(), autocommit=True) as conn:
        append_with_appender(container, events())  # defines the function
        body = conn.execute("SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                            "WHERE n.nspname = %s AND p.proname LIKE 'callwright_append_%%'",
                            (container.database.schema,)).fetchone()
    assert body is not None and f"{library_locks[1]};" in body[0]


def waiting_lock_modes(container: Container, write: callable) -> set[str]:  # type: ignore[valid-type]
    """The lock modes ``write`` waits for on the events table while another transaction holds it
    in ROW EXCLUSIVE mode (what a plain INSERT takes, so only a stronger lock has to wait)."""
    assert container.database is not None
    table = sql.Identifier(container.database.schema, container.calling.recorder.events_table_name)
    with psycopg.connect(container.database.conninfo()) as holder, \
            psycopg.connect(container.database.conninfo(), autocommit=True) as observer:
        holder.execute(sql.SQL("LOCK TABLE {} IN ROW EXCLUSIVE MODE").format(table))
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        deadline, modes = time.monotonic() + 10, set()
        while not modes and time.monotonic() < deadline:
            time.sleep(0.05)
            modes = {row[0] for row in observer.execute(
                "SELECT mode FROM pg_locks WHERE relation = %s::regclass AND NOT granted", (table.as_string(),))}
        holder.rollback()
        writer.join(timeout=10)
    return modes


def test_both_writers_wait_for_the_same_table_lock(container: Container, other: Container) -> None:
    append_with_appender(other, events()[:1])  # define the function before the lock is held
    assert waiting_lock_modes(container, lambda: recorder_of(container).insert_events(events())) == {"ExclusiveLock"}
    assert waiting_lock_modes(other, lambda: append_with_appender(other, events())) == {"ExclusiveLock"}


def test_both_writers_notify_the_recorders_channel(container: Container) -> None:
    recorder = recorder_of(container)
    assert container.database is not None
    with psycopg.connect(container.database.conninfo(), autocommit=True) as listener:
        listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(recorder.channel_name)))
        recorder.insert_events(events())
        append_with_appender(container, events())
        heard = [note.channel for note in listener.notifies(timeout=5, stop_after=2)]
    assert heard == [recorder.channel_name, recorder.channel_name]
