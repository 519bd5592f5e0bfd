"""``callwright calls export``: the calls as CSV, streamed by ``callwright_client`` into a file or
stdout, counting the rows as they pass (a quoted cell may hold line breaks, so lines are not rows)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Annotated, Any, Optional

import typer
from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

from entrypoints.cli import session
from entrypoints.cli.session import JsonOption


class RowCounter:
    """A binary stream that writes through to ``sink`` and counts the CSV records ended so far (a
    newline outside quotes ends one; a doubled quote inside a cell toggles twice)."""

    def __init__(self, sink: IO[bytes], on_rows: Any = None) -> None:
        self.sink, self.on_rows = sink, on_rows
        self.records, self.quoted, self.open_record = 0, False, False

    def write(self, chunk: bytes) -> int:
        self.sink.write(chunk)
        before = self.records
        for index, part in enumerate(chunk.split(b'"')):
            if index:
                self.quoted = not self.quoted
            if not self.quoted:
                self.records += part.count(b"\n")
        if chunk:
            self.open_record = self.quoted or not chunk.endswith(b"\n")
        if self.on_rows is not None and self.records != before:
            self.on_rows(self.rows)
        return len(chunk)

    @property
    def rows(self) -> int:
        """Data rows: every record but the header (a last one without its newline counts too)."""
        return max(0, self.records + (1 if self.open_record else 0) - 1)

    # A file can be rewritten from the start when a cut-off body is fetched again; a pipe cannot.
    def seekable(self) -> bool:
        return bool(self.sink.seekable())

    def tell(self) -> int:
        return self.sink.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        self.records, self.quoted, self.open_record = 0, False, False
        return self.sink.seek(offset, whence)

    def truncate(self, size: int | None = None) -> int:
        return self.sink.truncate(size)


def export(
    output: Annotated[Path, typer.Option("--output", "-o", help="file to write ('-' for stdout)")] = Path("-"),
    status: Annotated[Optional[str], typer.Option(help="queued, in_progress, completed or failed")] = None,
    limit: Annotated[int, typer.Option()] = 10_000,
    include: Annotated[Optional[str], typer.Option(help="outcome: a column per outcome field")] = None,
    as_json: JsonOption = False,
) -> None:
    """Export calls as CSV, newest first.

    With --json (and --output FILE), a summary of what was written is printed instead."""
    to_stdout = str(output) == "-"
    if as_json and to_stdout:
        session.usage_error("--json prints a summary of the export: give --output FILE for the CSV")
    params = {"status": status, "limit": limit, "include": include}
    with session.client() as client, session.progress(
            SpinnerColumn(), TextColumn("export: {task.completed} rows written"), TimeElapsedColumn(),
            show=not (to_stdout and sys.stdout.isatty())) as shown:
        task = shown.add_task("export", total=None)

        def progress(rows: int) -> None:
            shown.update(task, completed=rows)

        if to_stdout:
            counter = RowCounter(sys.stdout.buffer, progress)
            client.calls.export_csv(counter, **params)
            sys.stdout.buffer.flush()
            return
        try:
            sink = output.open("wb")
        except OSError as exc:
            session.usage_error(f"cannot write {output}: {exc.strerror or exc}")
        with sink:
            counter = RowCounter(sink, progress)
            written = client.calls.export_csv(counter, **params)
    path = output.resolve()
    if as_json:
        session.emit_json({"path": str(path), "rows": counter.rows, "bytes": written})
    else:
        typer.echo(f"wrote {counter.rows} {'row' if counter.rows == 1 else 'rows'} to {path}")
