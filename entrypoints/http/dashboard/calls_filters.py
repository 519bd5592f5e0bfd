"""The calls list's filters: every query parameter ``GET /v1/calls`` accepts, as the form shows them.

The page passes what the user typed to the API untouched (only empty fields are left out), so the
API's own validation decides and its refusal (a 422 on ``query.start``…) is shown next to the field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from entrypoints.http.controllers.calls import SORT_NAMES

FINAL = ("completed", "failed")


@dataclass(frozen=True)
class Filter:
    name: str
    label: str
    kind: str  # select, text, number
    choices: tuple[tuple[str, str], ...] = ()  # (value, label); "" is "any"
    hint: str = ""
    step: str = ""
    more: bool = False  # under "More filters" (opened when one of them is set)


ANY = ("", "Any")
FILTERS: tuple[Filter, ...] = (
    Filter("status", "Status", "select", (ANY, ("queued", "Queued"), ("in_progress", "In progress"),
                                          ("completed", "Completed"), ("failed", "Failed"))),
    Filter("direction", "Direction", "select", (ANY, ("outbound", "Outbound"), ("inbound", "Inbound"))),
    Filter("mode", "Mode", "select", (ANY, ("live", "Live"), ("simulated", "Simulated"))),
    Filter("voice_engine", "Voice engine", "select", (ANY, ("alpha_25", "alpha_25"), ("alpha_31", "alpha_31"),
                                                      ("beta_think_fast", "beta_think_fast")), more=True),
    Filter("has_outcome", "Outcome", "select", (ANY, ("true", "Has an outcome"), ("false", "No outcome"))),
    Filter("to_prefix", "To number starts with", "text", hint="e.g. +4420"),
    Filter("start", "Created from", "text", hint="UTC, e.g. 2026-11-02T00:00:00Z"),
    Filter("end", "Created before", "text", hint="UTC, e.g. 2026-11-03T00:00:00Z"),
    Filter("min_confidence", "Confidence at least", "number", hint="0 to 1", step="0.01", more=True),
    Filter("max_confidence", "Confidence at most", "number", hint="0 to 1", step="0.01", more=True),
    Filter("sort", "Sort", "select", (("", "Default (newest first)"),
                                      *((name, name.replace("_", " ")) for name in SORT_NAMES)), more=True),
    Filter("limit", "Per page", "number", hint="1 to 200", step="1", more=True),
    Filter("offset", "Skip", "number", hint="rows to skip", step="1", more=True),
)
NAMES = tuple(f.name for f in FILTERS)
MAIN = tuple(f for f in FILTERS if not f.more)
MORE = tuple(f for f in FILTERS if f.more)
PAGING = ("cursor",)  # not in the form: the "Older calls" link carries it


def chosen(query: Any) -> dict[str, str]:
    """The filters of a page's query string, as typed (empty ones left out), cursor included."""
    found: dict[str, str] = {}
    for name in (*NAMES, *PAGING):
        value = query.get(name)
        if isinstance(value, str) and value.strip():
            found[name] = value.strip()
    return found


def query_string(values: dict[str, str], **more: str | None) -> str:
    merged = {**values, **{k: v for k, v in more.items() if v is not None}}
    return urlencode([(k, v) for k, v in merged.items() if v != ""])


def without_paging(values: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in values.items() if k not in PAGING}


def digest(body: Any) -> str:
    """What the live stream compares: each row's id, status and what changes as a call progresses."""
    rows = body.get("data", []) if isinstance(body, dict) else []
    seen = [(r.get("call_id"), r.get("status"), r.get("duration_seconds"), r.get("cost_total"),
             r.get("has_outcome"), r.get("confidence"), r.get("error_code")) for r in rows]
    total = body.get("total") if isinstance(body, dict) else None
    return hashlib.sha256(json.dumps([seen, total]).encode()).hexdigest()[:20]


def outcome_summary(row: dict[str, Any]) -> str:
    """The list row carries no outcome values (``GET /v1/calls/{id}`` does): say what is known."""
    if row.get("status") == "failed":
        return f"Failed: {row.get('error_code') or 'no reason given'}"
    if row.get("has_outcome"):
        confidence = row.get("confidence")
        return "Outcome captured" + (f", confidence {confidence:.0%}" if isinstance(confidence, (int, float)) else "")
    if row.get("status") in FINAL:
        return "No outcome"
    return "Waiting for the call to end"


def duration(seconds: Any) -> str:
    if not isinstance(seconds, int):
        return "—"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"
