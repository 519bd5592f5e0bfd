"""Scheduling ``call.completed`` deliveries (application/webhooks/deliveries.py): one per active
endpoint, saved together, and nothing twice when the scheduler sees an event again."""

from __future__ import annotations

from application.principal import API_KEY, Principal
from application.webhooks import deliveries, endpoints
from domain.calls.call import Call
from domain.webhooks.delivery import WebhookDelivery
from tests.support.calls import queued_call

TENANT = "ten_" + "e" * 32
PRINCIPAL = Principal(kind=API_KEY, tenant_id=TENANT, user_id="usr_" + "e" * 32, verification_status="approved",
                      tier="standard", key_id="key_e")


def ended_call(container, clock) -> Call:
    call = queued_call(tenant_id=TENANT, call_id="cll_" + "1" * 32, direction="outbound", mode="simulated",
                       to="+442071838750", from_number="+15005550006", objective="Check",
                       outcome_schema={"ok": {"type": "boolean"}},
                       consent_type="prior_express", consent_record_id=None, voice_id=None, voice_engine="alpha_25",
                       language="en-US", metadata={"k": "v"}, variables={}, simulation=None, created_by="test",
                       max_duration_seconds=600, at=clock())
    call.start(clock())
    call.fail("no_answer", "nobody answered", clock())
    container.calling.commit(call)
    return call


def add_endpoint(container, url: str):
    endpoint, _secret = endpoints.create(container.calling, PRINCIPAL, container.secret_box, url=url,
                                         description=None, events=["call.completed"])
    return endpoint


def test_each_active_endpoint_gets_one_delivery_and_a_second_look_adds_none(container, clock):
    first = add_endpoint(container, "https://203.0.113.10/a")
    second = add_endpoint(container, "https://203.0.113.11/b")
    endpoints.delete(container.calling, PRINCIPAL, second.endpoint_id)
    call = ended_call(container, clock)

    scheduled = deliveries.schedule(container.calling, call.tenant_id, lambda: call)
    again = deliveries.schedule(container.calling, call.tenant_id, lambda: call)

    assert [d.endpoint_id for d in scheduled] == [first.endpoint_id] and again == []
    saved = container.calling.find(WebhookDelivery, scheduled[0].id)
    assert saved is not None and saved.call_id == call.call_id and '"error_code":"no_answer"' in saved.body


def test_an_endpoint_added_in_between_gets_the_event_the_others_already_have(container, clock):
    first = add_endpoint(container, "https://203.0.113.10/a")
    call = ended_call(container, clock)
    deliveries.schedule(container.calling, call.tenant_id, lambda: call)
    later = add_endpoint(container, "https://203.0.113.12/c")

    again = deliveries.schedule(container.calling, call.tenant_id, lambda: call)

    assert [d.endpoint_id for d in again] == [later.endpoint_id] != [first.endpoint_id]


def test_a_tenant_without_endpoints_gets_nothing_and_its_call_is_not_loaded(container, clock):
    call = ended_call(container, clock)

    def load() -> Call:
        raise AssertionError("the call was loaded for a tenant with no endpoint")

    assert deliveries.schedule(container.calling, call.tenant_id, load) == []


def test_the_scheduler_finds_the_tenant_from_the_first_event_and_schedules(container, clock):
    from eventsourcing.persistence import Tracking

    from entrypoints.workers.webhook_scheduler import WebhookScheduler

    first = add_endpoint(container, "https://203.0.113.10/a")
    call = ended_call(container, clock)
    tracked: list[Tracking] = []
    told: list[WebhookDelivery] = []
    scheduler = WebhookScheduler(container.calling, type("T", (), {"insert_tracking": tracked.append})(),
                                 scheduled=told.extend)
    failed = [e for e in container.calling.recorder.select_events(call.id) if e.topic.endswith("Call.Failed")]
    event = container.calling.mapper.to_domain_event(failed[0])

    scheduler.process_event(event, Tracking(container.calling.name, 7))

    assert [d.endpoint_id for d in told] == [first.endpoint_id] and [t.notification_id for t in tracked] == [7]
