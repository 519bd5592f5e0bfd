"""``callwright webhooks list|create|deliveries|retry``: endpoints receiving ``call.completed``,
their delivery history and a manual re-post, through ``callwright_client``. The signing secret is
printed once, by ``create``, and nowhere else."""

from __future__ import annotations

from itertools import islice
from typing import Annotated, Any, Optional

import typer

from entrypoints.cli import session
from entrypoints.cli.session import JsonOption

webhooks = typer.Typer(help="Webhook endpoints, their deliveries and manual retries.", no_args_is_help=True)

ENDPOINT_COLUMNS = ("id", "url", "events", "active", "disabled", "created_at")
DELIVERY_COLUMNS = ("delivery_id", "event_type", "call_id", "status", "attempts", "last_response", "created_at")


def _endpoint_row(raw: dict[str, Any]) -> list[Any]:
    disabled = raw.get("disabled") or {}
    return [raw.get("id"), raw.get("url"), ", ".join(raw.get("events") or []), raw.get("active"),
            disabled.get("code"), raw.get("created_at")]


@webhooks.command("list")
def list_endpoints(as_json: JsonOption = False) -> None:
    """The account's endpoints, deleted ones included (active false); never their secrets."""
    with session.client() as client:
        found = [endpoint.raw for endpoint in client.webhooks.list()]
    if as_json:
        session.emit_json(found)
        return
    session.table(ENDPOINT_COLUMNS, (_endpoint_row(raw) for raw in found),
                  caption=f"{len(found)} {'endpoint' if len(found) == 1 else 'endpoints'}")


@webhooks.command("create")
def create(
    url: Annotated[str, typer.Argument(help="Where to POST the events (https)")],
    event: Annotated[Optional[list[str]], typer.Option("--event", help="An event to send (repeatable; "
                                                                       "default: call.completed)")] = None,
    description: Annotated[Optional[str], typer.Option()] = None,
    as_json: JsonOption = False,
) -> None:
    """Register an endpoint; its signing secret is shown in this answer only."""
    fields: dict[str, Any] = {"events": event} if event else {}
    if description is not None:
        fields["description"] = description
    with session.client() as client:
        created = client.webhooks.create(url, **fields)
    if as_json:
        session.emit_json(created.raw)
        return
    session.table(ENDPOINT_COLUMNS, [_endpoint_row(created.raw)])
    typer.echo(f"secret: {created.secret}  (shown once: keep it to check the X-Service-Signature of each event)")


def _delivery_row(raw: dict[str, Any]) -> list[Any]:
    attempts = raw.get("attempts") or []
    last = attempts[-1] if attempts else {}
    answer = last.get("response_status") or last.get("error")
    return [raw.get("delivery_id"), raw.get("event_type"), raw.get("call_id"), raw.get("status"), len(attempts),
            answer, raw.get("created_at")]


@webhooks.command("deliveries")
def deliveries(
    endpoint_id: str,
    status: Annotated[Optional[str], typer.Option(help="Only deliveries in this status")] = None,
    limit: Annotated[int, typer.Option(help="At most this many, newest first")] = 25,
    as_json: JsonOption = False,
) -> None:
    """An endpoint's deliveries, newest first, each with its attempts."""
    params = {"status": status, "limit": min(max(limit, 1), 100)}
    with session.client() as client:
        found = list(islice(client.webhooks.deliveries(endpoint_id, **params), max(limit, 0)))
    if as_json:
        session.emit_json(found)
        return
    session.table(DELIVERY_COLUMNS, (_delivery_row(raw) for raw in found),
                  caption=f"{len(found)} {'delivery' if len(found) == 1 else 'deliveries'}")


@webhooks.command("retry")
def retry(endpoint_id: str, delivery_id: str, as_json: JsonOption = False) -> None:
    """Re-post a delivery's original payload once (same delivery id, a fresh signature)."""
    with session.client() as client:
        answer = client.webhooks.retry(endpoint_id, delivery_id)
    if as_json:
        session.emit_json(answer)
    else:
        session.record(answer)
