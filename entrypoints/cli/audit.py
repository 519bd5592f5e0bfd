"""``callwright audit verify``: checks an export of the audit trail offline (docs/audit.md).

Reads the JSON lines of ``GET /v1/audit-events/export.jsonl`` and recomputes each row's hash from
its content and the row before it (domain/audit_chain.py). Exit status 0 when the chain holds,
1 naming the first row that breaks it, 2 when the file cannot be read as JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from domain import audit_chain

audit = typer.Typer(help="Check an exported audit trail offline.", no_args_is_help=True)


class _Unreadable(Exception):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _Unreadable(number, f"not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise _Unreadable(number, "not a JSON object")
            yield row


@audit.command("verify")
def verify(
    file: Annotated[Path, typer.Argument(help="An export: GET /v1/audit-events/export.jsonl", exists=True,
                                         dir_okay=False, readable=True)],
    head: Annotated[Optional[str], typer.Option("--head", help="The hash GET /v1/audit-events/head answered "
                                                               "earlier: the export must reach it")] = None,
    partial: Annotated[bool, typer.Option("--partial", help="The export starts after the first row (a start "
                                                            "filter): take its first prev_hash as given")] = False,
) -> None:
    try:
        verdict = audit_chain.verify(_rows(file), head=head, first_prev=None if partial else audit_chain.GENESIS)
    except (_Unreadable, UnicodeDecodeError, OSError) as exc:
        typer.echo(f"{file}: {exc}", err=True)
        raise typer.Exit(2) from None
    if verdict.ok:
        typer.echo(f"OK: {verdict.rows} rows, the chain holds; head {verdict.head}")
        return
    where = f"row {verdict.broken_at}" + (f" ({verdict.row_id})" if verdict.row_id else "")
    typer.echo(f"BROKEN at {where}: {verdict.reason}", err=True)
    raise typer.Exit(1)
