"""The ordered background appender of a live conversation (``TurnLog``, decision 43): changes are
written in the order given, several at a time while a write is in flight; a failing write is tried
again with the later changes held behind it; past its patience the log stops and what it saved is
a prefix of what it was given; ``flush`` waits until everything appended is written."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator

import pytest

from application.calling import turn_log
from application.calling.turn_log import TurnLog


class Store:
    """A write that records the values of its changes (each change appends to a list it is given)."""

    def __init__(self, *, failures: int = 0, delay: float = 0.0) -> None:
        self.saved: list[int] = []
        self.batches: list[int] = []
        self.failures = failures
        self.delay = delay
        self.gate = threading.Event()
        self.gate.set()

    def write(self, changes: list) -> None:  # type: ignore[type-arg]
        self.gate.wait(10)
        time.sleep(self.delay)
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the database is away")
        target: list[int] = []
        for change in changes:
            change(target)
        self.saved.extend(target)  # one commit: all of the batch or nothing
        self.batches.append(len(changes))


def value(n: int):  # type: ignore[no-untyped-def]
    return lambda target: target.append(n)


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_log, "PAUSES", (0.001, 0.004))


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    executor = ThreadPoolExecutor(max_workers=4)
    yield executor
    executor.shutdown(wait=True)


def test_changes_are_written_in_order_and_grouped_while_a_write_is_in_flight(pool: ThreadPoolExecutor) -> None:
    store = Store(delay=0.002)
    log = TurnLog(store.write, executor=pool)
    for n in range(200):
        log.append(value(n))
    assert log.flush(10)
    assert store.saved == list(range(200))
    assert len(store.batches) < 200 and log.saved == 200 and log.pending == 0


def test_append_returns_before_the_change_is_written(pool: ThreadPoolExecutor) -> None:
    store = Store()
    store.gate.clear()  # the database is slow
    log = TurnLog(store.write, executor=pool)
    started = time.perf_counter()
    log.append(value(1))
    log.append(value(2))
    assert time.perf_counter() - started < 0.05 and store.saved == []
    assert not log.flush(0.05)  # still writing
    store.gate.set()
    assert log.flush(10) and store.saved == [1, 2]


def test_many_conversations_each_keep_their_own_order(pool: ThreadPoolExecutor) -> None:
    stores = [Store(delay=0.001) for _ in range(6)]
    logs = [TurnLog(s.write, executor=pool) for s in stores]

    def speak(log: TurnLog) -> None:
        for n in range(50):
            log.append(value(n))

    threads = [threading.Thread(target=speak, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(log.flush(10) for log in logs)
    assert all(store.saved == list(range(50)) for store in stores)


def test_a_failed_write_is_tried_again_with_the_later_changes_behind_it(pool: ThreadPoolExecutor) -> None:
    store = Store(failures=3)
    log = TurnLog(store.write, executor=pool, patience=5)
    for n in range(5):
        log.append(value(n))
    assert log.flush(10)
    assert store.saved == [0, 1, 2, 3, 4] and log.retries == 3 and log.error is None


def test_past_its_patience_the_log_stops_and_keeps_a_prefix(pool: ThreadPoolExecutor,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    store = Store()
    log = TurnLog(store.write, executor=pool, patience=0.05, name="cll_x")
    log.append(value(0))
    assert log.flush(10)
    store.failures = 10_000  # the database is gone for good
    log.append(value(1))
    log.append(value(2))
    assert not log.flush(10)  # surfaced: the caller learns the tail is lost
    assert isinstance(log.error, ConnectionError)
    store.failures = 0
    log.append(value(3))  # nothing after a lost change is ever written
    assert not log.flush(10)
    assert store.saved == [0]


def test_flush_of_an_empty_log_returns_at_once(pool: ThreadPoolExecutor) -> None:
    log = TurnLog(Store().write, executor=pool)
    started = time.perf_counter()
    assert log.flush(5) and time.perf_counter() - started < 0.05


def test_commits_beside_the_loop_take_the_thread_path_while_a_loop_is_attached() -> None:
    """The turn log's appends use the thread's group committer, not the loop the streams run on."""
    from types import SimpleNamespace

    from application.commit_path import CommitPath, beside_the_loop

    saved: list[str] = []
    on_loop: list[str] = []

    def save(*events: str) -> list[SimpleNamespace]:
        saved.extend(events)
        return [SimpleNamespace(notification=SimpleNamespace(id=len(saved)))]

    async def append(events: list[str]) -> int:
        on_loop.extend(events)
        return len(on_loop)

    path = CommitPath(save, lambda event: event, grouped=True)

    async def scenario() -> None:
        path.attach_loop(append)
        try:
            def from_a_thread() -> None:
                path.commit(["through the loop"])
                with beside_the_loop():
                    path.commit(["beside it"])

            await asyncio.to_thread(from_a_thread)
        finally:
            path.detach_loop()

    asyncio.run(scenario())
    path.close()
    assert (on_loop, saved) == (["through the loop"], ["beside it"])
