"""The Call aggregate is one class (issue 31 item 1): its commands and events in one place, with
one base, so a reader finds every rule of a call without following mixins."""

from __future__ import annotations

from domain.base import TenantAggregate
from domain.calls.call import Call


def test_call_has_one_base():
    assert Call.__bases__ == (TenantAggregate,)


def test_every_event_keeps_its_stored_topic():
    """Stored events name their class (``domain.calls.call:Call.<Name>``); the class must answer to it."""
    events = [value for value in vars(Call).values() if isinstance(value, type) and hasattr(value, "mutate")]
    assert len(events) >= 29
    assert {f"{e.__module__}:{e.__qualname__}".rsplit(".", 1)[0] for e in events} == {"domain.calls.call:Call"}
