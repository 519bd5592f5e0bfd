"""Appends stored events from the event loop: the same rows, lock and notification as
eventsourcing's ``PostgresApplicationRecorder.insert_events``, in one statement.

The recorder is synchronous; from a thread, each of its round trips gives up the GIL and waits to
take it back while the request handlers run, so a save took several times its database time.
Here one function call does the transaction: it takes the table's EXCLUSIVE lock as the recorder
does (so notification ids commit in order whoever writes, and a follower never sees a later id
before an earlier one), notifies the table's channel and inserts the rows. A single statement
also keeps psycopg out of pipeline mode, whose async wait loop polls while the lock is held.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import psycopg
from eventsourcing.persistence import IntegrityError, StoredEvent
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

_FUNCTION = """
CREATE OR REPLACE FUNCTION {function}(ids uuid[], versions bigint[], topics text[], states bytea[])
RETURNS bigint LANGUAGE plpgsql AS $body$
DECLARE
    last_id bigint;
BEGIN
    LOCK TABLE {table} IN EXCLUSIVE MODE;
    NOTIFY {channel};
    WITH inserted AS (
        INSERT INTO {table} (originator_id, originator_version, topic, state)
        SELECT * FROM unnest(ids, versions, topics, states)
        RETURNING notification_id
    )
    SELECT max(notification_id) INTO last_id FROM inserted;
    RETURN last_id;
END
$body$
"""


class AsyncEventAppender:
    def __init__(self, pool: AsyncConnectionPool, *, schema: str, table: str) -> None:
        self._pool = pool
        self._schema, self._table = schema, table
        self._function = sql.Identifier(schema, f"callwright_append_{table}")
        # Rendered once: psycopg caches the parsing of a plain string, not of a ``Composed``. The
        # arrays go in binary (%b): in text, each state's bytes are escaped in Python, about ten
        # times the CPU of the whole statement for a batch's 200 events.
        self._call = sql.SQL("SELECT {0}(%b, %b, %b, %b)").format(self._function).as_string()

    async def create_function(self) -> None:
        """Define (or redefine) the append function; safe when several processes start at once."""
        ddl = sql.SQL(_FUNCTION).format(
            function=self._function, table=sql.Identifier(self._schema, self._table),
            channel=sql.Identifier(self._table.replace(".", "_")),
        )
        async with self._pool.connection() as conn, conn.transaction():
            # CREATE OR REPLACE of one function by two sessions at once fails: take turns.
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(f"{self._schema}.{self._table}".encode()),))
            await conn.execute(ddl)

    async def append(self, events: Sequence[StoredEvent]) -> int:
        """Insert ``events`` in one transaction; the highest notification id. ``IntegrityError`` if one
        of them was already recorded (a concurrent writer of the same aggregate won)."""
        columns = ([e.originator_id for e in events], [e.originator_version for e in events],
                   [e.topic for e in events], [e.state for e in events])
        async with self._pool.connection() as conn:
            try:
                cursor = await conn.execute(self._call, columns, prepare=True)
            except psycopg.errors.UniqueViolation as exc:
                raise IntegrityError(str(exc)) from exc
            row = await cursor.fetchone()
        return int(row[0]) if row and row[0] is not None else 0
