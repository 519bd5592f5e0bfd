"""Group commit (application/group_commit.py): concurrent commands share one save, yet each one
succeeds or fails alone, and positions still let the read side catch up."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from eventsourcing.persistence import IntegrityError

from application.errors import ConflictError
from application.commit_path import CommitPath
from application.group_commit import GroupCommitter
from domain.calls.suppression import SuppressionEntry
from tests.fakes.clock import FakeClock

TENANT = "ten_" + "a" * 32


def entry(number: str, clock: FakeClock) -> SuppressionEntry:
    return SuppressionEntry(tenant_id=TENANT, e164=number, reason=None, expires_at=None, by="test", at=clock())


def test_concurrent_commits_are_grouped_and_all_saved(container, clock):
    calling = container.calling
    saves: list[int] = []
    original = calling.save

    def counting_save(*objs):
        saves.append(len(objs))
        return original(*objs)

    calling.commits.close()
    calling.commits = CommitPath(counting_save, calling.mapper.to_stored_event, grouped=True)
    numbers = [f"+4420718{i:05d}" for i in range(64)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        positions = list(pool.map(lambda n: calling.commit(entry(n, clock)), numbers))
    assert all(p > 0 for p in positions)
    assert all(calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, n)) for n in numbers)
    assert sum(saves) == 64 and len(saves) < 64  # some saves carried several commands' events
    assert calling.known_head >= max(positions)


def test_a_conflicting_command_fails_alone_when_its_group_conflicts(container, clock):
    calling = container.calling
    calling.commit(entry("+442071830000", clock))
    stale_a = calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, "+442071830000"))
    stale_b = calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, "+442071830000"))
    stale_a.remove("a", clock())
    stale_b.remove("b", clock())
    gate = threading.Barrier(3)
    results: dict[str, object] = {}

    def run(name, aggregate):
        gate.wait()
        try:
            results[name] = calling.commit(aggregate)
        except ConflictError as exc:
            results[name] = exc

    threads = [
        threading.Thread(target=run, args=("a", stale_a)),
        threading.Thread(target=run, args=("b", stale_b)),
        threading.Thread(target=run, args=("fresh", entry("+442071830001", clock))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    conflicts = [name for name, result in results.items() if isinstance(result, ConflictError)]
    assert len(conflicts) == 1 and conflicts[0] in ("a", "b")
    assert isinstance(results["fresh"], int)
    assert calling.find(SuppressionEntry, SuppressionEntry.create_id(TENANT, "+442071830001")) is not None


def test_a_group_fails_together_when_the_database_fails():
    def broken_save(*_):
        raise OSError("database unavailable")

    committer = GroupCommitter(broken_save)
    try:
        with pytest.raises(OSError):
            committer.submit(["event"])
    finally:
        committer.stop()


def test_integrity_errors_reach_the_caller_of_a_single_command():
    def conflicting_save(*_):
        raise IntegrityError("duplicate")

    committer = GroupCommitter(conflicting_save)
    try:
        with pytest.raises(IntegrityError):
            committer.submit(["event"])
    finally:
        committer.stop()
