"""One app per module with the fake carrier's REST API behind it: import the fixtures ``fake``,
``app``, ``client`` and ``container`` by name into the module. A module may set ``APP_SETTINGS``
(a dict of settings overrides) before it imports them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container
from tests.contract.shared_app import shared_app
from tests.fakes.twilio.rest import FakeTwilio

# The fake carrier calls back here: a closed loopback port (these tests post the callbacks themselves).
NOWHERE = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as started:
        yield started


@pytest.fixture(scope="module")
def app(request: pytest.FixtureRequest, pg_server: DatabaseConfig, tmp_path_factory: pytest.TempPathFactory,
        fake: FakeTwilio) -> Iterator[tuple[TestClient[Any], Container]]:
    overrides = getattr(request.module, "APP_SETTINGS", {})
    with shared_app(pg_server, tmp_path_factory.mktemp("var"), twilio_api_base_url=fake.base_url,
                    public_base_url=NOWHERE, **overrides) as built:
        yield built


@pytest.fixture(scope="module")
def client(app: tuple[TestClient[Any], Container]) -> TestClient[Any]:
    return app[0]


@pytest.fixture(scope="module")
def container(app: tuple[TestClient[Any], Container]) -> Container:
    return app[1]
