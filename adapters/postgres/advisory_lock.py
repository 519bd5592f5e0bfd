"""Session-level PostgreSQL advisory locks: one holder per name across every process.

Singleton roles (each projector, later the relay) hold one; other copies wait as hot standbys.
"""

from __future__ import annotations

import hashlib
import threading

import psycopg


def lock_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class AdvisoryLock:
    def __init__(self, conninfo: str, name: str) -> None:
        self._conninfo = conninfo
        self._key = lock_key(name)
        self._conn: psycopg.Connection | None = None
        self._mutex = threading.Lock()

    def try_acquire(self) -> bool:
        with self._mutex:
            if self._conn is not None and not self._conn.closed:
                try:
                    self._conn.execute("SELECT 1")
                    return True
                except psycopg.Error:
                    self._conn = None  # the session died, and the lock with it
            conn = psycopg.connect(self._conninfo, autocommit=True)
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
            if row and row[0]:
                self._conn = conn
                return True
            conn.close()
            return False

    def release(self) -> None:
        with self._mutex:
            if self._conn is not None and not self._conn.closed:
                self._conn.close()
            self._conn = None
