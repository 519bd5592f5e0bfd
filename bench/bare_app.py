"""The ceiling for the benchmarks: a bare Litestar GET served by granian exactly as ``callwright serve``
serves the real app (ASGI, one worker, no access log). No middleware, no database.

Run: ``.venv/bin/python bench/bare_app.py --port 8101``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from litestar import Litestar, get


@get("/bare")
async def bare() -> dict[str, str]:
    return {"status": "ok"}


app = Litestar(route_handlers=[bare], debug=False)


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
