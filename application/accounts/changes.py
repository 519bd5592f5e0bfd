"""Which account aggregates changed since a lookup was read: what lets a remembered key answer a
request with no database round trip.

A watcher (the HTTP server's, ``adapters/postgres/accounts_watch.py``) reads the accounts
notification log in order, a few times a second, and tells ``saw`` each new notification's
aggregate id. A key and its tenant read at head ``h`` are still current while neither aggregate
has a notification above ``h``: other accounts' events (a login, another tenant's key) leave them
valid. A change made by another process is seen within one poll; one made by this process is
seen at once (``saved_here``): until the watcher has read past it, every lookup read before it
is refused and re-read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from uuid import UUID

MAX_TRACKED = 50_000  # aggregates remembered; past that, lookups read before the reset are re-read
# How long a poll's answer vouches for remembered lookups. A change committed before a poll began is
# seen by it; a remembered lookup is used only while the last poll began less than this ago, so a
# revocation anywhere stops its key within this plus one poll's interval (< 1 s), even if the watcher stalls.
VOUCH_SECONDS = 0.8


class AccountChanges:
    def __init__(self, max_tracked: int = MAX_TRACKED) -> None:
        self._touched: dict[UUID, int] = {}  # aggregate id -> its highest notification id seen
        self._max_tracked = max_tracked
        self._lock = threading.Lock()
        self.watching = False  # only a running watcher makes remembered lookups usable
        self.floor = 0  # lookups read below this head are not judged (before the watcher or a reset)
        self.scanned = 0  # every notification up to here has been seen
        self.saved_here = 0  # the highest notification id this process saved
        self._vouched_until = 0.0  # monotonic time

    def start(self, head: int) -> None:
        """The watcher starts reading after ``head``: lookups read before it are not judged."""
        with self._lock:
            self._touched.clear()
            self.floor = self.scanned = head
            self.watching = True

    def stop(self) -> None:
        self.watching = False

    def saw(self, notifications: Iterable[tuple[int, UUID]], head: int, *, began: float) -> None:
        """Notifications read in order by a poll begun at ``began`` (``time.monotonic()``), and the
        position read up to (every id at or below it seen)."""
        with self._lock:
            self._vouched_until = max(self._vouched_until, began + VOUCH_SECONDS)
            for notification_id, aggregate_id in notifications:
                self._touched[aggregate_id] = notification_id
            if len(self._touched) > self._max_tracked:
                self._touched.clear()
                self.floor = head
            self.scanned = max(self.scanned, head)

    def saved(self, position: int) -> None:
        """This process committed up to ``position`` (told by the application after each save)."""
        with self._lock:
            self.saved_here = max(self.saved_here, position)

    def vouching(self) -> bool:
        """Is a watcher running whose last poll began recently enough to judge lookups?"""
        return self.watching and time.monotonic() < self._vouched_until

    def unchanged(self, read_at: int, *aggregate_ids: UUID) -> bool:
        """Are the aggregates, read at head ``read_at``, still as they were, as far as this process knows?"""
        if not self.watching or read_at < self.floor or time.monotonic() >= self._vouched_until:
            return False
        if self.saved_here > self.scanned and read_at < self.saved_here:
            return False  # this process changed something the watcher has not read yet
        touched = self._touched
        return all(touched.get(aggregate_id, 0) <= read_at for aggregate_id in aggregate_ids)
