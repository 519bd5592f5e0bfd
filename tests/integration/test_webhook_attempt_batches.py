"""Leases and results saved in batches (application/webhooks/attempt_batches.py, docs/decisions.md 45):
every delivery reaches the receiver exactly once with its attempt recorded, and a batch that meets
a delivery changed meanwhile still leases and records the others, never the changed one twice."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from datetime import timedelta

import pytest

from adapters.webhooks.sender import AttemptOutcome, WebhookSender
from application.principal import API_KEY, Principal
from application.webhooks import attempt_batches, deliveries, endpoints
from domain.webhooks.delivery import DELIVERED, LOST, PENDING, WebhookDelivery
from entrypoints.bootstrap import bootstrap
from entrypoints.workers.webhook_dispatcher import WebhookDispatcher
from tests.fakes.receiver import Receiver
from tests.support.calls import queued_call
from tests.support.setup import FAST_HASHER

TENANT = "ten_" + "b" * 32
PRINCIPAL = Principal(kind=API_KEY, tenant_id=TENANT, user_id="usr_" + "b" * 32, verification_status="approved",
                      tier="standard", key_id="key_b")
OK = AttemptOutcome(status=200, body="ok", latency_ms=3, error=None, blocked=False, address="127.0.0.1")


@pytest.fixture
def quiet(db, settings, clock, mail):
    """No followers: this test's dispatcher is the only one."""
    built = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER, projections=False)
    yield built
    built.close()


@pytest.fixture
def hook():
    made = Receiver()
    yield made
    made.close()


def ended_call(container, clock, n: int):
    call = queued_call(tenant_id=TENANT, call_id=f"cll_{n:032x}", direction="outbound", mode="simulated",
                       to="+442071838750", from_number="+15005550006", objective="Check",
                       outcome_schema={"ok": {"type": "boolean"}}, consent_type="prior_express",
                       consent_record_id=None, voice_id=None, voice_engine="alpha_25", language="en-US",
                       metadata={}, variables={}, simulation=None, created_by="test", max_duration_seconds=600,
                       at=clock())
    call.start(clock())
    call.fail("no_answer", "nobody answered", clock())
    container.calling.commit(call)
    return call


def scheduled_calls(container, clock, count: int) -> list[WebhookDelivery]:
    made: list[WebhookDelivery] = []
    for n in range(count):
        call = ended_call(container, clock, n)
        made += deliveries.schedule(container.calling, TENANT, lambda call=call: call)
    return made


def add_endpoints(container, url: str, count: int) -> None:
    for n in range(count):
        endpoints.create(container.calling, PRINCIPAL, container.secret_box, url=f"{url}/{n}", description=None,
                         events=["call.completed"])


