"""A number as a phone line, end to end through the fake carrier (issue 14 item 2 acceptance): a
caller inside the number's hours hears the greeting and reaches the agent (and gets the post-call
SMS only when its condition holds); outside them each ``overflow_action``; a keypad route
transfers; voicemail's outcome follows ``voicemail_schema``; recording follows
``recording_enabled``. Each call sends exactly one ``call.completed`` webhook."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start, use_carrier
from tests.fakes.receiver import Receiver
from tests.fakes.twilio import FakeAccount, FakeTwilio, HangUp, Press, Say, Scenario
from tests.fakes.twilio.simulator import CallRecord

pytestmark = pytest.mark.e2e
LINE = "+14155550170"
DESK, SALES = "+14155550181", "+14155550182"
ALWAYS_OPEN = {day: [["00:00", "24:00"]] for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")}
NEVER_OPEN: dict[str, Any] = {}  # a day left out is closed
GREETING = "Thanks for calling Acme Plumbing."
SCHEMA = {"caller_name": {"type": "string"}, "reason": {"type": "string"}}
BASE = {
    "objective": "Take the caller's name and reason", "outcome_schema": SCHEMA, "greeting": GREETING,
    "persona": "Warm and brief", "timezone": "America/New_York", "hours_json": ALWAYS_OPEN, "routes": [],
    "overflow_action": "hangup", "overflow_message": None, "voicemail_mode": "overflow_only",
    "voicemail_persona": None, "voicemail_schema": {
        "message": {"type": "string"}, "caller_name": {"type": "string", "optional": True},
        "callback_number": {"type": "string", "optional": True}},
    "recording_enabled": False, "flow_id": None, "sms_enabled": False, "sms_templates": [],
    "transfer_destinations": [{"label": "Desk", "e164": DESK}, {"label": "Sales", "e164": SALES}],
}


class Line:
    def __init__(self, server: ServeProcess, fake: FakeTwilio, account: FakeAccount, headers: dict[str, str],
                 hook: Receiver) -> None:
        self.server, self.fake, self.account, self.headers, self.hook = server, fake, account, headers, hook
        self.http = httpx.Client(base_url=server.base_url, timeout=10)
        listed = self.http.get("/v1/numbers", headers=headers).json()
        self.number_id = next(n["id"] for n in listed if n["e164"] == LINE)

    def configure(self, **changes: Any) -> dict[str, Any]:
        patched = self.http.patch(f"/v1/numbers/{self.number_id}", headers=self.headers, json={**BASE, **changes})
        assert patched.status_code == 200, patched.text
        return patched.json()

    def ring(self, caller: str, *turns: Any, **scenario: Any) -> tuple[CallRecord, dict[str, Any]]:
        """A call from ``caller`` playing ``turns`` (and any other ``Scenario`` fields): what the
        carrier saw, and the settled record once its post-call texts (if any) are no longer being sent."""
        sid = self.fake.place_inbound(self.account, to=LINE, from_=caller,
                                      voice_url=f"{self.server.base_url}/webhooks/carrier/inbound",
                                      scenario=Scenario(turns=list(turns), **scenario))
        seen = self.fake.wait_finished(sid, timeout=20)
        deadline = time.monotonic() + 20
        while True:
            page = self.http.get("/v1/calls", params={"direction": "inbound"}, headers=self.headers).json()
            mine = [c for c in page["data"] if c["from"] == caller]
            record = self.http.get(f"/v1/calls/{mine[0]['call_id']}", headers=self.headers).json() if mine else {}
            if record.get("status") in ("completed", "failed") and all(s["status"] != "sending" for s in record["sms"]):
                return seen, record
            assert time.monotonic() < deadline, (record, seen.notes, self.server.output()[-3000:])
            time.sleep(0.05)

    def texted(self, record: dict[str, Any], timeout: float = 10.0) -> list[dict[str, Any]]:
        """The call's post-call texts once the reactor has sent (or failed) them: it runs after the call ends."""
        deadline = time.monotonic() + timeout
        while True:
            sms = self.http.get(f"/v1/calls/{record['call_id']}", headers=self.headers).json()["sms"]
            if sms and all(s["status"] != "sending" for s in sms):
                return list(sms)
            assert time.monotonic() < deadline, (record, self.server.output()[-2000:])
            time.sleep(0.05)

    def completed_webhooks(self, call_id: str, wait: float = 10.0) -> list[dict[str, Any]]:
        """The ``call.completed`` deliveries for the call (waiting for the first, then a moment for any second)."""
        deadline = time.monotonic() + wait
        while True:
            found = [body for body in (json.loads(r.body) for r in list(self.hook.received))
                     if body.get("data", {}).get("call_id") == call_id]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        return [body for body in (json.loads(r.body) for r in list(self.hook.received))
                if body.get("data", {}).get("call_id") == call_id and body.get("type") == "call.completed"]


