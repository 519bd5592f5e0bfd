"""Runs a projection or a reactor: follows an application's notification log, in order, from its
tracking.

Polls on a short interval and is woken early by in-process saves (LISTEN alone can stall).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from application import logs
from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.utils import get_topic

log = logs.get_logger(__name__)

BATCH = 500
LOCK_RETRY_SECONDS = 2.0


class ProjectionWorker:
    def __init__(
        self,
        app: Application[Any],
        process_event: Callable[[Any, Tracking], None],
        view: Any,
        *,
        name: str,
        poll_interval: float = 0.25,
        lock: Any = None,
        handles: tuple[type, ...] | None = None,
    ) -> None:
        self.app = app
        # Only events of these types are read (filtered by topic in the database); None reads all.
        self.topics = frozenset(get_topic(cls) for cls in handles) if handles is not None else None
        self.process_event = process_event
        self.view = view
        self.name = name
        self.poll_interval = poll_interval
        self.lock = lock  # an object with try_acquire()/release(); None means always the leader
        self.is_leader = lock is None
        self._next_lock_try = 0.0
        self.position = view.max_tracking_id(app.name) or 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._progress = threading.Condition()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def poke(self, _position: int = 0, topics: frozenset[str] | None = None) -> None:
        """Wake up now: something was saved. Saves of only events this follower skips wait for
        the next poll, which reads past them in one page."""
        if topics is not None and self.topics is not None and self.topics.isdisjoint(topics):
            return
        self._wake.set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"projection-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.lock is not None:
            self.lock.release()

    def catch_up(self) -> int:
        """Process everything recorded so far; returns how many events were processed.

        Only the events this follower handles are read (the database filters by topic), up to the
        head read first: ids commit in order (the event table's lock), so every event up to the
        head is there to read, and once they are processed the position moves to the head even
        if the last events were of other types."""
        processed = 0
        batch = getattr(self.view, "batch", None)  # views commit a page at once
        head = self.app.recorder.max_notification_id() or 0
        topics = sorted(self.topics) if self.topics is not None else ()
        while self.position < head:
            notifications = self.app.recorder.select_notifications(
                start=self.position, stop=head, limit=BATCH, topics=topics, inclusive_of_start=False
            )
            last_page = len(notifications) < BATCH
            done = 0
            with batch() if batch is not None else nullcontext():
                for notification in notifications:
                    if self._stop.is_set():
                        last_page = False
                        break
                    event = self.app.mapper.to_domain_event(notification)
                    self.process_event(event, Tracking(self.app.name, notification.id))
                    done = notification.id
                    processed += 1
                if last_page and done < head:  # the rest up to the head is of other types
                    self.view.insert_tracking(Tracking(self.app.name, head))
                    done = head
            if done:
                self._advance_to(done)  # only once the page's writes are committed
            if last_page or self._stop.is_set():
                break
        return processed

    def _run(self) -> None:
        backoff = self.poll_interval
        while not self._stop.is_set():
            try:
                if self.lock is not None and (self.is_leader or time.monotonic() >= self._next_lock_try):
                    was_leader, self.is_leader = self.is_leader, self.lock.try_acquire()
                    self._next_lock_try = time.monotonic() + LOCK_RETRY_SECONDS
                    if self.is_leader and not was_leader:
                        self.became_leader()
                if self.is_leader:
                    self.catch_up()
                else:  # hot standby: follow the leader's tracking for read-your-writes
                    self._advance_to(self.view.max_tracking_id(self.app.name) or 0)
                self.error = None
                backoff = self.poll_interval
            except IntegrityError:
                # The view's tracking already holds this position: another writer projected it (a
                # rebuild swapped in a new generation). Nothing is lost: go on from its tracking.
                log.info("projection.resumed_from_tracking", projection=self.name)
                with contextlib.suppress(Exception):
                    self._advance_to(self.view.max_tracking_id(self.app.name) or 0)
            except Exception as exc:  # keep following the log; report and retry
                self.error = exc
                log.exception("projection.failed", projection=self.name)
                backoff = min(backoff * 2, 5.0)
                # Another process may have advanced the view; resume from its tracking. With the
                # database gone this fails too: the loop goes on and tries again after the backoff.
                with contextlib.suppress(Exception):
                    self._advance_to(self.view.max_tracking_id(self.app.name) or 0)
            self._wake.wait(backoff)
            self._wake.clear()

    def became_leader(self) -> None:
        """This process took the lead (at start, or from a leader that stopped)."""
        log.info("follower.leading", follower=self.name, position=self.position)

    def _advance_to(self, position: int) -> None:
        with self._progress:
            if position > self.position:
                self.position = position
                self._progress.notify_all()

    def wait(self, position: int, timeout: float = 2.0) -> bool:
        """Block until the view has processed ``position`` (read-your-writes)."""
        self.poke()
        deadline = time.monotonic() + timeout
        while self.position < position:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._thread is None:
                return False
            if not self.is_leader:  # a standby learns of progress from the leader's tracking
                self._advance_to(self.view.max_tracking_id(self.app.name) or 0)
            with self._progress:
                if self.position < position:
                    self._progress.wait(min(remaining, 0.05))
        return True
