"""``callwright keys list|create|rotate|revoke``: the account's API keys through ``callwright_client``.
A secret is printed once, by ``create`` or ``rotate``; lists show only prefixes."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from entrypoints.cli import session
from entrypoints.cli.session import JsonOption

keys = typer.Typer(help="Create, list, rotate and revoke API keys.", no_args_is_help=True)

LIST_COLUMNS = ("key_id", "name", "prefix", "status", "scopes", "number_ids", "created_at", "expires_at")
ISSUED = ("key_id", "name", "prefix", "scopes", "number_ids", "created_at", "rotated_from", "old_key_id",
          "old_key_expires_at")
ALL = "all"


def _listed(value: Any) -> str:
    """A key's scopes or numbers: none named means no restriction."""
    return ALL if value is None else ", ".join(value)


@keys.command("list")
def list_keys(as_json: JsonOption = False) -> None:
    """Every key of the account (prefix and metadata only)."""
    with session.client() as client:
        found = [key.raw for key in client.api_keys.list()]
    if as_json:
        session.emit_json(found)
        return
    rows = ([raw.get("key_id"), raw.get("name"), raw.get("prefix"), raw.get("status"), _listed(raw.get("scopes")),
             _listed(raw.get("number_ids")), raw.get("created_at"), raw.get("expires_at")] for raw in found)
    session.table(LIST_COLUMNS, rows, caption=f"{len(found)} {'key' if len(found) == 1 else 'keys'}")


def _issued(raw: dict[str, Any], as_json: bool) -> None:
    if as_json:
        session.emit_json(raw)
        return
    shown = {**raw, "scopes": _listed(raw.get("scopes")), "number_ids": _listed(raw.get("number_ids"))}
    session.record(shown, [name for name in ISSUED if name in raw])
    typer.echo(f"secret: {raw.get('secret')}  (shown once: store it now)")


@keys.command("create")
def create(
    name: Annotated[Optional[str], typer.Option(help="A label for the key")] = None,
    scope: Annotated[Optional[list[str]], typer.Option(
        "--scope", help="A permission (repeatable, e.g. calls:read); none given: every permission of this key")
    ] = None,
    number_id: Annotated[Optional[list[str]], typer.Option(
        "--number-id", help="Restrict the key to this number (repeatable)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Create a key with some of this key's permissions; its secret is shown in this answer only."""
    fields: dict[str, Any] = {"name": name, "scopes": scope or None, "number_ids": number_id or None}
    with session.client() as client:
        created = client.api_keys.create(**{k: v for k, v in fields.items() if v is not None})
    _issued(dict(created.raw), as_json)


@keys.command("rotate")
def rotate(key_id: str, as_json: JsonOption = False) -> None:
    """A new secret with the same permissions; the old key keeps working for 24 h."""
    with session.client() as client:
        rotated = client.api_keys.rotate(key_id)
    _issued(dict(rotated.raw), as_json)


@keys.command("revoke")
def revoke(key_id: str, as_json: JsonOption = False) -> None:
    """Stop a key at once (its record stays)."""
    with session.client() as client:
        revoked = client.api_keys.revoke(key_id)
    if as_json:
        session.emit_json(revoked.raw)
    else:
        session.record(revoked.raw)
