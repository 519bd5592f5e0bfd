"""The calls CSV export (SPEC.md, ``GET /v1/calls/export.csv``): RFC 4180 lines, header first.

With ``include=outcome`` one column per outcome field follows, ``outcome.<name>``, for the union of
the exported calls' field names in sorted order; a value is text: booleans ``true``/``false``,
numbers as they are, strings defused, arrays and objects as compact JSON (defused), null empty.

Free-text cells are defused against formula injection (OWASP "CSV Injection"): a spreadsheet
runs a cell that starts with ``= + - @``, a tab or a carriage return, so such a cell gets a
leading apostrophe. Validated cells (ids, E.164 numbers, numbers, timestamps, statuses) are
written as they are: ``+442071838750`` must stay a phone number.
"""

from __future__ import annotations

import csv
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from typing import Any

CSV_COLUMNS = (
    "call_id", "created_at", "to", "from", "objective", "status", "confidence", "duration_seconds",
    "cost_total", "error_code", "recording_url",
)
VALIDATED_COLUMNS = frozenset(
    {"call_id", "created_at", "to", "from", "status", "confidence", "duration_seconds", "cost_total"}
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

_DEFUSED = tuple(column not in VALIDATED_COLUMNS for column in CSV_COLUMNS)


class _Line:
    """A file whose ``write`` hands back what it was given: one formatted CSV record."""

    def write(self, text: str) -> str:
        return text


def defuse(cell: str) -> str:
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def _cells(row: Sequence[Any]) -> list[Any]:
    if len(row) != len(CSV_COLUMNS):
        raise ValueError(f"a calls export row has {len(CSV_COLUMNS)} cells, not {len(row)}")
    return [defuse(cell) if unsafe and isinstance(cell, str) else cell for cell, unsafe in zip(row, _DEFUSED)]


def outcome_cell(value: Any) -> Any:
    if value is None or isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, str):
        value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return defuse(value)


def _with_outcome(row: Sequence[Any], names: Sequence[str]) -> list[Any]:
    *cells, outcome = row
    fields = outcome if isinstance(outcome, dict) else {}
    return [*_cells(cells), *(outcome_cell(fields.get(name)) for name in names)]


def csv_lines(rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """Each CSV record as a string ending in CRLF; ``None`` is an empty cell."""
    writer = csv.writer(_Line(), lineterminator="\r\n")
    yield writer.writerow(CSV_COLUMNS)
    for row in rows:
        yield writer.writerow(_cells(row))


async def csv_lines_async(rows: AsyncIterable[Sequence[Any]], outcome: bool = False) -> AsyncIterator[str]:
    """``csv_lines`` over ``queries.export_rows`` (given the same ``outcome``), for a streamed response."""
    writer = csv.writer(_Line(), lineterminator="\r\n")
    if not outcome:
        yield writer.writerow(CSV_COLUMNS)
        async for row in rows:
            yield writer.writerow(_cells(row))
        return
    iterator = aiter(rows)
    names = await anext(iterator)
    yield writer.writerow([*CSV_COLUMNS, *(f"outcome.{name}" for name in names)])
    async for row in iterator:
        yield writer.writerow(_with_outcome(row, names))
