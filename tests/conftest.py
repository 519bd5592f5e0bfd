"""Shared fixtures: a real PostgreSQL per test (own schema), fakes for clock and e-mail, the app.
Set-up steps (sign-up, approval, carrier credentials) live in ``tests/support/setup.py``."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from litestar.testing import TestClient

from adapters.email.outbox import MemoryEmailSender
from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container, bootstrap, bootstrap_memory
from entrypoints.http.app import create_app
from entrypoints.logging import configure
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.postgres import drop_schema, find_server, fresh_schema
from tests.support.setup import FAST_HASHER, Account, approve, signup


@pytest.fixture
def service_log() -> Iterator[io.StringIO]:
    """The service's own log configuration (JSON lines, from debug up), written to a buffer."""
    saved = structlog.get_config()
    root = logging.getLogger()
    saved_root = (root.level, list(root.handlers))
    buffer = io.StringIO()
    configure("debug", "json")
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=buffer))
    try:
        yield buffer
    finally:
        structlog.configure(**saved)
        # The standard library's loggers too: left at debug, every later test would format every
        # pooled connection's checkout and every Kafka fetch.
        root.setLevel(saved_root[0])
        root.handlers[:] = saved_root[1]


@pytest.fixture(scope="session")
def pg_server() -> DatabaseConfig:
    server, _source = find_server()
    return server


@pytest.fixture
def db(pg_server: DatabaseConfig) -> Iterator[DatabaseConfig]:
    config = fresh_schema(pg_server)
    yield config
    drop_schema(config)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def mail() -> MemoryEmailSender:
    return MemoryEmailSender()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "var", secret_key="test-secret-key-0123456789abcdef")


@pytest.fixture
def container(db: DatabaseConfig, settings: Settings, clock: FakeClock, mail: MemoryEmailSender) -> Iterator[Container]:
    built = bootstrap(settings, database=db, clock=clock, email=mail, hasher=FAST_HASHER)
    yield built
    built.close()


@pytest.fixture
def memory_container(settings: Settings, clock: FakeClock, mail: MemoryEmailSender) -> Iterator[Container]:
    built = bootstrap_memory(settings, clock=clock, email=mail, hasher=FAST_HASHER)
    yield built
    built.close()


@pytest.fixture
def client(container: Container) -> Iterator[TestClient[Any]]:
    with TestClient(create_app(container), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def account(client: TestClient[Any], container: Container) -> Account:
    """An approved tenant with its initial all-permissions key."""
    created = signup(client)
    approve(container, created)
    return created


@pytest.fixture
def pending_account(client: TestClient[Any]) -> Account:
    return signup(client)
