"""The fake carrier (issue 5 item 8, REST) answers the real ``twilio`` SDK as Twilio would: basic
auth, Twilio's error shape, list paging, calls and messages; every request reaches loopback only."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest
from twilio.base.exceptions import TwilioRestException
from twilio.rest import Client

from adapters.twilio.carrier import RebasedHttpClient, TwilioCarrier
from application.providers.ports import CarrierRefusedError, CarrierUnreachableError
from tests.fakes.twilio.fixture import fake_twilio  # noqa: F401 - fixture
from tests.fakes.twilio.rest import FakeTwilio

NUMBERS = [(f"+1415555{i:04d}", f"Line {i}") for i in range(7)]


def sdk(fake: FakeTwilio, sid: str, token: str) -> Client:
    return Client(sid, token, http_client=RebasedHttpClient(fake.base_url, timeout=5), environment={})


def test_the_sdk_fetches_the_account_and_pages_through_its_numbers(fake_twilio):
    account = fake_twilio.add_account(friendly_name="Acme Dental", numbers=NUMBERS)
    api = sdk(fake_twilio, account.sid, account.auth_token).api.v2010.accounts(account.sid)

    fetched = api.fetch()
    assert (fetched.sid, fetched.friendly_name, fetched.status) == (account.sid, "Acme Dental", "active")
    listed = api.incoming_phone_numbers.list(page_size=3)
    assert [(n.phone_number, n.friendly_name) for n in listed] == NUMBERS
    pages = [r.query.get("Page", ["0"])[0] for r in fake_twilio.requests_to("/IncomingPhoneNumbers.json")]
    assert pages == ["0", "1", "2"]  # followed next_page_uri to the end


def test_wrong_credentials_get_twilios_401_error(fake_twilio):
    account = fake_twilio.add_account()
    with pytest.raises(TwilioRestException) as refused:
        sdk(fake_twilio, account.sid, "0" * 32).api.v2010.accounts(account.sid).fetch()
    assert (refused.value.status, refused.value.code) == (401, 20003)
    assert refused.value.msg.endswith("Authenticate")
    assert fake_twilio.received[-1].account_sid is None

    request = urllib.request.Request(f"{fake_twilio.base_url}/2010-04-01/Accounts/{account.sid}.json",
                                     headers={"Authorization": "Basic " + base64.b64encode(b"AC1:nope").decode()})
    with pytest.raises(urllib.error.HTTPError) as raw:
        urllib.request.urlopen(request, timeout=5)  # noqa: S310 - loopback fake
    assert json.loads(raw.value.read()) == {"code": 20003, "message": "Authenticate", "status": 401,
                                            "more_info": "https://www.twilio.com/docs/errors/20003"}


def test_calls_are_created_fetched_and_updated_and_messages_sent(fake_twilio):
    account = fake_twilio.add_account(numbers=NUMBERS[:1])
    client = sdk(fake_twilio, account.sid, account.auth_token)
    created = client.calls.create(to="+442071838750", from_=NUMBERS[0][0], url="https://example.test/twiml",
                                  status_callback_event=["initiated", "ringing", "answered", "completed"])
    assert created.sid.startswith("CA") and created.status == "queued"
    assert client.calls(created.sid).fetch().to == "+442071838750"
    assert client.calls(created.sid).update(status="canceled").status == "canceled"
    posted = fake_twilio.calls[created.sid]["parameters"]
    assert posted["StatusCallbackEvent"] == ["initiated", "ringing", "answered", "completed"]  # repeated keys kept

    with pytest.raises(TwilioRestException) as refused:
        client.calls.create(to="+442071838750", from_="+15005550000", url="https://example.test/twiml")
    assert refused.value.code == 21210

    message = client.messages.create(to="+442071838750", from_=NUMBERS[0][0], body="hello")
    assert message.sid.startswith("SM") and fake_twilio.messages[message.sid]["body"] == "hello"


def test_another_accounts_call_is_not_found(fake_twilio):
    owner = fake_twilio.add_account(numbers=NUMBERS[:1])
    stranger = fake_twilio.add_account()
    call = sdk(fake_twilio, owner.sid, owner.auth_token).calls.create(
        to="+442071838750", from_=NUMBERS[0][0], url="https://example.test/twiml")
    with pytest.raises(TwilioRestException) as refused:
        sdk(fake_twilio, stranger.sid, stranger.auth_token).calls(call.sid).fetch()
    assert refused.value.status == 404


def test_the_carrier_adapter_names_each_failure(fake_twilio):
    account = fake_twilio.add_account(friendly_name="Acme", numbers=NUMBERS)
    carrier = TwilioCarrier(fake_twilio.base_url, timeout=2)
    assert carrier.verify(account.sid, account.auth_token).numbers == NUMBERS

    with pytest.raises(CarrierRefusedError) as wrong:
        carrier.verify(account.sid, "f" * 32)
    assert wrong.value.code == "carrier_auth_failed" and "f" * 32 not in wrong.value.message

    suspended = fake_twilio.add_account(status="suspended")
    with pytest.raises(CarrierRefusedError) as inactive:
        carrier.verify(suspended.sid, suspended.auth_token)
    assert inactive.value.code == "carrier_account_inactive"

    fake_twilio.stop()
    with pytest.raises(CarrierUnreachableError):
        carrier.verify(account.sid, account.auth_token)
