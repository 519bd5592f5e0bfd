"""``callwright mcp``: the tool interface over stdio for a local AI client (SPEC.md "Tool
interface"). The key is read from ``OPENPHN_API_KEY`` (the variable's name from
``CALLWRIGHT_MCP_KEY_ENV``), the server from ``CALLWRIGHT_BASE_URL``; the tools call that server's
REST API with the key, as any client does. A missing key is one line on stderr, exit status 2."""

from __future__ import annotations

import os

import typer

DEFAULT_KEY_ENV = "OPENPHN_API_KEY"


def mcp() -> None:
    """Serve the four tools (make_call, get_call, list_calls, list_numbers) over stdin/stdout."""
    key_env = os.environ.get("CALLWRIGHT_MCP_KEY_ENV") or DEFAULT_KEY_ENV
    key = os.environ.get(key_env, "").strip()
    if not key:
        typer.echo(f"error: set {key_env} to your API key (sk_live_…); a stdio client passes it in its "
                   "server entry's env", err=True)
        raise typer.Exit(2)
    from callwright_client import AsyncClient

    from entrypoints.mcp.tools import build_server

    async def client_for(_context: object) -> AsyncClient:  # one key for the whole session
        return AsyncClient(api_key=key)  # the server: CALLWRIGHT_BASE_URL, as the client reads it

    build_server(client_for).run("stdio")
