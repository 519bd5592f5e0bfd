"""A protocol-faithful fake of Twilio's REST API on loopback (issue 5 item 8, REST part)."""

from tests.fakes.twilio.rest import FakeAccount, FakeTwilio, Received

__all__ = ["FakeAccount", "FakeTwilio", "Received"]
