"""Reactor that settles live calls once they are over (``Call.ready_to_settle``: the voice session
closed, a voicemail's text arrived, a call routed away ended; no transfer under way): the outcome
is extracted on a worker thread (the model call may take seconds)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog
from eventsourcing.persistence import Tracking

from application.calling import runner
from application.calling.app import Calling
from application.errors import ConflictError
from domain.calls.call import Call
from domain.calls.call_rules import CallStateError

log = structlog.get_logger(__name__)


class LiveSettler:
    name = "live_settler"
    handles = (Call.VoiceSessionClosed, Call.TransferLegEnded, Call.CarrierEnded, Call.VoicemailTranscribed,
               Call.InboundRouted)

    def __init__(self, calling: Calling, tracking: Any, max_workers: int = 8) -> None:
        self.calling = calling
        self.tracking = tracking
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="settle")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        call = self.calling.find(Call, event.originator_id)
        if call is not None and call.ready_to_settle:
            self._pool.submit(self._settle, call.call_id)
        self.tracking.insert_tracking(tracking)

    def _settle(self, call_id: str) -> None:
        try:
            runner.settle_live(self.calling, call_id)
        except Exception as exc:  # a failing extractor must still end the call
            log.error("call.settle_failed", call_id=call_id, error=type(exc).__name__, exc_info=exc)
            try:
                self.calling.update(Call, Call.create_id(call_id), lambda c: c.fail(
                    getattr(exc, "code", None) or "internal_error", "the call could not be settled",
                    self.calling.ports.clock()))
            except (ConflictError, CallStateError):
                pass

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)
