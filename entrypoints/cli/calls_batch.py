"""``callwright calls batch``: many calls sharing one objective, outcome schema and consent, from a
file of rows (CSV, a JSON array or JSON lines) and/or repeated ``--to``; sent 200 at a time (the
API's most per batch), each item accepted or rejected with its reason."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn

from entrypoints.cli import session
from entrypoints.cli.session import JsonOption

MAX_ITEMS = 200  # SPEC.md Limits: at most 200 items per batch
ITEM_FIELDS = ("to", "consent_record_id")
NESTED = ("metadata", "variables")  # CSV columns metadata.<name> and variables.<name>
COLUMNS = ("#", "to", "call_id", "status", "error")


def _text(source: Path) -> str:
    try:
        return sys.stdin.read() if str(source) == "-" else source.read_text(encoding="utf-8")
    except OSError as exc:
        session.usage_error(f"cannot read {source}: {exc.strerror or exc}")


def _json(source: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        session.usage_error(f"{source} is not JSON: {exc}")


def read_items(source: Path) -> list[dict[str, Any]]:
    """The rows of ``source``: a JSON array (or an object with ``items``), JSON lines, or a CSV
    whose header names ``to``, ``consent_record_id``, ``metadata.<name>`` and ``variables.<name>``."""
    text = _text(source).lstrip("\ufeff")
    start = text.lstrip()[:1]
    if start == "[":
        found = _json(source, text)
    elif start == "{":
        try:
            whole = json.loads(text)
            found = whole.get("items") if isinstance(whole, dict) and "items" in whole else [whole]
        except ValueError:
            found = [_json(source, line) for line in text.splitlines() if line.strip()]
    else:
        found = [_csv_item(source, row) for row in csv.DictReader(io.StringIO(text))]
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        session.usage_error(f"{source} must hold JSON objects, one per call")
    return found


def _csv_item(source: Path, row: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for column, value in row.items():
        if column is None or value in (None, ""):
            continue
        group, _, name = column.partition(".")
        if column in ITEM_FIELDS:
            item[column] = value
        elif group in NESTED and name:
            item.setdefault(group, {})[name] = value
        else:
            session.usage_error(f"{source}: unknown column {column!r} (to, consent_record_id, metadata.<name>, "
                                "variables.<name>)")
    return item


def shared_fields(shared: Optional[Path], objective: Optional[str], outcome_schema: Optional[Path],
                  consent_type: Optional[str], template_id: Optional[str], mode: Optional[str]) -> dict[str, Any]:
    """The fields every item shares: the file's, then each option given over it."""
    fields = _json(shared, _text(shared)) if shared is not None else {}
    if not isinstance(fields, dict):
        session.usage_error(f"{shared} must hold one JSON object, the fields every call shares")
    if outcome_schema is not None:
        fields["outcome_schema"] = _json(outcome_schema, _text(outcome_schema))
    given = {"objective": objective, "consent_type": consent_type, "template_id": template_id, "mode": mode}
    return {**fields, **{name: value for name, value in given.items() if value is not None}}


def batch(
    shared: Annotated[Optional[Path], typer.Argument(
        help="JSON file with the fields every call shares (objective, outcome_schema, consent_type, mode, "
             "simulation…; its items too, if any); '-' for stdin")] = None,
    items: Annotated[Optional[Path], typer.Option(
        "--items", help="CSV (to, consent_record_id, metadata.<name>, variables.<name>), JSON array or JSON lines")
    ] = None,
    to: Annotated[Optional[list[str]], typer.Option("--to", help="One more call to this E.164 number (repeatable)")]
    = None,
    objective: Annotated[Optional[str], typer.Option()] = None,
    outcome_schema: Annotated[Optional[Path], typer.Option("--outcome-schema", help="JSON file")] = None,
    consent_type: Annotated[Optional[str], typer.Option("--consent-type")] = None,
    template_id: Annotated[Optional[str], typer.Option("--template-id")] = None,
    mode: Annotated[Optional[str], typer.Option(help="live or simulated")] = None,
    idempotency_key: Annotated[Optional[str], typer.Option(
        "--idempotency-key", help="Repeat it to resend the same batch safely (suffixed -1, -2… past 200 items)")]
    = None,
    as_json: JsonOption = False,
) -> None:
    """Create many calls at once; each item is accepted (with its call id) or rejected with a reason."""
    fields = shared_fields(shared, objective, outcome_schema, consent_type, template_id, mode)
    listed = fields.pop("items", None) or []
    rows = [*listed, *(read_items(items) if items is not None else []), *({"to": number} for number in to or [])]
    if not rows:
        session.usage_error("no calls to make: give --items FILE, --to NUMBER, or items in the shared file")
    chunks = [rows[start:start + MAX_ITEMS] for start in range(0, len(rows), MAX_ITEMS)]
    results: list[dict[str, Any]] = []
    accepted = rejected = 0
    with session.client() as client, session.progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()) as shown:
        task = shown.add_task("batch: sending", total=len(rows))
        for number, chunk in enumerate(chunks, start=1):
            key = idempotency_key if not idempotency_key or len(chunks) == 1 else f"{idempotency_key}-{number}"
            done = client.calls.batch(chunk, idempotency_key=key, **fields)
            accepted, rejected = accepted + done.accepted, rejected + done.rejected
            results.extend(done.items)
            shown.update(task, advance=len(chunk), description=f"batch: {accepted} accepted, {rejected} rejected")
    answer = done.raw if len(chunks) == 1 else {"accepted": accepted, "rejected": rejected, "items": results}
    if as_json:
        session.emit_json(answer)
        return
    session.table(COLUMNS, ([index, item.get("to"), item.get("call_id"), item.get("status"), _reason(item.get("error"))]
                            for index, item in enumerate(results, start=1)),
                  caption=f"{accepted} accepted, {rejected} rejected")


def _reason(error: Any) -> Any:
    """A rejection as ``code: message`` (the API's ``{code, message}``), anything else as given."""
    if isinstance(error, dict) and "message" in error:
        return f"{error.get('code')}: {error['message']}" if error.get("code") else error["message"]
    return error
