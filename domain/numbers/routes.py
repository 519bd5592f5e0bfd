"""How a number routes its inbound calls (SPEC.md Number: routes).

``routes`` is an ordered list of ``{"match": {"caller_prefix": "+44"} | {"keypad": "2"}, "action":
"transfer" | "voicemail" | "agent", "destination": <label>}``; the first route whose match holds wins.
``destination`` names one of the number's transfer destinations by label: required for ``transfer``,
not allowed otherwise (``null`` counts as left out).

Pure: the standard library. ``check_routes`` follows ``settings.CHECKS``: ``(value, own_e164,
problems) -> normalized value``, every problem collected, never just the first. Whether a destination
label exists is a rule across fields: ``check_route_destinations``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from domain.errors import InputProblem
from domain.numbers.field_rules import MAX_LABEL  # a transfer destination's label

ROUTE_ACTIONS = ("transfer", "voicemail", "agent")
MATCH_KINDS = ("caller_prefix", "keypad")
KEYPAD_KEYS = "0123456789*#"
MAX_ROUTES = 20
ROUTE_FIELDS = ("match", "action", "destination")

# "+" then 1 to 15 digits, the first not 0: the start of an E.164 number. [0-9], not \d.
CALLER_PREFIX = re.compile(r"\+[1-9][0-9]{0,14}")


def check_routes(value: Any, _: str, problems: list[InputProblem]) -> list[dict[str, Any]] | None:
    """``routes`` normalized: each route ``{"match", "action"}`` plus ``"destination"`` (stripped)
    for a transfer, in the order given."""
    if not isinstance(value, list | tuple):
        problems.append(([], "must be a list of routes {match, action, destination}", "list_type", value))
        return None
    if len(value) > MAX_ROUTES:
        problems.append(([], f"a number has at most {MAX_ROUTES} routes", "too_long", len(value)))
        return None
    before = len(problems)
    found = [_route([index], item, problems) for index, item in enumerate(value)]
    if len(problems) > before:
        return None
    return found  # type: ignore[return-value]


def _route(loc: list[str | int], item: Any, problems: list[InputProblem]) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        problems.append((loc, "must be an object {match, action, destination}", "dict_type", item))
        return None
    before = len(problems)
    for key in item:
        if key not in ROUTE_FIELDS:
            problems.append(([*loc, key], "is not a field of a route; they are match, action and destination",
                             "extra_forbidden", item[key]))
    match = _match([*loc, "match"], item, problems)
    action = item.get("action")
    if "action" not in item:
        problems.append(([*loc, "action"], "is required", "missing", None))
    elif action not in ROUTE_ACTIONS:
        problems.append(([*loc, "action"], f"must be one of {', '.join(ROUTE_ACTIONS)}", "enum", action))
    destination = _destination([*loc, "destination"], item.get("destination"), action, problems)
    if len(problems) > before:
        return None
    route: dict[str, Any] = {"match": match, "action": action}
    if destination is not None:
        route["destination"] = destination
    return route


def _match(loc: list[str | int], item: Mapping[str, Any], problems: list[InputProblem]) -> dict[str, str] | None:
    if "match" not in item:
        problems.append((loc, 'is required: {"caller_prefix": "+44"} or {"keypad": "2"}', "missing", None))
        return None
    match = item["match"]
    if not isinstance(match, Mapping):
        problems.append((loc, 'must be an object: {"caller_prefix": "+44"} or {"keypad": "2"}', "dict_type", match))
        return None
    before = len(problems)
    for key in match:
        if key not in MATCH_KINDS:
            problems.append(([*loc, key], f"{key} is not a kind of match; kinds are {' and '.join(MATCH_KINDS)}",
                             "unknown_match", match[key]))
    kinds = [kind for kind in MATCH_KINDS if kind in match]
    if len(kinds) != 1:
        problems.append((loc, "must have exactly one of caller_prefix and keypad", "match_kind", dict(match)))
    if "caller_prefix" in match:
        prefix = match["caller_prefix"]
        if not isinstance(prefix, str) or not CALLER_PREFIX.fullmatch(prefix):
            problems.append(([*loc, "caller_prefix"], "must be + then 1 to 15 digits, the first not 0, e.g. +44",
                             "caller_prefix", prefix))
    if "keypad" in match:
        key = match["keypad"]
        if not isinstance(key, str) or len(key) != 1 or key not in KEYPAD_KEYS:
            problems.append(([*loc, "keypad"], 'must be one key as a string: "0" to "9", "*" or "#"', "keypad", key))
    if len(problems) > before:
        return None
    return {kinds[0]: match[kinds[0]]}


def _destination(loc: list[str | int], label: Any, action: Any, problems: list[InputProblem]) -> str | None:
    if action == "transfer" and label is None:
        problems.append((loc, "is required when the action is transfer: the label of a transfer destination",
                         "missing", None))
    elif action in ROUTE_ACTIONS and action != "transfer" and label is not None:
        problems.append((loc, f"destination is only for the transfer action, not {action}", "destination_not_allowed",
                         label))
    elif label is not None and (not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL):
        problems.append((loc, f"must be the label of a transfer destination: text of 1 to {MAX_LABEL} characters",
                         "label", label))
    elif label is not None:
        return label.strip()
    return None


def check_route_destinations(routes: Sequence[Mapping[str, Any]], destinations: Sequence[Mapping[str, Any]],
                             problems: list[InputProblem]) -> None:
    """Appends ``[i, "destination"]`` for each checked route naming no transfer destination's label
    (compared case-sensitively, after stripping)."""
    labels = {str(d["label"]).strip() for d in destinations}
    for index, route in enumerate(routes):
        label = route.get("destination")
        if label is not None and str(label).strip() not in labels:
            known = ", ".join(sorted(labels)) or "none yet"
            problems.append(([index, "destination"], f"names no transfer destination (labels: {known})",
                             "unknown_destination", label))


def first_match(routes: Sequence[Mapping[str, Any]] | None, *, caller: str | None,
                keypad: str | None) -> Mapping[str, Any] | None:
    """The first checked route whose match holds: the ``caller``'s E.164 starts with its
    ``caller_prefix``, or the pressed ``keypad`` key is its ``keypad``. None when none holds."""
    for route in routes or ():
        match = route["match"]
        prefix, key = match.get("caller_prefix"), match.get("keypad")
        if prefix is not None and caller is not None and caller.startswith(prefix):
            return route
        if key is not None and keypad is not None and keypad == key:
            return route
    return None
