"""The number form: the API's Number as the form's values, the posted form back as the API's
fields, and which of them the user changed (PATCH sends only those; a cleared nullable field as
``null``, which the API reads as "remove"). Pure: no I/O.

The form's state is a dict of strings, booleans and row lists, as the template shows them, so a
refused form is shown again exactly as it was typed.
"""

from __future__ import annotations

import json
from typing import Any

from litestar.datastructures import FormMultiDict

DAYS = (("mon", "Monday"), ("tue", "Tuesday"), ("wed", "Wednesday"), ("thu", "Thursday"), ("fri", "Friday"),
        ("sat", "Saturday"), ("sun", "Sunday"))
ENGINES = ("alpha_25", "alpha_31", "beta_think_fast")
OVERFLOW_ACTIONS = ("voicemail", "transfer", "message", "hangup")
VOICEMAIL_MODES = ("off", "overflow_only", "always")
ROUTE_ACTIONS = ("agent", "transfer", "voicemail")
SMS_OPS = ("eq", "ne", "present", "absent", "gt", "lt")
# Text inputs: the nullable ones clear to null when emptied; the others are sent as typed.
NULLABLE_TEXT = ("greeting", "greeting_voice_id", "persona", "timezone", "overflow_message", "voicemail_persona",
                 "sms_brand_id", "flow_id", "voice_engine")
