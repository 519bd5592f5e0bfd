"""Reactor that sends a number's post-call SMS when one of its calls ends
(``application/numbers/post_call_sms.py``), on worker threads: the carrier's answer takes a
network round trip, and a failing send is tried again after a pause."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog
from eventsourcing.persistence import Tracking

from application.calling.app import Calling
from application.numbers.post_call_sms import send_post_call_sms
from application.providers.ports import AccountAccess
from domain.calls.call import Call

log = structlog.get_logger(__name__)


class PostCallSms:
    name = "post_call_sms"
    handles = (Call.Completed, Call.Failed)

    def __init__(self, calling: Calling, tracking: Any, managed: AccountAccess | None = None,
                 max_workers: int = 4) -> None:
        self.calling = calling
        self.tracking = tracking
        self.managed = managed  # the service's own sub-account: managed numbers text from it
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sms")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        call = self.calling.find(Call, event.originator_id)  # from the aggregate cache: it just ended
        if call is not None and call.mode == "live":  # a simulated call texts nobody
            self._pool.submit(self._send, call.call_id)
        self.tracking.insert_tracking(tracking)

    def _send(self, call_id: str) -> None:
        try:
            send_post_call_sms(self.calling, call_id, managed=self.managed)
        except Exception as exc:  # reported; the call itself is settled and stays so
            log.error("sms.send_failed", call_id=call_id, error=type(exc).__name__, exc_info=exc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)
