"""The client against a real ``callwright serve`` on a loopback port (scripted agent, embedded or
machine PostgreSQL): the README's walk-through in Python, paging, a create retried after its
answer was lost, typed errors, the CSV export, the async client, and every resource's routes
(the wizard with the offline generator, Web Push up to what an account without numbers can do).

Each test signs up an account of its own (approved with the operator CLI), so counts are exact.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import csv
import io
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from callwright_client import (
    AsyncClient,
    AuthenticationError,
    Client,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    ValidationError,
)
from tests.client.support import Recorder
from tests.e2e.service import ServeProcess, approved_key, offline_server
from tests.support.call_requests import ABSENT, call_body

pytestmark = pytest.mark.e2e

CLIENT_README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"
AT = "2026-12-01T10:00:00Z"  # 10:00 in London: inside call hours, whatever the hour the test runs
_accounts = itertools.count(1)


def simulated(**overrides: Any) -> dict[str, Any]:
    body = call_body(**overrides)
    body["simulation"] = {**body["simulation"], "at": AT}
    return body


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with offline_server("callwright-client-", rate_limit_tiers='{"standard": 1000000}',
                        webhook_allow_private="1", webhook_allow_http="1") as started:
        yield started


@pytest.fixture
def key(server: ServeProcess) -> str:
    """The all-permissions key of a new, approved account."""
    return approved_key(server, f"client-{next(_accounts)}@example.com")


def client_of(server: ServeProcess, key: str, transport: httpx.BaseTransport | None = None, **options: Any) -> Client:
    # An explicit transport: no proxy from the environment can divert loopback traffic.
    return Client(key, server.base_url, transport=transport or httpx.HTTPTransport(), **options)


def test_a_simulated_call_is_created_waited_for_and_read(server: ServeProcess, key: str) -> None:
    with client_of(server, key) as client:
        created = client.calls.create(**simulated(metadata={"crm_id": "A-17"}))
        assert created.status == "queued" and created.call_id.startswith("cll_")
        call = client.calls.wait(created.call_id, timeout=30, interval=0.1)
        assert call.status == "completed" and call.ended
        assert call.outcome == {"confirmed": True} and call.confidence == 1.0
        assert call.metadata == {"crm_id": "A-17"} and call.from_number == call.raw["from"]
        assert call.raw["call_id"] == call.call_id and "transcript" in call.raw
        events = list(client.calls.events(call.call_id))
        assert events[0]["type"] == "call.queued" and [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert client.calls.get(call.call_id) == call


def test_the_client_readme_walk_through_runs_as_written(server: ServeProcess, key: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Its first example, with only the environment a reader sets: the key and the server."""
    example = re.findall(r"```python\n(.*?)```", CLIENT_README.read_text(encoding="utf-8"), flags=re.S)[0]
    monkeypatch.delenv("OPENPHN_API_KEY", raising=False)
    monkeypatch.setenv("CALLWRIGHT_API_KEY", key)
    monkeypatch.setenv("CALLWRIGHT_BASE_URL", server.base_url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "*")  # loopback only, whatever proxy the environment names
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example, str(CLIENT_README), "exec"), {})
    expected = re.search(r"# (completed \{.*\})", example)
    assert expected and printed.getvalue().strip() == expected.group(1)


def test_the_list_iterator_follows_next_cursor_through_three_pages(server: ServeProcess, key: str) -> None:
    recorder = Recorder()
    with client_of(server, key, recorder) as client:
        made = [client.calls.create(**simulated()).call_id for _ in range(5)]
        listed = [call.call_id for call in client.calls.list(limit=2)]
        first = client.calls.list_page(limit=2)
    assert sorted(listed) == sorted(made) and len(listed) == 5
    pages = recorder.requests("GET", "/v1/calls")
    assert len(pages) == 4  # three for the iterator, one for list_page
    assert [request.url.params.get("limit") for request in pages[:3]] == ["2", "2", "2"]
    assert "cursor" not in pages[0].url.params and all("cursor" in request.url.params for request in pages[1:3])
    assert len(first.data) == 2 and first.total == 5 and first.next_cursor and first.offset == 0