@pytest.fixture(scope="module")
def line() -> Iterator[Line]:
    workdir = Path(tempfile.mkdtemp(prefix="callwright-e2e-lines-"))
    fake = FakeTwilio().start()
    hook = Receiver()
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}', webhook_allow_private="1", webhook_allow_http="1",
                   reconcile_after_seconds="2")  # the number has no status callback: the carrier is asked
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    try:
        account = fake.add_account(numbers=[(LINE, "Acme line")])
        headers = bearer(approved_key(server, "lines@example.com"))
        use_carrier(server, headers, account, LINE)
        with server.client() as http:
            assert http.post("/v1/numbers/byo", headers=headers, json={"e164": LINE}).status_code == 201
            assert http.post("/v1/webhooks", headers=headers, json={"url": hook.url}).status_code == 201
        yield Line(server, fake, account, headers, hook)
    finally:
        fake.close()
        hook.close()
        server.cleanup()
        server.stop_postgres()
        shutil.rmtree(workdir, ignore_errors=True)


def said_by_twiml(seen: CallRecord) -> list[str]:
    return [text for speaker, text in seen.transcript if speaker == "twiml-say"]


def test_inside_hours_the_greeting_then_the_agent_then_the_sms_only_when_its_condition_holds(line: Line) -> None:
    line.configure(sms_enabled=True, sms_templates=[
        {"name": "Boiler", "body": "Thanks {{ outcome.caller_name }}, a plumber will call {{ call.from }}.",
         "condition": {"field": "reason", "op": "eq", "value": "A broken boiler"}}])
    caller = "+442071830001"
    seen, record = line.ring(caller, Say("Ada Lovelace"), Say("A broken boiler"))
    assert said_by_twiml(seen)[:1] == [GREETING] and seen.setup is not None  # spoken before the socket opened
    assert (record["status"], record["outcome"]) == ("completed", {"caller_name": "Ada Lovelace",
                                                                   "reason": "A broken boiler"}), record
    assert record["routing"] == {"action": "agent", "reason": "open", "destination": None}
    assert [(s["to"], s["body"], s["status"]) for s in line.texted(record)] == [
        (caller, f"Thanks Ada Lovelace, a plumber will call {caller}.", "sent")]
    assert record["recording_url"] is None and seen.recording_sid is None  # recording_enabled is off
    assert len(line.completed_webhooks(record["call_id"])) == 1

    other = "+442071830002"
    _, unmatched = line.ring(other, Say("Grace Hopper"), Say("A leaking tap"))
    # The reactor takes calls in the order they ended: once a later call is texted, this one was passed over.
    _, later = line.ring("+442071830003", Say("Alan Turing"), Say("A broken boiler"))
    assert line.texted(later) and unmatched["status"] == "completed"
    assert line.http.get(f"/v1/calls/{unmatched['call_id']}", headers=line.headers).json()["sms"] == []
    assert not [m for m in line.fake.messages.values() if m["to"] == other]
    assert len(line.completed_webhooks(unmatched["call_id"])) == 1


