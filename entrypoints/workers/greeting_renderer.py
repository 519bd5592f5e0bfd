"""Reactor that renders a number's greeting as audio when the greeting or its voice changes
(``application/numbers/greetings.py``): the PATCH answers ``greeting_audio_fresh: false`` at
once, and a later read shows true. A rendering that fails is reported and tried again with the
number's next change; the number stays usable (a call then speaks the greeting live)."""

from __future__ import annotations

from typing import Any

import structlog
from eventsourcing.persistence import Tracking

from application.calling.app import Calling
from application.numbers.greetings import GreetingAudioStore, SpeechFor, render_greeting
from domain.numbers.number import Number

log = structlog.get_logger(__name__)


class GreetingRenderer:
    name = "greeting_renderer"
    handles = (Number.Registered, Number.Updated)

    def __init__(self, calling: Calling, tracking: Any, speech_for: SpeechFor, store: GreetingAudioStore) -> None:
        self.calling, self.tracking, self.speech_for, self.store = calling, tracking, speech_for, store

    def process_event(self, event: Any, tracking: Tracking) -> None:
        changes = getattr(event, "changes", None)
        if changes is None or {"greeting", "greeting_voice_id"} & set(changes):
            number_id = str(event.originator_id)
            try:
                if render_greeting(self.calling, self.speech_for, self.store, number_id):
                    log.info("number.greeting_rendered", number_id=number_id, tenant_id=event.tenant_id)
            except Exception as exc:
                if self.calling.is_outage(exc):
                    raise  # processed again once the database is back
                log.error("number.greeting_render_failed", number_id=number_id, tenant_id=event.tenant_id,
                          error=type(exc).__name__, exc_info=exc)
        self.tracking.insert_tracking(tracking)
