"""``callwright numbers list|show|set``: the account's phone numbers and their settings, through
``callwright_client`` (``PATCH /v1/numbers/{id}`` sends only the fields given)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

import typer

from entrypoints.cli import session
from entrypoints.cli.session import JsonOption

numbers = typer.Typer(help="List, show and change the account's phone numbers.", no_args_is_help=True)

LIST_COLUMNS = ("id", "e164", "source", "active", "language", "voicemail_mode", "objective")
SHOWN = ("id", "e164", "source", "active", "objective", "greeting", "persona", "language", "timezone",
         "voice_engine", "flow_id", "recording_enabled", "voicemail_mode", "overflow_action", "sms_enabled",
         "hours_json", "outcome_schema", "created_at", "updated_at", "disconnected_at")
Text = Optional[str]


@numbers.command("list")
def list_numbers(as_json: JsonOption = False) -> None:
    """The account's active numbers, oldest first."""
    with session.client() as client:
        found = client.numbers.list()
    if as_json:
        session.emit_json([number.raw for number in found])
        return
    session.table(LIST_COLUMNS, ([number.raw.get(name) for name in LIST_COLUMNS[:-1]]
                                 + [(number.objective or "")[:40]] for number in found),
                  caption=f"{len(found)} {'number' if len(found) == 1 else 'numbers'}")


@numbers.command("show")
def show(number_id: Annotated[str, typer.Argument(help="The number's id (or its E.164)")],
         as_json: JsonOption = False) -> None:
    """One number and its settings."""
    with session.client() as client:
        raw = _find(client, number_id)
    _print(raw, as_json)


def _find(client: Any, number_id: str) -> dict[str, Any]:
    if number_id.startswith("+"):
        for number in client.numbers.list():
            if number.e164 == number_id:
                return dict(number.raw)
        session.usage_error(f"no active number {number_id} on this account")
    return dict(client.numbers.get(number_id).raw)


def _print(raw: dict[str, Any], as_json: bool) -> None:
    if as_json:
        session.emit_json(raw)
    else:
        session.record(raw, [*(name for name in SHOWN if name in raw), *(name for name in raw if name not in SHOWN)])


def _assignment(text: str) -> tuple[str, Any]:
    """``name=value``: the value as JSON (``null``, ``true``, ``42``, ``{"mon": …}``), else as text."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        session.usage_error(f"--set takes name=value, not {text!r}")
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


@numbers.command("set")
def set_number(
    number_id: Annotated[str, typer.Argument(help="The number's id (or its E.164)")],
    objective: Annotated[Text, typer.Option(help="What the agent pursues on each call")] = None,
    greeting: Annotated[Text, typer.Option(help="Said first on every call")] = None,
    persona: Annotated[Text, typer.Option(help="How the agent comes across")] = None,
    language: Annotated[Text, typer.Option(help="BCP-47, e.g. en-US")] = None,
    timezone: Annotated[Text, typer.Option(help="IANA name; hours_json is read in it")] = None,
    voice_engine: Annotated[Text, typer.Option("--voice-engine")] = None,
    voicemail_mode: Annotated[Text, typer.Option("--voicemail-mode", help="off, overflow_only or always")] = None,
    overflow_action: Annotated[Text, typer.Option("--overflow-action",
                                                  help="voicemail, transfer, message or hangup")] = None,
    recording: Annotated[Optional[bool], typer.Option("--recording/--no-recording",
                                                      help="recording_enabled")] = None,
    sms: Annotated[Optional[bool], typer.Option("--sms/--no-sms", help="sms_enabled: the post-call texts")] = None,
    assignments: Annotated[Optional[list[str]], typer.Option(
        "--set", help="Any other field: name=value, the value as JSON (null clears a field)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Change some settings of a number; the fields left out stay as they are."""
    named = {"objective": objective, "greeting": greeting, "persona": persona, "language": language,
             "timezone": timezone, "voice_engine": voice_engine, "voicemail_mode": voicemail_mode,
             "overflow_action": overflow_action, "recording_enabled": recording, "sms_enabled": sms}
    changes = {name: value for name, value in named.items() if value is not None}
    changes.update(_assignment(text) for text in assignments or [])
    if not changes:
        session.usage_error("nothing to change: give a setting (--greeting, --set name=value, …)")
    with session.client() as client:
        found = _find(client, number_id)["id"] if number_id.startswith("+") else number_id
        updated = client.numbers.update(found, **changes)
    _print(dict(updated.raw), as_json)
