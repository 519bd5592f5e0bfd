"""Session-level PostgreSQL advisory locks: one holder per name across every process.

Singleton roles (each projection and reactor, each relay, the watchdog and the reconciler) hold
one; other copies wait as hot standbys. Every lock of a process lives on one connection, its
``LockSession``, so leading fifteen followers costs one connection, not fifteen: when that
connection dies, every lock on it is gone at once, and each holder learns so at its next
``try_acquire`` (the session's generation moved on) and tries again on the new connection.

``schema_lock`` serialises schema creation (tables, tracking tables, views, functions) between
processes started at once: PostgreSQL's ``CREATE … IF NOT EXISTS`` is not safe against a
concurrent twin (``pg_type_typname_nsp_index``), nor is ``CREATE OR REPLACE`` (deadlocks).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import structlog

from adapters.postgres.database import DatabaseConfig

log = structlog.get_logger(__name__)

# A held lock checks its connection at most this often (a ``SELECT 1``); between checks it is
# taken as held. A dead connection is thus noticed within this long, as the lease of a leader.
CHECK_SECONDS = 1.0


def lock_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class LockSession:
    """One connection holding this process's advisory locks (opened on first use, reopened after a
    loss)."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._conn: psycopg.Connection | None = None
        self._generation = 0  # moves on whenever the connection (and every lock on it) is lost
        self._checked_at = 0.0
        self._mutex = threading.Lock()
        # PostgreSQL grants a session a lock it holds again: two holders in this process (two
        # copies of a follower, as tests make) must still exclude each other.
        self._holders: dict[int, object] = {}

    def lock(self, name: str) -> SessionLock:
        return SessionLock(self, name)

    def _alive(self) -> bool:
        """Whether the connection still holds its locks (checked at most every ``CHECK_SECONDS``)."""
        if self._conn is None or self._conn.closed:
            return False
        if time.monotonic() - self._checked_at < CHECK_SECONDS:
            return True
        try:
            self._conn.execute("SELECT 1")
        except psycopg.Error:
            self._drop()
            return False
        self._checked_at = time.monotonic()
        return True

    def _drop(self) -> None:
        self._holders.clear()
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
        self._conn = None
        self._generation += 1

    def _try(self, key: int, held_in: int | None, holder: object) -> int | None:
        """The generation the lock is held in, or None when another session (or holder) has it."""
        with self._mutex:
            if held_in is not None and held_in == self._generation and self._alive():
                return held_in
            if self._holders.get(key, holder) is not holder and self._alive():
                return None
            self._holders.pop(key, None)
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(self._conninfo, autocommit=True)
                self._checked_at = time.monotonic()
            try:
                row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            except psycopg.Error:
                self._drop()
                raise
            if row and row[0]:
                self._holders[key] = holder
                return self._generation
            return None

    def _release(self, key: int, held_in: int) -> None:
        with self._mutex:
            if held_in != self._generation or self._conn is None or self._conn.closed:
                return  # lost with its connection already
            self._holders.pop(key, None)
            try:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error:
                self._drop()

    def close(self) -> None:
        with self._mutex:
            self._drop()


class SessionLock:
    """One named lock of a ``LockSession``: ``try_acquire`` (True while held) and ``release``."""

    def __init__(self, session: LockSession, name: str) -> None:
        self.name = name
        self._session = session
        self._key = lock_key(name)
        self._held_in: int | None = None

    def try_acquire(self) -> bool:
        self._held_in = self._session._try(self._key, self._held_in, self)
        return self._held_in is not None

    def release(self) -> None:
        held, self._held_in = self._held_in, None
        if held is not None:
            self._session._release(self._key, held)


@contextmanager
def schema_lock(database: DatabaseConfig, *, wait_log_after: float = 2.0) -> Iterator[None]:
    """Hold the creation lock of ``database``'s schema (blocking) for the block: the first process of
    a cold start creates the tables while the others wait, then find them made. Taken on a
    connection to ``public``: the schema itself may not exist yet."""
    schema = database.schema
    key = lock_key(f"schema:{schema}")
    with psycopg.connect(database.with_schema("public").conninfo(), autocommit=True) as conn:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not (row and row[0]):
            started = time.monotonic()
            log.info("schema.waiting", schema=schema, hint="another process is creating the schema")
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            waited = time.monotonic() - started
            if waited >= wait_log_after:
                log.info("schema.waited", schema=schema, seconds=round(waited, 2))
        try:
            yield
        finally:
            try:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except psycopg.Error:
                pass  # the connection's end releases it
