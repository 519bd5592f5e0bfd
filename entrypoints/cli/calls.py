"""``callwright calls …``: a thin client of a running server (``CALLWRIGHT_BASE_URL``; the key in
``CALLWRIGHT_API_KEY``, else ``OPENPHN_API_KEY``). A server that cannot be reached is one line, exit 1."""

from __future__ import annotations

import csv
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Optional

import httpx
import typer

from entrypoints.cli.style import heading

calls = typer.Typer(help="Create, read, list, watch and export calls on a running server.", no_args_is_help=True)
TERMINAL = ("completed", "failed")


KEY_VARIABLES = ("CALLWRIGHT_API_KEY", "OPENPHN_API_KEY")  # the first one set wins


def api_key() -> str:
    for name in KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    typer.echo(f"error: set {' or '.join(KEY_VARIABLES)} to your API key (sk_live_…)", err=True)
    raise typer.Exit(2)


def base_url() -> str:
    return (os.environ.get("CALLWRIGHT_BASE_URL") or (
        f"http://{os.environ.get('CALLWRIGHT_HOST', '127.0.0.1')}:{os.environ.get('CALLWRIGHT_PORT', '8000')}"
    )).rstrip("/")


@contextmanager
def _client() -> Iterator[httpx.Client]:
    """A client of the server; a connection that fails is one line on stderr and exit 1, no traceback."""
    key, base = api_key(), base_url()
    try:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30.0,
                          trust_env=False) as client:
            yield client
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        typer.echo(f"cannot reach {base}: is callwright serve running?", err=True)
        raise typer.Exit(1) from exc
    except httpx.TransportError as exc:
        typer.echo(f"error: the request to {base} failed ({type(exc).__name__}: {exc})", err=True)
        raise typer.Exit(1) from exc


def _answer(response: httpx.Response) -> Any:
    if response.status_code >= 400:
        typer.echo(f"error {response.status_code}: {response.text}", err=True)
        raise typer.Exit(1)
    return response.json()


def _print(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


@calls.command("create")
def create(
    body: Annotated[Path, typer.Argument(help="JSON file with the call create request ('-' for stdin)")],
    idempotency_key: Annotated[Optional[str], typer.Option("--idempotency-key")] = None,
) -> None:
    """Create a call from a JSON request body."""
    text = sys.stdin.read() if str(body) == "-" else body.read_text()
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
    with _client() as client:
        _print(_answer(client.post("/v1/calls", content=text, headers={**headers, "content-type": "application/json"})))


@calls.command("get")
def get(call_id: str) -> None:
    """Show one call."""
    with _client() as client:
        _print(_answer(client.get(f"/v1/calls/{call_id}")))


@calls.command("list")
def list_calls(
    status: Annotated[Optional[str], typer.Option()] = None,
    limit: Annotated[int, typer.Option()] = 25,
    offset: Annotated[int, typer.Option()] = 0,
) -> None:
    """List calls, newest first."""
    params = {"limit": limit, "offset": offset, **({"status": status} if status else {})}
    with _client() as client:
        page = _answer(client.get("/v1/calls", params=params))
    for row in page["data"]:
        typer.echo(f"{row['call_id']}  {row['status']:<11}  {row['to']:<16}  {row['created_at']}  {row['objective'][:40]}")
    typer.echo(f"{len(page['data'])} of {page['total']}")


@calls.command("watch")
def watch(call_id: str, timeout: Annotated[float, typer.Option(help="seconds")] = 900.0) -> None:
    """Follow a call live: status changes and new transcript lines, until it ends."""
    seen_lines = 0
    status = None
    deadline = time.monotonic() + timeout
    with _client() as client:
        while time.monotonic() < deadline:
            record = _answer(client.get(f"/v1/calls/{call_id}"))
            if record["status"] != status:
                status = record["status"]
                heading(f"[{status}]")
            lines = [line for line in (record.get("transcript") or "").splitlines() if line]
            for line in lines[seen_lines:]:
                typer.echo(f"  {line}")
            seen_lines = len(lines)
            if status in TERMINAL:
                _print({k: record[k] for k in ("outcome", "confidence", "duration_seconds", "cost_total", "error_code")})
                return
            time.sleep(0.5)
    typer.echo("error: the call did not end in time", err=True)
    raise typer.Exit(1)


@calls.command("export")
def export(
    output: Annotated[Path, typer.Option("--output", "-o", help="file to write ('-' for stdout)")] = Path("-"),
    status: Annotated[Optional[str], typer.Option()] = None,
    limit: Annotated[int, typer.Option()] = 10_000,
) -> None:
    """Export calls as CSV."""
    params = {"limit": limit, **({"status": status} if status else {})}
    with _client() as client, client.stream("GET", "/v1/calls/export.csv", params=params) as response:
        if response.status_code >= 400:
            response.read()
            _answer(response)
        if str(output) == "-":
            for chunk in response.iter_bytes():
                sys.stdout.buffer.write(chunk)
            return
        with output.open("wb") as sink:
            for chunk in response.iter_bytes():
                sink.write(chunk)
    rows = _csv_rows(output)
    typer.echo(f"wrote {rows} {'row' if rows == 1 else 'rows'} to {output.resolve()}")


def _csv_rows(path: Path) -> int:
    """Data rows of a written CSV file (a transcript cell may hold line breaks, so lines are not rows)."""
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        return max(0, sum(1 for _ in csv.reader(handle)) - 1)
