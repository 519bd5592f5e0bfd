"""What the call page shows, gathered from the API as the session: the record, its events, and the
webhook deliveries of the call.

The API has no "deliveries of a call" route: ``GET /v1/webhooks/{endpoint_id}/deliveries`` lists an
endpoint's, newest first, each with ``call_id``. So the page lists the tenant's endpoints and walks
each one's deliveries back to the call's creation (bounded: ``MAX_ENDPOINTS`` endpoints,
``MAX_PAGES`` pages of 100 each), keeping those of this call.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from entrypoints.http.dashboard.api import Answer, Api
from entrypoints.http.dashboard.calls_filters import FINAL, duration

MAX_ENDPOINTS = 20
MAX_PAGES = 3
MAX_EVENT_PAGES = 5
NOT_FOUND = "not found"
# Events that are part of the transcript or the machinery rather than the call's status.
QUIET_EVENTS = ("call.turn", "call.leased")
DETAIL_KEYS = ("answered_by", "status", "error_code", "error_message", "reason", "action", "destination",
               "duration_seconds", "confidence", "digits")


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def shown_value(value: Any) -> str:
    """An outcome value as text: null or absent is "not found"; lists and objects as JSON."""
    if value is None:
        return NOT_FOUND
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def outcome_rows(record: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Each field of the call's ``outcome_schema`` with its type and value, and which outcome it is."""
    if record.get("outcome") is not None:
        values, which = record["outcome"], "outcome"
    elif record.get("partial_outcome") is not None:
        values, which = record["partial_outcome"], "partial"
    else:
        values, which = {}, "none"
    rows = []
    for name, spec in (record.get("outcome_schema") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kind = str(spec.get("type", "?"))
        if spec.get("values"):
            kind += " (" + ", ".join(str(v) for v in spec["values"]) + ")"
        value = values.get(name) if isinstance(values, dict) else None
        rows.append({"name": name, "type": kind, "optional": bool(spec.get("optional")),
                     "description": spec.get("description"), "value": shown_value(value),
                     "missing": value is None})
    return which, rows


def transcript_lines(text: str) -> list[tuple[str, str]]:
    """``speaker: words`` lines as the API wrote them (digits already masked by it: never unmasked)."""
    lines = []
    for line in (text or "").splitlines():
        speaker, sep, words = line.partition(": ")
        lines.append((speaker, words) if sep and len(speaker) <= 20 else ("", line))
    return lines


def timeline(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    shown = []
    for event in events:
        if event.get("type") in QUIET_EVENTS:
            continue
        data = event.get("data") or {}
        details = [f"{key.replace('_', ' ')}: {data[key]}" for key in DETAIL_KEYS if data.get(key) not in (None, "")]
        shown.append({"type": str(event.get("type", "")).removeprefix("call.").replace("_", " "),
                      "at": event.get("at"), "by": event.get("by"), "details": "; ".join(details)})
    return shown


def safe_link(url: Any) -> str | None:
    return url if isinstance(url, str) and url.startswith(("https://", "http://", "/")) else None


async def call_events(api: Api, call_id: str) -> tuple[list[dict[str, Any]], str | None]:
    events: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_EVENT_PAGES):
        answer = await api.get(f"/v1/calls/{call_id}/events", params={"limit": 200, **({"cursor": cursor} if cursor else {})})
        if not answer.ok:
            return events, answer.error["message"]
        events.extend(answer.body.get("data", []))
        cursor = answer.body.get("next_cursor")
        if not cursor or not answer.body.get("data"):
            break
    return events, None


async def call_deliveries(api: Api, call_id: str, created_at: Any) -> tuple[list[dict[str, Any]], str | None]:
    """This call's deliveries on every endpoint of the tenant (deleted ones too), newest first."""
    listed = await api.get("/v1/webhooks")
    if not listed.ok:
        return [], listed.error["message"]
    since = _moment(created_at)
    found: list[dict[str, Any]] = []
    for endpoint in listed.body.get("data", [])[:MAX_ENDPOINTS]:
        cursor = None
        for _ in range(MAX_PAGES):
            params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
            page: Answer = await api.get(f"/v1/webhooks/{endpoint['id']}/deliveries", params=params)
            if not page.ok:
                return found, page.error["message"]
            rows = page.body.get("data", [])
            found.extend({**row, "endpoint_url": endpoint.get("url")} for row in rows if row.get("call_id") == call_id)
            oldest = _moment(rows[-1].get("created_at")) if rows else None
            cursor = page.body.get("next_cursor")
            if not cursor or (since and oldest and oldest < since):
                break
    found.sort(key=lambda row: str(row.get("created_at")), reverse=True)
    return found, None


def deliveries_settling(record: dict[str, Any], deliveries: list[dict[str, Any]], now: datetime) -> bool:
    """Whether the deliveries section should look again soon: an attempt due within two minutes, or a
    call that ended moments ago (its deliveries are being scheduled)."""
    soon = now + timedelta(minutes=2)
    for row in deliveries:
        due = _moment(row.get("next_attempt_at"))
        if row.get("status") == "pending" and (due is None or due <= soon):
            return True
    ended = _moment(record.get("ended_at"))
    return bool(record.get("status") in FINAL and ended and now - ended < timedelta(seconds=20))


async def call_context(api: Api, call_id: str) -> tuple[Answer, dict[str, Any]]:
    """The call page's context, or the refusal (404…) of ``GET /v1/calls/{id}``."""
    answer = await api.get(f"/v1/calls/{call_id}")
    if not answer.ok:
        return answer, {}
    record = answer.body
    events, events_error = await call_events(api, call_id)
    deliveries, deliveries_error = await call_deliveries(api, call_id, record.get("created_at"))
    which, rows = outcome_rows(record)
    return answer, {
        "call": record, "final": record.get("status") in FINAL, "duration": duration(record.get("duration_seconds")),
        "timeline": timeline(events), "events_error": events_error, "turns": transcript_lines(record.get("transcript", "")),
        "outcome_kind": which, "outcome_rows": rows, "recording": safe_link(record.get("recording_url")),
        **deliveries_context(record, deliveries, deliveries_error),
    }


def deliveries_context(record: dict[str, Any], deliveries: list[dict[str, Any]], error: str | None,
                       watch: str = "") -> dict[str, Any]:
    now = datetime.now(UTC)
    return {"call": record, "deliveries": deliveries, "deliveries_error": error, "watch": watch,
            "settling": bool(watch) or deliveries_settling(record, deliveries, now)}
