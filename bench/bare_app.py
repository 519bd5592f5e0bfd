"""The ceiling for the benchmarks: a bare Litestar GET, a POST that decodes a JSON body and a
websocket that echoes every text message, served by granian exactly as ``callwright serve`` serves
the real app (ASGI, one worker, no access log). No middleware, no database, no validation model.

Run: ``.venv/bin/python bench/bare_app.py --port 8101``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from litestar import Litestar, WebSocket, get, post, websocket
from litestar.exceptions import WebSocketDisconnect


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


app = Litestar(route_handlers=[bare, bare_post, echo], debug=False, request_max_body_size=1_000_000)


def main() -> None:
    from granian import Granian
    from granian.constants import Interfaces

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8101)
    args = parser.parse_args()
    Granian(
        "bare_app:app",
        address=args.host,
        port=args.port,
        interface=Interfaces.ASGI,
        workers=1,
        log_access=False,
        working_dir=Path(__file__).resolve().parent,
    ).serve()


if __name__ == "__main__":
    main()
