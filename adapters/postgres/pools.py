"""Connection pools that answer during an outage instead of hanging (ARCHITECTURE.md §9).

Every pool of the service comes from here, so each one:

- waits at most ``DatabaseConfig.wait_seconds`` for a connection (psycopg_pool's default is 30 s):
  a request then fails fast and the HTTP edge answers ``503 database_unavailable``;
- connects with libpq's ``connect_timeout`` (in ``DatabaseConfig.conninfo``: a host that does
  not answer at all);
- retries a lost server at least every ``MAX_RECONNECT_DELAY`` seconds. psycopg_pool doubles its
  delay after every failed attempt (1, 2, 4 … 32 s), so a 40 s outage left the service down for
  up to half a minute more; the capped delay brings it back within about two seconds of the
  database's return.

``is_outage`` tells a database that cannot be reached (a refused or lost connection, a pool wait
that ran out) from every other error, through the chain of causes an exception carries.
"""

from __future__ import annotations

from typing import Any

import psycopg
import psycopg_pool
import psycopg_pool.pool
import psycopg_pool.pool_async
from eventsourcing import persistence
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from adapters.postgres.database import DatabaseConfig

MAX_RECONNECT_DELAY = 2.0

# An outage: the driver's connection errors, a pool wait that ran out (a subclass of
# OperationalError), and eventsourcing's re-raised form of both. OperationalError also covers a
# statement cancelled by its own timeout or a lock not granted: the database answered, so those
# are not outages.
OUTAGES: tuple[type[BaseException], ...] = (psycopg.OperationalError, persistence.OperationalError)
_NOT_OUTAGES: tuple[type[BaseException], ...] = (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable)


class CappedBackoff(psycopg_pool.pool.AttemptWithBackoff):
    """psycopg_pool's reconnection schedule with its delay capped at ``MAX_RECONNECT_DELAY``."""

    def update_delay(self, now: float) -> None:
        super().update_delay(now)
        self.delay = min(self.delay, MAX_RECONNECT_DELAY)


def cap_reconnect_backoff() -> None:
    """Install the capped schedule in both of psycopg_pool's pools (they name the class directly,
    so a subclass cannot be passed in). Idempotent; called before any pool is built."""
    psycopg_pool.pool.AttemptWithBackoff = CappedBackoff  # type: ignore[misc]
    psycopg_pool.pool_async.AttemptWithBackoff = CappedBackoff  # type: ignore[misc]


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, says the database cannot be reached."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OUTAGES) and not isinstance(current, _NOT_OUTAGES):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _options(config: DatabaseConfig, kwargs: dict[str, Any] | None) -> dict[str, Any]:
    return {"autocommit": True, **(kwargs or {})}


def sync_pool(config: DatabaseConfig, *, max_size: int, min_size: int = 1, name: str | None = None,
              kwargs: dict[str, Any] | None = None) -> ConnectionPool:
    cap_reconnect_backoff()
    return ConnectionPool(config.conninfo(), min_size=min_size, max_size=max_size, open=True, name=name,
                          timeout=config.wait_seconds, kwargs=_options(config, kwargs))


def async_pool(config: DatabaseConfig, *, max_size: int, min_size: int = 1, name: str | None = None,
               kwargs: dict[str, Any] | None = None) -> AsyncConnectionPool:
    """Not opened: ``await pool.open()`` on the loop that uses it."""
    cap_reconnect_backoff()
    return AsyncConnectionPool(config.conninfo(), min_size=min_size, max_size=max_size, open=False, name=name,
                               timeout=config.wait_seconds, kwargs=_options(config, kwargs))
