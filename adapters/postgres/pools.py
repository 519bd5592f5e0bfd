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

- shares one wait among all the connections a request takes (``application.wait_budget``): a request
  that needs a connection from two pools during an outage waits ``wait_seconds`` in all, not twice.
  psycopg_pool's ``getconn`` (and so eventsourcing's pools, a subclass of it) reads the budget
  left in the caller's context (``install_wait_budget``); a pool with a connection ready still
  hands it over when the budget is spent.

``is_outage`` tells a database that cannot be reached (a refused or lost connection, a pool wait
that ran out) from every other error, through the chain of causes an exception carries.
"""

from __future__ import annotations

import functools
from typing import Any

import psycopg
import psycopg_pool
import psycopg_pool.pool
import psycopg_pool.pool_async
from eventsourcing import persistence
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from adapters.postgres.database import DatabaseConfig
from application import wait_budget

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


_READY_ONLY = 0.001  # a spent budget still takes a connection that is ready (psycopg_pool refuses 0)


def budgeted_timeout(timeout: float | None, pool_timeout: float) -> float:
    """The wait a ``getconn`` may spend: its own (or the pool's), cut to what the budget has left."""
    return max(_READY_ONLY, wait_budget.remaining(pool_timeout if timeout is None else timeout))


def install_wait_budget() -> None:
    """Make psycopg_pool's pools (sync and async, eventsourcing's included) read the budget.
    Idempotent; called before any pool is built."""
    for cls in (ConnectionPool, AsyncConnectionPool):
        getconn = cls.getconn
        if getattr(getconn, "__budgeted__", False):
            continue
        if cls is ConnectionPool:
            def budgeted(self: Any, timeout: float | None = None, *, _getconn: Any = getconn) -> Any:
                return _getconn(self, budgeted_timeout(timeout, self.timeout))
        else:
            async def budgeted(self: Any, timeout: float | None = None, *, _getconn: Any = getconn) -> Any:
                return await _getconn(self, budgeted_timeout(timeout, self.timeout))
        functools.update_wrapper(budgeted, getconn)
        budgeted.__budgeted__ = True  # type: ignore[attr-defined]
        cls.getconn = budgeted  # type: ignore[method-assign]


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
    install_wait_budget()
    return ConnectionPool(config.conninfo(), min_size=min_size, max_size=max_size, open=True, name=name,
                          timeout=config.wait_seconds, kwargs=_options(config, kwargs))


def async_pool(config: DatabaseConfig, *, max_size: int, min_size: int = 1, name: str | None = None,
               kwargs: dict[str, Any] | None = None) -> AsyncConnectionPool:
    """Not opened: ``await pool.open()`` on the loop that uses it."""
    cap_reconnect_backoff()
    install_wait_budget()
    return AsyncConnectionPool(config.conninfo(), min_size=min_size, max_size=max_size, open=False, name=name,
                               timeout=config.wait_seconds, kwargs=_options(config, kwargs))
