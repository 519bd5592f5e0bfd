"""Scheduling ``call.completed`` deliveries (application/webhooks/deliveries.py): one per active
endpoint, saved together, and nothing twice when the scheduler sees an event again."""

from __future__ import annotations

from application.principal import API_KEY, Principal
from application.webhooks import deliveries, endpoints
from domain.calls.call import Call
from domain.webhooks.delivery import WebhookDelivery

TENANT = "ten_" + "e" * 32
PRINCIPAL = Principal(kind=API_KEY, tenant_id=TENANT, user_id="usr_" + "e" * 32, verification_status="approved",
                      tier="standard", key_id="key_e")


def ended_call(container, clock) -> Call:
    call = Call(tenant_id=TENANT, call_id="cll_" + "1" * 32, direction="outbound", mode="simulated",
                to="+442071838750", from_number="+15005550006", objective="Check", outcome_schema={},
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

    scheduled = deliveries.schedule(container.calling, call)
    again = deliveries.schedule(container.calling, call)

    assert [d.endpoint_id for d in scheduled] == [first.endpoint_id] and again == []
    saved = container.calling.find(WebhookDelivery, scheduled[0].id)
    assert saved is not None and saved.call_id == call.call_id and '"error_code":"no_answer"' in saved.body


def test_an_endpoint_added_in_between_gets_the_event_the_others_already_have(container, clock):
    first = add_endpoint(container, "https://203.0.113.10/a")
    call = ended_call(container, clock)
    deliveries.schedule(container.calling, call)
    later = add_endpoint(container, "https://203.0.113.12/c")

    again = deliveries.schedule(container.calling, call)

    assert [d.endpoint_id for d in again] == [later.endpoint_id] != [first.endpoint_id]
