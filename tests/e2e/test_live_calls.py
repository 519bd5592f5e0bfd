"""Live calls end to end through the fake carrier (issue 5 acceptance): the real server process,
the twilio SDK dialing the fake's REST API, and the fake's call simulator sending signed callbacks,
fetching TwiML and talking over the relay or the media stream as Twilio would."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from tests.e2e.service import ServeProcess, approved_key, base_env, bearer, free_port, start, use_carrier
from tests.fakes.twilio import FakeAccount, FakeTwilio, Say, Scenario

pytestmark = pytest.mark.e2e
CALLER = "+14155550100"
MANAGED_SID, MANAGED_TOKEN = "AC" + "6b" * 16, "managed-" + "8" * 24
DESK_A, DESK_B = "+14155550111", "+14155550122"
SCHEMA = {"confirmed": {"type": "boolean"}, "slot": {"type": "enum", "values": ["morning", "afternoon"]}}
ANSWERS = [Say("Yes, it is confirmed."), Say("The afternoon, please.")]


class Live:
    def __init__(self, server: ServeProcess, fake: FakeTwilio, account: FakeAccount, headers: dict[str, str]) -> None:
        self.server, self.fake, self.account, self.headers = server, fake, account, headers
        self.http = httpx.Client(base_url=server.base_url, timeout=10)

    def call(self, to: str, **body: Any) -> str:
        payload = {"to": to, "objective": "Confirm the appointment", "outcome_schema": SCHEMA,
                   "consent_type": "emergency", "mode": "live", "voice_engine": "alpha_25", **body}
        created = self.http.post("/v1/calls", json=payload, headers=self.headers)
        assert created.status_code == 201, created.text
        return created.json()["call_id"]

    def ended(self, call_id: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            record = self.http.get(f"/v1/calls/{call_id}", headers=self.headers).json()
            if record["status"] in ("completed", "failed"):
                return record
            assert time.monotonic() < deadline, (record, self.server.output()[-3000:])
            time.sleep(0.05)

    def number_id(self, e164: str) -> str:
        """The number's id, registered (bring your own) when no earlier test did."""
        listed = self.http.get("/v1/numbers", headers=self.headers).json()
        known = next((n["id"] for n in listed if n["e164"] == e164), None)
        if known is not None:
            return known
        registered = self.http.post("/v1/numbers/byo", headers=self.headers, json={"e164": e164})
        assert registered.status_code == 201, registered.text
        return registered.json()["id"]

    def finished(self, to: str, index: int = 0):  # type: ignore[no-untyped-def]
        record = self.fake.wait_for_call(to, timeout=10, index=index)
        return self.fake.wait_finished(record.sid, timeout=20)


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    workdir = Path(tempfile.mkdtemp(prefix="callwright-e2e-live-"))
    fake = FakeTwilio().start()
    port = free_port()
    env = base_env(host="127.0.0.1", port=str(port), data_dir=str(workdir / "var"),
                   public_base_url=f"http://127.0.0.1:{port}", twilio_api_base_url=fake.base_url,
                   rate_limit_tiers='{"standard": 1000000}', voice_profiles='{"alpha_31": {"transport": "stream"}}',
                   managed_account_sid=MANAGED_SID, managed_auth_token=MANAGED_TOKEN)
    env.pop("ANTHROPIC_API_KEY", None)
    server = start(env, port, workdir, 0)
    try:
        account = fake.add_account(numbers=[(CALLER, "Front desk")])
        fake.add_account(sid=MANAGED_SID, auth_token=MANAGED_TOKEN, friendly_name="callwright managed")
        headers = bearer(approved_key(server, "live@example.com"))
        use_carrier(server, headers, account, CALLER)
        yield Live(server, fake, account, headers)
    finally:
        fake.close()
        server.cleanup()
        server.stop_postgres()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_human_answers_and_the_agent_reaches_a_typed_outcome_over_the_relay(live: Live) -> None:
    to = "+442071838701"
    live.fake.script(to, Scenario(turns=ANSWERS))
    call_id = live.call(to)
    record = live.ended(call_id)
    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": True, "slot": "afternoon"}), record
    assert record["direction"] == "outbound" and "callee: The afternoon, please." in record["transcript"]
    seen = live.finished(to)
    assert seen.setup["customParameters"]["token"] and seen.media_frames == 0
    assert seen.statuses()[-1] == "completed"
    deadline = time.monotonic() + 10
    while record["recording_url"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
        record = live.http.get(f"/v1/calls/{call_id}", headers=live.headers).json()
    assert record["recording_url"] == seen.recording_url + ".mp3"


def test_the_same_over_the_media_stream_with_the_scripted_speech_engine(live: Live) -> None:
    to = "+442071838702"
    live.fake.script(to, Scenario(turns=ANSWERS))
    record = live.ended(live.call(to, voice_engine="alpha_31"))
    assert (record["status"], record["outcome"]) == ("completed", {"confirmed": True, "slot": "afternoon"}), record
    seen = live.finished(to)
    assert seen.media_frames > 0 and any("confirmed" in said for said in seen.agent_said)


@pytest.mark.parametrize("answered_by,code", [
    ("machine_start", "machine_detected"), ("machine_end_beep", "machine_detected"),
    ("machine_end_silence", "machine_detected"), ("machine_end_other", "machine_detected"), ("fax", "fax_detected"),
])
@pytest.mark.parametrize("engine", ["alpha_25", "alpha_31"])
def test_every_machine_answer_abandons_the_call_with_no_audio(live: Live, answered_by: str, code: str,
                                                             engine: str) -> None:
    values = ["machine_start", "machine_end_beep", "machine_end_silence", "machine_end_other", "fax"]
    to = f"+4420718387{60 + 2 * values.index(answered_by) + (engine == 'alpha_31')}"
    live.fake.script(to, Scenario(answered_by=answered_by, amd_delay=0.3, turns=ANSWERS))
    record = live.ended(live.call(to, voice_engine=engine))
    assert (record["status"], record["error_code"], record["transcript"]) == ("failed", code, ""), record
    seen = live.finished(to)
    assert seen.media_frames == 0 and not [m for m in seen.received if m.get("type") == "text"], seen.received


def test_an_unknown_answer_continues_as_human(live: Live) -> None:
    to = "+442071838730"
    live.fake.script(to, Scenario(answered_by="unknown", turns=ANSWERS))
    record = live.ended(live.call(to))
    assert (record["status"], record["outcome"]["confirmed"]) == ("completed", True), record


@pytest.mark.parametrize("result,code", [("busy", "busy"), ("no-answer", "no_answer"), ("failed", "carrier_failed")])
def test_busy_no_answer_and_carrier_failure_fail_with_distinct_codes(live: Live, result: str, code: str) -> None:
    to = f"+44207183874{['busy', 'no-answer', 'failed'].index(result)}"
    live.fake.script(to, Scenario(result=result))
    record = live.ended(live.call(to))
    assert (record["status"], record["error_code"]) == ("failed", code), record
    assert live.finished(to).callbacks_of("twiml") == []


def test_transfer_goes_to_the_second_destination_when_the_first_fails(live: Live) -> None:
    registered = live.http.post("/v1/numbers/byo", headers=live.headers, json={
        "e164": CALLER, "transfer_destinations": [{"label": "Desk A", "e164": DESK_A},
                                                   {"label": "Desk B", "e164": DESK_B}],
        "transfer_max_attempts": 3})
    assert registered.status_code == 201, registered.text
    to = "+442071838750"
    live.fake.script(to, Scenario(turns=[Say("Can you transfer me to a person?")],
                                  transfer_results={DESK_A: "no-answer", DESK_B: "completed"}))
    optional = {name: {**spec, "optional": True} for name, spec in SCHEMA.items()}  # the caller left early
    record = live.ended(live.call(to, outcome_schema=optional))
    seen = live.finished(to)
    assert seen.dialled == [DESK_A, DESK_B], seen.notes
    assert record["status"] == "completed" and "transfer you" in record["transcript"], record
    assert [c.params.get("DialCallStatus") for c in seen.callbacks_of("dial-action")][:2] == ["no-answer", "completed"]
    # SPEC.md Carrier callbacks, the transfer callback's ``brief``: the person who answers hears it first.
    assert seen.whispers == [(DESK_B, "The caller asked: Can you transfer me to a person?")], seen.notes


def test_an_inbound_call_to_a_configured_number_runs_its_objective(live: Live) -> None:
    patched = live.http.patch(f"/v1/numbers/{live.number_id(CALLER)}", headers=live.headers, json={
        "objective": "Take the caller's name and reason", "outcome_schema": {
            "caller_name": {"type": "string"}, "reason": {"type": "string"}}})
    assert patched.status_code == 200, patched.text
    sid = live.fake.place_inbound(live.account, to=CALLER, from_="+442071838799",
                                  voice_url=f"{live.server.base_url}/webhooks/carrier/inbound",
                                  scenario=Scenario(turns=[Say("Ada Lovelace"), Say("A broken boiler")]))
    live.fake.wait_finished(sid, timeout=20)
    deadline = time.monotonic() + 20
    while True:
        page = live.http.get("/v1/calls", params={"direction": "inbound"}, headers=live.headers).json()
        done = [c for c in page["data"] if c["status"] in ("completed", "failed")]
        if done or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert done, page
    record = live.http.get(f"/v1/calls/{done[0]['call_id']}", headers=live.headers).json()
    assert (record["direction"], record["status"], record["from"]) == ("inbound", "completed", "+442071838799"), record
    assert record["outcome"] == {"caller_name": "Ada Lovelace", "reason": "A broken boiler"}


def test_an_inbound_call_ends_with_the_numbers_post_call_sms_when_its_condition_holds(live: Live) -> None:
    """Issue 14 item 3 end to end: the number's templates are checked against its schema, the
    call runs through the fake carrier, and the reactor texts the caller once per template whose
    condition holds on the outcome."""
    patched = live.http.patch(f"/v1/numbers/{live.number_id(CALLER)}", headers=live.headers, json={
        "objective": "Take the caller's name and reason",
        "outcome_schema": {"caller_name": {"type": "string"}, "reason": {"type": "string"}},
        "sms_enabled": True,
        "sms_templates": [
            {"name": "Thanks", "body": "Thanks {{ outcome.caller_name }}, we noted: {{ outcome.reason }}.",
             "condition": {"field": "caller_name", "op": "present"}},
            {"name": "Boilers", "body": "A plumber will call {{ call.from }}.",
             "condition": {"field": "reason", "op": "eq", "value": "A leaking tap"}}]})
    assert patched.status_code == 200, patched.text
    caller = "+442071838777"
    sid = live.fake.place_inbound(live.account, to=CALLER, from_=caller,
                                  voice_url=f"{live.server.base_url}/webhooks/carrier/inbound",
                                  scenario=Scenario(turns=[Say("Grace Hopper"), Say("A broken boiler")]))
    live.fake.wait_finished(sid, timeout=20)
    deadline = time.monotonic() + 20
    while True:
        page = live.http.get("/v1/calls", params={"direction": "inbound"}, headers=live.headers).json()
        mine = [c for c in page["data"] if c["from"] == caller]
        record = live.http.get(f"/v1/calls/{mine[0]['call_id']}", headers=live.headers).json() if mine else {}
        if record.get("sms") and all(s["status"] != "sending" for s in record["sms"]):
            break
        assert time.monotonic() < deadline, (record, live.server.output()[-3000:])
        time.sleep(0.1)
    assert record["outcome"] == {"caller_name": "Grace Hopper", "reason": "A broken boiler"}
    assert [(s["to"], s["body"], s["status"]) for s in record["sms"]] == [
        (caller, "Thanks Grace Hopper, we noted: A broken boiler.", "sent")]
    texts = [m for m in live.fake.messages.values() if m["to"] == caller]
    assert [(m["from"], m["body"]) for m in texts] == [(CALLER, "Thanks Grace Hopper, we noted: A broken boiler.")]


def test_an_inbound_call_to_a_managed_number_runs_on_the_services_own_account(live: Live) -> None:
    """A number bought on the managed sub-account: the carrier signs its callbacks with that
    account's token, and the call runs, settles and texts like any other (issue 14 items 3, 6)."""
    bought = live.http.post("/v1/numbers", headers=live.headers, json={"area_code": "628", "use_case": "receptionist"})
    assert bought.status_code == 201, bought.text
    number = bought.json()
    patched = live.http.patch(f"/v1/numbers/{number['id']}", headers=live.headers, json={
        "outcome_schema": {"caller_name": {"type": "string"}, "reason": {"type": "string"}},
        "sms_enabled": True, "sms_templates": [{"name": "Thanks", "body": "Thanks {{ outcome.caller_name }}."}]})
    assert patched.status_code == 200, patched.text
    caller = "+442071838766"
    sid = live.fake.place_inbound(MANAGED_SID, to=number["e164"], from_=caller,
                                  voice_url=f"{live.server.base_url}/webhooks/carrier/inbound",
                                  scenario=Scenario(turns=[Say("Alan Turing"), Say("A question")]))
    live.fake.wait_finished(sid, timeout=20)
    deadline = time.monotonic() + 20
    while True:
        page = live.http.get("/v1/calls", params={"direction": "inbound"}, headers=live.headers).json()
        mine = [c for c in page["data"] if c["from"] == caller]
        record = live.http.get(f"/v1/calls/{mine[0]['call_id']}", headers=live.headers).json() if mine else {}
        if record.get("sms") and all(s["status"] != "sending" for s in record["sms"]):
            break
        assert time.monotonic() < deadline, (record, live.server.output()[-3000:])
        time.sleep(0.1)
    assert (record["status"], record["outcome"]) == ("completed", {"caller_name": "Alan Turing", "reason": "A question"})
    texts = [m for m in live.fake.messages.values() if m["to"] == caller]
    assert [(m["account_sid"], m["from"], m["body"]) for m in texts] == [
        (MANAGED_SID, number["e164"], "Thanks Alan Turing.")]



@pytest.mark.parametrize("engine,default", [("alpha_31", "alpha_25"), ("alpha_25", "alpha_31")])
def test_an_inbound_call_speaks_with_its_numbers_voice_engine(live: Live, engine: str, default: str) -> None:
    """SPEC.md Number: ``voice_engine`` (settable through PATCH) is the engine of the number's calls,
    over the tenant's default: alpha_31 streams audio here, alpha_25 speaks over the relay."""
    number_id = live.number_id(CALLER)
    tenant = live.http.patch("/v1/tenants/me", headers=live.headers, json={"voice_engine_default": default})
    assert tenant.status_code == 200, tenant.text
    patched = live.http.patch(f"/v1/numbers/{number_id}", headers=live.headers, json={
        "voice_engine": engine, "objective": "Take the caller's name and reason",
        "outcome_schema": {"caller_name": {"type": "string"}, "reason": {"type": "string"}}})
    assert patched.status_code == 200 and patched.json()["voice_engine"] == engine, patched.text
    try:
        caller = f"+44207183878{engine == 'alpha_31'}"
        sid = live.fake.place_inbound(live.account, to=CALLER, from_=caller,
                                      voice_url=f"{live.server.base_url}/webhooks/carrier/inbound",
                                      scenario=Scenario(turns=[Say("Ada Lovelace"), Say("A broken boiler")]))
        seen = live.fake.wait_finished(sid, timeout=20)
        deadline = time.monotonic() + 20
        while True:
            page = live.http.get("/v1/calls", params={"direction": "inbound"}, headers=live.headers).json()
            mine = [c for c in page["data"] if c["from"] == caller and c["status"] in ("completed", "failed")]
            if mine:
                break
            assert time.monotonic() < deadline, (page, live.server.output()[-3000:])
            time.sleep(0.1)
        record = live.http.get(f"/v1/calls/{mine[0]['call_id']}", headers=live.headers).json()
        assert (record["status"], record["voice_engine"]) == ("completed", engine), record
        assert record["outcome"] == {"caller_name": "Ada Lovelace", "reason": "A broken boiler"}
        socket = ElementTree.fromstring(seen.twiml[0]).find("Connect")
        assert socket is not None and socket[0].tag == ("Stream" if engine == "alpha_31" else "ConversationRelay")
        assert (seen.media_frames > 0) == (engine == "alpha_31"), seen.notes
    finally:
        live.http.patch(f"/v1/numbers/{number_id}", headers=live.headers, json={"voice_engine": None})
        live.http.patch("/v1/tenants/me", headers=live.headers, json={"voice_engine_default": None})