def test_a_create_whose_answer_is_lost_is_retried_with_the_same_key_and_makes_one_call(
        server: ServeProcess, key: str) -> None:
    dropped: list[httpx.Response] = []

    def drop_first_create(request: httpx.Request, response: httpx.Response) -> None:
        if request.method == "POST" and request.url.path == "/v1/calls" and not dropped:
            dropped.append(response)
            response.read()
            response.close()
            raise httpx.RemoteProtocolError("server disconnected without sending a response", request=request)

    recorder = Recorder(meddle=drop_first_create)
    with client_of(server, key, recorder, backoff=0.01) as client:
        call = client.calls.create(**simulated())
        listed = list(client.calls.list())
    creates = recorder.requests("POST", "/v1/calls")
    assert len(creates) == 2
    keys = {request.headers["Idempotency-Key"] for request in creates}
    assert len(keys) == 1 and len(keys.pop()) == 32
    assert dropped[0].status_code == 201  # the server made the call: only its answer was lost
    replay = [response for request, response in recorder.seen if request is creates[1]][0]
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert [c.call_id for c in listed] == [call.call_id]


def test_errors_are_typed(server: ServeProcess, key: str) -> None:
    with client_of(server, key) as client:
        with pytest.raises(ValidationError) as invalid:
            client.calls.create(to="+442071838750", mode="simulated", simulation={"at": "not a time"})
        assert invalid.value.status == 422 and invalid.value.detail
        assert all({"loc", "msg", "type"} <= set(problem) for problem in invalid.value.detail)
        with pytest.raises(NotFoundError) as missing:
            client.calls.get("cll_" + "0" * 32)
        assert missing.value.status == 404 and missing.value.code and missing.value.body["error"]["code"]
        reader = client.api_keys.create(name="reader", scopes=["calls:read"])
    assert reader.secret and reader.scopes == ["calls:read"]
    with client_of(server, reader.secret) as limited:
        assert list(limited.calls.list()) == []
        with pytest.raises(PermissionDeniedError) as forbidden:
            limited.calls.create(**simulated())
    assert forbidden.value.status == 403 and forbidden.value.code == "insufficient_scope"
    with client_of(server, "sk_live_unknown") as stranger, pytest.raises(AuthenticationError):
        stranger.calls.get("cll_" + "0" * 32)


def test_export_csv_streams_the_calls_into_a_file(server: ServeProcess, key: str, tmp_path: Path) -> None:
    with client_of(server, key) as client:
        call = client.calls.wait(client.calls.create(**simulated()).call_id, timeout=30, interval=0.1)
        target = tmp_path / "calls.csv"
        written = client.calls.export_csv(target, include="outcome")
    assert written == target.stat().st_size > 0
    rows = list(csv.reader(target.open(encoding="utf-8")))
    assert rows[0][:3] == ["call_id", "created_at", "to"] and "outcome.confirmed" in rows[0]
    assert [row[0] for row in rows[1:]] == [call.call_id]


def test_the_async_client_creates_and_reads_a_call(server: ServeProcess, key: str) -> None:
    async def scenario() -> tuple[str, str, list[str]]:
        async with AsyncClient(key, server.base_url, transport=httpx.AsyncHTTPTransport()) as client:
            created = await client.calls.create(**simulated())
            call = await client.calls.wait(created.call_id, timeout=30, interval=0.1)
            read = await client.calls.get(created.call_id)
            listed = [c.call_id async for c in client.calls.list(limit=1)]
            return call.status, read.call_id, listed

    status, read_id, listed = asyncio.run(scenario())
    assert status == "completed" and listed == [read_id]


GRAPH = {"start": "ask", "nodes": [
    {"id": "ask", "type": "question", "text": "Can you make it tomorrow?", "field": "confirmed",
     "field_type": "boolean"},
    {"id": "bye", "type": "end", "text": "Thank you, goodbye."}], "edges": [{"from": "ask", "to": "bye"}]}


