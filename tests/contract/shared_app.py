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
def shared_app(pg_server: DatabaseConfig, data_dir: Path) -> Iterator[tuple[TestClient[Any], Container]]:
    config = fresh_schema(pg_server)
    settings = Settings(
        data_dir=data_dir,
        secret_key="test-secret-key-0123456789abcdef",
        rate_limit_tiers={"standard": 1_000_000},
        login_attempts=1_000_000,
    )
    container = bootstrap(settings, database=config, clock=FakeClock(), email=MemoryEmailSender(), hasher=FAST_HASHER)
    try:
        with TestClient(create_app(container), raise_server_exceptions=False) as client:
            yield client, container
    finally:
        container.close()
        drop_schema(config)
