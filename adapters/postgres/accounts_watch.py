"""The HTTP server's watcher of the accounts notification log: a few times a second, one indexed
read of the notifications since the last one, whose aggregate ids tell the remembered keys which
of them changed (``application/accounts/changes.py``). It also moves ``known_head``, which the
voice-routing lookups and read-your-writes on the accounts views wait for."""

from __future__ import annotations

import asyncio
import time

from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from application import logs
from application.accounts.app import Accounts

INTERVAL = 0.2  # seconds between two polls
PAGE = 5_000

log = logs.get_logger(__name__)


class AccountsWatch:
    def __init__(self, pool: AsyncConnectionPool, *, schema: str, table: str, accounts: Accounts,
                 interval: float = INTERVAL) -> None:
        self._pool, self._accounts, self._interval = pool, accounts, interval
        name = sql.Identifier(schema, table)
        self._head = sql.SQL("SELECT coalesce(max(notification_id), 0) FROM {}").format(name).as_string()
        self._since = sql.SQL("SELECT notification_id, originator_id FROM {} WHERE notification_id > %s "
                              "ORDER BY notification_id LIMIT %s").format(name).as_string()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        async with self._pool.connection() as conn:
            head = int((await (await conn.execute(self._head)).fetchone())[0])
        self._accounts.changes.start(head)
        self._task = asyncio.get_running_loop().create_task(self._run(), name="accounts-watch")

    async def stop(self) -> None:
        self._accounts.changes.stop()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def poll(self) -> int:
        """Read every notification past the last one seen; the head read up to."""
        changes = self._accounts.changes
        began = time.monotonic()
        async with self._pool.connection() as conn:
            while True:
                cursor = await conn.execute(self._since, (changes.scanned, PAGE), prepare=True)
                rows = await cursor.fetchall()
                head = rows[-1][0] if rows else changes.scanned
                changes.saw(rows, head, began=began)
                if len(rows) < PAGE:
                    break
        self._accounts.known_head = max(self._accounts.known_head, head)
        return head

    async def _run(self) -> None:
        failing = False
        while True:
            try:
                await self.poll()
                failing = False
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is away: remembered keys lapse, requests take the full path
                if not failing:
                    log.warning("accounts_watch.failed", error=type(exc).__name__)
                failing = True
            await asyncio.sleep(self._interval)
