"""One app on one fresh schema, shared by the tests of a module, optionally with the fake carrier's
REST API behind it.

Per-test apps cost a schema and a start-up each; modules whose tests neither move the clock nor
depend on each other's writes use this instead (with budgets raised, so hundreds of requests from
one key or one address are not 429s). Import the module-scoped fixtures by name into the module:
``app``, ``client``, ``container``, ``mail``, and ``fake`` for the fake carrier (a module that
imports ``fake`` gets an app that calls it). A module may set ``APP_SETTINGS`` (a dict of settings
overrides) before it imports them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from adapters.email.outbox import MemoryEmailSender
from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container, bootstrap
from entrypoints.http.app import create_app
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.fakes.twilio.rest import FakeTwilio
from tests.postgres import drop_schema, fresh_schema
from tests.support.setup import FAST_HASHER

# The fake carrier calls back here: a closed loopback port (these tests post the callbacks themselves).
NOWHERE = "http://127.0.0.1:9"


@contextmanager
def shared_app(pg_server: DatabaseConfig, data_dir: Path, carrier: FakeTwilio | None = None,
               clock: FakeClock | None = None, **settings_overrides: Any) -> Iterator[tuple[TestClient[Any], Container]]:
    if carrier is not None:
        settings_overrides = {"twilio_api_base_url": carrier.base_url, "public_base_url": NOWHERE,
                              **settings_overrides}
    config = fresh_schema(pg_server)
    settings = Settings(
        data_dir=data_dir,
        secret_key="test-secret-key-0123456789abcdef",
        rate_limit_tiers={"standard": 1_000_000},
        login_attempts=1_000_000,
        **settings_overrides,
    )
    container = bootstrap(settings, database=config, clock=clock or FakeClock(), email=MemoryEmailSender(),
                          hasher=FAST_HASHER)
    try:
        with TestClient(create_app(container), raise_server_exceptions=False) as client:
            yield client, container
    finally:
        container.close()
        drop_schema(config)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTwilio]:
    with FakeTwilio() as started:
        yield started


@pytest.fixture(scope="module")
def app(request: pytest.FixtureRequest, pg_server: DatabaseConfig,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Container]]:
    carrier = request.getfixturevalue("fake") if hasattr(request.module, "fake") else None
    overrides = getattr(request.module, "APP_SETTINGS", {})
    with shared_app(pg_server, tmp_path_factory.mktemp("var"), carrier, **overrides) as built:
        yield built


@pytest.fixture(scope="module")
def client(app: tuple[TestClient[Any], Container]) -> TestClient[Any]:
    return app[0]


@pytest.fixture(scope="module")
def container(app: tuple[TestClient[Any], Container]) -> Container:
    return app[1]


@pytest.fixture(scope="module")
def mail(container: Container) -> MemoryEmailSender:
    sender = container.accounts.ports.email
    assert isinstance(sender, MemoryEmailSender)
    return sender
