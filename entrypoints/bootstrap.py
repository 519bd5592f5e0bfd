"""Composition root: the only module that chooses concrete adapters.

``bootstrap`` wires PostgreSQL (external or embedded); ``bootstrap_memory`` wires the popo
backend for unit tests.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import structlog
from psycopg_pool import ConnectionPool

from adapters.crypto import master_key
from adapters.crypto.passwords import ScryptPasswordHasher
from adapters.crypto.sessions import JwtSessionTokens
from adapters.email.outbox import FileOutboxEmailSender
from adapters.memory.rate_limiter import MemoryRateLimiter
from adapters.postgres.advisory_lock import AdvisoryLock
from adapters.postgres.database import DatabaseConfig, start_embedded
from adapters.postgres.rate_limiter import PostgresRateLimiter
from application.accounts.app import AccountPorts, Accounts
from application.ports import Clock, EmailSender, PasswordHasher, RateLimiter
from entrypoints.settings import Settings
from projections.api_keys.projection import ApiKeysProjection
from projections.api_keys.view import ApiKeysView
from projections.audit_events.projection import AuditEventsProjection
from projections.audit_events.view import AuditEventsView
from projections.runner import ProjectionWorker

log = structlog.get_logger(__name__)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Container:
    settings: Settings
    clock: Clock
    accounts: Accounts
    rate_limiter: RateLimiter
    database: DatabaseConfig | None = None
    projections: dict[str, ProjectionWorker] = field(default_factory=dict)
    read_pool: Any = None  # psycopg AsyncConnectionPool, opened by the HTTP app's lifespan
    _closers: list[Callable[[], Any]] = field(default_factory=list)

    def start_projections(self) -> None:
        for worker in self.projections.values():
            worker.start()

    def views_current(self) -> bool:
        """Have the views processed everything this process has saved or seen?"""
        head = self.accounts.known_head
        return all(worker.position >= head for worker in self.projections.values())

    def wait_for_views(self, timeout: float = 2.0) -> None:
        """Read-your-writes: wait (bounded) until every view has processed what this process
        saved, and what authentication saw committed before the request began."""
        head = self.accounts.known_head
        for worker in self.projections.values():
            worker.wait(head, timeout)

    def close(self) -> None:
        for worker in self.projections.values():
            worker.stop()
        for closer in reversed(self._closers):
            closer()
        self.accounts.close()


def resolve_database(settings: Settings) -> DatabaseConfig:
    if settings.database_url:
        return DatabaseConfig.from_url(settings.database_url)
    return start_embedded(settings.data_dir.resolve())


def _account_ports(settings: Settings, clock: Clock, email: EmailSender | None, hasher: PasswordHasher | None) -> AccountPorts:
    secret, generated = master_key.load_or_create(settings.secret_key, settings.data_dir)
    if generated:
        log.warning("secret_key.generated", path=str(settings.data_dir / "secret.key"),
                    hint="set CALLWRIGHT_SECRET_KEY when several machines share one database")
    return AccountPorts(
        clock=clock,
        hasher=hasher or ScryptPasswordHasher(n=settings.scrypt_n),
        sessions=JwtSessionTokens(master_key.derive(secret, "session-jwt")),
        email=email or FileOutboxEmailSender(settings.data_dir / "outbox"),
        public_base_url=settings.base_url,
    )


def bootstrap(
    settings: Settings,
    *,
    database: DatabaseConfig | None = None,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
    projections: bool = True,
) -> Container:
    database = database or resolve_database(settings)
    database.ensure_schema()
    env = {**database.eventsourcing_env(), "AGGREGATE_CACHE_MAXSIZE": "10000", "AGGREGATE_CACHE_FASTFORWARD": "y"}
    accounts = Accounts(env, ports=_account_ports(settings, clock, email, hasher))
    pool = ConnectionPool(database.conninfo(), min_size=1, max_size=10, open=True, kwargs={"autocommit": True})
    limiter = PostgresRateLimiter(pool)
    limiter.create_table()
    container = Container(settings=settings, clock=clock, accounts=accounts, rate_limiter=limiter, database=database)
    container._closers.append(pool.close)
    if projections:
        _add_projections(container, env)
    return container


def _add_projections(container: Container, env: dict[str, str]) -> None:
    from eventsourcing.postgres import PostgresFactory

    factory = PostgresFactory({**env, "PERSISTENCE_MODULE": "eventsourcing.postgres"})
    container._closers.append(factory.close)
    for view_class, projection_class in ((AuditEventsView, AuditEventsProjection), (ApiKeysView, ApiKeysProjection)):
        view = view_class(factory.datastore)
        view.create_table()
        projection = projection_class(view)
        lock = None
        if container.database:
            # Advisory locks are per database, not per schema: name the schema so that services
            # sharing one database in separate schemas do not stand by for each other.
            lock_name = f"projection:{container.database.schema}:{projection.name}"
            lock = AdvisoryLock(container.database.conninfo(), lock_name)
        worker = ProjectionWorker(container.accounts, projection.process_event, view, name=projection.name, lock=lock)
        container.accounts.on_saved(worker.poke)
        container.projections[projection.name] = worker


def bootstrap_memory(
    settings: Settings | None = None,
    *,
    clock: Clock = utc_now,
    email: EmailSender | None = None,
    hasher: PasswordHasher | None = None,
) -> Container:
    """The popo backend, for unit tests only (no projections, no SQL)."""
    settings = settings or Settings()
    accounts = Accounts({"PERSISTENCE_MODULE": "eventsourcing.popo"}, ports=_account_ports(settings, clock, email, hasher))
    return Container(settings=settings, clock=clock, accounts=accounts, rate_limiter=MemoryRateLimiter())
