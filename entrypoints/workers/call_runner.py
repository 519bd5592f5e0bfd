"""Reactor that runs queued calls: claims each one as its ``Queued`` event arrives (the claim is
the at-most-once guard), then holds a simulated conversation, or asks the carrier to dial a live
call, on a worker thread. A live call's conversation happens on its voice socket."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog
from eventsourcing.persistence import Tracking

from application.calling import live, runner
from application.calling.app import Calling
from application.errors import ConflictError
from domain.calls.call import Call, CallStateError

log = structlog.get_logger(__name__)


class CallRunner:
    name = "call_runner"
    handles = (Call.Queued,)

    def __init__(self, calling: Calling, tracking: Any, max_workers: int = 8) -> None:
        self.calling = calling
        self.tracking = tracking  # a tracking recorder: where this reactor has got to
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="call")
        # Backpressure: claim a call only when a worker can start it soon, so a backlog stays
        # queued (and visible as such) instead of piling up claimed in memory.
        self._slots = threading.BoundedSemaphore(max_workers * 2)

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Call.Queued) and event.direction == "outbound":
            self._slots.acquire()
            if event.mode == "live":
                # DialRequested is saved before this event is marked processed: after a crash the
                # call is not queued any more, so it is never dialed twice.
                call = live.claim_dial(self.calling, event.call_id)
                work = self._dial
            else:
                call = runner.claim(self.calling, event.call_id)
                work = self._run
            if call is None:
                self._slots.release()
            else:
                self._pool.submit(work, call)
        self.tracking.insert_tracking(tracking)

    def _run(self, call: Call) -> None:
        try:
            runner.run(self.calling, call)
        except Exception as exc:  # a failing brain or extractor must still end the call
            log.error("call.run_failed", call_id=call.call_id, error=type(exc).__name__, exc_info=exc)
            self._fail(call.call_id, exc)
        finally:
            self._slots.release()

    def _dial(self, call: Call) -> None:
        try:
            live.dial(self.calling, call)
        except Exception as exc:
            log.error("call.dial_failed", call_id=call.call_id, error=type(exc).__name__, exc_info=exc)
            self._fail(call.call_id, exc)
        finally:
            self._slots.release()

    def _fail(self, call_id: str, exc: Exception) -> None:
        code = getattr(exc, "code", None) or "internal_error"
        try:
            self.calling.update(Call, Call.create_id(call_id),
                                lambda c: c.fail(code, "the call could not be completed", self.calling.ports.clock()))
        except (ConflictError, CallStateError):
            pass

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)
