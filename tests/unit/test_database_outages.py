"""The pieces that keep a database outage short and honest: which errors are outages, the
capped reconnection delay, the bounded waits, and a request whose client has gone."""

from __future__ import annotations

import asyncio
from contextvars import copy_context

import psycopg
import pytest
from eventsourcing import persistence
from psycopg_pool import PoolTimeout

from adapters.postgres import pools
from adapters.postgres.database import DatabaseConfig
from application import client_presence
from application.errors import ClientGoneError
from entrypoints.http import disconnects
from entrypoints.http.disconnects import DisconnectWatch
from entrypoints.settings import Settings


@pytest.mark.parametrize("exc", [PoolTimeout("no connection"), psycopg.OperationalError("refused"),
                                 persistence.OperationalError("lost")])
def test_connection_errors_are_outages(exc):
    assert pools.is_outage(exc)


@pytest.mark.parametrize("exc", [psycopg.errors.QueryCanceled("statement timeout"),
                                 psycopg.errors.LockNotAvailable("lock"), psycopg.IntegrityError("dup"),
                                 ValueError("no")])
def test_errors_of_a_database_that_answered_are_not(exc):
    assert not pools.is_outage(exc)


def test_the_reconnection_delay_doubles_up_to_two_seconds():
    pools.cap_reconnect_backoff()
    attempt = pools.CappedBackoff(timeout=300.0)
    delays = []
    for step in range(8):
        attempt.update_delay(float(step))
        delays.append(attempt.delay)

    assert 0.9 <= delays[0] <= 1.1
    assert max(delays) == pools.MAX_RECONNECT_DELAY
    assert delays[-1] == pools.MAX_RECONNECT_DELAY


def test_every_connection_waits_and_connects_within_the_bound():
    config = DatabaseConfig(host="127.0.0.1").with_wait(1.5)

    assert "connect_timeout=2" in config.conninfo()
    assert config.eventsourcing_env()["POSTGRES_CONNECT_TIMEOUT"] == "2"
    assert DatabaseConfig(host="127.0.0.1").wait_seconds == 3.0


@pytest.mark.parametrize("value", ["0", "-1", "61"])
def test_a_wait_outside_its_range_is_refused_at_start(value):
    with pytest.raises(ValueError, match="CALLWRIGHT_DATABASE_WAIT_SECONDS"):
        Settings.from_env({"CALLWRIGHT_DATABASE_WAIT_SECONDS": value})
    assert Settings.from_env({"CALLWRIGHT_DATABASE_WAIT_SECONDS": "5"}).database_wait_seconds == 5.0


class GonePresence:
    def __init__(self, gone: bool) -> None:
        self._gone = gone

    def gone(self) -> bool:
        return self._gone

    async def settle(self) -> None:
        return None


def test_a_commit_for_a_client_that_has_gone_is_refused():
    def run(gone: bool) -> None:
        token = client_presence.serving(GonePresence(gone))
        try:
            client_presence.ensure_client_waits()
        finally:
            client_presence.done(token)

    copy_context().run(run, False)
    with pytest.raises(ClientGoneError):
        copy_context().run(run, True)
    client_presence.ensure_client_waits()  # no client at all: reactors, jobs


def _messages(*messages):
    queue: asyncio.Queue = asyncio.Queue()
    for message in messages:
        queue.put_nowait(message)
    return queue


def test_the_watch_hears_a_departure_after_the_body(monkeypatch):
    monkeypatch.setattr(disconnects, "SLOW_SECONDS", 0.0)

    async def scenario() -> tuple[bool, bool]:
        queue = _messages({"type": "http.request", "body": b"{}", "more_body": True},
                          {"type": "http.request", "body": b"", "more_body": False})
        watch = DisconnectWatch(queue.get)
        await watch.receive()
        await watch.receive()
        await watch.settle()
        before = watch.gone()  # the client still waits: the settle gave up after its short bound
        queue.put_nowait({"type": "http.disconnect"})
        await watch.settle()
        after = watch.gone()
        await watch.close()
        return before, after

    assert asyncio.run(scenario()) == (False, True)


def test_a_quick_request_never_waits_for_the_servers_word():
    async def scenario() -> bool:
        queue = _messages({"type": "http.request", "body": b"{}", "more_body": False})
        watch = DisconnectWatch(queue.get)
        await watch.receive()
        loop = asyncio.get_running_loop()
        started = loop.time()
        await watch.settle()
        gone = await asyncio.to_thread(watch.gone)
        assert loop.time() - started < disconnects.SETTLE_SECONDS
        await watch.close()
        return gone

    assert asyncio.run(scenario()) is False
