"""One app on one fresh schema, shared by the tests of a module that only read shapes.

Per-test apps cost a schema and a start-up each; modules whose tests neither move the clock
nor depend on each other's writes use this instead (with budgets raised, so hundreds of
requests from one key or one address are not 429s).
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
from tests.conftest import FAST_HASHER
from tests.fakes.clock import FakeClock
from tests.postgres import drop_schema, fresh_schema


@contextmanager
def shared_app(pg_server: DatabaseConfig, data_dir: Path, **settings_overrides: Any) -> Iterator[tuple[TestClient[Any], Container]]:
    config = fresh_schema(pg_server)
    settings = Settings(
        data_dir=data_dir,
        secret_key="test-secret-key-0123456789abcdef",
        rate_limit_tiers={"standard": 1_000_000},
        login_attempts=1_000_000,
        **settings_overrides,
    )
    container = bootstrap(settings, database=config, clock=FakeClock(), email=MemoryEmailSender(), hasher=FAST_HASHER)
    try:
        with TestClient(create_app(container), raise_server_exceptions=False) as client:
            yield client, container
    finally:
        container.close()
        drop_schema(config)


# Module-scoped fixtures for modules that share one app: import them by name into the module.


@pytest.fixture(scope="module")
def app(pg_server: DatabaseConfig, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Container]]:
    with shared_app(pg_server, tmp_path_factory.mktemp("var")) as built:
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
