"""A remembered key is current while neither its key nor its tenant aggregate changed since it was
read, as far as the accounts log watcher and this process's own saves tell (application/accounts/changes.py)."""

from __future__ import annotations

import uuid

from application.accounts import changes as module
from application.accounts.changes import AccountChanges

KEY, TENANT, OTHER = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()


def watched(head: int = 10, at: float = 100.0) -> AccountChanges:
    changes = AccountChanges()
    changes.start(head)
    changes.saw([], head, began=at)
    return changes


def test_nothing_is_vouched_for_without_a_watcher(monkeypatch):
    monkeypatch.setattr(module.time, "monotonic", lambda: 100.0)
    changes = AccountChanges()
    assert not changes.unchanged(10, KEY, TENANT)
    changes = watched()
    changes.stop()
    assert not changes.unchanged(10, KEY, TENANT)


def test_other_aggregates_changes_leave_a_lookup_current_and_its_own_do_not(monkeypatch):
    monkeypatch.setattr(module.time, "monotonic", lambda: 100.1)
    changes = watched()
    changes.saw([(11, OTHER), (12, OTHER)], 12, began=100.1)
    assert changes.unchanged(10, KEY, TENANT)
    changes.saw([(13, TENANT)], 13, began=100.1)
    assert not changes.unchanged(10, KEY, TENANT)
    assert changes.unchanged(13, KEY, TENANT)  # read again at 13: current
    assert not changes.unchanged(9, KEY, TENANT)  # read before the watcher started: not judged


def test_a_save_of_this_process_refuses_older_lookups_until_the_watcher_reads_past_it(monkeypatch):
    monkeypatch.setattr(module.time, "monotonic", lambda: 100.1)
    changes = watched()
    changes.saved(15)
    assert not changes.unchanged(12, KEY, TENANT)
    assert changes.unchanged(15, KEY, TENANT)
    changes.saw([(15, OTHER)], 15, began=100.1)
    assert changes.unchanged(12, KEY, TENANT)


def test_a_stalled_watcher_stops_vouching_within_its_window(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    changes = watched(at=100.0)
    clock[0] = 100.0 + module.VOUCH_SECONDS - 0.01
    assert changes.unchanged(10, KEY) and changes.vouching()
    clock[0] = 100.0 + module.VOUCH_SECONDS
    assert not changes.unchanged(10, KEY) and not changes.vouching()


def test_too_many_tracked_aggregates_reset_the_floor(monkeypatch):
    monkeypatch.setattr(module.time, "monotonic", lambda: 100.0)
    changes = AccountChanges(max_tracked=2)
    changes.start(10)
    changes.saw([(11, uuid.uuid4()), (12, uuid.uuid4()), (13, uuid.uuid4())], 13, began=100.0)
    assert not changes.unchanged(12, KEY) and changes.unchanged(13, KEY)
