"""The transfer callback honours its query (SPEC.md Carrier callbacks: ``POST
/webhooks/carrier/transfer/{call_id}`` takes ``dest``, default ``0``, and ``brief``, default empty;
issue 30 item 4): ``dest`` is the index of the call's destination to dial, checked against its
destinations and attempts, and ``brief`` is whispered to whoever answers before the bridge."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit
from xml.etree import ElementTree

import pytest

from application.calling import transfers
from domain.calls.call import Call
from tests.contract.test_carrier_callbacks import dialed_call, form, signed
from tests.support.setup import carrier_tenant
from tests.support.shared_app import app, client, container, fake  # noqa: F401 - fixtures

NUMBERS = [("+14155550100", "Front desk")]
DESKS = [{"label": "Desk A", "e164": "+14155550111"}, {"label": "Desk B", "e164": "+14155550122"},
         {"label": "Desk C", "e164": "+14155550133"}]
BRIEF = "Ada Lovelace, boiler leaking since Monday, wants a visit today"


@pytest.fixture(scope="module")
def acme(client, container, fake):
    return carrier_tenant(client, container, fake, NUMBERS)


def transferring(client, container, fake, acme, max_attempts: int = 3) -> tuple[str, str]:
    tenant, _ = acme
    call_id, sid = dialed_call(client, container, fake, tenant)
    assert transfers.start_transfer(container.calling, call_id, DESKS, max_attempts, BRIEF)
    return call_id, sid


def callback(client, container, acme, call_id: str, sid: str, query: str, **leg: str) -> ElementTree.Element:
    _, account = acme
    answer = signed(client, container, f"/webhooks/carrier/transfer/{call_id}?{query}", form(account, sid, **leg),
                    account.auth_token)
    assert answer.status_code == 200, answer.text
    return ElementTree.fromstring(answer.text)


def test_the_redirect_names_destination_0_and_the_brief_in_the_signed_url(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme)
    redirect = fake.requests_to(f"/Calls/{sid}.json", "POST")[-1].form["Url"][0]
    query = parse_qs(urlsplit(redirect).query)
    assert urlsplit(redirect).path == f"/webhooks/carrier/transfer/{call_id}"
    assert query == {"dest": ["0"], "brief": [BRIEF]}


def test_dest_picks_the_destination_dialled_and_brief_is_whispered_to_who_answers(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme)
    document = callback(client, container, acme, call_id, sid, "dest=2&brief=Returning+customer")
    number = document.find("Dial/Number")
    assert number is not None and number.text == DESKS[2]["e164"], ElementTree.tostring(document)
    whisper_url = number.get("url") or ""
    assert urlsplit(whisper_url).path == f"/webhooks/carrier/whisper/{call_id}"
    assert parse_qs(urlsplit(whisper_url).query) == {"brief": ["Returning customer"]}
    action = parse_qs(urlsplit(document.find("Dial").get("action")).query)
    assert action == {"dest": ["3"], "brief": ["Returning customer"]}  # the next leg keeps the brief
    _, account = acme
    heard = signed(client, container, whisper_url[whisper_url.index("/webhooks"):],
                   form(account, "CA" + "7" * 32, To=DESKS[2]["e164"]), account.auth_token)
    assert heard.status_code == 200, heard.text
    assert [s.text for s in ElementTree.fromstring(heard.text).iter("Say")] == ["Returning customer"]


def test_without_a_brief_nothing_is_whispered(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme)
    number = callback(client, container, acme, call_id, sid, "dest=0").find("Dial/Number")
    assert number is not None and number.text == DESKS[0]["e164"] and number.get("url") is None


def test_the_leg_reported_is_dest_minus_one_and_a_completed_leg_hangs_up(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme)
    after = callback(client, container, acme, call_id, sid, "dest=1&brief=x", DialCallStatus="no-answer")
    assert after.find("Dial/Number").text == DESKS[1]["e164"]
    legs = container.calling.find(Call, Call.create_id(call_id)).transfer.as_dict()["legs"]
    assert legs == [{"index": 0, "dial_status": "no_answer"}]
    done = callback(client, container, acme, call_id, sid, "dest=2&brief=x", DialCallStatus="completed")
    assert [child.tag for child in done] == ["Hangup"]
    assert container.calling.find(Call, Call.create_id(call_id)).transfer.as_dict()["status"] == "completed"


@pytest.mark.parametrize("dest", ["3", "7", "-1", "one", "", "1e3"])
def test_a_dest_outside_the_destinations_dials_nothing(client, container, fake, acme, dest):
    call_id, sid = transferring(client, container, fake, acme)
    document = callback(client, container, acme, call_id, sid, f"dest={dest}")
    assert document.find("Dial") is None and [c.tag for c in document] == ["Say", "Hangup"]


def test_dest_past_the_attempts_dials_nothing(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme, max_attempts=2)
    assert callback(client, container, acme, call_id, sid, "dest=1").find("Dial/Number").text == DESKS[1]["e164"]
    assert callback(client, container, acme, call_id, sid, "dest=2").find("Dial") is None


def test_a_changed_query_breaks_the_signature(client, container, fake, acme):
    call_id, sid = transferring(client, container, fake, acme)
    _, account = acme
    path = f"/webhooks/carrier/transfer/{call_id}"
    good = signed(client, container, f"{path}?dest=0", form(account, sid), account.auth_token)
    forged = client.post(f"{path}?dest=1", data=form(account, sid),
                         headers={"X-Twilio-Signature": good.request.headers["X-Twilio-Signature"]})
    assert forged.status_code == 403
