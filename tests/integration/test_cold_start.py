"""Any number of roles started at once on an empty schema all come up (issue 29, item 3): schema
creation runs under one advisory lock, so no ``CREATE … IF NOT EXISTS`` races its twin."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from adapters.postgres.advisory_lock import LockSession, schema_lock
from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.bootstrap.roles import ROLES
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.support.setup import FAST_HASHER


def test_roles_started_at_once_on_an_empty_schema_all_come_up(settings: Settings, db: DatabaseConfig) -> None:
    roles = ["all-in-one", "api", "projector", "worker", "worker+projector", "relay"]
    built: list[Container] = []
    failed: list[BaseException] = []
    barrier = threading.Barrier(len(roles))

    def start(name: str) -> None:
        barrier.wait()
        try:
            built.append(bootstrap(settings, database=db, clock=FakeClock(), hasher=FAST_HASHER, role=ROLES[name]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    threads = [threading.Thread(target=start, args=(name,)) for name in roles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    try:
        assert failed == []
        assert sorted(container.role.name for container in built) == sorted(roles)
        with psycopg.connect(db.conninfo(), autocommit=True) as conn:
            tables = {row[0] for row in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (db.schema,))}
        assert {"calls_list_v1", "calls_list_v1_tracking", "call_run_leases", "call_runner_tracking"} <= tables
    finally:
        for container in built:
            container.close()


def test_the_schema_lock_lets_one_creator_in_at_a_time(db: DatabaseConfig) -> None:
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    def creator(name: str) -> Callable[[], None]:
        def run() -> None:
            with schema_lock(db):
                inside.append(name)
                if len(inside) > 1:
                    overlaps.append(tuple(inside))
                time.sleep(0.2)
                inside.remove(name)
        return run

    threads = [threading.Thread(target=creator(f"p{n}")) for n in range(3)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert overlaps == []
    assert time.monotonic() - began >= 0.6


def test_one_connection_holds_every_lock_of_a_process_and_they_exclude_each_other(db: DatabaseConfig) -> None:
    here, elsewhere = LockSession(db.conninfo()), LockSession(db.conninfo())
    try:
        views = [here.lock(f"follower:v{n}") for n in range(5)]
        assert all(lock.try_acquire() for lock in views)
        twin: Any = here.lock("follower:v0")  # a second copy in the same process
        assert not twin.try_acquire()
        assert not elsewhere.lock("follower:v1").try_acquire()
        with psycopg.connect(db.conninfo(), autocommit=True) as conn:
            holders = conn.execute("SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory' "
                                   "AND pid <> pg_backend_pid()").fetchone()
        assert holders == (1,)
        views[1].release()
        assert elsewhere.lock("follower:v1").try_acquire()
        here.close()  # the connection ends: every lock on it goes with it
        assert not views[0].try_acquire() or elsewhere.lock("follower:v0").try_acquire() is False
        assert elsewhere.lock("follower:v2").try_acquire()
    finally:
        here.close()
        elsewhere.close()
