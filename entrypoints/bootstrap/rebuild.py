"""Rebuilds one read model from the event log while the service serves from the old one, then
swaps them (blue/green): ``callwright admin rebuild-projection NAME`` (docs/operations.md).

1. The new generation is projected from position 0 into a schema of its own, ``<schema>_rebuild``,
   by the read model's own view and projection, with the progress reported as it goes.
2. The swap is one transaction: the live tables are locked (their follower and their readers wait
   a moment), the new generation catches up with the live one's position, the live tables are
   dropped and the new ones moved in, and the view's DDL runs again on the service's schema, so
   its trigger functions name the tables where they now are.
3. The live follower then finds its next write refused or its tracking behind, reads the new
   tracking and goes on from there: every write of a read model is replayable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from eventsourcing.postgres import PostgresFactory
from psycopg import sql

from adapters.postgres.database import DatabaseConfig
from application.follower import ProjectionWorker

Progress = Callable[[int, int], None]  # (position, head)


@dataclass(frozen=True)
class Rebuilt:
    name: str
    events: int  # processed into the new generation
    position: int  # its tracking at the swap
    seconds: float
    swap_ms: float  # how long the live tables were locked


def side_schema(database: DatabaseConfig) -> DatabaseConfig:
    return database.with_schema(f"{database.schema}_rebuild")


def _tables(conn: psycopg.Connection[Any], schema: str) -> list[str]:
    return [row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1",
                                           (schema,)).fetchall()]


def rebuild(database: DatabaseConfig, app: Any, view_class: Any, projection_class: Any,
            progress: Progress = lambda position, head: None, after_swap: Callable[[], None] = lambda: None) -> Rebuilt:
    """Projects ``view_class`` anew from ``app``'s log beside the live one, then swaps them."""
    started = time.monotonic()
    side = side_schema(database)
    with psycopg.connect(database.conninfo(), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(side.schema)))
    side.ensure_schema()
    factory = PostgresFactory(side.eventsourcing_env(pool_size=1))
    try:
        view = view_class(factory.datastore)
        view.create_table()
        projection = projection_class(view)
        worker = ProjectionWorker(app, projection.process_event, view, name=f"rebuild-{projection.name}",
                                  handles=projection.handles)
        processed = _catch_up(worker, app, progress)
        swap_ms, processed_at_swap = _swap(database, side, view_class, worker)
    finally:
        factory.close()
    after_swap()
    return Rebuilt(projection.name, processed + processed_at_swap, worker.position, time.monotonic() - started,
                   swap_ms)


def _catch_up(worker: ProjectionWorker, app: Any, progress: Progress) -> int:
    """Up to the head, reporting the position while a page at a time is written."""
    counted = [0]
    done = threading.Event()

    def run() -> None:
        try:
            counted[0] = worker.catch_up()
        finally:
            done.set()

    thread = threading.Thread(target=run, name="rebuild-catch-up", daemon=True)
    thread.start()
    while not done.wait(0.2):
        progress(worker.position, app.recorder.max_notification_id() or 0)
    thread.join()
    progress(worker.position, worker.position)
    return counted[0]


def _swap(database: DatabaseConfig, side: DatabaseConfig, view_class: Any, worker: ProjectionWorker) -> tuple[float, int]:
    main_factory = PostgresFactory(database.eventsourcing_env(pool_size=1))
    try:
        statements = view_class(main_factory.datastore).sql_create_statements
    finally:
        main_factory.close()
    with psycopg.connect(database.conninfo()) as conn:  # one transaction
        tables = _tables(conn, side.schema)
        live = set(_tables(conn, database.schema)) & set(tables)
        locked = time.monotonic()
        for table in sorted(live):
            conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(
                sql.Identifier(database.schema, table)))
        tracking = next(table for table in tables if table.endswith("_tracking"))
        position = 0
        if tracking in live:
            row = conn.execute(sql.SQL("SELECT max(notification_id) FROM {}").format(
                sql.Identifier(database.schema, tracking))).fetchone()
            position = row[0] or 0 if row else 0
        processed = 0
        while worker.position < position:  # the live follower was ahead: follow it up to there
            processed += worker.catch_up()
        for table in sorted(live):  # its dependants (the analysts' views) are installed again after
            conn.execute(sql.SQL("DROP TABLE {} CASCADE").format(sql.Identifier(database.schema, table)))
        for table in tables:
            conn.execute(sql.SQL("ALTER TABLE {} SET SCHEMA {}").format(
                sql.Identifier(side.schema, table), sql.Identifier(database.schema)))
        for statement in statements:  # functions and triggers now name the service's schema
            conn.execute(statement)
        conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(side.schema)))
        conn.commit()
    return (time.monotonic() - locked) * 1000, processed
