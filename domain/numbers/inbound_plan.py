"""What a number does with an inbound call (SPEC.md Number; docs/numbers.md "Inbound calls").

In order: outside ``hours_json`` (read in the number's ``timezone``) the call gets
``overflow_action``; inside, the first route matching the caller's number (``caller_prefix``) wins;
then, when the number has keypad routes, the caller is asked for a key and the first keypad route
matching it wins; a call no route takes goes to voicemail when ``voicemail_mode`` is ``always``,
else to the agent.

A call taken by the agent or voicemail settles with an outcome extracted from what was said
(``outcome_schema`` or ``voicemail_schema``). A call routed elsewhere (a transfer without the agent,
the overflow message, a hang-up) settles with the routing outcome (``ROUTED_SCHEMA``): what was
done with it, and why.

Pure: reads a number's settings (any object with the ``Number`` attributes) and decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from domain.numbers import hours, routes

AGENT, VOICEMAIL, TRANSFER, MESSAGE, HANGUP = "agent", "voicemail", "transfer", "message", "hangup"
ROUTED_AWAY = (TRANSFER, MESSAGE, HANGUP)  # settled with the routing outcome, no extraction
# Why: the number was closed, a route matched (by caller or key), voicemail takes every call, or
# nothing else applied (the number's agent).
CLOSED, CALLER_PREFIX, KEYPAD, VOICEMAIL_ALWAYS, OPEN = "closed", "caller_prefix", "keypad", "voicemail_always", "open"

ROUTED_SCHEMA: dict[str, Any] = {
    "route": {"type": "enum", "values": list(ROUTED_AWAY), "description": "What was done with the call"},
    "reason": {"type": "enum", "values": [CLOSED, CALLER_PREFIX, KEYPAD],
               "description": "Why: outside opening hours, or the route that matched"},
    "destination": {"type": "string", "optional": True, "description": "The transfer destination's label"},
    "transferred": {"type": "boolean", "optional": True, "description": "Whether the destination answered"},
}


class Line(Protocol):
    """The settings of a number this module reads (``settings.NumberSettings``'s types)."""

    @property
    def hours_json(self) -> dict[str, list[list[str]]] | None: ...
    @property
    def timezone(self) -> str | None: ...
    @property
    def overflow_action(self) -> str: ...
    @property
    def routes(self) -> list[dict[str, Any]]: ...
    @property
    def voicemail_mode(self) -> str: ...
    @property
    def transfer_destinations(self) -> list[dict[str, str]]: ...


@dataclass(frozen=True, kw_only=True)
class Route:
    """Where one inbound call goes: ``action`` (one of the five above), ``reason``, and for a
    transfer the one destination to dial."""

    action: str
    reason: str
    destination: str | None = None  # the label a route named, or the first one outside hours
    destinations: tuple[dict[str, str], ...] = ()


ASK_KEYPAD = None  # ``on_answer``'s answer while a keypad route may still decide


def on_answer(line: Line, *, caller: str, at: datetime) -> Route | None:
    """The route of a call as it is answered, or ``ASK_KEYPAD`` (None) when the caller's key decides."""
    if not hours.is_open(line.hours_json, line.timezone, at):
        return _overflow(line)
    prefix_routes = [r for r in line.routes if "caller_prefix" in r["match"]]
    matched = routes.first_match(prefix_routes, caller=caller, keypad=None)
    if matched is not None:
        return _routed(line, matched, CALLER_PREFIX)
    if any("keypad" in r["match"] for r in line.routes):
        return ASK_KEYPAD
    return _default(line)


def on_keypad(line: Line, key: str | None) -> Route:
    """The route of a call once the caller pressed ``key`` (None or empty: no key in time)."""
    keypad_routes = [r for r in line.routes if "keypad" in r["match"]]
    matched = routes.first_match(keypad_routes, caller=None, keypad=(key or "")[:1] or None)
    return _routed(line, matched, KEYPAD) if matched is not None else _default(line)


def routed_outcome(route: dict[str, Any], transferred: bool | None) -> dict[str, Any]:
    """The outcome of a call routed away from the agent, in ``ROUTED_SCHEMA``'s terms."""
    return {"route": route["action"], "reason": route["reason"], "destination": route.get("destination"),
            "transferred": transferred if route["action"] == TRANSFER else None}


def _overflow(line: Line) -> Route:
    action = line.overflow_action
    if action == TRANSFER and line.transfer_destinations:
        first = line.transfer_destinations[0]
        return Route(action=TRANSFER, reason=CLOSED, destination=first["label"], destinations=(first,))
    if action == TRANSFER:  # no destination left (removed after the rule was checked): take a message
        return Route(action=VOICEMAIL if line.voicemail_mode != "off" else HANGUP, reason=CLOSED)
    return Route(action=action, reason=CLOSED)


def _routed(line: Line, route: dict[str, Any], reason: str) -> Route:
    action = route["action"]
    if action != TRANSFER:
        return Route(action=action, reason=reason)
    label = route.get("destination")
    chosen = tuple(d for d in line.transfer_destinations if d["label"] == label)
    if not chosen:  # the label no longer names a destination: the agent takes the call
        return Route(action=AGENT, reason=reason)
    return Route(action=TRANSFER, reason=reason, destination=label, destinations=chosen[:1])


def _default(line: Line) -> Route:
    if line.voicemail_mode == "always":
        return Route(action=VOICEMAIL, reason=VOICEMAIL_ALWAYS)
    return Route(action=AGENT, reason=OPEN)
