"""The ``fake_anthropic`` fixture: a started fake Messages API, stopped after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic.server import FakeAnthropic


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic().start()
    try:
        yield fake
    finally:
        fake.stop()
