"""Reactor that sends a number's post-call SMS when one of its calls ends
(``application/numbers/post_call_sms.py``), on worker threads: the carrier's answer takes a
network round trip, and a failing send is tried again after a pause.

Most calls end on tenants that text nobody (every simulated call does), so the reactor keeps the
tenants that have ever turned SMS on for a number, from the numbers' own events: read from the
start of the log when it first runs, then followed in order. A call of any other tenant is passed
over without a read; for the others, the call and its number decide (the set only narrows).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import structlog
from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from application.calling.app import Calling
from application.numbers.post_call_sms import send_post_call_sms
from domain.calls.call import Call
from domain.numbers.number import Number

log = structlog.get_logger(__name__)
NUMBER_EVENTS = (Number.Registered, Number.Updated)
PAGE = 500


class PostCallSms:
    name = "post_call_sms"
    handles = (Call.Completed, Call.Failed, *NUMBER_EVENTS)

    def __init__(self, calling: Calling, tracking: Any, max_workers: int = 4) -> None:
        self.calling = calling
        self.tracking = tracking
        self._texting: set[str] | None = None  # tenants that have turned SMS on for a number
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="sms")

    def process_event(self, event: Any, tracking: Tracking) -> None:
        texting = self._texting if self._texting is not None else self._tenants_texting()
        if isinstance(event, NUMBER_EVENTS):
            if _turns_sms_on(event):
                texting.add(event.tenant_id)
        elif event.tenant_id in texting:
            call = self.calling.peek(Call, event.originator_id)  # from the aggregate cache: it just ended
            if call is not None and call.mode == "live":  # a simulated call texts nobody
                self._pool.submit(self._send, call.call_id)
        self.tracking.insert_tracking(tracking)

    def _tenants_texting(self) -> set[str]:
        """Every tenant a number's event has turned SMS on for, from the start of the log."""
        texting: set[str] = set()
        recorder, topics = self.calling.recorder, [get_topic(cls) for cls in NUMBER_EVENTS]
        position = 0
        while True:
            page = recorder.select_notifications(start=position, limit=PAGE, topics=topics, inclusive_of_start=False)
            for notification in page:
                event = self.calling.mapper.to_domain_event(notification)
                if _turns_sms_on(event):
                    texting.add(event.tenant_id)
            if len(page) < PAGE:
                break
            position = page[-1].id
        self._texting = texting
        return texting

    def _send(self, call_id: str) -> None:
        try:
            send_post_call_sms(self.calling, call_id)
        except Exception as exc:  # reported; the call itself is settled and stays so
            log.error("sms.send_failed", call_id=call_id, error=type(exc).__name__, exc_info=exc)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)


def _turns_sms_on(event: Any) -> bool:
    settings = getattr(event, "settings", None) or getattr(event, "changes", None) or {}
    return bool(settings.get("sms_enabled"))