def test_a_burst_reaches_the_receiver_once_each_with_its_attempt_recorded_in_few_commits(quiet, clock, hook,
                                                                                      monkeypatch):
    add_endpoints(quiet, hook.url, 3)
    scheduled = scheduled_calls(quiet, clock, 30)  # 90 deliveries: more than one round's slots (8 per endpoint)
    batches: Counter[str] = Counter()
    for name in ("lease_many", "record_many"):
        original = getattr(attempt_batches, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            batches[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(attempt_batches, name, counted)
    sender = lambda: WebhookSender(allow_private=True, allow_http=True, timeout=5.0)  # noqa: E731
    dispatcher = WebhookDispatcher(quiet.calling, quiet.secret_box, sender, lambda now: [], owner="test")
    dispatcher.hint(scheduled)

    async def until_idle() -> None:
        while await dispatcher.run_due(wait=True):
            pass

    asyncio.run(until_idle())

    ids = Counter(request.headers["X-Service-Delivery-Id"] for request in hook.received)
    assert sorted(ids) == sorted(d.delivery_uuid for d in scheduled) and set(ids.values()) == {1}
    for delivery in scheduled:
        saved = quiet.calling.find(WebhookDelivery, delivery.id)
        assert saved.status == DELIVERED and saved.leased_attempt is None
        assert [(a["attempt"], a["response_status"]) for a in saved.attempts] == [(1, 200)]
    # 90 leases and 90 results, in far fewer commits than one each
    assert batches["lease_many"] < 30 and batches["record_many"] < 45, batches


def test_a_lease_batch_with_a_delivery_taken_meanwhile_leases_the_others_only(quiet, clock, hook):
    add_endpoints(quiet, hook.url, 1)
    first, second, third = scheduled_calls(quiet, clock, 3)
    stale = quiet.calling.find(WebhookDelivery, first.id)
    assert deliveries.lease(quiet.calling, quiet.secret_box, first.id, "other", clock()) is not None

    attempts = attempt_batches.lease_many(quiet.calling, quiet.secret_box,
                                          [(first.id, stale), (second.id, None), (third.id, third)], "test", clock())

    assert attempts[0] is None and [a.number for a in attempts[1:]] == [1, 1]
    taken = quiet.calling.find(WebhookDelivery, first.id)
    assert taken.leased_attempt == 1 and taken.version == 2  # Scheduled, the other's Leased: nothing of ours
    for delivery in (second, third):
        assert quiet.calling.find(WebhookDelivery, delivery.id).leased_attempt == 1


def test_a_result_batch_with_a_lease_taken_over_records_the_others_only(quiet, clock, hook):
    add_endpoints(quiet, hook.url, 1)
    scheduled = scheduled_calls(quiet, clock, 3)
    attempts = attempt_batches.lease_many(quiet.calling, quiet.secret_box, [(d.id, None) for d in scheduled],
                                          "test", clock(), timedelta(seconds=5))
    clock.advance(timedelta(seconds=6))  # the first lease ran out: another dispatcher writes it down as lost
    assert deliveries.lease(quiet.calling, quiet.secret_box, scheduled[0].id, "other", clock()) is None

    recorded = attempt_batches.record_many(quiet.calling, [(a, OK) for a in attempts], clock())

    assert recorded[0] is None and [d.status for d in recorded[1:]] == [DELIVERED, DELIVERED]
    taken = quiet.calling.find(WebhookDelivery, scheduled[0].id)
    assert taken.status == PENDING and taken.leased_attempt is None  # the next try waits for the schedule
    assert [a["error"] for a in taken.attempts] == [LOST]  # written down by the other, not our late result
    for delivery in scheduled[1:]:
        assert [a["response_status"] for a in quiet.calling.find(WebhookDelivery, delivery.id).attempts] == [200]


def test_the_scheduler_saves_a_page_of_ended_calls_in_one_commit_before_its_tracking(quiet, clock, hook,
                                                                                     monkeypatch):
    from eventsourcing.persistence import Tracking

    from entrypoints.workers.webhook_scheduler import WebhookScheduler

    add_endpoints(quiet, hook.url, 2)
    calls = [ended_call(quiet, clock, n) for n in range(3)]  # ended, nothing scheduled yet
    events = [quiet.calling.mapper.to_domain_event(e) for call in calls
              for e in quiet.calling.recorder.select_events(call.id) if e.topic.endswith("Call.Failed")]
    written: list[str] = []

    class Tracked:
        def insert_tracking(self, tracking: Tracking) -> None:
            written.append(f"tracking {tracking.notification_id}")

        @contextlib.contextmanager
        def batch(self):
            yield
            written.append("tracking committed")

    commits = []
    original = quiet.calling.commit
    monkeypatch.setattr(quiet.calling, "commit", lambda *a, **k: commits.append(len(a)) or original(*a, **k))
    told: list[WebhookDelivery] = []
    scheduler = WebhookScheduler(quiet.calling, Tracked(), scheduled=lambda fresh: (told.extend(fresh),
                                                                                   written.append("scheduled")))
    with pytest.raises(RuntimeError), scheduler.paged_tracking.batch():  # a page cut short schedules nothing
        scheduler.process_event(events[0], Tracking(quiet.calling.name, 1))
        raise RuntimeError("the database went away")
    assert told == [] and commits == []

    written.clear()
    with scheduler.paged_tracking.batch():
        for n, event in enumerate(events):
            scheduler.process_event(event, Tracking(quiet.calling.name, n + 1))
    assert commits == [6] and len(told) == 6 and {d.call_id for d in told} == {c.call_id for c in calls}
    assert written == ["tracking 1", "tracking 2", "tracking 3", "scheduled", "tracking committed"]

    told.clear()
    with scheduler.paged_tracking.batch():  # the page again (a crash before its tracking): nothing new
        for n, event in enumerate(events):
            scheduler.process_event(event, Tracking(quiet.calling.name, n + 1))
    assert told == []
