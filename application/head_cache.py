"""Lookups derived from an event store, reused while what they were read from stands still.

Accounts keys its entries by the notification log's head: any change to any account aggregate
moves it, so a revocation, rotation or approval, made in this process or another, is seen by the
very next request; an unchanged head costs one indexed ``max()`` instead of rebuilding aggregates.
Calling keys a tenant's suppression index by that aggregate's own version, for the same reason.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class HeadCache:
    def __init__(self, maxsize: int = 10_000) -> None:
        self._entries: OrderedDict[Any, tuple[int, Any]] = OrderedDict()
        self._maxsize = maxsize
        self._lock = threading.Lock()

    def get(self, key: Any, head: int) -> Any | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != head:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def peek(self, key: Any) -> tuple[int, Any] | None:
        """The entry and the head it was read at, whatever the head is now (the caller checks)."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: Any, head: int, value: Any) -> None:
        with self._lock:
            self._entries[key] = (head, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
