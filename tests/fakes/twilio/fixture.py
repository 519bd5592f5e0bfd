"""The ``fake_twilio`` fixture: a started fake carrier (REST API and call simulator), closed after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.twilio.rest import FakeTwilio


@pytest.fixture
def fake_twilio() -> Iterator[FakeTwilio]:
    fake = FakeTwilio().start()
    try:
        yield fake
    finally:
        fake.close()
