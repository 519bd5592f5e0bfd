"""Projection runner: catch-up from tracking, replay safety, and one leader across processes."""

from __future__ import annotations

from application.accounts import registration
from entrypoints.bootstrap import bootstrap
from tests.support.setup import FAST_HASHER, PASSWORD


def _count(container, table: str) -> int:
    import psycopg

    with psycopg.connect(container.database.conninfo()) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _wait_until(condition, timeout: float = 5.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.01)


def test_views_catch_up_with_events_saved_before_they_started(container):
    for i in range(3):
        registration.register(container.accounts, email=f"early{i}@example.com", password=PASSWORD, name=None)
    container.start_projections()
    container.wait_for_views(timeout=5)
    assert _count(container, "api_keys_v1") == 3
    assert _count(container, "audit_events_v1") == 6  # user.registered + api_key.issued each


def test_only_one_process_projects_and_the_standby_still_sees_progress(container, settings, clock, mail, db):
    second = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER)
    try:
        container.start_projections()
        _wait_until(lambda: all(w.is_leader for w in [*container.projections.values(), *container.reactors.values()]))
        second.start_projections()
        registration.register(second.accounts, email="standby@example.com", password=PASSWORD, name=None)
        second.wait_for_views(timeout=5)
        assert _count(container, "api_keys_v1") == 1
        # one leader per follower, all in the first process; the second stands by
        assert all(w.is_leader for w in [*container.projections.values(), *container.reactors.values()])
        assert not any(w.is_leader for w in [*second.projections.values(), *second.reactors.values()])
    finally:
        second.close()


def test_reprocessing_an_event_changes_nothing(container):
    registration.register(container.accounts, email="again@example.com", password=PASSWORD, name=None)
    container.start_projections()
    container.wait_for_views(timeout=5)
    worker = container.projections["audit_events_v1"]
    notification = container.accounts.recorder.select_notifications(start=1, limit=1)[0]
    event = container.accounts.mapper.to_domain_event(notification)
    from eventsourcing.persistence import Tracking

    try:
        worker.process_event(event, Tracking(container.accounts.name, notification.id))
    except Exception as exc:  # the tracking row refuses a repeated notification id
        assert "IntegrityError" in type(exc).__name__ or "Integrity" in str(type(exc))
    assert _count(container, "audit_events_v1") == 2


def test_events_a_view_does_not_handle_are_skipped_and_tracked_once_a_page(container):
    import psycopg

    for i in range(3):
        registration.register(container.accounts, email=f"skip{i}@example.com", password=PASSWORD, name=None)
    worker = container.projections["api_keys_v1"]
    processed: list[str] = []
    original = worker.process_event
    worker.process_event = lambda event, tracking: (processed.append(type(event).__name__), original(event, tracking))
    recorder = container.accounts.recorder
    select = recorder.select_notifications
    read: list[str] = []

    def reading(*args, **kwargs):
        page = select(*args, **kwargs)
        read.extend(n.topic.rpartition(".")[2] for n in page)
        return page

    recorder.select_notifications = reading
    try:
        worker.catch_up()
    finally:
        del recorder.select_notifications
    head = container.accounts.recorder.max_notification_id()
    assert processed == ["Issued"] * 3  # tenants, users, e-mail claims and tokens were not even decoded
    assert read == ["Issued"] * 3  # nor read: the database filters by topic
    assert worker.position == head
    with psycopg.connect(container.database.conninfo()) as conn:
        tracked = conn.execute("SELECT notification_id FROM api_keys_v1_tracking WHERE application_name = 'Accounts'").fetchone()
    assert tracked[0] == head


def test_a_page_commits_together_and_a_failure_in_it_writes_nothing(container):
    import pytest

    for i in range(4):
        registration.register(container.accounts, email=f"page{i}@example.com", password=PASSWORD, name=None)
    worker = container.projections["api_keys_v1"]
    original = worker.process_event
    seen: list[int] = []

    def failing_on_third(event, tracking):
        seen.append(tracking.notification_id)
        if len(seen) == 3:
            raise RuntimeError("view write failed")
        original(event, tracking)

    worker.process_event = failing_on_third
    with pytest.raises(RuntimeError):
        worker.catch_up()
    assert worker.position == 0 and _count(container, "api_keys_v1") == 0  # the first two were not kept
    worker.process_event = original
    worker.catch_up()
    assert _count(container, "api_keys_v1") == 4
    assert worker.position == container.accounts.recorder.max_notification_id()


def test_a_follower_keeps_running_while_the_database_is_unreachable():
    """A failing read, and a failing read of its own tracking, must not end the follower thread."""
    import time as clock

    from application.follower import ProjectionWorker

    class Down:
        name = "Accounts"

        def __getattr__(self, _):
            raise OSError("database unavailable")

    class View:
        calls = 0

        def max_tracking_id(self, _):
            View.calls += 1
            if View.calls > 1:
                raise OSError("database unavailable")
            return 0

    worker = ProjectionWorker(Down(), lambda *_: None, View(), name="down", poll_interval=0.01)
    worker.start()
    try:
        clock.sleep(0.3)
        assert worker._thread is not None and worker._thread.is_alive()
        assert isinstance(worker.error, OSError)
    finally:
        worker.stop()


def test_a_follower_is_woken_only_by_saves_of_events_it_handles(container):
    from domain.calls.call import Call
    from domain.calls.suppression import SuppressionEntry
    from eventsourcing.utils import get_topic

    suppressions = container.projections["suppressions_v1"]
    calls_list = container.projections["calls_list_v1"]
    call_created = frozenset({get_topic(Call.Queued)})

    for worker in (suppressions, calls_list):
        worker._wake.clear()
        worker.poke(1, call_created)
    assert not suppressions._wake.is_set() and calls_list._wake.is_set()

    suppressions.poke(2, frozenset({get_topic(SuppressionEntry.Added), *call_created}))
    assert suppressions._wake.is_set()
