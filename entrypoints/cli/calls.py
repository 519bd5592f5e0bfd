"""``callwright calls …``: calls on a running server through ``callwright_client`` (the key in
``CALLWRIGHT_API_KEY``, else ``OPENPHN_API_KEY``; the server in ``CALLWRIGHT_BASE_URL``). The batch
and the CSV export have modules of their own; ``session`` holds what every command shares."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

from entrypoints.cli import session
from entrypoints.cli.calls_batch import batch
from entrypoints.cli.calls_export import export
from entrypoints.cli.session import JsonOption

calls = typer.Typer(help="Create, read, list, watch, cancel, batch and export calls on a running server.",
                    no_args_is_help=True)
calls.command("batch")(batch)
calls.command("export")(export)

SUMMARY = ("outcome", "confidence", "duration_seconds", "cost_total", "error_code")
RECORD = ("call_id", "status", "direction", "mode", "to", "from", "objective", "outcome", "confidence",
          "duration_seconds", "cost_total", "error_code", "error_message", "created_at", "started_at", "ended_at")
LIST_COLUMNS = ("call_id", "status", "to", "created_at", "objective")


def read_json(source: Path) -> Any:
    """A JSON document from a file ('-': stdin); unreadable or invalid is one line, exit 2."""
    try:
        text = sys.stdin.read() if str(source) == "-" else source.read_text(encoding="utf-8")
        return json.loads(text)
    except OSError as exc:
        session.usage_error(f"cannot read {source}: {exc.strerror or exc}")
    except ValueError as exc:
        session.usage_error(f"{source} is not JSON: {exc}")


@calls.command("create")
def create(
    body: Annotated[Path, typer.Argument(help="JSON file with the call create request ('-' for stdin)")],
    idempotency_key: Annotated[Optional[str], typer.Option("--idempotency-key")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a call from a JSON request body."""
    fields = read_json(body)
    if not isinstance(fields, dict):
        session.usage_error(f"{body} must hold one JSON object, the call create request")
    with session.client() as client:
        created = client.calls.create(idempotency_key=idempotency_key, **fields)
    if as_json:
        session.emit_json(created.raw)
    else:
        session.record(created.raw)


@calls.command("get")
def get(call_id: str, as_json: JsonOption = False) -> None:
    """Show one call."""
    with session.client() as client:
        call = client.calls.get(call_id)
    show_call(call.raw, as_json)


def show_call(raw: dict[str, Any], as_json: bool) -> None:
    if as_json:
        session.emit_json(raw)
        return
    session.record(raw, [name for name in RECORD if name in raw])
    if raw.get("transcript"):
        session.say("transcript:")
        for line in str(raw["transcript"]).splitlines():
            session.say(f"  {line}")


@calls.command("list")
def list_calls(
    status: Annotated[Optional[str], typer.Option(help="queued, in_progress, completed or failed")] = None,
    limit: Annotated[int, typer.Option()] = 25,
    offset: Annotated[int, typer.Option()] = 0,
    as_json: JsonOption = False,
) -> None:
    """List calls, newest first (one page)."""
    with session.client() as client:
        page = client.calls.list_page(limit=limit, offset=offset, status=status)
    if as_json:
        session.emit_json(page.raw)
        return
    rows = [[call.raw.get(name) for name in LIST_COLUMNS[:-1]] + [(call.objective or "")[:40]] for call in page.data]
    total = page.total if page.total is not None else len(rows)
    session.table(LIST_COLUMNS, rows, caption=f"{len(rows)} of {total}")


@calls.command("cancel")
def cancel(call_id: str, as_json: JsonOption = False) -> None:
    """Cancel a call that has not ended (it fails with error_code cancelled)."""
    with session.client() as client:
        call = client.calls.cancel(call_id)
    show_call(call.raw, as_json)


@calls.command("watch")
def watch(
    call_id: str,
    timeout: Annotated[float, typer.Option(help="seconds")] = 900.0,
    interval: Annotated[float, typer.Option(help="seconds between reads")] = 0.5,
    as_json: JsonOption = False,
) -> None:
    """Follow a call live: status changes and new transcript lines, until it ends.

    With --json, only the ended call's record is printed."""
    seen_lines, status = 0, None
    deadline = time.monotonic() + timeout
    with session.client() as client, session.progress(SpinnerColumn(), TextColumn("{task.description}"),
                                                      TimeElapsedColumn()) as shown:
        task = shown.add_task(f"{call_id}: reading", total=None)
        while time.monotonic() < deadline:
            call = client.calls.get(call_id)
            lines = [line for line in (call.transcript or "").splitlines() if line]
            if call.status != status:
                status = call.status
                if not as_json:
                    session.say(f"[{status}]", bold=True)
            if not as_json:
                for line in lines[seen_lines:]:
                    session.say(f"  {line}")
            seen_lines = len(lines)
            shown.update(task, description=f"{call_id}: {status}, {seen_lines} transcript lines")
            if call.ended:
                break
            time.sleep(interval)
        else:
            typer.echo(f"error: the call did not end within {timeout:g} s (it is {status})", err=True)
            raise typer.Exit(1)
    session.emit_json(call.raw if as_json else {name: call.raw.get(name) for name in SUMMARY})
