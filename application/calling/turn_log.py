"""A live conversation's writes, appended in order off the turn's path (decision 43).

The agent speaks a turn before its event is durable: ``append`` hands the change to the log and
returns at once; one writer at a time per conversation (on a shared pool) applies everything
pending in one commit, in the order given. A write that fails (the database away, conflicts that
do not clear) is tried again, the pending changes still behind it, for ``patience`` seconds; past
that the log stops (``error`` says why) and drops what it holds, so what was saved is always a
prefix of what was said. ``flush`` waits until the log is empty: the session's close goes through
the log after every turn, so the settler, woken by the close, extracts from every turn.

A crash loses at most the unsaved tail of a conversation that is still live, never a settled call:
a call settles only after its close, which is saved after its turns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from application import logs

log = logs.get_logger(__name__)

Change = Callable[[Any], None]  # applied to the aggregate; raises its state error when refused
Write = Callable[[list[Change]], None]  # applies the changes in order and commits them, or raises

# Shared by every conversation of the process; a log uses at most one of its threads at a time.
_WRITERS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="turn-log")
PAUSES = (0.05, 1.0)  # between two tries of a failed write: the first pause, and the longest


class TurnLog:
    def __init__(self, write: Write, *, name: str = "", patience: float = 30.0, linger: float = 0.0,
                 executor: Executor | None = None) -> None:
        self._write = write
        self.name = name  # for the logs: the call's id
        self.patience = patience
        # Seconds a writer waits before its first write: the turn's reply goes out first, without
        # the write's Python work taking the interpreter from the event loop meanwhile.
        self.linger = linger
        self._executor = executor or _WRITERS
        self._lock = threading.Lock()
        self._pending: list[Change] = []
        self._writing = False
        self._idle = threading.Condition(self._lock)
        self.saved = 0  # changes written
        self.retries = 0  # failed writes tried again
        self.error: BaseException | None = None  # why the log stopped; None while it works

    def append(self, change: Change) -> None:
        """Queue ``change`` after every change appended before it; returns at once."""
        with self._lock:
            if self.error is not None:
                return  # stopped: nothing after a lost change may be saved
            self._pending.append(change)
            if self._writing:
                return
            self._writing = True
        self._executor.submit(self._drain)

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until every change appended so far is written; False when the log stopped or the
        wait ran out."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._writing or self._pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return self.error is None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def _drain(self) -> None:
        if self.linger:
            time.sleep(self.linger)
        while True:
            with self._lock:
                batch, self._pending = self._pending, []
                if not batch:
                    self._writing = False
                    self._idle.notify_all()
                    return
            failure = self._write_patiently(batch)
            if failure is not None:
                with self._lock:
                    self.error = failure
                    dropped = len(batch) + len(self._pending)
                    self._pending = []
                    self._writing = False
                    self._idle.notify_all()
                log.error("call.turns_unsaved", call_id=self.name, dropped=dropped,
                          error=type(failure).__name__, exc_info=failure)
                return

    def _write_patiently(self, batch: list[Change]) -> BaseException | None:
        """Write ``batch``, tried again while it fails and the patience lasts; the last error when
        it ran out."""
        deadline = time.monotonic() + self.patience
        pause, longest = PAUSES
        while True:
            try:
                self._write(batch)
            except Exception as exc:
                if time.monotonic() + pause > deadline:
                    return exc
                if self.retries == 0 or pause >= longest:
                    log.warning("call.turns_retried", call_id=self.name, changes=len(batch), error=type(exc).__name__)
                self.retries += 1
                time.sleep(pause)
                pause = min(longest, pause * 2)
            else:
                self.saved += len(batch)
                return None
