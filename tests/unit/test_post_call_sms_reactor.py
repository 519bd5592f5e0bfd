"""The post-call SMS reactor reads a call that ended only when its tenant has turned SMS on for a
number (from the numbers' events, those before the reactor started included): the calls of every
other tenant, simulated ones above all, pass without a read."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

from eventsourcing.persistence import Tracking

from domain.numbers.number import Number
from entrypoints.bootstrap import bootstrap_memory
from entrypoints.settings import Settings
from entrypoints.workers.post_call_sms import PostCallSms
from tests.support.calls import queued_call

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def ended(tenant_id: str):
    call = queued_call(tenant_id=tenant_id, mode="live", simulation=None)
    call.request_dial(amd=False, now=NOW)
    call.fail("no_answer", "nobody answered", NOW)
    return call.collect_events()[-1]


def test_only_tenants_that_turned_sms_on_have_their_calls_read(tmp_path):
    container = bootstrap_memory(Settings(data_dir=tmp_path / "var", secret_key="test-secret-key-0123456789abcdef"))
    calling = container.calling
    texting = Number.register(tenant_id="ten_texting", e164="+14155550100", by="k", at=NOW,
                              fields={"sms_enabled": True, "sms_templates": [{"name": "Hi", "body": "Hi"}]})
    quiet = Number.register(tenant_id="ten_quiet", e164="+14155550101", fields={}, by="k", at=NOW)
    calling.commit(texting, quiet)
    read: list[object] = []
    tracked: list[Tracking] = []
    reactor = PostCallSms(calling, SimpleNamespace(insert_tracking=tracked.append))
    calling.peek = lambda cls, aggregate_id: read.append(aggregate_id)  # type: ignore[method-assign]
    try:
        for n, tenant in enumerate(("ten_quiet", "ten_nobody", "ten_texting")):
            event = ended(tenant)
            reactor.process_event(event, Tracking(calling.name, n + 1))
        assert len(read) == 1 and len(tracked) == 3

        later = Number.register(tenant_id="ten_later", e164="+14155550102", fields={}, by="k", at=NOW)
        later.update({"sms_enabled": True}, by="k", at=NOW)
        for m, event in enumerate(later.collect_events()):
            reactor.process_event(event, Tracking(calling.name, 10 + m))
        reactor.process_event(ended("ten_later"), Tracking(calling.name, 20))
        assert len(read) == 2
    finally:
        reactor.close()
        container.close()
