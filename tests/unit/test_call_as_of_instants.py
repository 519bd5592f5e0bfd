"""``as_of`` and the instants a call's record shows (SPEC.md Call ``created_at``):
a new call's ``Queued`` event is stored at its own ``at``, the record's ``created_at``; one stored
before that was so (stamped a little later) still answers ``as_of=created_at``."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from application.calling.history import version_as_of
from tests.support.calls import NOW, queued_call

MICROSECOND = timedelta(microseconds=1)


def test_a_new_call_is_stored_at_the_instant_its_record_shows_as_created_at():
    call = queued_call()
    [queued] = call.collect_events()
    assert queued.timestamp == call.created_at == NOW


def test_a_queued_event_stored_after_its_created_at_counts_from_created_at():
    call = queued_call()
    [queued] = call.collect_events()
    legacy = dataclasses.replace(queued, timestamp=NOW + timedelta(milliseconds=40))

    assert version_as_of([legacy], NOW) == 1
    assert version_as_of([legacy], NOW + timedelta(milliseconds=1)) == 1
    assert version_as_of([legacy], NOW - MICROSECOND) is None
