"""Simulated conversations shared fairly between tenants: each tenant's calls wait in a queue of
their own, and a free worker takes the next call of the tenant with the fewest calls under way
(among equals, the one served longest ago), so one tenant's many or long calls cannot hold back
another's. Calls are claimed only when a worker
takes them: a backlog stays ``queued``, visible and cancellable, and nothing claimed is lost."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)

Claim = Callable[[], Any]  # the claimed call, or None when it is not there to run any more
Work = Callable[[Any], None]


class FairShare:
    def __init__(self, size: int, name: str) -> None:
        self._waiting: dict[str, deque[tuple[Claim, Work]]] = {}
        self._known: set[str] = set()  # the keys of the calls waiting, until a worker tries to claim them
        self._running: dict[str, int] = {}
        self._served: dict[str, int] = {}  # the turn each tenant was last served at
        self._turn = 0
        self._changed = threading.Condition()
        self._closing = False
        self._threads = [threading.Thread(target=self._serve, name=f"{name}-{n}", daemon=True) for n in range(size)]

    def submit(self, tenant_id: str, claim: Claim, work: Work, key: str | None = None) -> bool:
        """Never blocks: the reactor reads on, so a call of another tenant behind this one is seen.
        A ``key`` already waiting or under way is not taken twice; False when not taken."""
        with self._changed:
            if self._closing or (key is not None and key in self._known):
                return False  # stopping (the call stays queued), or already here
            if key is not None:
                self._known.add(key)
                claim = _forgetting(self._known, key, claim)
            if not self._threads[0].ident:
                for thread in self._threads:  # started with the first call, as a thread pool's are
                    thread.start()
            self._waiting.setdefault(tenant_id, deque()).append((claim, work))
            self._changed.notify()
            return True

    def _next(self) -> tuple[str, Claim, Work] | None:
        with self._changed:
            while not self._waiting and not self._closing:
                self._changed.wait()
            if self._closing:
                return None
            tenant_id = min(self._waiting, key=lambda t: (self._running.get(t, 0), self._served.get(t, -1)))
            calls = self._waiting[tenant_id]
            claim, work = calls.popleft()
            if not calls:
                del self._waiting[tenant_id]
            self._turn += 1
            self._served[tenant_id] = self._turn
            self._running[tenant_id] = self._running.get(tenant_id, 0) + 1
            return tenant_id, claim, work

    def _done(self, tenant_id: str) -> None:
        with self._changed:
            self._running[tenant_id] -= 1
            if not self._running[tenant_id] and tenant_id not in self._waiting:
                del self._running[tenant_id], self._served[tenant_id]  # no memory of tenants gone quiet

    def _serve(self) -> None:
        while (taken := self._next()) is not None:
            tenant_id, claim, work = taken
            try:
                call = claim()
                if call is not None:
                    work(call)
            except Exception as exc:  # the database is down: the call stays queued for the watchdog
                log.error("simulation.claim_failed", error=type(exc).__name__, exc_info=exc)
            finally:
                self._done(tenant_id)

    def waiting(self) -> list[str]:
        """The keys of the calls submitted and not yet tried by a worker."""
        with self._changed:
            return list(self._known)

    def stop(self) -> list[str]:
        """Take nothing more; the calls still waiting were never claimed and stay queued. Their
        keys, to hand them back."""
        with self._changed:
            self._closing = True
            left = list(self._known)
            self._waiting.clear()
            self._known.clear()
            self._changed.notify_all()
        return left

    def close(self, timeout: float | None = None) -> list[str]:
        """``stop``, then finish the calls under way (for at most ``timeout`` seconds: past it a run
        is left to its lease). The keys of the calls that were still waiting."""
        left = self.stop()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            if thread.ident:
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return left


def _forgetting(known: set[str], key: str, claim: Claim) -> Claim:
    """``claim``, and the key forgotten once it was tried (claimed, or found not queued any more)."""

    def claimed() -> Any:
        try:
            return claim()
        finally:
            known.discard(key)

    return claimed
