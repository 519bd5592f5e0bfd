"""What every client command of ``callwright`` shares: the key and the server from the environment,
one ``callwright_client.Client``, a failed request as one line on stderr (exit 1), and output as a
table or, with ``--json``, the API's JSON alone on stdout. Progress is drawn on stderr, on a
terminal only, so stdout stays clean for pipes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import httpx
import typer
from callwright_client import APIConnectionError, CallwrightError, Client, ValidationError
from rich import box
from rich.console import Console
from rich.progress import Progress, ProgressColumn
from rich.table import Table
from rich.text import Text

from entrypoints.cli.style import colour_wanted

KEY_VARIABLES = ("CALLWRIGHT_API_KEY", "OPENPHN_API_KEY")  # the first one set wins
# A CLI run is interactive: a server that is down is said within a second, not after the
# library's default back-off; a 429 or 503 still waits its Retry-After.
RETRIES, BACKOFF = 2, 0.25
PIPED_WIDTH = 200  # a table written to a pipe or a file is not folded at 80 columns

JsonOption = Annotated[bool, typer.Option("--json", help="Print the API's JSON answer alone (for scripts)")]


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
def client() -> Iterator[Client]:
    """A client of the server; whatever it raises inside the block ends the command in one line."""
    key, base = api_key(), base_url()
    try:
        # An explicit transport: no proxy named in the environment diverts a local server's traffic.
        with Client(key, base, max_retries=RETRIES, backoff=BACKOFF, transport=httpx.HTTPTransport()) as found:
            yield found
    except CallwrightError as exc:
        fail(exc, base)


def fail(error: CallwrightError, base: str) -> NoReturn:
    typer.echo("\n".join(error_lines(error, base)), err=True)
    raise typer.Exit(1) from error


def error_lines(error: CallwrightError, base: str) -> list[str]:
    """``error <status> <code>: <message>``, then each problem of a 422 on a line of its own."""
    if isinstance(error, APIConnectionError):
        if isinstance(error.__cause__, (httpx.ConnectError, httpx.ConnectTimeout)):
            return [f"cannot reach {base}: is callwright serve running?"]
        return [f"error: the request to {base} failed ({error.message})"]
    if error.status is None:
        return [f"error: {error.message}"]
    head = f"error {error.status} {error.code or 'http_error'}"
    if isinstance(error, ValidationError) and error.detail:
        return [f"{head}: the request is invalid", *(f"  {_where(problem)}{problem.get('msg', '')}"
                                                     for problem in error.detail)]
    return [f"{head}: {error.message}"]


def _where(problem: Mapping[str, Any]) -> str:
    loc = ".".join(str(part) for part in problem.get("loc") or [])
    return f"{loc}: " if loc else ""


def usage_error(message: str) -> NoReturn:
    """A command given that cannot be sent: one line, exit 2 (as a wrong option is)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


# output ---------------------------------------------------------------------------------------

def emit_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def console() -> Console:
    found = Console(markup=False, emoji=False, highlight=False)
    return found if found.is_terminal else Console(markup=False, emoji=False, highlight=False, width=PIPED_WIDTH)


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str | None = None) -> None:
    """Rows under their column names; the first column (an id) is never folded."""
    shown = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, caption=caption, caption_justify="left")
    for index, name in enumerate(columns):
        shown.add_column(name, no_wrap=index == 0, overflow="fold")
    for row in rows:
        shown.add_row(*(Text(cell(value)) for value in row))
    out = console()
    if out.is_terminal:
        out.print(shown)
        return
    with out.capture() as captured:  # piped: plain lines without the padding that fills a cell
        out.print(shown)
    typer.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


def record(raw: Mapping[str, Any], fields: Sequence[str] | None = None) -> None:
    """One object as a two-column table: each field (all of them unless named) and its value."""
    table(("field", "value"), ((name, raw.get(name)) for name in (fields or list(raw))))


def say(text: str, *, bold: bool = False) -> None:
    """A line on stdout that a progress display on the same terminal moves out of the way of."""
    print(typer.style(text, bold=True) if bold and colour_wanted() else text, flush=True)


def progress(*columns: str | ProgressColumn, show: bool = True) -> Progress:
    """Progress on stderr while a command works, only on a terminal; gone once it is done."""
    err = Console(stderr=True)
    return Progress(*columns, console=err, transient=True, disable=not (show and err.is_terminal),
                    redirect_stdout=sys.stdout.isatty(), redirect_stderr=False)
