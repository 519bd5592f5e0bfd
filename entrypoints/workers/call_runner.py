"""Reactor that runs queued calls: claims each one as its ``Queued`` event arrives (the claim is
the at-most-once guard), then holds a simulated conversation, or asks the carrier to dial a live
call, on a worker thread. A live call's conversation happens on its voice socket.

Nothing it accepts is lost when its process stops: a live call is claimed (``DialRequested``
saved) before its event is marked processed; a simulated call waits for a free worker under a
lease in PostgreSQL (``RunLeases``) taken before its event is marked processed and renewed while
it waits. A process that dies lets those leases run out, and the resumer of any live runner takes
the calls; one that is stopped hands them back at once and finishes what it has started within
its grace period.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import structlog
from eventsourcing.persistence import Tracking

from application.calling import dialing, runner
from application.calling.app import Calling
from application.errors import ConflictError
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from entrypoints.workers.fair_share import FairShare

log = structlog.get_logger(__name__)

# How often a runner renews the leases of the calls waiting in its memory (a lease lasts longer:
# ``RunLeases.lease``, 10 s by default, so two renewals may fail before another runner takes them).
RENEW_SECONDS = 3.0


class RunLeases(Protocol):
    """Durable leases on accepted queued calls (``adapters/postgres/run_leases.py``)."""

    def take(self, calls: Sequence[tuple[str, str]]) -> list[tuple[str, str]]: ...

    def renew(self, call_ids: Iterable[str]) -> None: ...

    def release(self, call_ids: Iterable[str]) -> None: ...

    def forget(self, call_id: str) -> None: ...


class CallRunner:
    name = "call_runner"
    handles = (Call.Queued,)

    def __init__(self, calling: Calling, tracking: Any, max_workers: int = 8,
                 simulation_workers: int | None = None, leases: RunLeases | None = None,
                 grace_seconds: float | None = None) -> None:
        """``max_workers`` threads dial live calls (network waits); ``simulation_workers`` (default
        the same) hold simulated conversations, shared between tenants in turn (fair_share.py).
        With the scripted brain a conversation is pure Python: threads beyond the cores only
        contend for the GIL with the request handlers. ``leases``: the durable acceptance of
        simulated calls (None: accepted in memory only, for unit tests). ``grace_seconds``: how
        long ``close`` lets calls under way finish (None: as long as they take)."""
        self.calling = calling
        self.tracking = tracking  # a tracking recorder: where this reactor has got to
        self.simulation_workers = simulation_workers or max_workers
        self.leases = leases
        self.grace_seconds = grace_seconds
        # The most queued calls the resumer lets wait here at once: a stopped runner's backlog is
        # taken in one round or two (a worker runs tens of simulated calls a second), and a larger
        # one spreads over the live runners.
        self.resume_room = max(200, 50 * self.simulation_workers)
        self._dials = _Workers(max_workers, "call")
        self._simulations = FairShare(self.simulation_workers, "simulation")
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Call.Queued) and event.direction == "outbound":
            if event.mode == "live":
                # DialRequested is saved before this event is marked processed: after a crash the
                # call is not queued any more, so it is never dialed twice.
                self._dials.start(lambda: dialing.claim_dial(self.calling, event.call_id), self._dial)
            else:
                # Leased before this event is marked processed: a crash now loses nothing.
                self._accept([(event.call_id, event.tenant_id)])
        self.tracking.insert_tracking(tracking)

    def _accept(self, calls: Sequence[tuple[str, str]]) -> int:
        """Lease the queued calls no live runner holds and queue them for a worker; how many."""
        if self._stop.is_set():
            return 0  # stopping: another runner's resumer takes them
        if self.leases is not None:
            calls = self.leases.take(calls)
            self._start_renewing()
        return sum(self._submit(tenant_id, call_id) for call_id, tenant_id in calls)

    def _submit(self, tenant_id: str, call_id: str, take: Callable[[Calling, str], Call | None] | None = None) -> bool:
        """Queue the call for a worker, which first ``take``s it (default: claim a queued call)."""
        take = take or runner.claim
        return self._simulations.submit(tenant_id, lambda: self._tried(call_id, take), self._run, key=call_id)

    def _tried(self, call_id: str, take: Callable[[Calling, str], Call | None]) -> Call | None:
        """``take`` the call; then its lease, if any, has done its work (the aggregate's own claim
        and lease take over, or the call was not there to run any more)."""
        call = take(self.calling, call_id)
        if self.leases is not None:
            try:
                self.leases.forget(call_id)
            except Exception as exc:  # the database is away: the lease runs out by itself
                log.warning("call_runner.lease_not_forgotten", call_id=call_id, error=type(exc).__name__)
        return call

    def resume(self, waiting: list[tuple[str, str]]) -> int:
        """Take up queued simulated calls, as (call_id, tenant_id), that no live runner holds: the
        log has moved past them while they waited in a runner's memory (a restart, a crash), or
        their runner stopped and handed them back. How many were taken."""
        room = self.resume_room - len(self._simulations.waiting())
        known = set(self._simulations.waiting())
        return self._accept([call for call in waiting if call[0] not in known][:max(0, room)])

    def _start_renewing(self) -> None:
        if self._renewer is None and self.leases is not None:
            self._renewer = threading.Thread(target=self._renew, name="call-run-leases", daemon=True)
            self._renewer.start()

    def _renew(self) -> None:
        assert self.leases is not None
        while not self._stop.wait(RENEW_SECONDS):
            try:
                self.leases.renew(self._simulations.waiting())
            except Exception as exc:  # a round missed; the lease outlives two of them
                log.warning("call_runner.leases_not_renewed", error=type(exc).__name__)

    def take_over(self, running: list[tuple[str, str]]) -> int:
        """Offer simulated calls in progress, as (call_id, tenant_id), for a take-over: a worker
        restarts each one whose runner's lease has run out (its process died) and leaves the
        others alone. How many were offered."""
        return sum(self._submit(tenant_id, call_id, runner.take_over) for call_id, tenant_id in running)

    def _run(self, call: Call) -> None:
        try:
            runner.run(self.calling, call)
        except Exception as exc:  # a failing brain or extractor must still end the call
            self._failed("call.run_failed", call, exc)

    def _dial(self, call: Call) -> None:
        try:
            dialing.dial(self.calling, call)
        except Exception as exc:
            self._failed("call.dial_failed", call, exc)

    def _failed(self, event: str, call: Call, exc: Exception) -> None:
        """End the call as failed, unless the database cannot be reached: then nothing can be
        written, and ``internal_error`` would be wrong. A simulated call's lease runs out and it
        is taken over; a live one is settled by the reconciler."""
        fields = {"call_id": call.call_id, "tenant_id": call.tenant_id, "error": type(exc).__name__}
        if self.calling.is_outage(exc):
            log.warning("call.run_interrupted", **fields)
            return
        log.error(event, **fields, exc_info=exc)
        self._fail(call.call_id, exc)

    def _fail(self, call_id: str, exc: Exception) -> None:
        code = getattr(exc, "code", None) or "internal_error"
        try:
            self.calling.update(Call, Call.create_id(call_id),
                                lambda c: c.fail(code, "the call could not be completed", self.calling.ports.clock()))
        except (ConflictError, CallStateError):
            pass

    def close(self) -> None:
        """Take nothing more; hand back the calls waiting here (another runner's resumer takes them
        within seconds) and let the calls under way finish within the grace period."""
        self._stop.set()
        left = self._simulations.stop() if self.leases is not None else []
        if left and self.leases is not None:
            try:
                self.leases.release(left)
                log.info("call_runner.handed_back", calls=len(left))
            except Exception as exc:  # their leases run out instead
                log.warning("call_runner.not_handed_back", calls=len(left), error=type(exc).__name__)
        self._simulations.close(timeout=self.grace_seconds)
        self._dials.close()


class _Workers:
    """A thread pool with backpressure: a call is claimed only when a worker can start it soon, so
    a backlog stays queued (and visible as such) instead of piling up claimed in memory."""

    def __init__(self, size: int, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix=name)
        self._slots = threading.BoundedSemaphore(size * 2)

    def start(self, claim: Callable[[], Call | None], work: Callable[[Call], None]) -> None:
        self._slots.acquire()
        try:
            call = claim()
        except BaseException:  # the database is down: the event is processed again later
            self._slots.release()
            raise
        if call is None:
            self._slots.release()
        else:
            self._pool.submit(self._release_after, work, call)

    def _release_after(self, work: Callable[[Call], None], call: Call) -> None:
        try:
            work(call)
        finally:
            self._slots.release()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)