def test_every_resource_reaches_its_routes(server: ServeProcess, key: str) -> None:
    with client_of(server, key) as client:
        batch = client.calls.batch([{"to": "+442071838750"}, {"to": "+442071838750"}],
                                   **simulated(to=ABSENT))
        assert batch.accepted == 1 and batch.rejected == 1 and len(batch.call_ids) == 1
        try:  # a simulated call may have ended already
            assert client.calls.cancel(batch.call_ids[0]).status == "failed"
        except ConflictError as late:
            assert late.code == "call_already_ended"

        assert client.numbers.list() == []
        with pytest.raises(NotFoundError):
            client.numbers.get("00000000-0000-0000-0000-000000000000")

        endpoint = client.webhooks.create("http://127.0.0.1:9/hooks", description="tests")
        assert endpoint.secret and endpoint.secret.startswith("whsec_")
        assert [e.id for e in client.webhooks.list()] == [endpoint.id]
        assert list(client.webhooks.deliveries(endpoint.id)) == []
        assert client.webhooks.delete(endpoint.id).active is False

        issued = client.api_keys.create(name="spare")
        rotated = client.api_keys.rotate(issued.key_id)
        assert rotated.secret and rotated.old_key_id == issued.key_id
        assert client.api_keys.revoke(rotated.key_id).status == "revoked"
        assert issued.key_id in [k.key_id for k in client.api_keys.list()]

        added = client.suppressions.add("+442079460958", reason="asked not to be called")
        assert [s.e164 for s in client.suppressions.list()] == [added.e164]
        assert client.suppressions.remove(added.e164).status == "removed"
        assert list(client.suppressions.list()) == [] and len(list(client.suppressions.list(include_removed=True))) == 1

        template = client.templates.create(name="Check", objective="Confirm the appointment",
                                           outcome_schema={"confirmed": {"type": "boolean"}},
                                           consent_type="prior_express")
        assert client.templates.get(template.id).name == "Check"
        assert [t.id for t in client.templates.list()] == [template.id]
        client.templates.delete(template.id)
        with pytest.raises(NotFoundError):
            client.templates.get(template.id)

        flow = client.flows.create("Confirm", GRAPH)
        assert flow.state == "draft" and client.flows.preview(flow.id)["ok"] is True
        assert client.flows.update(flow.id, name="Confirm it").draft_version == 2
        published = client.flows.publish(flow.id)
        assert published.state == "published" and published.published_version == 1
        assert client.flows.get(flow.id).name == "Confirm it"
        assert [f.id for f in client.flows.list(state="published")] == [flow.id]

        report = client.analytics.report("volume-by-status", interval="day")
        assert isinstance(report, dict)


SUPPORTED = "Acme Dental is a family dental practice in Austin, Texas. Patients call to book checkups and cleanings."
UNSUPPORTED = "We call people about their overdue debts: a debt collection line."
P256DH = "B" + "A" * 86  # base64url of 65 bytes, the first 0x04: an uncompressed point's shape


def test_the_wizard_and_push_resources_reach_their_routes(server: ServeProcess, key: str) -> None:
    with client_of(server, key) as client:
        draft = client.wizard.generate(SUPPORTED)
        assert draft.verdict == "supported" and draft.supported and draft.reason
        assert draft.config and draft.config["timezone"] == "America/Chicago" and draft.config["objective"]
        assert draft.config["transfer_destinations"] == [] and draft.raw["config"] == draft.config
        refused = client.wizard.generate(UNSUPPORTED)
        assert (refused.verdict, refused.config, refused.supported) == ("unsupported", None, False)

        # the generated config passes the number checks; the description's verdict refuses it, before
        # anything is bought
        with pytest.raises(ValidationError) as unsupported:
            client.wizard.provision(business_name="Acme Dental", business_description=UNSUPPORTED,
                                    area_code="512", config=draft.config)
        assert [p["loc"] for p in unsupported.value.detail] == [["body", "business_description"]]
        assert unsupported.value.detail[0]["type"] == "use_case_unsupported"

        public_key = client.push.vapid_key()
        raw = base64.urlsafe_b64decode(public_key + "=" * (-len(public_key) % 4))
        assert len(raw) == 65 and raw[0] == 4 and client.push.vapid_key() == public_key
        assert list(client.push.subscriptions()) == []

        # a loopback endpoint passes this server's URL policy (its development flags); the account
        # has no number to subscribe to
        missing = "00000000-0000-0000-0000-000000000000"
        with pytest.raises(ValidationError) as no_number:
            client.push.subscribe("http://127.0.0.1:9/push/device-1", P256DH, "A" * 22, [missing],
                                  device_label="Front desk")
        assert [(p["loc"], p["type"]) for p in no_number.value.detail] == [
            (["body", "number_ids", 0], "number_not_found")]
        with pytest.raises(NotFoundError) as unknown_device:
            client.push.unsubscribe("http://127.0.0.1:9/push/device-1")
        assert unknown_device.value.code == "subscription_not_found"
        with pytest.raises(NotFoundError) as unknown_notification:
            client.push.delivered("pntf_" + "0" * 32)
        assert unknown_notification.value.code == "notification_not_found"
        assert list(client.push.subscriptions(limit=1)) == []
