"""Reactor that notifies the subscribed devices of a number when a live inbound call to it starts
(``Call.InboundAnswered``; SPEC.md Events 12), following the log on its own: the call never waits
for a push service, and a push service that fails or hangs changes nothing about the call.

The devices of one call are sent to at once, each send bounded by the sender's timeout. Its
tracking is written once every attempt's answer is, so a notifier that stops half-way sees the
call again and sends what is still pending (at least once; devices dedupe on ``notification_id``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from eventsourcing.persistence import Tracking

from application import logs
from application.calling.app import Calling
from application.push import notifications, vapid
from application.push.notifications import Attempt
from application.push.ports import PushPorts, PushResult, PushSender
from domain.calls.call import Call
from domain.push.notification import PENDING

log = logs.get_logger("callwright.push")


class PushNotifier:
    name = "push_notifier"
    handles = (Call.InboundAnswered,)

    def __init__(self, calling: Calling, tracking: Any, ports: PushPorts) -> None:
        self.calling = calling
        self.tracking = tracking
        self.ports = ports

    def process_event(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Call.InboundAnswered):
            self._notify(event)
        self.tracking.insert_tracking(tracking)

    def _notify(self, event: Any) -> None:
        scheduled = notifications.schedule(
            self.calling, event.tenant_id,
            lambda: self.calling.repository.get(event.originator_id, version=event.originator_version), event.at)
        pending = [n for n in scheduled if n.status == PENDING]
        if not pending:
            return
        box = self.ports.box
        attempts = [a for n in pending if (a := notifications.start(self.calling, box, n.id)) is not None]
        if not attempts:
            return
        keys = vapid.key_pair(self.calling, self.ports)
        outcomes = asyncio.run(self._send(attempts, keys))
        for attempt, outcome in zip(attempts, outcomes):
            notifications.finish(self.calling, attempt, outcome)

    async def _send(self, attempts: list[Attempt], keys: Any) -> list[Any]:
        async with self.ports.sender() as sender:
            return list(await asyncio.gather(*(self._one(sender, attempt, keys) for attempt in attempts)))

    async def _one(self, sender: PushSender, attempt: Attempt, keys: Any) -> Any:
        try:
            return await sender.send(attempt.target, attempt.payload, vapid=keys, ttl=attempt.ttl)
        except Exception as exc:  # written down as a failed attempt; the other devices still get theirs
            log.exception("push.send_crashed", notification_id=attempt.notification.notification_id,
                          error=type(exc).__name__)
            return PushResult(status=None, error=f"send failed: {type(exc).__name__}", latency_ms=0)
