"""Shared fixtures: a real PostgreSQL per test (own schema), fakes for clock and e-mail, the app."""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog
from litestar.testing import TestClient

from adapters.crypto.passwords import ScryptPasswordHasher
from adapters.email.outbox import MemoryEmailSender
from adapters.postgres.database import DatabaseConfig
from entrypoints.bootstrap import Container, bootstrap, bootstrap_memory
from entrypoints.http.app import create_app
from entrypoints.logging import configure
from entrypoints.settings import Settings
from tests.fakes.clock import FakeClock
from tests.postgres import drop_schema, find_server, fresh_schema

# Cheap scrypt for speed; the production cost is exercised in tests/unit/test_passwords.py.
FAST_HASHER = ScryptPasswordHasher(n=2**10)
PASSWORD = "correct horse battery"


@pytest.fixture
def service_log() -> Iterator[io.StringIO]:
    """The service's own log configuration (JSON lines, from debug up), written to a buffer."""
    saved = structlog.get_config()
    buffer = io.StringIO()
    configure("debug", "json")
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=buffer))
    try:
        yield buffer
    finally:
        structlog.configure(**saved)


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


@dataclass
class Account:
    user_id: str
    tenant_id: str
    email: str
    key_id: str
    api_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}


_counter = {"n": 0}


def signup(client: TestClient[Any], email: str | None = None, password: str = PASSWORD) -> Account:
    _counter["n"] += 1
    email = email or f"user{_counter['n']}@example.com"
    response = client.post("/auth/signup", json={"email": email, "password": password})
    assert response.status_code == 201, response.text
    body = response.json()
    return Account(body["user_id"], body["tenant_id"], body["email"], body["key_id"], body["api_key"])


def approve(container: Container, account: Account) -> None:
    from application.accounts.administration import approve_user

    approve_user(container.accounts, account.user_id, by="test")


@pytest.fixture
def account(client: TestClient[Any], container: Container) -> Account:
    """An approved tenant with its initial all-permissions key."""
    created = signup(client)
    approve(container, created)
    return created


@pytest.fixture
def pending_account(client: TestClient[Any]) -> Account:
    return signup(client)
