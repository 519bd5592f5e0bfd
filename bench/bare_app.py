"""The ceilings for the benchmarks, served by granian exactly as ``callwright serve`` serves the real
app (ASGI, no access log): a bare Litestar GET, a POST that decodes a JSON body, a websocket that
echoes every text message, and, given a database, ``POST /durable``: the least durable work a create
must do (the body validated with msgspec, one row committed through a psycopg pool). No middleware.

Run: ``.venv/bin/python bench/bare_app.py --port 8101 [--dsn 'host=… port=… dbname=…'] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from litestar import Litestar, WebSocket, get, post, websocket
from litestar.datastructures import State
from litestar.exceptions import WebSocketDisconnect

DSN_ENV = "BENCH_DURABLE_DSN"  # the granian workers import this module: the DSN reaches them by environment
DURABLE_TABLE = "bench_durable_ceiling"
POOL_SIZE = 10  # as the service's request pool (entrypoints/bootstrap/http.py)


@get("/bare")
async def bare() -> dict[str, str]:
    return {"status": "ok"}


@post("/bare", status_code=201)
async def bare_post(data: dict[str, Any]) -> dict[str, str]:
    """Decodes the JSON body (as any create must) and answers a small 201 like ``POST /v1/calls``."""
    return {"call_id": "cll_" + "0" * 32, "status": "queued" if data else "empty"}


@websocket("/echo")
async def echo(socket: WebSocket) -> None:
    """Sends every text message straight back: the floor of a voice socket (bench/voice_streams.py)."""
    await socket.accept()
    try:
        while True:
            await socket.send_text(await socket.receive_text())
    except WebSocketDisconnect:
        pass


# --- the durable ceiling ----------------------------------------------------------------------------


class Simulation(msgspec.Struct, forbid_unknown_fields=True):
    persona: str | None = None
    facts: dict[str, Any] | None = None
    answered_by: str | None = None


class DurableCall(msgspec.Struct, forbid_unknown_fields=True):
    """The fields of the create body bench/calls_create.py sends, with their types and bounds."""

    to: Annotated[str, msgspec.Meta(max_length=64)]
    objective: Annotated[str, msgspec.Meta(min_length=1, max_length=4000)]
    outcome_schema: dict[str, Any]
    consent_type: str | None = None
    mode: Literal["live", "simulated"] = "live"
    simulation: Simulation | None = None
    metadata: dict[str, Any] | None = None


@post("/durable", status_code=201)
async def durable(data: DurableCall, state: State) -> dict[str, str]:
    """Validated by Litestar's msgspec decoding into ``DurableCall``, then one row committed."""
    call_id = "cll_" + uuid.uuid4().hex
    async with state.pool.connection() as conn:
        await conn.execute(f"INSERT INTO {DURABLE_TABLE} (id, body) VALUES (%s, %s)",
                           (call_id, msgspec.json.encode(data)), prepare=True)
    return {"call_id": call_id, "status": "queued"}


@asynccontextmanager
async def durable_pool(app: Litestar) -> AsyncIterator[None]:
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(os.environ[DSN_ENV], min_size=2, max_size=POOL_SIZE, open=False,
                               kwargs={"autocommit": True})
    await pool.open(wait=True, timeout=30)
    async with pool.connection() as conn, conn.transaction():  # several workers may start at once
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (DURABLE_TABLE,))
        await conn.execute(f"CREATE TABLE IF NOT EXISTS {DURABLE_TABLE} (id text PRIMARY KEY, body bytea NOT NULL)")
    app.state.pool = pool
    try:
        yield
    finally:
        await pool.close()


def build() -> Litestar:
    handlers: list[Any] = [bare, bare_post, echo]
    lifespan: list[Any] = []
    if os.environ.get(DSN_ENV):
        handlers.append(durable)
        lifespan.append(durable_pool)
    return Litestar(route_handlers=handlers, lifespan=lifespan, debug=False, request_max_body_size=1_000_000)


app = build()


def main() -> None:
    from granian import Granian
    from granian.constants import Interfaces

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--dsn", help="libpq connection string of the database for POST /durable")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.dsn:
        os.environ[DSN_ENV] = args.dsn
    Granian(
        "bare_app:app",
        address=args.host,
        port=args.port,
        interface=Interfaces.ASGI,
        workers=args.workers,
        log_access=False,
        working_dir=Path(__file__).resolve().parent,
    ).serve()


if __name__ == "__main__":
    main()
