"""Greeting audio in one PostgreSQL table, one row per number (its latest rendering), shared by
every process: the renderer writes it, an inbound call's media stream reads it."""

from __future__ import annotations

from psycopg_pool import ConnectionPool

DDL = """
CREATE TABLE IF NOT EXISTS greeting_audio (
    number_id text PRIMARY KEY,
    sha256 text NOT NULL,
    audio bytea NOT NULL,
    rendered_at timestamptz NOT NULL DEFAULT now()
)
"""

PUT = """INSERT INTO greeting_audio (number_id, sha256, audio) VALUES (%s, %s, %s)
ON CONFLICT (number_id) DO UPDATE SET sha256 = excluded.sha256, audio = excluded.audio, rendered_at = now()"""


class PostgresGreetingAudio:
    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool

    def create_table(self) -> None:
        with self._pool.connection() as conn:
            conn.execute(DDL)

    def put(self, number_id: str, sha256: str, audio: bytes) -> None:
        with self._pool.connection() as conn:
            conn.execute(PUT, (number_id, sha256, audio))

    def get(self, number_id: str) -> tuple[str, bytes] | None:
        with self._pool.connection() as conn:
            row = conn.execute("SELECT sha256, audio FROM greeting_audio WHERE number_id = %s", (number_id,)).fetchone()
        return (str(row[0]), bytes(row[1])) if row is not None else None
