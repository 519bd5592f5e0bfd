"""A protocol-faithful fake of Twilio on loopback (issue 5 item 8): the REST API and a call simulator
that plays scripted callees against the server under test, as Twilio would."""

from tests.fakes.twilio.rest import FakeAccount, FakeTwilio, Received
from tests.fakes.twilio.simulator import CallRecord, Callback, HangUp, Press, Say, Scenario, Silence

__all__ = ["CallRecord", "Callback", "FakeAccount", "FakeTwilio", "HangUp", "Press", "Received", "Say", "Scenario",
           "Silence"]
