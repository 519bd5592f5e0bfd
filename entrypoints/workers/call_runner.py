"""Reactor that runs queued calls: claims each one as its ``Queued`` event arrives (the claim is
the at-most-once guard), then holds a simulated conversation, or asks the carrier to dial a live
call, on a worker thread. A live call's conversation happens on its voice socket."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog
from eventsourcing.persistence import Tracking

from application.calling import dialing, runner
from application.calling.app import Calling
from application.errors import ConflictError
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError
from entrypoints.workers.fair_share import FairShare

log = structlog.get_logger(__name__)


class CallRunner:
    name = "call_runner"
    handles = (Call.Queued,)

    def __init__(self, calling: Calling, tracking: Any, max_workers: int = 8,
                 simulation_workers: int | None = None) -> None:
        """``max_workers`` threads dial live calls (network waits); ``simulation_workers`` (default
        the same) hold simulated conversations, shared between tenants in turn (fair_share.py).
        With the scripted brain a conversation is pure Python: threads beyond the cores only
        contend for the GIL with the request handlers."""
        self.calling = calling
        self.tracking = tracking  # a tracking recorder: where this reactor has got to
        self.simulation_workers = simulation_workers or max_workers
        self._dials = _Workers(max_workers, "call")
        self._simulations = FairShare(self.simulation_workers, "simulation")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Call.Queued) and event.direction == "outbound":
            if event.mode == "live":
                # DialRequested is saved before this event is marked processed: after a crash the
                # call is not queued any more, so it is never dialed twice.
                self._dials.start(lambda: dialing.claim_dial(self.calling, event.call_id), self._dial)
            else:
                self._submit(event.tenant_id, event.call_id)
        self.tracking.insert_tracking(tracking)

    def _submit(self, tenant_id: str, call_id: str, take: Callable[[Calling, str], Call | None] | None = None) -> bool:
        """Queue the call for a worker, which first ``take``s it (default: claim a queued call)."""
        take = take or runner.claim
        return self._simulations.submit(tenant_id, lambda: take(self.calling, call_id), self._run, key=call_id)

    def resume(self, waiting: list[tuple[str, str]]) -> int:
        """Take up queued simulated calls, as (call_id, tenant_id), that are not waiting here
        already: the log has moved past them while they waited in memory (a restart, a crash).
        How many were taken."""
        return sum(self._submit(tenant_id, call_id) for call_id, tenant_id in waiting)

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
        self._dials.close()
        self._simulations.close()


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