def test_an_agent_call_is_recorded_when_the_number_records(line: Line) -> None:
    line.configure(recording_enabled=True)
    seen, record = line.ring("+442071830003", Say("Alan Turing"), Say("A question"))
    assert record["status"] == "completed", record
    deadline = time.monotonic() + 10
    while record["recording_url"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
        record = line.http.get(f"/v1/calls/{record['call_id']}", headers=line.headers).json()
    assert seen.recording_url and record["recording_url"] == seen.recording_url + ".mp3"


@pytest.mark.parametrize("action", ["voicemail", "transfer", "message", "hangup"])
def test_outside_hours_each_overflow_action(line: Line, action: str) -> None:
    line.configure(hours_json=NEVER_OPEN, overflow_action=action, overflow_message="We are closed until nine.")
    caller = f"+44207183010{['voicemail', 'transfer', 'message', 'hangup'].index(action)}"
    turns = [Say("Ada here, please call me back"), HangUp()] if action == "voicemail" else [Say("Hello?")]
    seen, record = line.ring(caller, *turns)
    assert GREETING not in said_by_twiml(seen) and seen.setup is None  # no greeting, no agent
    assert record["routing"]["reason"] == "closed" and record["routing"]["action"] == action, record
    if action == "voicemail":
        assert said_by_twiml(seen)[0] == "We are closed until nine."
        assert (record["status"], record["outcome"]) == ("completed", {
            "message": "Ada here, please call me back", "caller_name": None, "callback_number": None}), record
        assert record["recording_url"] == seen.voicemails[0]["url"] + ".mp3"
    elif action == "transfer":
        assert seen.dialled == [DESK]
        assert record["outcome"] == {"route": "transfer", "reason": "closed", "destination": "Desk",
                                     "transferred": True}, record
    elif action == "message":
        assert said_by_twiml(seen) == ["We are closed until nine."] and seen.dialled == []
        assert record["outcome"] == {"route": "message", "reason": "closed", "destination": None,
                                     "transferred": None}, record
    else:
        assert said_by_twiml(seen) == [] and seen.dialled == []
        assert record["outcome"]["route"] == "hangup", record
    assert record["status"] == "completed"
    assert len(line.completed_webhooks(record["call_id"])) == 1


def test_a_keypad_route_transfers_to_its_destination(line: Line) -> None:
    line.configure(greeting="Press 2 for sales.", routes=[
        {"match": {"caller_prefix": "+1"}, "action": "voicemail"},
        {"match": {"keypad": "2"}, "action": "transfer", "destination": "Sales"}])
    seen, record = line.ring("+442071830201", Press("2"))
    assert said_by_twiml(seen) == ["Press 2 for sales."] and seen.dialled == [SALES], seen.notes
    assert record["outcome"] == {"route": "transfer", "reason": "keypad", "destination": "Sales",
                                 "transferred": True}, record
    assert len(line.completed_webhooks(record["call_id"])) == 1

    seen, record = line.ring("+442071830202", Press("9"), Say("Ada Lovelace"), Say("A question"))
    assert seen.dialled == [] and record["routing"] == {"action": "agent", "reason": "open", "destination": None}
    assert record["outcome"] == {"caller_name": "Ada Lovelace", "reason": "A question"}, record


def test_voicemail_always_records_a_message_whose_outcome_follows_the_voicemail_schema(line: Line) -> None:
    line.configure(voicemail_mode="always", voicemail_persona="Calm", voicemail_schema={
        "summary": {"type": "string"}, "urgent": {"type": "boolean", "optional": True}})
    seen, record = line.ring("+442071830301", Say("The boiler is leaking again"), Say("on the second floor"),
                             HangUp())
    assert said_by_twiml(seen)[0] == GREETING and seen.setup is None
    assert record["routing"] == {"action": "voicemail", "reason": "voicemail_always", "destination": None}
    assert (record["status"], record["outcome"]) == ("completed", {
        "summary": "The boiler is leaking again on the second floor", "urgent": None}), record
    assert record["outcome_schema"]["summary"]["type"] == "string"
    assert record["transcript"] == "callee: The boiler is leaking again on the second floor"
    assert len(line.completed_webhooks(record["call_id"])) == 1


def test_a_caller_who_leaves_no_message_fails_the_voicemail_as_hung_up(line: Line) -> None:
    line.configure(voicemail_mode="always")
    _, record = line.ring("+442071830302", HangUp())
    assert (record["status"], record["error_code"]) == ("failed", "hung_up"), record
    assert len(line.completed_webhooks(record["call_id"])) == 1


FLOW = {
    "start": "greet",
    "nodes": [{"id": "greet", "type": "message", "text": "Welcome to Acme Plumbing, version one."},
              {"id": "ask", "type": "question", "text": "Is your boiler leaking?", "field": "leaking",
               "field_type": "boolean"},
              {"id": "route", "type": "branch"},
              {"id": "desk", "type": "transfer", "destination": "Sales"},
              {"id": "bye", "type": "end", "text": "We will call you back today."}],
    "edges": [{"from": "greet", "to": "ask"}, {"from": "ask", "to": "route"},
              {"from": "route", "to": "desk", "when": {"field": "leaking", "op": "eq", "value": True}},
              {"from": "route", "to": "bye"}],
}


def test_a_bound_flow_runs_its_published_version_and_its_branches(line: Line) -> None:
    """Issue 15 item 4 through the fake carrier: publish v1, bind, edit the draft: calls run v1;
    publish v2: calls run v2. A branch takes the path its answer selects (a transfer step dials the
    destination it names)."""
    flow = line.http.post("/v1/flows", headers=line.headers, json={"name": "Boilers", "graph_json": FLOW}).json()
    assert line.http.post(f"/v1/flows/{flow['id']}/publish", headers=line.headers).status_code == 200
    line.configure(greeting=None, flow_id=flow["id"])
    edited = {**FLOW, "nodes": [{**FLOW["nodes"][0], "text": "Welcome to Acme Plumbing, version two."},
                                *FLOW["nodes"][1:]]}
    assert line.http.patch(f"/v1/flows/{flow['id']}", headers=line.headers, json={"graph_json": edited}).status_code == 200

    _, first = line.ring("+442071830401", Say("No, it is not."))
    assert (first["status"], first["flow_id"], first["flow_version"]) == ("completed", flow["id"], 1), first
    assert first["outcome"] == {"leaking": False} and "version one" in first["transcript"]
    assert "agent: We will call you back today." in first["transcript"]

    assert line.http.post(f"/v1/flows/{flow['id']}/publish", headers=line.headers).status_code == 200
    seen, second = line.ring("+442071830402", Say("Yes, it is leaking."))
    assert (second["flow_version"], "version two" in second["transcript"]) == (2, True), second
    assert second["outcome"] == {"leaking": True} and seen.dialled == [SALES], seen.notes
    assert len(line.completed_webhooks(second["call_id"])) == 1


def test_a_flows_keypad_step_collects_the_callers_digits_into_the_outcome_masked(line: Line) -> None:
    graph = {
        "start": "ask",
        "nodes": [{"id": "ask", "type": "question", "text": "Is your boiler leaking?", "field": "leaking",
                   "field_type": "boolean"},
                  {"id": "pin", "type": "question", "text": "Please key in your 4 digit customer code.",
                   "field": "code", "field_type": "string", "keypad": {"ending_mode": "fixed_length", "length": 4}},
                  {"id": "bye", "type": "end", "text": "Thank you, goodbye."}],
        "edges": [{"from": "ask", "to": "pin"}, {"from": "pin", "to": "bye"}],
    }
    flow = line.http.post("/v1/flows", headers=line.headers, json={"name": "Codes", "graph_json": graph}).json()
    assert line.http.post(f"/v1/flows/{flow['id']}/publish", headers=line.headers).status_code == 200
    line.configure(greeting=None, flow_id=flow["id"])

    seen, record = line.ring("+442071830501", Say("No."), Press("4821"))

    assert (record["status"], record["outcome"]) == ("completed", {"leaking": False, "code": "4821"}), (
        record, seen.notes)
    assert "callee: [keypad: ****]" in record["transcript"] and "4821" not in record["transcript"]
    assert "agent: Thank you, goodbye." in record["transcript"]


def test_a_keypad_step_that_ends_on_silence_takes_the_digits_keyed_before_it(line: Line) -> None:
    graph = {
        "start": "pin",
        "nodes": [{"id": "pin", "type": "question", "text": "Key in your extension, then wait.", "field": "extension",
                   "field_type": "integer", "keypad": {"ending_mode": "timeout", "timeout_s": 1}},
                  {"id": "bye", "type": "end", "text": "Connecting you, goodbye."}],
        "edges": [{"from": "pin", "to": "bye"}],
    }
    flow = line.http.post("/v1/flows", headers=line.headers, json={"name": "Extensions", "graph_json": graph}).json()
    assert line.http.post(f"/v1/flows/{flow['id']}/publish", headers=line.headers).status_code == 200
    line.configure(greeting=None, flow_id=flow["id"])

    seen, record = line.ring("+442071830601", Press("77"), linger=5.0)

    assert (record["status"], record["outcome"]) == ("completed", {"extension": 77}), (record, seen.notes)
    assert "callee: [keypad: **]" in record["transcript"] and "agent: Connecting you, goodbye." in record["transcript"]


def test_a_flows_transfer_nobody_answers_goes_on_at_the_step_its_edge_names(line: Line) -> None:
    """SPEC.md Flow through the fake carrier: a transfer step's one outgoing edge is taken when no
    destination answered. Sales does not answer; the agent's socket opens again and the flow goes on
    at the question that takes a message, whose answer reaches the outcome."""
    graph = {
        "start": "ask",
        "nodes": [{"id": "ask", "type": "question", "text": "Is your boiler leaking?", "field": "leaking",
                   "field_type": "boolean"},
                  {"id": "desk", "type": "transfer", "destination": "Sales"},
                  {"id": "note", "type": "question", "text": "Nobody could pick up. What message should we pass on?",
                   "field": "message", "field_type": "string"},
                  {"id": "bye", "type": "end", "text": "We will pass it on, goodbye."}],
        "edges": [{"from": "ask", "to": "desk"}, {"from": "desk", "to": "note"}, {"from": "note", "to": "bye"}],
    }
    flow = line.http.post("/v1/flows", headers=line.headers, json={"name": "Messages", "graph_json": graph}).json()
    assert line.http.post(f"/v1/flows/{flow['id']}/publish", headers=line.headers).status_code == 200
    line.configure(greeting=None, flow_id=flow["id"])

    seen, record = line.ring("+442071830701", Say("Yes, it is leaking."), Say("Please call me back today."),
                             transfer_results={SALES: "no-answer"})

    assert seen.dialled == [SALES] and seen.setup is not None, seen.notes
    assert (record["status"], record["outcome"]) == ("completed", {
        "leaking": True, "message": "Please call me back today."}), (record, seen.notes)
    transcript = record["transcript"]
    assert transcript.index("transfer you") < transcript.index("Nobody could pick up.") < transcript.index(
        "callee: Please call me back today.") < transcript.index("agent: We will pass it on, goodbye.")
    assert "Sorry, nobody could take the call" not in said_by_twiml(seen)
    assert len(line.completed_webhooks(record["call_id"])) == 1