PLAIN_TEXT = ("objective", "language", "overflow_action", "voicemail_mode")
JSON_FIELDS = ("outcome_schema", "voicemail_schema")
BOOLEANS = ("recording_enabled", "sms_enabled")
FIELDS = (*PLAIN_TEXT, *NULLABLE_TEXT, *JSON_FIELDS, *BOOLEANS, "transfer_max_attempts", "transfer_destinations",
          "routes", "hours_json", "sms_templates")


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def shown_value(value: Any) -> str:
    """A condition value as typed: text as it is, anything else as JSON (true, 3, 1.5)."""
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def state_from_number(number: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = {name: _text(number.get(name)) for name in (*PLAIN_TEXT, *NULLABLE_TEXT)}
    state.update({name: json.dumps(number.get(name) or {}, indent=2) for name in JSON_FIELDS})
    state.update({name: bool(number.get(name)) for name in BOOLEANS})
    state["transfer_max_attempts"] = _text(number.get("transfer_max_attempts"))
    state["destinations"] = [{"label": d["label"], "e164": d["e164"]} for d in number.get("transfer_destinations") or []]
    state["routes"] = []
    for route in number.get("routes") or []:
        kind, value = next(iter((route.get("match") or {"keypad": ""}).items()))
        state["routes"].append({"kind": kind, "value": _text(value), "action": route.get("action", "agent"),
                                "destination": _text(route.get("destination"))})
    state["sms"] = []
    for template in number.get("sms_templates") or []:
        condition = template.get("condition") or {}
        state["sms"].append({"id": template["id"], "name": template["name"], "body": template["body"],
                             "field": _text(condition.get("field")), "op": _text(condition.get("op")),
                             "value": shown_value(condition.get("value"))})
    hours = number.get("hours_json")
    state["hours_mode"] = "always" if hours is None else "set"
    state["hours"] = {day: {"closed": hours is not None and not hours.get(day),
                            "windows": [list(w) for w in (hours or {}).get(day) or []]} for day, _ in DAYS}
    return state


def _field(form: FormMultiDict, name: str) -> str:
    value = form.get(name)
    return value.replace("\r\n", "\n").strip() if isinstance(value, str) else ""


def _all(form: FormMultiDict, name: str) -> list[str]:
    return [v.replace("\r\n", "\n").strip() if isinstance(v, str) else "" for v in form.getall(name, [])]


def _rows(form: FormMultiDict, names: dict[str, str]) -> list[dict[str, str]]:
    """Repeated fields zipped into rows (``{key: form name}``); a row left wholly blank is dropped."""
    columns = {key: _all(form, name) for key, name in names.items()}
    count = max((len(values) for values in columns.values()), default=0)
    rows = [{key: values[i] if i < len(values) else "" for key, values in columns.items()} for i in range(count)]
    return rows


def state_from_form(form: FormMultiDict) -> dict[str, Any]:
    state: dict[str, Any] = {name: _field(form, name) for name in (*PLAIN_TEXT, *NULLABLE_TEXT, *JSON_FIELDS)}
    state.update({name: form.get(name) == "on" for name in BOOLEANS})
    state["transfer_max_attempts"] = _field(form, "transfer_max_attempts")
    state["destinations"] = [row for row in _rows(form, {"label": "dest_label", "e164": "dest_e164"})
                             if row["label"] or row["e164"]]
    state["routes"] = [row for row in _rows(form, {"kind": "route_kind", "value": "route_value",
                                                   "action": "route_action", "destination": "route_destination"})
                       if row["value"] or row["destination"]]
    state["sms"] = [row for row in _rows(form, {"id": "sms_id", "name": "sms_name", "body": "sms_body",
                                                "field": "sms_field", "op": "sms_op", "value": "sms_value"})
                    if row["name"] or row["body"]]
    state["hours_mode"] = "set" if form.get("hours_mode") == "set" else "always"
    state["hours"] = {}
    for day, _ in DAYS:
        windows = [[start, end] for start, end in zip(_all(form, f"hours_{day}_open"), _all(form, f"hours_{day}_close"))
                   if start or end]
        state["hours"][day] = {"closed": form.get(f"hours_{day}_closed") == "on", "windows": windows}
    return state


def _condition_value(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, bool | int | float) else text


def sms_template(row: dict[str, str]) -> dict[str, Any]:
    """One SMS template row as the API's template object."""
    template: dict[str, Any] = {"name": row["name"], "body": row["body"], "condition": None}
    if row.get("id"):
        template = {"id": row["id"], **template}
    if row.get("op"):
        template["condition"] = {"field": row.get("field", ""), "op": row["op"]}
        if row["op"] not in ("present", "absent"):
            template["condition"]["value"] = _condition_value(row.get("value", ""))
    return template


def values_from_state(state: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The API's value of every field, and the problems found before asking it (JSON that does not parse)."""
    problems: list[tuple[str, str]] = []
    values: dict[str, Any] = {name: state[name] for name in PLAIN_TEXT}
    values.update({name: state[name] or None for name in NULLABLE_TEXT})
    values.update({name: state[name] for name in BOOLEANS})
    for name in JSON_FIELDS:
        try:
            values[name] = json.loads(state[name])
        except ValueError as exc:
            problems.append((name, f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"))
    attempts = state["transfer_max_attempts"]
    values["transfer_max_attempts"] = int(attempts) if attempts.isdigit() else attempts
    values["transfer_destinations"] = [{"label": d["label"], "e164": d["e164"]} for d in state["destinations"]]
    values["routes"] = [{"match": {r["kind"]: r["value"]}, "action": r["action"],
                         **({"destination": r["destination"]} if r["destination"] else {})} for r in state["routes"]]
    values["sms_templates"] = [sms_template(row) for row in state["sms"]]
    if state["hours_mode"] == "always":
        values["hours_json"] = None
    else:
        values["hours_json"] = {day: sorted(info["windows"]) for day, info in state["hours"].items()
                                if not info["closed"] and info["windows"]}
    return values, problems


def original(number: dict[str, Any]) -> str:
    """The number's settings as the form was drawn from them (a hidden field): what "changed" means."""
    return json.dumps({name: number.get(name) for name in (*FIELDS, "e164")}, separators=(",", ":"))


def changes(form: FormMultiDict) -> tuple[dict[str, Any], dict[str, Any], list[tuple[str, str]]]:
    """(the form's state, the fields the user changed with their new values, problems found locally)."""
    state = state_from_form(form)
    wanted, problems = values_from_state(state)
    try:
        before = json.loads(form.get("original") or "{}")
    except ValueError:
        before = {}
    base, _ = values_from_state(state_from_number(before)) if before else ({}, [])
    changed = {name: value for name, value in wanted.items()
               if name not in dict(problems) and (name not in base or base[name] != value)}
    return state, changed, problems
